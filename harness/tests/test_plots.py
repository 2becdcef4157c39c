"""Plots and reports: files are written, colours are fixed per scheme, and
the report carries the environment, the medians and the re-run commands."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from abyss_harness import engine, plots, report, runner, store
from abyss_harness.spec import load_spec
from conftest import FakeEngine, fake_report


def frame(schemes=("no_wait", "silo"), threads=(1, 2), reps=2) -> pd.DataFrame:
    rows = []
    for cc in schemes:
        for t in threads:
            for seed in range(1, reps + 1):
                argv = ["run", "--workload", "ycsb", "--cc", cc, "--threads", str(t), "--seed", str(seed)]
                rows.append({"sweep": "main", **store.flatten_run(fake_report(argv))})
    return pd.DataFrame(rows)


def test_every_scheme_has_its_own_colour_and_marker() -> None:
    assert set(plots.scheme_style()) == set(engine.SCHEMES)
    colours = [c for c, _ in plots.scheme_style().values()]
    assert len(set(colours)) == len(colours)
    assert set(plots.BREAKDOWN_COLOURS) == set(engine.BREAKDOWN)


def test_abort_causes_stack_to_the_abort_rate(tmp_path: Path) -> None:
    """A bar per scheme, as tall as its abort rate, split by the causes that occurred."""
    df = frame()
    df["cc_aborts"] = 300
    df["commits"] = 700
    for c in engine.ABORT_CAUSES:
        df[f"aborts_{c}"] = {"lock_conflict": 200, "wound": 100}.get(c, 0)
    files = plots.plot_breakdown(df, bar="threads", title="t", stem=tmp_path / "causes", y="abort_causes")
    data = pd.read_csv(files[-1])
    assert set(c for c in data.columns if c.startswith("rate_")) == {"rate_lock_conflict", "rate_wound"}
    assert ((data["rate_lock_conflict"] + data["rate_wound"] - 0.3).abs() < 1e-9).all()
    assert set(plots.ABORT_CAUSE_COLOURS) == set(engine.ABORT_CAUSES)


@pytest.mark.parametrize("kind", ["lines", "bars", "breakdown"])
def test_plot_writes_png_and_svg(tmp_path: Path, kind: str) -> None:
    df = frame()
    stem = tmp_path / f"p-{kind}-theta-0.8"
    if kind == "lines":
        files = plots.plot_lines(df, x="threads", y="throughput", series="cc", title="t", stem=stem)
    elif kind == "bars":
        files = plots.plot_bars(df, x="cc", y="abort_rate", series="threads", title="t", stem=stem)
    else:
        files = plots.plot_breakdown(df, bar="threads", title="t", stem=stem)
    assert [f.name for f in files] == [f"p-{kind}-theta-0.8.{ext}" for ext in ("png", "svg", "pdf", "csv")]
    assert files[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in files[1].read_bytes()[:2000]
    assert files[2].read_bytes()[:5] == b"%PDF-"
    assert not pd.read_csv(files[3]).empty


def test_the_csv_beside_a_figure_is_what_it_plots(tmp_path: Path) -> None:
    df = frame(reps=3)
    files = plots.plot_lines(df, x="threads", y="abort_rate", series="cc", title="t", stem=tmp_path / "a")
    data = pd.read_csv(files[-1])
    want = df.groupby(["threads", "cc"])["abort_rate"].median() * 100   # percent of attempts
    got = data.set_index(["threads", "cc"])["abort_rate"]
    assert sorted(got.index) == sorted(want.index)
    assert all(abs(got[k] - want[k]) < 1e-9 for k in want.index)
    assert (data["reps"] == 3).all()


def test_error_bars_only_with_repetitions(tmp_path: Path) -> None:
    # matplotlib draws error-bar caps as line markers "_"; with one run per
    # point there is no spread to draw.
    one = plots.plot_lines(frame(reps=1), x="threads", y="throughput", series="cc", title="t", stem=tmp_path / "one")
    three = plots.plot_lines(frame(reps=3), x="threads", y="throughput", series="cc", title="t",
                             stem=tmp_path / "three")
    assert plots._spread(plots._medians(frame(reps=1), ["threads", "cc"], "throughput"), 1.0) is None
    assert plots._spread(plots._medians(frame(reps=3), ["threads", "cc"], "throughput"), 1.0) is not None
    assert one[1].read_text().count("<path") < three[1].read_text().count("<path")


def test_scheme_colour_is_used_in_the_svg(tmp_path: Path) -> None:
    files = plots.plot_lines(frame(schemes=("tictoc",)), x="threads", y="throughput", series="cc",
                             title="t", stem=tmp_path / "c")
    colour = plots.scheme_style()["tictoc"][0]
    assert colour in files[1].read_text()


def test_report_for_a_sweep(tmp_path: Path, spec_file: Path) -> None:
    runner.sweep(load_spec(spec_file, cores=2), tmp_path, FakeEngine(), Console(file=open("/dev/null", "w")))
    written = report.write_report(tmp_path)
    exp_dir = tmp_path / "unit"
    md = (exp_dir / "report.md").read_text()
    html = (exp_dir / "report.html").read_text()
    pngs = sorted((exp_dir / "plots").glob("*.png"))
    assert len(pngs) == 2 and len(list((exp_dir / "plots").glob("*.svg"))) == 2
    assert len(list((exp_dir / "plots").glob("*.pdf"))) == 2 and len(list((exp_dir / "plots").glob("*.csv"))) == 2
    for text in (md, html):
        assert "Test CPU" in text and "0123456789ab" in text and "Release" in text
        assert "./abyss run --workload ycsb --cc hstore --threads 2" in text
        assert "--partitions 2" in text
        assert "Test Fig. 1" in text
    assert "plots/" in md and "<img src=\"plots/" in html
    assert any(w.html == tmp_path / "report.html" for w in written), "an index for the results dir"
    assert (tmp_path / "runs.csv").is_file()


TWO_SWEEPS = """
name = "twosweeps"
title = "two sweeps, one figure"
reps = 1
[fixed]
workload = "ycsb"
rows = 4096
duration = 0.05
warmup = 0.0
[axes]
threads = [1, 2]
[[sweep]]
label = "a"
axes = { cc = ["no_wait"] }
[[sweep]]
label = "b"
axes = { cc = ["silo", "tictoc"] }
[[plot]]
name = "together"
kind = "lines"
combine = true
[[plot]]
name = "apart"
kind = "lines"
"""


def _swept_and_reported(tmp_path: Path, spec_text: str, size: str | None = None) -> Path:
    """The experiment directory of a spec swept on the fake engine and reported."""
    spec_file = tmp_path / "twosweeps.toml"
    spec_file.write_text(spec_text, encoding="utf-8")
    runner.sweep(load_spec(spec_file, cores=2), tmp_path, FakeEngine(), Console(file=open("/dev/null", "w")))
    report.write_report(tmp_path, size)
    return tmp_path / "twosweeps"


def test_a_combined_plot_draws_every_sweep_in_one_figure(tmp_path: Path) -> None:
    plot_dir = _swept_and_reported(tmp_path, TWO_SWEEPS) / "plots"
    assert sorted(p.name for p in plot_dir.glob("*.png")) == ["apart_a.png", "apart_b.png", "together.png"]
    svg = (plot_dir / "together.svg").read_text()
    for cc in ("no_wait", "silo", "tictoc"):
        assert plots.scheme_style()[cc][0] in svg


def test_combine_is_only_for_lines(tmp_path: Path) -> None:
    spec_file = tmp_path / "bad.toml"
    spec_file.write_text(TWO_SWEEPS.replace('name = "apart"\nkind = "lines"', 'name = "apart"\nkind = "bars"\n'
                                            'x = "cc"\ncombine = true'), encoding="utf-8")
    with pytest.raises(Exception, match="combine"):
        load_spec(spec_file, cores=2)


def _png_width(path: Path) -> int:
    return int.from_bytes(path.read_bytes()[16:20], "big")


def test_column_size_is_a_papers_column_and_titles_stay_out_unless_asked(tmp_path: Path) -> None:
    df = frame()
    wide = plots.plot_lines(df, x="threads", y="throughput", series="cc", title="Abyss", stem=tmp_path / "w")
    with plots.look("column"):
        narrow = plots.plot_lines(df, x="threads", y="throughput", series="cc", title="Abyss", stem=tmp_path / "n")
    # 3.3 in at 150 dpi, give or take the tight bounding box.
    assert 420 <= _png_width(narrow[0]) <= 560 < _png_width(wide[0])
    assert "Abyss" not in wide[1].read_text()
    with plots.look("screen", inside_title=True):
        titled = plots.plot_lines(df, x="threads", y="throughput", series="cc", title="Abyss", stem=tmp_path / "t")
    assert "Abyss" in titled[1].read_text()
    with pytest.raises(ValueError, match="figure size"):
        with plots.look("poster"):
            pass


def test_a_spec_chooses_the_size_and_the_title_placement(tmp_path: Path) -> None:
    spec_file = tmp_path / "sized.toml"
    spec_file.write_text(TWO_SWEEPS.replace('name = "apart"\nkind = "lines"',
                                            'name = "apart"\nkind = "lines"\nsize = "column"\ninside_title = true'),
                         encoding="utf-8")
    p = [p for p in load_spec(spec_file, cores=2).plots if p.name == "apart"][0]
    assert (p.size, p.inside_title) == ("column", True)
    spec_file.write_text(TWO_SWEEPS.replace('name = "apart"\nkind = "lines"', 'name = "apart"\nkind = "lines"\n'
                                            'size = "poster"'), encoding="utf-8")
    with pytest.raises(Exception, match="poster"):
        load_spec(spec_file, cores=2)


def test_the_2pl_blues_differ_in_line_style_for_greyscale_print() -> None:
    dashes = plots.series_dashes("cc", ["no_wait", "wait_die", "dl_detect"])
    assert len(set(dashes.values())) == 3


def test_integer_columns_order_and_tick_as_integers() -> None:
    # runs.csv keeps whole numbers in pandas' nullable Int64, whose values are numpy integers.
    assert plots.ordered("threads", pd.Series([4, 1, 2, 1], dtype="Int64")) == [1, 2, 4]
    assert all(type(v) is int for v in plots.ordered("threads", pd.Series([2, 1], dtype="Int64")))


def histograms(schemes=("no_wait", "silo"), reps=2) -> pd.DataFrame:
    rows = []
    for cc in schemes:
        for seed in range(1, reps + 1):
            argv = ["run", "--workload", "tpcc", "--cc", cc, "--threads", "2", "--seed", str(seed)]
            rows += [{"file": f"{cc}{seed}", **b} for b in store.flatten_histograms(fake_report(argv))]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("tail", [False, True])
def test_cdf_pools_the_buckets_and_ends_at_one(tmp_path: Path, tail: bool) -> None:
    h = histograms()
    files = plots.plot_cdf(h, series="cc", title="t", stem=tmp_path / "cdf", tail=tail)
    data = pd.read_csv(files[-1])
    for cc, d in data.groupby("cc"):
        assert d["fraction"].is_monotonic_increasing and d["fraction"].iloc[-1] == pytest.approx(1.0)
        assert d["count"].sum() == h.loc[h["cc"] == cc, "count"].sum()   # both types, both repetitions
        assert d["upper_us"].is_monotonic_increasing
    svg = files[1].read_text()
    assert plots.scheme_style()["silo"][0] in svg
    assert ("0.999" in svg) == tail, "the logit axis names the tail's decades"


def test_tail_compares_percentiles_per_scheme(tmp_path: Path) -> None:
    df = frame(schemes=("silo", "no_wait", "tictoc"))
    files = plots.plot_tail(df, x="cc", txn_type=None, title="t", stem=tmp_path / "tail")
    data = pd.read_csv(files[-1])
    assert list(data["cc"]) == ["no_wait", "silo", "tictoc"], "registry order"
    assert list(data.columns) == ["cc", "p50", "p90", "p99", "p99.9", "max"]
    assert (data["p99.9"] == 90.0).all() and (data["max"] == 200.0).all()
    typed = plots.plot_tail(df, x="cc", txn_type="read_only", title="t", stem=tmp_path / "typed")
    assert list(pd.read_csv(typed[-1])["p99"]) == [50.0] * 3


def test_breakdown_in_microseconds_per_commit(tmp_path: Path) -> None:
    df = frame(reps=1)
    files = plots.plot_breakdown(df, bar="threads", title="t", stem=tmp_path / "us", y="us_per_txn")
    data = pd.read_csv(files[-1])
    for _, r in data.iterrows():
        run = df[(df["cc"] == r["cc"]) & (df["threads"] == r["threads"])].iloc[0]
        assert r["us_useful"] == pytest.approx(run["sec_useful"] / run["commits"] * 1e6)
    assert "worker time per commit" in files[1].read_text()


def _pdf_width_inches(path: Path) -> float:
    out = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    size = next(line for line in out.splitlines() if line.startswith("Page size:"))
    return float(size.split()[2]) / 72


def samples(schemes=("no_wait", "mvcc"), intervals=5) -> pd.DataFrame:
    """A samples table as store.flatten_samples makes it: MVCC's memory grows."""
    return pd.DataFrame([{"cc": cc, "interval": k, "end_s": float(k), "throughput": 1e5 + k,
                          "rss_bytes": 2**30 + (k * 2**22 if cc == "mvcc" else 0)}
                         for cc in schemes for k in range(1, intervals + 1)])


