"""Runs the mutants of tools/mutants/ against the quick test tier.

Each mutant is applied to a scratch copy of the checkout (build/mutants/tree,
its release build kept between mutants, ccache serving what did not change),
and `./abyss test --tests-only` runs there: the quick tier's build, its ctest
set and its pytest set, stopping at the first failure. A mutant is caught
when that fails; the table names the first test that failed and how long the
build and the tests took. Exit 0 when every mutant was caught, 1 when one
survived or could not be applied, 2 for a bad argument.

    ./abyss mutants                  every mutant
    ./abyss mutants 01 silo          those whose file name contains 01 or silo
    ./abyss mutants --baseline       first the unmutated copy, which must pass
    ./abyss mutants --list           the mutants, without running them
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = Path(__file__).resolve().parent
SCRATCH = ROOT / "build" / "mutants" / "tree"
REPORT = ROOT / "build" / "mutants" / "report"
# git stops looking for a repository above the scratch copy: it is no
# checkout, and `git apply` there patches its files, not the checkout's.
ISOLATED = dict(os.environ, GIT_CEILING_DIRECTORIES=str(SCRATCH.parent))


@dataclass
class Mutant:
    name: str
    path: Path
    what: str
    expect: str


@dataclass
class Outcome:
    name: str
    what: str
    caught: bool
    by: str
    build_s: float
    test_s: float
    note: str = ""


def mutants() -> list[Mutant]:
    out = []
    for p in sorted(MUTANTS.glob("*.patch")):
        head = p.read_text().split("\ndiff --git", 1)[0]
        what = re.search(r"^Mutant: (.*)$", head, re.M)
        expect = re.search(r"^Expect: (.*)$", head, re.M)
        out.append(Mutant(p.stem, p, what.group(1) if what else "?", expect.group(1) if expect else ""))
    return out


def sync_scratch() -> None:
    """Makes the scratch tree's files those of the checkout (tracked and
    untracked, not ignored). A file is written only when its bytes differ, so
    it gets a new time and ninja rebuilds what includes it; the rest keep
    theirs and are not rebuilt."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    wanted = set()
    for f in filter(None, files):
        src, dst = ROOT / f, SCRATCH / f
        if not src.is_file():
            continue  # removed in the work tree, not yet in the index
        wanted.add(f)
        data = src.read_bytes()
        if dst.is_file() and dst.read_bytes() == data:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(data)
        shutil.copymode(src, dst)
    for f in ("src", "tests", "apps", "harness", "tools", "cmake", "examples"):
        for p in (SCRATCH / f).rglob("*") if (SCRATCH / f).is_dir() else []:
            rel = p.relative_to(SCRATCH).as_posix()
            if p.is_file() and rel not in wanted and "__pycache__" not in rel and ".egg-info" not in rel:
                p.unlink()


def first_failure(log: str) -> str:
    """The first test the log says failed: ctest's list, then pytest's."""
    m = re.search(r"The following tests FAILED:\s*\n\s*\d+ - (\S+)", log)
    if m:
        return m.group(1)
    m = re.search(r"^FAILED (\S+)", log, re.M)
    if m:
        return m.group(1)
    return "(see the log)"


def phase_seconds(log: str, name: str) -> float:
    m = re.search(r"^\s+" + re.escape(name) + r"\s+(\d+) s", log, re.M)
    return float(m.group(1)) if m else 0.0


def run_tier(env: dict[str, str], log_path: Path) -> tuple[int, str, float]:
    start = time.monotonic()
    with open(log_path, "w") as log:
        rc = subprocess.run(["./abyss", "test", "--tests-only"], cwd=SCRATCH, env=env, stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode
    return rc, log_path.read_text(), time.monotonic() - start


def apply(patch: Path, reverse: bool = False) -> str | None:
    args = ["git", "apply"] + (["-R"] if reverse else []) + [str(patch)]
    r = subprocess.run(args, cwd=SCRATCH, env=ISOLATED, capture_output=True, text=True)
    return None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["git apply failed"])[0]


