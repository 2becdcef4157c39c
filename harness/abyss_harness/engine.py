"""What the harness knows about the engine's command line and its JSON report.

The engine is only ever run as a subprocess (`abyss run ... --json FILE`).
Its schemes, workloads and knobs (names, kinds, ranges, choices, JSON keys)
are not copied here: they come from `abyss describe --json`, which prints the
engine's own scheme registry and knob table, read once per process. This
module turns that into spec parameters, says how a parameter becomes a flag,
and maps a report's `config` object back to parameters (which is what lets a
report print the exact command that re-runs a point).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

#: Knobs whose value may be written "cores" in a spec: the machine's core count.
CORES_KNOBS: frozenset[str] = frozenset({"threads", "partitions", "warehouses"})


class EngineError(RuntimeError):
    """The engine binary is missing or did not describe itself."""


class ParamError(ValueError):
    """A parameter value the engine would refuse; the message says what is allowed."""


@dataclass(frozen=True)
class Param:
    """One engine flag as a spec parameter.

    `kind` is int, float, str, "onoff" (written `on`/`off`, a TOML bool is
    accepted too) or "switch" (a bare flag such as `--pin`, a TOML bool).
    `config` is where the value sits in the report's `config` object, and
    `to_config` converts a parameter value to that JSON value.
    """

    name: str
    flag: str
    kind: Any
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] | None = None
    check: Callable[[str], None] | None = None
    workload: str | None = None
    cores_ok: bool = False
    config: tuple[str, ...] = ()

    def allowed(self) -> str:
        """A short phrase naming what values are allowed, for error messages."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.kind == "onoff":
            return "on or off"
        if self.kind == "switch":
            return "true or false"
        if self.kind in (int, float):
            kind = "an integer" if self.kind is int else "a number"
            rng = f" from {_fmt(self.lo)} to {_fmt(self.hi)}"
            return kind + rng + (' (or "cores")' if self.cores_ok else "")
        return "a string"

    def normalize(self, value: Any, cores: int) -> Any:
        """Return `value` as the engine expects it, or raise ParamError."""
        if self.kind is int:
            if isinstance(value, str) and value == "cores" and self.cores_ok:
                value = cores
            if isinstance(value, bool) or not isinstance(value, int):
                raise ParamError(f"{value!r} is not {self.allowed()}")
            if not self.lo <= value <= self.hi:
                raise ParamError(f"{value} is out of range; allowed: {self.allowed()}")
            return value
        if self.kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ParamError(f"{value!r} is not {self.allowed()}")
            value = float(value)
            if not self.lo <= value <= self.hi:
                raise ParamError(f"{_fmt(value)} is out of range; allowed: {self.allowed()}")
            return value
        if self.kind == "onoff":
            if isinstance(value, bool):
                return "on" if value else "off"
            if value not in ("on", "off"):
                raise ParamError(f"{value!r} is not on or off")
            return value
        if self.kind == "switch":
            if not isinstance(value, bool):
                raise ParamError(f"{value!r} is not true or false")
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not self.choices:
            value = _fmt(value)  # a flag of its own syntax that takes numbers (--sample-interval 0.5)
        if not isinstance(value, str):
            raise ParamError(f"{value!r} is not {self.allowed()}")
        if self.choices and value not in self.choices:
            raise ParamError(f"{value!r} is not {self.allowed()}")
        if self.check:
            self.check(value)
        return value

    def to_flag(self, value: Any) -> list[str]:
        """The argv words that set this parameter to `value`."""
        if self.kind == "switch":
            return [self.flag] if value else []
        return [self.flag, format_value(value)]


def _fmt(x: float | None) -> str:
    return "?" if x is None else format_value(x)


