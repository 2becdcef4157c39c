"""Declared text tables: the `[[table]]` entries of a spec, rendered from an
experiment's runs.

A table is data (spec.TableSpec, kept in the manifest): the parameters whose
values make its lines (`rows`), those whose values make its column groups
(`columns`), the metrics each group shows (`cells`, medians over the
repetitions), and optionally `ratio_to`, a value of the column parameter
whose group the others are divided by. Labels, headers and number formats
may be set per parameter or metric, and a factor per metric (`scales`:
1e-6 shows millions). Lines and groups come in the order the
grid ran them. The same text is printed after a sweep, written to
`tables.txt` and shown in the report.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import engine, store
from .spec import RATIO, fill_template, title_values

TABLES_TXT = "tables.txt"

#: Headers and number formats used where a table does not set its own.
DEFAULT_HEADERS = {"cc": "scheme", "throughput": "txn/s", "abort_rate": "abort", "log_bytes_per_commit": "B/commit"}
DEFAULT_FORMATS = {"throughput": ".0f", "tpmc": ".0f", "tuples_per_s": ".0f", "abort_rate": ".3f",
                   "log_bytes_per_commit": ".0f", RATIO: ".2f"}
METRIC_FORMAT = ".3g"
MISSING = "–"
GAP = "  "


@dataclass
class Rendered:
    """A rendered table: its title line and its aligned lines (header first)."""

    title: str
    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join([self.title, *self.lines])


def _native(v: Any) -> Any:
    """A plain Python value (numpy scalars unboxed, NaN as None)."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def _same(a: Any, b: Any) -> bool:
    """Whether two parameter values are equal (0 == 0.0; "0.5" names 0.5)."""
    if a is None or b is None:
        return a is b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    try:
        return not isinstance(a, bool) and not isinstance(b, bool) and float(a) == float(b)
    except (TypeError, ValueError):
        return engine.format_value(a) == engine.format_value(b)


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return text == MISSING


