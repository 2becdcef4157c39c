"""Figures in the papers' styles, written as PNG, SVG and PDF (matplotlib,
Agg), each with a CSV of exactly the data it plots.

Six kinds, each drawn from the median over repetitions (the CDF pools them):
- `lines`: a metric against a swept parameter, one line per series (by
  default one per scheme; Abyss Figs. 8a-11, 13, 15), with error bars
  spanning min..max over repetitions when there are repetitions;
- `bars`: grouped bars for a categorical x (Abyss Fig. 7);
- `breakdown`: stacked time-breakdown fractions (or µs of worker time per
  commit, `y = "us_per_txn"`), one group per scheme, one
  bar per value of `bar` (Abyss Fig. 8b; Tale Figs. 4-5);
- `timeseries`: a sampled metric over the measurement window (`--sample-
  interval`), one line per series, above the resident memory of the same
  runs: warm-up, drift and MVCC's version growth;
- `cdf`: the latency distribution from the runs' histograms, one line per
  series, optionally on a logit axis that spreads the tail;
- `tail`: p50..max latency side by side per scheme at one point.

Every scheme keeps one colour and marker in every plot: scheme_style() derives
it from the engine's scheme registry.
"""

from __future__ import annotations

import itertools
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")  # no display on build machines; must precede pyplot
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from . import engine, store  # noqa: E402
from .metrics import metric_label  # noqa: E402
from .spec import EXTREMES, PlotSpec  # noqa: E402

#: (colour, marker) of the i-th scheme of the engine's registry: the no-CC
#: bound grey, then 2PL in blues and purple, T/O in warm colours, H-STORE
#: green, the optimistic per-row-timestamp schemes pink and olive. A scheme
#: registered later takes the next entry, so every scheme keeps one style;
#: entries beyond the registry's schemes wait for those still to come.
STYLE_PALETTE: tuple[tuple[str, str], ...] = (
    ("#7f7f7f", "o"), ("#1f77b4", "s"), ("#17becf", "^"), ("#0b2e59", "v"), ("#9467bd", "D"),
    ("#ff7f0e", "<"), ("#d62728", ">"), ("#8c564b", "p"), ("#2ca02c", "h"), ("#e377c2", "*"),
    ("#bcbd22", "X"), ("#000000", "P"), ("#aec7e8", "d"), ("#ffbb78", "8"), ("#98df8a", "H"),
    ("#ff9896", "1"), ("#c5b0d5", "2"), ("#c49c94", "3"), ("#f7b6d2", "4"), ("#dbdb8d", "+"),
    ("#9edae5", "x"), ("#393b79", "|"), ("#637939", "_"),
)


def scheme_style() -> dict[str, tuple[str, str]]:
    """scheme -> (colour, marker), from the engine's registry order."""
    schemes = engine.SCHEMES
    return {s: STYLE_PALETTE[i % len(STYLE_PALETTE)] for i, s in enumerate(schemes)}


#: breakdown category -> colour, stacked bottom-up in engine.BREAKDOWN order.
BREAKDOWN_COLOURS: dict[str, str] = {
    "useful": "#4daf4a",
    "abort": "#e41a1c",
    "backoff": "#ff7f00",
    "ts_alloc": "#984ea3",
    "index": "#377eb8",
    "wait": "#a65628",
    "commit": "#999999",
    "cc_manager": "#333333",
    "log": "#f781bf",
    "other": "#f2d600",
}

#: abort cause -> colour (docs/metrics.md, "Abort causes"), stacked bottom-up
#: in engine.ABORT_CAUSES order; `unnamed` black, as a defect should stand out.
ABORT_CAUSE_COLOURS: dict[str, str] = {
    "lock_conflict": "#e41a1c",
    "wound": "#ff7f00",
    "wait_die": "#f2d600",
    "deadlock": "#a65628",
    "timeout": "#f781bf",
    "read_validation": "#377eb8",
    "write_validation": "#80b1d3",
    "timestamp_order": "#984ea3",
    "phantom": "#4daf4a",
    "version_too_new": "#1b9e77",
    "version_too_old": "#66a61e",
    "partition": "#999999",
    "certifier": "#e7298a",
    "cascade": "#7570b3",
    "unnamed": "#000000",
}

#: Axis labels (with units) of the parameters a plot can put on x.
X_LABELS: dict[str, str] = {
    "threads": "worker threads",
    "theta": "Zipf skew (theta)",
    "write_ratio": "write ratio (updates / accesses)",
    "read_ratio": "read requests (fraction of accesses)",
    "read_only_txn_ratio": "read-only transactions (fraction)",
    "multi_part_ratio": "multi-partition transactions (fraction)",
    "parts_per_txn": "partitions per transaction",
    "partitions": "partitions",
    "req_per_txn": "rows accessed per transaction",
    "dl_timeout": "lock-wait timeout (µs)",
    "backoff_max_us": "backoff bound (µs)",
    "warehouses": "warehouses",
    "rows": "rows",
    "ts_alloc": "timestamp allocation",
    "tpcc_mix": "transaction mix (%)",
    "tpcc_schema": "TPC-C schema",
    "tpcc_inserts": "TPC-C inserts",
    "tpcc_replicate_item": "ITEM copies per node",
    "latch": "latch",
    "backoff": "backoff",
    "key_order": "key order",
    "cc": "scheme",
    "sweep": "workload",
}

