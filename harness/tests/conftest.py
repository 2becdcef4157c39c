"""Shared test helpers: a fake engine that writes plausible run reports, so
the sweep, store, plot and report logic is tested without the real binary."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from abyss_harness import engine
from abyss_harness.runner import Outcome

ENGINE = engine.find_binary()
needs_engine = pytest.mark.skipif(not ENGINE.is_file(), reason=f"engine binary not built ({ENGINE})")


def config_from_argv(argv: list[str]) -> dict[str, Any]:
    """The `config` object the engine would report for `abyss run ARGV` (for
    the flags given; the real engine fills in every default as well)."""
    by_flag = {p.flag: p for p in engine.RUN_PARAMS.values()}
    config: dict[str, Any] = {}
    i = 1  # argv[0] is "run"
    while i < len(argv):
        p = by_flag[argv[i]]
        if p.kind == "switch":
            value: Any = True
            i += 1
        else:
            raw = argv[i + 1]
            i += 2
            value = (int(raw) if p.kind is int else float(raw) if p.kind is float
                     else raw == "on" if p.kind == "onoff" else raw)
        node = config
        for key in p.config[:-1]:
            node = node.setdefault(key, {})
        node[p.config[-1]] = value
    return config


def _histogram(commits: int, slow: int) -> dict[str, Any]:
    """A latency histogram in the engine's shape holding `commits`
    transactions: most near 10 µs, a hundredth `slow` times 100 µs."""
    tail = commits // 100
    return {"unit": "ns", "sub_buckets": 32, "count": commits,
            "buckets": [[10_239, commits - tail - tail // 10], [100_351 * slow, tail],
                        [1_015_807 * slow, tail // 10]]}


def fake_report(argv: list[str]) -> dict[str, Any]:
    """A run report shaped like the engine's, with numbers that depend on the
    configuration (deterministically) so medians and plots have something to show."""
    config = config_from_argv(argv)
    threads = config.get("threads", 1)
    salt = zlib.crc32(json.dumps(config, sort_keys=True).encode()) % 1000
    throughput = 100_000.0 * threads * (1 + salt / 1000)
    fractions = {"useful": 0.5, "abort": 0.1, "backoff": 0.02, "ts_alloc": 0.03, "index": 0.1,
                 "wait": 0.05, "commit": 0.08, "cc_manager": 0.1, "other": 0.02}
    seconds = config.get("duration_s", 1.0)
    lat = {"p50": 10.0, "p99": 50.0, "p999": 90.0, "max": 200.0}
    tpcc = config.get("workload") == "tpcc"
    types = {"tpcc": ["new_order", "payment"], "tsalloc": ["allocate"]}.get(config.get("workload"),
                                                                           ["read_write", "read_only"])
    per_type = int(throughput * seconds) // len(types)
    results: dict[str, Any] = {
        "seconds": seconds, "throughput": throughput, "commits": int(throughput * seconds),
        "cc_aborts": salt, "logical_aborts": 0, "abort_rate": salt / (salt + throughput * seconds),
        # Two thirds of the aborts a lock conflict, the rest read validation.
        "abort_causes": {c: {"lock_conflict": salt - salt // 3, "read_validation": salt // 3}.get(c, 0)
                         for c in engine.ABORT_CAUSES},
        "load_seconds": 0.1, "rss_after_load_bytes": 1 << 20, "rss_at_end_bytes": 2 << 20,
        "latency_us": lat,
        "per_type": {t: {"commits": per_type, "cc_aborts": 0, "logical_aborts": 0,
                         "throughput": throughput / len(types), "latency_us": lat,
                         "latency_histogram": _histogram(per_type, k + 1)} for k, t in enumerate(types)},
        "breakdown": {c: {"fraction": f, "seconds": f * seconds * threads} for c, f in fractions.items()},
        "breakdown_per_worker": [],
        "window": {"rule": "fixed", "steady": True, "windows": 1, "warmup_seconds": config.get("warmup_s", 0.2),
                   "commits_per_worker": throughput * seconds / threads, "halves_ratio": 1.0},
    }
    if tpcc:
        results["tpmC"] = throughput * 30
    if config.get("workload") == "tsalloc":
        results["timestamps_per_second"] = throughput * 256
    return {"build_type": "Release", "config": config, "config_hash": f"{salt:016x}", "cores": 2,
            "cpu_model": "Test CPU", "git_rev": "0123456789ab", "results": results}


class FakeEngine:
    """A RunFn: records each call; writes a fake report; can fail on demand."""

    def __init__(self, fail_on: set[int] | None = None, interrupt_after: int | None = None,
                 returncode: int = 1, output: str = "abyss: something went wrong\n") -> None:
        self.calls: list[list[str]] = []
        self.fail_on = fail_on or set()
        self.interrupt_after = interrupt_after
        self.returncode = returncode
        self.output = output

    def __call__(self, argv: list[str], json_path: Path) -> Outcome:
        if self.interrupt_after is not None and len(self.calls) == self.interrupt_after:
            json_path.write_text("{\"partial", encoding="utf-8")   # as if killed mid-write
            raise KeyboardInterrupt
        self.calls.append(list(argv))
        if len(self.calls) in self.fail_on:
            return Outcome(self.returncode, self.output, 0.01)
        json_path.write_text(json.dumps(fake_report(argv)), encoding="utf-8")
        return Outcome(0, "", 0.01)


SPEC = """
name = "unit"
title = "unit test sweep"
figure = "Test Fig. 1"
reps = 2
[fixed]
workload = "ycsb"
rows = 4096
duration = 0.05
warmup = 0.0
[axes]
cc = ["no_wait", "silo", "hstore"]
threads = [1, 2]
[per_scheme.hstore]
partitions = { same_as = "threads" }
[[plot]]
kind = "lines"
x = "threads"
y = "throughput"
[[plot]]
kind = "breakdown"
"""


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "unit.toml"
    path.write_text(SPEC, encoding="utf-8")
    return path
