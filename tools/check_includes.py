#!/usr/bin/env python3
"""The layer rules of abyss, checked on every #include (docs/architecture.md, "Layers").

- apps/ (the binary) never includes platform/: hardware and OS facts reach it
  through the engine;
- common/ includes nothing of abyss outside common/ (a build-generated header
  aside): the run's configuration is plain data, and each workload's settings
  are held by type, not by include;
- engine/ reaches a scheme or a workload only through the registries, never a
  particular src/cc/<scheme>/ or src/workload/<name>/ folder;
- outside src/platform/, src/ includes no header of a hardware or OS
  primitive (<atomic>, <thread>, <mutex>, <fstream>, ...): the simulated
  build replaces that layer.

Prints one line per violation (file:line: the include and the rule) and exits
1 if there is any, 0 otherwise. Run from anywhere; paths are from the repo root.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')

#: Headers of the engine's seams that engine/ may include from cc/ and workload/.
REGISTRY_HEADERS = {
    "cc/registry.h", "cc/schemes.h", "cc/traits.h", "cc/scheme.h",
    "workload/registry.h", "workload/workloads.h", "workload/traits.h",
}

#: Standard headers that are hardware or OS primitives.
PRIMITIVE_HEADERS = {
    "atomic", "thread", "mutex", "shared_mutex", "condition_variable", "semaphore", "barrier", "latch",
    "stop_token", "future", "fstream", "filesystem", "pthread.h", "unistd.h", "fcntl.h", "sys/stat.h",
    "sys/socket.h", "sys/mman.h", "sched.h", "x86intrin.h", "immintrin.h",
}


def violations(path: Path, text: str) -> list[str]:
    rel = path.relative_to(ROOT).as_posix()
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        quote, name = m.groups()
        where = f"{rel}:{n}: #include {quote}{name}{'>' if quote == '<' else quote}"
        if quote == '"':
            if rel.startswith("apps/") and name.startswith("platform/"):
                out.append(f"{where}: apps/ must not include platform/ (go through the engine)")
            if rel.startswith("src/common/") and "/" in name and not name.startswith("common/"):
                out.append(f"{where}: common/ includes only common/")
            if rel.startswith("src/engine/") and name not in REGISTRY_HEADERS and (
                    re.match(r"cc/[^/]+/", name) or re.match(r"workload/[^/]+/", name)):
                out.append(f"{where}: engine/ reaches schemes and workloads only through their registries")
        elif rel.startswith("src/") and not rel.startswith("src/platform/") and name in PRIMITIVE_HEADERS:
            out.append(f"{where}: a hardware or OS primitive outside src/platform/")
    return out


def main() -> int:
    found = []
    for folder in ("src", "apps"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".h", ".cc"):
                found += violations(path, path.read_text())
    for v in found:
        print(v)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