#: Derived columns and the parameter each is computed from: a plot over the
#: derived column also covers the parameter, so it must not facet by it.
DERIVED_FROM: dict[str, str] = {"read_ratio": "write_ratio"}

#: Metrics whose axis starts at zero (counts and rates, not latencies); the
#: workloads' own metrics (tpmc, timestamps_per_second, ...) are rates too.
_ZERO_BASED = ("throughput", "tuples_per_s", "abort_rate")


def _zero_based(y: str) -> bool:
    return y in _ZERO_BASED or y in engine.WORKLOAD_METRICS


def scheme_label(name: str) -> str:
    """Schemes are written as in the papers: DL_DETECT, NO_WAIT, ..."""
    return name.upper()


def series_label(column: str | None, value: Any) -> str:
    if column == "cc":
        return scheme_label(str(value))
    if column is None:
        return ""
    return f"{column}={engine.format_value(value)}" if column not in ("ts_alloc", "sweep") else str(value)


def series_styles(column: str | None, values: list[Any]) -> dict[Any, tuple[str, str]]:
    """Colour and marker per series value: the fixed scheme mapping for `cc`,
    a sequential colour map for numeric values, a qualitative one otherwise."""
    if column == "cc":
        style = scheme_style()
        return {v: style.get(str(v), ("#000000", "o")) for v in values}
    markers = itertools.cycle("osD^v<>phX*")
    if values and all(isinstance(v, (int, float)) for v in values) and len(values) > 1:
        cmap = matplotlib.colormaps["viridis"]
        return {v: (matplotlib.colors.to_hex(cmap(0.85 * i / (len(values) - 1))), next(markers))
                for i, v in enumerate(values)}
    cmap = matplotlib.colormaps["tab10"]
    return {v: (matplotlib.colors.to_hex(cmap(i % 10)), next(markers)) for i, v in enumerate(values)}


#: Line styles, cycled by the same position as colours, so that lines stay
#: apart in greyscale print, where neighbouring colours look alike.
DASHES: tuple[str, ...] = ("-", "--", "-.", ":")


def series_dashes(column: str | None, values: list[Any]) -> dict[Any, str]:
    """A line style per series value: by registry position for schemes, by order otherwise."""
    if column == "cc":
        index = {s: i for i, s in enumerate(engine.SCHEMES)}
        return {v: DASHES[index.get(str(v), i) % len(DASHES)] for i, v in enumerate(values)}
    return {v: DASHES[i % len(DASHES)] for i, v in enumerate(values)}


def ordered(column: str | None, values: Iterable[Any]) -> list[Any]:
    """Series values in a stable order: schemes as engine.SCHEMES lists them,
    numbers ascending, strings as first seen."""
    # Plain Python values: an integer column is pandas' nullable Int64, whose
    # values come out as numpy integers.
    vals = list(dict.fromkeys(v.item() if hasattr(v, "item") else v for v in values if not _isna(v)))
    if column == "cc":
        rank = {s: i for i, s in enumerate(engine.SCHEMES)}
        return sorted(vals, key=lambda v: rank.get(v, len(rank)))
    if all(isinstance(v, (int, float)) for v in vals):
        return sorted(vals)
    return vals


def _isna(v: Any) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


#: The formats every figure is written in, in this order (the report shows
#: the first and links the second).
FIGURE_FORMATS = ("png", "svg", "pdf")
#: What files a figure's data are saved in beside it.
DATA_SUFFIX = "csv"


