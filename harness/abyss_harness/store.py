"""The results store: run JSONs on disk, and the tidy table built from them.

Layout of one experiment (a spec's results), by default `results/<spec>/`:

    manifest.json      the resolved spec and the list of its runs
    spec.toml          the spec text as it was run
    runs/<point>.r<k>.json   each run's report, exactly as the engine wrote it
    runs/<point>.r<k>.err    stderr of a run that failed (only then)
    runs.csv           the tidy table: one row per run
    summary.csv        one row per point: median and spread over repetitions

`results/runs.csv` joins the tidy tables of every experiment under `results/`.
The JSON files are the source of truth; the CSVs are rebuilt from them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from . import engine
from .metrics import FRACTION_COLUMNS, SECONDS_COLUMNS

MANIFEST = "manifest.json"
RUNS_DIR = "runs"
RUNS_CSV = "runs.csv"
SUMMARY_CSV = "summary.csv"

#: Identity and environment columns, first in every row.
ID_COLUMNS = ("spec", "sweep", "point", "rep", "file")
ENV_COLUMNS = ("git_rev", "build_type", "cpu_model", "cores", "config_hash", "hostname", "date", "load_average")
#: Run parameters, named as spec keys and `abyss run` flags.
PARAM_COLUMNS = tuple(engine.RUN_PARAMS)
DERIVED_COLUMNS = ("read_ratio",)
#: Results every run report has, taken as they are from `results`.
RUN_RESULTS = ("seconds", "throughput", "commits", "cc_aborts", "logical_aborts", "abort_rate",
               "load_seconds", "rss_after_load_bytes", "rss_at_end_bytes")
#: The metrics workloads add (`tpmc` from TPC-C's `tpmC`, `timestamps_per_second`
#: from tsalloc's, ...), as `abyss describe --json` lists them: a workload
#: that reports a new metric gets its column without a harness change.
WORKLOAD_METRIC_COLUMNS = tuple(c for c in engine.WORKLOAD_METRICS if c not in RUN_RESULTS)
RESULT_COLUMNS = (
    "seconds", "throughput", "commits", "cc_aborts", "logical_aborts", "abort_rate",
    "steady", "commits_per_worker", "halves_ratio", "windows", "warmup_seconds",
    *WORKLOAD_METRIC_COLUMNS, "tuples_per_s", "mean_us", "p50_us", "p90_us", "p95_us", "p99_us", "p999_us",
    "max_us",
    "load_seconds", "rss_after_load_bytes", "rss_at_end_bytes",
    "acknowledged", "log_mb_per_s", "fsyncs_per_s", "log_bytes_per_commit",
)
#: Columns every tidy table has, in order; per-type columns
#: (`type_<name>_<counter>`) and unknown config keys (`cfg_<path>`) follow.
TIDY_COLUMNS = (ID_COLUMNS + ENV_COLUMNS + PARAM_COLUMNS + DERIVED_COLUMNS
                + RESULT_COLUMNS + FRACTION_COLUMNS + SECONDS_COLUMNS)


#: The latency statistics of a report (`latency_us`), each a `<key>_us` column.
LATENCY_KEYS = ("mean", "p50", "p90", "p95", "p99", "p999", "max")


def flatten_run(doc: dict[str, Any]) -> dict[str, Any]:
    """One engine run report as one flat row (without the identity columns).

    Parameters use the spec/flag names, so a table column, a spec axis and an
    `abyss run` flag share one name; every breakdown category becomes a
    `frac_` and a `sec_` column; each transaction type gets `type_<name>_`
    columns; each workload metric of the engine (`results.tpmC`) is a column
    named in lower case (`tpmc`), empty for the other workloads. Config keys
    this harness does not know are kept as `cfg_<path>`.
    """
    row: dict[str, Any] = {k: doc.get(k) for k in ENV_COLUMNS}
    params, unknown = engine.config_to_params(doc.get("config", {}))
    row.update(params)
    row.update({f"cfg_{k}": v for k, v in unknown.items()})
    if "write_ratio" in params:
        row["read_ratio"] = round(1.0 - params["write_ratio"], 12)
    res = doc.get("results", {})
    for key in RUN_RESULTS:
        row[key] = res.get(key)
    for column in WORKLOAD_METRIC_COLUMNS:
        row[column] = res.get(engine.WORKLOAD_METRICS[column].key)
    # Whether the window held steady state, and what it held (docs/many-core.md,
    # "Steady state"); reports from before windows were judged have none.
    window = res.get("window", {})
    for key in ("steady", "commits_per_worker", "halves_ratio", "windows", "warmup_seconds"):
        row[key] = window.get(key)
    if params.get("workload") == "ycsb" and res.get("throughput") is not None:
        row["tuples_per_s"] = res["throughput"] * params.get("req_per_txn", 0)
    # With --log (docs/durability.md): commits acknowledged, and what the
    # journals took.
    row["acknowledged"] = res.get("acknowledged")
    log = res.get("log", {})
    row["log_mb_per_s"] = log["bytes_per_s"] / 1e6 if "bytes_per_s" in log else None
    row["fsyncs_per_s"] = log.get("fsyncs_per_s")
    # Bytes per commit that wrote a record (a read-only commit writes none).
    row["log_bytes_per_commit"] = log["bytes"] / log["records"] if log.get("records") else None
    lat = res.get("latency_us", {})
    for q in LATENCY_KEYS:
        row[f"{q}_us"] = lat.get(q)
    for cat, v in res.get("breakdown", {}).items():
        row[f"frac_{cat}"] = v.get("fraction")
        row[f"sec_{cat}"] = v.get("seconds")
    # The CC aborts by the cause the scheme named (docs/metrics.md, "Abort causes").
    for cause, n in res.get("abort_causes", {}).items():
        row[f"aborts_{cause}"] = n
    for tname, t in res.get("per_type", {}).items():
        for counter in ("commits", "cc_aborts", "logical_aborts", "throughput", "abort_rate"):
            row[f"type_{tname}_{counter}"] = t.get(counter)
        for q in LATENCY_KEYS:
            row[f"type_{tname}_{q}_us"] = t.get("latency_us", {}).get(q)
    return row


#: The columns of a sample (`results.samples`, docs/metrics.md "Samples") in
#: the samples table, after the run's identity and parameters.
SAMPLE_COLUMNS = ("interval", "start_s", "end_s", "commits", "cc_aborts", "logical_aborts", "throughput",
                  "abort_rate", "p50_us", "p99_us", "rss_bytes")


def flatten_samples(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """A run report's samples, one flat row each, with the run's parameters."""
    samples = doc.get("results", {}).get("samples") or []
    if not samples:
        return []
    params, _ = engine.config_to_params(doc.get("config", {}))
    rows = []
    for k, s in enumerate(samples):
        lat = s.get("latency_us", {})
        rows.append({**params, "interval": k + 1, "start_s": s.get("start_s"), "end_s": s.get("end_s"),
                     "commits": s.get("commits"), "cc_aborts": s.get("cc_aborts"),
                     "logical_aborts": s.get("logical_aborts"), "throughput": s.get("throughput"),
                     "abort_rate": s.get("abort_rate"), "p50_us": lat.get("p50"), "p99_us": lat.get("p99"),
                     "rss_bytes": s.get("rss_bytes")})
    return rows


#: The columns of a latency histogram bucket in the histograms table, after
#: the run's identity and parameters: the transaction type, the bucket's upper
#: edge in microseconds and how many transactions it holds.
HISTOGRAM_COLUMNS = ("type", "upper_us", "count")


def flatten_histograms(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """A run report's per-type latency histograms (`per_type.<type>.
    latency_histogram`, docs/metrics.md), one row per non-empty bucket."""
    params, _ = engine.config_to_params(doc.get("config", {}))
    rows = []
    for tname, t in doc.get("results", {}).get("per_type", {}).items():
        h = t.get("latency_histogram") or {}
        to_us = {"ns": 1e-3, "us": 1.0}.get(h.get("unit", "ns"), 1e-3)
        for upper, count in h.get("buckets", []):
            rows.append({**params, "type": tname, "upper_us": upper * to_us, "count": count})
    return rows


def is_run_report(doc: Any) -> bool:
    return isinstance(doc, dict) and "config" in doc and "results" in doc


@dataclass
class Experiment:
    """One experiment directory, loaded: its manifest (if any) and its tables."""

    path: Path
    name: str
    manifest: dict[str, Any] | None
    runs: pd.DataFrame
    problems: list[str]
    samples: pd.DataFrame = field(default_factory=pd.DataFrame)  # one row per run and interval
    histograms: pd.DataFrame = field(default_factory=pd.DataFrame)  # one row per run, type and bucket

    @property
    def spec(self) -> dict[str, Any]:
        return (self.manifest or {}).get("spec", {})

    def sweeps(self) -> list[dict[str, Any]]:
        """The sweeps with the axes that tell their runs apart: the spec's,
        or, without a manifest, the parameters that vary among the runs."""
        return self.spec.get("sweeps") or [
            {"label": "main", "title": self.name, "axes": {a: None for a in varying_params(self.runs)}}]

    def sweep_runs(self, label: str) -> pd.DataFrame:
        """The tidy rows of one sweep."""
        return self.runs[self.runs["sweep"] == label] if self.spec.get("sweeps") else self.runs

    def sweep_samples(self, label: str) -> pd.DataFrame:
        """The samples of one sweep's runs."""
        return self._of_sweep(self.samples, label)

    def sweep_histograms(self, label: str) -> pd.DataFrame:
        """The latency histogram buckets of one sweep's runs."""
        return self._of_sweep(self.histograms, label)

    def _of_sweep(self, df: pd.DataFrame, label: str) -> pd.DataFrame:
        if df.empty or not self.spec.get("sweeps"):
            return df
        return df[df["sweep"] == label]


def read_manifest(exp_dir: Path) -> dict[str, Any] | None:
    path = exp_dir / MANIFEST
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def write_manifest(exp_dir: Path, manifest: dict[str, Any]) -> None:
    exp_dir.mkdir(parents=True, exist_ok=True)
    tmp = exp_dir / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    tmp.replace(exp_dir / MANIFEST)


def _entries(exp_dir: Path, manifest: dict[str, Any] | None) -> Iterable[dict[str, Any]]:
    """The run files of an experiment: the manifest's list (only the current
    grid, so files of an older version of the spec are ignored), or, without
    a manifest, every JSON file under the directory."""
    if manifest is not None:
        yield from manifest.get("runs", [])
        return
    for path in sorted(exp_dir.rglob("*.json")):
        if path.name != MANIFEST:
            yield {"file": str(path.relative_to(exp_dir))}


def load_experiment(exp_dir: str | Path) -> Experiment:
    """Read an experiment's run files into its tidy table.

    Runs listed in the manifest but not yet on disk (an interrupted sweep) are
    skipped; unreadable files are reported in `problems`, not fatal.
    """
    exp_dir = Path(exp_dir)
    manifest = read_manifest(exp_dir)
    name = (manifest or {}).get("spec", {}).get("name") or exp_dir.name
    rows: list[dict[str, Any]] = []
    sample_rows: list[dict[str, Any]] = []
    bucket_rows: list[dict[str, Any]] = []
    problems: list[str] = []
    for entry in _entries(exp_dir, manifest):
        path = exp_dir / entry["file"]
        if not path.is_file():
            continue
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            problems.append(f"{path}: unreadable JSON ({e})")
            continue
        ident = {"spec": name, "sweep": entry.get("sweep", ""), "point": entry.get("point"),
                 "rep": entry.get("rep"), "file": entry["file"]}
        if is_run_report(doc):
            rows.append({**ident, **flatten_run(doc)})
            sample_rows += [{**ident, **s} for s in flatten_samples(doc)]
            bucket_rows += [{**ident, **b} for b in flatten_histograms(doc)]
        elif isinstance(doc, list) and all(is_run_report(d) for d in doc):   # an array of run reports
            for i, run in enumerate(doc):
                rows.append({**ident, "file": f"{entry['file']}#{i}", **flatten_run(run)})
        elif manifest is not None:
            problems.append(f"{path}: not an abyss run report")
    runs = tidy_frame(rows)
    if not runs.empty and runs["point"].isna().any():
        _fill_points(runs)
    samples, histograms = pd.DataFrame(sample_rows), pd.DataFrame(bucket_rows)
    for df in (samples, histograms):
        if not df.empty and not runs.empty:
            df["point"] = df["file"].map(dict(zip(runs["file"], runs["point"])))
    return Experiment(path=exp_dir, name=name, manifest=manifest, runs=runs, problems=problems, samples=samples,
                      histograms=histograms)


def tidy_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows as a DataFrame with the fixed columns first, in TIDY_COLUMNS order.

    A column whose values are all whole numbers (counts, threads, bytes) stays
    integer, with an empty cell where a run lacks it (pandas' nullable Int64),
    so runs.csv says 3, not 3.0."""
    extra: list[str] = []
    for r in rows:
        extra += [k for k in r if k not in TIDY_COLUMNS and k not in extra]
    type_cols = sorted(c for c in extra if c.startswith("type_"))
    other = [c for c in extra if c not in type_cols]
    df = pd.DataFrame(rows, columns=list(TIDY_COLUMNS) + type_cols + other)
    for c in df.columns:
        values = [r[c] for r in rows if r.get(c) is not None]
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            df[c] = df[c].astype("Int64")
    return df


def _fill_points(df: pd.DataFrame) -> None:
    """For runs without a manifest: a point is every parameter but the seed;
    repetitions are numbered by seed within a point."""
    cols = [c for c in PARAM_COLUMNS if c != "seed"]
    keys = ["|".join(map(str, row)) for row in df[cols].itertuples(index=False)]
    number = {k: f"p{i + 1}" for i, k in enumerate(dict.fromkeys(keys))}
    df["point"] = [number[k] for k in keys]
    df["rep"] = df.sort_values("seed", kind="stable").groupby("point").cumcount() + 1
    df["sweep"] = df["sweep"].replace("", "main").fillna("main")


def varying_params(df: pd.DataFrame) -> list[str]:
    """Parameters that take more than one value in `df` (the swept axes)."""
    out = []
    for c in PARAM_COLUMNS:
        if c == "seed" or c not in df:
            continue
        if df[c].dropna().astype(str).nunique() > 1:
            out.append(c)
    return out


SUMMARY_METRICS = (("throughput", "abort_rate", "commits_per_worker", "halves_ratio") + WORKLOAD_METRIC_COLUMNS
                   + ("tuples_per_s", "p50_us", "p99_us", "p999_us") + FRACTION_COLUMNS)


def summarize(df: pd.DataFrame, axes: list[str] | None = None) -> pd.DataFrame:
    """One row per point: the axis values, the number of repetitions, the
    median of each metric, and the throughput's min, max and spread
    ((max - min) / median, in percent)."""
    if df.empty:
        return pd.DataFrame()
    axes = [a for a in (axes if axes is not None else varying_params(df)) if a in df]
    keys = ["spec", "sweep", "point"]
    present = [m for m in SUMMARY_METRICS if m in df and df[m].notna().any()]
    g = df.groupby(keys, sort=False, dropna=False)
    out = g[list(dict.fromkeys(axes + ["workload", "cc", "threads"]))].first()
    out["reps"] = g.size()
    med = g[present].median()
    out = out.join(med)
    out["throughput_min"] = g["throughput"].min()
    out["throughput_max"] = g["throughput"].max()
    out["spread_pct"] = (100 * (out["throughput_max"] - out["throughput_min"])
                         / out["throughput"].where(out["throughput"] > 0))
    if "steady" in df and df["steady"].notna().any():
        # A point holds steady state when every repetition's window did.
        out["steady"] = g["steady"].agg(lambda v: bool(v.dropna().astype(bool).all()) if v.notna().any() else None)
    out["example_file"] = g["file"].first()
    return out.reset_index()


def write_tables(exp: Experiment) -> list[Path]:
    """Write runs.csv and summary.csv into the experiment directory."""
    written = []
    path = exp.path / RUNS_CSV
    exp.runs.to_csv(path, index=False)
    written.append(path)
    axes = list(dict.fromkeys(a for s in exp.sweeps() for a in s["axes"]))
    summary = summarize(exp.runs, axes)
    path = exp.path / SUMMARY_CSV
    summary.to_csv(path, index=False)
    written.append(path)
    return written


def find_experiments(results_dir: str | Path) -> list[Path]:
    """Experiment directories under `results_dir` (itself included): those
    with a manifest, or, failing any, those holding run JSON files."""
    root = Path(results_dir)
    if (root / MANIFEST).is_file():
        return [root]
    found = sorted(p.parent for p in root.glob(f"*/{MANIFEST}"))
    if found:
        return found
    if any(root.rglob("*.json")):
        return [root]
    return []


def write_combined(results_dir: str | Path) -> Path | None:
    """Join every experiment's tidy table into `<results_dir>/runs.csv`."""
    root = Path(results_dir)
    exps = [load_experiment(p) for p in find_experiments(root)]
    frames = [e.runs for e in exps if not e.runs.empty]
    if not frames or (len(exps) == 1 and exps[0].path == root):
        return None
    path = root / RUNS_CSV
    rows = [r for f in frames for r in f.to_dict("records")]
    tidy_frame(rows).to_csv(path, index=False)
    return path
