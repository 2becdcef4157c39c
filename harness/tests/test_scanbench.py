"""`abyss bench scan`'s harness side: the speedups its CSV holds, the plot,
and a real run on the engine, its results directory and a bad flag's
refusal."""

from __future__ import annotations

import json
from pathlib import Path

from abyss_harness import scanbench

from conftest import needs_engine


def answer(rate_of: dict[tuple[str, str, int], float]) -> dict:
    return {"tuples": 1000, "results": [
        {"benchmark": b, "design": d, "threads": n, "items": 1000 * n, "ms": 1.0, "runs": 1, "mitems_per_s": r}
        for (b, d, n), r in rate_of.items()]}


def test_rows_hold_speedups_over_one_thread_and_over_the_coarse_latch() -> None:
    got = scanbench.rows(answer({("ConcurrentScan", "coarse", 1): 2.0, ("ConcurrentScan", "coarse", 2): 1.0,
                                 ("ConcurrentScan", "lock-free", 1): 4.0, ("ConcurrentScan", "lock-free", 2): 8.0}))
    by = {(r["design"], r["threads"]): r for r in got}
    assert by[("coarse", 2)]["speedup"] == 0.5
    assert by[("lock-free", 2)]["speedup"] == 2.0
    assert by[("lock-free", 2)]["vs_coarse"] == 8.0
    assert by[("lock-free", 1)]["items_per_ms"] == 4000.0


def test_rows_leave_a_ratio_out_when_its_base_is_missing() -> None:
    got = scanbench.rows(answer({("ConcurrentInsert", "snapshot", 2): 3.0}))
    assert got[0]["speedup"] is None and got[0]["vs_coarse"] is None


def test_plot_draws_a_panel_per_benchmark(tmp_path: Path) -> None:
    table = scanbench.rows(answer({(b, d, n): 1.0 + n for b in scanbench.BENCHMARKS
                                   for d in scanbench.STYLES for n in (1, 2)}))
    scanbench.plot(table, tmp_path / "scan.png", "test")
    assert (tmp_path / "scan.png").stat().st_size > 10_000


@needs_engine
def test_a_run_writes_its_table_csv_json_and_plot(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r"
    rc = scanbench.main(["--tuples", "5000", "--threads", "1,2", "--reps", "1", "--check-threads", "4",
                         "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "ordered-map   passed" in printed and "vs coarse" in printed
    assert json.loads((out / "scan.json").read_text())["checks"][0]["design"] == "coarse"
    lines = (out / "scan.csv").read_text().splitlines()
    assert lines[0] == "benchmark,design,threads,ms,items_per_ms,speedup,vs_coarse"
    assert len(lines) == 1 + 3 * 5 * 2
    assert (out / "scan.png").is_file()


@needs_engine
def test_a_bad_flag_is_refused_and_leaves_no_results(tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert scanbench.main(["--designs", "tbb", "--out", str(out)]) == 2
    assert not out.exists()
