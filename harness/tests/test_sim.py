"""Simulated sweeps (--sim): the [sim] layer and the papers' core counts,
the per-core window rule, separate result directories, several runs at a
time, runs on a Dask cluster, and the command line's refusals."""

from __future__ import annotations

import io
import json
import random
import re
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console

from abyss_harness import cli, cluster, engine, grid, reproduce, runner, store
from abyss_harness.spec import PerCore, SpecError, load_spec, parse_spec
from conftest import ENGINE, FakeEngine, fake_report, needs_engine

ABYSS_CORES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]


@pytest.fixture(autouse=True)
def native_afterwards():
    yield
    engine.use_sim(False)


def quiet() -> Console:
    return Console(file=io.StringIO(), force_terminal=False)


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_sim_section_gives_the_papers_core_counts_and_sim_flags() -> None:
    native = reproduce.load("abyss-fig9", cores=2)
    assert native.sweeps[0].axes["threads"] == [1, 2] and not native.sim
    spec = reproduce.load("abyss-fig9", sim=True)
    assert spec.sim and spec.topology == "mesh" and spec.reps == 1 and spec.prime_runs == 0
    assert spec.sweeps[0].axes["threads"] == ABYSS_CORES
    runs = grid.runs(spec)
    assert len(runs) == 6 * 11
    for r in runs:
        assert flag(r.argv, "--sim-cores") == flag(r.argv, "--threads")
        assert flag(r.argv, "--topology") == "mesh"
        assert flag(r.argv, "--queries-per-worker") == "128"
        # The paper's key space, loaded where the queries go.
        assert flag(r.argv, "--rows") == "20971520" and flag(r.argv, "--materialize") == "queried"
        assert flag(r.argv, "--steady-commits") == "32"
    assert "20,971,520" in spec.scaled
    # the breakdown plot's threads = "cores" is the simulated machine's size
    assert spec.plots[-1].where == {"threads": 1024}


def test_tale_specs_run_on_numa_and_topology_can_be_changed() -> None:
    spec = reproduce.load("tale-fig2", sim=True)
    assert spec.topology == "numa"
    assert spec.sweeps[0].axes["threads"][-1] == 1024 and 56 in spec.sweeps[0].axes["threads"]
    assert {r.point.params["warehouses"] for r in grid.runs(spec)} == {4}
    spec = reproduce.load("tale-fig2", sim=True, topology="host")
    assert {flag(r.argv, "--topology") for r in grid.runs(spec)} == {"host"}
    tpcc = reproduce.load("abyss-tpcc", sim=True)
    few, many, payment, neworder, payment_many, neworder_many = tpcc.sweeps
    assert few.axes["threads"] == ABYSS_CORES[:9] and few.fixed["warehouses"] == 4
    # Fig. 17: the paper's 1024 warehouses at every core count, of which the
    # rows the queries name are loaded.
    assert many.axes["threads"] == ABYSS_CORES and many.fixed["warehouses"] == 1024
    assert all(flag(r.argv, "--tpcc-materialize") == "queried" and flag(r.argv, "--read-only-tables") == "cc"
               for r in grid.runs(tpcc))
    # Fig. 16's panels (b) and (c): each transaction alone on the 4 warehouses, up to 256 cores.
    for sweep, mix in ((payment, "payment=100"), (neworder, "neworder=100")):
        assert sweep.fixed["tpcc_mix"] == mix and sweep.fixed["warehouses"] == 4
        assert sweep.axes["threads"] == ABYSS_CORES[:9]
    # Fig. 17's: each alone on the 1024 warehouses, up to 1024 cores.
    for sweep, mix in ((payment_many, "payment=100"), (neworder_many, "neworder=100")):
        assert sweep.fixed["tpcc_mix"] == mix and sweep.axes["threads"] == ABYSS_CORES
        assert sweep.fixed["warehouses"] == 1024


def test_every_sim_spec_parses_and_native_fig6_has_no_hardware_counter() -> None:
    sim_specs = [e.name for e in reproduce.catalogue(sim=True)]
    for name in ("abyss-fig4", "abyss-fig5", "abyss-fig6", "abyss-fig7", "abyss-fig8", "abyss-fig9",
                 "abyss-fig10", "abyss-fig11", "abyss-fig12", "abyss-fig13", "abyss-fig14", "abyss-fig15",
                 "abyss-tpcc", "tale-fig2", "tale-fig3", "tale-fig6", "tale-fig8", "tale-fig9", "tale-fig10"):
        assert name in sim_specs
    native = reproduce.load("abyss-fig6", cores=2)
    assert all("hw" not in sw.axes["ts_alloc"] for sw in native.sweeps)
    assert all(sw.fixed.get("ts_per_txn") is None for sw in native.sweeps)


