"""`abyss sim tile`: the Abyss tile's compute costs, counted in instructions.

The Abyss chip's tiles are in-order cores at 1 GHz (Yu et al., VLDB 2014,
§3.1). An in-order core that issues one instruction a cycle spends, between
its memory stalls, a cycle per instruction; the simulator charges the
stalls from its cache model and the rest per engine event (per platform
call, per byte of row data: src/platform/sim/topology.h). So the tile's
per-event costs are the engine's instructions per event, which this command
counts:

1. Every scheme runs every workload natively on one thread under Valgrind's
   callgrind, which counts the instructions retired inside the worker's
   loop (not the load, not the report) and each call of a function. They
   divided by the transaction attempts (calls of the workload's
   transaction functions) are the instructions per attempt. Copies and fills that x86 does with one
   repeated string instruction (`rep movs`, `rep stos`, counted once per
   repetition) are counted as a 64-bit in-order core does them: a load and
   a store per 8 bytes copied, a store per 8 bytes filled.
2. The same scheme and workload run on one simulated core, twice with the
   same warm-up and windows of one and two lengths (as `abyss sim calibrate`
   does), for the engine events per commit (`sim_counters`).
3. A least-squares fit with non-negative costs, over every run at once and
   weighted so each counts alike, gives `per_call_cycles` and
   `per_byte_cycles`; a table shows, run by run, what the two costs charge
   per commit against the instructions counted.

The costs are fitted to counts of the engine's own instructions, never to a
throughput: the tile retires what the host retires, one instruction a cycle.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from . import engine
from .calibrate import CalibrationError, nnls, sim_per_commit
from .cli import UsageParser, choice_list

EXIT_USAGE = 2

#: Workloads counted: YCSB (read-modify-write and read-only, at its default
#: 1000-byte rows) and TPC-C's mix on one warehouse (one thread sees no
#: conflicts, so skew and warehouse count change little per commit).
WORKLOADS: dict[str, list[str]] = {
    "ycsb": ["--workload", "ycsb", "--rows", "65536"],
    "ycsb-ro": ["--workload", "ycsb", "--rows", "65536", "--write-ratio", "0"],
    "tpcc": ["--workload", "tpcc", "--warehouses", "1"],
}

#: The functions whose calls are a worker's transaction attempts, by workload.
ATTEMPT = {"ycsb": re.compile(r"\bYcsb::run<"),
           "tpcc": re.compile(r"\bTpcc::(new_order|payment|order_status|delivery|stock_level)<")}

#: The worker's loop (callgrind counts only inside it: not the load, not the report).
WORKER = "*run_with<*>(abyss::Config const&)::{lambda(unsigned int)#*}::operator()*"

_REP = re.compile(r"^\s*([0-9a-f]+):\s+rep[a-z]*\s+(movs|stos)([bwlq]?)\s*([^\s,]*)")
_REGISTER_WIDTH = {"%al": 1, "%ax": 2, "%eax": 4, "%rax": 8}
_SUFFIX_WIDTH = {"b": 1, "w": 2, "l": 4, "q": 8}


@dataclass(frozen=True)
class Rep:
    """A repeated string instruction: a copy (movs) or fill (stos) of `width` bytes a repetition."""

    copy: bool
    width: int

    def tile_instructions(self, repetitions: int) -> float:
        """What a 64-bit in-order core retires for the same bytes: a load and a
        store per 8 bytes copied, a store per 8 bytes filled."""
        words = repetitions * self.width / 8
        return 2 * words if self.copy else words


def rep_instructions(objdump_text: str) -> dict[int, Rep]:
    """The repeated string instructions of a disassembly (`objdump -d`), by address."""
    out: dict[int, Rep] = {}
    for line in objdump_text.splitlines():
        m = _REP.match(line)
        if not m:
            continue
        addr, op, suffix, operand = m.groups()
        width = _SUFFIX_WIDTH.get(suffix) or _REGISTER_WIDTH.get(operand.split(",")[0], 1)
        out[int(addr, 16)] = Rep(op == "movs", width)
    return out


@dataclass
class Profile:
    """One thread's callgrind counts."""

    instructions: int = 0
    rep_instructions: int = 0     # repetitions of rep movs/stos, as callgrind counts them
    rep_tile: float = 0           # the same bytes as an in-order core's loads and stores
    calls: dict[str, int] = field(default_factory=dict)

    def attempts(self, pattern: re.Pattern[str]) -> int:
        return sum(n for name, n in self.calls.items() if pattern.search(name))