def _save(fig: matplotlib.figure.Figure, stem: Path, data: pd.DataFrame) -> list[Path]:
    """The figure in every format, and `data`, exactly what it plots, as CSV."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    pad = 0.1 if _LOOK.size == "screen" else 0.02
    if _LOOK.size != "screen":
        _fit_width(fig, FIGURE_SIZES[_LOOK.size][0] - 2 * pad)
    out = []
    for ext in FIGURE_FORMATS:
        path = stem.parent / f"{stem.name}.{ext}"   # not with_suffix: "theta-0.8" has a dot
        # No dates inside: the same data give the same files.
        meta = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}}.get(ext)
        fig.savefig(path, dpi=150, bbox_inches="tight", pad_inches=pad, metadata=meta)
        out.append(path)
    plt.close(fig)
    path = stem.parent / f"{stem.name}.{DATA_SUFFIX}"
    data.to_csv(path, index=False)
    out.append(path)
    return out


def _fit_width(fig: matplotlib.figure.Figure, width: float) -> None:
    """Resize the figure so that everything drawn (legend and labels beside
    the axes included) spans `width` inches, as a paper's column expects:
    the file is then placed at 100% and its fonts keep their point size."""
    for _ in range(4):
        drawn = fig.get_tightbbox(fig.canvas.get_renderer()).width
        if abs(drawn - width) < 0.005:
            return
        w, h = fig.get_size_inches()
        fig.set_size_inches(max(1.0, w + width - drawn), h)


@dataclass(frozen=True)
class Look:
    """How figures are drawn: a size preset (FIGURE_SIZES) and whether the
    title goes inside the figure (by default it is the report's caption)."""

    size: str = "screen"
    inside_title: bool = False


#: Size presets: figure width in inches and base font size in points. A paper's
#: single column is 3.3 in, a double column 7 in; `screen` is for reports.
FIGURE_SIZES: dict[str, tuple[float, float]] = {"screen": (6.4, 10.0), "column": (3.3, 7.0), "page": (7.0, 8.5)}
_LOOK = Look()


@contextmanager
def look(size: str = "screen", inside_title: bool = False) -> Iterator[None]:
    """Draw the figures made inside with this size and title placement."""
    global _LOOK
    if size not in FIGURE_SIZES:
        raise ValueError(f"{size!r} is not a figure size; allowed: {', '.join(FIGURE_SIZES)}")
    before, _LOOK = _LOOK, Look(size, inside_title)
    font = FIGURE_SIZES[size][1]
    try:
        with plt.rc_context({"font.size": font, "axes.labelsize": font, "xtick.labelsize": font - 1,
                             "ytick.labelsize": font - 1, "legend.fontsize": font - 1}):
            yield
    finally:
        _LOOK = before


def _fit(width: float, height: float) -> tuple[float, float]:
    """A figure's size under the current preset: the screen size scaled to its width."""
    want = FIGURE_SIZES[_LOOK.size][0]
    if _LOOK.size == "screen":
        return (width, height)
    scale = want / 6.4
    return (want, max(1.8, height * scale * 1.15))


def _tilt() -> int:
    """The angle of crowded category labels: steeper at a column's width."""
    return 45 if _LOOK.size == "column" else 30


def _title_inside(ax: matplotlib.axes.Axes, title: str) -> None:
    if _LOOK.inside_title:
        ax.set_title(title, fontsize="medium")


def _legend(ax: matplotlib.axes.Axes, title: str | None, reverse: bool = False, below: float = 0.28) -> None:
    """The legend beside the axes, or at column width `below` axes heights under them."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    if reverse:   # a stack's legend reads top-down as the stack does
        handles, labels = handles[::-1], labels[::-1]
    if _LOOK.size == "column":
        # No room beside a column-wide plot: the legend goes under it.
        ax.legend(handles, labels, title=title, loc="upper center", bbox_to_anchor=(0.5, -below),
                  ncol=min(3, len(handles)), frameon=False, columnspacing=0.8, handlelength=1.6)
        return
    ax.legend(handles, labels, title=title, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              frameon=False, fontsize="small", title_fontsize="small")


def _medians(df: pd.DataFrame, keys: list[str], y: str) -> pd.DataFrame:
    g = df.groupby(keys, dropna=False, sort=False)[y]
    out = pd.DataFrame({"med": g.median(), "lo": g.min(), "hi": g.max(), "reps": g.count()})
    if "steady" in df and df["steady"].notna().any():
        # False when any repetition's window missed steady state.
        out["steady"] = df.groupby(keys, dropna=False, sort=False)["steady"].agg(
            lambda v: not (v.notna() & ~v.fillna(True).astype(bool)).any())
    return out.reset_index()


def _spread(agg: pd.DataFrame, scale: float) -> list[pd.Series] | None:
    """Error bars (min..max over repetitions), or None when no point was repeated."""
    if agg.empty or agg["reps"].max() <= 1:
        return None
    med = agg["med"] * scale
    return [med - agg["lo"] * scale, agg["hi"] * scale - med]


def _plotted(agg: pd.DataFrame, y: str, scale: float) -> pd.DataFrame:
    """The medians a figure draws, named for its CSV: y in the axis's unit."""
    out = agg.rename(columns={"med": y, "lo": f"{y}_min", "hi": f"{y}_max"})
    for c in (y, f"{y}_min", f"{y}_max"):
        out[c] = out[c] * scale
    return out


def plot_lines(df: pd.DataFrame, *, x: str, y: str, series: str | None, title: str,
               stem: Path, logx: bool = False, logy: bool = False) -> list[Path]:
    """A metric against x, one line per series value, median with min..max bars."""
    label, scale = metric_label(y)
    keys = [x] + ([series] if series else [])
    agg = _medians(df.dropna(subset=[y]), keys, y)
    values = ordered(series, agg[series]) if series else [None]
    styles = series_styles(series, values)
    dashes = series_dashes(series, values)
    fig, ax = plt.subplots(figsize=_fit(6.4, 4.0))
    for v in values:
        d = agg if series is None else agg[agg[series] == v]
        d = d.sort_values(x)
        colour, marker = styles.get(v, ("#000000", "o"))
        # Not clipped: a scheme at zero draws over the axis instead of under it.
        ax.errorbar(d[x], d["med"] * scale, yerr=_spread(d, scale),
                    label=series_label(series, v) if series else None,
                    color=colour, marker=marker, markersize=5, linewidth=1.6, linestyle=dashes[v], capsize=3,
                    clip_on=False, zorder=3)
        if "steady" in d:
            # A point whose window missed steady state is drawn hollow.
            off = d[~d["steady"].astype(bool)]
            ax.plot(off[x], off["med"] * scale, linestyle="none", marker=marker, markersize=5,
                    markerfacecolor="white", markeredgecolor=colour, clip_on=False, zorder=4)
    if "steady" in agg and not agg["steady"].astype(bool).all():
        ax.annotate("hollow: not at steady state", xy=(1, 0), xycoords="axes fraction", xytext=(-4, 4),
                    textcoords="offset points", ha="right", va="bottom", fontsize=7, color="#555555")
    xs = ordered(x, agg[x])
    if logx:
        ax.set_xscale("log")
    if xs and all(isinstance(v, int) for v in xs) and len(xs) <= 16:
        if not logx:
            # On a linear axis, 1, 2, 4, ... 1024 would print on top of each
            # other: label a value only if it clears the last label shown.
            gap = (max(xs) - min(xs)) / 12
            kept = [xs[0]]
            for v in xs[1:]:
                if v - kept[-1] >= gap:
                    kept.append(v)
            if kept[-1] != xs[-1]:
                kept[-1] = xs[-1]
            xs = kept
        ax.set_xticks(xs)
        ax.set_xticklabels([engine.format_value(v) for v in xs])
    ax.set_xlabel(X_LABELS.get(x, x))
    ax.set_ylabel(label)
    if logy:
        ax.set_yscale("log")
    elif _zero_based(y):
        ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    _title_inside(ax, title)
    _legend(ax, X_LABELS.get(series, series) if series else None)
    return _save(fig, stem, _plotted(agg, y, scale))


def plot_bars(df: pd.DataFrame, *, x: str, y: str, series: str | None, title: str,
              stem: Path) -> list[Path]:
    """Grouped bars: one group per x value, one bar per series value."""
    label, scale = metric_label(y)
    keys = [x] + ([series] if series else [])
    agg = _medians(df.dropna(subset=[y]), keys, y)
    xs = ordered(x, agg[x])
    values = ordered(series, agg[series]) if series else [None]
    styles = series_styles(series, values)
    width = 0.8 / len(values)
    fig, ax = plt.subplots(figsize=_fit(max(6.4, 0.5 * len(xs) * len(values)), 4.0))
    for j, v in enumerate(values):
        d = agg if series is None else agg[agg[series] == v]
        pos = [xs.index(a) + (j - (len(values) - 1) / 2) * width for a in d[x]]
        ax.bar(pos, d["med"] * scale, width=width * 0.95, color=styles[v][0], yerr=_spread(d, scale), capsize=2,
               label=series_label(series, v) if series else None)
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels([scheme_label(str(a)) if x == "cc" else engine.format_value(a) for a in xs],
                       rotation=30 if len(xs) > 6 else 0, ha="right" if len(xs) > 6 else "center")
    ax.set_xlabel(X_LABELS.get(x, x))
    ax.set_ylabel(label)
    if _zero_based(y):
        ax.set_ylim(bottom=0)
    ax.grid(True, axis="y", alpha=0.3)
    _title_inside(ax, title)
    _legend(ax, X_LABELS.get(series, series) if series else None)
    return _save(fig, stem, _plotted(agg, y, scale))


def plot_breakdown(df: pd.DataFrame, *, bar: str | None, title: str, stem: Path,
                   y: str = "fractions") -> list[Path]:
    """The stacked time breakdown: a group per scheme, a bar per `bar` value.
    `fractions` stacks each category's share of worker time to 1;
    `us_per_txn` stacks each category's worker time per committed
    transaction (its seconds over all workers / commits), in µs;
    `abort_causes` stacks the abort rate by cause: each cause's CC aborts
    over the attempts (commits + CC aborts), so a bar is as tall as the
    scheme's abort rate."""
    causes = y == "abort_causes"
    absolute = y in ("us_per_txn", "abort_causes")
    colours = ABORT_CAUSE_COLOURS if causes else BREAKDOWN_COLOURS
    keys = ["cc"] + ([bar] if bar else [])
    df = df.copy()
    if causes:
        cats = [c for c in engine.ABORT_CAUSES if f"aborts_{c}" in df and (df[f"aborts_{c}"].fillna(0) > 0).any()]
        attempts = (df["commits"] + df["cc_aborts"]).where(lambda s: s > 0)
        for c in cats:
            df[f"frac_{c}"] = df[f"aborts_{c}"] / attempts
    else:
        cats = [c for c in engine.BREAKDOWN if f"frac_{c}" in df and df[f"frac_{c}"].notna().any()]
    if y == "us_per_txn":
        commits = df["commits"].where(df["commits"] > 0)
        for c in cats:
            df[f"frac_{c}"] = df[f"sec_{c}"] / commits * 1e6
    med = df.groupby(keys, dropna=False)[[f"frac_{c}" for c in cats]].median().reset_index()
    if not absolute:
        total = med[[f"frac_{c}" for c in cats]].sum(axis=1).where(lambda s: s > 0, 1.0)
        for c in cats:
            med[f"frac_{c}"] = med[f"frac_{c}"] / total
    schemes = ordered("cc", med["cc"])
    bars = ordered(bar, med[bar]) if bar else [None]
    pos, ticks, tick_labels, minor = [], [], [], []
    x = 0.0
    rows = []
    for s in schemes:
        start = x
        for b in bars:
            r = med[(med["cc"] == s) & ((med[bar] == b) if bar else True)]
            if r.empty:
                continue
            rows.append(r.iloc[0])
            pos.append(x)
            minor.append(engine.format_value(b) if bar and len(bars) > 1 else "")
            x += 1.0
        ticks.append((start + x - 1.0) / 2)
        tick_labels.append(scheme_label(s))
        x += 0.8
    fig, ax = plt.subplots(figsize=_fit(max(6.4, 0.38 * len(pos) + 2.5), 4.2))
    bottom = [0.0] * len(rows)
    for c in cats:
        vals = [float(r[f"frac_{c}"]) for r in rows]
        ax.bar(pos, vals, bottom=bottom, width=0.9, color=colours.get(c, "#000000"),
               label=c, edgecolor="white", linewidth=0.3)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(ticks)
    rotate = len(schemes) > 5
    ax.set_xticklabels(tick_labels, rotation=_tilt() if rotate else 0, ha="right" if rotate else "center",
                       rotation_mode="anchor" if rotate else "default")
    ax.tick_params(axis="x", length=0)
    if any(minor):
        for p, m in zip(pos, minor):
            ax.text(p, -0.01, m, ha="center", va="top", fontsize="x-small", color="#555555",
                    transform=ax.get_xaxis_transform())
        ax.tick_params(axis="x", pad=12)
        ax.set_xlabel(f"scheme (bars: {X_LABELS.get(bar, bar)})")
    else:
        ax.set_xlabel("scheme")
    if absolute:
        ax.set_ylim(bottom=0)
        ax.set_ylabel("abort rate, by cause" if causes else "worker time per commit (µs)")
    else:
        ax.set_ylim(0, 1)
        ax.set_ylabel("fraction of worker time")
    _title_inside(ax, title)
    _legend(ax, None, reverse=True, below=0.42 if rotate else 0.3)
    plotted = pd.DataFrame(rows).reset_index(drop=True) if rows else med.iloc[0:0]
    if absolute:
        prefix = "rate_" if causes else "us_"
        plotted = plotted.rename(columns={f"frac_{c}": f"{prefix}{c}" for c in cats})
    return _save(fig, stem, plotted)


def plot_timeseries(df: pd.DataFrame, *, y: str, series: str | None, title: str, stem: Path) -> list[Path]:
    """A sampled metric and the resident memory against time in the window,
    one line per series value, the median over repetitions per interval."""
    label, scale = metric_label(y)
    keys = ["interval"] + ([series] if series else [])
    values = ordered(series, df[series]) if series else [None]
    styles = series_styles(series, values)
    dashes = series_dashes(series, values)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=_fit(6.4, 5.0), sharex=True,
                                      gridspec_kw={"height_ratios": [2, 1]})
    g = df.groupby(keys, dropna=False, sort=False)
    med = g[[y, "rss_bytes", "end_s"]].median().reset_index()
    med["rss_bytes"] = med["rss_bytes"].round().astype("Int64")   # bytes are whole
    for v in values:
        d = (med if series is None else med[med[series] == v]).sort_values("interval")
        colour, marker = styles.get(v, ("#000000", "o"))
        kw = {"color": colour, "marker": marker, "markersize": 3, "linewidth": 1.4, "linestyle": dashes[v]}
        name = series_label(series, v) if series else None
        top.plot(d["end_s"], d[y] * scale, label=name, **kw)
        bottom.plot(d["end_s"], d["rss_bytes"] / 2**20, label=name, **kw)
    top.set_ylabel(label)
    if _zero_based(y):
        top.set_ylim(bottom=0)
    top.grid(True, alpha=0.3)
    _title_inside(top, title)
    # Beside the upper panel; at column width under the lower one, clear of its axis label.
    legend_title = X_LABELS.get(series, series) if series else None
    if _LOOK.size == "column":
        _legend(bottom, legend_title, below=0.6)
    else:
        _legend(top, legend_title)
    bottom.set_ylabel("resident memory (MiB)")
    bottom.set_xlabel("time in the measurement window (s)")
    _memory_axis(bottom, med["rss_bytes"].dropna().astype(float) / 2**20)
    bottom.grid(True, alpha=0.3)
    plotted = med.rename(columns={y: f"{y}_median"}) if y != "end_s" else med
    return _save(fig, stem, plotted)


