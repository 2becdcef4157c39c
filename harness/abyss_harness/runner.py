"""Running a sweep: each run is one engine subprocess writing its JSON report.

The run function is injected (`RunFn`), so tests drive the sweep logic with
a fake and no engine. A run's report is written to a temporary name and moved
into place only when the engine exits 0, so a file in `runs/` is always a
complete report, and an interrupted sweep resumes by skipping every run
whose file exists. A spec may ask for priming runs (`prime_runs`): runs of
the first pending point made before the sweep and discarded, so that the
first measured run does not pay for a cold machine (caches, frequency).

Simulated sweeps (`--sim`) run several points side by side (`jobs`): a
thread pool calls the run function, and the main thread alone moves each
finished report into place, so the store is what a one-at-a-time sweep
would have written. The run function may also hand each run to a Dask
cluster (cluster.py); the file handling is the same.
"""

from __future__ import annotations

import re
import subprocess
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from . import grid, store, tables
from .grid import Run
from .spec import Spec


@dataclass
class Outcome:
    """What one engine invocation did."""

    returncode: int
    output: str = ""          # stderr (and stdout) when it failed
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.returncode == 0


#: (argv without the binary, path the JSON report must be written to) -> Outcome
RunFn = Callable[[list[str], Path], Outcome]


class EngineUsageError(Exception):
    """The engine rejected a run's flags (exit 2): every other run would fail the same way."""


class EngineRunner:
    """Runs the engine binary: `abyss <argv> --json FILE`."""

    def __init__(self, binary: Path, timeout_s: float | None = None) -> None:
        self.binary = binary
        self.timeout_s = timeout_s

    def __call__(self, argv: list[str], json_path: Path) -> Outcome:
        cmd = [str(self.binary), *argv, "--json", str(json_path)]
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            return Outcome(124, f"timed out after {self.timeout_s:.0f} s: {' '.join(cmd)}",
                           time.monotonic() - t0)
        out = "" if p.returncode == 0 else (p.stderr + p.stdout[-4000:])
        return Outcome(p.returncode, out, time.monotonic() - t0)


@dataclass
class SweepResult:
    """How a sweep went: runs in the grid, run now, skipped (already there), failed."""

    total: int
    ran: int = 0
    skipped: int = 0
    failed: list[tuple[Run, Outcome]] = field(default_factory=list)
    seconds: float = 0.0


def experiment_dir(results: Path, spec: Spec) -> Path:
    """Where a spec's results live: results/<name>, or <name>-full-scale, or
    for a simulated sweep <name>-sim-<topology> (a topology file by its
    stem), so that native and simulated runs, and two simulated machines,
    never share a directory."""
    suffix = "-full-scale" if spec.full_scale else ""
    if spec.sim:
        topo = re.sub(r"[^A-Za-z0-9_.-]+", "", Path(spec.topology).stem) or "topology"
        suffix += f"-sim-{topo}"
    return results / (spec.name + suffix)


def manifest_for(spec: Spec, runs: list[Run]) -> dict:
    """The manifest: the resolved spec and every run of its grid, so a report
    can be built from the directory alone and ignores stale files."""
    return {
        "spec": spec.to_json(),
        "axes": spec.axis_names(),
        "written": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runs": [{"file": r.file, "sweep": r.point.sweep, "point": r.point.key, "rep": r.rep,
                  "axes": r.point.axes, "argv": r.argv} for r in runs],
    }


def fmt_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s" if m else f"{s}s"


def dry_run(spec: Spec, runs: list[Run], exp_dir: Path, console: Console,
            prime_runs: int | None = None, jobs: int = 1) -> None:
    """List every run: whether it would be skipped, and the command."""
    todo = [r for r in runs if not (exp_dir / r.file).exists()]
    prime = spec.prime_runs if prime_runs is None else prime_runs
    est = sum(grid.estimate_seconds(r) for r in todo)
    if todo and prime:
        est += prime * grid.estimate_seconds(todo[0])
    side = f" with {jobs} side by side" if jobs > 1 else ""
    console.print(f"[bold]{spec.name}[/]: {len(runs)} runs ({len(runs) - len(todo)} already done) "
                  f"-> {exp_dir}; about {fmt_duration(est / jobs)} to go{side}")
    if todo and prime:
        console.print(f"prime x{prime}  abyss {' '.join(todo[0].argv)}  (discarded)", highlight=False,
                      soft_wrap=True)
    for i, r in enumerate(runs, 1):
        state = "done" if r not in todo else "todo"
        console.print(f"{i:4d} {state}  abyss {' '.join(r.argv)}", highlight=False, soft_wrap=True)


