"""The kill -9 loop (abyss_harness.crash) at CI size, its checks on made-up
recoveries, and its negative control; the power-loss loop (--power-loss) and
its negative control (--fsync never)."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from abyss_harness import crash, engine

BINARY = engine.find_binary(sim=False)
needs_binary = pytest.mark.skipif(not BINARY.exists(), reason="needs the release build (./abyss build)")


def acks(lines: str, tmp_path: Path) -> crash.AckLog:
    p = tmp_path / "acks.txt"
    p.write_text(lines)
    return crash.read_ack_log(p)


def test_check_passes_a_recovery_that_kept_every_acknowledged_write(tmp_path: Path) -> None:
    log = acks("c 3 t:1:u t:2:i\na 3\nc 5 t:1:u\n", tmp_path)
    # 5 was not acknowledged: recovered or not, both are fine, whole.
    assert crash.check(log, {("t", 1): (3, False), ("t", 2): (3, False)}).ok
    assert crash.check(log, {("t", 1): (5, False), ("t", 2): (3, False)}).ok


def test_check_finds_a_lost_acknowledged_write(tmp_path: Path) -> None:
    log = acks("c 3 t:1:u t:2:i\na 3\n", tmp_path)
    v = crash.check(log, {("t", 1): (3, False)})
    assert len(v.missing) == 1 and "t key 2" in v.missing[0]
    v = crash.check(log, {("t", 1): (0, False), ("t", 2): (3, False)})
    assert len(v.missing) == 1 and "version 0" in v.missing[0]


def test_a_removed_row_may_be_gone_but_not_older(tmp_path: Path) -> None:
    log = acks("c 3 t:1:d t:2:u\na 3\n", tmp_path)
    assert crash.check(log, {("t", 2): (3, False)}).ok
    assert crash.check(log, {("t", 1): (3, True), ("t", 2): (3, False)}).ok
    v = crash.check(log, {("t", 1): (1, False), ("t", 2): (3, False)})
    assert len(v.missing) == 1 and "t key 1" in v.missing[0]


def test_a_row_a_later_recovered_commit_removed_may_be_gone(tmp_path: Path) -> None:
    log = acks("c 3 t:1:i\na 3\nc 5 t:1:d t:2:u\n", tmp_path)
    assert crash.check(log, {("t", 2): (5, False)}).ok
    # 5 is not recovered (its update of key 2 is not): key 1's insert is lost.
    v = crash.check(log, {("t", 2): (0, False)})
    assert len(v.missing) == 1 and "t key 1" in v.missing[0]


def test_check_finds_part_of_a_transaction(tmp_path: Path) -> None:
    log = acks("c 3 t:1:u t:2:u\nc 7 t:1:u t:2:u\n", tmp_path)
    v = crash.check(log, {("t", 1): (7, False), ("t", 2): (3, False)})
    assert not v.missing and len(v.partial) == 1 and "commit 7" in v.partial[0]


def test_check_finds_a_version_no_commit_wrote(tmp_path: Path) -> None:
    v = crash.check(acks("c 3 t:1:u\n", tmp_path), {("t", 1): (9, False)})
    assert v.partial and "no commit line" in v.partial[0]


def test_a_line_cut_off_by_the_kill_is_dropped(tmp_path: Path) -> None:
    log = acks("c 3 t:1:u\na 3\nc 4 t:", tmp_path)
    assert set(log.commits) == {3} and log.acked == {3}


@needs_binary
@pytest.mark.parametrize("scheme,workload,checkpoint_ms", [("no_wait", "ycsb", 0), ("mvcc", "tpcc", 50),
                                                           ("silo", "ycsb", 50), ("hstore", "tpcc", 0)])
def test_a_killed_run_recovers_every_acknowledged_commit(tmp_path: Path, scheme: str, workload: str,
                                                        checkpoint_ms: int) -> None:
    r = crash.run_round(BINARY, scheme, crash.WORKLOADS[workload], tmp_path / "w", random.Random(7), 0.5, 1000,
                        tpcc=workload == "tpcc", checkpoint_every_ms=checkpoint_ms)
    assert r.acked > 0 and r.verdict.acked_checked > 0
    assert r.verdict.ok, (r.verdict.missing + r.verdict.partial)[:3]
    if workload == "tpcc":
        assert r.tpcc_ok


def test_a_later_runs_line_for_an_id_counts(tmp_path: Path) -> None:
    first = acks("c 3 t:1:u\na 3\nc 9 t:2:u\n", tmp_path)
    (tmp_path / "b").mkdir()
    second = acks("c 9 t:1:u\na 9\n", tmp_path / "b")
    merged = crash.merge_ack_logs([first, second])
    assert merged.acked == {3, 9} and merged.commits[9] == [("t", 1, "u")]
    assert crash.check(merged, {("t", 1): (9, False)}).ok
    v = crash.check(merged, {("t", 1): (3, False)})
    assert len(v.missing) == 1 and "commit 9" in v.missing[0]


@needs_binary
@pytest.mark.parametrize("scheme,workload,checkpoint_ms,journal", [("silo", "tpcc", 50, "per-worker"),
                                                                   ("no_wait", "ycsb", 0, "shared")])
def test_runs_recovered_from_the_log_and_killed_in_turn_lose_nothing(tmp_path: Path, scheme: str, workload: str,
                                                                     checkpoint_ms: int, journal: str) -> None:
    r = crash.run_round(BINARY, scheme, crash.WORKLOADS[workload], tmp_path / "w", random.Random(11), 0.5, 1000,
                        tpcc=workload == "tpcc", checkpoint_every_ms=checkpoint_ms, restarts=2, journal=journal)
    assert r.acked > 0 and r.verdict.acked_checked > 0
    assert r.verdict.ok, (r.verdict.missing + r.verdict.partial)[:3]
    if workload == "tpcc":
        assert r.tpcc_ok


@needs_binary
def test_the_checks_catch_a_recovery_that_lost_a_durable_record(tmp_path: Path) -> None:
    r = crash.run_round(BINARY, "no_wait", crash.WORKLOADS["tpcc"], tmp_path / "w", random.Random(3), 0.5, 1000,
                        tpcc=True, control=True)
    assert r.verdict.missing and not r.tpcc_ok


@pytest.fixture
def small_fs(tmp_path: Path):
    """A 32 MiB file system (tmpfs), where a logging run soon finds no space
    (within a tenth of a second here), after its first acknowledgements: at
    3 MiB a run on a loaded machine could fill it before its first epoch was
    durable, and then had nothing acknowledged to keep."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")
    yield mnt
    subprocess.run(["umount", str(mnt)], capture_output=True)