def format_value(value: Any) -> str:
    """A value as a command-line word: floats in their shortest exact form."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


@functools.lru_cache(maxsize=None)
def describe() -> dict[str, Any]:
    """`abyss describe --json` of the engine binary: its schemes, workloads and knobs."""
    binary = find_binary(sim=False)
    if not binary.is_file() and find_binary(sim=True).is_file():
        binary = find_binary(sim=True)
    if not binary.is_file():
        raise EngineError(f"engine binary not built ({binary}); ./abyss build release builds it")
    try:
        out = subprocess.run([str(binary), "describe", "--json"], capture_output=True, text=True,
                             timeout=60, check=True).stdout
        return json.loads(out)
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError) as e:
        raise EngineError(f"{binary} describe --json failed: {e}") from None


def check_text(flag: str, value: str, workload: str | None = None) -> str | None:
    """The engine's own verdict on a text value (`--ts-alloc batch:0`): its error line, or None.

    Text knobs have a syntax of their own; rather than a copy of each parser,
    the engine is asked (`abyss run --dry-run`), once per distinct value. In
    sim mode (`use_sim`) the simulated build answers, which knows values the
    native one refuses (`--ts-alloc hw`). Without a binary to ask, the run
    itself will say.
    """
    binary = find_binary()
    if not binary.is_file():
        return None
    return _check_text(str(binary), flag, value, workload)


@functools.lru_cache(maxsize=None)
def _check_text(binary: str, flag: str, value: str, workload: str | None) -> str | None:
    argv = [binary, "run", "--dry-run"] + (["--workload", workload] if workload else []) + [flag, value]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if proc.returncode == 0:
        return None
    line = proc.stderr.strip().splitlines()[0] if proc.stderr.strip() else f"exit {proc.returncode}"
    return line.removeprefix("abyss: ")


def _param_of(knob: dict[str, Any]) -> Param:
    """A spec parameter for one row of the engine's knob table."""
    name = knob["name"].replace("-", "_")
    kind: Any
    lo = hi = None
    choices = None
    check = None
    if knob["kind"] == "integer":
        kind, lo, hi = int, knob["min"], knob["max"]
    elif knob["kind"] == "real":
        kind, lo, hi = float, float(knob["min"]), float(knob["max"])
    elif knob["kind"] == "switch":
        kind = "switch"
    elif knob["kind"] == "choice" and sorted(knob["choices"]) == ["off", "on"]:
        kind = "onoff"
    elif knob["kind"] == "choice":
        kind, choices = str, tuple(knob["choices"])
    else:
        kind = str
        flag, workload = knob["flag"], knob["workload"]

        def check(value: str, flag: str = flag, workload: str | None = workload) -> None:
            err = check_text(flag, value, workload)
            if err is not None:
                raise ParamError(err)
    return Param(name=name, flag=knob["flag"], kind=kind, lo=lo, hi=hi, choices=choices, check=check,
                 workload=knob["workload"], cores_ok=name in CORES_KNOBS,
                 config=tuple(knob["json"].split(".")) if knob["json"] else ())


#: Knobs outside the configuration (no JSON key): output paths, which the
#: harness sets itself, and run-time safety checks such as --memory-check.
def _in_config(knob: dict[str, Any]) -> bool:
    return bool(knob["json"])


@dataclass(frozen=True)
class WorkloadMetric:
    """A result one workload adds to its reports (`results.<key>`), such as
    TPC-C's `tpmC`: a column of the tidy table named `key` in lower case."""

    column: str
    key: str
    unit: str
    workload: str


def _workload_metrics(d: dict[str, Any]) -> dict[str, WorkloadMetric]:
    out: dict[str, WorkloadMetric] = {}
    for w in d["workloads"]:
        for m in w.get("metrics", []):
            column = m["name"].lower()
            out.setdefault(column, WorkloadMetric(column=column, key=m["name"], unit=m["unit"],
                                                  workload=w["name"]))
    return out


def _tables() -> dict[str, Any]:
    d = describe()
    return {
        "SCHEMES": tuple(s["name"] for s in d["schemes"]),
        "WORKLOADS": tuple(w["name"] for w in d["workloads"]),
        "BREAKDOWN": tuple(d["breakdown"]),
        "ABORT_CAUSES": tuple(d["abort_causes"]),
        "RUN_PARAMS": {p.name: p for p in (_param_of(k) for k in d["knobs"] if _in_config(k))},
        "WORKLOAD_METRICS": _workload_metrics(d),
    }


_LAZY = ("SCHEMES", "WORKLOADS", "BREAKDOWN", "ABORT_CAUSES", "RUN_PARAMS", "WORKLOAD_METRICS")


