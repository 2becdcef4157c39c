"""`abyss sim speed`: the simulator's host cost, in simulated commits per host second.

Each binary runs the same simulated workload twice, with windows of D and
2D virtual seconds after a warm-up of D: runs are deterministic, so the
second repeats the first and then runs D more, and the differences of
commits and of host seconds are those of that added stretch, without the
load or the start. Binaries alternate pair by pair (`--reps` pairs each),
so a slow spell of a shared machine falls on all of them, and the median
counts. The workload is Fig. 9's (NO_WAIT, YCSB theta 0.6, 1 M rows, 16
accesses, half updates, 128 queries per worker) on the mesh unless
`--cc`, `--theta` or `--rows` say otherwise.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from rich.console import Console
from rich.table import Table

from . import engine
from .cli import UsageParser, _positive_float, _positive_int

EXIT_USAGE = 2


class SpeedError(Exception):
    """A run failed or measured nothing; the message says which."""


def workload_args(cc: str, theta: float, rows: int, cores: int, warmup: float) -> list[str]:
    return ["run", "--cc", cc, "--workload", "ycsb", "--rows", str(rows), "--req-per-txn", "16", "--theta",
            str(theta), "--write-ratio", "0.5", "--sim-cores", str(cores), "--threads", str(cores), "--topology",
            "mesh", "--queries-per-worker", "128", "--warmup", str(warmup)]


def marginal(one: tuple[int, float], two: tuple[int, float]) -> float:
    """Commits per host second of the stretch the second run adds to the first: (commits, host seconds) each."""
    commits, host = two[0] - one[0], two[1] - one[1]
    if commits <= 0 or host <= 0:
        raise SpeedError(f"the longer run added {commits} commits in {host:.3f} host seconds; lengthen --window")
    return commits / host


@dataclass
class Runner:
    """Runs a binary with a window and answers (commits, host seconds)."""

    workdir: Path

    def __call__(self, binary: Path, args: list[str], window: float) -> tuple[int, float]:
        out = self.workdir / "speed.json"
        p = subprocess.run([str(binary), *args, "--duration", str(window), "--json", str(out)], capture_output=True,
                           text=True)
        if p.returncode != 0:
            raise SpeedError(f"{binary} {' '.join(args)} exited {p.returncode}: {p.stderr.strip()[-300:]}")
        report = json.loads(out.read_text())
        out.unlink()
        return int(report["results"]["commits"]), float(report["host_seconds"])


def measure(binaries: list[Path], cores: list[int], window: float, reps: int, cc: str, theta: float, rows: int,
            run: Callable[[Path, list[str], float], tuple[int, float]],
            step: Callable[[], None] = lambda: None) -> dict[tuple[int, Path], list[float]]:
    """Marginal commits per host second, per (cores, binary), each pair of runs in turn."""
    out: dict[tuple[int, Path], list[float]] = {}
    for n in cores:
        args = workload_args(cc, theta, rows, n, window)
        for _ in range(reps):
            for b in binaries:
                out.setdefault((n, b), []).append(marginal(run(b, args, window), run(b, args, 2 * window)))
                step()
    return out


def table(result: dict[tuple[int, Path], list[float]], binaries: list[Path], cores: list[int]) -> Table:
    t = Table(title="simulated commits per host second (median of alternating pairs; each pair's value)")
    t.add_column("cores", justify="right")
    for b in binaries:
        t.add_column(str(b), justify="right")
    if len(binaries) > 1:
        t.add_column("last / first", justify="right")
    for n in cores:
        medians = [statistics.median(result[(n, b)]) for b in binaries]
        cells = [f"{m:,.0f} ({', '.join(f'{v:,.0f}' for v in result[(n, b)])})" for m, b in zip(medians, binaries)]
        if len(binaries) > 1:
            cells.append(f"{medians[-1] / medians[0]:.2f}")
        t.add_row(str(n), *cells)
    return t


def _cores(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        try:
            n = int(part)
        except ValueError:
            n = 0
        if not 1 <= n <= 4095:
            raise argparse.ArgumentTypeError(f"{part!r} is not a core count from 1 to 4095")
        out.append(n)
    return out


def _theta(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a Zipfian theta in [0, 1)")
    return v


def main(argv: list[str] | None = None) -> int:
    ap = UsageParser(prog="abyss sim speed", description=__doc__.split("\n\n")[0])
    ap.add_argument("binaries", nargs="*", type=Path,
                    help="simulated engine binaries to compare (default: build/sim/apps/abyss)")
    ap.add_argument("--cores", type=_cores, default=[64, 256, 1024], help="core counts, e.g. 64,256,1024")
    ap.add_argument("--window", type=_positive_float, default=0.002,
                    help="D: virtual seconds the longer run adds (default 0.002)")
    ap.add_argument("--reps", type=_positive_int, default=2, help="pairs of runs per binary and core count")
    ap.add_argument("--cc", default="no_wait")
    ap.add_argument("--theta", type=_theta, default=0.6)
    ap.add_argument("--rows", type=_positive_int, default=1048576)
    ap.add_argument("--json", type=Path, help="also write every pair's value as JSON here")
    args = ap.parse_args(argv)
    binaries = args.binaries or [engine.find_binary(sim=True)]
    for b in binaries:
        if not b.is_file():
            ap.error(f"{b}: no such binary (./abyss build sim)")
    if args.json is not None and not args.json.parent.is_dir():
        ap.error(f"--json {args.json}: its directory does not exist")
    schemes = [s["name"] for s in engine.describe()["schemes"]]
    if args.cc not in schemes:
        ap.error(f"--cc {args.cc!r} is not one of {', '.join(schemes)}")
    console = Console(stderr=True)
    total = len(args.cores) * args.reps * len(binaries)
    with tempfile.TemporaryDirectory(prefix="abyss-speed-") as tmp:
        done = [0]

        def step() -> None:
            done[0] += 1
            console.print(f"  pair {done[0]} of {total}")

        try:
            result = measure(binaries, args.cores, args.window, args.reps, args.cc, args.theta, args.rows,
                             Runner(Path(tmp)), step)
        except SpeedError as e:
            print(f"abyss sim speed: {e}", file=sys.stderr)
            return 1
    Console().print(table(result, binaries, args.cores))
    if args.json:
        args.json.write_text(json.dumps([{"cores": n, "binary": str(b), "commits_per_host_second": v}
                                         for (n, b), v in result.items()], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
