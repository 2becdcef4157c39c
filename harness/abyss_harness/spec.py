"""Experiment specs: a sweep written down as data (TOML), parsed and checked.

A spec names the fixed parameters of `abyss run` (the only command a spec
drives), the swept axes, optional per-scheme overrides, optional sub-sweeps
that share the top-level settings (`[[sweep]]`), overrides for
`--full-scale`, overrides for
`--sim` (the simulated many-core machine, `[sim]`), the plots
that show the result and the text tables printed after the sweep
(`[[table]]`, rendered by tables.py). Values given on the command line
(`--set NAME=VALUE`) replace the spec's own in every sweep. docs/harness.md describes the format; this module turns
a file into a `Spec` whose every value is one the engine accepts, or raises
`SpecError` with one line naming the key, the value and what is allowed.
"""

from __future__ import annotations

import difflib
import os
import re
import string
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import engine
from .engine import Param, ParamError
from .metrics import is_metric, metric_names

TOP_KEYS = ("name", "title", "figure", "description", "command", "reps", "prime_runs", "interleave",
            "fixed", "axes", "per_scheme", "sweep", "full_scale", "sim", "plot", "table")
SWEEP_KEYS = ("label", "title", "fixed", "axes", "per_scheme", "full_scale", "sim")
FULL_SCALE_KEYS = ("fixed", "axes", "reps")
SIM_KEYS = ("fixed", "axes", "topology", "cores", "scaled")
SWEEP_SIM_KEYS = ("fixed", "axes")
PLOT_KEYS = ("kind", "x", "y", "series", "bar", "where", "title", "logx", "logy", "sweeps", "name", "combine",
             "size", "inside_title")
#: Figure sizes (plots.FIGURE_SIZES): a report's, a paper's single column, a paper's page width.
PLOT_SIZES = ("screen", "column", "page")
PLOT_KINDS = ("lines", "bars", "breakdown", "timeseries", "cdf", "tail")
#: What a breakdown stacks: shares of worker time, µs of worker time per
#: commit, or the abort rate split by the causes the schemes named.
BREAKDOWN_Y = ("fractions", "us_per_txn", "abort_causes")
#: `where` values that pick the largest or smallest value of a numeric parameter in each sweep.
EXTREMES = ("max", "min")
#: What a timeseries plot can show over a run's window (its samples).
TIMESERIES_METRICS = ("throughput", "abort_rate", "p50_us", "p99_us", "commits", "cc_aborts")
TABLE_KEYS = ("title", "rows", "columns", "cells", "ratio_to", "column_label", "labels", "headers",
              "formats", "scales", "sweeps")
#: Placeholders of a table title besides the parameters: the repetitions that
#: ran, the machine's hardware threads, the spec's name.
TITLE_EXTRAS = ("reps", "cores", "name")
#: A table's name for its ratio columns (in `headers` and `formats`).
RATIO = "ratio"

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
RANGE_RE = re.compile(r"^\s*(\d+|cores)\s*\.\.\s*(\d+|cores)\s*(/x2)?\s*$")

#: Columns a plot may use as x or series besides the parameters: derived from
#: them (read_ratio = 1 - write_ratio) or naming the sub-sweep.
DERIVED_X = ("read_ratio", "sweep")
#: The engine command a spec drives: `abyss run`, once per run.
COMMAND = "run"

DEFAULT_REPS = 3
MAX_PRIME_RUNS = 10
DEFAULT_LABEL = "main"

#: With --sim: the topology when the spec's [sim] names none, the simulated
#: machine's size ("cores" in a value), and one repetition (a simulated run
#: is a function of its seed).
SIM_TOPOLOGY = "mesh"
SIM_CORES = 1024
SIM_REPS = 1
#: The parameters a window rule may set (see PerCore).
PER_CORE_PARAMS = ("duration", "warmup")


@dataclass(frozen=True)
class PerCore:
    """A virtual window that shrinks as the simulated cores grow:
    `duration = { core_seconds = 0.016, min = 0.0005, max = 0.016 }` is
    clamp(core_seconds / threads, min, max), rounded to 3 significant digits.
    Few cores get a long enough window to commit something, many cores (each
    of which costs the host as much as the others) a short one."""

    core_seconds: float
    min: float
    max: float

    def at(self, threads: int) -> float:
        v = min(self.max, max(self.min, self.core_seconds / max(1, threads)))
        return float(f"{v:.3g}")

    def to_json(self) -> dict[str, float]:
        return {"core_seconds": self.core_seconds, "min": self.min, "max": self.max}


#: What --sim sets before the spec's [sim] section: the papers' 128-query
#: queues per worker, and windows sized by the steady-state rule
#: (docs/many-core.md, "Steady state"): at least 0.1 ms of warm-up, then
#: windows of at least 0.2 ms until one holds 32 commits per worker (and 1000
#: in all) with halves within 10% of each other, for at most 50 ms of
#: virtual time; a point that misses it is drawn hollow.
SIM_DEFAULT_FIXED: dict[str, Any] = {
    "queries_per_worker": 128,
    "duration": 0.0002,
    "warmup": 0.0001,
    "steady_commits": 32,
    "max_duration": 0.05,
}


class SpecError(Exception):
    """A spec that cannot be run as written. The CLI prints it and exits 2."""


@dataclass(frozen=True)
class SameAs:
    """A parameter that takes the value another parameter has at each point,
    e.g. `partitions = { same_as = "threads" }` (one H-STORE partition per worker)."""

    name: str