def parse_callgrind(text: str, reps_of: "callable[[str], dict[int, Rep]]") -> Profile:
    """Reads a callgrind file written with --dump-instr=yes: self instructions,
    those of repeated string instructions, and calls by callee name.

    Names and objects may be compressed ("fn=(12) name" then "fn=(12)");
    subpositions may be relative to the last cost line's ("+3", "-2", "*").
    A cost line after "calls=" is the call's inclusive cost, not self cost.
    """
    prof = Profile()
    names: dict[str, dict[str, str]] = {"ob": {}, "fn": {}}
    obj = ""
    reps: dict[int, Rep] = {}
    last = [0, 0]
    callee = ""
    pending_calls = 0
    positions = 2

    def name(kind: str, value: str) -> str:
        m = re.match(r"\((\d+)\)\s*(.*)", value)
        if not m:
            return value
        ident, text = m.groups()
        if text:
            names[kind][ident] = text
        return names[kind].get(ident, text)

    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        if line.startswith("positions:"):
            positions = len(line.split(":", 1)[1].split())
            continue
        key, eq, value = line.partition("=")
        if eq and key in ("ob", "cob", "fn", "cfn", "fl", "fi", "fe", "cfi", "cfl", "calls", "jump", "jcnd"):
            if key == "ob":
                obj = name("ob", value)
                reps = reps_of(obj)
            elif key == "cob":
                name("ob", value)
            elif key == "fn":
                name("fn", value)
            elif key == "cfn":
                callee = name("fn", value)
            elif key == "calls":
                pending_calls = int(value.split()[0])
            continue
        c = line[0]
        if not (c.isdigit() or c in "+-*"):
            continue  # a header line (summary:, totals:, ...)
        fields = line.split()
        pos = []
        for i, f in enumerate(fields[:positions]):
            if f == "*":
                v = last[i]
            elif f[0] in "+-":
                v = last[i] + int(f, 0)
            else:
                v = int(f, 0)
            pos.append(v)
        last = pos + last[len(pos):]
        cost = int(fields[positions]) if len(fields) > positions else 0
        if pending_calls:
            prof.calls[callee] = prof.calls.get(callee, 0) + pending_calls
            pending_calls = 0
            continue  # inclusive cost of the call
        prof.instructions += cost
        rep = reps.get(pos[0])
        if rep is not None:
            prof.rep_instructions += cost
            prof.rep_tile += rep.tile_instructions(cost)
    return prof


class RepIndex:
    """Disassembles each object once."""

    def __init__(self) -> None:
        self._by_object: dict[str, dict[int, Rep]] = {}

    def __call__(self, obj: str) -> dict[int, Rep]:
        if obj not in self._by_object:
            found: dict[int, Rep] = {}
            if obj.startswith("/") and Path(obj).is_file():
                p = subprocess.run(["objdump", "-d", "--no-show-raw-insn", obj], capture_output=True, text=True)
                if p.returncode == 0:
                    found = rep_instructions(p.stdout)
            self._by_object[obj] = found
        return self._by_object[obj]


# ---- running ----


@dataclass
class Count:
    scheme: str
    workload: str
    per_attempt: float       # instructions a transaction attempt, tile-counted
    copy_per_attempt: float  # of which copies and fills
    events: dict[str, float]  # engine events per commit (simulated, one core)

    def charged(self, costs: dict[str, float]) -> float:
        return self.events["calls"] * costs["per_call_cycles"] + self.events["bytes"] * costs["per_byte_cycles"]


