"""abyss sim tile: the callgrind reader, the string-instruction table, the fit, and the file it rewrites."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from abyss_harness import engine, tile

from conftest import needs_engine

SIM = engine.repo_root() / "build" / "sim" / "apps" / "abyss"
MESH = engine.repo_root() / "src" / "platform" / "sim" / "topologies" / "mesh.toml"

OBJDUMP = """
0000000000297900 <_ZN5abyss3TxnINS_2cc6NoWaitEE6updateERNS_5TableEmRPc>:
  297900:	mov    %rdi,%rax
  297910:	rep movsb %ds:(%rsi),%es:(%rdi)
  297912:	rep stos %rax,%es:(%rdi)
  297915:	rep movsq %ds:(%rsi),%es:(%rdi)
  297918:	repz cmpsb %es:(%rdi),%ds:(%rsi)
  29791a:	rep stos %al,%es:(%rdi)
"""

# A callgrind file with --dump-instr=yes: compressed names, relative
# addresses, and a call whose inclusive cost is not self cost.
CALLGRIND = """# callgrind format
version: 1
positions: instr line
events: Ir
summary: 1000

ob=(1) /bin/abyss
fl=(1) ???
fn=(1) abyss::Rc abyss::Ycsb::run<abyss::cc::NoWait>(x)
0x297900 0 10
+16 0 800
+2 * 16
cfn=(2) abyss::Txn<abyss::cc::NoWait>::commit()
calls=3 0x297a00 0
+1 0 999999
+3 0 4
fn=(2)
0x297a00 0 20
fn=(3) worker loop
0x100 0 5
cfn=(1)
calls=2 0x297900 0
* 0 50000
"""


def test_rep_instructions_reads_copies_and_fills_with_their_width():
    reps = tile.rep_instructions(OBJDUMP)
    assert reps == {0x297910: tile.Rep(True, 1), 0x297912: tile.Rep(False, 8), 0x297915: tile.Rep(True, 8),
                    0x29791A: tile.Rep(False, 1)}
    # A copy of 1000 bytes: 125 loads and 125 stores; a fill of 100 words: 100 stores.
    assert tile.Rep(True, 1).tile_instructions(1000) == 250
    assert tile.Rep(False, 8).tile_instructions(100) == 100


def test_parse_callgrind_counts_self_cost_string_repetitions_and_calls():
    seen = []

    def reps_of(obj: str):
        seen.append(obj)
        return tile.rep_instructions(OBJDUMP)

    prof = tile.parse_callgrind(CALLGRIND, reps_of)
    # Self costs only: 10 + 800 + 16 + 4 + 20 + 5 (the call lines' 999999 and 50000 are inclusive).
    assert prof.instructions == 855
    # 0x297910 (+16 from 0x297900) is rep movsb: 800 bytes; 0x297912 is rep stos (8 bytes): 16 words.
    assert prof.rep_instructions == 816
    assert prof.rep_tile == pytest.approx(800 / 8 * 2 + 16)
    assert prof.calls == {"abyss::Txn<abyss::cc::NoWait>::commit()": 3,
                          "abyss::Rc abyss::Ycsb::run<abyss::cc::NoWait>(x)": 2}
    assert prof.attempts(tile.ATTEMPT["ycsb"]) == 2
    assert seen == ["/bin/abyss"]


def test_costs_recover_the_per_event_costs_that_made_the_counts():
    truth = {"per_call_cycles": 30.0, "per_byte_cycles": 0.25}
    counts = []
    for i, (calls, nbytes) in enumerate([(100, 20000), (300, 9000), (4000, 150000), (90, 17000)]):
        events = {"calls": calls, "bytes": nbytes}
        c = tile.Count("s", f"w{i}", 0, 0, events)
        c.per_attempt = c.charged(truth)
        counts.append(c)
    assert tile.costs_of(counts) == pytest.approx(truth, rel=1e-6)


def test_costs_of_nothing_is_an_error():
    with pytest.raises(tile.CalibrationError):
        tile.costs_of([])
    with pytest.raises(tile.CalibrationError):
        tile.costs_of([tile.Count("s", "w", 100, 0, {"calls": 0, "bytes": 0})])


def test_write_compute_replaces_only_the_compute_table(tmp_path: Path):
    path = tmp_path / "mesh.toml"
    shutil.copy(MESH, path)
    before = tomllib.loads(path.read_text())
    tile.write_compute(path, tile.compute_table({"per_call_cycles": 12.5, "per_byte_cycles": 0.3}, "2026-01-01", 4))
    after = tomllib.loads(path.read_text())
    assert after["compute"]["per_call_cycles"] == 12.5 and after["compute"]["per_byte_cycles"] == 0.3
    assert "like" not in after["compute"]
    assert {k: v for k, v in after.items() if k != "compute"} == {k: v for k, v in before.items() if k != "compute"}
    (tmp_path / "bare.toml").write_text("name = 'x'\n")
    with pytest.raises(tile.CalibrationError):
        tile.write_compute(tmp_path / "bare.toml", "[compute]\n")


@pytest.mark.skipif(not SIM.is_file(), reason=f"simulated engine not built ({SIM})")
def test_the_written_table_loads_in_the_simulator(tmp_path: Path):
    path = tmp_path / "mesh.toml"
    shutil.copy(MESH, path)
    tile.write_compute(path, tile.compute_table({"per_call_cycles": 12.5, "per_byte_cycles": 0.3}, "2026-01-01", 4))
    p = subprocess.run([str(SIM), "run", "--sim-cores", "2", "--topology", str(path), "--rows", "1000",
                        "--duration", "0.0005", "--warmup", "0"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


@needs_engine
def test_bad_arguments_are_usage_errors_before_any_run(tmp_path: Path, capsys):
    with pytest.raises(SystemExit) as e:
        tile.main(["--duration", "nan", "--out", str(MESH)])
    assert e.value.code == 2 and "--duration" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        tile.main(["--out", str(tmp_path / "missing.toml")])
    assert e.value.code == 2 and "no such topology file" in capsys.readouterr().err
