"""The papers' experiments by name: the specs under harness/specs/.

A spec with a `figure` key is a paper experiment and is listed by
`abyss reproduce --list`; others (the demo) can still be run by name with
`abyss sweep NAME`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from . import engine, grid
from .spec import Spec, SpecError, load_spec


def specs_dir() -> Path:
    """harness/specs of the checkout (the package is installed in editable mode)."""
    here = Path(__file__).resolve().parent.parent / "specs"
    return here if here.is_dir() else engine.repo_root() / "harness" / "specs"


def spec_paths() -> dict[str, Path]:
    """Every packaged spec file by name (the file stem equals the spec's name)."""
    def natural(p: Path) -> list:
        return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.stem)]
    return {p.stem: p for p in sorted(specs_dir().glob("*.toml"), key=natural)}


def resolve(name_or_path: str) -> Path:
    """A spec argument: an existing file, or the name of a packaged spec."""
    p = Path(name_or_path)
    if p.is_file():
        return p
    paths = spec_paths()
    if name_or_path in paths:
        return paths[name_or_path]
    import difflib

    close = difflib.get_close_matches(name_or_path, list(paths), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise SpecError(f"{name_or_path}: no such spec file or experiment name{hint}; "
                    "see ./abyss reproduce --list")


@dataclass
class Entry:
    name: str
    figure: str
    title: str
    description: str
    runs: int
    seconds: float
    sim: str | None = None     # the topology of its [sim] section; None: it cannot run with --sim


def catalogue(*, full_scale: bool = False, cores: int | None = None, sim: bool = False,
              topology: str | None = None) -> list[Entry]:
    """The paper experiments, with their run counts and a rough duration;
    with `sim`, those that have a [sim] section, resolved for it."""
    out = []
    for name, path in spec_paths().items():
        spec = load_spec(path, full_scale=full_scale, cores=cores)
        if not spec.figure or (sim and spec.sim_topology is None):
            continue
        topo = spec.sim_topology
        if sim:
            spec = load_spec(path, cores=cores, sim=True, topology=topology)
        runs = grid.runs(spec)
        out.append(Entry(name=spec.name, figure=spec.figure, title=spec.title,
                         description=spec.description, runs=len(runs),
                         seconds=sum(grid.estimate_seconds(r) for r in runs), sim=topo))
    return out


def load(name: str, *, full_scale: bool = False, cores: int | None = None,
         overrides: dict[str, str] | None = None, sim: bool = False,
         topology: str | None = None) -> Spec:
    return load_spec(resolve(name), full_scale=full_scale, cores=cores, overrides=overrides,
                     sim=sim, topology=topology)
