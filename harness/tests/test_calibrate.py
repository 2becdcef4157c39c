"""abyss sim calibrate: the fit, the topology it writes, and a real (tiny) calibration."""

from __future__ import annotations

import itertools
import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from abyss_harness import calibrate, engine

from conftest import needs_engine

SIM = engine.repo_root() / "build" / "sim" / "apps" / "abyss"
needs_sim = pytest.mark.skipif(not SIM.is_file(), reason=f"simulated engine not built ({SIM})")

PROBE = {"core_ghz": 3.0, "clock_read_ns": 10.0, "rmw_ns": 2.0, "independent_ns": 15.0, "stream_gbps": 12.0,
         "latency_ns": [{"bytes": b, "ns": ns, "independent_ns": free} for b, ns, free in
                        [(16 << 10, 1.5, 0.5), (256 << 10, 4.0, 1.0), (2 << 20, 20.0, 2.0), (4 << 20, 22.0, 2.5),
                         (8 << 20, 60.0, 3.0), (16 << 20, 180.0, 10.0), (512 << 20, 250.0, 15.0)]]}
#: What a dependent read adds to an independent one, PROBE's levels (ns): l1, l2, l3, memory.
EXTRA = {"l1_hits": 1.0, "l2_hits": 3.0, "shared_hits": 18.0, "memory_reads": 235.0}


def test_nnls_recovers_nonnegative_solution_and_clamps_negative_ones():
    rows = [[1, 0, 2], [0, 1, 1], [1, 1, 0], [2, 1, 1], [1, 3, 1]]
    truth = [2.0, 0.5, 1.5]
    rhs = [sum(a * x for a, x in zip(r, truth)) for r in rows]
    assert calibrate.nnls(rows, rhs) == pytest.approx(truth)
    # With the third unknown's true value negative, the best non-negative fit
    # sets it to 0; check against every support tried by hand on a grid.
    rhs = [sum(a * x for a, x in zip(r, [2.0, 0.5, -1.0])) for r in rows]
    x = calibrate.nnls(rows, rhs)
    assert min(x) >= 0 and x[2] == 0

    def resid(v):
        return sum((sum(a * b for a, b in zip(r, v)) - y) ** 2 for r, y in zip(rows, rhs))

    grid = [i / 10 for i in range(0, 41)]
    assert resid(x) <= min(resid(v) for v in itertools.product(grid, grid, [0.0])) + 1e-9


def _samples(costs, overlap, ghz=3.0):
    out = []
    for i, (calls, nbytes, l1, l2, l3, misses) in enumerate(
            [(100, 2000, 90, 5, 3, 20), (300, 9000, 200, 80, 10, 5), (150, 500, 100, 30, 20, 40),
             (80, 16000, 60, 10, 2, 12), (220, 4000, 150, 50, 15, 2)]):
        events = {"calls": calls, "bytes": nbytes, "rmws": 7, "l1_hits": l1, "l2_hits": l2, "shared_hits": l3,
                  "memory_reads": misses}
        sim_ns = 1000.0 + 7 * i
        work = sum(events[k] * costs[key] for k, key in calibrate.EVENTS) / ghz
        waits = overlap * sum(events[k] * ns for k, ns in EXTRA.items())
        out.append(calibrate.Sample("s", f"w{i}", sim_ns + work + waits, sim_ns, events))
    return out


def test_fit_recovers_the_costs_and_the_overlap_that_made_the_times():
    probe = calibrate.read_probe(json.dumps(PROBE))
    assert calibrate.dependent_extra_ns({"l2_hits": 2, "memory_reads": 1}, probe) == pytest.approx(2 * 3 + 235)
    costs = {"per_call_cycles": 20.0, "per_byte_cycles": 0.5}
    fitted, overlap = calibrate.fit_costs(_samples(costs, 0.3), probe)
    assert fitted == pytest.approx(costs, rel=1e-6)
    assert overlap == pytest.approx(0.3, rel=1e-6)


