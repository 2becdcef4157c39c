"""`abyss bench kv`'s harness side: the servers' flags of every mode (the
study's ladder adds one technique a step), the summary's arithmetic, and a
real ladder run on the engine with a bad flag's refusal."""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import pytest

from abyss_harness import kvbench

from conftest import needs_engine


def flags_of(mode: str, log: str = "file") -> dict[str, str]:
    args = argparse.Namespace(cc="silo", value_size=100, log=log, fsync="never", group_commit_us=1000, partitions=64)
    flat = kvbench.server_flags(mode, args, 4096, 2, Path("/tmp/log"))
    return dict(zip(flat[::2], flat[1::2]))


def test_each_ladder_step_adds_one_technique_to_the_one_before() -> None:
    steps = [flags_of(m) for m in kvbench.LADDER]
    assert steps[0]["--journal"] == "shared" and steps[0]["--locking"] == "hierarchical"
    assert steps[0]["--keyspace-partitions"] == "1" and steps[0]["--schedule"] == "fifo"
    assert steps[0]["--connection-threads"] == "per-connection" and steps[1]["--connection-threads"] == "pool"
    assert "--semantic-drop" not in steps[0]
    for before, after in zip(steps, steps[1:]):
        changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
        assert changed, (before, after)
        # The drop step turns on weak writes with the drop itself.
        assert changed <= {"--journal", "--keyspace-partitions", "--schedule", "--semantic-drop", "--consistency",
                           "--locking", "--connection-threads"}
        assert len(changed - {"--consistency"}) == 1, changed
    assert steps[-1]["--locking"] == "wait-signal" and steps[-1]["--semantic-drop"] == "on"
    assert steps[-1]["--keyspace-partitions"] == "64" and steps[-1]["--schedule"] == "contention-aware"


def test_the_end_states_differ_only_in_the_lock_manager() -> None:
    fast, partitioned = flags_of("fast-path"), flags_of("partitioned")
    assert {k for k in fast if fast[k] != partitioned.get(k)} == {"--locking"}
    assert partitioned["--locking"] == "none"


def test_without_a_log_no_journal_is_named() -> None:
    assert "--journal" not in flags_of("baseline", log="off")


def test_the_table_gives_each_mode_over_the_instances() -> None:
    rows = [{"clients": 8, "mode": "baseline", "ops_per_s": 50.0, "p50_us": 1.0, "p99_us": 2.0, "server_cpu": 1.0,
             "dropped_pct": 0.0},
            {"clients": 8, "mode": "instances", "ops_per_s": 100.0, "p50_us": 1.0, "p99_us": 2.0, "server_cpu": 1.0,
             "dropped_pct": 0.0}]
    lines = kvbench.table(rows).splitlines()
    assert lines[1].split()[-1] == "0.50" and lines[2].split()[-1] == "1.00"


@needs_engine
def test_a_ladder_run_writes_every_step_and_the_instances(tmp_path: Path) -> None:
    out = tmp_path / "kv"
    assert kvbench.main(["--ladder", "--clients", "1,2", "--total", "400", "--reps", "1", "--out", str(out)]) == 0
    with (out / "kv.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert {(r["mode"], r["clients"]) for r in rows} == {(m, n) for m in (*kvbench.LADDER, "instances")
                                                         for n in ("1", "2")}
    assert all(float(r["ops_per_s"]) > 0 for r in rows)
    assert (out / "kv.png").stat().st_size > 10_000


@pytest.mark.parametrize("argv", [["--modes", "mongo"], ["--clients", "x"], ["--clients", "0"]])
def test_a_bad_flag_is_refused_before_any_server_starts(argv: list[str], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert kvbench.main([*argv, "--out", str(tmp_path / "kv")]) == 2
    assert not (tmp_path / "kv").exists()
    assert capsys.readouterr().err.startswith("abyss bench kv: ")
