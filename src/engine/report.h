#pragma once
// A run's report: a readable table for people and JSON for tools (docs/architecture.md,
// "One run"; docs/metrics.md defines every number).
#include <cstdio>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "engine/result.h"

namespace abyss {

// Config, config hash, git revision, build type, CPU model and all results.
nlohmann::json report_json(const RunResult& r);

// Writes report_json(r) to `path` through the platform's files; returns
// "cannot write PATH: <the OS's reason>", or empty.
std::string write_report_json(const RunResult& r, const std::string& path);

void print_report(const RunResult& r, std::FILE* out);

}  // namespace abyss
