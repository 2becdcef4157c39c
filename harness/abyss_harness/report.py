"""Reports: a Markdown and an HTML page per experiment (plots, median
tables, environment, the command that re-runs each point), an index page
when a results directory holds several experiments, and the summary tables
printed on the terminal after a sweep.

Both pages are rendered from one list of blocks, so they always say the same.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from . import engine, plots, store, tables

PLOTS_DIR = "plots"


# -- a tiny document model ------------------------------------------------------

@dataclass
class Block:
    kind: str          # h1 h2 h3 p table img code ul
    text: str = ""
    header: list[str] | None = None
    rows: list[list[str]] | None = None
    href: str = ""     # img: PNG path; ul: unused
    alt_href: str = ""  # img: SVG path
    items: list[tuple[str, str]] | None = None   # ul: (text, link or "")


def _md_cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def to_markdown(blocks: list[Block]) -> str:
    out: list[str] = []
    for b in blocks:
        if b.kind in ("h1", "h2", "h3"):
            out.append("#" * int(b.kind[1]) + " " + b.text)
        elif b.kind == "p":
            out.append(b.text)
        elif b.kind == "table":
            out.append("| " + " | ".join(_md_cell(h) for h in b.header or []) + " |")
            out.append("|" + "|".join("---" for _ in b.header or []) + "|")
            out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in b.rows or []]
        elif b.kind == "img":
            out.append(f"![{b.text}]({b.href})  \n*{b.text}* ([SVG]({b.alt_href}))")
        elif b.kind == "code":
            out.append("```\n" + b.text + "\n```")
        elif b.kind == "ul":
            out += [f"- [{t}]({h})" if h else f"- {t}" for t, h in b.items or []]
        out.append("")
    return "\n".join(out)


_CSS = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em;
       color: #222; line-height: 1.45; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #f3f3f3; }
td:first-child, th:first-child { text-align: left; }
pre { background: #f6f6f6; padding: 0.7em; overflow-x: auto; font-size: 0.8em; }
figure { margin: 1em 0 2em; } figure img { max-width: 100%; }
figcaption { font-size: 0.9em; color: #555; }
"""


def to_html(blocks: list[Block], title: str) -> str:
    e = html.escape
    out = [f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           f"<title>{e(title)}</title><style>{_CSS}</style></head><body>"]
    for b in blocks:
        if b.kind in ("h1", "h2", "h3"):
            out.append(f"<{b.kind}>{e(b.text)}</{b.kind}>")
        elif b.kind == "p":
            out.append(f"<p>{e(b.text)}</p>")
        elif b.kind == "table":
            out.append("<table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in b.header or [])
                       + "</tr></thead><tbody>")
            out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in b.rows or []]
            out.append("</tbody></table>")
        elif b.kind == "img":
            out.append(f"<figure><a href=\"{e(b.alt_href)}\"><img src=\"{e(b.href)}\" alt=\"{e(b.text)}\">"
                       f"</a><figcaption>{e(b.text)} (<a href=\"{e(b.alt_href)}\">SVG</a>)</figcaption></figure>")
        elif b.kind == "code":
            out.append(f"<pre><code>{e(b.text)}</code></pre>")
        elif b.kind == "ul":
            out.append("<ul>" + "".join(f"<li><a href=\"{e(h)}\">{e(t)}</a></li>" if h else f"<li>{e(t)}</li>"
                                        for t, h in b.items or []) + "</ul>")
    out.append("</body></html>\n")
    return "\n".join(out)


# -- formatting -------------------------------------------------------------------