def test_sim_specs_take_the_papers_core_counts_and_the_hardware_counter() -> None:
    # The simulated build checks the specs' text values (ts_alloc "hw" exists
    # only there): without it this is a skip, not a pass that checked nothing.
    if not engine.find_binary(sim=True).is_file():
        pytest.skip("simulated build not there (./abyss build sim)")
    engine.use_sim(True)
    spec = reproduce.load("abyss-fig6", sim=True)
    shared, scalable = spec.sweeps
    assert shared.fixed["ts_per_txn"] == 1 and shared.fixed["duration"] == 0.005
    assert scalable.axes["ts_alloc"][-1] == "hw" and scalable.fixed["ts_per_txn"] == 16
    assert spec.sweeps[0].axes["threads"] == ABYSS_CORES
    assert spec.plots[0].logy and spec.plots[0].logx
    # The papers' core counts: Figs. 5, 11 and 13 at 64, Fig. 12 at 512, Fig. 15a at 64 cores
    # and partitions, the scaling figures from 1 to 1024.
    for name, cores in (("abyss-fig5", {64}), ("abyss-fig11", {64}), ("abyss-fig12", {512}),
                        ("abyss-fig13", {64}), ("abyss-fig10", set(ABYSS_CORES))):
        assert {r.point.params["threads"] for r in grid.runs(reproduce.load(name, sim=True))} == cores, name
    fig15 = grid.runs(reproduce.load("abyss-fig15", sim=True))
    assert {(r.point.params["threads"], r.point.params["partitions"]) for r in fig15
            if r.point.sweep == "mp-ratio"} == {(64, 64)}
    assert "hw" in reproduce.load("abyss-fig7", sim=True).sweeps[0].axes["ts_alloc"]


def test_the_per_core_window_rule() -> None:
    rule = PerCore(core_seconds=0.016, min=0.0005, max=0.016)
    assert [rule.at(t) for t in (1, 2, 16, 32, 64, 1024)] == [0.016, 0.008, 0.001, 0.0005, 0.0005, 0.0005]
    assert PerCore(core_seconds=0.016, min=0.0005, max=0.004).at(1) == 0.004
    assert PerCore(core_seconds=0.01, min=0.0001, max=1.0).at(3) == 0.00333
    text = """
name = "w"
[fixed]
workload = "ycsb"
duration = { core_seconds = 0.04, min = 0.001 }
[axes]
threads = [1, 8, 64]
"""
    spec = parse_spec(text, "w.toml")
    assert [p.params["duration"] for p in grid.points(spec)] == [0.04, 0.005, 0.001]
    for bad, where in (('rows = { core_seconds = 1 }', "rows"),
                       ('duration = { core_seconds = 0.0 }', "core_seconds > 0"),
                       ('duration = { core_seconds = 0.1, min = 0.5, max = 0.1 }', "min <= max"),
                       ('duration = { core_seconds = 0.1, step = 1 }', "step")):
        with pytest.raises(SpecError, match=where):
            parse_spec(f'name = "w"\n[fixed]\nworkload = "ycsb"\n{bad}\n', "w.toml")


def test_sim_defaults_and_the_spec_sim_layer() -> None:
    text = """
name = "s"
[fixed]
workload = "ycsb"
duration = 0.5
rows = 4096
[axes]
threads = [1, 2]
[sim]
fixed = { rows = 8192 }
axes = { threads = "1..cores/x2" }
cores = 8
[[sweep]]
label = "a"
sim = { fixed = { theta = 0.5 } }
"""
    spec = parse_spec(text, "s.toml", sim=True)
    sw = spec.sweeps[0]
    assert sw.axes["threads"] == [1, 2, 4, 8] and sw.fixed["rows"] == 8192 and sw.fixed["theta"] == 0.5
    params = [r.point.params for r in grid.runs(spec)]
    # Windows sized by the steady-state rule, from 0.2 ms after 0.1 ms of warm-up, up to 50 ms.
    assert {(p["duration"], p["warmup"], p["steady_commits"], p["max_duration"]) for p in params} == {
        (0.0002, 0.0001, 32, 0.05)}
    assert [p["sim_cores"] for p in params] == [1, 2, 4, 8]
    native = parse_spec(text, "s.toml", cores=2)
    assert native.sweeps[0].fixed["duration"] == 0.5 and "sim_cores" not in native.sweeps[0].fixed
    # --set still wins over the [sim] section
    spec = parse_spec(text, "s.toml", sim=True, overrides={"duration": "0.001"})
    assert {r.point.params["duration"] for r in grid.runs(spec)} == {0.001}
    with pytest.raises(SpecError, match=r"no \[sim\] section"):
        parse_spec('name = "n"\n[fixed]\nworkload = "ycsb"\n', "n.toml", sim=True)