@dataclass
class Runner:
    native: Path
    sim: Path
    workdir: Path
    duration: float
    sim_duration: float
    sim_warmup: float
    reps: RepIndex = field(default_factory=RepIndex)

    def instructions(self, scheme: str, workload: str) -> tuple[float, float]:
        """Tile instructions per attempt of one native worker under callgrind, and those of copies."""
        out = self.workdir / f"callgrind-{scheme}-{workload}"
        for old in self.workdir.glob(out.name + "*"):
            old.unlink()
        argv = ["valgrind", "--tool=callgrind", "--dump-instr=yes", f"--toggle-collect={WORKER}",
                f"--callgrind-out-file={out}", str(self.native), "run", "--cc", scheme, *WORKLOADS[workload],
                "--threads", "1", "--duration", str(self.duration), "--warmup", "0"]
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            raise CalibrationError(f"{' '.join(argv[5:])} under callgrind exited {p.returncode}: "
                                   f"{p.stderr.strip()[-400:]}")
        pattern = ATTEMPT[workload.split("-")[0]]
        prof = parse_callgrind(out.read_text(), self.reps)
        out.unlink()
        n = prof.attempts(pattern)
        if n == 0:
            raise CalibrationError(f"{scheme} {workload}: the callgrind run counted no transaction "
                                   f"(no call matching {pattern.pattern} inside the worker's loop)")
        tile = prof.instructions - prof.rep_instructions + prof.rep_tile
        return tile / n, prof.rep_tile / n

    def events(self, scheme: str, workload: str) -> dict[str, float]:
        def one(windows: int) -> dict:
            out = self.workdir / f"sim-{windows}.json"
            argv = [str(self.sim), "run", "--cc", scheme, *WORKLOADS[workload], "--sim-cores", "1",
                    "--topology", "mesh", "--duration", str(self.sim_duration * windows),
                    "--warmup", str(self.sim_warmup), "--json", str(out)]
            p = subprocess.run(argv, capture_output=True, text=True)
            if p.returncode != 0:
                raise CalibrationError(f"{' '.join(argv[1:])} exited {p.returncode}: {p.stderr.strip()[-400:]}")
            report = json.loads(out.read_text())
            out.unlink()
            return report

        _, events = sim_per_commit(one(1), one(2))
        return events


def costs_of(counts: list[Count]) -> dict[str, float]:
    """The per-call and per-byte costs that best charge every run's counted
    instructions: least squares with non-negative costs, each run's equation
    divided by its count so every run weighs alike (relative errors)."""
    if not counts:
        raise CalibrationError("nothing to count: no scheme and workload ran")
    rows = [[c.events["calls"] / c.per_attempt, c.events["bytes"] / c.per_attempt] for c in counts]
    x = nnls(rows, [1.0] * len(rows))
    if x[0] <= 0 and x[1] <= 0:
        raise CalibrationError("the simulated runs counted no platform calls and no bytes")
    return {"per_call_cycles": x[0], "per_byte_cycles": x[1]}


def compute_table(costs: dict[str, float], when: str, runs: int) -> str:
    """The [compute] table of the mesh topology for these costs."""
    return "\n".join([
        "[compute]",
        "# The tile's own work between platform calls: the engine's instructions",
        "# per event at one a cycle, as `abyss sim tile` counted them on " + when,
        f"# (callgrind, {runs} scheme-workload runs; docs/many-core.md, \"The Abyss tile\").",
        f"per_call_cycles = {costs['per_call_cycles']:.1f}",
        f"per_byte_cycles = {costs['per_byte_cycles']:.3f}",
        "rmw_cycles = 2       # an atomic on a line the core holds: its load and its store",
        "clock_cycles = 1     # a cycle-counter read on a simple core",
        "pause_cycles = 10",
        "yield_ns = 1000",
        "",
    ])


def write_compute(path: Path, table: str) -> None:
    """Replaces the [compute] table (the file's last) of a topology file."""
    text = path.read_text()
    at = text.find("\n[compute]")
    if at < 0:
        raise CalibrationError(f"{path} has no [compute] table")
    path.write_text(text[:at + 1] + table)


