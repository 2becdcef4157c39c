"""`abyss claims`: what the papers say about their figures, checked against results.

harness/claims.toml lists the statements the Abyss and Tale papers make in
their text about a figure (a peak, a ranking, a ratio, which share of time
dominates), each with a test over the reproduction's results on simulated
cores (`./abyss reproduce NAME --sim`). This command reads each figure's
results directory, runs every test, and prints one row a claim: what the
paper says, what was measured, and whether it agrees; a claim that departs
shows the reason the claims file gives for it. A claim whose results are
missing says so and counts as neither.

A claim's test (`test = ...`) reads the medians of one sweep's points,
narrowed by `where` (parameter = value), metric `metric` (default
throughput; a list adds metrics up, as time shares) along `x` (default
threads):

- scales: throughput(N) / throughput(1) >= factor * N at every N in `at`
  (default: the largest); `sublinear`: below it.
- peak: the point of the largest value lies in `within` = [lo, hi]; with
  `falls`, the last point is below `falls` times the peak.
- flat_after: no point beyond x = `after` exceeds `slack` times its value.
- rises, falls: the last point is above (below) the first, and no step goes
  the other way by more than `slack` (a fraction, default 0.05).
- order: among the groups `by` (default cc) at `where`, every one of
  `higher` is at least `factor` times every one of `lower` (default: the
  other groups).
- ratio: the value at selection `num` over the value at `den` (each a
  `where`, optionally naming another `spec` or `sweep`) lies in `within`.
- largest: the time share `category` is the largest of the non-useful
  shares, or at least `at_least` when given.
- bound: the value lies in [`min`, `max`].
- same_peak: the peak lies within a factor `factor` (default 2) of the
  peak of `other` (a selection, usually another spec's); with `differ`,
  it does not.
- same_slope: the speedup from one core to `at` (default the largest core
  count both hold) lies within a factor `factor` (default 1.15) of that of
  `other` (a selection, usually another spec's); with `differ`, it does
  not; with `below`, it is below the other's by more than the factor.

With `each` (a parameter), the test runs for each of its values and the
claim agrees when `need` of them pass (default all).
"""

from __future__ import annotations

import json
import math
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd
from rich.console import Console
from rich.table import Table

from . import engine, reproduce, store
from .cli import UsageParser
from .metrics import FRACTION_COLUMNS

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
CLAIM_KEYS = ("id", "figure", "says", "spec", "sweep", "test", "where", "metric", "x", "each", "need", "reason",
              "negate", "untestable", "factor", "at", "within", "falls", "after", "slack", "by", "higher", "lower",
              "num", "den", "category", "at_least", "at_most", "min", "max", "other", "differ", "below")
SELECTION_KEYS = ("spec", "sweep", "where", "metric")


class ClaimError(Exception):
    """The claims file or a claim's data is unusable; the message says which."""


@dataclass
class Claim:
    id: str
    figure: str
    says: str
    spec: str
    test: str
    args: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    untestable: str = ""    # why the results cannot test it (a size the model does not reach, ...)


@dataclass
class Verdict:
    claim: Claim
    agrees: bool | None          # None: no results to test it on
    measured: str
    unsteady: bool = False       # a point it read did not reach steady state


# ---- the claims file ----


def claims_path() -> Path:
    return engine.repo_root() / "harness" / "claims.toml"


def read_claims(path: Path) -> list[Claim]:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ClaimError(f"{path}: {e}") from e
    out, seen = [], set()
    for i, c in enumerate(raw.get("claim", [])):
        where = f"{path.name}: claim {c.get('id', i + 1)}"
        unknown = sorted(set(c) - set(CLAIM_KEYS))
        if unknown:
            raise ClaimError(f"{where}: unknown key {unknown[0]!r}")
        for key in ("id", "figure", "says", "spec", "test"):
            if not isinstance(c.get(key), str) or not c[key]:
                raise ClaimError(f"{where}: `{key}` must be a non-empty string")
        if c["test"] not in TESTS:
            raise ClaimError(f"{where}: test {c['test']!r} is not one of {', '.join(TESTS)}")
        if c["id"] in seen:
            raise ClaimError(f"{where}: id given twice")
        seen.add(c["id"])
        args = {k: v for k, v in c.items()
                if k not in ("id", "figure", "says", "spec", "test", "reason", "untestable")}
        out.append(Claim(c["id"], c["figure"], c["says"], c["spec"], c["test"], args, c.get("reason", ""),
                         c.get("untestable", "")))
    return out


# ---- results ----


