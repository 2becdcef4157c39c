"""The include checker catches each rule it states (its negative controls)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

spec = importlib.util.spec_from_file_location("check_includes", Path(__file__).with_name("check_includes.py"))
check_includes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_includes)
ROOT = check_includes.ROOT


def found(rel: str, text: str) -> list[str]:
    return check_includes.violations(ROOT / rel, text)


def test_each_rule_is_caught() -> None:
    assert found("apps/x.cc", '#include "platform/thread.h"\n')
    assert found("src/common/x.h", '#include "platform/latch.h"\n')
    assert found("src/common/config.h", '#include "workload/ycsb/ycsb_config.h"\n')
    assert found("src/engine/x.cc", '#include "cc/silo/silo.h"\n')
    assert found("src/engine/x.cc", '#include "workload/tpcc/tpcc.h"\n')
    assert found("src/txn/x.cc", "#include <atomic>\n")
    assert found("src/storage/x.cc", "#include <fstream>\n")


def test_allowed_includes_pass() -> None:
    assert not found("src/engine/x.cc", '#include "cc/registry.h"\n#include "workload/registry.h"\n')
    assert not found("src/platform/x.cc", "#include <atomic>\n#include <thread>\n")
    assert not found("apps/x.cc", '#include "engine/engine.h"\n#include <cstdio>\n')
    assert not found("src/cc/silo/silo.h", '#include "platform/atomic.h"\n')
    assert not found("src/common/config.h", '#include "common/workload_settings.h"\n#include "abyss_git_rev.h"\n')
