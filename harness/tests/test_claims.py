"""abyss claims: each test against results made to agree and to depart, the
claims file's validation, and the shipped file against the shipped specs."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from abyss_harness import claims, reproduce, runner
from abyss_harness.spec import load_spec
from conftest import FakeEngine


class _Fixed(claims.Results):
    """Results from frames given by hand, one a spec."""

    def __init__(self, frames: dict[str, pd.DataFrame]) -> None:
        super().__init__(Path("/nonexistent"))
        self._cache = dict(frames)


def _frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    if "sweep" not in df:
        df["sweep"] = "main"
    if "steady" not in df:
        df["steady"] = True
    return df


def _curve(cc: str, values: dict[int, float], **extra) -> list[dict]:
    return [{"cc": cc, "threads": n, "throughput": v, **extra} for n, v in values.items()]


def _claim(test: str, spec: str = "fig", **args) -> claims.Claim:
    return claims.Claim("X1", "Fig. X", "a statement", spec, test, args)


LINEAR = {1: 1.0, 4: 3.9, 16: 15.0, 64: 60.0}
BENT = {1: 1.0, 4: 3.0, 16: 6.0, 64: 4.0}


@pytest.mark.parametrize("test,args,agrees", [
    ("scales", {"where": {"cc": "a"}}, True),
    ("scales", {"where": {"cc": "b"}}, False),
    ("sublinear", {"where": {"cc": "b"}}, True),
    ("sublinear", {"where": {"cc": "a"}}, False),
    ("peak", {"where": {"cc": "b"}, "within": [8, 32], "falls": 0.9}, True),
    ("peak", {"where": {"cc": "a"}, "within": [8, 32]}, False),
    ("peak", {"where": {"cc": "b"}, "within": [16, 16], "falls": 0.5}, False),
    ("flat_after", {"where": {"cc": "b"}, "after": 16}, True),
    ("flat_after", {"where": {"cc": "a"}, "after": 16}, False),
    ("rises", {"where": {"cc": "a"}}, True),
    ("rises", {"where": {"cc": "b"}}, False),
    ("falls", {"where": {"cc": "a"}}, False),
    ("order", {"where": {"threads": 64}, "higher": ["a"]}, True),
    ("order", {"where": {"threads": 64}, "lower": ["a"]}, False),
    ("order", {"where": {"threads": 64}, "higher": ["a"], "factor": 20}, False),
    ("ratio", {"num": {"where": {"cc": "a", "threads": 64}}, "den": {"where": {"cc": "b", "threads": 64}},
               "within": [10, 20]}, True),
    ("ratio", {"num": {"where": {"cc": "a", "threads": 64}}, "den": {"where": {"cc": "b", "threads": 64}},
               "within": [0.85, 1.15]}, False),
    ("largest", {"where": {"cc": "b", "threads": 64}, "category": "wait"}, True),
    ("largest", {"where": {"cc": "a", "threads": 64}, "category": "wait"}, False),
    ("largest", {"where": {"cc": "b", "threads": 64}, "category": ["wait", "abort"], "at_least": 0.7}, True),
    ("largest", {"where": {"cc": "b", "threads": 64}, "category": "wait", "at_most": 0.1}, False),
    ("bound", {"where": {"cc": "a", "threads": 64}, "min": 50, "max": 70}, True),
    ("bound", {"where": {"cc": "a", "threads": 64}, "max": 10}, False),
    ("scales", {"each": "cc"}, False),
    ("scales", {"each": "cc", "need": 1}, True),
    ("order", {"where": {"threads": 64}, "higher": ["a"], "negate": True}, False),
    ("order", {"where": {"threads": 64}, "metric": ["frac_wait", "frac_abort"], "higher": ["b"]}, True),
    ("order", {"where": {"threads": 64}, "metric": ["frac_abort", "frac_useful"], "higher": ["b"]}, False),
    ("same_peak", {"where": {"cc": "b"}, "other": {"where": {"cc": "a"}}}, False),
    ("same_peak", {"where": {"cc": "b"}, "other": {"where": {"cc": "a"}}, "differ": True}, True),
    ("same_peak", {"where": {"cc": "b"}, "other": {"where": {"cc": "a"}}, "factor": 4}, True),
    ("same_slope", {"where": {"cc": "a"}, "other": {"where": {"cc": "a"}}}, True),
    ("same_slope", {"where": {"cc": "b"}, "other": {"where": {"cc": "a"}}}, False),
    ("same_slope", {"where": {"cc": "b"}, "other": {"where": {"cc": "a"}}, "differ": True}, True),
    ("same_slope", {"where": {"cc": "b"}, "other": {"where": {"cc": "a"}}, "below": True}, True),
    ("same_slope", {"where": {"cc": "a"}, "other": {"where": {"cc": "b"}}, "below": True}, False),
    ("same_slope", {"where": {"cc": "b"}, "other": {"where": {"cc": "a"}}, "at": 4, "factor": 1.4}, True),
])
def test_each_test_agrees_and_departs_as_the_numbers_say(test, args, agrees):
    shares = {"a": {"frac_wait": 0.1, "frac_abort": 0.3, "frac_useful": 0.5, "frac_other": 0.1},
              "b": {"frac_wait": 0.6, "frac_abort": 0.2, "frac_useful": 0.1, "frac_other": 0.1}}
    df = _frame(_curve("a", LINEAR, **shares["a"]) + _curve("b", BENT, **shares["b"]))
    v = claims.check(_claim(test, **args), _Fixed({"fig": df}))
    assert v.agrees is agrees, v.measured   # Python's bools: a departure's reason is shown on `is False`


def test_a_slope_needs_one_point_a_core_count_on_each_side():
    df = _frame(_curve("a", LINEAR) + _curve("b", BENT))
    v = claims.check(_claim("same_slope", where={"cc": "a"}, other={}), _Fixed({"fig": df}))
    assert v.agrees is None and "more than one point" in v.measured


def test_a_point_not_at_steady_state_is_said():
    rows = _curve("a", LINEAR)
    rows[-1]["steady"] = False
    v = claims.check(_claim("scales"), _Fixed({"fig": _frame(rows)}))
    assert v.agrees is True and v.unsteady
    assert "not at steady state" in claims.markdown([v])


def test_a_ratio_may_read_another_spec_and_each_narrows_both_sides():
    fig9 = _frame(_curve("a", {64: 10.0}) + _curve("b", {64: 20.0}))
    fig10 = _frame(_curve("a", {64: 5.0}) + _curve("b", {64: 19.0}))
    c = _claim("ratio", spec="fig10", each="cc", num={"where": {"threads": 64}},
               den={"spec": "fig9", "where": {"threads": 64}}, within=[0, 0.67])
    v = claims.check(c, _Fixed({"fig9": fig9, "fig10": fig10}))
    assert v.agrees is False and "1 of 2" in v.measured and "0.50" in v.measured and "0.95" in v.measured


def test_missing_results_and_untestable_claims_count_as_neither():
    missing = claims.check(_claim("scales", spec="nowhere"), _Fixed({}))
    assert missing.agrees is None and "reproduce nowhere --sim" in missing.measured
    c = _claim("scales")
    c.untestable = "needs 1024 warehouses"
    assert claims.check(c, _Fixed({})).measured == "untested: needs 1024 warehouses"
    bad = claims.check(_claim("bound", where={"nothing": 1}), _Fixed({"fig": _frame(_curve("a", LINEAR))}))
    assert bad.agrees is None and "nothing" in bad.measured
    # A sweep half made (a reproduction still running) selects no points for a curve.
    empty = claims.check(_claim("rises", where={"cc": "z"}), _Fixed({"fig": _frame(_curve("a", LINEAR))}))
    assert empty.agrees is None and "no points of fig" in empty.measured
    text = claims.markdown([missing, bad, claims.check(_claim("scales"), _Fixed({"fig": _frame(
        _curve("a", LINEAR))}))])
    assert "1 of 1 agree (2 untested)" in text


def test_a_departure_shows_its_reason_and_an_agreement_does_not():
    df = _frame(_curve("a", LINEAR))
    depart = claims.Claim("X1", "Fig. X", "bends", "fig", "sublinear", {}, reason="the model's why")
    agree = claims.Claim("X2", "Fig. X", "scales", "fig", "scales", {}, reason="never shown")
    text = claims.markdown([claims.check(depart, _Fixed({"fig": df})), claims.check(agree, _Fixed({"fig": df}))])
    assert "the model's why" in text and "never shown" not in text


@pytest.mark.parametrize("body,message", [
    ('[[claim]]\nid = "a"\nfigure = "f"\nsays = "s"\nspec = "x"\ntest = "peek"\n', "not one of"),
    ('[[claim]]\nid = "a"\nfigure = "f"\nsays = "s"\nspec = "x"\ntest = "peak"\nwithn = [1, 2]\n', "unknown key"),
    ('[[claim]]\nid = "a"\nfigure = "f"\nsays = ""\nspec = "x"\ntest = "peak"\n', "non-empty"),
    ('[[claim]]\nid = "a"\nfigure = "f"\nsays = "s"\nspec = "x"\ntest = "peak"\n' * 2, "given twice"),
    ('[[claim]\n', "claims.toml"),
])
def test_a_bad_claims_file_is_refused_with_one_line(tmp_path: Path, body: str, message: str):
    path = tmp_path / "claims.toml"
    path.write_text(body)
    with pytest.raises(claims.ClaimError, match=message):
        claims.read_claims(path)


def test_the_shipped_claims_name_shipped_specs_and_their_axes():
    shipped = claims.read_claims(claims.claims_path())
    assert len(shipped) >= 80
    specs = reproduce.spec_paths()
    for c in shipped:
        assert c.spec in specs, c.id
        for side in ("num", "den"):
            if side in c.args:
                assert set(c.args[side]) <= set(claims.SELECTION_KEYS), c.id
                assert c.args[side].get("spec", c.spec) in specs, c.id
        text = tomllib.loads(specs[c.spec].read_text())
        labels = {s["label"] for s in text.get("sweep", [])} or {"main"}
        assert c.args.get("sweep", next(iter(labels))) in labels, c.id


def test_claims_on_a_real_experiment_directory(tmp_path: Path, spec_file: Path, capsys):
    runner.sweep(load_spec(spec_file, cores=2), tmp_path, FakeEngine(), Console(file=open("/dev/null", "w")))
    (tmp_path / "unit").rename(tmp_path / "unit-sim-mesh")
    path = tmp_path / "claims.toml"
    path.write_text('[[claim]]\nid = "U1"\nfigure = "Unit"\nsays = "two threads do more than one"\n'
                    'spec = "unit"\ntest = "rises"\nwhere = { cc = "no_wait" }\n'
                    '[[claim]]\nid = "U2"\nfigure = "Unit"\nsays = "one thread does more"\n'
                    'spec = "unit"\ntest = "falls"\nwhere = { cc = "no_wait" }\n')
    out = tmp_path / "v.json"
    assert claims.main(["--results", str(tmp_path), "--claims", str(path), "--markdown", "--json", str(out)]) == 0
    assert "1 of 2 agree" in capsys.readouterr().out
    verdicts = json.loads(out.read_text())
    assert [v["agrees"] for v in verdicts] == [True, False]


def test_bad_command_lines_exit_2_with_one_line(tmp_path: Path, capsys):
    with pytest.raises(SystemExit) as e:
        claims.main(["--results", str(tmp_path / "missing")])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        claims.main(["no-such-figure", "--results", str(tmp_path)])
    assert e.value.code == 2 and "no claims on" in capsys.readouterr().err
    bad = tmp_path / "c.toml"
    bad.write_text("[[claim]\n")
    assert claims.main(["--results", str(tmp_path), "--claims", str(bad)]) == 2


def test_a_simulated_reproduction_ends_with_its_claims_count(tmp_path: Path):
    from abyss_harness import cli
    console = Console(record=True, width=200)
    cli._claims_summary("abyss-fig9", tmp_path, console)
    assert "the papers' statements on abyss-fig9: 0 of 0 agree" in console.export_text()
    assert claims.sim_topology("tale-fig2") == "numa" and claims.sim_topology("abyss-fig9") == "mesh"
    quiet = Console(record=True)
    cli._claims_summary("demo", tmp_path, quiet)   # a spec the papers say nothing about
    assert quiet.export_text() == ""
