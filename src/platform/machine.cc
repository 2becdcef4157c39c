#include "platform/machine.h"

#include <stdexcept>

#include "platform/thread.h"

namespace abyss::platform {

std::string use_machine(uint32_t cores, const std::string& /*topology*/) {
  if (cores == 0) return {};
  return "--sim-cores runs on the simulated build; this binary runs on this machine's cores "
         "(./abyss run --sim-cores N builds and uses the simulated one)";
}

bool has_hardware_counter() { return false; }

uint64_t hardware_counter_next() {
  throw std::logic_error("this machine has no hardware timestamp counter (--ts-alloc hw is checked before a run)");
}

MachineInfo machine_info() { return {"native", "", "", hardware_cores(), 0}; }

std::vector<std::pair<std::string, uint64_t>> machine_counters() { return {}; }

}  // namespace abyss::platform
