"""Command line of the harness: sweep, report, reproduce, demo.

`./abyss sweep|report|reproduce|demo ...` runs `python -m abyss_harness ...`
inside the checkout's virtual environment (and `./abyss bench ycsb|hstore|
tpcc|latch ...` runs `sweep harness/specs/bench-NAME.toml ...`, `./abyss bench
ts ...` `sweep harness/specs/bench-ts.toml ...`). Exit codes follow the engine's:
0 success, 2 bad input (one line naming the key or value and what is
allowed; nothing is run), 1 a failure while running.

`--sim` runs a spec on the simulated many-core machine (its `[sim]`
section), several runs at a time (`--jobs`) or on a Dask cluster
(`--cluster`); docs/harness.md, "Simulated sweeps".
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Sequence, TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from . import compare, engine, grid, reproduce, runner, store
from .metrics import is_metric
from .runner import EngineRunner, EngineUsageError
from .spec import MAX_PRIME_RUNS, Spec, SpecError

if TYPE_CHECKING:
    from .report import Written

# Plots and reports need matplotlib (slow to import); they are imported where
# used, so listing experiments and rejecting bad input stay quick.

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """Bad command-line input, reported in one line with exit code 2."""


class UsageParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit 2), like the engine's;
    every harness command's parser."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def _results_dir(arg: str | None) -> Path:
    return Path(arg) if arg else engine.repo_root() / "results"


def _display(path: Path) -> str:
    """A path as the user would type it: relative to the current directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _binary(args: argparse.Namespace) -> Path:
    binary = engine.find_binary()
    if not binary.is_file():
        which, preset = ("simulated engine", "sim") if getattr(args, "sim", False) else ("engine binary", "release")
        raise UsageError(f"{which} not found at {binary}; build it with ./abyss build {preset}")
    return binary


def _run_fn(args: argparse.Namespace) -> tuple[runner.RunFn, int, object | None]:
    """The run function, how many runs go at a time, and the cluster client (if any)."""
    binary = _binary(args)
    client = None
    if getattr(args, "cluster", None):
        from . import cluster

        try:
            client = cluster.connect(args.cluster)
        except cluster.ClusterError as e:
            raise UsageError(str(e)) from None
    note = engine.revision_mismatch(binary)
    if note:
        print(note, file=sys.stderr)
    if client is not None:
        return (cluster.ClusterRunner(client, binary, timeout_s=args.timeout),
                args.jobs or cluster.worker_threads(client), client)
    return EngineRunner(binary, timeout_s=args.timeout), _jobs(args), None


def _jobs(args: argparse.Namespace) -> int:
    """Runs at a time: --jobs, else the host's CPUs for --sim, else 1."""
    if getattr(args, "jobs", None):
        return args.jobs
    return (os.cpu_count() or 1) if getattr(args, "sim", False) else 1


def _check_modes(args: argparse.Namespace) -> None:
    """--sim and the options that only mean something with it."""
    sim = getattr(args, "sim", False)
    if getattr(args, "topology", None) and not sim:
        raise UsageError("--topology chooses the simulated machine: use it with --sim")
    if getattr(args, "cluster", None) and not sim:
        raise UsageError("--cluster runs simulated sweeps only (add --sim): a native run measures "
                         "the machine it runs on")
    if (getattr(args, "jobs", None) or 1) > 1 and not sim:
        raise UsageError("--jobs N > 1 runs points side by side, for simulated sweeps only (add --sim): "
                         "native runs measure the machine and would disturb each other")
    if sim and getattr(args, "full_scale", False):
        raise UsageError("--sim and --full-scale: a spec's [sim] section has its own sizes; drop --full-scale")
    engine.use_sim(sim)


def _load(args: argparse.Namespace, name: str) -> Spec:
    _check_modes(args)
    sim = getattr(args, "sim", False)
    return reproduce.load(name, full_scale=getattr(args, "full_scale", False), overrides=_overrides(args),
                          sim=sim, topology=getattr(args, "topology", None))


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return v


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = 0.0
    if not v > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return v


