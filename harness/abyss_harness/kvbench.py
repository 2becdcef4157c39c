"""`abyss bench kv`: the NoSQL scaling study's experiment (Figures 1 and 2)
on `abyss serve`. Clients each insert their own key range of 100-byte
random values (`abyss load`) until a total, at 1, 2, 4, 8 and 16 clients, in
three modes:

- single: one server, conventional: commands contend under --cc in the
  order read (--schedule fifo), one key-space partition, one shared journal;
- instances: one server per client, each with one worker and its own log:
  no client meets another (the study's ideal-scaling baseline);
- partitioned: one server with the study's techniques on: per-worker
  journals, --keyspace-partitions, contention-aware scheduling, and weak
  writes dropped when their partition is claimed (--semantic-drop).

A fourth series, conflicting, is the partitioned server with one key-space
partition: every two clients' writes meet, and the share of weak writes it
drops is the study's "dropped operations under conflicting clients".

`--ladder` runs the study's ladder instead, one technique added at a time
from MongoDB's design (each a mode), beside the N-instance baseline:

- baseline: a thread per connection (--connection-threads per-connection),
  one shared journal, one key-space partition, commands run as read, and
  MongoDB's hierarchical lock manager (--locking hierarchical);
- pool: + the static pool of --server-threads workers in place of the
  threads per connection;
- journal: + a journal per worker (the study's per-client journal);
- partitions: + --keyspace-partitions;
- scheduling: + contention-aware scheduling;
- drop: + semantic drop of weak writes;
- fast-path: + the wait/signal fast path in place of the lock manager
  (--locking wait-signal).

Runs alternate between the modes within each repetition, and the table
reports medians. Server CPU is the servers' user and system time over the
load's wall time (in cores). Results go to results/bench-kv/<time>/:
kv.csv, kv.json, kv.png.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from . import engine

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
MODES = ("single", "instances", "partitioned", "conflicting")
LADDER = ("baseline", "pool", "journal", "partitions", "scheduling", "drop", "fast-path")


@dataclass(frozen=True)
class Setup:
    """How a mode's servers run (docs/server.md)."""
    journal: str  # --journal, with --log file
    partitioned: bool  # --keyspace-partitions N, else 1
    scheduled: bool  # --schedule contention-aware, else fifo
    drop: bool  # --semantic-drop on, with weak writes
    locking: str  # --locking
    threads: str = "pool"  # --connection-threads; per-connection: a slot (--threads) for each client


SETUPS = {
    "single": Setup("shared", False, False, False, "none"),
    "instances": Setup("shared", False, False, False, "none"),
    "partitioned": Setup("per-worker", True, True, True, "none"),
    "conflicting": Setup("per-worker", False, True, True, "none"),
    "baseline": Setup("shared", False, False, False, "hierarchical", "per-connection"),
    "pool": Setup("shared", False, False, False, "hierarchical"),
    "journal": Setup("per-worker", False, False, False, "hierarchical"),
    "partitions": Setup("per-worker", True, False, False, "hierarchical"),
    "scheduling": Setup("per-worker", True, True, False, "hierarchical"),
    "drop": Setup("per-worker", True, True, True, "hierarchical"),
    "fast-path": Setup("per-worker", True, True, True, "wait-signal"),
}
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Point:
    mode: str
    clients: int
    rep: int
    ops_per_s: float
    p50_us: float
    p99_us: float
    server_cpu: float  # cores
    dropped: int
    sets: int


