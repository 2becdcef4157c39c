"""`abyss compare A B`: two result sets joined on their configuration.

A and B are experiment directories (`results/<name>`) or directories of them.
Their runs are joined on every run parameter but the seed: a point is a
configuration both sides ran. Per point the comparison gives the median
throughput of each side (over its repetitions), the ratio B / A, the spread
of each side ((max - min) / median over its repetitions), and a verdict:

- `faster` / `slower` when the ratio is further from 1 than the noise, the
  larger of `--noise` (default 10%: what runs on a shared 2-core machine
  move) and either side's own spread;
- `within noise` otherwise.

With `--paired` (the two sides ran interleaved, repetition by repetition)
the ratio is the median of the per-repetition ratios B_k / A_k, and the
noise the larger of `--noise` and half their range: a shared machine that
drifts between repetitions then moves both runs of a pair alike.

It warns when the two sides come from different machines, builds or
revisions, since a ratio then measures those too, and when the median ratio
over all points is itself outside the noise: then the machine moved between
the two sides (a shared host's neighbours), not one configuration. It prints a table and
writes a plot of the ratios (with the noise band) and the joined data as CSV.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from . import engine, plots, store

#: What a run on this kind of machine moves by, run to run (README "Performance").
DEFAULT_NOISE = 0.10
#: The environment columns whose difference the comparison warns about.
PROVENANCE = ("hostname", "cpu_model", "build_type", "git_rev")


class CompareError(Exception):
    """A side has no runs, or the two have no configuration in common."""


@dataclass
class Comparison:
    points: pd.DataFrame                 # one row per configuration both sides ran
    varying: list[str]                   # the parameters that tell the points apart
    warnings: list[str] = field(default_factory=list)
    paired: bool = False                 # ratios per repetition (compare(..., paired=True))

    def counts(self) -> dict[str, int]:
        return {v: int((self.points["verdict"] == v).sum()) for v in ("faster", "slower", "within noise")}


def load_side(path: Path) -> pd.DataFrame:
    """Every run under `path` (an experiment directory or a directory of them)."""
    if not path.is_dir():
        raise CompareError(f"{path}: no such directory")
    frames = [store.load_experiment(p).runs for p in store.find_experiments(path)]
    frames = [f for f in frames if not f.empty]
    if not frames:
        raise CompareError(f"{path}: no run reports (JSON) found")
    return pd.concat(frames, ignore_index=True)


def _spread(values: pd.Series) -> float:
    """(max - min) / median over the repetitions; NaN with one repetition,
    where there is no spread to measure."""
    med = values.median()
    if len(values) < 2:
        return float("nan")
    return float((values.max() - values.min()) / med) if med > 0 else 0.0


def _paired(ga: pd.DataFrame, gb: pd.DataFrame, metric: str) -> pd.Series | None:
    """B / A per repetition, repetition k of one side beside repetition k of
    the other; None unless both sides ran the same repetitions, two or more."""
    va = ga.dropna(subset=[metric]).groupby("rep")[metric].median()
    vb = gb.dropna(subset=[metric]).groupby("rep")[metric].median()
    if len(va) < 2 or set(va.index) != set(vb.index) or (va <= 0).any():
        return None
    return (vb / va).sort_index()


def compare(a: pd.DataFrame, b: pd.DataFrame, metric: str = "throughput",
            noise: float = DEFAULT_NOISE, paired: bool = False) -> Comparison:
    """Per point both sides ran: the ratio of medians and a verdict against
    the noise. `paired` (the sides ran interleaved: repetition k of A, then
    repetition k of B, and so on) takes the ratio per repetition instead, so
    a machine that drifts between repetitions moves both sides of a pair
    alike: the ratio is the median of those, and the noise is the larger of
    `noise` and half their range over that median."""

    keys = [c for c in store.PARAM_COLUMNS if c != "seed" and c in a and c in b
            and (a[c].notna().any() or b[c].notna().any())]
    def tag(df: pd.DataFrame) -> list[str]:
        return ["|".join("" if pd.isna(v) else str(v) for v in row) for row in df[keys].itertuples(index=False)]

    a, b = a.assign(_key=tag(a)), b.assign(_key=tag(b))
    rows = []
    unpaired: list[str] = []
    for key, ga in a.groupby("_key", sort=False):
        gb = b[b["_key"] == key]
        va, vb = ga[metric].dropna(), gb[metric].dropna()
        if va.empty or vb.empty:
            continue
        med_a, med_b = float(va.median()), float(vb.median())
        pairs = _paired(ga, gb, metric) if paired else None
        if paired and pairs is None:
            unpaired.append(key)
        if pairs is not None:
            ratio = float(pairs.median())
            band = max(noise, float(pairs.max() - pairs.min()) / 2 / ratio)
        else:
            ratio = med_b / med_a if med_a > 0 else float("inf")
            band = max([noise] + [x for x in (_spread(va), _spread(vb)) if x == x])
        verdict = "faster" if ratio > 1 + band else "slower" if ratio < 1 - band else "within noise"
        rows.append({**{k: ga[k].iloc[0] for k in keys}, "reps_a": len(va), "reps_b": len(vb),
                     f"{metric}_a": med_a, f"{metric}_b": med_b, "spread_a": _spread(va), "spread_b": _spread(vb),
                     "pair_ratios": " ".join(f"{r:.3f}" for r in pairs) if pairs is not None else "",
                     "ratio": ratio, "noise": band, "verdict": verdict})
    if not rows:
        raise CompareError("the two sides have no configuration in common (runs are joined on every "
                           "parameter but the seed)")
    points = pd.DataFrame(rows)
    varying = [k for k in keys if points[k].astype(str).nunique() > 1]
    warnings = []
    # When most points move together, the machine moved, not the configurations.
    overall = float(points["ratio"].median())
    if len(points) >= 4 and abs(overall - 1) > noise:
        loads = [float(side["load_average"].median()) if "load_average" in side else float("nan") for side in (a, b)]
        warnings.append(f"the median B / A over all {len(points)} points is {overall:.2f}: the whole machine, not "
                        f"single configurations, may have changed between the two (median load average "
                        f"{loads[0]:.2f} vs {loads[1]:.2f}); repeat both sides interleaved before reading verdicts")
    if unpaired:
        warnings.append(f"--paired: {len(unpaired)} point(s) lack the same two or more repetitions on both "
                        "sides; they are compared by their medians")
    single = [name for name, col in (("A", "reps_a"), ("B", "reps_b")) if (points[col] < 2).any()]
    if single:
        warnings.append(f"{' and '.join(single)} {'has' if len(single) == 1 else 'have'} points with one "
                        f"repetition: their verdicts rest on --noise ({noise:.0%}) alone; --reps 3 on both "
                        "sides, interleaved, measures the noise")
    for col in PROVENANCE:
        sa, sb = set(a[col].dropna().astype(str)), set(b[col].dropna().astype(str))
        if sa and sb and sa != sb:
            warnings.append(f"A and B differ in {col}: {', '.join(sorted(sa))} vs {', '.join(sorted(sb))}")
    return Comparison(points=points, varying=varying, warnings=warnings, paired=paired)


def label(c: Comparison, row: pd.Series) -> str:
    """The point's varying parameters, without those it does not have (theta of a TPC-C point)."""
    return " ".join(f"{k}={engine.format_value(row[k])}" for k in c.varying if not pd.isna(row[k])) or "all runs"


def plot(c: Comparison, stem: Path, title: str) -> list[Path]:
    """The ratios as horizontal bars, coloured by verdict, with each point's noise band."""
    colours = {"faster": "#2ca02c", "slower": "#d62728", "within noise": "#7f7f7f"}
    pts = c.points
    fig, ax = plt.subplots(figsize=(6.4, max(2.0, 0.28 * len(pts) + 1.0)))
    ys = list(range(len(pts)))[::-1]
    ax.barh(ys, pts["ratio"] - 1, left=1, color=[colours[v] for v in pts["verdict"]], height=0.7)
    for y, band in zip(ys, pts["noise"]):
        ax.plot([1 - band, 1 + band], [y, y], color="#000000", linewidth=0.8, alpha=0.5)
    ax.axvline(1, color="#000000", linewidth=0.8)
    ax.set_yticks(ys)
    ax.set_yticklabels([label(c, r) for _, r in pts.iterrows()], fontsize="small")
    ax.set_xlabel("B / A (median of the per-repetition ratios)" if c.paired else "B / A (ratio of the medians)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title(title, fontsize="medium")
    return plots._save(fig, stem, pts)