@dataclass
class Sweep:
    """One grid: fixed parameters, swept axes (in file order), per-scheme overrides."""

    label: str
    title: str
    fixed: dict[str, Any]
    axes: dict[str, list[Any]]
    per_scheme: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def workload(self) -> str | None:
        return self.fixed.get("workload")


@dataclass
class PlotSpec:
    """One figure to draw from a spec's results (see plots.py)."""

    kind: str
    y: str
    x: str | None = None
    series: str | None = None
    bar: str | None = None
    where: dict[str, Any] = field(default_factory=dict)
    title: str | None = None
    logx: bool = False
    logy: bool = False
    sweeps: list[str] | None = None
    name: str | None = None
    combine: bool = False   # lines: the runs of every sweep in one figure (one per sweep otherwise)
    size: str = "screen"    # screen, column (3.3 in) or page (7 in)
    inside_title: bool = False  # draw the title in the figure (else it is only the report's caption)


@dataclass
class TableSpec:
    """A text table printed after a sweep and shown in its report (tables.py).

    One line per combination of the `rows` parameters, one group of columns
    per combination of the `columns` parameters; each group shows the median
    of each metric in `cells`. With `ratio_to` (a value of the first column
    parameter) each line ends with every other group's first metric divided
    by that of the baseline's group with the same values of the other
    column parameters (`ycsb-per-worker 2t` over `ycsb-off 2t`).
    """

    title: str
    rows: list[str]
    columns: list[str]
    cells: list[str]
    ratio_to: Any = None
    column_label: str | None = None                 # template over the column parameters
    labels: dict[str, dict[str, str]] = field(default_factory=dict)   # parameter -> value -> text
    headers: dict[str, str] = field(default_factory=dict)             # parameter or metric -> header
    formats: dict[str, str] = field(default_factory=dict)             # parameter or metric -> format spec
    scales: dict[str, float] = field(default_factory=dict)            # metric -> factor (1e-6: millions)
    sweeps: list[str] | None = None


@dataclass
class Spec:
    """A parsed, validated spec, resolved for one machine (`cores`) and scale."""

    name: str
    title: str
    figure: str
    description: str
    command: str
    reps: int
    sweeps: list[Sweep]
    plots: list[PlotSpec]
    source: str
    text: str
    full_scale: bool
    cores: int
    prime_runs: int = 0
    # Run the sweeps' points with equal axis values one after another (each
    # table line's columns back to back), not sweep after sweep: sweeps that
    # are columns of one comparison then share the machine's drift.
    interleave: bool = False
    tables: list[TableSpec] = field(default_factory=list)
    overrides: dict[str, Any] = field(default_factory=dict)   # --set: name -> value or list of values
    sim: bool = False                  # resolved for the simulated machine (--sim)
    topology: str = ""                 # with sim: the --topology of every run
    sim_topology: str | None = None    # the [sim] section's topology (default mesh); None: no [sim]
    scaled: str = ""                   # the [sim] section's note on what departs from the paper

    def axis_names(self) -> list[str]:
        """Every swept parameter over all sweeps, in first-seen order."""
        names: list[str] = []
        for sw in self.sweeps:
            names += [a for a in sw.axes if a not in names]
        return names

    def to_json(self) -> dict[str, Any]:
        """The resolved spec as plain data, kept in the results manifest."""
        def enc(v: Any) -> Any:
            if isinstance(v, PerCore):
                return v.to_json()
            return {"same_as": v.name} if isinstance(v, SameAs) else v
        return {
            "name": self.name, "title": self.title, "figure": self.figure,
            "description": self.description, "command": self.command, "reps": self.reps,
            "full_scale": self.full_scale, "cores": self.cores, "source": self.source,
            "sweeps": [{"label": s.label, "title": s.title,
                        "fixed": {k: enc(v) for k, v in s.fixed.items()},
                        "axes": s.axes,
                        "per_scheme": {c: {k: enc(v) for k, v in o.items()} for c, o in s.per_scheme.items()}}
                       for s in self.sweeps],
            "plots": [p.__dict__ for p in self.plots],
            "prime_runs": self.prime_runs,
            "interleave": self.interleave,
            "overrides": self.overrides,
            "tables": [dict(t.__dict__) for t in self.tables],
            "sim": self.sim, "topology": self.topology, "scaled": self.scaled,
        }


