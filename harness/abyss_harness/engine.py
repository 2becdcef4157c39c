"""What the harness knows about the engine's command line and its JSON report.

The engine is only ever run as a subprocess (`abyss run ... --json FILE`), so
this module is the one place that mirrors its interface: the flags a spec may
set (names, types, ranges, as `abyss run --help` prints them), how a spec
parameter becomes a flag, and how a report's `config` object maps back to
those parameters (which is what lets a report print the exact command that
re-runs a point). A test compares this table with the real `--help` output
when the binary is present, so the two cannot drift apart silently.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

#: Every scheme the engine accepts for `--cc`, in the order plots list them:
#: the no-CC baseline, 2PL, T/O, then the optimistic schemes with per-row
#: timestamps (Abyss §2, Tale §2).
SCHEMES: tuple[str, ...] = (
    "none", "no_wait", "wait_die", "dl_detect", "wound_wait",
    "timestamp", "mvcc", "occ", "hstore", "silo", "tictoc",
)

WORKLOADS: tuple[str, ...] = ("ycsb", "tpcc")

#: Time-breakdown categories of a run, in the order of docs/metrics.md (Tale §4.1).
BREAKDOWN: tuple[str, ...] = (
    "useful", "abort", "backoff", "ts_alloc", "index", "wait", "commit", "cc_manager", "other",
)

#: Commands a spec may drive.
COMMANDS: tuple[str, ...] = ("run", "bench ts")

TS_ALLOC_RE = re.compile(r"^(mutex|atomic|clock|batch:([0-9]+))$")
TPCC_MIX_NAMES = ("neworder", "payment")


class ParamError(ValueError):
    """A parameter value the engine would refuse; the message says what is allowed."""


def _check_ts_alloc(value: str) -> None:
    m = TS_ALLOC_RE.match(value)
    if not m or (m.group(2) is not None and not 1 <= int(m.group(2)) <= 1_000_000):
        raise ParamError(f"{value!r} is not one of mutex, atomic, clock, batch:N (1 <= N <= 1000000)")


def _check_tpcc_mix(value: str) -> None:
    allowed = "NAME=PERCENT,... with NAME in neworder, payment, each at most once, summing to 100"
    seen: dict[str, int] = {}
    for part in value.split(","):
        name, eq, pct = part.partition("=")
        if not eq or name not in TPCC_MIX_NAMES or name in seen or not pct.isdigit():
            raise ParamError(f"{value!r} is not {allowed}")
        seen[name] = int(pct)
    if sum(seen.values()) != 100:
        raise ParamError(f"{value!r}: percentages sum to {sum(seen.values())}; allowed: {allowed}")


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


def _p(name: str, kind: Any, lo: float | None = None, hi: float | None = None, **kw: Any) -> Param:
    return Param(name=name, flag="--" + name.replace("_", "-"), kind=kind, lo=lo, hi=hi, **kw)


#: Parameters of `abyss run`, in the order of `abyss run --help`. Spec keys are
#: the flag names with `_` for `-`.
RUN_PARAMS: dict[str, Param] = {p.name: p for p in (
    _p("workload", str, choices=WORKLOADS, config=("workload",)),
    _p("cc", str, choices=SCHEMES, config=("cc",)),
    _p("threads", int, 1, 1024, cores_ok=True, config=("threads",)),
    _p("duration", float, 0.01, 86400, config=("duration_s",)),
    _p("warmup", float, 0, 3600, config=("warmup_s",)),
    _p("pin", "switch", config=("pin",)),
    _p("seed", int, 0, 2**64 - 1, config=("seed",)),
    _p("queries_per_worker", int, 1, 1_000_000, config=("queries_per_worker",)),
    _p("ts_alloc", str, check=_check_ts_alloc, config=("ts_alloc",)),
    _p("latch", str, choices=("spin", "queue"), config=("latch",)),
    _p("backoff", str, choices=("none", "exp"), config=("backoff",)),
    _p("backoff_max_us", int, 0, 1_000_000, config=("backoff_max_us",)),
    _p("dl_timeout", int, 0, 10_000_000, config=("dl_timeout_us",)),
    _p("dl_detect", "onoff", config=("dl_detect",)),
    _p("rows", int, 1, 17_179_869_184, workload="ycsb", config=("ycsb", "rows")),
    _p("req_per_txn", int, 1, 64, workload="ycsb", config=("ycsb", "req_per_txn")),
    _p("theta", float, 0, 0.9999, workload="ycsb", config=("ycsb", "theta")),
    _p("write_ratio", float, 0, 1, workload="ycsb", config=("ycsb", "write_ratio")),
    _p("read_only_txn_ratio", float, 0, 1, workload="ycsb", config=("ycsb", "read_only_txn_ratio")),
    _p("partitions", int, 1, 1024, workload="ycsb", cores_ok=True, config=("ycsb", "partitions")),
    _p("multi_part_ratio", float, 0, 1, workload="ycsb", config=("ycsb", "multi_part_ratio")),
    _p("parts_per_txn", int, 1, 64, workload="ycsb", config=("ycsb", "parts_per_txn")),
    _p("key_order", str, choices=("random", "sorted"), workload="ycsb", config=("ycsb", "key_order")),
    _p("fields", int, 1, 64, workload="ycsb", config=("ycsb", "fields")),
    _p("field_size", int, 1, 4096, workload="ycsb", config=("ycsb", "field_size")),
    _p("warehouses", int, 1, 1024, workload="tpcc", cores_ok=True, config=("tpcc", "warehouses")),
    _p("tpcc_schema", str, choices=("full", "small"), workload="tpcc", config=("tpcc", "schema")),
    _p("tpcc_inserts", "onoff", workload="tpcc", config=("tpcc", "inserts")),
    _p("tpcc_mix", str, check=_check_tpcc_mix, workload="tpcc", config=("tpcc", "mix")),
)}

#: Parameters of `abyss bench ts` (Abyss Fig. 6 and 7).
BENCH_TS_PARAMS: dict[str, Param] = {p.name: p for p in (
    _p("duration", float, 0.01, 600),
    _p("max_threads", int, 0, 1024, cores_ok=True),
    _p("ycsb_duration", float, 0, 600),
    _p("ycsb_theta", float, 0, 0.9999),
)}


#: What distinguishes the run reports inside one `bench ts` document: it runs
#: TIMESTAMP on YCSB once per allocation method and contention level.
BENCH_TS_RUN_AXES: tuple[str, ...] = ("theta", "ts_alloc")


def params_for(command: str) -> dict[str, Param]:
    """The parameter table of a spec command (`run` or `bench ts`)."""
    return RUN_PARAMS if command == "run" else BENCH_TS_PARAMS


def argv_for(command: str, params: dict[str, Any]) -> list[str]:
    """The engine argv (without the binary and `--json`) for a resolved point.

    Flags come in the table's order, so equal points give equal command lines.
    """
    table = params_for(command)
    argv = command.split()
    for name, param in table.items():
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
    for name, param in RUN_PARAMS.items():
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
    return "./abyss " + shlex.join(argv_for("run", params))


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


def find_binary() -> Path:
    """The engine binary: $ABYSS_BIN, else the release build of the checkout."""
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
