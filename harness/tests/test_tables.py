"""Declared tables ([[table]]): parsing and every error path, rendering from
a fake engine's runs (lines, groups, medians, labels, formats, ratios), the
terminal and report output, and the bench specs that use them."""

from __future__ import annotations

import io
import statistics
from pathlib import Path

import pytest
from rich.console import Console

from abyss_harness import engine, grid, reproduce, report, runner, store, tables
from abyss_harness.spec import SameAs, SpecError, parse_spec
from conftest import FakeEngine

YCSB_LIKE = """
name = "tab"
reps = 3
[fixed]
workload = "ycsb"
rows = 4096
duration = 0.05
warmup = 0.0
[axes]
write_ratio = [0.0, 0.5]
threads = [1, 2]
cc = ["none", "no_wait", "hstore"]
[per_scheme.hstore]
partitions = { same_as = "threads" }
[[table]]
title = "T (median of {reps}), {rows} rows, {duration:g} s"
rows = ["write_ratio", "threads"]
columns = ["cc"]
ratio_to = "none"
headers = { write_ratio = "mix" }
labels = { write_ratio = { "0" = "read-only", "0.5" = "50% writes" } }
"""

LATCH_LIKE = """
name = "lat"
reps = 1
[fixed]
workload = "ycsb"
threads = 2
theta = 0.9
duration = 0.05
[axes]
cc = ["none", "silo"]
[[sweep]]
label = "spin"
title = "spin, no backoff"
fixed = { latch = "spin", backoff = "none" }
[[sweep]]
label = "queue"
title = "queue, exp backoff"
fixed = { latch = "queue", backoff = "exp" }
[[table]]
title = "theta {theta:.2f}, {threads} threads"
rows = ["cc"]
columns = ["sweep"]
cells = ["throughput", "abort_rate"]
ratio_to = "spin"
"""

GRID_LIKE = """
name = "grid"
reps = 1
[fixed]
workload = "tpcc"
tpcc_schema = "full"
duration = 0.05
[axes]
cc = ["none", "silo"]
warehouses = [1, 4]
threads = [1, 2]
[[table]]
title = "TPC-C {tpcc_schema}"
rows = ["cc"]
columns = ["warehouses", "threads"]
cells = ["throughput", "abort_rate"]
column_label = "{warehouses} wh, {threads} thr"
"""


def parse(text: str, **kw):
    return parse_spec(text, "t.toml", cores=kw.pop("cores", 2), **kw)


def error(text: str) -> str:
    with pytest.raises(SpecError) as e:
        parse(text)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("t.toml: ")
    return msg


def quiet() -> Console:
    return Console(file=open("/dev/null", "w"), force_terminal=False)


def swept(tmp_path: Path, text: str, **kw) -> store.Experiment:
    spec = parse(text, **kw)
    exp_dir, res = runner.sweep(spec, tmp_path, FakeEngine(), quiet())
    assert not res.failed
    return store.load_experiment(exp_dir)


def split(line: str) -> list[str]:
    return [c for c in line.split("  ") if c.strip()]


# -- parsing -----------------------------------------------------------------------

def test_a_table_parses_with_its_defaults() -> None:
    (t,) = parse(YCSB_LIKE).tables
    assert (t.rows, t.columns, t.cells, t.ratio_to) == (["write_ratio", "threads"], ["cc"], ["throughput"], "none")
    assert t.labels == {"write_ratio": {"0": "read-only", "0.5": "50% writes"}}
    (t,) = parse(YCSB_LIKE.replace('ratio_to = "none"\n', "").replace("title = ", "#")).tables
    assert t.ratio_to is None and t.title == "tab", "the title defaults to the spec's"