def __getattr__(name: str) -> Any:
    """SCHEMES, WORKLOADS, BREAKDOWN, ABORT_CAUSES, RUN_PARAMS and
    WORKLOAD_METRICS, read from the engine on first use.

    SCHEMES lists every scheme in registry order (the order of plot legends);
    RUN_PARAMS maps spec keys (flag names with `_` for `-`) to parameters, in
    the order of `abyss run --help`; WORKLOAD_METRICS maps a column name to
    the metric a workload reports under `results` (`tpmc` is TPC-C's `tpmC`),
    in registry order.
    """
    if name in _LAZY:
        tables = _tables()
        globals().update(tables)
        return tables[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def argv_for(params: dict[str, Any]) -> list[str]:
    """The engine argv (`run` and its flags, without the binary and `--json`)
    for a resolved point.

    Flags come in the table's order, so equal points give equal command lines.
    """
    argv = ["run"]
    for name, param in __getattr__("RUN_PARAMS").items():
        if name in params:
            argv += param.to_flag(params[name])
    return argv


def _to_param(param: Param, value: Any) -> Any:
    if param.kind == "onoff":
        return "on" if value else "off"
    if param.kind is float and isinstance(value, int):
        return float(value)
    return value


def config_to_params(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Map a report's `config` object to run parameters.

    Returns (params, unknown): `unknown` holds, flattened with `.`, every config
    key this table does not know (a field the engine gained later), so callers
    can keep it in the table and warn that a re-run command may be incomplete.
    """
    params: dict[str, Any] = {}
    known: set[tuple[str, ...]] = set()
    for name, param in __getattr__("RUN_PARAMS").items():
        node: Any = config
        for key in param.config:
            node = node.get(key) if isinstance(node, dict) else None
        known.add(param.config)
        if node is not None:
            params[name] = _to_param(param, node)
    unknown: dict[str, Any] = {}

    def walk(node: dict[str, Any], path: tuple[str, ...]) -> None:
        for key, value in node.items():
            sub = path + (key,)
            if isinstance(value, dict):
                walk(value, sub)
            elif sub not in known:
                unknown[".".join(sub)] = value

    walk(config, ())
    return params, unknown


def rerun_command(config: dict[str, Any]) -> str:
    """The exact `./abyss run ...` command line that re-runs a report's config.

    Every knob is written out, not only the ones that differ from the
    defaults, so the command means the same thing if a default changes.
    """
    params, _ = config_to_params(config)
    return "./abyss " + shlex.join(argv_for(params))


def repo_root() -> Path:
    """The checkout the harness belongs to: $ABYSS_ROOT, else found from this file."""
    env = os.environ.get("ABYSS_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "abyss").is_file() and (parent / "CMakeLists.txt").is_file():
            return parent
    return Path.cwd()


_SIM_MODE = False


def use_sim(on: bool = True) -> None:
    """Make `find_binary()` answer the simulated build (for --sim): runs and
    the checks of text values go to it. The knob table (`describe`) is the
    same in both builds and is read from the native one when it is there."""
    global _SIM_MODE
    _SIM_MODE = on


@contextlib.contextmanager
def sim_mode(on: bool) -> Iterator[None]:
    """`use_sim(on)` for the duration of a block (a spec parsed for --sim
    asks the simulated build about its text values)."""
    before = _SIM_MODE
    use_sim(on or before)
    try:
        yield
    finally:
        use_sim(before)


def find_binary(sim: bool | None = None) -> Path:
    """The engine binary: $ABYSS_BIN, else the release build of the checkout;
    with `sim` (default: whether `use_sim` is on) $ABYSS_SIM_BIN, else the
    simulated build (build/sim/apps/abyss)."""
    if _SIM_MODE if sim is None else sim:
        env = os.environ.get("ABYSS_SIM_BIN")
        return Path(env) if env else repo_root() / "build" / "sim" / "apps" / "abyss"
    env = os.environ.get("ABYSS_BIN")
    return Path(env) if env else repo_root() / "build" / "release" / "apps" / "abyss"


def revision_mismatch(binary: Path) -> str | None:
    """A warning when the binary's git revision differs from the checkout's.

    The engine stamps the revision it was built from; a binary left unbuilt
    since (ABYSS_NO_BUILD=1, say) reports an older one, and every run report
    would then carry it.
    """
    try:
        out = subprocess.run([str(binary), "version"], capture_output=True, text=True, timeout=10).stdout
        head = subprocess.run(["git", "-C", str(repo_root()), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    words = out.split()
    built = words[1] if len(words) > 1 else ""
    if not head or not built or built == "unknown" or head.startswith(built) or built.startswith(head):
        return None
    return (f"note: the engine reports git revision {built} but the checkout is at {head}; "
            f"run reports will carry {built} (./abyss build release rebuilds it)")