def fmt_num(v: Any, digits: int = 3) -> str:
    """A number for a table: integers with separators, others to `digits` significant digits."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) >= 1000):
        return f"{int(v):,}"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def fmt_pct(v: Any) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.1f}%"


def fmt_param(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return engine.format_value(v)


# -- experiment report ---------------------------------------------------------------

def median_rows(exp: store.Experiment, sweep: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The median table of one sweep: axis values, repetitions, throughput
    (median, spread), abort rate, the workload's own metrics (tpmC for TPC-C,
    ...), p99 latency, other fraction."""
    df = exp.sweep_runs(sweep["label"])
    axes = [a for a in sweep["axes"] if a in df]
    s = store.summarize(df, axes)
    if s.empty:
        return [], []
    own = [c for c in store.WORKLOAD_METRIC_COLUMNS if c in s and s[c].notna().any()]
    header = axes + ["reps", "txn/s (median)", "spread", "abort rate"] \
        + [engine.WORKLOAD_METRICS[c].key for c in own] + ["p99 µs", "useful", "other"]
    rows = []
    for _, r in s.iterrows():
        row = [fmt_param(r[a]) for a in axes]
        row += [str(int(r["reps"])), _txn(r["throughput"]),
                _spread(r), fmt_num(r.get("abort_rate"))]
        row += [_txn(r.get(c)) for c in own]
        row += [fmt_num(r.get("p99_us")), fmt_pct(r.get("frac_useful")), fmt_pct(r.get("frac_other"))]
        rows.append(row)
    return header, rows


def environment_rows(df: pd.DataFrame) -> list[list[str]]:
    """Each environment field with the values found in the run reports (and
    how many runs had each), so mixed builds or machines are visible."""
    rows = []
    for col, label in (("cpu_model", "CPU model"), ("cores", "hardware threads"),
                       ("build_type", "build type"), ("git_rev", "git revision")):
        if col not in df:
            continue
        counts = df[col].astype(str).value_counts()
        rows.append([label, "; ".join(f"{v}" + (f" ({n} runs)" if len(counts) > 1 else "")
                                      for v, n in counts.items())])
    rows.append(["runs", str(len(df))])
    return rows


def rerun_commands(exp: store.Experiment) -> list[tuple[str, str]]:
    """(point label, command) for each point, from its first repetition's config."""
    axes_of = {e["point"]: e.get("axes", {}) for e in (exp.manifest or {}).get("runs", [])}
    several = len(exp.sweeps()) > 1
    out = []
    seen: set[str] = set()
    df = exp.runs.sort_values(["rep"], kind="stable")
    for _, r in df.iterrows():
        if r["point"] in seen or not isinstance(r["file"], str):
            continue
        seen.add(r["point"])
        axes = axes_of.get(r["point"])
        label = (" ".join(f"{k}={fmt_param(v)}" for k, v in axes.items()) if axes is not None
                 else str(r["point"]).split("/", 1)[-1])
        if several:
            label = f"{r['sweep']}: {label}"
        path, _, index = r["file"].partition("#")       # `FILE#i`: the i-th report of an array
        doc = json.loads((exp.path / path).read_text(encoding="utf-8"))
        if index:
            doc = doc[int(index)]
        out.append((label or r["sweep"], engine.rerun_command(doc["config"])))
    return out


