"""Names of the numeric results a run reports, with axis labels and units.

Kept apart from the store (which needs pandas) so that parsing a spec, which
checks the metrics its plots name, stays light.
"""

from __future__ import annotations

import re

from . import engine

#: Time-breakdown fractions and seconds, one column per category.
FRACTION_COLUMNS = tuple(f"frac_{c}" for c in engine.BREAKDOWN)
SECONDS_COLUMNS = tuple(f"sec_{c}" for c in engine.BREAKDOWN)
#: Per-transaction-type columns are `type_<type>_<counter>`.
TYPE_COUNTERS = ("commits", "cc_aborts", "logical_aborts", "throughput", "abort_rate",
                 "mean_us", "p50_us", "p90_us", "p95_us", "p99_us", "p999_us", "max_us")

#: The results every run reports (metric columns a plot may show): label
#: with unit, and the factor applied.
METRICS: dict[str, tuple[str, float]] = {
    "throughput": ("throughput (million txn/s)", 1e-6),
    "tuples_per_s": ("throughput (million tuples/s)", 1e-6),
    "abort_rate": ("abort rate (% of attempts)", 100.0),
    "commits": ("commits", 1.0),
    "cc_aborts": ("CC aborts", 1.0),
    "mean_us": ("mean latency (µs)", 1.0),
    "p50_us": ("p50 latency (µs)", 1.0),
    "p90_us": ("p90 latency (µs)", 1.0),
    "p95_us": ("p95 latency (µs)", 1.0),
    "p99_us": ("p99 latency (µs)", 1.0),
    "p999_us": ("p99.9 latency (µs)", 1.0),
    "max_us": ("max latency (µs)", 1.0),
    "load_seconds": ("load time (s)", 1.0),
    "acknowledged": ("acknowledged commits", 1.0),
    "log_mb_per_s": ("log written (MB/s)", 1.0),
    "fsyncs_per_s": ("journal syncs per second", 1.0),
    "log_bytes_per_commit": ("log bytes per writing commit", 1.0),
    "rss_at_end_bytes": ("resident memory at end (MiB)", 1 / 2**20),
}
#: Axis labels of workload metrics (engine.WORKLOAD_METRICS, from `abyss
#: describe`) in millions; any other is labelled with the unit the engine gives.
WORKLOAD_METRIC_LABELS: dict[str, tuple[str, float]] = {
    "tpmc": ("tpmC (million NewOrder txn/min)", 1e-6),
    "timestamps_per_second": ("timestamps allocated (million/s)", 1e-6),
}
_TYPE_METRIC = re.compile(r"^type_([a-z0-9_]+?)_(" + "|".join(TYPE_COUNTERS) + r")$")


def workload_metric_columns() -> tuple[str, ...]:
    """The columns of the metrics workloads add (`tpmc`, ...), in registry order."""
    return tuple(engine.WORKLOAD_METRICS)


def metric_names() -> list[str]:
    """Every metric column by name (per-type columns aside), for suggestions."""
    return list(METRICS) + list(workload_metric_columns()) + list(FRACTION_COLUMNS) + list(SECONDS_COLUMNS)


def is_metric(name: str) -> bool:
    """Whether `name` is a numeric result column a plot can use as y."""
    return (name in METRICS or name in engine.WORKLOAD_METRICS or name in FRACTION_COLUMNS
            or name in SECONDS_COLUMNS or bool(_TYPE_METRIC.match(name)))


def metric_label(name: str) -> tuple[str, float]:
    """Axis label (with unit) and scale factor of a metric column."""
    if name in METRICS:
        return METRICS[name]
    if name in WORKLOAD_METRIC_LABELS:
        return WORKLOAD_METRIC_LABELS[name]
    if name in engine.WORKLOAD_METRICS:
        m = engine.WORKLOAD_METRICS[name]
        return (f"{m.key} ({m.unit})", 1.0)
    if name in FRACTION_COLUMNS:
        return (f"{name[5:]} (fraction of worker time)", 1.0)
    if name in SECONDS_COLUMNS:
        return (f"{name[4:]} (s, summed over workers)", 1.0)
    m = _TYPE_METRIC.match(name)
    if m:
        tname, counter = m.group(1).replace("_", " "), m.group(2)
        if counter == "throughput":
            return (f"{tname} throughput (million txn/s)", 1e-6)
        if counter.endswith("_us"):
            return (f"{tname} {counter[:-3]} latency (µs)", 1.0)
        return (f"{tname} {counter.replace('_', ' ')}", 1.0)
    return (name, 1.0)
