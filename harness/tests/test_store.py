"""The tidy table: its schema, one row per run, medians and spread, and the
other document shapes the store reads (arrays of reports, plain directories)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from abyss_harness import engine, runner, store
from abyss_harness.spec import load_spec
from conftest import FakeEngine, fake_report


@pytest.fixture
def experiment(tmp_path: Path, spec_file: Path) -> store.Experiment:
    runner.sweep(load_spec(spec_file, cores=2), tmp_path, FakeEngine(),
                 Console(file=open("/dev/null", "w")))
    return store.load_experiment(tmp_path / "unit")


def test_tidy_table_schema(experiment: store.Experiment) -> None:
    df = experiment.runs
    assert len(df) == 12, "one row per run"
    assert list(df.columns[: len(store.TIDY_COLUMNS)]) == list(store.TIDY_COLUMNS)
    for col in ("spec", "point", "rep", "git_rev", "config_hash", "cc", "threads", "rows",
                "throughput", "abort_rate", "p99_us", "frac_useful", "frac_other", "tpmc"):
        assert col in df.columns, col
    assert set(df["spec"]) == {"unit"} and set(df["rep"]) == {1, 2}
    assert set(df["cc"]) == {"no_wait", "silo", "hstore"}
    assert "type_read_write_throughput" in df.columns
    fr = df[list(store.FRACTION_COLUMNS)].sum(axis=1)
    assert ((fr - 1).abs() < 1e-9).all()
    assert pd.api.types.is_numeric_dtype(df["throughput"]) and pd.api.types.is_integer_dtype(df["threads"])
    assert df.loc[df["cc"] == "hstore", "partitions"].tolist() == [1, 2, 1, 2]


def test_csv_round_trips(experiment: store.Experiment) -> None:
    back = pd.read_csv(experiment.path / store.RUNS_CSV)
    assert list(back.columns) == list(experiment.runs.columns) and len(back) == 12


def test_summary_has_median_and_spread(experiment: store.Experiment) -> None:
    s = store.summarize(experiment.runs, ["cc", "threads"])
    assert len(s) == 6 and set(s["reps"]) == {2}
    row = s[(s["cc"] == "silo") & (s["threads"] == 2)].iloc[0]
    runs = experiment.runs[(experiment.runs["cc"] == "silo") & (experiment.runs["threads"] == 2)]
    assert row["throughput"] == pytest.approx(runs["throughput"].median())
    lo, hi = runs["throughput"].min(), runs["throughput"].max()
    assert row["spread_pct"] == pytest.approx(100 * (hi - lo) / row["throughput"])


def test_tpcc_row_has_tpmc_and_types() -> None:
    row = store.flatten_run(fake_report(["run", "--workload", "tpcc", "--cc", "silo", "--warehouses", "2",
                                         "--tpcc-inserts", "off"]))
    assert row["tpmc"] > 0 and row["warehouses"] == 2 and row["tpcc_inserts"] == "off"
    assert "type_new_order_throughput" in row and "rows" not in row


def test_unknown_config_fields_are_kept() -> None:
    doc = fake_report(["run", "--workload", "ycsb", "--cc", "silo"])
    doc["config"]["new_knob"] = 7
    doc["config"]["ycsb"] = {"rows": 10, "zeta": 1}
    row = store.flatten_run(doc)
    assert row["cfg_new_knob"] == 7 and row["cfg_ycsb.zeta"] == 1 and row["rows"] == 10


def test_workload_metrics_are_the_engines() -> None:
    """Each metric a workload declares in `abyss describe --json` is a column,
    named in lower case (TPC-C's tpmC is tpmc); other workloads leave it empty."""
    described = [m["name"] for w in engine.describe()["workloads"] for m in w["metrics"]]
    assert store.WORKLOAD_METRIC_COLUMNS == tuple(dict.fromkeys(n.lower() for n in described))
    assert {"tpmc", "timestamps_per_second"} <= set(store.WORKLOAD_METRIC_COLUMNS)
    assert set(store.WORKLOAD_METRIC_COLUMNS) <= set(store.TIDY_COLUMNS)
    row = store.flatten_run(fake_report(["run", "--workload", "tsalloc", "--cc", "none", "--ts-alloc", "clock"]))
    assert row["timestamps_per_second"] > 0 and row["tpmc"] is None and row["ts_alloc"] == "clock"
    row = store.flatten_run(fake_report(["run", "--workload", "ycsb", "--cc", "silo"]))
    assert all(row[c] is None for c in store.WORKLOAD_METRIC_COLUMNS)


def test_array_of_reports(tmp_path: Path) -> None:
    doc = [fake_report(["run", "--workload", "ycsb", "--cc", "timestamp", "--ts-alloc", m])
           for m in ("mutex", "clock")]
    (tmp_path / "ts.json").write_text(json.dumps(doc))
    exp = store.load_experiment(tmp_path)
    assert list(exp.runs["ts_alloc"]) == ["mutex", "clock"]
    assert exp.runs["file"].iloc[1] == "ts.json#1"


def test_plain_directory_of_reports(tmp_path: Path) -> None:
    for seed in (1, 2):
        for cc in ("silo", "occ"):
            argv = ["run", "--workload", "ycsb", "--cc", cc, "--threads", "2", "--seed", str(seed)]
            (tmp_path / f"{cc}-{seed}.json").write_text(json.dumps(fake_report(argv)))
    exp = store.load_experiment(tmp_path)
    assert exp.manifest is None and len(exp.runs) == 4
    assert exp.runs.groupby("point")["rep"].apply(sorted).tolist() == [[1, 2], [1, 2]]
    assert store.varying_params(exp.runs) == ["cc"]


def test_config_maps_back_to_flags() -> None:
    argv = ["run", "--workload", "tpcc", "--cc", "hstore", "--threads", "2", "--pin",
            "--dl-detect", "off", "--warehouses", "4", "--tpcc-mix", "neworder=100"]
    params, unknown = engine.config_to_params(fake_report(argv)["config"])
    assert not unknown
    assert engine.argv_for(params) == argv


def test_whole_number_columns_stay_integers_in_runs_csv(tmp_path) -> None:
    rows = [{"spec": "s", "commits": 3, "threads": 2, "throughput": 1.5},
            {"spec": "s", "commits": None, "threads": 4, "throughput": 2.0}]
    df = store.tidy_frame(rows)
    path = tmp_path / "runs.csv"
    df.to_csv(path, index=False)
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    first, second = (dict(zip(header, line.split(","))) for line in lines[1:])
    assert (first["commits"], first["threads"], first["throughput"]) == ("3", "2", "1.5")
    assert (second["commits"], second["threads"]) == ("", "4")


def test_histograms_table_holds_every_commit_of_every_type(experiment: store.Experiment) -> None:
    h = experiment.histograms
    assert set(store.HISTOGRAM_COLUMNS) <= set(h.columns)
    assert h["point"].notna().all() and set(h["cc"]) == {"no_wait", "silo", "hstore"}
    per_run = h.groupby(["file", "type"])["count"].sum()
    for (file, tname), total in per_run.items():
        row = experiment.runs[experiment.runs["file"] == file].iloc[0]
        assert total == row[f"type_{tname}_commits"], (file, tname)
    # The engine's nanosecond edges become microseconds.
    assert h["upper_us"].min() == pytest.approx(10.239)
    assert experiment.sweep_histograms("main").shape == h.shape
