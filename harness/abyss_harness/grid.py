"""Grid expansion: a spec becomes points (one per combination of axis values)
and runs (each point repeated `reps` times).

A point's key joins its axis values with a short hash of every resolved
parameter, so a run file names what it measured and a changed spec never
mistakes an old file for one of its own runs. Repetition k of a point uses
seed `seed + k - 1` (seed 1 unless the spec sets one), so repetitions draw
different queries. A window given by the per-core rule (`PerCore`, used by
`--sim`) becomes a number of seconds at each point, from its threads.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any

from . import engine
from .spec import DEFAULT_LABEL, PerCore, SameAs, Spec, SpecError, Sweep


@dataclass(frozen=True)
class Point:
    """One combination of parameter values of one sweep."""

    sweep: str
    axes: dict[str, Any]      # the swept values that define this point
    params: dict[str, Any]    # every parameter passed to the engine (seed is the base seed)
    key: str                  # file-name-safe, unique within a spec


@dataclass(frozen=True)
class Run:
    """One repetition of a point: the engine argv and where its JSON goes."""

    point: Point
    rep: int
    argv: list[str]
    file: str                 # relative to the experiment directory

    def label(self) -> str:
        """A short human label, e.g. `high cc=silo threads=2 #1`."""
        axes = " ".join(f"{k}={engine.format_value(v)}" for k, v in self.point.axes.items())
        sweep = "" if self.point.sweep == DEFAULT_LABEL else self.point.sweep
        return f"{sweep} {axes} #{self.rep}".strip()


_SAFE = re.compile(r"[^A-Za-z0-9._]+")


def _slug(value: Any) -> str:
    return _SAFE.sub("", engine.format_value(value)) or "x"


def _point(spec: Spec, sweep: Sweep, combo: dict[str, Any]) -> Point:
    params = {**sweep.fixed, **combo}
    cc = params.get("cc")
    if cc in sweep.per_scheme:
        params.update(sweep.per_scheme[cc])
    for name, v in list(params.items()):
        if isinstance(v, SameAs):
            params[name] = params[v.name]
    for name, v in list(params.items()):
        if isinstance(v, PerCore):
            params[name] = v.at(params.get("threads", 1))
    table = engine.RUN_PARAMS
    for name, v in params.items():      # a same_as target may be out of this parameter's range
        try:
            params[name] = table[name].normalize(v, spec.cores)
        except engine.ParamError as e:
            raise SpecError(f"{spec.source}: sweep {sweep.label!r}: {name}: {e} "
                            f"(at {', '.join(f'{k}={v}' for k, v in combo.items())})") from None
    parts, per = params.get("partitions", 1), params.get("parts_per_txn", 1)
    if per > parts:
        raise SpecError(f"{spec.source}: sweep {sweep.label!r}: parts_per_txn {per} must be at "
                        f"most partitions ({parts}) (at {combo})")
    params.setdefault("seed", 1)
    digest = hashlib.sha1(json.dumps({"command": spec.command, "params": params},
                                     sort_keys=True).encode()).hexdigest()[:8]
    words = [sweep.label] + [f"{k}-{_slug(v)}" for k, v in combo.items()]
    return Point(sweep=sweep.label, axes=dict(combo), params=params,
                 key="_".join(words) + "_" + digest)


def points(spec: Spec) -> list[Point]:
    """Every point of every sweep, the last axis varying fastest."""
    out: list[Point] = []
    with engine.sim_mode(spec.sim):
        for sweep in spec.sweeps:
            names = list(sweep.axes)
            for values in itertools.product(*(sweep.axes[n] for n in names)):
                out.append(_point(spec, sweep, dict(zip(names, values))))
    return out


def runs(spec: Spec, reps: int | None = None) -> list[Run]:
    """Every run, repetition-major: all points once, then all again, so that a
    slow drift of the machine spreads over all points instead of biasing some.
    With the spec's `interleave`, the sweeps' points at one combination of
    axis values run back to back (see Spec.interleave)."""
    reps = reps or spec.reps
    order = points(spec)
    if spec.interleave:
        # Sweep-minor: every sweep's point at one combination of axis values,
        # then the next combination (first-seen order of both).
        groups: dict[tuple, list[Point]] = {}
        for p in order:
            groups.setdefault(tuple(sorted((k, str(v)) for k, v in p.axes.items())), []).append(p)
        order = [p for group in groups.values() for p in group]
    out: list[Run] = []
    for rep in range(1, reps + 1):
        for p in order:
            params = dict(p.params)
            params["seed"] = p.params["seed"] + rep - 1
            out.append(Run(point=p, rep=rep, argv=engine.argv_for(params),
                           file=f"runs/{p.key}.r{rep}.json"))
    return out


#: Host seconds per simulated core per virtual second (YCSB at theta 0.6 on
#: the mesh: 1024 cores for 0.6 ms took about 2.3 s of the host).
SIM_HOST_PER_CORE_SECOND = 3.7


def estimate_seconds(run: Run) -> float:
    """A rough wall time for one run, for the dry run and the first ETA: the
    window, the warm-up, the load (measured on a 2-core machine) and start-up.
    A simulated run (`sim_cores`) costs the host in proportion to its cores
    times its virtual window."""
    p = run.point.params
    workload = p.get("workload", "ycsb")
    load = (p.get("rows", 1 << 20) * 1.3e-6 if workload == "ycsb"
            else 0.3 * p.get("warehouses", 1) / min(2, p.get("warehouses", 1)) if workload == "tpcc"
            else 0.0)
    window = p.get("duration", 1.0) + p.get("warmup", 0.2)
    if p.get("steady_commits"):
        # Sized by rule: about as long as 16 of the shortest windows, capped.
        window = p.get("warmup", 0.2) + 16 * p.get("duration", 1.0)
        if p.get("max_duration"):
            window = min(window, p["max_duration"])
    if p.get("sim_cores"):
        window *= SIM_HOST_PER_CORE_SECOND * p["sim_cores"]
    return window + load + 0.15
