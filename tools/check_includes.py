#!/usr/bin/env python3
"""The layer rules of abyss, checked on every #include (docs/architecture.md, "Layers").

LAYERS below is the one statement of the layers: each folder of src/ (and
apps/) has a level, 0 at the top, and a row of what it may include. A folder
includes its own headers, and of the others only those its row names, each
of a lower level, so no include runs sideways or back up. The rows carry the
rules the seams rest on:

- apps/ (the binary) never includes platform/: hardware and OS facts reach it
  through the engine;
- common/ includes nothing of abyss outside common/ (a build-generated header
  aside): the run's configuration is plain data, and each workload's settings
  are held by type, not by include;
- engine/ reaches a scheme or a workload only through the registries, never a
  particular src/cc/<scheme>/ or src/workload/<name>/ folder;
- embed/ takes of the engine only its run set-up (engine/run_context.h),
  so a store is set up as a run is, and drives txn/ itself;
- index/ sits below storage/: a table holds its indexes, an index knows a
  row only as an opaque pointer.

Beside the table, outside src/platform/, src/ includes no header of a
hardware or OS primitive (<atomic>, <thread>, <mutex>, <fstream>, ...): the
simulated build replaces that layer.

The "What it may include" column of docs/architecture.md's table is this
table written out (--doc prints it); the check fails if the two differ.

  check_includes.py          one line per violation (file:line: the include and
                             the rule); exit 1 if there is any, 0 otherwise
  check_includes.py --graph  the layers and what each folder includes today,
                             with a closing count of includes that go up
  check_includes.py --doc    the doc table's last column, one line per folder

Run from anywhere; paths are from the repo root.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = "docs/architecture.md"
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


@dataclass(frozen=True)
class Layer:
    folder: str  # "apps" (the binary's folder), else a folder of src/
    level: int  # 0 at the top; a folder includes only folders of a greater level
    may_include: tuple[str, ...]  # folders (any header in them) or headers ("cc/registry.h")
    note: str = ""  # said after the list in the doc's table


#: The seam headers through which the engine reaches a scheme or a workload.
CC_SEAM = ("cc/registry.h", "cc/schemes.h", "cc/scheme.h", "cc/traits.h")
WORKLOAD_SEAM = ("workload/registry.h", "workload/workloads.h", "workload/traits.h")

#: Top to bottom. Folders of one level sit beside each other and include none of each other.
LAYERS: tuple[Layer, ...] = (
    Layer("apps", 0, ("server", "engine", "bench", "check", "workload/workloads.h", "workload/kv/kv.h", "cc/schemes.h", "common"),
          "never platform; CLI11 from outside"),
    Layer("embed", 1, ("engine/run_context.h", "cc/registry.h", "cc/schemes.h", "txn", "storage", "common", "platform"),
          "of the engine only its run set-up"),
    Layer("server", 1, ("engine", "workload/kv/kv.h", "cc/registry.h", "txn", "log", "storage", "stats", "common",
                        "platform")),
    Layer("engine", 2, (*CC_SEAM, *WORKLOAD_SEAM, "txn", "log", "storage", "index", "stats", "common", "platform"),
          "a scheme or a workload only through these seams"),

    Layer("bench", 2, ("storage", "index", "common", "platform")),
    Layer("check", 2, ("storage/schema.h", "workload/tpcc/tpcc_schema.h", "platform")),
    Layer("workload", 3, ("txn", "storage", "stats", "common", "platform")),
    Layer("cc", 4, ("txn", "storage/row.h", "stats", "common", "platform")),
    Layer("txn", 5, ("log", "storage", "stats", "common", "platform")),
    Layer("log", 6, ("common", "platform")),
    Layer("storage", 6, ("index", "common", "platform")),
    Layer("index", 7, ("common", "platform")),
    Layer("stats", 7, ("common/types.h",)),
    Layer("platform", 8, ("common/latch_kind.h",), "the standard library and the OS"),
    Layer("common", 9, ()),
)
BY_FOLDER = {layer.folder: layer for layer in LAYERS}

#: Includes that no row may allow, whatever the levels say, and why.
NEVER = {
    ("apps", "platform"): "apps/ must not include platform/ (go through the engine)",
    ("common", None): "common/ includes only common/",
}

#: Standard headers that are hardware or OS primitives.
PRIMITIVE_HEADERS = {
    "atomic", "thread", "mutex", "shared_mutex", "condition_variable", "semaphore", "barrier", "latch",
    "stop_token", "future", "fstream", "filesystem", "pthread.h", "unistd.h", "fcntl.h", "sys/stat.h",
    "sys/socket.h", "sys/mman.h", "sched.h", "x86intrin.h", "immintrin.h",
}


def folder_of(rel: str) -> str | None:
    """The layer folder of a repo-relative source path: apps/x.cc -> apps, src/txn/x.h -> txn."""
    parts = rel.split("/")
    if parts[0] == "apps":
        return "apps"
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    return None


def allows(layer: Layer, name: str) -> bool:
    """Whether `layer` may include the header `name` ("txn/txn.h"), another folder's."""
    target = name.split("/")[0]
    return any(entry == target or entry == name for entry in layer.may_include)