def _memory_axis(ax: Any, mib: pd.Series) -> None:
    """Resident memory is a large base (the loaded tables) plus what a run
    adds as it goes (MVCC's versions): the axis spans the values, not zero to
    them, so the growth shows; never less than 5% of the largest, so a flat
    line does not turn noise into slopes."""
    if mib.empty:
        return
    lo, hi = float(mib.min()), float(mib.max())
    span = max(hi - lo, 0.05 * hi, 1.0)
    ax.set_ylim(max(0.0, lo - 0.1 * span), lo + 1.1 * span)


#: Percentiles of a tail plot: (label, column suffix), the run's latency_us keys.
TAIL_PERCENTILES = (("p50", "p50_us"), ("p90", "p90_us"), ("p99", "p99_us"), ("p99.9", "p999_us"),
                    ("max", "max_us"))
#: Ticks of a CDF's logit axis: the median, then each tail decade.
LOGIT_TICKS = (1e-4, 1e-3, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999)
#: Greys from light to dark, one per percentile of a tail plot.
TAIL_GREYS = ("#d9d9d9", "#a6a6a6", "#737373", "#404040", "#000000")


def plot_cdf(df: pd.DataFrame, *, series: str | None, title: str, stem: Path, tail: bool = False) -> list[Path]:
    """The latency distribution as a CDF, one line per series value, from the
    runs' histogram buckets pooled over repetitions (and over transaction
    types unless one was selected). With `tail` the y axis is the logit
    scale, which spreads 0.9, 0.99 and 0.999 evenly, as tail studies show it."""
    keys = ([series] if series else []) + ["upper_us"]
    pooled = df.groupby(keys, dropna=False)["count"].sum().reset_index().sort_values(keys)
    values = ordered(series, pooled[series]) if series else [None]
    styles = series_styles(series, values)
    dashes = series_dashes(series, values)
    fig, ax = plt.subplots(figsize=_fit(6.4, 4.2))
    parts = []
    for v in values:
        d = (pooled if series is None else pooled[pooled[series] == v]).copy()
        total = d["count"].sum()
        if total == 0:
            continue
        d["fraction"] = d["count"].cumsum() / total
        parts.append(d)
        shown = d[d["fraction"] < 1.0] if tail else d   # the logit of 1 is infinite
        colour, _ = styles.get(v, ("#000000", "o"))
        ax.plot(shown["upper_us"], shown["fraction"], color=colour, linestyle=dashes[v], linewidth=1.4,
                drawstyle="steps-post", label=series_label(series, v) if series else None)
    ax.set_xscale("log")
    ax.set_xlabel("latency (µs)")
    if tail:
        ax.set_yscale("logit")
        lo = min(float(d["fraction"].min()) for d in parts) if parts else 0.01
        ticks = [t for t in LOGIT_TICKS if t >= lo * 0.5]
        ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
        ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    else:
        ax.set_ylim(0, 1.0)
    ax.set_ylabel("fraction of transactions at or below")
    ax.grid(True, which="major", alpha=0.3)
    _title_inside(ax, title)
    _legend(ax, X_LABELS.get(series, series) if series else None)
    data = pd.concat(parts, ignore_index=True) if parts else pooled.iloc[0:0]
    return _save(fig, stem, data)