def table(outcomes: list[Outcome]) -> str:
    lines = ["| mutant | the bug | caught | first failing test | build s | tests s |", "|---|---|---|---|---:|---:|"]
    for o in outcomes:
        lines.append(f"| {o.name} | {o.what} | {'yes' if o.caught else 'NO'} | {o.by or o.note} | "
                     f"{o.build_s:.0f} | {o.test_s:.0f} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="abyss mutants", description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help="run only the mutants whose file name contains one of these")
    p.add_argument("--baseline", action="store_true", help="first run the unmutated copy, which must pass")
    p.add_argument("--list", action="store_true", help="list the mutants and what they break")
    args = p.parse_args(argv)

    chosen = [m for m in mutants() if not args.names or any(n in m.name for n in args.names)]
    if not chosen:
        print(f"abyss mutants: no mutant matches {' '.join(args.names)}; see ./abyss mutants --list",
              file=sys.stderr)
        return 2
    if args.list:
        for m in chosen:
            print(f"{m.name}: {m.what}")
            if m.expect:
                print(f"    expected to be caught by: {m.expect}")
        return 0

    SCRATCH.mkdir(parents=True, exist_ok=True)
    REPORT.mkdir(parents=True, exist_ok=True)
    env = dict(ISOLATED, ABYSS_STOP_ON_FAILURE="1", ABYSS_VENV=str(ROOT / ".venv"))
    print(f"abyss mutants: {len(chosen)} mutant(s) in {SCRATCH.relative_to(ROOT)}, each against the quick "
          f"tier's tests (./abyss test --tests-only), stopping at the first failure", flush=True)
    sync_scratch()
    for m in chosen:
        if err := apply(m.path):
            print(f"abyss mutants: {m.name} does not apply to this checkout: {err}", file=sys.stderr)
            return 2
        apply(m.path, reverse=True)

    outcomes: list[Outcome] = []
    if args.baseline:
        print("baseline: the unmutated copy ...", flush=True)
        rc, log, secs = run_tier(env, REPORT / "baseline.log")
        if rc != 0:
            print(f"abyss mutants: the unmutated copy fails its tests ({first_failure(log)}; "
                  f"{REPORT / 'baseline.log'}): no mutant can be judged", file=sys.stderr)
            return 1
        print(f"baseline: passed in {secs:.0f} s", flush=True)

    for i, m in enumerate(chosen, 1):
        print(f"[{i}/{len(chosen)}] {m.name}: {m.what}", flush=True)
        apply(m.path)
        for f in re.findall(r"^\+\+\+ b/(\S+)", m.path.read_text(), re.M):
            if (SCRATCH / f).read_bytes() == (ROOT / f).read_bytes():
                print(f"abyss mutants: {m.name} left {f} unchanged in the scratch copy", file=sys.stderr)
                return 2
        try:
            rc, log, secs = run_tier(env, REPORT / f"{m.name}.log")
        finally:
            apply(m.path, reverse=True)
        build_s = phase_seconds(log, "build: release")
        built = "FAILED" not in (re.search(r"^\s+build: release.*$", log, re.M) or [""])[0]
        o = Outcome(m.name, m.what, caught=rc != 0 and built, by=first_failure(log) if rc != 0 else "",
                    build_s=build_s, test_s=max(secs - build_s, 0.0))
        if not built:
            o.note = "the mutant does not compile: fix its patch"
        outcomes.append(o)
        verdict = f"caught by {o.by}" if o.caught else (o.note or "SURVIVED: every test passed")
        print(f"    {verdict} (build {o.build_s:.0f} s, tests {o.test_s:.0f} s)", flush=True)

    sync_scratch()  # the scratch copy as the checkout again
    text = table(outcomes)
    caught = sum(o.caught for o in outcomes)
    print()
    print(text)
    print(f"\n{caught} of {len(outcomes)} mutants caught")
    (REPORT / "mutants.md").write_text(text + f"\n\n{caught} of {len(outcomes)} mutants caught\n")
    (REPORT / "mutants.json").write_text(json.dumps([asdict(o) for o in outcomes], indent=2) + "\n")
    print(f"report: {(REPORT / 'mutants.md').relative_to(ROOT)} (and .json; each mutant's log beside it)")
    return 0 if caught == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
