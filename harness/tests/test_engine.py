"""Against the real engine binary (skipped when it is not built): the
parameter table matches `abyss run --help`, a tiny sweep runs end to end,
and a report's re-run command reproduces the run's config hash."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from rich.console import Console

import pytest

from abyss_harness import engine, plots, report, runner, store
from abyss_harness.spec import parse_spec
from conftest import ENGINE, needs_engine


def test_format_value() -> None:
    assert engine.format_value(0.0) == "0" and engine.format_value(0.6) == "0.6"
    assert engine.format_value(20971520) == "20971520" and engine.format_value(1e-05) == "1e-05"


@needs_engine
def test_params_are_the_engines_knob_table() -> None:
    """Every knob of `abyss describe --json` is a spec parameter with its range, and
    nothing else is; every scheme of the registry is known and has a plot style."""
    d = engine.describe()
    knobs = {k["name"].replace("-", "_"): k for k in d["knobs"] if k["json"]}
    assert set(engine.RUN_PARAMS) == set(knobs)
    for name, p in engine.RUN_PARAMS.items():
        k = knobs[name]
        assert p.flag == k["flag"]
        assert p.workload == k["workload"]
        if k["kind"] in ("integer", "real"):
            assert (p.lo, p.hi) == (k["min"], k["max"]), name
        if k["kind"] == "choice" and p.choices:
            assert p.choices == tuple(k["choices"]), name
    assert engine.SCHEMES == tuple(s["name"] for s in d["schemes"])
    assert set(plots.scheme_style()) == set(engine.SCHEMES)
    assert engine.BREAKDOWN == tuple(d["breakdown"])
    assert engine.ABORT_CAUSES == tuple(d["abort_causes"])


@needs_engine
def test_text_knobs_are_checked_by_the_engine() -> None:
    ts = engine.RUN_PARAMS["ts_alloc"]
    assert ts.normalize("batch:16", 2) == "batch:16"
    with pytest.raises(engine.ParamError, match="batch:0"):
        ts.normalize("batch:0", 2)
    mix = engine.RUN_PARAMS["tpcc_mix"]
    assert mix.normalize("neworder=40,payment=60", 2) == "neworder=40,payment=60"
    with pytest.raises(engine.ParamError, match="100"):
        mix.normalize("neworder=40,payment=40", 2)


@needs_engine
def test_every_spec_names_registered_schemes_and_knobs() -> None:
    """The shipped specs parse against this engine (unknown schemes or knobs fail)."""
    for path in sorted((engine.repo_root() / "harness" / "specs").glob("*.toml")):
        spec = parse_spec(path.read_text(), source=str(path), cores=2)
        for sweep in spec.sweeps:
            for cc in sweep.axes.get("cc", [sweep.fixed.get("cc", "no_wait")]):
                assert cc in engine.SCHEMES, (path, cc)


SMOKE = """
name = "smoke"
reps = 1
[fixed]
workload = "ycsb"
rows = 4096
duration = 0.03
warmup = 0.03
theta = 0.5
[axes]
cc = ["no_wait", "hstore"]
threads = [1]
[per_scheme.hstore]
partitions = { same_as = "threads" }
"""


def _real_sweep(text: str, name: str, results: Path) -> tuple[Path, store.Experiment]:
    """A spec's sweep with the real engine; every run must succeed."""
    spec = parse_spec(text, name, cores=2)
    exp_dir, res = runner.sweep(spec, results, runner.EngineRunner(ENGINE, timeout_s=60),
                                Console(file=open("/dev/null", "w")))
    assert res.failed == [] and res.ran > 0
    return exp_dir, store.load_experiment(exp_dir)


@needs_engine
def test_real_engine_smoke(tmp_path: Path) -> None:
    exp_dir, exp = _real_sweep(SMOKE, "smoke.toml", tmp_path)
    assert len(exp.runs) == 2 and (exp.runs["throughput"] > 0).all()
    assert not [c for c in exp.runs.columns if c.startswith("cfg_")], "every config field is known"
    report.write_experiment_report(exp)
    assert list((exp_dir / "plots").glob("*.svg"))
    # The printed re-run command must mean exactly the configuration that ran.
    doc = json.loads((exp_dir / exp.runs["file"].iloc[0]).read_text())
    cmd = shlex.split(engine.rerun_command(doc["config"]))
    assert cmd[0] == "./abyss"
    out = tmp_path / "again.json"
    subprocess.run([str(ENGINE), *cmd[1:], "--json", str(out)], check=True, capture_output=True)
    assert json.loads(out.read_text())["config_hash"] == doc["config_hash"]


TIMESERIES = """
name = "overtime"
reps = 1
[fixed]
workload = "ycsb"
rows = 4096
theta = 0.9
threads = 2
duration = 0.3
warmup = 0
sample_interval = 0.1
[axes]
cc = ["mvcc", "no_wait"]
[[plot]]
name = "window"
kind = "timeseries"
[[plot]]
name = "tail"
kind = "timeseries"
y = "p99_us"
"""


@needs_engine
def test_timeseries_plots_the_samples_of_real_runs(tmp_path: Path) -> None:
    exp_dir, exp = _real_sweep(TIMESERIES, "overtime.toml", tmp_path)
    s = exp.samples
    assert sorted(s.groupby("cc")["interval"].max().items()) == [("mvcc", 3), ("no_wait", 3)]
    # The samples add up to each run's commits, and every one has a resident-memory reading.
    totals = s.groupby("file")["commits"].sum()
    assert all(totals[f] == c for f, c in zip(exp.runs["file"], exp.runs["commits"]))
    assert (s["rss_bytes"] > 0).all()
    # Each run's samples CSV sits beside its report under the report's name.
    runs_dir = exp_dir / "runs"
    assert sorted(p.name for p in runs_dir.glob("*.samples.csv")) == sorted(
        f.removeprefix("runs/").removesuffix(".json") + ".samples.csv" for f in exp.runs["file"])
    assert not list(runs_dir.glob("*.part*"))
    report.write_experiment_report(exp)
    assert sorted(p.name for p in (exp_dir / "plots").glob("*.png")) == ["tail.png", "window.png"]


def test_timeseries_takes_only_sampled_metrics() -> None:
    with pytest.raises(Exception, match="sampled metric"):
        parse_spec(TIMESERIES.replace('y = "p99_us"', 'y = "tpmc"'), "bad.toml", cores=2)


def _stderr_of(argv: list[str], terminal: bool) -> bytes:
    """What `abyss` writes to standard error, on a pseudo-terminal or a pipe."""
    import os
    import pty
    if not terminal:
        return subprocess.run(argv, capture_output=True, timeout=60).stderr
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    out = b""
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:   # the terminal closed with the process
            break
        if not data:
            break
        out += data
    os.close(master)
    assert p.wait(timeout=60) == 0
    return out


@needs_engine
def test_a_long_run_shows_progress_on_a_terminal_only() -> None:
    argv = [str(ENGINE), "run", "--rows", "1000", "--duration", "2.2", "--warmup", "0"]
    shown = _stderr_of(argv, terminal=True)
    lines = [x for x in shown.split(b"\r") if x.startswith(b"abyss run:")]
    assert len(lines) == 3, shown                      # after 1 s, 2 s and at the end
    assert b"/ 2.2 s" in lines[0] and b"txn/s" in lines[0]
    assert shown.endswith(b"\r\x1b[K"), "the line is cleared at the end"
    assert b"abyss run:" not in _stderr_of(argv, terminal=False)
