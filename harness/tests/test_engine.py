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

from abyss_harness import engine, report, runner, store
from abyss_harness.spec import parse_spec
from conftest import ENGINE, needs_engine


def test_format_value() -> None:
    assert engine.format_value(0.0) == "0" and engine.format_value(0.6) == "0.6"
    assert engine.format_value(20971520) == "20971520" and engine.format_value(1e-05) == "1e-05"


@needs_engine
def test_param_table_matches_run_help() -> None:
    text = subprocess.run([str(ENGINE), "run", "--help"], capture_output=True, text=True, check=True).stdout
    flags = {m.group(1) for m in re.finditer(r"^\s+(--[a-z][a-z0-9-]*)", text, re.M)}
    flags -= {"--help", "--history", "--dump", "--json"}
    assert flags == {p.flag for p in engine.RUN_PARAMS.values()}
    schemes = re.search(r"--cc TEXT:\{([^}]*)\}", text).group(1).replace(" ", "").split(",")
    assert tuple(schemes) == engine.SCHEMES
    for p in engine.RUN_PARAMS.values():
        m = re.search(re.escape(p.flag) + r" \S*in \[([0-9.e+-]+) - ([0-9.e+-]+)\]", text)
        if m:
            assert (float(m.group(1)), float(m.group(2))) == (p.lo, p.hi), p.flag


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


@needs_engine
def test_real_engine_smoke(tmp_path: Path) -> None:
    spec = parse_spec(SMOKE, "smoke.toml", cores=2)
    exp_dir, res = runner.sweep(spec, tmp_path, runner.EngineRunner(ENGINE, timeout_s=60),
                                Console(file=open("/dev/null", "w")))
    assert (res.ran, res.failed) == (2, [])
    exp = store.load_experiment(exp_dir)
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
