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
TYPE_COUNTERS = ("commits", "cc_aborts", "logical_aborts", "throughput",
                 "p50_us", "p99_us", "p999_us", "max_us")

#: Metric columns a plot may show: label with unit, and the factor applied.
METRICS: dict[str, tuple[str, float]] = {
    "throughput": ("throughput (million txn/s)", 1e-6),
    "tpmc": ("tpmC (million NewOrder txn/min)", 1e-6),
    "tuples_per_s": ("throughput (million tuples/s)", 1e-6),
    "abort_rate": ("abort rate (aborted / all attempts)", 1.0),
    "commits": ("commits", 1.0),
    "cc_aborts": ("CC aborts", 1.0),
    "p50_us": ("p50 latency (µs)", 1.0),
    "p99_us": ("p99 latency (µs)", 1.0),
    "p999_us": ("p99.9 latency (µs)", 1.0),
    "max_us": ("max latency (µs)", 1.0),
    "load_seconds": ("load time (s)", 1.0),
    "rss_at_end_bytes": ("resident memory at end (MiB)", 1 / 2**20),
    "timestamps_per_second": ("timestamps allocated (million/s)", 1e-6),
}
_TYPE_METRIC = re.compile(r"^type_([a-z0-9_]+?)_(" + "|".join(TYPE_COUNTERS) + r")$")


def is_metric(name: str) -> bool:
    """Whether `name` is a numeric result column a plot can use as y."""
    return (name in METRICS or name in FRACTION_COLUMNS or name in SECONDS_COLUMNS
            or bool(_TYPE_METRIC.match(name)))


def metric_label(name: str) -> tuple[str, float]:
    """Axis label (with unit) and scale factor of a metric column."""
    if name in METRICS:
        return METRICS[name]
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