def _suggest(word: str, allowed: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(word, list(allowed), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class _Parser:
    """Walks the raw TOML tables, collecting the location of each value for errors."""

    def __init__(self, source: str, cores: int) -> None:
        self.source = source
        self.cores = cores

    def fail(self, where: str, msg: str) -> SpecError:
        return SpecError(f"{self.source}: {where}: {msg}")

    def table(self, raw: Any, where: str) -> dict[str, Any]:
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            raise self.fail(where, f"must be a table, got {raw!r}")
        return raw

    def keys(self, raw: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
        for key in raw:
            if key not in allowed:
                raise self.fail(f"{where}{key}" if where else key,
                                f"unknown key{_suggest(key, allowed)}; allowed: {', '.join(allowed)}")

    def param(self, table: dict[str, Param], name: str, where: str) -> Param:
        if name not in table:
            raise self.fail(where, f"unknown parameter{_suggest(name, list(table))}; "
                                   f"allowed: {', '.join(table)}")
        return table[name]

    def value(self, param: Param, raw: Any, where: str, *, same_as_ok: bool = True) -> Any:
        if isinstance(raw, dict) and same_as_ok and "core_seconds" in raw:
            return self.per_core(param, raw, where)
        if isinstance(raw, dict):
            if same_as_ok and set(raw) == {"same_as"} and isinstance(raw["same_as"], str):
                if param.kind is not int:
                    raise self.fail(where, "same_as is only for integer parameters")
                return SameAs(raw["same_as"])
            raise self.fail(where, f"{raw!r} is not {param.allowed()}"
                                   + (' or { same_as = "PARAM" }' if same_as_ok and param.kind is int else ""))
        try:
            return param.normalize(raw, self.cores)
        except ParamError as e:
            raise self.fail(where, str(e)) from None

    def per_core(self, param: Param, raw: dict[str, Any], where: str) -> PerCore:
        if param.name not in PER_CORE_PARAMS:
            raise self.fail(where, "{ core_seconds = ... } is only for " + " and ".join(PER_CORE_PARAMS))
        extra = set(raw) - {"core_seconds", "min", "max"}
        if extra:
            raise self.fail(where, f"unknown key {sorted(extra)[0]!r}; allowed: core_seconds, min, max")
        nums = {}
        for k in ("core_seconds", "min", "max"):
            v = raw.get(k, raw["core_seconds"] if k == "max" else param.lo)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
                raise self.fail(f"{where}.{k}", f"{v!r} is not a number of seconds")
            nums[k] = float(v)
        if not nums["core_seconds"] > 0 or nums["min"] > nums["max"]:
            raise self.fail(where, "need core_seconds > 0 and min <= max")
        for k in ("min", "max"):
            self.value(param, nums[k], f"{where}.{k}", same_as_ok=False)
        return PerCore(**nums)

    def fixed(self, table: dict[str, Param], raw: Any, where: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, v in self.table(raw, where).items():
            p = self.param(table, name, f"{where}.{name}")
            if isinstance(v, list):
                raise self.fail(f"{where}.{name}", "a fixed value must be a single value; "
                                                   "put a list of values under [axes]")
            out[name] = self.value(p, v, f"{where}.{name}")
        return out

    def axes(self, table: dict[str, Param], raw: Any, where: str) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        for name, v in self.table(raw, where).items():
            loc = f"{where}.{name}"
            p = self.param(table, name, loc)
            if isinstance(v, str) and p.kind is int:
                v = self.int_range(v, p, loc)
            elif v == "all" and p.choices:
                # Every value the engine accepts, in its order: `cc = "all"` is
                # every registered scheme, so a new scheme joins the sweep.
                v = list(p.choices)
            if not isinstance(v, list):
                raise self.fail(loc, f"{v!r}: an axis must be a list of values"
                                     + (' or a range such as "1..cores"' if p.kind is int else "")
                                     + (' or "all"' if p.choices else ""))
            if not v:
                raise self.fail(loc, "an axis needs at least one value")
            values = [self.value(p, x, f"{loc}[{i}]", same_as_ok=False) for i, x in enumerate(v)]
            dup = [x for i, x in enumerate(values) if x in values[:i]]
            if dup:
                raise self.fail(loc, f"value {dup[0]!r} appears twice")
            out[name] = values
        return out

    def int_range(self, text: str, p: Param, where: str) -> list[int]:
        m = RANGE_RE.match(text)
        if not m:
            raise self.fail(where, f"{text!r} is not a range; write \"A..B\" (every integer) or "
                                   "\"A..B/x2\" (doubling), with A, B integers or cores")
        lo, hi = (self.cores if g == "cores" else int(g) for g in m.group(1, 2))
        if lo < 1 or hi < lo:
            raise self.fail(where, f"{text!r} is an empty range (need 1 <= A <= B)")
        if not m.group(3):
            return list(range(lo, hi + 1))
        out, x = [], lo
        while x < hi:
            out.append(x)
            x *= 2
        return out + [hi]


def _layer(fixed: dict[str, Any], axes: dict[str, list[Any]],
           new_fixed: dict[str, Any], new_axes: dict[str, list[Any]]) -> None:
    """Apply a more specific layer: a key it sets replaces the key wherever it was."""
    for k, v in new_fixed.items():
        axes.pop(k, None)
        fixed[k] = v
    for k, v in new_axes.items():
        fixed.pop(k, None)
        axes[k] = v


def parse_spec(text: str, source: str = "spec", *, full_scale: bool = False,
               cores: int | None = None, overrides: dict[str, str] | None = None,
               sim: bool = False, topology: str | None = None) -> Spec:
    """Parse spec TOML text; raise SpecError naming the first problem.

    `overrides` are `--set NAME=VALUE` words of the command line: a value
    fixes the parameter in every sweep, a comma-separated list (or a range
    such as "1..cores") sweeps it; either replaces what the spec says,
    per-scheme values included.

    With `sim` the spec is resolved for the simulated machine: the sim
    defaults (SIM_DEFAULT_FIXED), then the spec's `[sim]` and each sweep's
    `sim` replace its values, "cores" means the simulated machine's size
    (`[sim] cores`, default SIM_CORES), and every run gets `--sim-cores`
    equal to its threads and `--topology` (`topology`, else the section's,
    else mesh). A spec without a `[sim]` section is refused.
    """
    with engine.sim_mode(sim):
        return _parse_spec(text, source, full_scale=full_scale, cores=cores, overrides=overrides,
                           sim=sim, topology=topology)


def _parse_spec(text: str, source: str, *, full_scale: bool, cores: int | None,
                overrides: dict[str, str] | None, sim: bool, topology: str | None) -> Spec:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{source}: not valid TOML: {e}") from None
    raw_sim = raw.get("sim")
    sim_topology = None
    if isinstance(raw_sim, dict):
        sim_topology = raw_sim.get("topology", SIM_TOPOLOGY)
    if sim:
        if raw_sim is None:
            raise SpecError(f"{source}: has no [sim] section, so it cannot run simulated (--sim); "
                            "./abyss reproduce --list says which experiments can")
        sim_cores = raw_sim.get("cores", SIM_CORES) if isinstance(raw_sim, dict) else SIM_CORES
        if isinstance(sim_cores, bool) or not isinstance(sim_cores, int) or not 1 <= sim_cores <= 4095:
            raise SpecError(f"{source}: sim.cores: {sim_cores!r} is not an integer from 1 to 4095")
        cores = sim_cores
    cores = cores or os.cpu_count() or 1
    P = _Parser(source, cores)
    P.keys(raw, TOP_KEYS, "")

    name = raw.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise P.fail("name", f"{name!r}: required, lower-case letters, digits, '-', '_' or '.'")
    command = raw.get("command", COMMAND)
    if command == "bench ts":
        raise P.fail("command", "'bench ts' is no longer an engine command: the timestamp allocation "
                                "micro-benchmark is the tsalloc workload; write command = \"run\" with "
                                "workload = \"tsalloc\" (see harness/specs/bench-ts.toml)")
    if command != COMMAND:
        raise P.fail("command", f"{command!r}: the only command is {COMMAND!r} (the default)")
    table = engine.RUN_PARAMS
    for key in ("title", "figure", "description"):
        if key in raw and not isinstance(raw[key], str):
            raise P.fail(key, f"{raw[key]!r} must be a string")

    def reps_of(v: Any, where: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 1000:
            raise P.fail(where, f"{v!r} is not an integer from 1 to 1000")
        return v

    reps = reps_of(raw.get("reps", DEFAULT_REPS), "reps")
    prime_runs = raw.get("prime_runs", 0)
    if isinstance(prime_runs, bool) or not isinstance(prime_runs, int) or not 0 <= prime_runs <= MAX_PRIME_RUNS:
        raise P.fail("prime_runs", f"{prime_runs!r} is not an integer from 0 to {MAX_PRIME_RUNS}")
    interleave = raw.get("interleave", False)
    if not isinstance(interleave, bool):
        raise P.fail("interleave", f"{interleave!r} is not true or false")
    top_fs = P.table(raw.get("full_scale"), "full_scale")
    P.keys(top_fs, FULL_SCALE_KEYS, "full_scale.")
    fs_reps = reps_of(top_fs.get("reps", reps), "full_scale.reps")
    if full_scale:
        reps = fs_reps

    top_fixed = P.fixed(table, raw.get("fixed"), "fixed")
    top_axes = P.axes(table, raw.get("axes"), "axes")
    _same_level(P, top_fixed, top_axes, "")
    top_fs_fixed = P.fixed(table, top_fs.get("fixed"), "full_scale.fixed")
    top_fs_axes = P.axes(table, top_fs.get("axes"), "full_scale.axes")
    _same_level(P, top_fs_fixed, top_fs_axes, "full_scale.")
    top_per = _per_scheme(P, table, raw.get("per_scheme"), "per_scheme")
    ov_fixed, ov_axes = _overrides(P, table, overrides or {})
    top_sim = P.table(raw_sim, "sim")
    P.keys(top_sim, SIM_KEYS, "sim.")
    for key in ("topology", "scaled"):
        if key in top_sim and not isinstance(top_sim[key], str):
            raise P.fail(f"sim.{key}", f"{top_sim[key]!r} must be a string")
    sim_fixed: dict[str, Any] = {}
    sim_axes: dict[str, list[Any]] = {}
    if sim:
        reps = SIM_REPS
        prime_runs = 0        # no cold machine to warm: a simulated run is deterministic
        topology = topology or top_sim.get("topology", SIM_TOPOLOGY)
        sim_fixed = P.fixed(table, top_sim.get("fixed"), "sim.fixed")
        sim_axes = P.axes(table, top_sim.get("axes"), "sim.axes")
        _same_level(P, sim_fixed, sim_axes, "sim.")
        sim_fixed = {**SIM_DEFAULT_FIXED, **sim_fixed}
        for k in sim_axes:
            sim_fixed.pop(k, None)
        sim_fixed["sim_cores"] = SameAs("threads")
        sim_fixed["topology"] = P.value(table["topology"], topology, "--topology", same_as_ok=False)

    raw_sweeps = raw.get("sweep", [{}])
    if not isinstance(raw_sweeps, list) or not raw_sweeps:
        raise P.fail("sweep", "must be an array of tables ([[sweep]])")
    top = _Top(fixed=top_fixed, axes=top_axes, fs_fixed=top_fs_fixed, fs_axes=top_fs_axes,
               per_scheme=top_per, title=raw.get("title", name), ov_fixed=ov_fixed, ov_axes=ov_axes,
               sim_fixed=sim_fixed, sim_axes=sim_axes)
    sweeps: list[Sweep] = []
    for i, rs in enumerate(raw_sweeps):
        sweep = _sweep(P, table, top, rs, i, len(raw_sweeps), full_scale, sim)
        if any(s.label == sweep.label for s in sweeps):
            raise P.fail(f"sweep[{i}].label", f"{sweep.label!r} is used by two sweeps")
        sweeps.append(sweep)

    spec = Spec(name=name, title=raw.get("title", name), figure=raw.get("figure", ""),
                description=raw.get("description", "").strip(), command=command, reps=reps,
                sweeps=sweeps, plots=[], source=source, text=text, full_scale=full_scale, cores=cores,
                prime_runs=prime_runs, interleave=interleave, overrides={**ov_fixed, **ov_axes}, sim=sim,
                topology=(topology or "") if sim else "", sim_topology=sim_topology,
                scaled=" ".join(str(top_sim.get("scaled", "")).split()))
    raw_plots = raw.get("plot", [])
    if not isinstance(raw_plots, list):
        raise P.fail("plot", "must be an array of tables ([[plot]])")
    spec.plots = [_plot(P, spec, table, rp, i) for i, rp in enumerate(raw_plots)]
    raw_tables = raw.get("table", [])
    if not isinstance(raw_tables, list):
        raise P.fail("table", "must be an array of tables ([[table]])")
    spec.tables = [_table(P, spec, table, rt, i) for i, rt in enumerate(raw_tables)]
    return spec


@dataclass
class _Top:
    """The top-level settings every sweep starts from."""

    fixed: dict[str, Any]
    axes: dict[str, list[Any]]
    fs_fixed: dict[str, Any]
    fs_axes: dict[str, list[Any]]
    per_scheme: dict[str, dict[str, Any]]
    title: str
    ov_fixed: dict[str, Any] = field(default_factory=dict)
    ov_axes: dict[str, list[Any]] = field(default_factory=dict)
    sim_fixed: dict[str, Any] = field(default_factory=dict)      # with --sim: defaults and [sim]
    sim_axes: dict[str, list[Any]] = field(default_factory=dict)


def _sweep(P: _Parser, table: dict[str, Param], top: _Top, rs: Any, i: int, count: int,
           full_scale: bool, sim: bool = False) -> Sweep:
    """One [[sweep]] merged over the top level: sweep values replace top-level
    ones, then (with --full-scale) the top-level and the sweep's full_scale."""
    loc = f"sweep[{i}]"
    rs = P.table(rs, loc)
    P.keys(rs, SWEEP_KEYS, loc + ".")
    label = rs.get("label", DEFAULT_LABEL if count == 1 else None)
    if not isinstance(label, str) or not NAME_RE.match(label):
        raise P.fail(f"{loc}.label", f"{label!r}: each of several sweeps needs a label of "
                                     "lower-case letters, digits, '-', '_' or '.'")
    loc = f"sweep {label!r}"
    fixed, axes = dict(top.fixed), {k: list(v) for k, v in top.axes.items()}
    sw_fixed = P.fixed(table, rs.get("fixed"), f"{loc}.fixed")
    sw_axes = P.axes(table, rs.get("axes"), f"{loc}.axes")
    _same_level(P, sw_fixed, sw_axes, f"{loc}.")
    _layer(fixed, axes, sw_fixed, sw_axes)
    sw_fs = P.table(rs.get("full_scale"), f"{loc}.full_scale")
    P.keys(sw_fs, ("fixed", "axes"), f"{loc}.full_scale.")
    fs_fixed = P.fixed(table, sw_fs.get("fixed"), f"{loc}.full_scale.fixed")
    fs_axes = P.axes(table, sw_fs.get("axes"), f"{loc}.full_scale.axes")
    _same_level(P, fs_fixed, fs_axes, f"{loc}.full_scale.")
    if full_scale:
        _layer(fixed, axes, top.fs_fixed, top.fs_axes)
        _layer(fixed, axes, fs_fixed, fs_axes)
    sw_sim = P.table(rs.get("sim"), f"{loc}.sim")
    P.keys(sw_sim, SWEEP_SIM_KEYS, f"{loc}.sim.")
    if sim:
        sim_fixed = P.fixed(table, sw_sim.get("fixed"), f"{loc}.sim.fixed")
        sim_axes = P.axes(table, sw_sim.get("axes"), f"{loc}.sim.axes")
        _same_level(P, sim_fixed, sim_axes, f"{loc}.sim.")
        _layer(fixed, axes, top.sim_fixed, top.sim_axes)
        _layer(fixed, axes, sim_fixed, sim_axes)
    _layer(fixed, axes, top.ov_fixed, top.ov_axes)
    per = {c: dict(o) for c, o in top.per_scheme.items()}
    for c, o in _per_scheme(P, table, rs.get("per_scheme"), f"{loc}.per_scheme").items():
        per.setdefault(c, {}).update(o)
    overridden = {**top.ov_fixed, **top.ov_axes}
    if "cc" in overridden:
        kept = overridden["cc"] if isinstance(overridden["cc"], list) else [overridden["cc"]]
        per = {c: o for c, o in per.items() if c in kept}
    for o in per.values():
        for k in overridden:
            o.pop(k, None)
    title = rs.get("title", top.title if count == 1 else label)
    if not isinstance(title, str):
        raise P.fail(f"{loc}.title", f"{title!r} must be a string")
    sweep = Sweep(label=label, title=title, fixed=fixed, axes=axes, per_scheme=per)
    _check_sweep(P, sweep, loc)
    return sweep


def _same_level(P: _Parser, fixed: dict[str, Any], axes: dict[str, Any], where: str) -> None:
    both = set(fixed) & set(axes)
    if both:
        k = sorted(both)[0]
        raise P.fail(f"{where}axes.{k}", "is both fixed and swept at the same level")


def _per_scheme(P: _Parser, table: dict[str, Param], raw: Any, where: str) -> dict[str, dict[str, Any]]:
    raw = P.table(raw, where)
    out: dict[str, dict[str, Any]] = {}
    for scheme, overrides in raw.items():
        if scheme not in engine.SCHEMES:
            raise P.fail(f"{where}.{scheme}", f"unknown scheme{_suggest(scheme, engine.SCHEMES)}; "
                                              f"allowed: {', '.join(engine.SCHEMES)}")
        fixed = P.fixed(table, overrides, f"{where}.{scheme}")
        if "cc" in fixed or "workload" in fixed:
            raise P.fail(f"{where}.{scheme}", "cannot override cc or workload per scheme")
        out[scheme] = fixed
    return out


def _check_sweep(P: _Parser, sw: Sweep, where: str) -> None:
    """Checks that need the whole merged sweep: workload, its parameters, same_as."""
    table = engine.RUN_PARAMS
    if "workload" in sw.axes:
        raise P.fail(f"{where}.axes.workload",
                     "the workload cannot be an axis; write one [[sweep]] per workload")
    if "workload" not in sw.fixed:
        raise P.fail(f"{where}.fixed.workload",
                     f"required: set workload to one of {', '.join(engine.WORKLOADS)}")
    workload = sw.fixed["workload"]
    for scope in (sw.fixed, sw.axes, *sw.per_scheme.values()):
        for name in scope:
            wl = table[name].workload
            if wl and wl != workload:
                raise P.fail(f"{where}.{name}", f"applies to workload {wl} only; "
                                                f"this sweep runs {workload}")
    if "cc" in sw.axes:
        for scheme in sw.per_scheme:
            if scheme not in sw.axes["cc"]:
                raise P.fail(f"{where}.per_scheme.{scheme}", "scheme is not in axes.cc")
    for scope in (sw.fixed, *sw.per_scheme.values()):
        for name, v in scope.items():
            if isinstance(v, SameAs):
                target = table.get(v.name)
                if target is None or target.kind is not int:
                    raise P.fail(f"{where}.{name}", f"same_as {v.name!r}: must name an integer parameter")
                tv = sw.fixed.get(v.name)
                if v.name not in sw.axes and (tv is None or isinstance(tv, SameAs)):
                    raise P.fail(f"{where}.{name}", f"same_as {v.name!r}: that parameter is not set "
                                                    "(fixed to a number or swept) in this sweep")


def _plot(P: _Parser, spec: Spec, table: dict[str, Param], rp: Any, i: int) -> PlotSpec:
    loc = f"plot[{i}]"
    rp = P.table(rp, loc)
    P.keys(rp, PLOT_KEYS, loc + ".")
    kind = rp.get("kind", "lines")
    if kind not in PLOT_KINDS:
        raise P.fail(f"{loc}.kind", f"{kind!r} is not one of {', '.join(PLOT_KINDS)}")
    columns = list(engine.RUN_PARAMS) + list(DERIVED_X)
    default_y = {"lines": "throughput", "bars": "throughput", "breakdown": "fractions",
                 "timeseries": "throughput", "cdf": "latency", "tail": "latency"}[kind]
    y = rp.get("y", default_y)
    if kind == "timeseries" and y not in TIMESERIES_METRICS:
        raise P.fail(f"{loc}.y", f"{y!r} is not a sampled metric; allowed: {', '.join(TIMESERIES_METRICS)}")
    if kind == "breakdown" and y not in BREAKDOWN_Y:
        raise P.fail(f"{loc}.y", f"{y!r}: a breakdown shows one of {', '.join(BREAKDOWN_Y)}")
    if kind in ("cdf", "tail") and y != "latency":
        raise P.fail(f"{loc}.y", f"{y!r}: a {kind} plot shows latency (leave y out)")
    if kind in ("lines", "bars") and not is_metric(y):
        raise P.fail(f"{loc}.y", f"{y!r} is not a metric{_suggest(str(y), metric_names())}")

    def column(key: str, default: str | None) -> str | None:
        v = rp.get(key, default)
        if v is not None and v not in columns:
            raise P.fail(f"{loc}.{key}", f"{v!r} is not a column{_suggest(str(v), columns)}; "
                                         f"allowed: {', '.join(columns)}")
        return v

    x = column("x", {"lines": "threads", "bars": "threads", "tail": "cc"}.get(kind))
    series = column("series", "cc" if kind not in ("breakdown", "tail") else None)
    bar = column("bar", "threads" if kind == "breakdown" else None)
    if kind in ("lines", "bars") and x is None:
        raise P.fail(f"{loc}.x", "required for lines and bars")
    where = P.table(rp.get("where"), f"{loc}.where")
    for k, v in where.items():
        if k == "sweep":
            continue
        if k == "type":     # a transaction type, for cdf and tail plots
            if kind not in ("cdf", "tail") or not isinstance(v, str) or not v:
                raise P.fail(f"{loc}.where.type", "a transaction type name, only in cdf and tail plots")
            continue
        p = P.param(table, k, f"{loc}.where.{k}")
        if v in EXTREMES and p.kind in (int, float):
            continue        # the largest or smallest value of the sweep
        where[k] = P.value(p, v, f"{loc}.where.{k}", same_as_ok=False)
    sweeps = rp.get("sweeps")
    if sweeps is not None:
        labels = [s.label for s in spec.sweeps]
        if not isinstance(sweeps, list) or any(s not in labels for s in sweeps):
            raise P.fail(f"{loc}.sweeps", f"{sweeps!r}: each must be one of {', '.join(labels)}")
    logx, logy, combine = rp.get("logx", False), rp.get("logy", False), rp.get("combine", False)
    inside_title = rp.get("inside_title", False)
    size = rp.get("size", "screen")
    if size not in PLOT_SIZES:
        raise P.fail(f"{loc}.size", f"{size!r} is not one of {', '.join(PLOT_SIZES)}")
    for key, v in (("logx", logx), ("logy", logy), ("combine", combine), ("inside_title", inside_title)):
        if not isinstance(v, bool):
            raise P.fail(f"{loc}.{key}", f"{v!r} is not true or false")
    if combine and kind != "lines":
        raise P.fail(f"{loc}.combine", "only a lines plot combines sweeps")
    name = rp.get("name", f"{i + 1:02d}-{kind}")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise P.fail(f"{loc}.name", f"{name!r}: lower-case letters, digits, '-', '_' or '.'")
    return PlotSpec(kind=kind, x=x, y=y, series=series, bar=bar, where=where,
                    title=rp.get("title"), logx=logx, logy=logy, sweeps=sweeps, name=name, combine=combine,
                    size=size, inside_title=inside_title)


_INT_RE = re.compile(r"^[+-]?\d+$")


def _scalar(word: str) -> Any:
    """A command-line word as the TOML value it stands for: a boolean, an
    integer, a number, or else a string."""
    if word in ("true", "false"):
        return word == "true"
    if _INT_RE.match(word):
        return int(word)
    try:
        return float(word)
    except ValueError:
        return word


def _overrides(P: _Parser, table: dict[str, Param],
               raw: dict[str, str]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """`--set NAME=VALUE` words as (fixed, axes), each value checked like a spec's."""
    fixed: dict[str, Any] = {}
    axes: dict[str, list[Any]] = {}
    for name, text in raw.items():
        where = f"--set {name}"
        p = P.param(table, name, where)
        if p.kind is str and p.choices is None:        # a syntax of its own (tpcc_mix has commas)
            fixed[name] = P.value(p, text, where, same_as_ok=False)
            continue
        words = [w.strip() for w in text.split(",")]
        if len(words) == 1 and not (p.kind is int and RANGE_RE.match(text)):
            fixed[name] = P.value(p, _scalar(words[0]), where, same_as_ok=False)
        else:
            value: Any = text if len(words) == 1 else [_scalar(w) for w in words]
            axes.update(P.axes(table, {name: value}, "--set"))
    return fixed, axes


# -- tables -------------------------------------------------------------------------

class _Many(list):  # type: ignore[type-arg]
    """The values of a parameter that differs between points: a title shows them all."""


class _TemplateFormatter(string.Formatter):
    """str.format over named values; a value with several settings is written
    as each of them, comma-separated, with the same format spec."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, _Many):
            return ",".join(self.format_field(v, format_spec) for v in value)
        if format_spec:
            return format(value, format_spec)
        return engine.format_value(value)


def template_fields(template: str) -> list[str]:
    """The placeholder names of a `{name:spec}` template."""
    return [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]


def fill_template(template: str, values: dict[str, Any]) -> str:
    """A title or column label with its `{name}` / `{name:.2f}` placeholders
    filled; a list value (a parameter swept in these runs) gives every value."""
    vals = {k: (_Many(v) if isinstance(v, list) and len(v) > 1 else v[0] if isinstance(v, list) else v)
            for k, v in values.items()}
    return _TemplateFormatter().vformat(template, (), vals)


def parameter_values(sweeps: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Every value each parameter takes in these sweeps (`Spec.to_json()`
    form), fixed or swept, in first-seen order; same_as values are left out."""
    out: dict[str, list[Any]] = {}
    for sw in sweeps:
        items = [(k, [v]) for k, v in sw.get("fixed", {}).items() if not isinstance(v, dict)]
        items += list(sw.get("axes", {}).items())
        for k, vs in items:
            seen = out.setdefault(k, [])
            seen += [v for v in vs if v not in seen]
    return out


def title_values(spec: dict[str, Any], sweeps: list[dict[str, Any]], reps: int) -> dict[str, Any]:
    """The values a table title may name: the parameters of its sweeps, reps, cores, name."""
    return {**parameter_values(sweeps), "reps": reps, "cores": spec.get("cores"), "name": spec.get("name")}


def _table(P: _Parser, spec: Spec, table: dict[str, Param], rt: Any, i: int) -> TableSpec:
    loc = f"table[{i}]"
    rt = P.table(rt, loc)
    P.keys(rt, TABLE_KEYS, loc + ".")
    labels_all = [s.label for s in spec.sweeps]
    sweeps = rt.get("sweeps")
    if sweeps is not None and (not isinstance(sweeps, list) or any(s not in labels_all for s in sweeps)):
        raise P.fail(f"{loc}.sweeps", f"{sweeps!r}: each must be one of {', '.join(labels_all)}")
    chosen = [s for s in spec.sweeps if sweeps is None or s.label in sweeps]
    allowed = list(table) + list(DERIVED_X)

    def names(key: str) -> list[str]:
        v = rt.get(key)
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v):
            raise P.fail(f"{loc}.{key}", f"{v!r}: required, a list of parameters")
        for x in v:
            if x not in allowed:
                raise P.fail(f"{loc}.{key}", f"{x!r} is not a parameter{_suggest(x, allowed)}; "
                                             f"allowed: {', '.join(allowed)}")
        if len(set(v)) < len(v):
            raise P.fail(f"{loc}.{key}", f"{v!r} names a parameter twice")
        return v

    rows, columns = names("rows"), names("columns")
    both = [x for x in rows if x in columns]
    if both:
        raise P.fail(f"{loc}.columns", f"{both[0]!r} is also a row parameter")
    keys = rows + columns
    cells = rt.get("cells", ["throughput"])
    if isinstance(cells, str):
        cells = [cells]
    if not isinstance(cells, list) or not cells or not all(isinstance(c, str) and is_metric(c) for c in cells):
        raise P.fail(f"{loc}.cells", f"{cells!r}: a list of metrics (throughput, abort_rate, tpmc, ...)")
    # Each cell must be one point: whatever tells two points apart is a row or a column.
    if "sweep" not in keys:
        for sw in chosen:
            for a in sw.axes:
                if a not in keys:
                    raise P.fail(loc, f"{a!r} is swept (sweep {sw.label!r}) but is neither a row nor "
                                      "a column; a cell would mix points")
        fixed_names = {k for sw in chosen for k in sw.fixed}
        for k in sorted(fixed_names - set(keys)):
            if len({repr(sw.fixed.get(k)) for sw in chosen}) > 1:
                raise P.fail(loc, f"{k!r} differs between sweeps but is neither a row nor a column "
                                  "(nor is sweep); a cell would mix points")

    ratio_to = rt.get("ratio_to")
    if ratio_to is not None:
        # A value of the first column parameter; with more, each group is
        # divided by the baseline's group of the same other values.
        c = columns[0]
        if c == "sweep":
            if ratio_to not in [s.label for s in chosen]:
                raise P.fail(f"{loc}.ratio_to", f"{ratio_to!r} is not one of {', '.join(s.label for s in chosen)}")
        elif c in table:
            ratio_to = P.value(table[c], ratio_to, f"{loc}.ratio_to", same_as_ok=False)

    def str_map(key: str, allowed_keys: list[str]) -> dict[str, str]:
        m = P.table(rt.get(key), f"{loc}.{key}")
        for k, v in m.items():
            if k not in allowed_keys:
                raise P.fail(f"{loc}.{key}.{k}", f"not one of {', '.join(allowed_keys)}")
            if not isinstance(v, str):
                raise P.fail(f"{loc}.{key}.{k}", f"{v!r} must be a string")
        return dict(m)

    names_all = keys + cells + [RATIO]
    headers = str_map("headers", names_all)
    formats = str_map("formats", names_all)
    for k, f in formats.items():
        try:
            format(0.5, f)
        except ValueError as e:
            raise P.fail(f"{loc}.formats.{k}", f"{f!r} is not a number format such as \".1f\" ({e})") from None
    scales: dict[str, float] = {}
    for k, v in P.table(rt.get("scales"), f"{loc}.scales").items():
        if k not in cells:
            raise P.fail(f"{loc}.scales.{k}", f"not one of the cells ({', '.join(cells)})")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise P.fail(f"{loc}.scales.{k}", f"{v!r} is not a positive number (1e-6 shows millions)")
        scales[k] = float(v)
    labels: dict[str, dict[str, str]] = {}
    for k, m in P.table(rt.get("labels"), f"{loc}.labels").items():
        if k not in keys:
            raise P.fail(f"{loc}.labels.{k}", f"not a row or column parameter ({', '.join(keys)})")
        m = P.table(m, f"{loc}.labels.{k}")
        for v, text in m.items():
            if not isinstance(text, str):
                raise P.fail(f"{loc}.labels.{k}.{v}", f"{text!r} must be a string")
        labels[k] = dict(m)
    column_label = rt.get("column_label")
    if column_label is not None:
        if not isinstance(column_label, str):
            raise P.fail(f"{loc}.column_label", f"{column_label!r} must be a string")
        for f in _checked_fields(P, column_label, f"{loc}.column_label"):
            if f not in columns:
                raise P.fail(f"{loc}.column_label", f"{{{f}}} is not a column parameter ({', '.join(columns)})")
    title = rt.get("title", spec.title)
    if not isinstance(title, str):
        raise P.fail(f"{loc}.title", f"{title!r} must be a string")
    resolved = spec.to_json()
    values = title_values(resolved, [s for s in resolved["sweeps"] if s["label"] in [c.label for c in chosen]],
                          spec.reps)
    for f in _checked_fields(P, title, f"{loc}.title"):
        if f not in values:
            raise P.fail(f"{loc}.title", f"{{{f}}} is not set in these sweeps; allowed: "
                                         f"{', '.join(values)}")
    try:
        fill_template(title, values)
    except (ValueError, TypeError) as e:
        raise P.fail(f"{loc}.title", f"{title!r}: {e}") from None
    return TableSpec(title=title, rows=rows, columns=columns, cells=cells, ratio_to=ratio_to,
                     column_label=column_label, labels=labels, headers=headers, formats=formats,
                     scales=scales, sweeps=sweeps)


def _checked_fields(P: _Parser, template: str, where: str) -> list[str]:
    try:
        fields = template_fields(template)
    except ValueError as e:
        raise P.fail(where, f"{template!r}: {e}") from None
    for f in fields:
        if not re.match(r"^[a-z_][a-z0-9_]*$", f):
            raise P.fail(where, f"{{{f}}}: a placeholder is a parameter name, such as {{rows}} or {{theta:.2f}}")
    return fields


def load_spec(path: str | Path, *, full_scale: bool = False, cores: int | None = None,
              overrides: dict[str, str] | None = None, sim: bool = False,
              topology: str | None = None) -> Spec:
    """Read and parse a spec file (see parse_spec)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"{path}: cannot read spec: {e.strerror}") from None
    return parse_spec(text, str(path), full_scale=full_scale, cores=cores, overrides=overrides,
                      sim=sim, topology=topology)
