"""`abyss bench redis`: `abyss serve` side by side with `redis-server` on
loopback on this machine, with matching durability, in alternating runs.

Durability (each row names both sides' settings):

- off:      redis `--save "" --appendonly no`;        abyss `--log off`
- everysec: redis `--appendonly yes --appendfsync everysec`;
            abyss `--log file --fsync never` (both write to the OS before
            the reply; redis syncs once a second, abyss leaves it to the OS)
- always:   redis `--appendonly yes --appendfsync always`;
            abyss `--log file --fsync group` (both sync before the reply,
            one sync shared by the commands of one round)

Commands: `redis-benchmark -t set,get,incr -P {1,16} -c {1,8,50}` (as it
ships: SET and GET on one key, INCR on one counter), and the NoSQL study's
inserts (`abyss load`, 1 and 8 clients, 100-byte values, own key ranges).
Each cell runs redis then abyss, repetitions alternating; the table gives
medians of ops/s and p99 and the ratio abyss / redis. Results go to
results/bench-redis/<time>/: redis.csv, redis.md, redis.json.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import engine
from .kvbench import Server

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DURABILITY = {
    "off": (["--save", "", "--appendonly", "no"], ["--log", "off"]),
    "everysec": (["--save", "", "--appendonly", "yes", "--appendfsync", "everysec"],
                 ["--log", "file", "--fsync", "never"]),
    "always": (["--save", "", "--appendonly", "yes", "--appendfsync", "always"], ["--log", "file", "--fsync", "group"]),
}


class Redis:
    """A redis-server on a free port, in its own directory."""

    def __init__(self, work: Path, flags: list[str]) -> None:
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.dir = work / f"redis-{self.port}"
        self.dir.mkdir()
        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
                                      str(self.dir), "--daemonize", "no", *flags],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True,
                             text=True).stdout.strip() != "PONG":
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited {self.proc.returncode}: {self.proc.stderr.read().strip()}")
            if time.monotonic() > deadline:
                self.proc.kill()
                raise RuntimeError("redis-server did not answer within 30 s")
            time.sleep(0.05)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def redis_benchmark(port: int, tests: str, pipeline: int, clients: int, requests: int, timeout: float) -> dict:
    """ops/s and p99 (us) per test, from redis-benchmark --csv."""
    done = subprocess.run(["redis-benchmark", "-p", str(port), "-t", tests, "-P", str(pipeline), "-c", str(clients),
                           "-n", str(requests), "--csv"], capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"redis-benchmark exited {done.returncode}: {done.stderr.strip()}")
    out = {}
    for row in csv.DictReader(io.StringIO(done.stdout)):
        out[row["test"].split(" ")[0]] = (float(row["rps"]), float(row["p99_latency_ms"]) * 1e3)
    return out


def inserts(binary: Path, port: int, clients: int, total: int, timeout: float, work: Path) -> tuple[float, float]:
    out = work / "load.json"
    done = subprocess.run([str(binary), "load", "--port", str(port), "--clients", str(clients), "--total", str(total),
                           "--prefix", f"r{time.monotonic_ns()}-", "--json", str(out)],
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"abyss load exited {done.returncode}: {(done.stderr or done.stdout).strip()}")
    r = json.loads(out.read_text())
    return r["ops_per_s"], r["p99_us"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="abyss bench redis", description=__doc__.split("\n\n")[0])
    p.add_argument("--durability", default="off,everysec,always", help="off, everysec, always (default all)")
    p.add_argument("--pipelines", default="1,16", help="redis-benchmark -P values (default 1,16)")
    p.add_argument("--clients", default="1,8,50", help="redis-benchmark -c values (default 1,8,50)")
    p.add_argument("--requests", type=int, default=100_000,
                   help="redis-benchmark -n per test, at most (default 100000; with durability, where abyss's "
                        "replies wait for a group commit, 2000 x P x c)")
    p.add_argument("--insert-clients", default="1,8", help="abyss load client counts (default 1,8)")
    p.add_argument("--insert-total", type=int, default=100_000, help="inserts per abyss load run (default 100000)")
    p.add_argument("--reps", type=int, default=3, help="repetitions, alternating redis and abyss (default 3)")
    p.add_argument("--cc", default="silo", help="abyss serve's --cc (default silo)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="abyss serve's workers (default: cores)")
    p.add_argument("--timeout", type=float, default=600, help="seconds a benchmark run may take (default 600)")
    p.add_argument("--out", help="results directory (default results/bench-redis/<time>)")
    args = p.parse_args(argv)
    try:
        durs = [d for d in args.durability.split(",") if d]
        pipelines = [int(x) for x in args.pipelines.split(",") if x]
        clients = [int(x) for x in args.clients.split(",") if x]
        insert_clients = [int(x) for x in args.insert_clients.split(",") if x]
    except ValueError:
        print("abyss bench redis: --pipelines, --clients and --insert-clients are comma-separated whole numbers",
              file=sys.stderr)
        return EXIT_USAGE
    if any(d not in DURABILITY for d in durs) or not durs:
        print(f"abyss bench redis: --durability {args.durability}: of {', '.join(DURABILITY)}", file=sys.stderr)
        return EXIT_USAGE
    if min(pipelines + clients + [args.requests, args.reps, args.insert_total, args.threads]) < 1 or \
            (insert_clients and min(insert_clients) < 1):
        print("abyss bench redis: every count must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    for tool in ("redis-server", "redis-benchmark", "redis-cli"):
        if shutil.which(tool) is None:
            print(f"abyss bench redis: {tool} is not installed (./abyss bench redis installs it from Debian)",
                  file=sys.stderr)
            return EXIT_USAGE
    binary = engine.find_binary(sim=False)
    version = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.split()
    redis_version = next((w.split("=")[1] for w in version if w.startswith("v=")), "?")
    out = Path(args.out) if args.out else engine.repo_root() / "results" / "bench-redis" / time.strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="abyss-redis-"))
    samples: dict[tuple, list[tuple[float, float]]] = {}

    def note(key: tuple, value: tuple[float, float]) -> None:
        samples.setdefault(key, []).append(value)

    try:
        for rep in range(args.reps):
            for dur in durs:
                redis_flags, abyss_flags = DURABILITY[dur]
                for server in ("redis", "abyss"):
                    if server == "redis":
                        srv: Redis | Server = Redis(work, redis_flags)
                    else:
                        log = ["--log-dir", str(work / f"abyss-log-{rep}-{dur}")] if "file" in abyss_flags else []
                        srv = Server(binary, work, "abyss", ["--cc", args.cc, "--threads", str(args.threads),
                                                             "--kv-slots", str(1 << 20), *abyss_flags, *log])
                    try:
                        for pl in pipelines:
                            for c in clients:
                                n = args.requests if dur == "off" else min(args.requests, 2000 * pl * c)
                                for test, value in redis_benchmark(srv.port, "set,get,incr", pl, c, n,
                                                                   args.timeout).items():
                                    note((dur, f"{test} -P {pl} -c {c}", server), value)
                        for c in insert_clients:
                            total = args.insert_total if dur == "off" else min(args.insert_total, 2000 * c)
                            note((dur, f"inserts ({c} client{'s' if c > 1 else ''})", server),
                                 inserts(binary, srv.port, c, total, args.timeout, work))
                    finally:
                        srv.stop()
                        for d in work.glob("abyss-log-*"):
                            shutil.rmtree(d, ignore_errors=True)
                print(f"rep {rep + 1}/{args.reps}: {dur} done", file=sys.stderr, flush=True)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"abyss bench redis: {e}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = []
    for dur in durs:
        names = []
        for (d, name, _server) in samples:
            if d == dur and name not in names:
                names.append(name)
        for name in names:
            r = samples.get((dur, name, "redis"), [])
            a = samples.get((dur, name, "abyss"), [])
            if not r or not a:
                continue
            r_ops, a_ops = statistics.median(x[0] for x in r), statistics.median(x[0] for x in a)
            rows.append({"durability": dur, "redis_config": " ".join(DURABILITY[dur][0]) or "-",
                         "abyss_config": " ".join(DURABILITY[dur][1]), "command": name,
                         "redis_ops_per_s": r_ops, "abyss_ops_per_s": a_ops,
                         "redis_p99_us": statistics.median(x[1] for x in r),
                         "abyss_p99_us": statistics.median(x[1] for x in a),
                         "ratio": a_ops / r_ops if r_ops > 0 else 0.0})
    (out / "redis.json").write_text(json.dumps({"args": vars(args), "redis_version": redis_version, "rows": rows},
                                               indent=2) + "\n")
    with (out / "redis.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["durability"])
        w.writeheader()
        w.writerows(rows)
    lines = [f"redis-server {redis_version} against abyss serve --cc {args.cc} --threads {args.threads}, loopback, "
             f"{os.cpu_count()} cores; medians of {args.reps} alternating run(s)", ""]
    for dur in durs:
        redis_flags, abyss_flags = DURABILITY[dur]
        lines += [f"### {dur}: redis `{' '.join(x if x else repr(x) for x in redis_flags)}`, abyss "
                  f"`{' '.join(abyss_flags)}`", "",
                  "| command | redis ops/s | abyss ops/s | abyss / redis | redis p99 us | abyss p99 us |",
                  "|---|---:|---:|---:|---:|---:|"]
        for r in rows:
            if r["durability"] == dur:
                lines.append(f"| {r['command']} | {r['redis_ops_per_s']:.0f} | {r['abyss_ops_per_s']:.0f} | "
                             f"{r['ratio']:.2f} | {r['redis_p99_us']:.0f} | {r['abyss_p99_us']:.0f} |")
        lines.append("")
    (out / "redis.md").write_text("\n".join(lines))
    print("\n".join(lines))
    print(f"results: {out}/redis.md, redis.csv, redis.json")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