@pytest.mark.parametrize("edit, words", [
    (('rows = ["write_ratio", "threads"]', 'rows = ["write_ratio"]'), ["'threads'", "neither"]),
    (('rows = ["write_ratio", "threads"]', 'rows = ["write_ratio", "thread"]'), ["'threads'", "not a parameter"]),
    (('columns = ["cc"]', 'columns = ["cc", "threads"]'), ["also a row"]),
    (('columns = ["cc"]', "columns = []"), ["columns", "required"]),
    (('ratio_to = "none"', 'ratio_to = "2pl"'), ["ratio_to", "'2pl'"]),
    (('ratio_to = "none"', 'cells = ["speed"]'), ["cells", "metrics"]),
    (("{rows} rows", "{row} rows"), ["{row}", "not set"]),
    (("{duration:g}", "{duration:q}"), ["title"]),
    (("{duration:g}", "{}"), ["placeholder"]),
    (('headers = { write_ratio = "mix" }', 'headers = { speed = "x" }'), ["headers.speed"]),
    (('headers = { write_ratio = "mix" }', 'formats = { theta = ".1f" }'), ["formats.theta"]),
    (('headers = { write_ratio = "mix" }', 'formats = { threads = "q" }'), ["formats.threads", "number format"]),
    (('labels = { write_ratio', 'labels = { theta'), ["labels.theta"]),
    (("[[table]]", "[[table]]\nwidth = 3"), ["table[0].width", "unknown key"]),
])
def test_table_errors_name_the_key(edit: tuple[str, str], words: list[str]) -> None:
    assert edit[0] in YCSB_LIKE
    msg = error(YCSB_LIKE.replace(*edit))
    for w in words:
        assert w in msg, (w, msg)


def test_sweeps_must_be_told_apart() -> None:
    msg = error(LATCH_LIKE.replace('columns = ["sweep"]', 'columns = ["threads"]').replace('ratio_to = "spin"', ""))
    assert "differs between sweeps" in msg and "'backoff'" in msg
    assert "not one of spin, queue" in error(LATCH_LIKE.replace('ratio_to = "spin"', 'ratio_to = "fast"'))
    assert "column parameter" in error(GRID_LIKE.replace("{threads} thr", "{cc} thr"))


def test_scales_are_checked_and_applied(tmp_path: Path) -> None:
    assert "not one of the cells" in error(GRID_LIKE + "scales = { tpmc = 1e-6 }\n")
    assert "positive number" in error(GRID_LIKE + "scales = { throughput = 0 }\n")
    exp = swept(tmp_path, GRID_LIKE + 'scales = { throughput = 1e-3 }\nformats = { throughput = ".2f" }\n')
    (r,) = tables.render_all(exp)
    df = exp.runs
    first = statistics.median(df[(df.cc == "none") & (df.warehouses == 1) & (df.threads == 1)].throughput)
    assert f"{first / 1000:.2f}" in r.lines[1].split()


# -- rendering ----------------------------------------------------------------------

def test_rendered_table_has_the_medians_in_grid_order(tmp_path: Path) -> None:
    exp = swept(tmp_path, YCSB_LIKE)
    (r,) = tables.render_all(exp)
    assert r.title == "T (median of 3), 4096 rows, 0.05 s"
    header, *lines = r.lines
    assert header.split() == ["mix", "threads", "none", "no_wait", "hstore", "(ratio", "to", "none)"]
    assert [ln.split()[:2] if ln.startswith("read") else ln.split()[:3] for ln in lines] == [
        ["read-only", "1"], ["read-only", "2"], ["50%", "writes", "1"], ["50%", "writes", "2"]]
    df = exp.runs
    for line, (wr, th) in zip(lines, [(0.0, 1), (0.0, 2), (0.5, 1), (0.5, 2)]):
        words = line.split()[-5:]      # three medians, two ratios
        med = {cc: statistics.median(df[(df.write_ratio == wr) & (df.threads == th) & (df.cc == cc)].throughput)
               for cc in ("none", "no_wait", "hstore")}
        assert words[:3] == [f"{med[c]:.0f}" for c in ("none", "no_wait", "hstore")]
        assert words[3:] == [f"{med['no_wait'] / med['none']:.2f}", f"{med['hstore'] / med['none']:.2f}"]
    # Columns line up: every line has the same length up to the ratio block.
    col = header.index("(ratio")
    assert all(ln[col - 2:col] == "  " for ln in lines)


def test_a_single_ratio_column_and_sweep_titles(tmp_path: Path) -> None:
    exp = swept(tmp_path, LATCH_LIKE)
    (r,) = tables.render_all(exp)
    assert r.title == "theta 0.90, 2 threads"
    header, *lines = r.lines
    assert split(header) == ["scheme", "spin, no backoff", "abort", "queue, exp backoff", "abort", "ratio"]
    assert [ln.split()[0] for ln in lines] == ["none", "silo"]
    df = exp.runs
    for line, cc in zip(lines, ["none", "silo"]):
        w = line.split()
        spin, queue = (df[(df.cc == cc) & (df.sweep == s)].iloc[0] for s in ("spin", "queue"))
        assert w[1:] == [f"{spin.throughput:.0f}", f"{spin.abort_rate:.3f}", f"{queue.throughput:.0f}",
                         f"{queue.abort_rate:.3f}", f"{queue.throughput / spin.throughput:.2f}"]
        assert not line.startswith(" ") and header.startswith("scheme")