def plot_tail(df: pd.DataFrame, *, x: str, txn_type: str | None, title: str, stem: Path) -> list[Path]:
    """Tail latency side by side: per value of `x` (by default per scheme) a
    bar for each of p50, p90, p99, p99.9 and max, the median over
    repetitions, on a log axis (Plor and Polaris compare schemes by p99.9)."""
    prefix = f"type_{txn_type}_" if txn_type else ""
    cols = [(label, prefix + c) for label, c in TAIL_PERCENTILES if prefix + c in df]
    med = df.groupby(x, dropna=False)[[c for _, c in cols]].median().reset_index()
    xs = ordered(x, med[x])
    width = 0.8 / max(1, len(cols))
    fig, ax = plt.subplots(figsize=_fit(max(6.4, 0.55 * len(xs) + 2.5), 4.0))
    for i, (label, c) in enumerate(cols):
        vals = [float(med.loc[med[x] == v, c].iloc[0]) for v in xs]
        ax.bar([k + (i - (len(cols) - 1) / 2) * width for k in range(len(xs))], vals, width=width,
               color=TAIL_GREYS[i % len(TAIL_GREYS)], edgecolor="black", linewidth=0.3, label=label)
    ax.set_xticks(range(len(xs)))
    rotate = len(xs) > 5
    ax.set_xticklabels([scheme_label(v) if x == "cc" else engine.format_value(v) for v in xs],
                       rotation=_tilt() if rotate else 0, ha="right" if rotate else "center",
                       rotation_mode="anchor" if rotate else "default")
    ax.set_yscale("log")
    ax.set_ylabel(f"{txn_type.replace('_', ' ') + ' ' if txn_type else ''}latency (µs)")
    ax.set_xlabel(X_LABELS.get(x, x))
    ax.grid(True, axis="y", which="major", alpha=0.3)
    _title_inside(ax, title)
    _legend(ax, "percentile", below=0.42 if rotate else 0.3)
    med = med.set_index(x).loc[xs].reset_index().rename(columns={c: label for label, c in cols})
    return _save(fig, stem, med)