@pytest.mark.parametrize("kind", ["lines", "breakdown", "cdf", "tail", "timeseries"])
def test_column_pdfs_are_a_column_wide_and_render(tmp_path: Path, kind: str, monkeypatch) -> None:
    # Every legend lies clear of every panel: none is drawn under another axes.
    legends, overlaps = [], []
    save = plots._save

    def checked(fig, stem, data):
        r = fig.canvas.get_renderer()
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is not None:
                legends.append(legend)
                box = legend.get_window_extent(r)
                overlaps.extend(other for other in fig.axes if box.overlaps(other.get_window_extent(r)))
        return save(fig, stem, data)

    monkeypatch.setattr(plots, "_save", checked)
    # pdfinfo and pdftoppm are poppler-utils, which ./abyss installs.
    with plots.look("column"):
        if kind == "lines":
            files = plots.plot_lines(frame(), x="threads", y="throughput", series="cc", title="t", stem=tmp_path / "f")
        elif kind == "breakdown":
            files = plots.plot_breakdown(frame(), bar="threads", title="t", stem=tmp_path / "f")
        elif kind == "cdf":
            files = plots.plot_cdf(histograms(), series="cc", title="t", stem=tmp_path / "f", tail=True)
        elif kind == "timeseries":
            files = plots.plot_timeseries(samples(), y="throughput", series="cc", title="t", stem=tmp_path / "f")
        else:
            files = plots.plot_tail(frame(schemes=tuple(engine.SCHEMES)), x="cc", txn_type=None, title="t",
                                    stem=tmp_path / "f")
    pdf = files[2]
    assert _pdf_width_inches(pdf) == pytest.approx(3.3, abs=0.03)
    subprocess.run(["pdftoppm", "-png", "-r", "100", "-singlefile", str(pdf), str(tmp_path / "page")], check=True)
    assert 320 <= _png_width(tmp_path / "page.png") <= 335
    assert legends, "no legend was drawn, so none was checked for overlaps"
    assert overlaps == []
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    if kind in ("lines", "cdf", "timeseries"):
        assert "NO_WAIT" in text


