"""Running a sweep: each run is one engine subprocess writing its JSON report.

The run function is injected (`RunFn`), so tests drive the sweep logic with
a fake and no engine. A run's report is written to a temporary name and moved
into place only when the engine exits 0, so a file in `runs/` is always a
complete report, and an interrupted sweep resumes by skipping every run
whose file exists. A spec may ask for priming runs (`prime_runs`): runs of
the first pending point made before the sweep and discarded, so that the
first measured run does not pay for a cold machine (caches, frequency).
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

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
    """Where a spec's results live: results/<name>, or <name>-full-scale."""
    return results / (spec.name + ("-full-scale" if spec.full_scale else ""))


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
            prime_runs: int | None = None) -> None:
    """List every run: whether it would be skipped, and the command."""
    todo = [r for r in runs if not (exp_dir / r.file).exists()]
    prime = spec.prime_runs if prime_runs is None else prime_runs
    est = sum(grid.estimate_seconds(r) for r in todo)
    if todo and prime:
        est += prime * grid.estimate_seconds(todo[0])
    console.print(f"[bold]{spec.name}[/]: {len(runs)} runs ({len(runs) - len(todo)} already done) "
                  f"-> {exp_dir}; about {fmt_duration(est)} to go")
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
            first_line = (outcome.output.strip().splitlines() or [""])[0]
            raise EngineUsageError(first_line or f"abyss {' '.join(run.argv)}: exit 2")
        if not outcome.ok:
            console.print(f"[red]priming run failed[/] ({outcome.returncode}); going on", highlight=False)


def execute(spec: Spec, runs: list[Run], exp_dir: Path, run_fn: RunFn,
            console: Console, prime_runs: int | None = None) -> SweepResult:
    """Run every run of the grid whose JSON is not there yet, after the
    priming runs (`prime_runs`, default the spec's) when there is any."""
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
            final = exp_dir / run.file
            tmp = final.with_suffix(".json.part")
            err = final.with_suffix(".err")
            outcome = run_fn(run.argv, tmp)
            if outcome.ok and tmp.exists():
                tmp.replace(final)
                err.unlink(missing_ok=True)
                result.ran += 1
            else:
                tmp.unlink(missing_ok=True)
                if outcome.ok:
                    outcome = Outcome(1, "the engine exited 0 but wrote no JSON report", outcome.seconds)
                err.write_text(f"abyss {' '.join(run.argv)}\nexit {outcome.returncode}\n{outcome.output}",
                               encoding="utf-8")
                result.failed.append((run, outcome))
                first_line = (outcome.output.strip().splitlines() or [""])[0]
                console.print(f"[red]failed[/] ({outcome.returncode}) {run.label()}: {first_line}",
                              highlight=False)
                if outcome.returncode == 2:
                    raise EngineUsageError(first_line or f"abyss {' '.join(run.argv)}: exit 2")
            eta.update(run, outcome.seconds)
            progress.update(task, advance=1, eta=eta.text())
            if not live:
                console.print(f"[{i:{len(str(len(todo)))}d}/{len(todo)}] {run.label()}  "
                              f"{outcome.seconds:.1f} s, eta {eta.text()}", highlight=False)
    result.seconds = time.monotonic() - t0
    return result


def sweep(spec: Spec, results: Path, run_fn: RunFn, console: Console,
          reps: int | None = None, prime_runs: int | None = None) -> tuple[Path, SweepResult]:
    """Expand, run what is missing, and rebuild the experiment's tables."""
    runs = grid.runs(spec, reps)
    exp_dir = experiment_dir(results, spec)
    result = execute(spec, runs, exp_dir, run_fn, console, prime_runs)
    exp = store.load_experiment(exp_dir)
    store.write_tables(exp)
    tables.write_text(exp)
    store.write_combined(results)
    return exp_dir, result
