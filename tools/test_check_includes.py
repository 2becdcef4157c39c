"""The include checker catches each rule it states (its negative controls)."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import pytest

spec = importlib.util.spec_from_file_location("check_includes", Path(__file__).with_name("check_includes.py"))
check_includes = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = check_includes  # dataclasses look their module up there
spec.loader.exec_module(check_includes)
ROOT = check_includes.ROOT
LAYERS = check_includes.LAYERS


def found(rel: str, text: str) -> list[str]:
    return check_includes.violations(ROOT / rel, text)


def tree(root: Path, files: dict[str, str]) -> list[str]:
    """The violations the checker reports in a source tree made of `files` (path -> text)."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return check_includes.include_violations(root)


def source(folder: str) -> str:
    return "apps/x.cc" if folder == "apps" else f"src/{folder}/x.h"


def test_the_repository_passes() -> None:
    assert check_includes.check() == []


def test_no_include_runs_sideways_or_up() -> None:
    _, directions = check_includes.graph()
    assert directions["down"] > 0
    assert directions["beside"] == 0 and directions["up"] == 0


def test_each_rule_is_caught() -> None:
    assert found("apps/x.cc", '#include "platform/thread.h"\n')
    assert found("src/common/x.h", '#include "platform/latch.h"\n')
    assert found("src/common/config.h", '#include "workload/ycsb/ycsb_config.h"\n')
    assert found("src/engine/x.cc", '#include "cc/silo/silo.h"\n')
    assert found("src/engine/x.cc", '#include "workload/tpcc/tpcc.h"\n')
    assert found("src/txn/x.cc", "#include <atomic>\n")
    assert found("src/storage/x.cc", "#include <fstream>\n")


def test_the_layer_rules_are_caught() -> None:
    assert found("src/txn/txn.h", '#include "cc/traits.h"\n')  # up
    assert found("src/index/index.h", '#include "storage/row.h"\n')  # up: index sits below storage
    assert found("src/embed/store.cc", '#include "engine/engine.h"\n')  # of the engine, its run set-up only
    assert found("src/check/history.cc", '#include "engine/knobs.h"\n')  # beside
    assert found("src/workload/x.h", '#include "log/logger.h"\n')  # below, but not in its row
    assert found("src/cc/x.h", '#include "storage/table.h"\n')  # a folder reached through one header
    assert found("src/platform/x.h", '#include "common/config.h"\n')
    assert found("src/newfolder/x.h", '#include "common/types.h"\n')  # a folder the table lacks
    assert found("src/txn/x.h", '#include "gtest/gtest.h"\n')  # not a folder of src/


def test_every_include_a_row_leaves_out_is_caught(tmp_path: Path) -> None:
    """From the table itself: each folder including one header of every other folder, or one beside a seam."""
    files, expected = {}, 0
    for layer in LAYERS:
        lines = []
        for other in LAYERS:
            if other.folder == layer.folder:
                continue
            headers = [e for e in layer.may_include if e.startswith(other.folder + "/")]
            if other.folder not in layer.may_include:
                lines.append(f'#include "{other.folder}/not_a_seam.h"')
                expected += 1
            for header in headers:
                lines.append(f'#include "{header}"')
        files[source(layer.folder)] = "\n".join(lines) + "\n"
    reported = tree(tmp_path, files)
    assert len(reported) == expected
    assert all("not_a_seam.h" in v for v in reported)


def test_what_a_row_allows_passes(tmp_path: Path) -> None:
    files = {}
    for layer in LAYERS:
        lines = [f'#include "{e}"' if "/" in e else f'#include "{e}/x.h"' for e in layer.may_include]
        files[source(layer.folder)] = "\n".join(lines + [f'#include "{layer.folder}/y.h"', "#include <vector>"]) + "\n"
    assert tree(tmp_path, files) == []


def test_new_txn_and_engine_headers_fit() -> None:
    assert not found("src/txn/attempts.h", '#include "txn/txn.h"\n#include "common/types.h"\n#include "platform/clock.h"\n')
    assert not found("src/txn/worker_set.h", '#include "txn/worker.h"\n#include "platform/thread.h"\n')
    assert not found("src/engine/run_context.h", '#include "txn/attempts.h"\n#include "log/logger.h"\n')
    assert not found("src/server/server.cc", '#include "engine/run_context.h"\n')
    assert not found("src/embed/store.cc", '#include "engine/run_context.h"\n')


def test_allowed_includes_pass() -> None:
    assert not found("src/engine/x.cc", '#include "cc/registry.h"\n#include "workload/registry.h"\n')
    assert not found("src/platform/x.cc", "#include <atomic>\n#include <thread>\n")
    assert not found("apps/x.cc", '#include "engine/engine.h"\n#include <cstdio>\n')
    assert not found("src/cc/silo/silo.h", '#include "platform/atomic.h"\n')
    assert not found("src/cc/common/wait.h", '#include "cc/lock/row_lock.h"\n')
    assert not found("src/common/config.h", '#include "common/settings.h"\n#include "abyss_git_rev.h"\n')


def with_row(folder: str, **change) -> tuple:
    return tuple(dataclasses.replace(layer, **change) if layer.folder == folder else layer for layer in LAYERS)


@pytest.mark.parametrize("folder, may_include", [
    ("txn", ("cc",)),  # up
    ("embed", ("server",)),  # beside
    ("apps", ("platform",)),  # never
    ("index", ("nowhere",)),  # not a folder of the table
    ("cc", ("storage/no_such_header.h",)),  # not a file
])
def test_a_table_that_breaks_the_layers_is_refused(folder: str, may_include: tuple) -> None:
    assert check_includes.table_errors(with_row(folder, may_include=may_include))


def test_the_doc_table_must_match() -> None:
    text = (ROOT / check_includes.DOC).read_text()
    assert check_includes.doc_errors(text) == []
    txn_cell = check_includes.render(check_includes.BY_FOLDER["txn"])
    assert check_includes.doc_errors(text.replace(f"| {txn_cell} |", f"| cc, {txn_cell} |"))
    without_stats = "\n".join(line for line in text.splitlines() if not line.startswith("| `src/stats/`"))
    assert check_includes.doc_errors(without_stats)
    assert check_includes.doc_errors(text, with_row("txn", may_include=("storage",)))