def results_table(counts: list[Count], costs: dict[str, float]) -> Table:
    t = Table(title="the tile's instructions per commit: counted (callgrind) and charged (the two costs)")
    for col in ("scheme", "workload", "counted", "of which copies", "calls", "bytes", "charged", "ratio"):
        t.add_column(col, justify="left" if col in ("scheme", "workload") else "right")
    for c in counts:
        charged = c.charged(costs)
        t.add_row(c.scheme, c.workload, f"{c.per_attempt:,.0f}", f"{c.copy_per_attempt:,.0f}",
                  f"{c.events['calls']:,.1f}", f"{c.events['bytes']:,.0f}", f"{charged:,.0f}",
                  f"{charged / c.per_attempt:.2f}")
    return t


def main(argv: list[str] | None = None) -> int:
    root = engine.repo_root()
    schemes_all = [s["name"] for s in engine.describe()["schemes"]]
    ap = UsageParser(prog="abyss sim tile", description=__doc__.split("\n\n")[0])
    topo = root / "src" / "platform" / "sim" / "topologies" / "mesh.toml"
    ap.add_argument("--out", type=Path, default=topo,
                    help="the topology file whose [compute] table to rewrite (default: the shipped mesh.toml)")
    ap.add_argument("--schemes", type=lambda t: choice_list(t, schemes_all, "--schemes"), default=schemes_all)
    ap.add_argument("--workloads", type=lambda t: choice_list(t, list(WORKLOADS), "--workloads"), default=list(WORKLOADS))
    ap.add_argument("--duration", type=float, default=0.2,
                    help="native window under callgrind, seconds (default 0.2)")
    ap.add_argument("--sim-duration", type=float, default=0.005, help="simulated window, virtual seconds")
    ap.add_argument("--sim-warmup", type=float, default=0.005, help="simulated warm-up, virtual seconds")
    ap.add_argument("--json", type=Path, help="also write the counts and costs as JSON here")
    args = ap.parse_args(argv)
    for v, flag in ((args.duration, "--duration"), (args.sim_duration, "--sim-duration"),
                    (args.sim_warmup, "--sim-warmup")):
        if not (v > 0 and v < 1e3):
            ap.error(f"{flag} must be a positive number of seconds below 1000")
    if not args.out.is_file():
        ap.error(f"--out {args.out}: no such topology file")
    if args.json is not None and not args.json.parent.is_dir():
        ap.error(f"--json {args.json}: its directory does not exist")
    native = engine.find_binary(sim=False)
    sim = root / "build" / "sim" / "apps" / "abyss"
    for b in (native, sim):
        if not b.is_file():
            print(f"abyss sim tile: {b} not found (./abyss build release; ./abyss build sim)", file=sys.stderr)
            return EXIT_USAGE
    for tool in ("valgrind", "objdump"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            print(f"abyss sim tile: needs {tool} (apt-get install valgrind binutils)", file=sys.stderr)
            return EXIT_USAGE
    console = Console(stderr=True)
    pairs = [(s, w) for s in args.schemes for w in args.workloads]
    counts: list[Count] = []
    with tempfile.TemporaryDirectory(prefix="abyss-tile-") as tmp:
        runner = Runner(native, sim, Path(tmp), args.duration, args.sim_duration, args.sim_warmup)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                   TimeRemainingColumn())
        try:
            with Progress(*columns, console=console) as progress:
                task = progress.add_task("counting", total=len(pairs))
                for scheme, wl in pairs:
                    per, copy = runner.instructions(scheme, wl)
                    counts.append(Count(scheme, wl, per, copy, runner.events(scheme, wl)))
                    progress.advance(task)
            costs = costs_of(counts)
            write_compute(args.out, compute_table(costs, date.today().isoformat(), len(counts)))
        except CalibrationError as e:
            print(f"abyss sim tile: {e}", file=sys.stderr)
            return 1
    Console().print(results_table(counts, costs))
    print(f"costs (cycles): per_call_cycles {costs['per_call_cycles']:.1f}, "
          f"per_byte_cycles {costs['per_byte_cycles']:.3f}")
    print(f"wrote the [compute] table of {args.out}")
    if args.json:
        args.json.write_text(json.dumps({
            "costs": costs,
            "runs": [{"scheme": c.scheme, "workload": c.workload, "instructions_per_attempt": c.per_attempt,
                      "copy_instructions_per_attempt": c.copy_per_attempt, "events_per_commit": c.events,
                      "charged": c.charged(costs)} for c in counts]}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
