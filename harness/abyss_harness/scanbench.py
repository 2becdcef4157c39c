"""`abyss bench scan`: the Terrier study's five table designs (coarse,
fine-grained, snapshot, ordered-map, lock-free) through its correctness
workload and its three benchmarks, measured by the engine binary
(`abyss bench scan --json`). This prints the binary's table and writes
results/bench-scan/<time>/: scan.json (the binary's answer), scan.csv (a row
per benchmark, design and thread count) and scan.png (the study's plots: items
a millisecond against threads, a panel per benchmark, a line per design).
--out DIR writes there instead. With --json the binary's JSON goes to
standard output and nothing is written. Every other flag is the binary's
(`abyss bench scan --help`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from . import engine

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
BENCHMARKS = ("ConcurrentScan", "ConcurrentInsert", "ConcurrentIterator")
STYLES = {"coarse": "o-", "fine-grained": "v-", "snapshot": "s--", "ordered-map": "D-.", "lock-free": "^-"}


def rows(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """A row per result, with the speedups the table prints: over the same
    design at one thread and over the coarse latch at the same threads."""
    res = answer.get("results", [])

    def find(benchmark: str, design: str, threads: int) -> dict[str, Any] | None:
        return next((r for r in res if r["benchmark"] == benchmark and r["design"] == design
                     and r["threads"] == threads), None)

    out = []
    for r in res:
        one = find(r["benchmark"], r["design"], 1)
        coarse = find(r["benchmark"], "coarse", r["threads"])
        rate = r["mitems_per_s"]
        out.append({"benchmark": r["benchmark"], "design": r["design"], "threads": r["threads"], "ms": r["ms"],
                    "items_per_ms": rate * 1e3,
                    "speedup": rate / one["mitems_per_s"] if one and one["mitems_per_s"] > 0 else None,
                    "vs_coarse": rate / coarse["mitems_per_s"] if coarse and coarse["mitems_per_s"] > 0 else None})
    return out


def plot(table: list[dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    shown = [b for b in BENCHMARKS if any(r["benchmark"] == b for r in table)]
    fig, axes = plt.subplots(1, len(shown), figsize=(4.2 * len(shown), 3.6), squeeze=False)
    for ax, bench in zip(axes[0], shown):
        for design, style in STYLES.items():
            pts = sorted((r["threads"], r["items_per_ms"]) for r in table
                         if r["benchmark"] == bench and r["design"] == design)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] / 1e3 for p in pts], style, label=design)
        threads = sorted({r["threads"] for r in table if r["benchmark"] == bench})
        ax.set_xscale("log", base=2)
        ax.set_xticks(threads, [str(n) for n in threads])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_yscale("log")
        ax.set_xlabel("threads (each does the whole work)")
        ax.set_ylabel("items per ms (thousands)")
        ax.set_title(bench + "N", fontsize=9)
        ax.grid(alpha=0.3, which="both")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = engine.repo_root() / "results" / "bench-scan" / time.strftime("%Y%m%d-%H%M%S")
    if "--out" in argv:
        at = argv.index("--out")
        if at + 1 >= len(argv) or not argv[at + 1]:
            print("abyss bench scan: --out needs a directory", file=sys.stderr)
            return EXIT_USAGE
        out = Path(argv[at + 1])
        del argv[at:at + 2]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        print(f"abyss bench scan: --out {out}: {e.strerror}", file=sys.stderr)
        return EXIT_USAGE
    binary = engine.find_binary(sim=False)
    if "--json" in argv or "--help" in argv or "-h" in argv:
        return subprocess.run([str(binary), "bench", "scan", *argv]).returncode
    # The binary refuses bad flags itself, with exit 2 and one line, before
    # any work; its progress goes to standard error as it runs.
    done = subprocess.run([str(binary), "bench", "scan", *argv, "--json"], stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        if not any(out.iterdir()):
            out.rmdir()
        return done.returncode
    answer = json.loads(done.stdout)
    (out / "scan.json").write_text(json.dumps(answer, indent=2) + "\n")
    table = rows(answer)
    with (out / "scan.csv").open("w") as f:
        f.write("benchmark,design,threads,ms,items_per_ms,speedup,vs_coarse\n")
        for r in table:
            ratios = ["" if r[k] is None else f"{r[k]:.3f}" for k in ("speedup", "vs_coarse")]
            f.write(f"{r['benchmark']},{r['design']},{r['threads']},{r['ms']:.3f},{r['items_per_ms']:.0f},"
                    f"{ratios[0]},{ratios[1]}\n")
    plot(table, out / "scan.png", f"abyss bench scan: {answer['tuples']} tuples of 8 bytes a thread")
    print(answer["table"], end="")
    print(f"results: {out}/scan.json, scan.csv, scan.png")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