class _Table:
    """One table declaration (a TableSpec as a dict) applied to one experiment."""

    def __init__(self, exp: store.Experiment, t: dict[str, Any]) -> None:
        self.exp = exp
        self.t = t
        self.sweep_titles = {s["label"]: s.get("title") or s["label"] for s in exp.spec.get("sweeps", [])}

    def header(self, name: str) -> str:
        metric = engine.WORKLOAD_METRICS.get(name)        # a workload's metric: as the engine names it
        default = DEFAULT_HEADERS.get(name, metric.key if metric else name)
        return self.t.get("headers", {}).get(name, default)

    def value_text(self, key: str, v: Any) -> str:
        """A row or column parameter's value as the table writes it."""
        if v is None:
            return MISSING
        for raw, text in self.t.get("labels", {}).get(key, {}).items():
            if _same(v, raw) or engine.format_value(v) == raw:
                return text
        if key == "sweep":
            return self.sweep_titles.get(v, str(v))
        fmt = self.t.get("formats", {}).get(key)
        if fmt and isinstance(v, (int, float)) and not isinstance(v, bool):
            return format(v, fmt)
        return engine.format_value(v)

    def metric_text(self, name: str, v: float | None) -> str:
        if v is None:
            return MISSING
        v *= self.t.get("scales", {}).get(name, 1.0)
        return format(v, self.t.get("formats", {}).get(name, DEFAULT_FORMATS.get(name, METRIC_FORMAT)))

    def group_label(self, ck: tuple[Any, ...]) -> str:
        columns = self.t["columns"]
        if self.t.get("column_label"):
            return fill_template(self.t["column_label"], {c: [v] for c, v in zip(columns, ck)})
        return ", ".join(self.value_text(c, v) for c, v in zip(columns, ck))

    def in_grid_order(self, names: list[str], keys: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """Value tuples in the order the spec lists the values (the grid's
        order), whichever runs are present; values it does not list last."""
        order: dict[str, list[Any]] = {"sweep": list(self.sweep_titles)}
        for e in (self.exp.manifest or {}).get("runs", []):
            for k, v in e.get("axes", {}).items():
                seen = order.setdefault(k, [])
                if not any(_same(v, x) for x in seen):
                    seen.append(v)

        def rank(key: tuple[Any, ...]) -> tuple[int, ...]:
            out = []
            for name, v in zip(names, key):
                seen = order.get(name, [])
                out.append(next((i for i, x in enumerate(seen) if _same(v, x)), len(seen)))
            return tuple(out)

        return sorted(keys, key=rank)

    def render(self) -> Rendered | None:
        t, df = self.t, self.exp.runs
        if df.empty:
            return None
        if t.get("sweeps"):
            df = df[df["sweep"].isin(t["sweeps"])]
        rows, columns, cells = t["rows"], t["columns"], t["cells"]
        keys = rows + columns
        if df.empty or any(k not in df for k in keys):
            return None
        groups: dict[tuple[Any, ...], dict[str, list[float]]] = {}
        for rec in df[keys + [c for c in cells if c in df]].to_dict("records"):
            g = groups.setdefault(tuple(_native(rec[k]) for k in keys), {c: [] for c in cells})
            for c in cells:
                v = _native(rec.get(c))
                if isinstance(v, (int, float)):
                    g[c].append(float(v))
        median = {k: {c: (statistics.median(vs) if vs else None) for c, vs in g.items()}
                  for k, g in groups.items()}
        reps = max((len(vs) for g in groups.values() for vs in g.values()), default=0)
        row_keys = self.in_grid_order(rows, list(dict.fromkeys(k[:len(rows)] for k in groups)))
        col_keys = self.in_grid_order(columns, list(dict.fromkeys(k[len(rows):] for k in groups)))

        # Columns of text: (header, cell per line, left-aligned?).
        text_cols: list[tuple[str, list[str], bool]] = []
        for i, r in enumerate(rows):
            texts = [self.value_text(r, rk[i]) for rk in row_keys]
            text_cols.append((self.header(r), texts, not all(_looks_numeric(x) for x in texts)))
        for ck in col_keys:
            label = self.group_label(ck)
            for j, m in enumerate(cells):
                texts = [self.metric_text(m, median.get(rk + ck, {}).get(m)) for rk in row_keys]
                text_cols.append((label if j == 0 else self.header(m), texts, False))
        if t.get("ratio_to") is not None:
            text_cols += self.ratio_columns(row_keys, col_keys, median)

        widths = [max([len(h)] + [len(x) for x in texts]) for h, texts, _ in text_cols]

        def line(cells_: list[str]) -> str:
            return GAP.join(c.ljust(w) if left else c.rjust(w)
                            for c, w, (_, _, left) in zip(cells_, widths, text_cols)).rstrip()

        lines = [line([h for h, _, _ in text_cols])]
        lines += [line([texts[i] for _, texts, _ in text_cols]) for i in range(len(row_keys))]
        return Rendered(title=self.title(reps), lines=lines)

    def ratio_columns(self, row_keys: list[tuple[Any, ...]], col_keys: list[tuple[Any, ...]],
                      median: dict[tuple[Any, ...], dict[str, float | None]]) -> list[tuple[str, list[str], bool]]:
        """Every other group's first metric over its baseline group's (the
        group whose first column value is `ratio_to` and whose other column
        values are its own): one column headed `ratio`, or for several one
        block headed `(ratio to X)`."""
        t = self.t
        m = t["cells"][0]

        def base_of(ck: tuple[Any, ...]) -> tuple[Any, ...] | None:
            return next((b for b in col_keys if _same(b[0], t["ratio_to"]) and b[1:] == ck[1:]), None)

        others = [ck for ck in col_keys if not _same(ck[0], t["ratio_to"])]
        first_base = next((ck for ck in col_keys if _same(ck[0], t["ratio_to"])), None)
        base_label = (self.value_text(t["columns"][0], first_base[0]) if len(t["columns"]) > 1 and first_base
                      else self.group_label(first_base) if first_base is not None
                      else engine.format_value(t["ratio_to"]))
        per_col: list[list[str]] = []
        for ck in others:
            base = base_of(ck)
            texts = []
            for rk in row_keys:
                num = median.get(rk + ck, {}).get(m)
                den = median.get(rk + base, {}).get(m) if base is not None else None
                texts.append(self.metric_text(RATIO, num / den) if num is not None and den else MISSING)
            per_col.append(texts)
        if len(others) == 1:
            return [(t.get("headers", {}).get(RATIO, "ratio"), per_col[0], False)]
        widths = [max(len(x) for x in texts) for texts in per_col]
        block = [" ".join(texts[i].rjust(w) for texts, w in zip(per_col, widths)) for i in range(len(row_keys))]
        return [(t.get("headers", {}).get(RATIO, f"(ratio to {base_label})"), block, True)]

    def title(self, reps: int) -> str:
        spec = self.exp.spec
        sweeps = [s for s in spec.get("sweeps", []) if not self.t.get("sweeps") or s["label"] in self.t["sweeps"]]
        try:
            return fill_template(self.t["title"], title_values(spec, sweeps, reps))
        except (KeyError, ValueError, TypeError, IndexError):
            return self.t["title"]


def declared(exp: store.Experiment) -> list[dict[str, Any]]:
    """The table declarations kept in an experiment's manifest."""
    return list(exp.spec.get("tables") or [])


def render_all(exp: store.Experiment) -> list[Rendered]:
    """Every declared table of an experiment that has runs to show."""
    out = []
    for t in declared(exp):
        r = _Table(exp, t).render()
        if r is not None:
            out.append(r)
    return out


def write_text(exp: store.Experiment) -> Path | None:
    """The rendered tables as `tables.txt` in the experiment directory."""
    rendered = render_all(exp)
    if not rendered:
        return None
    path = exp.path / TABLES_TXT
    path.write_text("\n\n".join(r.text for r in rendered) + "\n", encoding="utf-8")
    return path