@dataclass
class Figure:
    """One written figure: its title and files (PNG first, then SVG)."""

    title: str
    files: list[Path]
    kind: str


def _facet_values(df: pd.DataFrame, cols: list[str]) -> list[dict[str, Any]]:
    if not cols:
        return [{}]
    combos = df[cols].drop_duplicates()
    out = [dict(zip(cols, row)) for row in combos.itertuples(index=False)]
    for c in reversed(cols):
        order = ordered(c, [o[c] for o in out])
        out.sort(key=lambda o: order.index(o[c]) if o[c] in order else len(order))
    return out


def _select(df: pd.DataFrame, where: dict[str, Any]) -> pd.DataFrame:
    """The rows matching `where`; "max" and "min" pick the largest or
    smallest value present (the most threads of a sweep)."""
    for k, v in where.items():
        if k in df:
            if v in EXTREMES and not df.empty:
                v = df[k].max() if v == "max" else df[k].min()
            df = df[df[k] == v]
    return df


def _shown_where(p: PlotSpec, d: pd.DataFrame) -> dict[str, Any]:
    """The selections a title names: the transaction type and the values
    "max" and "min" stood for."""
    out = {k: d[k].iloc[0] for k, v in p.where.items() if v in EXTREMES and k in d and not d.empty}
    if "type" in p.where:
        out["type"] = p.where["type"]
    return out