class Results:
    """Each spec's simulated results, loaded once: one row a point, medians."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, pd.DataFrame | None] = {}

    def points(self, spec: str) -> pd.DataFrame | None:
        if spec not in self._cache:
            self._cache[spec] = self._load(spec)
        return self._cache[spec]

    def _load(self, spec: str) -> pd.DataFrame | None:
        # The spec's own machine (its [sim] topology), not another it was run on.
        exp = self.root / f"{spec}-sim-{sim_topology(spec)}"
        if not (exp / store.MANIFEST).is_file():
            return None
        runs = store.load_experiment(exp).runs
        if runs.empty:
            return None
        numeric = [c for c in runs.columns if c not in store.PARAM_COLUMNS and c not in store.ID_COLUMNS
                   and pd.api.types.is_numeric_dtype(runs[c])]
        g = runs.groupby(["sweep", "point"], sort=False, dropna=False)
        first = g[[c for c in runs.columns if c not in numeric]].first()
        med = g[numeric].median()
        df = first.drop(columns=["sweep", "point"], errors="ignore").join(med).reset_index()
        if "steady" in runs:
            df["steady"] = g["steady"].agg(lambda v: bool(v.dropna().astype(bool).all()) if v.notna().any()
                                           else True).values
        return df


def sim_topology(spec: str) -> str:
    """The topology a packaged spec's [sim] section names (mesh if none)."""
    path = reproduce.spec_paths().get(spec)
    if path is None:
        return "mesh"
    return str(tomllib.loads(path.read_text(encoding="utf-8")).get("sim", {}).get("topology", "mesh"))


def _matches(col: pd.Series, want: Any) -> pd.Series:
    if isinstance(want, list):
        hit = pd.Series(False, index=col.index)
        for w in want:
            hit |= _matches(col, w)
        return hit
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        num = pd.to_numeric(col, errors="coerce")
        return (num - want).abs() <= 1e-9 * max(1.0, abs(want))
    return col.astype(str) == str(want)


def values(df: pd.DataFrame, metric: str | list[str]) -> pd.Series:
    """A metric's column, or the sum of a list of them (time shares added up)."""
    names = metric if isinstance(metric, list) else [metric]
    for m in names:
        if m not in df:
            raise ClaimError(f"no metric {m!r} in the results")
    return df[names].sum(axis=1) if isinstance(metric, list) else df[metric]


def select(df: pd.DataFrame, sweep: str | None, where: dict[str, Any]) -> pd.DataFrame:
    if sweep is not None:
        df = df[df["sweep"] == sweep]
    for k, v in where.items():
        if k not in df:
            raise ClaimError(f"no parameter {k!r} in the results")
        df = df[_matches(df[k], v)]
    return df


# ---- the tests ----