def test_sim_results_never_mix_with_native_ones(tmp_path: Path) -> None:
    native = reproduce.load("abyss-fig9", cores=2, overrides={"cc": "no_wait"})
    sim = reproduce.load("abyss-fig9", sim=True, overrides={"cc": "no_wait", "threads": "1,2"})
    numa = reproduce.load("abyss-fig9", sim=True, topology="numa", overrides={"cc": "no_wait", "threads": "1,2"})
    dirs = [runner.experiment_dir(tmp_path, s) for s in (native, sim, numa)]
    assert [d.name for d in dirs] == ["abyss-fig9", "abyss-fig9-sim-mesh", "abyss-fig9-sim-numa"]
    for spec in (native, sim):
        runner.sweep(spec, tmp_path, FakeEngine(), quiet())
    n = store.load_experiment(dirs[0])
    s = store.load_experiment(dirs[1])
    assert set(n.runs["threads"]) == {1, 2} and n.runs["sim_cores"].fillna(0).eq(0).all()
    assert list(s.runs["sim_cores"]) == list(s.runs["threads"])
    assert s.manifest["spec"]["sim"] and s.manifest["spec"]["topology"] == "mesh"
    fake = FakeEngine()
    runner.sweep(sim, tmp_path, fake, quiet())
    assert fake.calls == [], "the simulated runs are kept and never re-run"