@needs_binary
def test_a_full_file_system_stops_the_run_and_keeps_what_was_acknowledged(small_fs: Path, tmp_path: Path) -> None:
    log_dir, ack_log = small_fs / "log", tmp_path / "acks.txt"
    # A window of ten minutes: the run must end when its log fails, not when
    # the window does (the timeout below would fail the test).
    run = subprocess.run([str(BINARY), "run", "--cc", "silo", "--threads", "2", "--rows", "10000", "--duration",
                          "600", "--warmup", "0", "--log", "file", "--log-dir", str(log_dir), "--ack-log",
                          str(ack_log)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    errors = [line for line in run.stderr.splitlines() if "note:" not in line]
    assert len(errors) == 1 and "No space left on device" in errors[0], run.stderr
    versions = tmp_path / "versions.csv"
    rec = subprocess.run([str(BINARY), "recover", str(log_dir), "--versions", str(versions)],
                         capture_output=True, text=True)
    assert rec.returncode == 0, rec.stderr
    acks = crash.read_ack_log(ack_log)
    assert acks.acked
    v = crash.check(acks, crash.read_versions(versions))
    assert v.ok and v.acked_checked == len(acks.acked), (v.missing + v.partial)[:3]


@needs_binary
def test_power_loss_at_needs_a_log_file_and_a_count() -> None:
    for args, words in ((["--power-loss-at", "5"], "--log file"), (["--power-loss-at", "5", "--log", "memory"],
                                                                   "--log file"),
                        (["--power-loss-at", "0", "--log", "file", "--log-dir", "/tmp/unused"], "below 1")):
        run = subprocess.run([str(BINARY), "run", "--dry-run", *args], capture_output=True, text=True)
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 2 and len(lines) == 1, run.stderr
        assert "--power-loss-at" in lines[0] and words in lines[0], lines[0]


def test_power_loss_loop_refuses_a_bad_max_ops() -> None:
    assert crash.main(["--power-loss", "--max-ops", "0"]) == crash.EXIT_USAGE
    assert crash.main(["--power-loss", "--control"]) == crash.EXIT_USAGE


# Random(13) draws the power loss at events 101, 1241 (of 1,500): past the
# log's opening, in group commits and checkpoints (every 50 ms).
@needs_binary
@pytest.mark.parametrize("scheme", ["no_wait", "silo"])
def test_a_power_loss_loses_nothing_acknowledged_under_group_commit(tmp_path: Path, scheme: str) -> None:
    rng = random.Random(13)
    rounds = [crash.power_loss_round(BINARY, scheme, crash.WORKLOADS["ycsb"], tmp_path / f"w{k}", rng, 1500, "group",
                                     journal, 1000, tpcc=False, checkpoint_every_ms=50)
              for k, journal in enumerate(("per-worker", "shared"))]
    assert all(r.acked > 0 for r in rounds), [(r.at, r.refused) for r in rounds]
    failures = [f for r in rounds for f in crash.power_loss_failures(r, "group")]
    assert not failures, failures[:3]


# Random(17) draws events 409, 139, 126 (of 1,500): each after the log's
# opening (about 17 events), so each round has acknowledged commits that
# only the page cache held. One round keeps them all only if every file kept
# every write it made since the run began (one chance in hundreds per file):
# three rounds all doing so is out of reach.
@needs_binary
def test_a_power_loss_finds_the_commits_fsync_never_loses(tmp_path: Path) -> None:
    rng = random.Random(17)
    rounds = [crash.power_loss_round(BINARY, "no_wait", crash.WORKLOADS["ycsb"], tmp_path / f"w{k}", rng, 1500,
                                     "never", journal, 1000, tpcc=False, checkpoint_every_ms=50)
              for k, journal in enumerate(("per-worker", "shared", "per-worker"))]
    assert sum(r.acked for r in rounds) > 0
    assert sum(r.missing for r in rounds) > 0, [(r.at, r.acked, r.refused) for r in rounds]