def _fmt(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    a = abs(v)
    if a >= 1e9:
        return f"{v / 1e9:.3g} G"
    if a >= 1e6:
        return f"{v / 1e6:.3g} M"
    if a >= 1e3:
        return f"{v / 1e3:.3g} K"
    if a >= 1:
        return f"{v:.3g}"
    return f"{v:.2g}"


def _pct(v: float) -> str:
    return f"{100 * v:.0f}%"


def _xs(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


class Ctx:
    """One claim's data: the selected points, sorted along x."""

    def __init__(self, claim: Claim, df: pd.DataFrame, results: Results, group: dict[str, Any] | None = None) -> None:
        self.claim, self.results = claim, results
        self.group = group or {}   # with `each`: the value this pass tests, also narrowing `num` and `den`
        self.metric = claim.args.get("metric", "throughput")
        self.x = claim.args.get("x", "threads")
        self.df = df
        self.unsteady = False

    def series(self, df: pd.DataFrame | None = None) -> list[tuple[Any, float]]:
        df = self.df if df is None else df
        if df.empty:
            raise ClaimError(f"no points of {self.claim.spec} match the claim's selection")
        df = df.sort_values(self.x)
        self.note(df)
        return [(x, float(v)) for x, v in zip(df[self.x], values(df, self.metric))]

    def note(self, df: pd.DataFrame) -> None:
        if "steady" in df and not df["steady"].astype(bool).all():
            self.unsteady = True

    def points(self, sel: dict[str, Any]) -> pd.DataFrame:
        spec = sel.get("spec", self.claim.spec)
        pts = self.results.points(spec)
        if pts is None:
            raise MissingResults(spec)
        return select(pts, sel.get("sweep", self.claim.args.get("sweep")), {**self.group, **sel.get("where", {})})

    def value(self, sel: dict[str, Any]) -> float:
        spec = sel.get("spec", self.claim.spec)
        df = self.points(sel)
        metric = sel.get("metric", self.metric)
        if len(df) != 1:
            raise ClaimError(f"selection {sel} holds {len(df)} points of {spec}, not 1")
        self.note(df)
        return float(values(df, metric).iloc[0])


class MissingResults(Exception):
    """A spec's simulated results are not in the results directory."""


def t_scales(c: Ctx, a: dict[str, Any], sublinear: bool = False) -> tuple[bool, str]:
    s = dict(c.series())
    if 1 not in s or s[1] <= 0:
        raise ClaimError("no one-core point to scale from")
    factor = a.get("factor", 0.7)
    at = a.get("at", max(s))
    at = at if isinstance(at, list) else [at]
    parts, ok = [], True
    for n in at:
        sp = s[n] / s[1]
        good = sp < factor * n if sublinear else sp >= factor * n
        ok &= good
        parts.append(f"{sp:.0f}x at {n} ({sp / n:.2f} of linear)")
    return ok, ", ".join(parts)


def t_peak(c: Ctx, a: dict[str, Any]) -> tuple[bool, str]:
    s = c.series()
    x, v = max(s, key=lambda p: p[1])
    lo, hi = a["within"]
    ok = lo <= x <= hi
    text = f"peak {_fmt(v)} at {_xs(x)}"
    if "falls" in a:
        last_x, last = s[-1]
        ok &= last < a["falls"] * v
        text += f"; {_fmt(last)} at {_xs(last_x)} ({last / v:.2f} of the peak)"
    return ok, text


def t_flat_after(c: Ctx, a: dict[str, Any]) -> tuple[bool, str]:
    s = dict(c.series())
    n, slack = a["after"], a.get("slack", 1.1)
    later = {x: v for x, v in s.items() if x > n}
    top = max(later.values())
    return top <= slack * s[n], f"{_fmt(s[n])} at {_xs(n)}, at most {_fmt(top)} beyond ({top / s[n]:.2f}x)"


def t_trend(c: Ctx, a: dict[str, Any], rising: bool) -> tuple[bool, str]:
    s = c.series()
    slack = a.get("slack", 0.05)
    vals = [v for _, v in s]
    ok = vals[-1] > vals[0] if rising else vals[-1] < vals[0]
    for p, q in zip(vals, vals[1:]):
        ok &= (q >= p * (1 - slack)) if rising else (q <= p * (1 + slack))
    return ok, " → ".join(f"{_fmt(v)}" for v in vals) + f" ({c.x} {_xs(s[0][0])}..{_xs(s[-1][0])})"


def _groups(c: Ctx, by: str) -> dict[Any, float]:
    if by not in c.df:
        raise ClaimError(f"no parameter {by!r} in the results")
    c.note(c.df)
    return {k: float(v) for k, v in zip(c.df[by], values(c.df, c.metric))}


def t_order(c: Ctx, a: dict[str, Any]) -> tuple[bool, str]:
    vals = _groups(c, a.get("by", "cc"))
    if "higher" not in a and "lower" not in a:
        raise ClaimError("an order test names `higher` or `lower`")
    higher = a.get("higher") or [k for k in vals if k not in a["lower"]]
    lower = a.get("lower") or [k for k in vals if k not in higher]
    factor = a.get("factor", 1.0)
    missing = [k for k in higher + lower if k not in vals]
    if missing:
        raise ClaimError(f"no point for {missing[0]!r}")
    ok = min(vals[h] for h in higher) >= factor * max(vals[lo] for lo in lower)
    ranked = sorted(vals.items(), key=lambda kv: -kv[1])
    return ok, ", ".join(f"{k} {_fmt(v)}" for k, v in ranked)


def t_ratio(c: Ctx, a: dict[str, Any]) -> tuple[bool, str]:
    num, den = c.value(a["num"]), c.value(a["den"])
    r = num / den if den else math.inf
    lo, hi = a["within"]
    return lo <= r <= hi, f"{_fmt(num)} / {_fmt(den)} = {r:.2f}"


def t_largest(c: Ctx, a: dict[str, Any]) -> tuple[bool, str]:
    cats = a["category"] if isinstance(a["category"], list) else [a["category"]]
    mine_cols = [f"frac_{x}" for x in cats]
    others = [f for f in FRACTION_COLUMNS if f not in mine_cols and f != "frac_useful" and f in c.df]
    if len(c.df) != 1:
        raise ClaimError(f"the selection holds {len(c.df)} points, not 1")
    c.note(c.df)
    row = c.df.iloc[0]
    mine = sum(float(row[f]) for f in mine_cols)
    top_other = max(others, key=lambda f: float(row[f]))
    if "at_least" in a or "at_most" in a:
        ok = a.get("at_least", 0) <= mine <= a.get("at_most", 1)
    else:
        ok = mine >= float(row[top_other])
    return ok, f"{'+'.join(cats)} {_pct(mine)} (largest other: {top_other[5:]} {_pct(float(row[top_other]))})"


def t_bound(c: Ctx, a: dict[str, Any]) -> tuple[bool, str]:
    if len(c.df) != 1:
        raise ClaimError(f"the selection holds {len(c.df)} points, not 1")
    c.note(c.df)
    v = float(values(c.df, c.metric).iloc[0])
    name = "+".join(c.metric) if isinstance(c.metric, list) else c.metric
    return a.get("min", -math.inf) <= v <= a.get("max", math.inf), f"{name} {_fmt(v)}"


def t_same_peak(c: Ctx, a: dict[str, Any]) -> tuple[bool, str]:
    x, v = max(c.series(), key=lambda p: p[1])
    other = c.points(a["other"])
    if other.empty:
        raise ClaimError(f"the selection {a['other']} holds no points")
    ox, ov = max(c.series(other), key=lambda p: p[1])
    factor = a.get("factor", 2)
    same = ox / factor <= x <= ox * factor
    return same != bool(a.get("differ", False)), f"peak at {_xs(x)} ({_fmt(v)}); the other's at {_xs(ox)} ({_fmt(ov)})"


def t_same_slope(c: Ctx, a: dict[str, Any]) -> tuple[bool, str]:
    mine, theirs = c.series(), c.series(c.points(a["other"]))
    for name, s in (("the claim's", mine), (f"the selection {a['other']}", theirs)):
        if len({x for x, _ in s}) != len(s):
            raise ClaimError(f"{name} selection holds more than one point a core count; narrow its `where`")
    mine, theirs = dict(mine), dict(theirs)
    shared = sorted(set(mine) & set(theirs))
    if 1 not in shared or len(shared) < 2:
        raise ClaimError("the two selections share no core count beyond one core")
    n = a.get("at", shared[-1])
    if n not in shared:
        raise ClaimError(f"the two selections do not both hold {_xs(n)}")
    sp, osp = mine[n] / mine[1], theirs[n] / theirs[1]
    factor = a.get("factor", 1.15)
    if a.get("below"):
        ok = sp * factor < osp
    else:
        ok = (osp / factor <= sp <= osp * factor) != bool(a.get("differ", False))
    return ok, f"{sp:.0f}x from 1 to {_xs(n)}; the other's {osp:.0f}x ({sp / osp:.2f} of it)"


TESTS: dict[str, Callable[[Ctx, dict[str, Any]], tuple[bool, str]]] = {
    "scales": t_scales,
    "sublinear": lambda c, a: t_scales(c, a, sublinear=True),
    "peak": t_peak,
    "flat_after": t_flat_after,
    "rises": lambda c, a: t_trend(c, a, True),
    "falls": lambda c, a: t_trend(c, a, False),
    "order": t_order,
    "ratio": t_ratio,
    "largest": t_largest,
    "bound": t_bound,
    "same_peak": t_same_peak,
    "same_slope": t_same_slope,
}


def check(claim: Claim, results: Results) -> Verdict:
    if claim.untestable:
        return Verdict(claim, None, f"untested: {claim.untestable}")
    negate = bool(claim.args.get("negate", False))
    v = _check(claim, results)
    if v.agrees is not None:
        v.agrees = bool(v.agrees) != negate   # a numpy bool from the tests becomes Python's
    return v


def _check(claim: Claim, results: Results) -> Verdict:
    try:
        pts = results.points(claim.spec)
        if pts is None:
            raise MissingResults(claim.spec)
        a = claim.args
        df = select(pts, a.get("sweep"), a.get("where", {}))
        test = TESTS[claim.test]
        if "each" not in a:
            ctx = Ctx(claim, df, results)
            ok, text = test(ctx, a)
            return Verdict(claim, ok, text, ctx.unsteady)
        key = a["each"]
        if key not in df:
            raise ClaimError(f"no parameter {key!r} in the results")
        passed, parts, unsteady = 0, [], False
        values = list(dict.fromkeys(df[key]))
        for v in values:
            ctx = Ctx(claim, df[_matches(df[key], v)], results, {key: v})
            ok, text = test(ctx, a)
            passed += ok
            unsteady |= ctx.unsteady
            parts.append(f"{_xs(v)}: {text}" + ("" if ok else " ✗"))
        need = a.get("need", len(values))
        return Verdict(claim, passed >= need, f"{passed} of {len(values)} (need {need}); " + "; ".join(parts),
                       unsteady)
    except MissingResults as e:
        return Verdict(claim, None, f"no results for {e.args[0]} (./abyss reproduce {e.args[0]} --sim)")
    except (ClaimError, KeyError, ValueError, ZeroDivisionError) as e:
        return Verdict(claim, None, f"cannot test: {e}")


# ---- output ----


def _verdict_word(v: Verdict) -> str:
    return {True: "agrees", False: "departs", None: "untested"}[v.agrees]


def markdown(verdicts: list[Verdict]) -> str:
    """A table a figure, the figures in the order they first appear."""
    order = list(dict.fromkeys(v.claim.figure for v in verdicts))
    verdicts = sorted(verdicts, key=lambda v: order.index(v.claim.figure))
    lines: list[str] = []
    figure = None
    for v in verdicts:
        if v.claim.figure != figure:
            figure = v.claim.figure
            group = [w for w in verdicts if w.claim.figure == figure]
            lines += ["", f"**{figure}**: {count_text(group)}", "",
                      "| # | the paper says | measured | | why it departs |", "|---|---|---|---|---|"]
        measured = v.measured + (" (a point not at steady state)" if v.unsteady else "")
        why = v.claim.reason if v.agrees is False else ""
        lines.append(f"| {v.claim.id} | {v.claim.says} | {measured.replace('|', '/')} | {_verdict_word(v)} | {why} |")
    lines += ["", f"All: {count_text(verdicts)}."]
    return "\n".join(lines[1:]) + "\n"


def count_text(vs: list[Verdict]) -> str:
    tested = [v for v in vs if v.agrees is not None]
    agree = sum(1 for v in tested if v.agrees)
    text = f"{agree} of {len(tested)} agree"
    if len(tested) < len(vs):
        text += f" ({len(vs) - len(tested)} untested)"
    return text


def table(verdicts: list[Verdict]) -> Table:
    t = Table(title=f"the papers' claims against this checkout's simulated results: {count_text(verdicts)}")
    for col in ("claim", "figure", "the paper says", "measured", ""):
        t.add_column(col)
    for v in verdicts:
        t.add_row(v.claim.id, v.claim.figure, v.claim.says,
                  v.measured + (" (not steady)" if v.unsteady else ""), _verdict_word(v))
    return t


def main(argv: list[str] | None = None) -> int:
    ap = UsageParser(prog="abyss claims", description=__doc__.split("\n\n")[0])
    ap.add_argument("specs", nargs="*", metavar="NAME", help="only the claims on these reproductions")
    ap.add_argument("--results", type=Path, help="results directory (default: results/ of the checkout)")
    ap.add_argument("--claims", type=Path, help="the claims file (default: harness/claims.toml)")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables, one a figure")
    ap.add_argument("--json", type=Path, help="also write the verdicts as JSON here")
    args = ap.parse_args(argv)
    results = args.results or engine.repo_root() / "results"
    if not results.is_dir():
        ap.error(f"{results}: not a directory")
    if args.json is not None and not args.json.parent.is_dir():
        ap.error(f"{args.json}: its directory does not exist")
    try:
        claims = read_claims(args.claims or claims_path())
    except ClaimError as e:
        print(f"abyss claims: {e}", file=sys.stderr)
        return EXIT_USAGE
    known = {c.spec for c in claims}
    for s in args.specs:
        if s not in known:
            ap.error(f"no claims on {s!r}; claims are on {', '.join(sorted(known))}")
    if args.specs:
        claims = [c for c in claims if c.spec in args.specs]
    store_ = Results(results)
    verdicts = [check(c, store_) for c in claims]
    if args.markdown:
        sys.stdout.write(markdown(verdicts))
    else:
        Console().print(table(verdicts))
    if args.json:
        args.json.write_text(json.dumps([
            {"id": v.claim.id, "figure": v.claim.figure, "says": v.claim.says, "spec": v.claim.spec,
             "measured": v.measured, "agrees": v.agrees, "steady": not v.unsteady,
             "reason": v.claim.reason if v.agrees is False else ""} for v in verdicts], indent=1) + "\n")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