def default_plots(axes: list[str], has_breakdown: bool, has_aborts: bool = False) -> list[PlotSpec]:
    """Plots for results that name none: throughput against each swept
    numeric knob (threads first), one line per scheme, p99 latency against
    threads, the latency CDF and tail per scheme at the most threads, the
    breakdown, and the abort causes when runs aborted."""
    out: list[PlotSpec] = []
    series = "cc" if "cc" in axes else None
    knobs = [a for a in axes if a not in ("cc", "seed")]
    numeric = {n for n, p in engine.RUN_PARAMS.items() if p.kind in (int, float)}
    for a in sorted(knobs, key=lambda a: a != "threads"):
        kind = "lines" if a in numeric else "bars"
        out.append(PlotSpec(kind=kind, x=a, y="throughput", series=series, name=f"throughput-vs-{a}",
                            logx=a == "dl_timeout"))
    if "threads" in knobs:
        out.append(PlotSpec(kind="lines", x="threads", y="p99_us", series=series, name="p99-vs-threads",
                            logy=True))
    if not knobs and series:
        out.append(PlotSpec(kind="bars", x="cc", y="throughput", name="throughput"))
    if series:
        at = {"threads": "max"} if "threads" in knobs else {}
        out.append(PlotSpec(kind="cdf", y="latency", series=series, where=at, name="latency-cdf", logy=True))
        out.append(PlotSpec(kind="tail", x="cc", y="latency", where=at, name="tail-latency"))
    if has_breakdown and series:
        out.append(PlotSpec(kind="breakdown", y="fractions", bar="threads" if "threads" in axes else None,
                            name="breakdown"))
    if has_aborts and series:
        out.append(PlotSpec(kind="breakdown", y="abort_causes", bar="threads" if "threads" in axes else None,
                            name="abort-causes"))
    return out


def _title(p: PlotSpec, sweep: dict[str, Any], several: bool) -> str:
    """A figure's title: the plot's own (naming the sweep when the plot spans
    several sweeps), else the sweep's title and what the figure shows."""
    head = sweep.get("title") or sweep["label"]
    if p.title:
        return f"{p.title} ({head})" if several else p.title
    what = {"breakdown": "abort causes" if p.y == "abort_causes"
            else "time breakdown" + (" per commit" if p.y == "us_per_txn" else ""),
            "cdf": "latency distribution", "tail": "tail latency"}.get(p.kind)
    what = what or metric_label(p.y)[0].split(" (")[0]
    if p.kind == "timeseries":
        what += " and memory over the window"
    return f"{head}: {what}"