def test_default_plots_show_latency_against_threads_and_the_tail_at_the_most_threads() -> None:
    kinds = {p.name: p for p in plots.default_plots(["cc", "threads"], has_breakdown=True)}
    assert kinds["p99-vs-threads"].y == "p99_us" and kinds["p99-vs-threads"].logy
    assert kinds["latency-cdf"].where == {"threads": "max"} and kinds["tail-latency"].kind == "tail"
    df = pd.DataFrame({"threads": [1, 2, 4, 4], "x": [1, 2, 3, 4]})
    assert list(plots._select(df, {"threads": "max"})["x"]) == [3, 4]


PLOTS_SPEC = TWO_SWEEPS + """
[[plot]]
name = "dist"
kind = "cdf"
where = { threads = "max", type = "read_only" }
logy = true
[[plot]]
name = "tails"
kind = "tail"
where = { threads = "min" }
[[plot]]
name = "costs"
kind = "breakdown"
y = "us_per_txn"
"""


def test_a_spec_draws_cdf_tail_and_absolute_breakdown(tmp_path: Path) -> None:
    exp_dir = _swept_and_reported(tmp_path, PLOTS_SPEC, size="column")
    names = sorted(p.stem for p in (exp_dir / "plots").glob("*.pdf"))
    assert {"dist_a", "dist_b", "tails_a", "tails_b", "costs_a", "costs_b"} <= set(names)
    assert names == sorted(p.stem for p in (exp_dir / "plots-column").glob("*.pdf"))
    dist = pd.read_csv(exp_dir / "plots" / "dist_b.csv")
    assert set(dist["cc"]) == {"silo", "tictoc"}
    md = (exp_dir / "report.md").read_text()
    assert "latency distribution, threads=2, type=read_only" in md
    assert "tail latency, threads=1" in md


