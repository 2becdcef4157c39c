#pragma once
// One run: build the database for the configured scheme and workload, load,
// warm up, measure, and report. The scheme is picked here, once, by a switch
// that instantiates the whole run for it (docs/architecture.md, "The scheme seam").
#include <cstdint>
#include <string>

#include "common/config.h"
#include "engine/result.h"

namespace abyss {

// Throws std::runtime_error on a failure at run time (exit code 1), and
// std::invalid_argument when check_machine, check_window or check_isolation refuses the configuration.
RunResult run(const Config& config);

// Sets up the machine the run executes on (this one, or --sim-cores
// simulated cores of --topology, docs/many-core.md); answers what is wrong
// with the request, empty when it is set up.
std::string check_machine(const Config& config);

// Whether the window the configuration asks for can be kept (a rule-sized
// window takes no samples, and its cap holds at least one window); answers
// what is wrong, empty when it can.
std::string check_window(const Config& config);

// Whether the configured scheme offers --isolation's level: every scheme is
// serializable; a weaker level needs one that keeps versions
// (SchemeTraits::weaker_isolation). A weaker level, and a scheme that orders
// commits by timestamp (SchemeTraits::commit_timestamps), need timestamps
// that grow with time across workers. Answers what is wrong, empty when all
// hold.
std::string check_isolation(const Config& config);

// The resident bytes the configuration's load and workers take under its
// scheme, from the structures' own sizes (storage/footprint.h), so a run the
// machine cannot hold is refused before anything is allocated.
uint64_t estimate_bytes(const Config& config);

// "needs X GiB, this machine has Y GiB available" when estimate_bytes exceeds
// the memory this process can still take; empty when the run fits.
std::string memory_shortfall(const Config& config);

// A line when the run's workers outnumber the idle cores (cores minus the
// load average), else empty: the measurement then includes preemption.
std::string oversubscription_note(const Config& config);

}  // namespace abyss