def never(folder: str, target: str) -> str | None:
    return NEVER.get((folder, target)) or NEVER.get((folder, None))


def table_errors(layers: tuple[Layer, ...] = LAYERS, root: Path = ROOT) -> list[str]:
    """What is wrong with the table itself: an entry that is not below its row, or one NEVER forbids."""
    by_folder = {layer.folder: layer for layer in layers}
    out = []
    for layer in layers:
        for entry in layer.may_include:
            target = entry.split("/")[0]
            where = f"{Path(__file__).name}: {layer.folder} may include {entry}"
            if target not in by_folder:
                out.append(f"{where}: {target} is not a folder of the table")
            elif by_folder[target].level <= layer.level:
                out.append(f"{where}: {target} is not below {layer.folder} (levels {by_folder[target].level} "
                           f"and {layer.level})")
            elif never(layer.folder, target):
                out.append(f"{where}: {never(layer.folder, target)}")
            elif "/" in entry and not (root / "src" / entry).is_file():
                out.append(f"{where}: src/{entry} does not exist")
    return out


def violations(path: Path, text: str, root: Path = ROOT) -> list[str]:
    rel = path.relative_to(root).as_posix()
    folder = folder_of(rel)
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        quote, name = m.groups()
        where = f"{rel}:{n}: #include {quote}{name}{'>' if quote == '<' else quote}"
        if quote == "<":
            if rel.startswith("src/") and not rel.startswith("src/platform/") and name in PRIMITIVE_HEADERS:
                out.append(f"{where}: a hardware or OS primitive outside src/platform/")
            continue
        if "/" not in name:
            continue  # a header of the same folder, or one the build generates
        target = name.split("/")[0]
        if folder not in BY_FOLDER:
            out.append(f"{where}: {rel.rsplit('/', 1)[0]}/ is not a folder of the layer table")
            continue
        if target == folder:
            continue
        layer = BY_FOLDER[folder]
        if target not in BY_FOLDER:
            out.append(f"{where}: {target}/ is not a folder of the layer table (other code is included with <...>)")
        elif allows(layer, name):
            continue
        elif never(folder, target):
            out.append(f"{where}: {never(folder, target)}")
        elif BY_FOLDER[target].level <= layer.level:
            side = "above" if BY_FOLDER[target].level < layer.level else "beside"
            out.append(f"{where}: {target}/ is {side} {folder}/ in the layer table")
        elif headers := [e for e in layer.may_include if e.startswith(target + "/")]:
            out.append(f"{where}: {folder}/ reaches {target}/ only through {', '.join(headers)}")
        else:
            out.append(f"{where}: {folder}/'s row in the layer table does not include {target}/")
    return out