def test_column_groups_from_two_parameters(tmp_path: Path) -> None:
    exp = swept(tmp_path, GRID_LIKE)
    (r,) = tables.render_all(exp)
    assert r.title == "TPC-C full"
    assert split(r.lines[0]) == ["scheme", "1 wh, 1 thr", "abort", "1 wh, 2 thr", "abort",
                                 "4 wh, 1 thr", "abort", "4 wh, 2 thr", "abort"]
    assert len(r.lines) == 3 and all(len(ln.split()) == 9 for ln in r.lines[1:])


def test_a_ratio_over_two_column_parameters_pairs_each_group_with_its_own_baseline(tmp_path: Path) -> None:
    exp = swept(tmp_path, GRID_LIKE + "ratio_to = 1\n")
    (r,) = tables.render_all(exp)
    header, *lines = r.lines
    assert header.endswith("(ratio to 1)")
    df = exp.runs
    for line, cc in zip(lines, ["none", "silo"]):
        ratios = [float(x) for x in line.split()[-2:]]
        want = []
        for threads in (1, 2):
            point = df[(df.cc == cc) & (df.threads == threads)]
            four, one = (point[point.warehouses == w].throughput.median() for w in (4, 1))
            want.append(round(four / one, 2))
        assert ratios == want, (line, want)


def test_missing_runs_show_a_dash_and_the_baseline_may_be_absent(tmp_path: Path) -> None:
    spec = parse(YCSB_LIKE.replace("reps = 3", "reps = 1"))
    exp_dir, _ = runner.sweep(spec, tmp_path, FakeEngine(fail_on={1}), quiet())
    (r,) = tables.render_all(store.load_experiment(exp_dir))
    first = r.lines[1].split()
    assert first[2] == "–" and first[-2:] == ["–", "–"], "the first run (none) failed"
    assert "–" not in r.lines[2]
    exp = swept(tmp_path / "b", YCSB_LIKE, overrides={"cc": "no_wait,hstore"})
    (r,) = tables.render_all(exp)
    assert r.lines[0].split()[-3:] == ["(ratio", "to", "none)"] and r.lines[1].split()[-1] == "–"


def test_formats_and_labels_apply(tmp_path: Path) -> None:
    text = YCSB_LIKE.replace('headers = { write_ratio = "mix" }',
                             'headers = { write_ratio = "mix", throughput = "x" }\n'
                             'formats = { threads = ".1f", ratio = ".3f" }')
    (r,) = tables.render_all(swept(tmp_path, text))
    assert r.lines[1].split()[1] == "1.0"
    assert len(r.lines[1].split()[-1].split(".")[1]) == 3


def test_tables_are_printed_written_and_in_the_report(tmp_path: Path) -> None:
    exp = swept(tmp_path, LATCH_LIKE)
    text = (exp.path / tables.TABLES_TXT).read_text()
    assert text.startswith("theta 0.90, 2 threads\nscheme")
    buf = io.StringIO()
    report.print_summary(exp, Console(file=buf, width=60, force_terminal=False))
    assert buf.getvalue() == text, "printed as written, never wrapped"
    w = report.write_experiment_report(exp)
    md = w.markdown.read_text()
    assert "## Tables" in md and text.strip() in md


def test_a_spec_without_tables_prints_the_median_grid(tmp_path: Path, spec_file: Path) -> None:
    exp = swept(tmp_path, spec_file.read_text())
    buf = io.StringIO()
    report.print_summary(exp, Console(file=buf, width=200, force_terminal=False))
    assert "median txn/s" in buf.getvalue() and not (exp.path / tables.TABLES_TXT).exists()


# -- the bench specs ----------------------------------------------------------------

def every_scheme() -> list[str]:
    """The registered schemes in registry order, as the engine describes them."""
    return list(engine.SCHEMES)


def test_bench_ycsb_spec() -> None:
    spec = reproduce.load("bench-ycsb", cores=2)
    assert (spec.reps, spec.prime_runs) == (1, 1)
    (sw,) = spec.sweeps
    assert sw.axes == {"write_ratio": [0.0, 0.5], "theta": [0.0, 0.6, 0.9], "threads": [1, 2], "cc": every_scheme()}
    assert sw.fixed == {"workload": "ycsb", "rows": 1 << 20, "duration": 1.0, "warmup": 0.2}
    assert sw.per_scheme == {"hstore": {"partitions": SameAs("threads")}}
    runs = grid.runs(spec, 3)
    points = 2 * 3 * 2 * len(every_scheme())
    assert len(runs) == points * 3
    assert {r.point.params["seed"] + r.rep - 1 for r in runs} == {1, 2, 3}
    assert [a[a.index("--seed") + 1] for a in (r.argv for r in runs[::points])] == ["1", "2", "3"]
    (t,) = spec.tables
    assert (t.rows, t.columns, t.ratio_to) == (["write_ratio", "theta", "threads"], ["cc"], "none")


