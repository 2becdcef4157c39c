"""abyss_harness.run(config) -> Result: one point from Python, on the real engine."""

from __future__ import annotations

import pytest

import abyss_harness
from conftest import needs_engine


@needs_engine
def test_run_returns_the_report_and_the_tables_drawn_from_it() -> None:
    r = abyss_harness.run({"cc": "tictoc", "rows": 4096, "duration": 0.3}, warmup=0.05, sample_interval=0.1)
    assert r.row["cc"] == "tictoc" and r.row["workload"] == "ycsb" and r.row["threads"] == 1
    assert r.report["config"]["cc"] == "tictoc"
    assert r.throughput == r.report["results"]["throughput"] > 0
    assert r.row["commits"] == r.report["results"]["commits"] > 0
    # Every commit is in one latency bucket; one sample per 0.1 s of window.
    assert r.histograms["count"].sum() == r.row["commits"]
    assert len(r.samples) == 3 and list(r.samples["interval"]) == [1, 2, 3]
    assert r.command.startswith("abyss run ") and "--cc tictoc" in r.command
    assert "tictoc" in repr(r)


@pytest.mark.parametrize("config, message", [
    ({"cc": "optimistic"}, "cc: 'optimistic' is not one of"),
    ({"thetta": 0.5}, "unknown parameter 'thetta'; did you mean 'theta'?"),
    ({"threads": 0}, "threads: 0 is out of range"),
    ({"duration": float("nan")}, "duration: nan is out of range"),
    ({"workload": "tpcc", "theta": 0.5}, "theta applies to workload ycsb only"),
])
def test_bad_parameters_are_refused_before_anything_runs(config: dict, message: str) -> None:
    # A binary that does not exist: reaching it would raise something else.
    with pytest.raises(ValueError, match=message.replace("?", r"\?")):
        abyss_harness.run(config, binary="/nonexistent/abyss")


@needs_engine
def test_a_run_the_engine_refuses_raises_its_reason() -> None:
    with pytest.raises(ValueError, match="this run needs .* GiB"):
        abyss_harness.run(rows=2**34, duration=0.1)
