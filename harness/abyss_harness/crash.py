"""`abyss crash`: kill -9 a logging run at random moments, recover, and check
that nothing acknowledged was lost and nothing unacknowledged shows in part.

Each round starts `abyss run --log file --ack-log FILE` (docs/durability.md),
waits a random time after the run's first acknowledgement, and kills it with
SIGKILL. The ack log is the client's side: the run writes a commit's line
(`c TID TABLE:KEY:KIND ...`) before its log record can reach a journal and an
acknowledgement's line (`a TID`) once the commit is durable, each with one
write(2), so both survive the kill. Then `abyss recover DIR --versions FILE
--dump DIR` rebuilds the database, and the round checks:

- durability: every write of every acknowledged commit is in the recovered
  rows, at its version or a later one (commit ids order a row's versions),
  or the row is gone, removed by it or by a later recovered commit (a
  checkpoint holds no removed rows);
- atomicity: every version a recovered row holds is a commit whose writes
  are all recovered, at that version or later: no part of a transaction
  without the rest;
- TPC-C: `abyss check tpcc` on the dump (the consistency conditions).

The same checks run against a recovery that lost a durable record (a
journal cut short behind the recovery's back, recovered with `--salvage`,
which takes what comes before the cut instead of refusing it) must fail:
that is the negative control, `--control`.

kill -9 leaves the OS's page cache whole, so it cannot see a sync that is
missing. `--power-loss` runs the same checks after a simulated power loss
instead (`run --power-loss-at N`, docs/durability.md): the run ends itself
at its N-th file event in the log directory, N drawn at random up to
`--max-ops` (densest near the start, so some land in the log's opening),
keeping of what was not synced only what a power loss may keep.
A crash before the log was whole (no manifest) may leave a directory that
recovery refuses; that is fine only if nothing was acknowledged. With
`--fsync never` the loop is a negative control: it must find acknowledged
commits missing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from . import engine

#: Exit codes as the engine's: 0 every check held, 1 a check failed, 2 usage.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

#: The exit status of a run that a simulated power loss ended
#: (platform::power_loss::kExitCode).
EXIT_POWER_LOSS = 86

#: --max-ops's default. A two-worker YCSB run of WORKLOADS with group
#: commit and checkpoints every 200 ms makes 1,000 to 2,500 hooked file
#: events a second on a loaded two-core machine, about 17 of them in the
#: log's opening (per-worker journals; 13 shared). The event is drawn as
#: max_ops * u**2 (u uniform), dense near the start: about one crash in 15
#: lands in the opening, half in its first 1,000 events (half a second of
#: group commits, with checkpoints), the rest up to about 3 s in.
MAX_OPS = 4000


@dataclass
class AckLog:
    """What the killed run told its client."""
    commits: dict[int, list[tuple[str, int, str]]] = field(default_factory=dict)  # tid -> writes
    acked: set[int] = field(default_factory=set)


def read_ack_log(path: Path) -> AckLog:
    """Parses an ack log; a last line the kill cut off is dropped."""
    log = AckLog()
    text = path.read_text() if path.exists() else ""
    lines = text.split("\n")
    for line in lines[:-1]:          # the part after the last newline is unfinished
        parts = line.split(" ")
        if parts[0] == "c" and len(parts) >= 2:
            writes = []
            for w in parts[2:]:
                table, key, kind = w.rsplit(":", 2)
                writes.append((table, int(key), kind))
            log.commits[int(parts[1])] = writes
        elif parts[0] == "a" and len(parts) == 2:
            log.acked.add(int(parts[1]))
        else:
            raise ValueError(f"{path}: a line that is neither a commit nor an acknowledgement: {line[:80]!r}")
    return log


def read_versions(path: Path) -> dict[tuple[str, int], tuple[int, bool]]:
    """`abyss recover --versions`: (table, key) -> (writer, deleted)."""
    out: dict[tuple[str, int], tuple[int, bool]] = {}
    with path.open() as f:
        next(f)
        for line in f:
            table, key, writer, deleted = line.rstrip("\n").split(",")
            out[(table, int(key))] = (int(writer), deleted == "1")
    return out


@dataclass
class Verdict:
    acked_checked: int = 0
    writes_checked: int = 0
    missing: list[str] = field(default_factory=list)      # acknowledged writes not recovered
    partial: list[str] = field(default_factory=list)      # recovered versions of commits not whole
    missing_commits: set[int] = field(default_factory=set)  # acknowledged commits with a write not recovered

    @property
    def ok(self) -> bool:
        return not self.missing and not self.partial


def check(acks: AckLog, versions: dict[tuple[str, int], tuple[int, bool]]) -> Verdict:
    """The durability and atomicity checks of one recovery."""
    v = Verdict()
    removals: dict[tuple[str, int], list[int]] = {}
    for tid, writes in acks.commits.items():
        for table, key, kind in writes:
            if kind == "d":
                removals.setdefault((table, key), []).append(tid)

    def recovered(tid: int) -> bool:
        """Whether every write of commit `tid` that leaves a row is recovered at its version or later."""
        return all((got := versions.get((t, k))) is not None and got[0] >= tid
                   for t, k, kind in acks.commits[tid] if kind != "d")

    def removed_later(table: str, key: int, tid: int) -> bool:
        """A row gone from a recovery from a checkpoint: a later commit removed it, and is recovered."""
        return any(d > tid and recovered(d) for d in removals.get((table, key), []))

    def kept(table: str, key: int, kind: str, tid: int) -> bool:
        """Whether commit `tid`'s write of the row survives: the row holds its version or a later one,
        or is gone, removed by it or by a later recovered commit (a checkpoint holds no removed rows)."""
        got = versions.get((table, key))
        if got is None:
            return kind == "d" or removed_later(table, key, tid)
        return got[0] >= tid

    for tid in sorted(acks.acked):
        writes = acks.commits.get(tid)
        if writes is None:
            v.missing.append(f"commit {tid} was acknowledged but its commit line is not in the ack log")
            v.missing_commits.add(tid)
            continue
        v.acked_checked += 1
        for table, key, kind in writes:
            v.writes_checked += 1
            if not kept(table, key, kind, tid):
                v.missing_commits.add(tid)
                got = versions.get((table, key))
                v.missing.append(f"commit {tid}'s {kind} of {table} key {key}: recovered "
                                 f"{'nothing' if got is None else 'version ' + str(got[0])}")
    seen: set[int] = set()
    for (table, key), (writer, _) in versions.items():
        if writer in seen or writer == 0:    # 0: the load's version
            continue
        seen.add(writer)
        writes = acks.commits.get(writer)
        if writes is None:
            v.partial.append(f"{table} key {key} holds version {writer}, which no commit line names")
            continue
        for t2, k2, kind in writes:
            if not kept(t2, k2, kind, writer):
                v.partial.append(f"commit {writer} is recovered at {table} key {key} but not its {kind} of "
                                 f"{t2} key {k2}")
    return v


@dataclass
class Round:
    scheme: str
    kill_after_s: float
    acked: int
    verdict: Verdict
    tpcc_ok: bool | None
    recover_line: str
    mid_checkpoint: bool  # killed while a checkpoint was being written or put in place
    mid_group: bool = False  # killed with records written past the durable epoch: inside a group commit


def merge_ack_logs(logs: list[AckLog]) -> AckLog:
    """The ack logs of a run and of the runs recovered from it, in order, as
    one client's view: a recovered run's commit ids come after every id of
    the log it started from, so an id a later run repeats is of a commit the
    earlier run never made durable, and the later line is the one that counts."""
    out = AckLog()
    for log in logs:
        out.commits.update(log.commits)
        out.acked |= log.acked
    return out


def start_and_kill(cmd: list[str], ack_log: Path, scheme: str, rng: random.Random, max_wait_s: float,
                   from_start: bool = False) -> float:
    """Starts `cmd`, waits for its first acknowledgement (or, `from_start`,
    not), then a random time up to `max_wait_s`, and kills it with SIGKILL;
    returns the wait."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        if from_start:
            # Anywhere in a recovered run's start: its recovery, the base
            # checkpoint, the old log's removal, or its first commits.
            wait = rng.uniform(0.0, max_wait_s)
            time.sleep(wait)
            proc.send_signal(signal.SIGKILL)
            return wait
        # The clock starts at the first acknowledgement: the load is over.
        # The ack log is read as it grows, from where the last look ended.
        deadline = time.monotonic() + 120
        seen, tail = 0, b"\n"
        while time.monotonic() < deadline and proc.poll() is None:
            if ack_log.exists():
                with ack_log.open("rb") as f:
                    f.seek(seen)
                    chunk = f.read()
                seen += len(chunk)
                if b"\na " in tail + chunk:
                    break
                tail = chunk[-2:] if len(chunk) >= 2 else tail[-(2 - len(chunk)):] + chunk
            time.sleep(0.01)
        if proc.poll() is not None:
            raise RuntimeError(f"abyss run --cc {scheme} exited {proc.returncode} before it was killed: "
                               f"{proc.stderr.read().strip()[-300:]}")
        wait = rng.uniform(0.0, max_wait_s)
        time.sleep(wait)
        proc.send_signal(signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stderr.close()
    return wait


def run_round(binary: Path, scheme: str, workload_args: list[str], work: Path, rng: random.Random,
              max_wait_s: float, group_commit_us: int, tpcc: bool, control: bool = False,
              checkpoint_every_ms: int = 0, restarts: int = 0, journal: str = "per-worker") -> Round:
    """One kill and recovery of runs with `journal` as their --journal; with
    `restarts`, that many runs recovered from the log (`run --recover`),
    each killed in turn, before the recovery that is checked against every
    run's acknowledgements."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    log_dir = work / "log"
    seed = str(rng.randrange(1, 1 << 30))
    ack_logs = []
    wait = 0.0
    for restart in range(restarts + 1):
        ack_log = work / f"acks-{restart}.txt"
        ack_logs.append(ack_log)
        cmd = [str(binary), "run", "--cc", scheme, "--threads", "2", "--duration", "600", "--warmup", "0",
               "--log", "file", "--journal", journal, "--log-dir", str(log_dir), "--ack-log", str(ack_log),
               "--group-commit-us", str(group_commit_us), "--checkpoint-every-ms", str(checkpoint_every_ms),
               "--seed", seed, *workload_args, *(["--recover"] if restart > 0 else [])]
        # Half the recovered runs are killed at a random time from their start.
        wait = start_and_kill(cmd, ack_log, scheme, rng, max_wait_s,
                              from_start=restart > 0 and rng.random() < 0.5)
    mid_checkpoint = in_checkpoint(log_dir)
    if control:
        # A storage that lost a durable record: the largest journal loses its
        # last half. Recovery cannot know; the checks must.
        journal = max(log_dir.glob("journal-*.abj"), key=lambda p: p.stat().st_mtime_ns)
        size = journal.stat().st_size
        with journal.open("r+b") as f:
            f.truncate(16 + (size - 16) // 2)
    versions_path, dump, numbers = work / "versions.csv", work / "dump", work / "recover.json"
    # Recovery itself refuses a journal cut where it was durable; --salvage
    # makes it recover what comes before the cut, for the checks to judge.
    rec = subprocess.run([str(binary), "recover", str(log_dir), "--versions", str(versions_path),
                          "--dump", str(dump), "--json", str(numbers), *(["--salvage"] if control else [])],
                         capture_output=True, text=True)
    if rec.returncode != 0:
        raise RuntimeError(f"abyss recover {log_dir} exited {rec.returncode}: {rec.stderr.strip()}")
    replay = next((line.strip() for line in rec.stdout.splitlines() if "replay" in line), "")
    acks = merge_ack_logs([read_ack_log(a) for a in ack_logs])
    verdict = check(acks, read_versions(versions_path))
    tpcc_ok = None
    if tpcc:
        tpcc_ok = subprocess.run([str(binary), "check", "tpcc", str(dump)], capture_output=True,
                                 text=True).returncode == 0
    # Records past the durable epoch were written by a group whose epoch
    # never became durable: the kill came inside a group commit.
    mid_group = json.loads(numbers.read_text()).get("records_beyond", 0) > 0
    return Round(scheme, wait, len(acks.acked), verdict, tpcc_ok, replay, mid_checkpoint, mid_group)


@dataclass
class PowerLossRound:
    scheme: str
    at: int                  # the file event the power loss came at
    journal: str
    acked: int
    opening: bool            # no manifest after the crash: the log was not whole yet
    refused: str             # recovery's error line, empty when it recovered
    verdict: Verdict
    tpcc_ok: bool | None

    @property
    def missing(self) -> int:
        """Acknowledged commits missing: all of them when recovery refused the directory."""
        return self.acked if self.refused else len(self.verdict.missing_commits)


def power_loss_round(binary: Path, scheme: str, workload_args: list[str], work: Path, rng: random.Random,
                     max_ops: int, fsync: str, journal: str, group_commit_us: int, tpcc: bool,
                     checkpoint_every_ms: int = 0) -> PowerLossRound:
    """One run ended by a simulated power loss at a random file event, and
    its recovery, checked as a kill's."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    log_dir, ack_log = work / "log", work / "acks.txt"
    at = max(1, math.ceil(max_ops * rng.random() ** 2))
    cmd = [str(binary), "run", "--cc", scheme, "--threads", "2", "--duration", "600", "--warmup", "0",
           "--log", "file", "--log-dir", str(log_dir), "--ack-log", str(ack_log), "--fsync", fsync,
           "--journal", journal, "--group-commit-us", str(group_commit_us),
           "--checkpoint-every-ms", str(checkpoint_every_ms), "--power-loss-at", str(at),
           "--seed", str(rng.randrange(1, 1 << 30)), *workload_args]
    run = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
    if run.returncode != EXIT_POWER_LOSS:
        raise RuntimeError(f"abyss run --cc {scheme} --power-loss-at {at} exited {run.returncode}, not "
                           f"{EXIT_POWER_LOSS} (the power loss): {run.stderr.strip()[-300:]}")
    acks = read_ack_log(ack_log)
    opening = not (log_dir / "manifest.json").exists()
    versions_path, dump = work / "versions.csv", work / "dump"
    rec = subprocess.run([str(binary), "recover", str(log_dir), "--versions", str(versions_path),
                          "--dump", str(dump)], capture_output=True, text=True)
    if rec.returncode != 0:
        line = rec.stderr.strip().splitlines()[-1] if rec.stderr.strip() else f"exit {rec.returncode}"
        return PowerLossRound(scheme, at, journal, len(acks.acked), opening,
                              f"exit {rec.returncode}: {line.removeprefix('abyss: ')}", Verdict(), None)
    verdict = check(acks, read_versions(versions_path))
    tpcc_ok = None
    if tpcc:
        tpcc_ok = subprocess.run([str(binary), "check", "tpcc", str(dump)], capture_output=True,
                                 text=True).returncode == 0
    return PowerLossRound(scheme, at, journal, len(acks.acked), opening, "", verdict, tpcc_ok)


def power_loss_failures(r: PowerLossRound, fsync: str) -> list[str]:
    """What makes a round fail under a policy that syncs: a refused recovery
    of a log that opened, or of one that acknowledged anything; a lost or a
    partial commit; TPC-C's conditions. Under `never` no round fails on its
    own: what was lost is what the control must find, and a commit can show
    in part (a checkpoint copied some of its rows, and its record, which
    replay would have put whole over them, was never synced)."""
    if fsync == "never":
        return []
    where = f"power loss at event {r.at} ({r.journal})"
    out = []
    if r.refused and (not r.opening or r.acked > 0):
        out.append(f"{where}: recovery refused the log with {r.acked} commit(s) acknowledged"
                   f"{'' if r.opening else ' after it opened'}: {r.refused}")
    out += [f"{where}: {m}" for m in r.verdict.missing[:1]]
    out += [f"{where}: {p}" for p in r.verdict.partial[:1]]
    if r.tpcc_ok is False:
        out.append(f"{where}: abyss check tpcc failed on the recovered dump")
    return out


@contextlib.contextmanager
def work_root(prefix: str, keep: bool) -> Iterator[Path]:
    """A temporary directory for the rounds' work: removed at the end, or
    kept and named with `keep`."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield root
    finally:
        if keep:
            print(f"work directories kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def layouts(journal: str) -> list[str]:
    """The --journal values of `--journal` (both: per-worker, then shared)."""
    return ["per-worker", "shared"] if journal == "both" else [journal]


def power_loss_main(args: argparse.Namespace, binary: Path, schemes: list[str], workloads: list[str],
                    root: Path) -> int:
    """The power-loss loop and its table; the exit code."""
    rng = random.Random(args.seed)
    journals = layouts(args.journal or "both")
    failed = False
    lost = 0
    print(f"{'workload':9} {'scheme':11} {'crashes':>7} {'opening':>7} {'refused':>7} {'acked':>9} "
          f"{'missing':>8} {'partial':>8} {'tpcc':>6}")
    for w in workloads:
        for s in schemes:
            opening = refused = acked = missing = partial = tpcc_pass = tpcc_runs = 0
            examples: list[str] = []
            for k in range(args.kills):
                r = power_loss_round(binary, s, WORKLOADS[w], root / f"{w}-{s}-{k}", rng, args.max_ops,
                                     args.fsync, journals[k % len(journals)], args.group_commit_us,
                                     tpcc=w == "tpcc", checkpoint_every_ms=args.checkpoint_every_ms)
                opening += 1 if r.opening and r.refused and r.acked == 0 else 0
                refused += 1 if r.refused and not (r.opening and r.acked == 0) else 0
                acked += r.acked
                missing += r.missing
                partial += len(r.verdict.partial)
                tpcc_runs += 1 if r.tpcc_ok is not None else 0
                tpcc_pass += 1 if r.tpcc_ok else 0
                examples += power_loss_failures(r, args.fsync)
            lost += missing
            tpcc = f"{tpcc_pass}/{tpcc_runs}" if w == "tpcc" else "-"
            print(f"{w:9} {s:11} {args.kills:7} {opening:7} {refused:7} {acked:9} {missing:8} {partial:8} "
                  f"{tpcc:>6}", flush=True)
            for e in examples[:3]:
                print(f"  {e}")
            failed |= bool(examples)
    if args.fsync == "never":
        # The negative control: a policy that never syncs must lose acknowledged commits.
        print(f"control: {lost} acknowledged commit(s) lost under --fsync never"
              + ("" if lost else ": the power loss lost nothing, so the loop cannot tell a sync from none"))
        failed |= lost == 0
    return EXIT_FAILED if failed else EXIT_OK


def in_checkpoint(log_dir: Path) -> bool:
    """Whether a checkpoint file exists that the `checkpoint` file does not
    name: one being written, or the one just replaced."""
    files = {p.name for p in log_dir.glob("checkpoint-*.abc")}
    meta = log_dir / "checkpoint"
    named = json.loads(meta.read_text()).get("file") if meta.exists() else None
    return bool(files - {named})


WORKLOADS = {
    # YCSB at high contention, half the accesses writes: every update
    # changes its row (docs/workloads.md), so a lost one shows.
    "ycsb": ["--workload", "ycsb", "--rows", "100000", "--theta", "0.9", "--write-ratio", "0.5"],
    "tpcc": ["--workload", "tpcc", "--warehouses", "1"],
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="abyss crash", description=__doc__.split("\n\n")[0])
    p.add_argument("--schemes", default="no_wait,wait_die,mvcc,silo,tictoc,hstore",
                   help="comma-separated schemes (default: six from the 2PL, T/O, MVCC, OCC and partition families)")
    p.add_argument("--workloads", default="ycsb,tpcc", help="ycsb, tpcc, comma-separated (default both)")
    p.add_argument("--kills", type=int, default=10, help="kills per scheme and workload (default 10)")
    p.add_argument("--max-wait", type=float, default=1.0,
                   help="the kill comes at a random time up to this many seconds after the first "
                        "acknowledgement (default 1)")
    p.add_argument("--group-commit-us", type=int, default=1000, help="the runs' --group-commit-us (default 1000)")
    p.add_argument("--checkpoint-every-ms", type=int, default=200,
                   help="the runs' --checkpoint-every-ms, so kills also land in checkpoints (default 200; 0: none)")
    p.add_argument("--restarts", type=int, default=0,
                   help="after each kill, this many runs that start from the log (run --recover), each "
                        "killed in turn, before the recovery that is checked (default 0)")
    p.add_argument("--seed", type=int, default=1, help="seed of the kill times and the runs' seeds")
    p.add_argument("--control", action="store_true",
                   help="the negative control: cut a journal short before each recovery; every round must fail")
    p.add_argument("--keep", action="store_true", help="keep the work directories")
    p.add_argument("--power-loss", action="store_true",
                   help="end each run with a simulated power loss (run --power-loss-at) instead of kill -9")
    p.add_argument("--max-ops", type=int, default=MAX_OPS,
                   help=f"--power-loss: the power loss comes at a file event drawn from 1 to this "
                        f"(default {MAX_OPS})")
    p.add_argument("--fsync", choices=("group", "always", "never"), default="group",
                   help="--power-loss: the runs' --fsync (default group; never: the negative control, which "
                        "must lose acknowledged commits)")
    p.add_argument("--journal", choices=("per-worker", "shared", "both"),
                   help="the runs' --journal, or both in turn (default: per-worker; with --power-loss, both)")
    args = p.parse_args(argv)
    schemes = [s for s in args.schemes.split(",") if s]
    workloads = [w for w in args.workloads.split(",") if w]
    for w in workloads:
        if w not in WORKLOADS:
            print(f"abyss crash: --workloads {w}: one of {', '.join(WORKLOADS)}", file=sys.stderr)
            return EXIT_USAGE
    known = set(engine.SCHEMES)
    for s in schemes:
        if s not in known:
            print(f"abyss crash: --schemes {s}: one of {', '.join(sorted(known))}", file=sys.stderr)
            return EXIT_USAGE
    if (args.kills < 1 or not 0 <= args.max_wait <= 600 or args.group_commit_us < 1 or args.checkpoint_every_ms < 0
            or not 0 <= args.restarts <= 100):
        print("abyss crash: --kills must be at least 1, --max-wait from 0 to 600, --group-commit-us at least 1, "
              "--checkpoint-every-ms at least 0, --restarts from 0 to 100", file=sys.stderr)
        return EXIT_USAGE
    if args.max_ops < 1:
        print("abyss crash: --max-ops must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    if args.power_loss and (args.control or args.restarts > 0):
        print("abyss crash: --power-loss runs without --control and --restarts (--fsync never is its control)",
              file=sys.stderr)
        return EXIT_USAGE
    binary = engine.find_binary(sim=False)
    if args.power_loss:
        with work_root("abyss-power-loss-", args.keep) as root:
            try:
                return power_loss_main(args, binary, schemes, workloads, root)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"abyss crash: {e}", file=sys.stderr)
                return EXIT_FAILED
    rng = random.Random(args.seed)
    failed = False
    print(f"{'workload':9} {'scheme':11} {'journal':10} {'kills':>5} {'in ckpt':>7} {'in group':>8} {'acked':>9} "
          f"{'writes':>10} {'missing':>8} {'partial':>8} {'tpcc':>6}")
    with work_root("abyss-crash-", args.keep) as root:
        try:
            rounds = ((w, s, j) for w in workloads for s in schemes for j in layouts(args.journal or "per-worker"))
            for w, s, j in rounds:
                acked = writes = missing = partial = mid = in_group = 0
                tpcc_pass = 0
                examples: list[str] = []
                for k in range(args.kills):
                    r = run_round(binary, s, WORKLOADS[w], root / f"{w}-{s}-{j}-{k}", rng, args.max_wait,
                                  args.group_commit_us, tpcc=w == "tpcc", control=args.control,
                                  checkpoint_every_ms=args.checkpoint_every_ms, restarts=args.restarts,
                                  journal=j)
                    acked += r.verdict.acked_checked
                    writes += r.verdict.writes_checked
                    missing += len(r.verdict.missing)
                    partial += len(r.verdict.partial)
                    tpcc_pass += 1 if r.tpcc_ok else 0
                    mid += 1 if r.mid_checkpoint else 0
                    in_group += 1 if r.mid_group else 0
                    examples += (r.verdict.missing + r.verdict.partial)[:1]
                    if r.tpcc_ok is False:
                        examples.append(f"kill {k}: abyss check tpcc failed on the recovered dump")
                tpcc = f"{tpcc_pass}/{args.kills}" if w == "tpcc" else "-"
                print(f"{w:9} {s:11} {j:10} {args.kills:5} {mid:7} {in_group:8} {acked:9} {writes:10} {missing:8} "
                      f"{partial:8} {tpcc:>6}", flush=True)
                bad = missing > 0 or partial > 0 or (w == "tpcc" and tpcc_pass < args.kills)
                if args.control:
                    # Every cut must be caught: a round the checks pass failed the control.
                    if not bad:
                        print(f"  control not caught: {w} {s} recovered everything after a journal was cut")
                        failed = True
                else:
                    for e in examples[:3]:
                        print(f"  {e}")
                    failed |= bad
        except RuntimeError as e:
            print(f"abyss crash: {e}", file=sys.stderr)
            return EXIT_FAILED
    if args.control:
        print("control: " + ("a check missed a lost record" if failed else "every cut journal was caught"))
    return EXIT_FAILED if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