def experiment_blocks(exp: store.Experiment, figures: list[plots.Figure], base: Path) -> list[Block]:
    """The blocks of one experiment's report; links are relative to `base`."""
    spec = exp.spec

    def rel(p: Path) -> str:
        return str(Path(p).resolve().relative_to(base.resolve()))

    blocks = [Block("h1", text=spec.get("title") or exp.name)]
    if spec.get("figure"):
        blocks.append(Block("p", text=f"Reproduces: {spec['figure']}."))
    if spec.get("description"):
        blocks.append(Block("p", text=spec["description"]))
    manifest = exp.manifest or {}
    if manifest:
        total, present = len(manifest.get("runs", [])), len(exp.runs)
        scale = "the papers' sizes (--full-scale)" if spec.get("full_scale") else "scaled to this machine"
        if spec.get("sim"):
            scale = (f"simulated (--sim, topology {spec.get('topology')}, --sim-cores = threads, "
                     "virtual seconds)")
        blocks.append(Block("p", text=f"Spec {spec.get('name')} ({spec.get('source', '')}), {scale}; "
                                      f"{spec.get('reps')} repetition(s) per point; "
                                      f"{present} of {total} runs present."))
    if spec.get("sim") and spec.get("scaled"):
        blocks.append(Block("p", text=f"Scaled from the paper: {spec['scaled']}"))
    blocks.append(Block("h2", text="Environment"))
    blocks.append(Block("table", header=["", "value"], rows=environment_rows(exp.runs)))
    problems = list(exp.problems)
    if exp.runs["git_rev"].nunique() > 1:
        problems.append("the runs come from more than one git revision; compare with care")
    failed = sorted((exp.path / store.RUNS_DIR).glob("*.err"))
    if failed:
        problems.append(f"{len(failed)} run(s) failed; see {', '.join(rel(f) for f in failed[:5])}"
                        + (" ..." if len(failed) > 5 else ""))
    unknown = [c for c in exp.runs.columns if c.startswith("cfg_")]
    if unknown:
        problems.append("config fields this harness does not know (not in the re-run commands): "
                        + ", ".join(c[4:] for c in unknown))
    if problems:
        blocks.append(Block("h2", text="Problems"))
        blocks.append(Block("ul", items=[(p, "") for p in problems]))
    if figures:
        blocks.append(Block("h2", text="Plots"))
        for f in figures:
            blocks.append(Block("img", text=f.title, href=rel(f.files[0]), alt_href=rel(f.files[1])))
    declared = tables.render_all(exp)
    if declared:
        blocks.append(Block("h2", text="Tables"))
        blocks.append(Block("p", text="As printed after the sweep (medians over repetitions; "
                                      f"also in {tables.TABLES_TXT})."))
        blocks += [Block("code", text=r.text) for r in declared]
    blocks.append(Block("h2", text="Medians over repetitions"))
    blocks.append(Block("p", text="txn/s is the median; spread is half the min..max range as a share of "
                                  "the median; abort rate, p99 and the breakdown fractions are medians."))
    for sw in exp.sweeps():
        header, rows = median_rows(exp, sw)
        if not rows:
            continue
        if len(exp.sweeps()) > 1:
            blocks.append(Block("h3", text=sw.get("title") or sw["label"]))
        blocks.append(Block("table", header=header, rows=rows))
    cmds = rerun_commands(exp)
    if cmds:
        blocks.append(Block("h2", text="Re-running a point"))
        blocks.append(Block("p", text="Each command re-runs one point (its first repetition) with every "
                                      "knob spelled out; add --json FILE to keep the report."))
        blocks.append(Block("code", text="\n".join(f"# {label}\n{cmd}" for label, cmd in cmds)))
    data = [t for t in (store.RUNS_CSV, store.SUMMARY_CSV, tables.TABLES_TXT)
            if (exp.path / t).exists()]
    blocks.append(Block("h2", text="Data"))
    blocks.append(Block("ul", items=[(t, rel(exp.path / t)) for t in data]
                        + [("run reports (JSON)", rel(exp.path / store.RUNS_DIR))]))
    return blocks


@dataclass
class Written:
    markdown: Path
    html: Path
    figures: int


def _redraw(exp: store.Experiment, plot_dir: Path, size: str | None = None) -> list[plots.Figure]:
    """Every figure of an experiment drawn afresh into `plot_dir` (figures of
    an earlier version of the spec removed)."""
    if plot_dir.is_dir():
        for old in plot_dir.glob("*.*"):
            if old.suffix.lstrip(".") in (*plots.FIGURE_FORMATS, plots.DATA_SUFFIX):
                old.unlink()
    return plots.render_experiment(exp, plot_dir, size) if not exp.runs.empty else []


def write_experiment_report(exp: store.Experiment, size: str | None = None) -> Written:
    """Tables, plots, report.md and report.html inside the experiment
    directory; with `size` (a paper's `column` or `page`) every figure is also
    drawn at that size into `plots-<size>/`."""
    store.write_tables(exp)
    tables.write_text(exp)
    figures = _redraw(exp, exp.path / PLOTS_DIR)
    if size:
        _redraw(exp, exp.path / f"{PLOTS_DIR}-{size}", size)
    blocks = experiment_blocks(exp, figures, exp.path)
    blocks.append(Block("p", text=f"Written {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC by ./abyss report."))
    md, page = exp.path / "report.md", exp.path / "report.html"
    md.write_text(to_markdown(blocks), encoding="utf-8")
    page.write_text(to_html(blocks, exp.spec.get("title") or exp.name), encoding="utf-8")
    return Written(markdown=md, html=page, figures=len(figures))