def choice_list(text: str, allowed: Sequence[str], what: str) -> list[str]:
    """A comma-separated list, each item one of `allowed` (an argparse type)."""
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"{what}: empty list")
    for x in items:
        if x not in allowed:
            raise argparse.ArgumentTypeError(f"{what}: '{x}' is not one of {', '.join(allowed)}")
    return items


def _fraction(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not 0 <= v < 1:   # also refuses NaN
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction from 0 to below 1")
    return v


def _prime_runs(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = -1
    if not 0 <= v <= MAX_PRIME_RUNS:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer from 0 to {MAX_PRIME_RUNS}")
    return v


def _overrides(args: argparse.Namespace) -> dict[str, str]:
    """`--set NAME=VALUE` words as a dict (a later one wins)."""
    out: dict[str, str] = {}
    for word in args.set or []:
        name, eq, value = word.partition("=")
        if not eq or not name.strip():
            raise UsageError(f"--set {word!r}: write NAME=VALUE, e.g. --set duration=0.5 or --set threads=1,2")
        out[name.strip().replace("-", "_")] = value.strip()
    return out


def parameter_flags(argv: list[str], own: set[str]) -> list[str]:
    """argv with every `--NAME VALUE` (or `--NAME=VALUE`) that is not an
    option of the command rewritten as `--set NAME=VALUE`, so that spec
    parameters can be given as the engine's flags (`--duration 0.3`,
    `--threads 1,2`). A flag followed by nothing or by another flag is a
    switch (`--pin`): `--set pin=true`."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        flag = word.split("=", 1)[0]
        if not word.startswith("--") or word == "--" or flag in own:
            out.append(word)
            i += 1
            continue
        name, eq, value = word[2:].partition("=")
        if not eq:
            if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                value = argv[i + 1]
                i += 1
            else:
                value = "true"
        out += ["--set", f"{name}={value}"]
        i += 1
    return out


def _sweep_and_summarize(spec: Spec, args: argparse.Namespace,
                         console: Console) -> tuple[Path, runner.SweepResult]:
    """Run (or with --dry-run, list) a spec's grid and print its median tables."""
    results = _results_dir(args.results)
    if args.dry_run:
        runs = grid.runs(spec, args.reps)
        runner.dry_run(spec, runs, runner.experiment_dir(results, spec), console, args.prime_runs,
                       jobs=_jobs(args))
        return runner.experiment_dir(results, spec), runner.SweepResult(total=len(runs))
    run_fn, jobs, client = _run_fn(args)
    try:
        exp_dir, res = runner.sweep(spec, results, run_fn, console, reps=args.reps,
                                    prime_runs=args.prime_runs, jobs=jobs)
    finally:
        if client is not None:
            client.close()
    from . import report

    report.print_summary(store.load_experiment(exp_dir), console)
    console.print(f"{spec.name}: {res.ran} run(s) in {runner.fmt_duration(res.seconds)}, "
                  f"{res.skipped} skipped, {len(res.failed)} failed; results in {_display(exp_dir)}",
                  highlight=False)
    return exp_dir, res


def cmd_sweep(args: argparse.Namespace, console: Console) -> int:
    spec = _load(args, args.spec)
    exp_dir, res = _sweep_and_summarize(spec, args, console)
    if args.dry_run:
        return EXIT_OK
    if args.report:
        _report(exp_dir, console)
    else:
        console.print(f"next: ./abyss report {_display(exp_dir)}", highlight=False)
    return EXIT_FAIL if res.failed else EXIT_OK


def _report(path: Path, console: Console, size: str | None = None) -> list[Written]:
    from . import report

    written = report.write_report(path, size)
    for w in written:
        console.print(f"report: {_display(w.html)} and {w.markdown.name}"
                      + (f" ({w.figures} plots)" if w.figures else ""), highlight=False)
        if size and w.figures:
            console.print(f"  {size}-width figures: {_display(w.markdown.parent / f'plots-{size}')}/",
                          highlight=False)
    return written


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    path = _results_dir(args.results_dir)
    if not path.is_dir():
        raise UsageError(f"{path}: no such results directory")
    if not store.find_experiments(path):
        raise UsageError(f"{path}: no run reports (JSON) found; run ./abyss sweep SPEC first")
    _report(path, console, args.size)
    return EXIT_OK


def _percent(x: float) -> str:
    """A spread as a percentage; a dash where one repetition gives none."""
    return "–" if x != x else f"{x:.1%}"  # NaN


def cmd_compare(args: argparse.Namespace, console: Console) -> int:
    a, b = Path(args.a), Path(args.b)
    if not is_metric(args.metric):
        raise UsageError(f"--metric {args.metric!r} is not a metric")
    try:
        c = compare.compare(compare.load_side(a), compare.load_side(b), args.metric, args.noise, args.paired)
    except compare.CompareError as e:
        raise UsageError(str(e)) from None
    for w in c.warnings:
        console.print(f"[yellow]warning:[/] {w}")
    t = Table(title=f"{args.metric}: B = {b} against A = {a}", title_justify="left")
    cols = ["point", "A", "B", "B / A", "spread A", "spread B"] + (["B / A per rep"] if args.paired else [])
    for col in cols + ["verdict"]:
        t.add_column(col, justify="left" if col in ("point", "verdict") else "right")
    for _, r in c.points.iterrows():
        cells = [compare.label(c, r), f"{r[args.metric + '_a']:,.0f}", f"{r[args.metric + '_b']:,.0f}",
                 f"{r['ratio']:.3f}", _percent(r["spread_a"]), _percent(r["spread_b"])]
        t.add_row(*cells, *([r["pair_ratios"] or "–"] if args.paired else []), r["verdict"])
    console.print(t)
    n = c.counts()
    how = ("half the range of the per-repetition ratios" if args.paired
           else "each side's spread over its repetitions")
    console.print(f"{len(c.points)} point(s): {n['faster']} faster, {n['slower']} slower, "
                  f"{n['within noise']} within noise (noise: the larger of {args.noise:.0%} and {how})")
    out = Path(args.out) if args.out else _results_dir(None) / "compare"
    # Two runs of one spec share their directory's name; their parents tell them apart.
    names = (a.name, b.name) if a.name != b.name else (f"{a.parent.name}-{a.name}", f"{b.parent.name}-{b.name}")
    stem = out / f"{names[0]}-vs-{names[1]}"
    files = compare.plot(c, stem, f"{args.metric}, B / A")
    console.print(f"plot: {files[0]} (and .svg, .pdf; data {files[-1]})")
    return EXIT_OK


def cmd_reproduce(args: argparse.Namespace, console: Console) -> int:
    if args.list:
        _check_modes(args)
        scale = (" on the simulated machine (--sim)" if args.sim else " at full scale" if args.full_scale
                 else ", scaled to this machine")
        t = Table(title="Paper experiments (./abyss reproduce NAME)" + scale, title_justify="left",
                  show_lines=False)
        for col in ("name", "reproduces", "what", "runs", "about", "--sim"):
            t.add_column(col, justify="right" if col in ("runs", "about") else "left",
                         no_wrap=col in ("name", "runs", "about", "--sim"))
        jobs = _jobs(args)
        for e in reproduce.catalogue(full_scale=args.full_scale, sim=args.sim, topology=args.topology):
            t.add_row(e.name, e.figure, e.title, str(e.runs), runner.fmt_duration(e.seconds / jobs),
                      f"yes ({e.sim})" if e.sim else "no")
        console.print(t)
        if args.sim:
            console.print(f"(times with {jobs} run(s) at a time; experiments without a [sim] section "
                          "are left out)", highlight=False, markup=False)
        return EXIT_OK
    if not args.name:
        raise UsageError("name an experiment (see ./abyss reproduce --list)")
    spec = _load(args, args.name)
    if spec.figure:
        console.print(f"[bold]{spec.name}[/]: {spec.figure}. {spec.description}", highlight=False)
    if spec.sim:
        console.print(f"simulated: topology {spec.topology}, --sim-cores = threads"
                      + (f"; scaled: {spec.scaled}" if spec.scaled else ""), highlight=False)
    exp_dir, res = _sweep_and_summarize(spec, args, console)
    if not args.dry_run:
        _report(exp_dir, console)
        if spec.sim:
            _claims_summary(spec.name, exp_dir.parent, console)
    return EXIT_FAIL if res.failed else EXIT_OK


def _claims_summary(name: str, results: Path, console: Console) -> None:
    """One line: how many of the papers' statements on this figure the runs agree with."""
    from . import claims   # claims imports this module's parser

    stated = [c for c in claims.read_claims(claims.claims_path()) if c.spec == name]
    if stated:
        verdicts = [claims.check(c, claims.Results(results)) for c in stated]
        console.print(f"the papers' statements on {name}: {claims.count_text(verdicts)} "
                      f"(./abyss claims {name})", highlight=False)


def _phases_before() -> list[tuple[str, float]]:
    """The phases ./abyss ran before the harness (ABYSS_PHASES: "packages=0.4,build=212,harness=0.1")."""
    out = []
    for item in filter(None, os.environ.get("ABYSS_PHASES", "").split(",")):
        name, _, secs = item.partition("=")
        try:
            out.append((name, float(secs)))
        except ValueError:
            pass
    return out


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    phases = _phases_before()
    spec = reproduce.load("demo", overrides=_overrides(args))
    exp_dir = runner.experiment_dir(_results_dir(args.results), spec)
    if not args.dry_run and exp_dir.is_dir() and (exp_dir / store.MANIFEST).is_file():
        shutil.rmtree(exp_dir)          # the demo shows this build, not an earlier one
    start = time.monotonic()
    exp_dir, res = _sweep_and_summarize(spec, args, console)
    if args.dry_run:
        return EXIT_OK
    phases.append(("runs", time.monotonic() - start))
    start = time.monotonic()
    _report(exp_dir, console)
    phases.append(("report", time.monotonic() - start))
    console.print("demo phases: " + ", ".join(f"{name} {runner.fmt_duration(secs)}" for name, secs in phases)
                  + f"; total {runner.fmt_duration(sum(secs for _, secs in phases))}", highlight=False)
    from .plots import scheme_label

    df = store.load_experiment(exp_dir).runs
    if not df.empty and df["frac_other"].notna().any():
        r = df.loc[df["frac_other"].idxmax()]
        verdict = "within" if r["frac_other"] <= 0.05 else "ABOVE"
        console.print(f"largest 'other' fraction over {len(df)} runs: {100 * r['frac_other']:.2f}% "
                      f"({scheme_label(r['cc'])}, {r['sweep']}, {int(r['threads'])} threads); "
                      f"{verdict} the 5% target", highlight=False)
    return EXIT_FAIL if res.failed else EXIT_OK


#: Commands that run a spec, whose unknown `--NAME VALUE` words are parameters.
SPEC_COMMANDS = ("sweep", "reproduce", "demo")


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(prog="abyss", description="abyss experiment harness", allow_abbrev=False)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def run_options(sp: argparse.ArgumentParser, reps_default: str) -> None:
        sp.add_argument("--reps", type=_positive_int, default=None,
                        help=f"repetitions per point (default: {reps_default})")
        sp.add_argument("--dry-run", action="store_true", help="list the runs and exit")
        sp.add_argument("--results", metavar="DIR", help="results directory (default: results/ of the checkout)")
        sp.add_argument("--timeout", type=_positive_float, default=None, metavar="S",
                        help="kill a run after S seconds (default: no limit)")
        sp.add_argument("--prime-runs", type=_prime_runs, default=None, metavar="N",
                        help="runs of the first point made before the sweep and discarded "
                             "(default: the spec's prime_runs, else 0)")
        sp.add_argument("--set", action="append", metavar="NAME=VALUE",
                        help="replace a parameter of the spec in every sweep: one value fixes it, "
                             "a comma-separated list or a range (1..cores) sweeps it; --NAME VALUE "
                             "(an engine flag such as --duration 0.3) means the same")

    def sim_options(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--sim", action="store_true",
                        help="run on the simulated many-core machine: the spec's [sim] section, "
                             "--sim-cores = threads, results in <name>-sim-<topology>/")
        sp.add_argument("--topology", metavar="T",
                        help="with --sim: mesh, numa, host or a topology file (default: the spec's)")
        sp.add_argument("--jobs", type=_positive_int, default=None, metavar="N",
                        help="with --sim: runs at a time (default: this host's CPUs; "
                             "with --cluster: the cluster's worker threads)")
        sp.add_argument("--cluster", metavar="ADDRESS",
                        help="with --sim: run each point as a task on the Dask scheduler at ADDRESS "
                             "(tcp://host:8786; the workers see this checkout at the same path)")

    sp = sub.add_parser("sweep", allow_abbrev=False, help="run an experiment spec's grid (resumes where it stopped)")
    sp.add_argument("spec", metavar="SPEC", help="a spec file, or the name of one in harness/specs/")
    sp.add_argument("--full-scale", action="store_true", help="use the spec's [full_scale] sizes")
    sp.add_argument("--report", action="store_true", help="write the report afterwards")
    run_options(sp, "the spec's reps, else 3; 1 with --sim")
    sim_options(sp)
    sp.set_defaults(func=cmd_sweep)

    sp = sub.add_parser("report", help="write report.md and report.html with plots and tables")
    sp.add_argument("results_dir", nargs="?", metavar="RESULTS_DIR",
                    help="an experiment directory, or a directory of them (default: results/)")
    sp.add_argument("--size", choices=("column", "page"),
                    help="also draw every figure at a paper's single-column (3.3 in) or page (7 in) width, "
                         "into plots-SIZE/ beside the report's")
    sp.set_defaults(func=cmd_report)

    sp = sub.add_parser("compare", help="two result sets joined on their configuration: ratios and verdicts")
    sp.add_argument("a", metavar="A", help="the baseline: an experiment directory or a directory of them")
    sp.add_argument("b", metavar="B", help="the result set compared with it")
    sp.add_argument("--metric", default="throughput", help="the column compared (default: throughput)")
    sp.add_argument("--noise", type=_fraction, default=compare.DEFAULT_NOISE, metavar="F",
                    help="ratios within 1 +- F are noise, or within a side's own spread if larger (default 0.1)")
    sp.add_argument("--paired", action="store_true",
                    help="the sides ran interleaved (repetition k of A, then of B): compare repetition by "
                         "repetition, so drift between repetitions cancels")
    sp.add_argument("--out", metavar="DIR", help="where the plot goes (default: results/compare/)")
    sp.set_defaults(func=cmd_compare)

    sp = sub.add_parser("reproduce", allow_abbrev=False, help="run a paper experiment by name, then its report")
    sp.add_argument("name", nargs="?", metavar="NAME", help="experiment name (see --list)")
    sp.add_argument("--list", action="store_true", help="list the paper experiments")
    sp.add_argument("--full-scale", action="store_true", help="the papers' sizes instead of scaled ones")
    run_options(sp, "the spec's reps; 1 with --sim")
    sim_options(sp)
    sp.set_defaults(func=cmd_reproduce)

    sp = sub.add_parser("demo", allow_abbrev=False, help="every scheme on YCSB (low, high contention) and TPC-C, then a report")
    run_options(sp, "1")
    sp.set_defaults(func=cmd_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SPEC_COMMANDS:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        own = set(sub.choices[argv[0]]._option_string_actions)
        argv = argv[:1] + parameter_flags(argv[1:], own)
    args = parser.parse_args(argv)
    console = Console(highlight=False, soft_wrap=True)   # status lines never wrap; tables fit
    prog = f"abyss {args.command}"
    try:
        return args.func(args, console)
    except (SpecError, UsageError, EngineUsageError, engine.ParamError) as e:
        print(f"{prog}: {e}", file=sys.stderr)      # one line, never wrapped
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