def test_fit_holds_the_overlap_to_a_dependent_read():
    probe = calibrate.read_probe(json.dumps(PROBE))
    costs = {"per_call_cycles": 20.0, "per_byte_cycles": 0.5}
    _, overlap = calibrate.fit_costs(_samples(costs, 3.0), probe)
    assert overlap == 1.0


def test_topology_text_is_a_complete_host_topology():
    probe = calibrate.read_probe(json.dumps(PROBE))
    costs = {"per_call_cycles": 12.0, "per_byte_cycles": 0.25}
    text = calibrate.topology_text(probe, costs, 0.25, "2026-01-01", caches=[(48 << 10, 12), (1 << 20, 16)])
    t = tomllib.loads(text)
    assert t["name"] == "host" and t["ghz"] == pytest.approx(3.0)
    assert [(p["bytes"], p["ways"]) for p in t["private"]] == [(48 << 10, 12), (1 << 20, 16)]
    # Each level: its independent read plus a quarter of what a dependent one adds, in cycles at 3 GHz.
    assert [p["latency_cycles"] for p in t["private"]] == pytest.approx([(0.5 + 0.25) * 3, (1.0 + 0.75) * 3])
    assert t["shared"]["latency_cycles"] == pytest.approx((2.0 + 4.5) * 3)
    # 8 MiB reads at 60 ns stay nearer the cache's 20 ns than memory's 250; 16 MiB do not.
    assert t["shared"]["bytes"] == 8 << 20
    assert t["numa"]["memory_ns"] == [pytest.approx(15.0 + 0.25 * 235, abs=0.05)]
    assert t["line_transfer_cycles"] == pytest.approx(16.0)  # 64 bytes at 12 GB/s, 3 GHz
    assert t["compute"]["per_byte_cycles"] == 0.25
    assert t["compute"]["rmw_cycles"] == 6.0  # measured: 2 ns at 3 GHz
    assert t["compute"]["clock_cycles"] == 30.0  # 10 ns at 3 GHz


