"""One run of the engine from Python (a notebook, a script): `run(config) -> Result`.

    >>> import abyss_harness
    >>> r = abyss_harness.run({"cc": "silo", "workload": "ycsb", "theta": 0.9, "threads": 2, "duration": 1})
    >>> r.throughput, r.row["p99_us"], r.samples

The parameters are the spec keys (docs/harness.md), checked as a spec checks
them before the engine starts; the engine's own report comes back whole, with
the tables the harness draws from (a `runs.csv` row, the samples, the latency
histograms). The binary is the checkout's release build, or $ABYSS_BIN.
"""

from __future__ import annotations

import difflib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from . import engine, store
from .runner import EngineRunner


@dataclass
class Result:
    """What one run reported."""

    report: dict[str, Any]        # the engine's JSON report (docs/metrics.md)
    row: dict[str, Any]           # the run as one runs.csv row (store.flatten_run)
    samples: pd.DataFrame         # one row per interval (results.samples), empty when not sampled
    histograms: pd.DataFrame      # one row per transaction type and latency bucket
    command: str                  # the engine command line that ran

    @property
    def throughput(self) -> float:
        """Committed transactions per second over the measurement window."""
        return float(self.row["throughput"])

    def __repr__(self) -> str:
        return (f"Result({self.row.get('cc')}, {self.row.get('workload')}, {self.row.get('threads')} thread(s): "
                f"{self.throughput:,.0f} txn/s, abort rate {self.row.get('abort_rate', 0):.3f}, "
                f"p99 {self.row.get('p99_us')} µs)")


def _params(config: Mapping[str, Any]) -> dict[str, Any]:
    """The config checked and normalized, or ValueError naming what is wrong."""
    table = engine.RUN_PARAMS
    workload = config.get("workload", "ycsb")
    out: dict[str, Any] = {}
    for name, value in config.items():
        if name not in table:
            near = difflib.get_close_matches(name, list(table), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise ValueError(f"unknown parameter {name!r}{hint}")
        param = table[name]
        if param.workload and param.workload != workload:
            raise ValueError(f"{name} applies to workload {param.workload} only; this run is {workload}")
        try:
            out[name] = param.normalize(value, os.cpu_count() or 1)
        except engine.ParamError as e:
            raise ValueError(f"{name}: {e}") from None
    return out


def run(config: Mapping[str, Any] | None = None, *, binary: str | Path | None = None,
        timeout_s: float | None = None, **params: Any) -> Result:
    """Run one point and return its result.

    `config` and keyword `params` are merged (keywords win). A bad parameter
    raises ValueError before anything runs; so does a configuration the
    engine refuses (exit 2, its one-line reason as the message). A run that
    fails raises RuntimeError with the engine's output.
    """
    points = _params({**(config or {}), **params})
    argv = engine.argv_for(points)
    runner = EngineRunner(Path(binary) if binary else engine.find_binary(), timeout_s)
    with tempfile.TemporaryDirectory(prefix="abyss-run-") as tmp:
        path = Path(tmp) / "run.json"
        outcome = runner(argv, path)
        if outcome.returncode == 2:
            raise ValueError(outcome.output.strip().splitlines()[-1] if outcome.output.strip() else "refused")
        if not outcome.ok:
            raise RuntimeError(f"the engine failed (exit {outcome.returncode}): {outcome.output.strip()}")
        doc = json.loads(path.read_text())
    return Result(report=doc, row=store.flatten_run(doc), samples=pd.DataFrame(store.flatten_samples(doc)),
                  histograms=pd.DataFrame(store.flatten_histograms(doc)), command=" ".join(["abyss", *argv]))