class SlowFake(FakeEngine):
    """A FakeEngine for several threads: each run sleeps a little, at random."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.lock = threading.Lock()
        self.active = 0
        self.most = 0

    def __call__(self, argv, json_path):
        with self.lock:
            self.active += 1
            self.most = max(self.most, self.active)
        time.sleep(random.uniform(0.0, 0.02))
        try:
            with self.lock:
                return super().__call__(argv, json_path)
        finally:
            with self.lock:
                self.active -= 1


def test_parallel_sweep_keeps_the_store_consistent_and_resumes(tmp_path: Path, spec_file: Path) -> None:
    spec = load_spec(spec_file, cores=2)
    fake = SlowFake()
    exp_dir, res = runner.sweep(spec, tmp_path, fake, quiet(), jobs=4)
    runs = grid.runs(spec)
    assert (res.ran, res.skipped, res.failed) == (12, 0, [])
    assert fake.most > 1, "runs went side by side"
    assert sorted(map(tuple, fake.calls)) == sorted(tuple(r.argv) for r in runs)
    for r in runs:     # each file holds its own run's report
        doc = json.loads((exp_dir / r.file).read_text())
        assert doc == fake_report(r.argv)
    assert not list((exp_dir / "runs").glob("*.part"))
    for r in runs[3:6]:
        (exp_dir / r.file).unlink()
    again = SlowFake()
    _, res = runner.sweep(spec, tmp_path, again, quiet(), jobs=4)
    assert (res.ran, res.skipped) == (3, 9)
    assert sorted(map(tuple, again.calls)) == sorted(tuple(r.argv) for r in runs[3:6])


def test_parallel_sweep_records_failures_and_stops_on_a_usage_error(tmp_path: Path, spec_file: Path) -> None:
    spec = load_spec(spec_file, cores=2)

    def flaky(argv, path):
        if flag(argv, "--cc") == "silo":
            raise RuntimeError("worker lost")
        return FakeEngine()(argv, path)

    _, res = runner.sweep(spec, tmp_path, flaky, quiet(), jobs=3)
    assert res.ran == 8 and len(res.failed) == 4
    assert all("worker lost" in o.output for _, o in res.failed)
    assert len(list((tmp_path / "unit" / "runs").glob("*.err"))) == 4
    calls = []

    def refuse(argv, path):
        calls.append(argv)
        time.sleep(0.05)
        return runner.Outcome(2, "abyss: --bad: unknown flag\n", 0.05)

    with pytest.raises(runner.EngineUsageError, match="unknown flag"):
        runner.sweep(spec, tmp_path / "other", refuse, quiet(), jobs=2)
    assert len(calls) <= 4, "the pending runs were cancelled"


def test_parallel_progress_shows_points_and_time_left(tmp_path: Path, spec_file: Path) -> None:
    out = io.StringIO()
    runner.sweep(load_spec(spec_file, cores=2), tmp_path, SlowFake(), Console(file=out, force_terminal=True,
                                                                             width=140), jobs=3)
    text = out.getvalue()
    assert "12/12" in text and "left" in text and "0:00:00" in text


TINY = """
name = "tiny"
reps = 1
[fixed]
workload = "ycsb"
rows = 512
req_per_txn = 4
# Long enough that a native run commits even on a loaded machine (a 10 ms
# window on two busy cores can pass with its workers descheduled).
duration = 0.1
warmup = 0.0
queries_per_worker = 16
[axes]
cc = ["no_wait", "silo"]
threads = [1, 2]
"""


@pytest.fixture(scope="module")
def dask_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                  dashboard_address=None, silence_logs=50) as lc:
        yield lc


@needs_engine
def test_runs_go_through_a_dask_scheduler(tmp_path: Path, dask_cluster) -> None:
    spec = parse_spec(TINY, "tiny.toml", cores=2)
    client = cluster.connect(dask_cluster.scheduler_address)
    try:
        client.wait_for_workers(1, timeout=20)
        assert cluster.worker_threads(client) == 2
        run_fn = cluster.ClusterRunner(client, ENGINE, timeout_s=60)
        exp_dir, res = runner.sweep(spec, tmp_path, run_fn, quiet(), jobs=2)
        assert (res.ran, res.failed) == (4, []), [(r, o.returncode, o.output[-300:]) for r, o in res.failed]
        exp = store.load_experiment(exp_dir)
        assert len(exp.runs) == 4 and (exp.runs["commits"] > 0).all()
        bad = cluster.ClusterRunner(client, tmp_path / "no-such-binary")
        outcome = bad(["run"], tmp_path / "x.json")
        assert outcome.returncode == 127 and "no-such-binary" in outcome.output
    finally:
        client.close()


def test_cli_sim_sweep_on_a_cluster(tmp_path: Path, dask_cluster, capsys) -> None:
    if not engine.find_binary(sim=True).is_file():
        pytest.skip("simulated build not there (./abyss build sim)")
    spec_file = tmp_path / "tiny.toml"
    spec_file.write_text(TINY + '[sim]\naxes = { threads = [1, 4] }\n', encoding="utf-8")
    code = cli.main(["sweep", str(spec_file), "--sim", "--cluster", dask_cluster.scheduler_address,
                     "--results", str(tmp_path), "--set", "rows=256"])
    assert code == 0, capsys.readouterr().err
    exp = store.load_experiment(tmp_path / "tiny-sim-mesh")
    assert sorted(exp.runs["sim_cores"]) == [1, 1, 4, 4] and (exp.runs["commits"] > 0).all()


def test_dry_run_lists_the_core_counts(tmp_path: Path, capsys) -> None:
    assert cli.main(["reproduce", "abyss-fig4", "--sim", "--dry-run", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "33 runs" in out and "abyss-fig4-sim-mesh" in out
    for n in ABYSS_CORES:
        assert out.count(f"--threads {n} ") == 3 and out.count(f"--sim-cores {n} ") == 3


def test_list_names_fig6_and_what_runs_simulated(capsys) -> None:
    assert cli.main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    assert "abyss-fig6" in out and "yes (mesh)" in out and "yes (numa)" in out and "no" in out


@pytest.mark.parametrize("argv, message", [
    (["reproduce", "abyss-fig9", "--sim", "--jobs", "0"], "--jobs: '0' is not a positive integer"),
    (["reproduce", "abyss-fig9", "--jobs", "2"], "for simulated sweeps only"),
    (["reproduce", "abyss-fig9", "--topology", "numa"], "use it with --sim"),
    (["reproduce", "abyss-fig9", "--cluster", "tcp://127.0.0.1:9"], "simulated sweeps only"),
    (["reproduce", "abyss-fig9", "--sim", "--full-scale"], "drop --full-scale"),
    (["reproduce", "bench-ycsb", "--sim"], r"has no \[sim\] section"),
    (["reproduce", "abyss-fig9", "--sim", "--topology", "no-such-topology"], "topology"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys, tmp_path: Path) -> None:
    if message == "topology" and not engine.find_binary(sim=True).is_file():
        pytest.skip("the simulated engine reads topologies: not built (./abyss build sim)")
    try:
        code = cli.main(argv + ["--results", str(tmp_path)])
    except SystemExit as e:        # argparse's refusals
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and re.search(message, err), err
    assert not any(tmp_path.iterdir()), "nothing ran"


def test_an_unreachable_cluster_is_refused_before_any_run(capsys, monkeypatch, tmp_path: Path) -> None:
    if not engine.find_binary(sim=True).is_file():
        pytest.skip("simulated build not there (./abyss build sim)")
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1.0)
    t0 = time.monotonic()
    code = cli.main(["reproduce", "abyss-fig9", "--sim", "--cluster", "tcp://127.0.0.1:9",
                     "--results", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "no Dask scheduler answered" in err and err.count("\n") == 1, err
    assert time.monotonic() - t0 < 20
    assert not any(tmp_path.iterdir()), "nothing ran"