class _Eta:
    """Time left: the estimates of the runs still to do, scaled by how the
    runs so far compared with their estimates."""

    def __init__(self, todo: list[Run]) -> None:
        self.left = sum(grid.estimate_seconds(r) for r in todo)
        self.est_done = 0.0
        self.actual = 0.0

    def update(self, run: Run, seconds: float) -> None:
        e = grid.estimate_seconds(run)
        self.left -= e
        self.est_done += e
        self.actual += seconds

    def text(self) -> str:
        ratio = self.actual / self.est_done if self.est_done > 0 else 1.0
        return fmt_duration(max(0.0, self.left) * ratio)


def prime(run: Run, count: int, exp_dir: Path, run_fn: RunFn, console: Console) -> None:
    """Run `run` `count` times and discard the reports (see the module docstring)."""
    if count <= 0:
        return
    console.print(f"({count} discarded priming run{'' if count == 1 else 's'} of {run.label()})",
                  highlight=False)
    tmp = exp_dir / store.RUNS_DIR / "prime.json.part"
    for _ in range(count):
        outcome = run_fn(run.argv, tmp)
        tmp.unlink(missing_ok=True)
        if outcome.returncode == 2:
            first_line = _reason(outcome.output)
            raise EngineUsageError(first_line or f"abyss {' '.join(run.argv)}: exit 2")
        if not outcome.ok:
            console.print(f"[red]priming run failed[/] ({outcome.returncode}); going on", highlight=False)


def _reason(output: str) -> str:
    """The line of a failed run's output that says why: the first that is not a note."""
    lines = output.strip().splitlines()
    return next((line for line in lines if not line.startswith("abyss: note:")), lines[0] if lines else "")


def _finish(run: Run, outcome: Outcome, exp_dir: Path, result: SweepResult, console: Console) -> Outcome:
    """Keep a finished run: its report moved into place, or its .err file.
    Raises EngineUsageError when the engine refused the flags (exit 2)."""
    final = exp_dir / run.file
    tmp = final.with_suffix(".json.part")
    err = final.with_suffix(".err")
    # The engine writes a sampled run's CSV beside its --json path
    # (docs/metrics.md, "Samples"): X.json.part.samples.csv, kept as X.samples.csv.
    tmp_samples = tmp.with_name(tmp.name + ".samples.csv")
    if outcome.ok and tmp.exists():
        if tmp_samples.exists():
            tmp_samples.replace(final.with_suffix(".samples.csv"))
        tmp.replace(final)
        err.unlink(missing_ok=True)
        result.ran += 1
        return outcome
    tmp.unlink(missing_ok=True)
    tmp_samples.unlink(missing_ok=True)
    if outcome.ok:
        outcome = Outcome(1, "the engine exited 0 but wrote no JSON report", outcome.seconds)
    err.write_text(f"abyss {' '.join(run.argv)}\nexit {outcome.returncode}\n{outcome.output}",
                   encoding="utf-8")
    result.failed.append((run, outcome))
    first_line = _reason(outcome.output)
    console.print(f"[red]failed[/] ({outcome.returncode}) {run.label()}: {first_line}", highlight=False)
    if outcome.returncode == 2:
        raise EngineUsageError(first_line or f"abyss {' '.join(run.argv)}: exit 2")
    return outcome


def _guarded(run_fn: RunFn, argv: list[str], path: Path) -> Outcome:
    """run_fn on a pool thread: an exception becomes a failed outcome."""
    t0 = time.monotonic()
    try:
        return run_fn(argv, path)
    except Exception as e:  # noqa: BLE001 - reported as the run's failure
        return Outcome(1, f"{type(e).__name__}: {e}", time.monotonic() - t0)


