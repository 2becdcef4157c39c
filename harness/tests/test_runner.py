"""Sweeps with an injected fake engine: every run once, resume after an
interruption, failures recorded and retried, a usage error stops the sweep."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from abyss_harness import grid, runner, store
from abyss_harness.spec import load_spec
from conftest import FakeEngine


def quiet() -> Console:
    return Console(file=open("/dev/null", "w"), force_terminal=False)


def test_sweep_runs_every_run_and_writes_the_store(tmp_path: Path, spec_file: Path) -> None:
    spec = load_spec(spec_file, cores=2)
    fake = FakeEngine()
    exp_dir, res = runner.sweep(spec, tmp_path, fake, quiet())
    assert exp_dir == tmp_path / "unit"
    assert (res.total, res.ran, res.skipped, res.failed) == (12, 12, 0, [])
    assert len(fake.calls) == 12
    files = sorted((exp_dir / "runs").glob("*.json"))
    assert len(files) == 12 and not list((exp_dir / "runs").glob("*.part"))
    manifest = json.loads((exp_dir / "manifest.json").read_text())
    assert len(manifest["runs"]) == 12 and manifest["spec"]["name"] == "unit"
    assert (exp_dir / "spec.toml").read_text() == spec_file.read_text()
    for name in ("runs.csv", "summary.csv"):
        assert (exp_dir / name).is_file()


def test_interrupted_sweep_resumes_where_it_stopped(tmp_path: Path, spec_file: Path) -> None:
    spec = load_spec(spec_file, cores=2)
    with pytest.raises(KeyboardInterrupt):
        runner.sweep(spec, tmp_path, FakeEngine(interrupt_after=5), quiet())
    runs_dir = tmp_path / "unit" / "runs"
    assert len(list(runs_dir.glob("*.json"))) == 5, "the run cut off mid-write left no report"
    again = FakeEngine()
    _, res = runner.sweep(spec, tmp_path, again, quiet())
    assert (res.ran, res.skipped) == (7, 5)
    all_runs = grid.runs(spec)
    assert again.calls == [r.argv for r in all_runs[5:]]
    _, res = runner.sweep(spec, tmp_path, FakeEngine(), quiet())
    assert (res.ran, res.skipped) == (0, 12)


def test_failed_runs_are_recorded_and_retried(tmp_path: Path, spec_file: Path) -> None:
    spec = load_spec(spec_file, cores=2)
    _, res = runner.sweep(spec, tmp_path, FakeEngine(fail_on={3}), quiet())
    assert res.ran == 11 and len(res.failed) == 1
    errs = list((tmp_path / "unit" / "runs").glob("*.err"))
    assert len(errs) == 1 and "something went wrong" in errs[0].read_text()
    retry = FakeEngine()
    _, res = runner.sweep(spec, tmp_path, retry, quiet())
    assert (res.ran, res.skipped, len(retry.calls)) == (1, 11, 1)
    assert not list((tmp_path / "unit" / "runs").glob("*.err"))


def test_engine_usage_error_stops_the_sweep(tmp_path: Path, spec_file: Path) -> None:
    spec = load_spec(spec_file, cores=2)
    fake = FakeEngine(fail_on={1}, returncode=2)
    with pytest.raises(runner.EngineUsageError, match="something went wrong"):
        runner.sweep(spec, tmp_path, fake, quiet())
    assert len(fake.calls) == 1


def test_a_refused_run_names_its_error_not_a_note_before_it(tmp_path: Path, spec_file: Path) -> None:
    spec = load_spec(spec_file, cores=2)
    fake = FakeEngine(fail_on={1}, returncode=2,
                      output="abyss: note: --read-copy has no effect\nabyss: this run needs 10 GiB, 9 available\n")
    with pytest.raises(runner.EngineUsageError, match="needs 10 GiB"):
        runner.sweep(spec, tmp_path, fake, quiet())


def test_a_changed_spec_ignores_the_old_runs(tmp_path: Path, spec_file: Path) -> None:
    runner.sweep(load_spec(spec_file, cores=2), tmp_path, FakeEngine(), quiet())
    spec_file.write_text(spec_file.read_text().replace("rows = 4096", "rows = 8192"))
    fake = FakeEngine()
    runner.sweep(load_spec(spec_file, cores=2), tmp_path, fake, quiet())
    assert len(fake.calls) == 12
    exp = store.load_experiment(tmp_path / "unit")
    assert len(exp.runs) == 12 and set(exp.runs["rows"]) == {8192}


def test_dry_run_lists_and_runs_nothing(tmp_path: Path, spec_file: Path, capsys) -> None:
    from abyss_harness import cli

    assert cli.main(["sweep", str(spec_file), "--dry-run", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "12 runs" in out and out.count("abyss run --workload ycsb") == 12
    assert not (tmp_path / "unit").exists()


def test_progress_bar_on_a_terminal(tmp_path: Path, spec_file: Path) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    runner.sweep(load_spec(spec_file, cores=2), tmp_path, FakeEngine(), console)
    text = out.getvalue()
    assert "12/12" in text and "eta" in text


def test_priming_runs_the_first_pending_point_and_keeps_nothing(tmp_path: Path, spec_file: Path) -> None:
    spec = load_spec(spec_file, cores=2)
    spec.prime_runs = 2
    fake = FakeEngine()
    out = io.StringIO()
    _, res = runner.sweep(spec, tmp_path, fake, Console(file=out, force_terminal=False))
    runs = grid.runs(spec)
    assert fake.calls == [runs[0].argv] * 2 + [r.argv for r in runs]
    assert "(2 discarded priming runs of" in out.getvalue()
    assert len(list((tmp_path / "unit" / "runs").iterdir())) == 12, "the priming reports are not kept"
    again = FakeEngine()
    runner.sweep(spec, tmp_path, again, quiet(), prime_runs=3)
    assert again.calls == [], "nothing to run: no priming"
    (tmp_path / "unit" / runs[5].file).unlink()
    again = FakeEngine()
    runner.sweep(spec, tmp_path, again, quiet(), prime_runs=1)
    assert again.calls == [runs[5].argv] * 2


def test_a_priming_run_the_engine_refuses_stops_the_sweep(tmp_path: Path, spec_file: Path) -> None:
    spec = load_spec(spec_file, cores=2)
    fake = FakeEngine(fail_on={1}, returncode=2)
    with pytest.raises(runner.EngineUsageError):
        runner.sweep(spec, tmp_path, fake, quiet(), prime_runs=1)
    fake = FakeEngine(fail_on={1})
    _, res = runner.sweep(spec, tmp_path, fake, quiet(), prime_runs=1)
    assert (res.ran, res.failed) == (12, []), "a failed priming run is only reported"