def _plot_from_dict(d: dict[str, Any]) -> PlotSpec:
    return PlotSpec(**{k: v for k, v in d.items() if k in PlotSpec.__dataclass_fields__})


def render_experiment(exp: store.Experiment, out_dir: Path, size: str | None = None) -> list[Figure]:
    """Draw every plot of an experiment into `out_dir`, faceted by the swept
    parameters a plot does not show (one figure per combination); `size`
    overrides every plot's size preset."""
    spec = exp.spec
    sweeps = exp.sweeps()
    all_axes = list(dict.fromkeys(a for s in sweeps for a in s["axes"]))
    has_bd = not exp.runs.empty and "frac_useful" in exp.runs and exp.runs["frac_useful"].notna().any()
    has_aborts = not exp.runs.empty and "cc_aborts" in exp.runs and "aborts_unnamed" in exp.runs \
        and (exp.runs["cc_aborts"].fillna(0) > 0).any()
    plot_specs = [_plot_from_dict(p) for p in spec.get("plots", [])] or default_plots(all_axes, has_bd, has_aborts)
    figures: list[Figure] = []
    for p in plot_specs:
        if exp.runs.empty:
            continue
        with look(size or p.size, p.inside_title):
            figures += _render_plot(exp, p, sweeps, out_dir)
    return figures


def _source(exp: store.Experiment, p: PlotSpec, label: str) -> pd.DataFrame:
    """The rows a plot draws from: samples, histogram buckets or runs."""
    if p.kind == "timeseries":
        return exp.sweep_samples(label)
    if p.kind == "cdf":
        return exp.sweep_histograms(label)
    return exp.sweep_runs(label)


def _draw(p: PlotSpec, d: pd.DataFrame, title: str, stem: Path) -> list[Path]:
    """One figure of a plot entry from its selected rows."""
    if p.kind == "lines":
        return plot_lines(d, x=p.x, y=p.y, series=p.series, title=title, stem=stem, logx=p.logx, logy=p.logy)
    if p.kind == "bars":
        return plot_bars(d, x=p.x, y=p.y, series=p.series, title=title, stem=stem)
    if p.kind == "timeseries":
        return plot_timeseries(d, y=p.y, series=p.series if p.series in d else None, title=title, stem=stem)
    if p.kind == "cdf":
        return plot_cdf(d, series=p.series if p.series in d else None, title=title, stem=stem, tail=p.logy)
    if p.kind == "tail":
        return plot_tail(d, x=p.x, txn_type=p.where.get("type"), title=title, stem=stem)
    return plot_breakdown(d, bar=p.bar if p.bar in d else None, title=title, stem=stem, y=p.y)


def _render_plot(exp: store.Experiment, p: PlotSpec, sweeps: list[dict[str, Any]],
                 out_dir: Path) -> list[Figure]:
    """The figures of one plot entry: one per sweep and combination of the
    swept parameters it does not show (runs without samples or histograms
    give no timeseries or cdf)."""
    figures: list[Figure] = []
    if p.combine:
        # One figure of the listed sweeps' runs together (their series
        # differ, as Fig. 6's methods do across two sweeps).
        parts = [exp.sweep_runs(sw["label"]) for sw in sweeps if not p.sweeps or sw["label"] in p.sweeps]
        d = _select(pd.concat(parts, ignore_index=True), p.where)
        if not d.empty:
            title = p.title or _title(p, sweeps[0], several=False)
            files = plot_lines(d, x=p.x, y=p.y, series=p.series, title=title, stem=out_dir / (p.name or p.kind),
                               logx=p.logx, logy=p.logy)
            figures.append(Figure(title=title, files=files, kind=p.kind))
        return figures
    for sw in sweeps:
        if p.sweeps and sw["label"] not in p.sweeps:
            continue
        d = _select(_source(exp, p, sw["label"]), p.where)
        if d.empty:
            continue
        shown = {p.x, p.series, p.bar, "cc" if p.kind == "breakdown" else None}
        shown |= {DERIVED_FROM.get(c) for c in (p.x, p.series, p.bar)}
        free = [a for a in sw["axes"] if a not in shown and a not in p.where and a in d
                and d[a].astype(str).nunique() > 1]
        for facet in _facet_values(d, free):
            fd = _select(d, facet)
            parts = [_title(p, sw, several=len(sweeps) > 1 and len(p.sweeps or sweeps) > 1)]
            parts += [f"{k}={engine.format_value(v)}" for k, v in {**_shown_where(p, d), **facet}.items()]
            title = ", ".join(parts)
            slug = "_".join([p.name or p.kind] + ([sw["label"]] if len(sweeps) > 1 else [])
                            + [f"{k}-{engine.format_value(v)}" for k, v in facet.items()])
            stem = out_dir / "".join(ch if ch.isalnum() or ch in "-_." else "" for ch in slug)
            figures.append(Figure(title=title, files=_draw(p, fd, title, stem), kind=p.kind))
    return figures