def _execute_parallel(spec: Spec, todo: list[Run], exp_dir: Path, run_fn: RunFn, console: Console,
                      jobs: int, result: SweepResult) -> None:
    """Up to `jobs` runs at a time, the longest (by estimate) first, so the
    last to finish are short ones. Each run writes its own .part file; this
    thread alone moves finished reports into place and draws the progress."""
    order = sorted(todo, key=grid.estimate_seconds, reverse=True)
    live = console.is_terminal
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                        console=console, disable=not live, transient=False)
    t0 = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="abyss-run")
    pending: dict[Future[Outcome], Run] = {}
    try:
        with progress:
            task = progress.add_task(f"{spec.name} ({jobs} jobs)", total=len(order))
            for run in order:
                tmp = (exp_dir / run.file).with_suffix(".json.part")
                pending[pool.submit(_guarded, run_fn, run.argv, tmp)] = run
            done_count = 0
            while pending:
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for fut in done:
                    run = pending.pop(fut)
                    outcome = _finish(run, fut.result(), exp_dir, result, console)
                    done_count += 1
                    progress.update(task, advance=1, description=f"{spec.name}: {run.label()}")
                    if not live:
                        elapsed = time.monotonic() - t0
                        left = elapsed / done_count * (len(order) - done_count)
                        console.print(f"[{done_count:{len(str(len(order)))}d}/{len(order)}] {run.label()}  "
                                      f"{outcome.seconds:.1f} s, about {fmt_duration(left)} left",
                                      highlight=False)
    finally:
        for fut in pending:
            fut.cancel()
        pool.shutdown(wait=True, cancel_futures=True)


def execute(spec: Spec, runs: list[Run], exp_dir: Path, run_fn: RunFn,
            console: Console, prime_runs: int | None = None, jobs: int = 1) -> SweepResult:
    """Run every run of the grid whose JSON is not there yet, after the
    priming runs (`prime_runs`, default the spec's) when there is any; with
    `jobs` > 1, that many at a time (no priming)."""
    exp_dir.mkdir(parents=True, exist_ok=True)
    (exp_dir / store.RUNS_DIR).mkdir(exist_ok=True)
    store.write_manifest(exp_dir, manifest_for(spec, runs))
    (exp_dir / "spec.toml").write_text(spec.text, encoding="utf-8")
    todo = [r for r in runs if not (exp_dir / r.file).exists()]
    result = SweepResult(total=len(runs), skipped=len(runs) - len(todo))
    if result.skipped:
        console.print(f"{spec.name}: {result.skipped} of {len(runs)} runs already in {exp_dir}; "
                      "skipping them")
    t0 = time.monotonic()
    if jobs > 1 and todo:
        _execute_parallel(spec, todo, exp_dir, run_fn, console, jobs, result)
        result.seconds = time.monotonic() - t0
        return result
    if todo:
        prime(todo[0], spec.prime_runs if prime_runs is None else prime_runs, exp_dir, run_fn, console)
    eta = _Eta(todo)
    live = console.is_terminal
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), TextColumn("eta {task.fields[eta]}"), console=console,
                        disable=not live, transient=False)
    with progress:
        task = progress.add_task(spec.name, total=len(todo), eta=eta.text())
        for i, run in enumerate(todo, 1):
            progress.update(task, description=f"{spec.name}: {run.label()}")
            tmp = (exp_dir / run.file).with_suffix(".json.part")
            outcome = _finish(run, run_fn(run.argv, tmp), exp_dir, result, console)
            eta.update(run, outcome.seconds)
            progress.update(task, advance=1, eta=eta.text())
            if not live:
                console.print(f"[{i:{len(str(len(todo)))}d}/{len(todo)}] {run.label()}  "
                              f"{outcome.seconds:.1f} s, eta {eta.text()}", highlight=False)
    result.seconds = time.monotonic() - t0
    return result


def sweep(spec: Spec, results: Path, run_fn: RunFn, console: Console,
          reps: int | None = None, prime_runs: int | None = None,
          jobs: int = 1) -> tuple[Path, SweepResult]:
    """Expand, run what is missing, and rebuild the experiment's tables."""
    runs = grid.runs(spec, reps)
    exp_dir = experiment_dir(results, spec)
    result = execute(spec, runs, exp_dir, run_fn, console, prime_runs, jobs)
    exp = store.load_experiment(exp_dir)
    store.write_tables(exp)
    tables.write_text(exp)
    store.write_combined(results)
    return exp_dir, result
