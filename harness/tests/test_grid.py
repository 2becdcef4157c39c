"""Grid expansion: points, repetitions, seeds, per-scheme values, file keys."""

from __future__ import annotations

import pytest

from abyss_harness import grid
from abyss_harness.spec import SpecError, parse_spec
from conftest import SPEC


def spec(text: str = SPEC, **kw):
    return parse_spec(text, "unit.toml", cores=2, **kw)


def test_points_are_the_product_of_the_axes_last_axis_fastest() -> None:
    pts = grid.points(spec())
    assert [(p.params["cc"], p.params["threads"]) for p in pts] == [
        ("no_wait", 1), ("no_wait", 2), ("silo", 1), ("silo", 2), ("hstore", 1), ("hstore", 2)]
    assert pts[0].axes == {"cc": "no_wait", "threads": 1}


def test_runs_are_repetition_major_with_one_seed_per_repetition() -> None:
    runs = grid.runs(spec())
    assert len(runs) == 12
    assert [r.rep for r in runs] == [1] * 6 + [2] * 6
    assert runs[0].point == runs[6].point
    seed = lambda r: r.argv[r.argv.index("--seed") + 1]  # noqa: E731
    assert seed(runs[0]) == "1" and seed(runs[6]) == "2"
    assert len(grid.runs(spec(), reps=3)) == 18


TWO_SWEEPS = """
name = "cols"
reps = 2
[fixed]
workload = "ycsb"
[axes]
cc = ["no_wait", "silo"]
threads = [1, 2]
[[sweep]]
label = "on"
[[sweep]]
label = "off"
fixed = { prefetch = "off" }
"""


def test_sweeps_run_one_after_another_unless_interleaved() -> None:
    order = lambda runs: [(r.point.sweep, r.point.params["cc"], r.point.params["threads"])  # noqa: E731
                          for r in runs]
    plain = order(grid.runs(spec(TWO_SWEEPS), reps=1))
    assert [s for s, _, _ in plain] == ["on"] * 4 + ["off"] * 4
    interleaved = grid.runs(spec(TWO_SWEEPS.replace('reps = 2', 'reps = 2\ninterleave = true')))
    assert order(interleaved)[:8] == [("on", "no_wait", 1), ("off", "no_wait", 1), ("on", "no_wait", 2),
                                      ("off", "no_wait", 2), ("on", "silo", 1), ("off", "silo", 1),
                                      ("on", "silo", 2), ("off", "silo", 2)]
    assert [r.rep for r in interleaved] == [1] * 8 + [2] * 8
    assert sorted(order(interleaved)[:8]) == sorted(plain)
    with pytest.raises(SpecError, match="interleave"):
        spec(TWO_SWEEPS.replace('reps = 2', 'interleave = "yes"'))


def test_per_scheme_same_as_follows_the_point() -> None:
    runs = grid.runs(spec(), reps=1)
    hstore = [r for r in runs if r.point.params["cc"] == "hstore"]
    assert [r.point.params["partitions"] for r in hstore] == [1, 2]
    assert all("partitions" not in r.point.params for r in runs if r.point.params["cc"] != "hstore")
    assert hstore[1].argv[:8] == ["run", "--workload", "ycsb", "--cc", "hstore", "--threads", "2",
                                  "--duration"]
    assert hstore[1].argv[-2:] == ["--partitions", "2"]


def test_file_keys_are_unique_readable_and_track_the_spec() -> None:
    runs = grid.runs(spec())
    assert len({r.file for r in runs}) == len(runs)
    assert runs[0].file.startswith("runs/main_cc-no_wait_threads-1_") and runs[0].file.endswith(".r1.json")
    changed = grid.runs(spec(SPEC.replace("rows = 4096", "rows = 8192")))
    assert {r.file for r in runs}.isdisjoint(r.file for r in changed), "a changed spec gets new files"
    assert [r.file for r in grid.runs(spec())] == [r.file for r in runs], "keys are deterministic"


def test_cross_parameter_check_names_the_point() -> None:
    text = SPEC.replace("[per_scheme.hstore]\npartitions = { same_as = \"threads\" }\n", "") \
        .replace("rows = 4096", "rows = 4096\npartitions = 2\nparts_per_txn = 2")
    grid.runs(spec(text))
    bad = text.replace("partitions = 2", "partitions = { same_as = \"threads\" }")
    with pytest.raises(SpecError, match="parts_per_txn 2 must be at most partitions \\(1\\)"):
        grid.runs(spec(bad))


def test_estimates_are_positive() -> None:
    assert all(grid.estimate_seconds(r) > 0 for r in grid.runs(spec()))
