#pragma once
// A run's report: a readable table for people and JSON for tools (docs/architecture.md,
// "One run"; docs/metrics.md defines every number).
#include <cstdio>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "engine/result.h"

namespace abyss {

// The layout of report_json, raised when a key changes meaning or goes away
// (docs/metrics.md, "The JSON report"): 2 added the samples and the
// provenance (date, command line, host, kernel, compiler, CPU clock).
inline constexpr int kReportSchemaVersion = 2;

// Schema version, config, config hash, provenance and all results.
nlohmann::json report_json(const RunResult& r);

// Writes report_json(r) to `path` through the platform's files, and the
// samples, if any, as CSV to samples_csv_path(path); returns
// "cannot write PATH: <the OS's reason>", or empty.
std::string write_report_json(const RunResult& r, const std::string& path);

// Where the samples' CSV goes beside a JSON report: run.json -> run.samples.csv.
std::string samples_csv_path(const std::string& json_path);

// The samples as CSV: a header line, then one line per interval
// (docs/metrics.md, "Samples").
std::string samples_csv(const RunResult& r);

void print_report(const RunResult& r, std::FILE* out);

}  // namespace abyss
