"""abyss sim speed: the marginal rate, the alternation of binaries, and a real (tiny) measurement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abyss_harness import engine, simspeed

SIM = engine.repo_root() / "build" / "sim" / "apps" / "abyss"
needs_sim = pytest.mark.skipif(not SIM.is_file(), reason=f"simulated engine not built ({SIM})")


def test_marginal_is_the_added_stretch_alone():
    # Load and start cost 5 s and 100 commits in both runs; the added window 2 s and 4000 commits.
    assert simspeed.marginal((1100, 6.0), (5100, 8.0)) == 2000
    with pytest.raises(simspeed.SpeedError):
        simspeed.marginal((100, 1.0), (100, 1.5))
    with pytest.raises(simspeed.SpeedError):
        simspeed.marginal((100, 1.0), (300, 0.9))


def test_binaries_alternate_pair_by_pair_and_the_longer_run_doubles_the_window():
    calls = []

    def run(binary, args, window):
        calls.append((binary.name, args[args.index("--sim-cores") + 1], window))
        speed = 1000.0 if binary.name == "a" else 2000.0
        commits = int(window * 1e6)
        return commits, 1.0 + commits / speed

    a, b = Path("a"), Path("b")
    out = simspeed.measure([a, b], [4, 8], 0.001, 2, "no_wait", 0.6, 1000, run)
    assert [c[0] for c in calls[:8]] == ["a", "a", "b", "b", "a", "a", "b", "b"]
    assert [c[2] for c in calls[:2]] == [0.001, 0.002]
    assert {c[1] for c in calls[:8]} == {"4"} and {c[1] for c in calls[8:]} == {"8"}
    assert out[(4, a)] == pytest.approx([1000, 1000]) and out[(8, b)] == pytest.approx([2000, 2000])


def test_bad_arguments_are_usage_errors(capsys):
    for argv, what in ((["--cores", "0"], "--cores"), (["--theta", "nan"], "--theta"), (["--window", "-1"], "--window"),
                       (["/nonexistent/abyss"], "no such binary")):
        with pytest.raises(SystemExit) as e:
            simspeed.main(argv)
        assert e.value.code == 2
        assert what in capsys.readouterr().err


@needs_sim
def test_the_runner_reads_commits_and_host_seconds_from_a_real_run(tmp_path: Path):
    args = simspeed.workload_args("no_wait", 0.6, 4096, 2, 0.0005)
    commits, host = simspeed.Runner(tmp_path)(SIM, args, 0.0005)
    assert commits > 0 and host > 0
    assert not list(tmp_path.iterdir()), "the report file is removed"


def test_main_writes_the_table_and_every_pair_as_json(tmp_path: Path, monkeypatch, capsys):
    # Host time on a shared machine is noise at this scale, so the runs are scripted.
    class Scripted:
        def __init__(self, _workdir):
            pass

        def __call__(self, binary, args, window):
            commits = int(window * 1e6)
            return commits, 2.0 + commits / 5000.0

    monkeypatch.setattr(simspeed, "Runner", Scripted)
    monkeypatch.setattr(simspeed.engine, "describe", lambda: {"schemes": [{"name": "no_wait"}]})
    binary = tmp_path / "abyss"
    binary.write_text("")
    out = tmp_path / "speed.json"
    assert simspeed.main([str(binary), "--cores", "2,4", "--reps", "2", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [r["cores"] for r in rows] == [2, 4]
    assert all(r["commits_per_host_second"] == pytest.approx([5000, 5000]) for r in rows)
    assert "5,000" in capsys.readouterr().out