@needs_sim
def test_written_topology_loads_in_the_simulator(tmp_path: Path):
    probe = calibrate.read_probe(json.dumps(PROBE))
    path = tmp_path / "host.toml"
    path.write_text(calibrate.topology_text(probe, {}, 0.5, "2026-01-01"))
    p = subprocess.run([str(SIM), "run", "--sim-cores", "2", "--topology", str(path), "--rows", "1000",
                        "--duration", "0.0005", "--warmup", "0"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


@needs_engine
@needs_sim
def test_garbled_probe_file_is_a_usage_error(tmp_path: Path, capsys):
    bad = tmp_path / "probe.json"
    bad.write_text("{\"core_ghz\": 3")
    assert calibrate.main(["--probe", str(bad), "--out", str(tmp_path / "h.toml")]) == 2
    assert "probe" in capsys.readouterr().err
    assert not (tmp_path / "h.toml").exists()


@needs_engine
@needs_sim
def test_calibration_end_to_end_writes_a_topology_and_a_table(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(calibrate, "WORKLOADS",
                        {"ycsb-theta0": ["--workload", "ycsb", "--theta", "0", "--rows", "4096"]})
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps(PROBE))
    out, report = tmp_path / "host.toml", tmp_path / "cal.json"
    rc = calibrate.main(["--probe", str(probe), "--out", str(out), "--json", str(report), "--schemes", "no_wait",
                         "--threads", "1,2", "--reps", "2", "--duration", "0.05", "--sim-duration", "0.002",
                         "--sim-warmup", "0.001"])
    assert rc == 0
    t = tomllib.loads(out.read_text())
    assert t["compute"]["clock_cycles"] == 30.0
    assert min(t["compute"][key] for _, key in calibrate.EVENTS) >= 0
    r = json.loads(report.read_text())
    assert [row["threads"] for row in r["rows"]] == [1, 2] and r["reps"] == 2
    assert all(row["native"] > 0 and row["sim"] > 0 for row in r["rows"])


class _FakeRunner:
    """Native throughputs from a script; a simulated core that commits 1000 a window."""

    def __init__(self, tmp: Path, native: dict):
        self.workdir, self.native, self.calls = tmp, native, []

    def native_throughput(self, scheme, workload, threads):
        self.calls.append((scheme, workload, threads))
        return self.native[(scheme, workload, threads)].pop(0)

    def sim_run(self, scheme, workload, cores, topology, windows=1):
        events = {"calls": 100 * windows, "bytes": 1000 * windows, "rmws": 0, "l1_hits": 80 * windows,
                  "l2_hits": 10 * windows, "shared_hits": 5 * windows, "memory_reads": 10 * windows}
        return {"results": {"commits": 1000 * windows * cores, "seconds": 1e-3 * windows,
                            "throughput": 1e6 * cores}, "sim_counters": events}


def test_native_repetitions_interleave_and_the_median_counts(tmp_path: Path):
    native = {("no_wait", "w", 1): [100.0, 900.0, 120.0], ("no_wait", "w", 2): [150.0, 140.0, 5.0],
              ("silo", "w", 1): [80.0, 90.0, 85.0], ("silo", "w", 2): [160.0, 170.0, 150.0]}
    runner = _FakeRunner(tmp_path, native)
    probe = calibrate.read_probe(json.dumps(PROBE))
    result = calibrate.calibrate(runner, probe, ["no_wait", "silo"], ["w"], [1, 2], tmp_path / "h.toml", reps=3)
    # Each point once before any point twice: a slow spell touches every point alike.
    assert runner.calls == [("no_wait", "w", 1), ("no_wait", "w", 2), ("silo", "w", 1), ("silo", "w", 2)] * 3
    assert {(r.scheme, r.threads): r.native for r in result.rows} == {
        ("no_wait", 1): 120.0, ("no_wait", 2): 140.0, ("silo", 1): 85.0, ("silo", 2): 160.0}


@needs_engine
def test_the_native_probe_measures_what_calibration_reads():
    p = subprocess.run([str(engine.find_binary()), "probe", "--json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    probe = calibrate.read_probe(p.stdout)
    assert 0.5 < probe.core_ghz < 10
    # An uncontended RMW costs a few cycles, more than nothing and less than a miss.
    assert 0 < probe.rmw_ns < probe.level_ns("memory")
    assert probe.level_ns("l1") < probe.level_ns("memory") and probe.independent_ns > 0 and probe.stream_gbps > 0
    # Every working set is read both ways; reads that wait on none cost less than a chain's.
    assert set(probe.free_ns) == set(probe.latency_ns)
    assert probe.read_ns("memory", 0) < probe.read_ns("memory", 1)


def test_an_old_probe_without_independent_reads_per_set_is_refused():
    old = json.loads(json.dumps(PROBE))
    for p in old["latency_ns"]:
        del p["independent_ns"]
    with pytest.raises(KeyError, match="independent_ns"):
        calibrate.read_probe(json.dumps(old))


def test_private_cache_sizes_come_from_the_kernels_cache_list(tmp_path: Path):
    for i, (level, kind, size, ways) in enumerate([(1, "Data", "48K", 12), (1, "Instruction", "32K", 8),
                                                   (2, "Unified", "1024K", 16), (3, "Unified", "32768K", 16)]):
        d = tmp_path / f"index{i}"
        d.mkdir()
        for name, value in (("level", level), ("type", kind), ("size", size), ("ways_of_associativity", ways)):
            (d / name).write_text(f"{value}\n")
    assert calibrate.private_caches(tmp_path) == [(48 << 10, 12), (1 << 20, 16)]
    assert calibrate.private_caches(tmp_path / "missing") == [(32 << 10, 8), (512 << 10, 8)]