def write_report(results_dir: str | Path, size: str | None = None) -> list[Written]:
    """Report every experiment under `results_dir`; with several, also an
    index page (report.md, report.html) in `results_dir` linking them."""
    root = Path(results_dir)
    written = [write_experiment_report(store.load_experiment(p), size) for p in store.find_experiments(root)]
    if len(written) > 1 or (written and written[0].markdown.parent != root):
        store.write_combined(root)
        entries = []
        for w in written:
            exp_dir = w.markdown.parent
            spec = (store.read_manifest(exp_dir) or {}).get("spec", {})
            title = spec.get("title") or exp_dir.name
            fig = spec.get("figure")
            entries.append((f"{exp_dir.name}: {title}" + (f" ({fig})" if fig else ""), w))

        def index(link: str) -> list[Block]:
            return [Block("h1", text="abyss results"),
                    Block("p", text=f"{len(entries)} experiment(s) under {root}. The tidy table of all "
                                    f"runs is {store.RUNS_CSV}."),
                    Block("ul", items=[(t, str(getattr(w, link).relative_to(root))) for t, w in entries])]

        (root / "report.md").write_text(to_markdown(index("markdown")), encoding="utf-8")
        (root / "report.html").write_text(to_html(index("html"), "abyss results"), encoding="utf-8")
        written.append(Written(markdown=root / "report.md", html=root / "report.html", figures=0))
    return written


# -- terminal ----------------------------------------------------------------------

def _spread(r: pd.Series) -> str:
    """Half the min..max range of throughput, relative to the median; none for one repetition."""
    if r.get("reps", 1) < 2 or pd.isna(r.get("spread_pct")):
        return "–"
    return f"±{r['spread_pct'] / 2:.1f}%"


def _txn(v: Any) -> str:
    return "–" if v is None or pd.isna(v) else f"{v:,.0f}"


def print_summary(exp: store.Experiment, console: Console) -> None:
    """Median tables on the terminal: the spec's declared tables ([[table]],
    tables.py) if it has any, else one per sweep, where a sweep over schemes
    and one other axis is shown as a grid (schemes down, the axis across)."""
    if tables.declared(exp):
        for i, r in enumerate(tables.render_all(exp)):
            console.print(("\n" if i else "") + r.text, markup=False, highlight=False, soft_wrap=True)
        return
    for sw in exp.sweeps():
        df = exp.sweep_runs(sw["label"])
        if df.empty:
            continue
        axes = [a for a in sw["axes"] if a in df]
        s = store.summarize(df, axes)
        console.print(f"[bold]{sw.get('title') or sw['label']}[/]: median txn/s over "
                      f"{int(s['reps'].max())} repetition(s)", soft_wrap=True)
        title = None
        others = [a for a in axes if a != "cc"]
        if "cc" in axes and len(others) == 1:
            x = others[0]
            xs = plots.ordered(x, s[x])
            last = xs[-1]
            t = Table(title=title, title_justify="left")
            t.add_column("scheme")
            for v in xs:
                t.add_column(f"{x}={fmt_param(v)}", justify="right")
            t.add_column(f"abort rate @{fmt_param(last)}", justify="right")
            t.add_column(f"other @{fmt_param(last)}", justify="right")
            for cc in plots.ordered("cc", s["cc"]):
                sub = s[s["cc"] == cc]
                cells = []
                for v in xs:
                    r = sub[sub[x] == v]
                    cells.append(_txn(r["throughput"].iloc[0]) if not r.empty else "–")
                at = sub[sub[x] == last]
                t.add_row(plots.scheme_label(cc), *cells,
                          fmt_num(at["abort_rate"].iloc[0]) if not at.empty else "–",
                          fmt_pct(at["frac_other"].iloc[0]) if not at.empty and "frac_other" in at else "–")
        else:
            t = Table(title=title, title_justify="left")
            for a in axes:
                t.add_column("scheme" if a == "cc" else a)
            for c in ("txn/s", "spread", "abort rate", "other"):
                t.add_column(c, justify="right")
            for _, r in s.iterrows():
                t.add_row(*[plots.scheme_label(r[a]) if a == "cc" else fmt_param(r[a]) for a in axes],
                          _txn(r["throughput"]),
                          _spread(r), fmt_num(r.get("abort_rate")), fmt_pct(r.get("frac_other")))
        console.print(t)