@pytest.mark.parametrize("bad, message", [
    ('kind = "cdf"\ny = "throughput"', "shows latency"),
    ('kind = "breakdown"\ny = "seconds"', "us_per_txn"),
    ('kind = "lines"\nwhere = { type = "payment" }', "only in cdf and tail"),
    ('kind = "cdf"\nwhere = { cc = "max" }', "max"),
])
def test_plot_kinds_reject_what_they_cannot_draw(tmp_path: Path, bad: str, message: str) -> None:
    spec_file = tmp_path / "bad.toml"
    spec_file.write_text(TWO_SWEEPS.replace('name = "apart"\nkind = "lines"', f'name = "apart"\n{bad}'),
                         encoding="utf-8")
    with pytest.raises(Exception, match=message):
        load_spec(spec_file, cores=2)


def test_memory_axis_spans_the_values_so_growth_shows(tmp_path: Path, monkeypatch) -> None:
    limits = []
    save = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, stem, data: (limits.append(fig.axes[1].get_ylim()),
                                                                 save(fig, stem, data))[1])
    plots.plot_timeseries(samples(), y="throughput", series="cc", title="t", stem=tmp_path / "ts")
    lo, hi = limits[0]
    # 1024 MiB loaded, MVCC adds 4 MiB a second up to 1044: the axis starts near
    # the base, not at 0, and the growth takes a third of its height or more.
    assert 1000 < lo < 1024 and 1044 < hi < 1100
    assert (1044 - 1024) / (hi - lo) > 0.3


