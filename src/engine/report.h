#pragma once
// A run's report: a readable table for people and JSON for tools (docs/architecture.md,
// "Measurements"; docs/metrics.md defines every number).
#include <cstdio>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "engine/result.h"

namespace abyss {

// Config, config hash, git revision, build type, CPU model and all results.
nlohmann::json report_json(const RunResult& r);

void print_report(const RunResult& r, std::FILE* out);

}  // namespace abyss
