"""abyss compare: two result sets joined on configuration, with verdicts that
see a real change and call equal results noise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from abyss_harness import cli, compare, runner
from abyss_harness.spec import load_spec
from conftest import FakeEngine


def _sweep(spec_file: Path, results: Path) -> Path:
    exp_dir, _ = runner.sweep(load_spec(spec_file, cores=2), results, FakeEngine(),
                              Console(file=open("/dev/null", "w")))
    return exp_dir


def _scale(exp_dir: Path, cc: str, factor: float, **env: str) -> None:
    """Multiply one scheme's throughput in every run file of an experiment."""
    for path in (exp_dir / "runs").glob("*.json"):
        doc = json.loads(path.read_text())
        if doc["config"]["cc"] == cc:
            doc["results"]["throughput"] *= factor
        doc.update(env)
        path.write_text(json.dumps(doc))


def test_the_same_results_are_within_noise(tmp_path: Path, spec_file: Path) -> None:
    a, b = _sweep(spec_file, tmp_path / "a"), _sweep(spec_file, tmp_path / "b")
    c = compare.compare(compare.load_side(a), compare.load_side(b))
    assert len(c.points) == 6 and set(c.points["verdict"]) == {"within noise"}
    assert c.warnings == []


def test_a_known_change_is_seen_and_provenance_differences_are_warned(tmp_path: Path, spec_file: Path) -> None:
    a, b = _sweep(spec_file, tmp_path / "a"), _sweep(spec_file, tmp_path / "b")
    _scale(b, "no_wait", 1.5, git_rev="fedcba987654")
    _scale(b, "hstore", 0.5)
    c = compare.compare(compare.load_side(a), compare.load_side(b))
    verdict = {(r["cc"], r["threads"]): r["verdict"] for _, r in c.points.iterrows()}
    assert verdict == {("no_wait", 1): "faster", ("no_wait", 2): "faster", ("silo", 1): "within noise",
                       ("silo", 2): "within noise", ("hstore", 1): "slower", ("hstore", 2): "slower"}
    assert c.points.loc[c.points["cc"] == "no_wait", "ratio"].tolist() == pytest.approx([1.5, 1.5])
    assert any("git_rev" in w for w in c.warnings)


def test_the_command_prints_verdicts_and_writes_a_plot(tmp_path: Path, spec_file: Path, capsys) -> None:
    a, b = _sweep(spec_file, tmp_path / "a"), _sweep(spec_file, tmp_path / "b")
    _scale(b, "no_wait", 2.0)
    rc = cli.main(["compare", str(a), str(b), "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 0 and "2 faster, 0 slower, 4 within noise" in out
    assert sorted(p.suffix for p in (tmp_path / "out").iterdir()) == [".csv", ".pdf", ".png", ".svg"]


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, spec_file: Path, capsys) -> None:
    a = _sweep(spec_file, tmp_path / "a")
    assert cli.main(["compare", str(a), str(tmp_path / "missing")]) == 2
    assert "no such directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert cli.main(["compare", str(a), str(tmp_path / "empty")]) == 2
    assert "no run reports" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        cli.main(["compare", str(a), str(a), "--noise", "nan"])
    assert e.value.code == 2


def test_a_whole_machine_shift_is_warned_about(tmp_path: Path, spec_file: Path) -> None:
    a, b = _sweep(spec_file, tmp_path / "a"), _sweep(spec_file, tmp_path / "b")
    for cc in ("no_wait", "silo", "hstore"):
        _scale(b, cc, 0.8)
    c = compare.compare(compare.load_side(a), compare.load_side(b))
    assert c.points["ratio"].tolist() == pytest.approx([0.8] * len(c.points))
    assert any("whole machine" in w and "0.80" in w for w in c.warnings)
    # One configuration moving is not the machine moving.
    b2 = _sweep(spec_file, tmp_path / "b2")
    _scale(b2, "silo", 0.8)
    assert not any("whole machine" in w for w in compare.compare(compare.load_side(a), compare.load_side(b2)).warnings)


def test_one_repetition_has_no_spread_and_says_so(tmp_path: Path, spec_file: Path) -> None:
    a, b = _sweep(spec_file, tmp_path / "a"), _sweep(spec_file, tmp_path / "b")
    one = compare.load_side(a)
    one = one[one["rep"] == 1]
    c = compare.compare(one, compare.load_side(b))
    assert c.points["spread_a"].isna().all() and c.points["spread_b"].notna().all()
    assert any(w.startswith("A has points with one repetition") for w in c.warnings)
    assert cli._percent(c.points["spread_a"].iloc[0]) == "–"


def test_labels_leave_out_parameters_a_point_does_not_have(tmp_path: Path, spec_file: Path) -> None:
    a = _sweep(spec_file, tmp_path / "a")
    c = compare.compare(compare.load_side(a), compare.load_side(a))
    row = c.points.iloc[0].copy()
    c.varying.append("theta")
    row["theta"] = float("nan")
    assert "theta" not in compare.label(c, row)


def _scale_rep(exp_dir: Path, rep: int, factor: float, cc: str | None = None) -> None:
    """Multiply the throughput of one repetition (of one scheme, or of all)."""
    for path in (exp_dir / "runs").glob(f"*.r{rep}.json"):
        doc = json.loads(path.read_text())
        if cc is None or doc["config"]["cc"] == cc:
            doc["results"]["throughput"] *= factor
            path.write_text(json.dumps(doc))


def test_paired_repetitions_see_a_change_through_drift(tmp_path: Path, spec_file: Path, capsys) -> None:
    a, b = _sweep(spec_file, tmp_path / "a"), _sweep(spec_file, tmp_path / "b")
    # The machine slows by 40% between repetitions 1 and 2, on both sides
    # alike (interleaved); B's no_wait is 25% faster in both repetitions.
    for side in (a, b):
        _scale_rep(side, 2, 0.6)
    for rep in (1, 2):
        _scale_rep(b, rep, 1.25, cc="no_wait")
    unpaired = compare.compare(compare.load_side(a), compare.load_side(b))
    assert set(unpaired.points["verdict"]) == {"within noise"}   # the drift's spread hides it
    paired = compare.compare(compare.load_side(a), compare.load_side(b), paired=True)
    verdict = {(r["cc"], r["threads"]): r["verdict"] for _, r in paired.points.iterrows()}
    assert {k: v for k, v in verdict.items() if k[0] == "no_wait"} == {("no_wait", 1): "faster",
                                                                      ("no_wait", 2): "faster"}
    assert all(v == "within noise" for k, v in verdict.items() if k[0] != "no_wait")
    nw = paired.points[paired.points["cc"] == "no_wait"]
    assert nw["ratio"].tolist() == pytest.approx([1.25, 1.25]) and (nw["pair_ratios"] == "1.250 1.250").all()
    assert cli.main(["compare", str(a), str(b), "--paired", "--out", str(tmp_path / "out")]) == 0
    assert "2 faster, 0 slower, 4 within noise" in capsys.readouterr().out


def test_paired_falls_back_to_medians_without_matching_repetitions(tmp_path: Path, spec_file: Path) -> None:
    a, b = _sweep(spec_file, tmp_path / "a"), _sweep(spec_file, tmp_path / "b")
    one = compare.load_side(a)
    c = compare.compare(one[one["rep"] == 1], compare.load_side(b), paired=True)
    assert (c.points["pair_ratios"] == "").all()
    assert any(w.startswith("--paired: 6 point(s) lack") for w in c.warnings)