def render(layer: Layer) -> str:
    """The doc table's "What it may include" cell for `layer`."""
    groups: dict[str, list[str]] = {}
    for entry in layer.may_include:
        target, _, header = entry.partition("/")
        groups.setdefault(target, [])
        if header:
            groups[target].append(f"`{header}`")
    parts = [f"{t} ({', '.join(h)})" if h else t for t, h in groups.items()]
    text = ", ".join(parts) if parts else "nothing of abyss"
    return f"{text}; {layer.note}" if layer.note else text


def doc_rows(text: str) -> dict[str, tuple[int, str]]:
    """The layer table of docs/architecture.md: folder -> (line, its last cell)."""
    rows = {}
    for n, line in enumerate(text.splitlines(), 1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) != 3:
            continue
        for path in re.findall(r"`([^`]+/)`", cells[0]):
            folder = folder_of(path + "x")
            if folder is not None:
                rows[folder] = (n, cells[2])
    return rows


def doc_errors(text: str, layers: tuple[Layer, ...] = LAYERS) -> list[str]:
    rows = doc_rows(text)
    out = []
    for layer in layers:
        if layer.folder not in rows:
            out.append(f"{DOC}: the layer table has no row for {layer.folder}/ (--doc prints its cells)")
            continue
        n, cell = rows[layer.folder]
        if cell != render(layer):
            out.append(f"{DOC}:{n}: {layer.folder}/ may include \"{cell}\", but {Path(__file__).name} says "
                       f"\"{render(layer)}\"")
    return out


def sources(root: Path) -> list[Path]:
    return [p for folder in ("src", "apps") for p in sorted((root / folder).rglob("*")) if p.suffix in (".h", ".cc")]


def include_violations(root: Path = ROOT) -> list[str]:
    return [v for path in sources(root) for v in violations(path, path.read_text(), root)]


def check(root: Path = ROOT) -> list[str]:
    """Everything the default mode reports: the table's own errors, the includes, the doc's table."""
    found = table_errors(root=root) + include_violations(root)
    doc = root / DOC
    if doc.is_file():
        found += doc_errors(doc.read_text())
    return found


def graph(root: Path = ROOT) -> tuple[list[str], Counter]:
    """The layers, each with the folders it includes today and how often; and the includes by direction."""
    edges: dict[str, Counter] = {layer.folder: Counter() for layer in LAYERS}
    directions: Counter = Counter()
    for path in sources(root):
        folder = folder_of(path.relative_to(root).as_posix())
        for line in path.read_text().splitlines():
            m = INCLUDE.match(line)
            if not m or m.group(1) != '"' or "/" not in m.group(2):
                continue
            target = m.group(2).split("/")[0]
            if target == folder or folder not in BY_FOLDER or target not in BY_FOLDER:
                continue
            edges[folder][target] += 1
            lf, lt = BY_FOLDER[folder].level, BY_FOLDER[target].level
            directions["down" if lt > lf else "beside" if lt == lf else "up"] += 1
    lines = ["level  folder    includes (folder:its level x how many), every one below it"]
    for layer in LAYERS:
        out = sorted(edges[layer.folder].items(), key=lambda e: (BY_FOLDER[e[0]].level, e[0]))
        listed = "  ".join(f"{t}:{BY_FOLDER[t].level} x{c}" for t, c in out) or "nothing of abyss"
        lines.append(f"{layer.level:>5}  {layer.folder:<8}  {listed}")
    return lines, directions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--graph", action="store_true", help="print the layers and the includes between folders")
    mode.add_argument("--doc", action="store_true", help=f"print the last column of {DOC}'s layer table")
    args = parser.parse_args()
    if args.doc:
        for layer in LAYERS:
            print(f"{layer.folder}: {render(layer)}")
        return 0
    found = check()
    if args.graph:
        lines, directions = graph()
        print("\n".join(lines))
        print(f"{sum(directions.values())} includes between folders: {directions['down']} down, "
              f"{directions['beside']} beside, {directions['up']} up; {len(found)} violations")
    for v in found:
        print(v)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