class Server:
    """One `abyss serve` on a port the system picks, with its log in `log_dir`."""

    def __init__(self, binary: Path, work: Path, name: str, flags: list[str]) -> None:
        self.port_file = work / f"{name}.port"
        self.port_file.unlink(missing_ok=True)
        self.proc = subprocess.Popen([str(binary), "serve", "--port", "0", "--port-file", str(self.port_file), *flags],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not self.port_file.exists() or not self.port_file.read_text().strip():
            if self.proc.poll() is not None:
                raise RuntimeError(f"abyss serve exited {self.proc.returncode}: {self.proc.stderr.read().strip()}")
            if time.monotonic() > deadline:
                self.proc.kill()
                raise RuntimeError("abyss serve did not listen within 60 s")
            time.sleep(0.01)
        self.port = int(self.port_file.read_text())

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            raise RuntimeError("abyss serve did not stop within 60 s of SIGTERM") from None
        if self.proc.returncode != 0:
            raise RuntimeError(f"abyss serve exited {self.proc.returncode}: {err.strip()}")


def server_flags(mode: str, args: argparse.Namespace, slots: int, threads: int, log_dir: Path) -> list[str]:
    flags = ["--cc", args.cc, "--threads", str(threads), "--kv-slots", str(slots), "--kv-max-value",
             str(max(args.value_size, 1)), "--connection-threads", SETUPS[mode].threads]
    if args.log == "file":
        flags += ["--log", "file", "--log-dir", str(log_dir), "--fsync", args.fsync, "--group-commit-us",
                  str(args.group_commit_us)]
    setup = SETUPS[mode]
    flags += ["--keyspace-partitions", str(args.partitions if setup.partitioned else 1), "--schedule",
              "contention-aware" if setup.scheduled else "fifo", "--locking", setup.locking]
    if setup.drop:
        flags += ["--semantic-drop", "on", "--consistency", "weak"]
    if args.log == "file":
        # An instance has one worker, so its journal is its own either way.
        flags += ["--journal", setup.journal]
    return flags


def measure(binary: Path, work: Path, mode: str, clients: int, rep: int, args: argparse.Namespace) -> Point:
    servers_n = clients if mode == "instances" else 1
    if mode == "instances":
        threads = 1
    elif SETUPS[mode].threads == "per-connection":
        threads = clients
    else:
        threads = args.server_threads
    # Open addressing stays short while the table is at most a quarter full.
    per_server = args.total // servers_n + 1
    # Each partition holds at least twice a probe's 32 slots (--kv-probe).
    slots = max(1024, 4 * per_server, 64 * args.partitions)
    slots -= slots % args.partitions
    servers: list[Server] = []
    try:
        for s in range(servers_n):
            log_dir = work / f"log-{mode}-{clients}-{rep}-{s}"
            servers.append(Server(binary, work, f"{mode}-{s}", server_flags(mode, args, slots, threads, log_dir)))
        out = work / "load.json"
        cpu_before = sum(s.cpu_seconds() for s in servers)
        argv = [str(binary), "load", "--port", ",".join(str(s.port) for s in servers), "--clients", str(clients),
                "--total", str(args.total), "--value-size", str(args.value_size), "--pipeline", str(args.pipeline),
                "--seed", str(rep + 1), "--json", str(out)]
        if SETUPS[mode].drop:
            argv.append("--weak")
        done = subprocess.run(argv, capture_output=True, text=True, timeout=args.timeout)
        cpu = sum(s.cpu_seconds() for s in servers) - cpu_before
        if done.returncode != 0:
            raise RuntimeError(f"abyss load exited {done.returncode}: {(done.stderr or done.stdout).strip()}")
        r = json.loads(out.read_text())
    finally:
        for s in servers:
            if s.proc.poll() is None:
                s.stop()
        for d in work.glob("log-*"):
            shutil.rmtree(d, ignore_errors=True)
    return Point(mode, clients, rep, r["ops_per_s"], r["p50_us"], r["p99_us"],
                 cpu / r["seconds"] if r["seconds"] > 0 else 0.0, r["dropped"], r["sets"])


def summarize(points: list[Point], modes: list[str], clients: list[int]) -> list[dict[str, object]]:
    rows = []
    for n in clients:
        for m in modes:
            ps = [p for p in points if p.mode == m and p.clients == n]
            if not ps:
                continue
            rows.append({
                "clients": n, "mode": m, "runs": len(ps),
                "ops_per_s": statistics.median(p.ops_per_s for p in ps),
                "p50_us": statistics.median(p.p50_us for p in ps),
                "p99_us": statistics.median(p.p99_us for p in ps),
                "server_cpu": statistics.median(p.server_cpu for p in ps),
                "dropped_pct": 100.0 * sum(p.dropped for p in ps) / max(1, sum(p.sets for p in ps)),
            })
    return rows


def plot(rows: list[dict[str, object]], path: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 5.5))
    styles = {"single": ("o-", "one server"), "instances": ("s--", "N instances (ideal)"),
              "partitioned": ("^-", "one server, partitioned + scheduled"),
              "conflicting": ("x:", "partitioned, one partition (conflicting)"),
              "baseline": ("o-", "baseline: thread per connection, shared journal, hierarchical locks"),
              "pool": ("p-", "+ static thread pool"),
              "journal": ("v-", "+ per-worker journal"), "partitions": ("<-", "+ key-space partitions"),
              "scheduling": (">-", "+ contention-aware scheduling"), "drop": ("D-", "+ semantic drop"),
              "fast-path": ("*-", "+ wait/signal fast path")}
    for mode, (style, label) in styles.items():
        pts = [(r["clients"], r["ops_per_s"]) for r in rows if r["mode"] == mode]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] / 1e3 for p in pts], style, label=label)
    ax.set_xscale("log", base=2)
    xs = sorted({int(r["clients"]) for r in rows})
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_xlabel("clients")
    ax.set_ylabel("inserts/s (thousands)")
    ax.set_title(title, fontsize=9)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    # Below the axes: the ladder's eight lines would hide the data inside them.
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def table(rows: list[dict[str, object]]) -> str:
    """The summary as text: a row per clients and mode, with each mode's
    throughput over the N-instance baseline's at the same clients."""
    lines = [f"{'clients':>7} {'mode':11} {'ops/s':>10} {'p50 us':>8} {'p99 us':>8} {'srv cpu':>7} {'dropped':>8} "
             f"{'of inst.':>8}"]
    for r in rows:
        inst = next((x for x in rows if x["clients"] == r["clients"] and x["mode"] == "instances"), None)
        frac = f"{r['ops_per_s'] / inst['ops_per_s']:.2f}" if inst and inst["ops_per_s"] > 0 else "-"
        lines.append(f"{r['clients']:>7} {r['mode']:11} {r['ops_per_s']:>10.0f} {r['p50_us']:>8.1f} "
                     f"{r['p99_us']:>8.1f} {r['server_cpu']:>7.2f} {r['dropped_pct']:>7.2f}% {frac:>8}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="abyss bench kv", description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", help="client counts, comma-separated (default 1,2,4,8,16; 1,8,32 with --ladder)")
    p.add_argument("--modes", help=f"comma-separated, of {', '.join(SETUPS)} (default {', '.join(MODES)}; "
                                   f"with --ladder, {', '.join(LADDER)} and instances)")
    p.add_argument("--ladder", action="store_true",
                   help="the study's ladder: each technique added in turn to MongoDB's design, beside N instances")
    p.add_argument("--total", type=int, default=200_000,
                   help="inserts per point over all clients (default 200000; the study's 50 million, scaled to "
                        "a 2-core machine's minutes)")
    p.add_argument("--value-size", type=int, default=100, help="bytes per value (default 100, the study's)")
    p.add_argument("--pipeline", type=int, default=1, help="inserts a client sends before reading replies (default 1)")
    p.add_argument("--reps", type=int, default=3, help="repetitions, the modes alternating within each (default 3)")
    p.add_argument("--cc", default="silo", help="the servers' --cc (default silo)")
    p.add_argument("--server-threads", type=int, default=os.cpu_count() or 1,
                   help="workers of a single or partitioned server (default: the cores)")
    p.add_argument("--partitions", type=int, default=64, help="--keyspace-partitions of the partitioned mode (default 64)")
    p.add_argument("--log", choices=("file", "off"),
                   help="the servers' --log (default off: the CPU path alone; with file, every reply waits for "
                        "its group commit, --group-commit-us, and the journals' partitioning is measured too; "
                        "file with --ladder, whose second step is the journal's)")
    p.add_argument("--group-commit-us", type=int, default=1000, help="the servers' --group-commit-us (default 1000)")
    p.add_argument("--fsync", choices=("always", "group", "never"), default="never",
                   help="the servers' --fsync (default never: journals written to the OS at each group commit)")
    p.add_argument("--timeout", type=float, default=600, help="seconds a point may take (default 600)")
    p.add_argument("--out", help="results directory (default results/bench-kv/<time>)")
    args = p.parse_args(argv)
    if args.log is None:
        args.log = "file" if args.ladder else "off"
    if args.clients is None:
        args.clients = "1,8,32" if args.ladder else "1,2,4,8,16"
    if args.modes is None:
        args.modes = ",".join((*LADDER, "instances") if args.ladder else MODES)
    try:
        clients = [int(c) for c in args.clients.split(",") if c]
    except ValueError:
        print(f"abyss bench kv: --clients {args.clients}: comma-separated whole numbers", file=sys.stderr)
        return EXIT_USAGE
    modes = [m for m in args.modes.split(",") if m]
    bad = [m for m in modes if m not in SETUPS]
    if bad:
        print(f"abyss bench kv: --modes {bad[0]}: one of {', '.join(SETUPS)}", file=sys.stderr)
        return EXIT_USAGE
    if (not clients or min(clients) < 1 or max(clients) > 1024 or args.total < max(clients) or args.reps < 1
            or not 0 <= args.value_size <= 1 << 20 or args.pipeline < 1 or args.server_threads < 1
            or args.partitions < 1):
        print("abyss bench kv: --clients from 1 to 1024, --total at least the most clients, --reps at least 1, "
              "--value-size from 0 to 1048576, --pipeline, --server-threads and --partitions at least 1",
              file=sys.stderr)
        return EXIT_USAGE
    binary = engine.find_binary(sim=False)
    out = Path(args.out) if args.out else engine.repo_root() / "results" / "bench-kv" / time.strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="abyss-kv-"))
    points: list[Point] = []
    total_points = args.reps * len(clients) * len(modes)
    try:
        for rep in range(args.reps):
            for n in clients:
                for m in modes:
                    pt = measure(binary, work, m, n, rep, args)
                    points.append(pt)
                    print(f"[{len(points)}/{total_points}] rep {rep + 1} {m:11} {n:3} client(s): "
                          f"{pt.ops_per_s:10.0f} ops/s  p99 {pt.p99_us:8.1f} us  server cpu {pt.server_cpu:4.2f}"
                          + (f"  dropped {100.0 * pt.dropped / max(1, pt.sets):.2f}%" if pt.dropped else ""),
                          file=sys.stderr, flush=True)
    except RuntimeError as e:
        print(f"abyss bench kv: {e}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = summarize(points, modes, clients)
    (out / "kv.json").write_text(json.dumps({"args": vars(args), "points": [asdict(p) for p in points],
                                             "summary": rows}, indent=2) + "\n")
    with (out / "kv.csv").open("w") as f:
        f.write("clients,mode,runs,ops_per_s,p50_us,p99_us,server_cpu,dropped_pct\n")
        for r in rows:
            f.write(f"{r['clients']},{r['mode']},{r['runs']},{r['ops_per_s']:.0f},{r['p50_us']:.1f},"
                    f"{r['p99_us']:.1f},{r['server_cpu']:.2f},{r['dropped_pct']:.2f}\n")
    title = (f"abyss serve --cc {args.cc}, {args.total} inserts of {args.value_size} B, log {args.log}"
             f"{' fsync ' + args.fsync if args.log == 'file' else ''}, {os.cpu_count()} cores")
    plot(rows, out / "kv.png", title)
    print(table(rows))
    print(f"results: {out}/kv.csv, kv.json, kv.png (medians of {args.reps} run(s); 'of inst.' = ops/s over the "
          f"N-instance baseline's)")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