def test_bench_hstore_spec() -> None:
    spec = reproduce.load("bench-hstore", cores=4)
    (sw,) = spec.sweeps
    assert sw.fixed["cc"] == "hstore" and sw.fixed["threads"] == 4 and sw.fixed["partitions"] == 8
    assert sw.axes == {"multi_part_ratio": [0.0, 0.1, 0.5, 1.0], "parts_per_txn": [1, 2, 4]}
    (t,) = spec.tables
    assert (t.rows, t.columns, t.column_label) == (["multi_part_ratio"], ["parts_per_txn"],
                                                    "parts/txn {parts_per_txn}")


def test_bench_tpcc_spec() -> None:
    spec = reproduce.load("bench-tpcc", cores=2)
    (sw,) = spec.sweeps
    assert sw.axes == {"cc": every_scheme(), "warehouses": [1, 4], "threads": [1, 2]}
    assert (sw.fixed["tpcc_schema"], sw.fixed["tpcc_inserts"]) == ("full", "on")
    (t,) = spec.tables
    assert t.cells == ["throughput", "abort_rate"] and t.columns == ["warehouses", "threads"]
    spec = reproduce.load("bench-tpcc", cores=2, overrides={"warehouses": "1,4,8", "threads": "2"})
    assert spec.sweeps[0].axes["warehouses"] == [1, 4, 8] and spec.sweeps[0].fixed["threads"] == 2


def test_bench_smallbank_spec() -> None:
    spec = reproduce.load("bench-smallbank", cores=2)
    (sw,) = spec.sweeps
    assert sw.axes == {"cc": every_scheme(), "hot_accounts": [0, 10], "threads": [1, 2]}
    assert (sw.fixed["workload"], sw.fixed["accounts"], sw.fixed["hot_ratio"]) == ("smallbank", 100000, 0.9)
    (t,) = spec.tables
    assert t.cells == ["throughput", "abort_rate"] and t.columns == ["hot_accounts", "threads"]


def test_bench_tatp_spec() -> None:
    spec = reproduce.load("bench-tatp", cores=2)
    (sw,) = spec.sweeps
    assert sw.axes == {"cc": every_scheme(), "subscribers": [100, 100000], "threads": [1, 2]}
    assert sw.fixed["workload"] == "tatp"
    (t,) = spec.tables
    assert t.cells == ["throughput", "abort_rate"] and t.columns == ["subscribers", "threads"]


def test_bench_long_readers_spec() -> None:
    spec = reproduce.load("bench-long-readers", cores=2)
    (sw,) = spec.sweeps
    assert sw.axes == {"cc": every_scheme(), "long_reader_rows": [1000, 5000]}
    assert (sw.fixed["workload"], sw.fixed["long_reader_ratio"], sw.fixed["threads"]) == ("ycsb", 0.02, 2)
    (t,) = spec.tables
    assert t.cells == ["type_long_read_throughput", "type_long_read_abort_rate", "type_read_write_throughput"]


def test_bench_latch_spec() -> None:
    spec = reproduce.load("bench-latch", cores=2)
    assert [(s.label, s.fixed["latch"], s.fixed["backoff"]) for s in spec.sweeps] == [
        ("spin", "spin", "none"), ("queue", "queue", "exp")]
    assert all(s.axes == {"cc": every_scheme()} and s.fixed["threads"] == 2 and s.fixed["theta"] == 0.9
               for s in spec.sweeps)
    (t,) = spec.tables
    assert (t.columns, t.ratio_to) == (["sweep"], "spin")