def test_a_point_whose_window_missed_steady_state_is_drawn_hollow(tmp_path: Path) -> None:
    df = frame(reps=1)
    assert "steady" in df and "commits_per_worker" in df
    steady = plots.plot_lines(df.assign(steady=True), x="threads", y="throughput", series="cc", title="t",
                              stem=tmp_path / "steady")
    missed = df.assign(steady=(df["threads"] == 1))        # the 2-thread points missed it
    hollow = plots.plot_lines(missed, x="threads", y="throughput", series="cc", title="t",
                              stem=tmp_path / "hollow")
    assert "not at steady state" not in steady[1].read_text()
    assert "not at steady state" in hollow[1].read_text()
    # Hollow markers are filled white: one more white fill per point that missed.
    assert hollow[1].read_text().count("#ffffff") > steady[1].read_text().count("#ffffff")
    data = pd.read_csv(hollow[-1]).set_index(["threads", "cc"])
    assert not data.loc[(2, "silo"), "steady"] and data.loc[(1, "silo"), "steady"]
    runs = missed.assign(spec="s", point=missed["cc"] + missed["threads"].astype(str), file="f")
    summary = store.summarize(runs, ["threads", "cc"]).set_index(["threads", "cc"])
    assert not summary.loc[(2, "no_wait"), "steady"] and summary.loc[(1, "no_wait"), "steady"]
