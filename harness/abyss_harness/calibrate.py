"""`abyss sim calibrate`: this machine as the simulator's `host` topology.

The simulated machine charges a core for its local work per engine event
(each platform call, each byte of row data, each atomic read-modify-write)
and for its memory traffic from a cache
model (src/platform/sim/topology.h). Calibration measures both on this
machine and writes them into src/platform/sim/topologies/host.toml:

1. `abyss probe` (native) measures the core clock, the cost of reading the
   cycle counter and of an uncontended atomic read-modify-write, the
   load-to-use latency of each cache level and of memory, and one core's
   streaming bandwidth: the topology's latencies, `ghz`, `clock_cycles`,
   `rmw_cycles`, `memory_gbps` and `line_transfer_cycles`.
2. Every scheme runs every calibration workload natively (each point
   `--reps` times, the repetitions interleaved so that a slow spell of a
   shared machine spreads over all points, and the median kept), and on one
   simulated core of the measured topology with no compute costs, every
   access charged what an independent read of its level costs.
   The native time per commit less the simulated one is the local work the
   simulation lacks; the simulated run counts the engine events behind it
   (`sim_counters`). The simulated machine's counters cover the whole run,
   warm-up included, so it runs twice with the same warm-up and windows of
   one and two lengths: runs are deterministic, so the second repeats the
   first up to its end, and the differences of commits and of events are
   those of the added window, with warm caches as in the native run.
   A least-squares fit with non-negative costs, over all schemes and
   workloads at once and weighted so each run counts alike, gives one cost
   per event kind, and the overlap: the share of what a dependent read adds
   to an independent one's latency that an access waits on average. A real
   core overlaps reads that do not wait on each other and the simulated
   core does not, so each level's latency is fitted between the probe's two
   measurements of it, by one share for all levels.
3. With the fitted costs, every scheme and workload runs natively and
   simulated at 1 and 2 threads (cores), and a table compares throughput.

The costs are per event, not per scheme or workload: one set must serve
every run, which is what makes a simulated run at 1024 cores mean anything.
The mesh and numa topologies take them too (`[compute] like = "host"`).
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Callable, Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from . import engine
from .cli import UsageParser, _positive_float, _positive_int, choice_list

EXIT_USAGE = 2

#: The event kinds the fit prices, as (sim_counters key, topology key). An
#: atomic read-modify-write (`rmws`) is not fitted: the probe measures it.
EVENTS: tuple[tuple[str, str], ...] = (
    ("calls", "per_call_cycles"),
    ("bytes", "per_byte_cycles"),
)

#: What the simulated core charged its accesses, as (sim_counters key, probe
#: level whose reads it was charged like).
CHARGES: tuple[tuple[str, str], ...] = (
    ("l1_hits", "l1"),
    ("l2_hits", "l2"),
    ("shared_hits", "l3"),
    ("memory_reads", "memory"),
)

#: The calibration workloads: the issue's three (YCSB uniform and skewed, TPC-C).
WORKLOADS: dict[str, list[str]] = {
    "ycsb-theta0": ["--workload", "ycsb", "--theta", "0", "--rows", "1048576"],
    "ycsb-theta0.9": ["--workload", "ycsb", "--theta", "0.9", "--rows", "1048576"],
    "tpcc-4wh": ["--workload", "tpcc", "--warehouses", "4"],
}

#: Working sets of the latency probe (abyss probe): L1, L2, last-level cache, memory.
PROBE_LEVELS = {"l1": 16 << 10, "l2": 256 << 10, "l3": 2 << 20, "memory": 512 << 20}

#: How far a simulated throughput may be from the native one and still agree.
TOLERANCE = 0.15


class CalibrationError(Exception):
    """A run failed or an input was unusable; the message says which."""


# ---- the probe and the topology file ----


@dataclass
class Probe:
    core_ghz: float
    clock_read_ns: float
    rmw_ns: float
    latency_ns: dict[int, float]      # working-set bytes -> ns a read, each read waiting for the one before
    independent_ns: float
    stream_gbps: float
    free_ns: dict[int, float] = field(default_factory=dict)   # ... reads waiting for none: overlapped

    def read_ns(self, level: str, overlap: float) -> float:
        """What a read of `level` costs a core that hides all but `overlap` of
        the difference between a dependent read and an independent one."""
        free = self.free_ns.get(PROBE_LEVELS[level], self.level_ns(level))
        return free + overlap * (self.level_ns(level) - free)

    def shared_bytes(self) -> int:
        """The last-level cache this machine's cores get: the largest working set
        whose reads stay nearer the cache's latency than memory's (on a shared
        host, less than the part's nominal size)."""
        l3, mem = self.level_ns("l3"), self.level_ns("memory")
        fits = [b for b, ns in self.latency_ns.items() if PROBE_LEVELS["l3"] <= b < PROBE_LEVELS["memory"]
                and ns <= (l3 + mem) / 2]
        return max(fits, default=PROBE_LEVELS["l3"])

    def level_ns(self, level: str) -> float:
        want = PROBE_LEVELS[level]
        if want not in self.latency_ns:
            raise CalibrationError(f"the probe did not measure a {want >> 10} KiB working set")
        return self.latency_ns[want]


def read_probe(text: str) -> Probe:
    d = json.loads(text)
    sets = d["latency_ns"]
    if any("independent_ns" not in p for p in sets):
        raise KeyError("independent_ns of every working set (a probe of this build measures it)")
    return Probe(float(d["core_ghz"]), float(d["clock_read_ns"]), float(d["rmw_ns"]),
                 {int(p["bytes"]): float(p["ns"]) for p in sets},
                 float(d["independent_ns"]), float(d["stream_gbps"]),
                 {int(p["bytes"]): float(p["independent_ns"]) for p in sets})


def private_caches(sysfs: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> list[tuple[int, int]]:
    """(bytes, ways) of this machine's first two data cache levels, as the
    kernel lists them (what lscpu reads); a 32 KiB and a 512 KiB 8-way level
    where it does not."""
    found: dict[int, tuple[int, int]] = {}
    try:
        for index in sorted(sysfs.glob("index*")):
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            if kind not in ("Data", "Unified") or level > 2:
                continue
            size = (index / "size").read_text().strip()
            factor = {"K": 1 << 10, "M": 1 << 20}.get(size[-1:], 1)
            found[level] = (int(size.rstrip("KM")) * factor, int((index / "ways_of_associativity").read_text()))
    except (OSError, ValueError):
        found = {}
    if set(found) != {1, 2}:
        return [(32 << 10, 8), (512 << 10, 8)]
    return [found[1], found[2]]


def topology_text(probe: Probe, costs: dict[str, float], overlap: float, when: str,
                  caches: list[tuple[int, int]] | None = None) -> str:
    """The host topology file for a probe, per-event costs (cycles), and the
    share of a dependent read's extra latency the core does not hide."""
    ghz = probe.core_ghz
    cyc = {lvl: probe.read_ns(lvl, overlap) * ghz for lvl in ("l1", "l2", "l3")}
    (l1_bytes, l1_ways), (l2_bytes, l2_ways) = caches or private_caches()
    line_cycles = 64 / (probe.stream_gbps / ghz)
    span = ", ".join(f"{lvl} {probe.read_ns(lvl, 0):.2f}-{probe.level_ns(lvl):.1f}" for lvl in PROBE_LEVELS)
    lines = [
        "# This machine, as one socket. Written by `abyss sim calibrate` on " + when + "",
        "# (docs/many-core.md, \"Calibration\"): the clock, latencies and bandwidth",
        "# measured by `abyss probe`; the per-call and per-byte costs, and how much of",
        "# a dependent read's latency an access waits, fitted to native runs of every",
        "# scheme. Private cache sizes are the machine's (lscpu).",
        f"# Each latency: the independent read's plus {overlap:.3f} of what a dependent",
        "# one adds; in ns, independent-dependent:",
        f"# {span}.",
    ]
    lines += [
        'name = "host"',
        'layout = "numa"',
        f"ghz = {ghz:.3f}",
        f"line_transfer_cycles = {line_cycles:.2f}   # 64 bytes at one core's stream bandwidth",
        "",
        "[[private]]                    # L1-D",
        f"bytes = {l1_bytes}",
        f"ways = {l1_ways}",
        f"latency_cycles = {cyc['l1']:.2f}",
        "",
        "[[private]]                    # L2",
        f"bytes = {l2_bytes}",
        f"ways = {l2_ways}",
        f"latency_cycles = {cyc['l2']:.2f}",
        "",
        "[shared]                       # L3: what the probe's reads found of it",
        f"bytes = {probe.shared_bytes()}",
        "ways = 16",
        f"latency_cycles = {cyc['l3']:.2f}",
        "",
        "[numa]",
        "cores_per_socket = 64",
        "sockets_per_board = 1",
        f"memory_ns = [{probe.read_ns('memory', overlap):.1f}]",
        f"memory_gbps = [{probe.stream_gbps:.1f}]",
        "",
        "[compute]",
    ]
    for _, key in EVENTS:
        lines.append(f"{key} = {costs.get(key, 0.0):.3f}")
    lines += [f"rmw_cycles = {probe.rmw_ns * ghz:.1f}   # measured",
              f"clock_cycles = {max(1.0, probe.clock_read_ns * ghz):.1f}   # measured",
              "pause_cycles = 40", "yield_ns = 1000", ""]
    return "\n".join(lines)


# ---- the fit ----


def _solve(rows: Sequence[Sequence[float]], rhs: Sequence[float]) -> list[float] | None:
    """Least squares by the normal equations (a few unknowns); None if singular."""
    n = len(rows[0])
    a = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    b = [sum(r[i] * y for r, y in zip(rows, rhs)) for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-300:
            return None
        a[col], a[pivot] = a[pivot], a[col]
        b[col], b[pivot] = b[pivot], b[col]
        for r in range(n):
            if r != col:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
                b[r] -= f * b[col]
    return [b[i] / a[i][i] for i in range(n)]


def nnls(rows: Sequence[Sequence[float]], rhs: Sequence[float]) -> list[float]:
    """min |rows x - rhs| subject to x >= 0, exactly, by trying every support.

    With four unknowns that is sixteen small solves: simpler than an active-set
    method and exact.
    """
    n = len(rows[0])
    best: tuple[float, list[float]] = (sum(y * y for y in rhs), [0.0] * n)
    for k in range(1, n + 1):
        for support in itertools.combinations(range(n), k):
            sub = [[r[i] for i in support] for r in rows]
            x = _solve(sub, rhs)
            if x is None or any(v < 0 for v in x):
                continue
            full = [0.0] * n
            for i, v in zip(support, x):
                full[i] = v
            resid = sum((sum(r[i] * full[i] for i in range(n)) - y) ** 2 for r, y in zip(rows, rhs))
            if resid < best[0] - 1e-12 * max(1.0, best[0]):
                best = (resid, full)
    return best[1]


@dataclass
class Sample:
    """One scheme and workload: native ns per commit, the costless simulation's, its events per commit."""

    scheme: str
    workload: str
    native_ns: float
    sim_ns: float
    events: dict[str, float]


def dependent_extra_ns(events: dict[str, float], probe: Probe) -> float:
    """Nanoseconds the accesses in `events` would add if each waited a
    dependent read's latency rather than an independent one's."""
    return sum(events.get(k, 0.0) * (probe.read_ns(level, 1) - probe.read_ns(level, 0)) for k, level in CHARGES)


def fit_costs(samples: Sequence[Sample], probe: Probe) -> tuple[dict[str, float], float]:
    """Per-event costs in cycles, and the overlap: the share (0 to 1) of the
    latency a dependent read adds over an independent one that the core
    waits: native - simulated time per commit (the simulated machine's
    accesses charged at independent reads' latencies), explained by events.

    Each equation is divided by its native time, so a fast workload weighs as
    much as a slow one (the fit minimises relative errors).
    """
    if not samples:
        raise CalibrationError("nothing to fit: no scheme and workload ran")
    rows, rhs = [], []
    for s in samples:
        w = 1.0 / s.native_ns
        rows.append([s.events[k] / probe.core_ghz * w for k, _ in EVENTS] + [dependent_extra_ns(s.events, probe) * w])
        rhs.append((s.native_ns - s.sim_ns) * w)
    x = nnls(rows, rhs)
    if x[-1] > 1:
        # No access waits longer than a dependent read: fix it there and fit the rest.
        rhs = [y - r[-1] for r, y in zip(rows, rhs)]
        x = nnls([r[:-1] for r in rows], rhs) + [1.0]
    return {key: v for (_, key), v in zip(EVENTS, x)}, x[-1]


# ---- running the engine ----


@dataclass
class Runner:
    native: Path
    sim: Path
    duration: float
    sim_duration: float
    sim_warmup: float
    workdir: Path
    log: Callable[[str], None] = print
    runs: int = 0

    def _run(self, argv: list[str]) -> dict:
        self.runs += 1
        out = self.workdir / f"run-{self.runs}.json"
        p = subprocess.run([*argv, "--json", str(out)], capture_output=True, text=True)
        if p.returncode != 0:
            raise CalibrationError(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.strip()[-400:]}")
        report = json.loads(out.read_text())
        out.unlink()
        return report

    def native_throughput(self, scheme: str, workload: str, threads: int) -> float:
        return self._run([str(self.native), "run", "--cc", scheme, *WORKLOADS[workload], "--threads", str(threads),
                          "--duration", str(self.duration), "--warmup", "0.1"])["results"]["throughput"]

    def sim_run(self, scheme: str, workload: str, cores: int, topology: Path, windows: float = 1) -> dict:
        return self._run([str(self.sim), "run", "--cc", scheme, *WORKLOADS[workload], "--sim-cores", str(cores),
                          "--topology", str(topology), "--duration", str(self.sim_duration * windows), "--warmup",
                          str(self.sim_warmup)])


def native_per_commit(throughput: float) -> float:
    """Nanoseconds per commit of one thread committing `throughput` a second."""
    if throughput <= 0:
        raise CalibrationError("a native calibration run committed nothing; lengthen --duration")
    return 1e9 / throughput


def sim_per_commit(one: dict, two: dict) -> tuple[float, dict[str, float]]:
    """Virtual ns and events per commit of the window `two` adds to `one` (same warm-up, one core)."""
    commits = two["results"]["commits"] - one["results"]["commits"]
    if commits <= 0:
        raise CalibrationError("a simulated calibration run committed nothing more in a longer window; "
                               "lengthen --sim-duration")
    ns = (two["results"]["seconds"] - one["results"]["seconds"]) * 1e9 / commits
    c1, c2 = one.get("sim_counters", {}), two.get("sim_counters", {})
    keys = [k for k, _ in EVENTS] + [k for k, _ in CHARGES]
    return ns, {k: (c2.get(k, 0) - c1.get(k, 0)) / commits for k in keys}


# ---- the command ----


@dataclass
class Row:
    scheme: str
    workload: str
    threads: int
    native: float
    sim: float

    @property
    def ratio(self) -> float:
        return self.sim / self.native if self.native > 0 else math.inf


@dataclass
class Result:
    probe: Probe
    costs: dict[str, float]
    overlap: float
    rows: list[Row] = field(default_factory=list)
    reps: int = 1

    def within(self) -> int:
        return sum(1 for r in self.rows if abs(r.ratio - 1) <= TOLERANCE)


def calibrate(runner: Runner, probe: Probe, schemes: list[str], workloads: list[str], threads: list[int],
              out: Path, progress: Progress | None = None, reps: int = 1) -> Result:
    when = date.today().isoformat()
    base = runner.workdir / "host-uncalibrated.toml"
    # The costless machine's accesses take the independent reads' time; the fit adds what they lack.
    base.write_text(topology_text(probe, {}, 0.0, when))
    pairs = [(s, w) for s in schemes for w in workloads]
    fit_threads = sorted(set(threads) | {1})
    points = [(s, w, t) for s, w in pairs for t in fit_threads]
    total = reps * len(points) + 2 * len(pairs) + len(pairs) * len(threads)
    task = progress.add_task("calibrating", total=total) if progress else None

    def step() -> None:
        if progress is not None and task is not None:
            progress.advance(task)

    # Every point once, then every point again: repetitions spread over the whole measurement.
    runs: dict[tuple[str, str, int], list[float]] = {p: [] for p in points}
    for _ in range(reps):
        for p in points:
            runs[p].append(runner.native_throughput(*p))
            step()
    native_tput = {p: statistics.median(v) for p, v in runs.items()}

    samples = []
    for scheme, wl in pairs:
        sim_ns, events = sim_per_commit(runner.sim_run(scheme, wl, 1, base), runner.sim_run(scheme, wl, 1, base, 2))
        step()
        step()
        samples.append(Sample(scheme, wl, native_per_commit(native_tput[(scheme, wl, 1)]), sim_ns, events))
    costs, overlap = fit_costs(samples, probe)
    out.write_text(topology_text(probe, costs, overlap, when))

    result = Result(probe, costs, overlap, reps=reps)
    for scheme, wl in pairs:
        for t in threads:
            sim = runner.sim_run(scheme, wl, t, out)["results"]["throughput"]
            step()
            result.rows.append(Row(scheme, wl, t, native_tput[(scheme, wl, t)], sim))
    return result


def table(result: Result) -> Table:
    t = Table(title=f"host topology against this machine: txn/s, simulated / native (median of {result.reps}); "
                    f"within ±{TOLERANCE:.0%}: {result.within()} of {len(result.rows)}")
    for col in ("scheme", "workload", "threads", "native", "simulated", "ratio", ""):
        t.add_column(col, justify="left" if col in ("scheme", "workload", "") else "right")
    for r in result.rows:
        ok = abs(r.ratio - 1) <= TOLERANCE
        t.add_row(r.scheme, r.workload, str(r.threads), f"{r.native:,.0f}", f"{r.sim:,.0f}", f"{r.ratio:.2f}",
                  "" if ok else "outside")
    return t


def main(argv: list[str] | None = None) -> int:
    root = engine.repo_root()
    schemes_all = [s["name"] for s in engine.describe()["schemes"]]
    ap = UsageParser(prog="abyss sim calibrate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=root / "src" / "platform" / "sim" / "topologies" / "host.toml",
                    help="the topology file to write (default: the shipped host.toml)")
    ap.add_argument("--schemes", type=lambda t: choice_list(t, schemes_all, "--schemes"), default=schemes_all)
    ap.add_argument("--workloads", type=lambda t: choice_list(t, list(WORKLOADS), "--workloads"), default=list(WORKLOADS))
    ap.add_argument("--threads", type=lambda t: [int(x) for x in choice_list(t, ["1", "2"], "--threads")], default=[1, 2])
    ap.add_argument("--duration", type=_positive_float, default=0.5, help="native window, seconds (default 0.5)")
    ap.add_argument("--reps", type=_positive_int, default=3,
                    help="native runs per point, interleaved; the median counts (default 3)")
    ap.add_argument("--sim-duration", type=_positive_float, default=0.05,
                    help="simulated window, virtual seconds (default 0.05)")
    ap.add_argument("--sim-warmup", type=_positive_float, default=0.1,
                    help="simulated warm-up, virtual seconds (default 0.1: the caches fill as a native run's do)")
    ap.add_argument("--probe", type=Path, help="a saved `abyss probe --json` instead of probing now")
    ap.add_argument("--json", type=Path, help="also write the costs and the table as JSON here")
    args = ap.parse_args(argv)
    for path in (args.out, args.json):
        if path is not None and not path.parent.is_dir():
            ap.error(f"{path}: its directory does not exist")

    native = engine.find_binary()
    sim = root / "build" / "sim" / "apps" / "abyss"
    for b in (native, sim):
        if not b.is_file():
            print(f"abyss sim calibrate: {b} not found (./abyss build release; ./abyss build sim)", file=sys.stderr)
            return EXIT_USAGE
    console = Console(stderr=True)
    try:
        if args.probe:
            probe = read_probe(args.probe.read_text())
        else:
            console.print("probing this machine (abyss probe) ...")
            p = subprocess.run([str(native), "probe", "--json"], capture_output=True, text=True)
            if p.returncode != 0:
                raise CalibrationError(f"abyss probe exited {p.returncode}: {p.stderr.strip()}")
            probe = read_probe(p.stdout)
    except (OSError, ValueError, KeyError) as e:
        print(f"abyss sim calibrate: the probe's output: {e}", file=sys.stderr)
        return EXIT_USAGE
    except CalibrationError as e:
        print(f"abyss sim calibrate: {e}", file=sys.stderr)
        return 1
    console.print(f"core {probe.core_ghz:.2f} GHz; latency " +
                  ", ".join(f"{lvl} {probe.level_ns(lvl):.1f} ns" for lvl in PROBE_LEVELS) +
                  f"; stream {probe.stream_gbps:.1f} GB/s")
    with tempfile.TemporaryDirectory(prefix="abyss-calibrate-") as tmp:
        runner = Runner(native, sim, args.duration, args.sim_duration, args.sim_warmup, Path(tmp))
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                   TimeRemainingColumn())
        try:
            with Progress(*columns, console=console) as progress:
                result = calibrate(runner, probe, args.schemes, args.workloads, args.threads, args.out, progress,
                                   args.reps)
        except CalibrationError as e:
            print(f"abyss sim calibrate: {e}", file=sys.stderr)
            return 1
    Console().print(table(result))
    print("costs (cycles): " + ", ".join(f"{k} {v:.3f}" for k, v in result.costs.items()) +
          f", rmw_cycles {probe.rmw_ns * probe.core_ghz:.1f} (measured); an access waits {result.overlap:.3f} of "
          "what a dependent read adds to an independent one's latency (" +
          ", ".join(f"{lvl} {probe.read_ns(lvl, result.overlap):.2f} ns" for lvl in PROBE_LEVELS) + ")")
    print(f"wrote {args.out}")
    if args.json:
        args.json.write_text(json.dumps({
            "probe": {"core_ghz": probe.core_ghz, "stream_gbps": probe.stream_gbps, "rmw_ns": probe.rmw_ns,
                      "independent_ns": probe.independent_ns,
                      "latency_ns": {str(k): v for k, v in probe.latency_ns.items()},
                      "independent_by_set_ns": {str(k): v for k, v in probe.free_ns.items()}},
            "costs": result.costs,
            "overlap": result.overlap,
            "latency_ns": {lvl: probe.read_ns(lvl, result.overlap) for lvl in PROBE_LEVELS},
            "tolerance": TOLERANCE,
            "reps": result.reps,
            "rows": [{"scheme": r.scheme, "workload": r.workload, "threads": r.threads, "native": r.native,
                      "sim": r.sim, "ratio": r.ratio} for r in result.rows],
        }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