def test_ts_alloc_spec() -> None:
    """`./abyss bench ts`: Abyss Fig. 6 on the tsalloc workload, Fig. 7 on YCSB."""
    methods = ["mutex", "atomic", "batch:8", "batch:16", "clock"]
    spec = reproduce.load("bench-ts", cores=4)
    micro, ycsb = spec.sweeps
    assert (micro.label, micro.fixed["workload"], micro.fixed["cc"]) == ("micro", "tsalloc", "none")
    assert micro.axes == {"ts_alloc": methods, "threads": [1, 2, 3, 4]}
    assert (ycsb.label, ycsb.fixed["workload"], ycsb.fixed["cc"]) == ("ycsb", "ycsb", "timestamp")
    assert (ycsb.fixed["threads"], ycsb.fixed["write_ratio"]) == (4, 0.5)
    assert ycsb.axes == {"ts_alloc": methods, "theta": [0.0, 0.6]}
    t6, t7 = spec.tables
    assert (t6.sweeps, t6.rows, t6.columns, t6.cells) == (["micro"], ["threads"], ["ts_alloc"],
                                                          ["timestamps_per_second"])
    assert (t7.sweeps, t7.rows, t7.columns, t7.cells) == (["ycsb"], ["theta"], ["ts_alloc"],
                                                          ["throughput", "abort_rate"])
    assert [(p.sweeps, p.y) for p in spec.plots][:2] == [(["micro"], "timestamps_per_second"),
                                                         (["ycsb"], "throughput")]


def test_ts_alloc_spec_renders_both_tables(tmp_path: Path) -> None:
    spec = reproduce.load("bench-ts", cores=2, overrides={"duration": "0.01"})
    exp_dir, _ = runner.sweep(spec, tmp_path, FakeEngine(), quiet())
    exp = store.load_experiment(exp_dir)
    micro, ycsb = tables.render_all(exp)
    assert micro.title.startswith("Timestamp allocation") and "0.01 s per point" in micro.title
    assert micro.lines[0].split() == ["threads", "mutex", "atomic", "batch:8", "batch:16", "clock"]
    assert [ln.split()[0] for ln in micro.lines[1:]] == ["1", "2"]
    df = exp.runs
    one = df[(df.sweep == "micro") & (df.threads == 1) & (df.ts_alloc == "mutex")].timestamps_per_second
    assert micro.lines[1].split()[1] == f"{statistics.median(one) / 1e6:.1f}"
    assert "2 threads" in ycsb.title
    assert ycsb.lines[0].split()[:3] == ["theta", "mutex", "abort"]
    assert [ln.split()[0] for ln in ycsb.lines[1:]] == ["0.00", "0.60"]
    assert "–" not in micro.text + ycsb.text


def test_bench_latches_specs_set_each_latch_kind_beside_spin() -> None:
    """`./abyss bench latches-ycsb|latches-tpcc`: every latching scheme with
    spin, queue and mutex latches at 1 and 2 threads, ratios to spin."""
    latching = ["wait_die", "dl_detect", "wound_wait", "timestamp", "mvcc", "hstore"]
    for name, workload in (("bench-latches-ycsb", "ycsb"), ("bench-latches-tpcc", "tpcc")):
        spec = reproduce.load(name, cores=2)
        assert [(s.label, s.fixed["latch"]) for s in spec.sweeps] == [
            ("spin", "spin"), ("queue", "queue"), ("mutex", "mutex")]
        assert all(s.fixed["workload"] == workload and s.axes == {"cc": latching, "threads": [1, 2]}
                   for s in spec.sweeps)
        (t,) = spec.tables
        assert (t.columns, t.ratio_to) == (["sweep", "threads"], "spin")


@pytest.mark.parametrize("name", ["bench-ycsb", "bench-hstore", "bench-tpcc", "bench-latch", "bench-latches-ycsb",
                                  "bench-latches-tpcc"])
def test_bench_specs_render_with_the_fake_engine(tmp_path: Path, name: str) -> None:
    spec = reproduce.load(name, cores=2, overrides={"duration": "0.01"})
    fake = FakeEngine()
    exp_dir, res = runner.sweep(spec, tmp_path, fake, quiet())
    assert len(fake.calls) == res.total + 1, "one priming run"
    (r,) = tables.render_all(store.load_experiment(exp_dir))
    assert "0.01 s per run" in r.title and "median of 1" in r.title
    assert "–" not in "\n".join(r.lines)


def test_all_is_every_choice_of_a_choice_parameter() -> None:
    spec = parse_spec('name = "t"\n[fixed]\nworkload = "ycsb"\n[axes]\ncc = "all"\n', cores=2)
    assert spec.sweeps[0].axes["cc"] == every_scheme() and "global_lock" in every_scheme()
    with pytest.raises(SpecError, match="a list of values"):
        parse_spec('name = "t"\n[fixed]\nworkload = "ycsb"\n[axes]\ntheta = "all"\n', cores=2)
