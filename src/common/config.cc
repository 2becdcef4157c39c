#include "common/config.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace abyss {

std::string Config::validate() const {
  const auto& y = ycsb;
  if (workload == WorkloadKind::Ycsb) {
    if (y.req_per_txn > y.rows) {
      return "--req-per-txn " + std::to_string(y.req_per_txn) + ": must be at most --rows (" + std::to_string(y.rows) +
             ") because a transaction's keys are distinct";
    }
    if (y.partitions > y.rows) {
      return "--partitions " + std::to_string(y.partitions) + ": must be at most --rows (" + std::to_string(y.rows) +
             ")";
    }
    if (y.parts_per_txn > y.partitions) {
      return "--parts-per-txn " + std::to_string(y.parts_per_txn) + ": must be at most --partitions (" +
             std::to_string(y.partitions) + ")";
    }
    if (y.parts_per_txn > y.req_per_txn) {
      return "--parts-per-txn " + std::to_string(y.parts_per_txn) + ": must be at most --req-per-txn (" +
             std::to_string(y.req_per_txn) + ")";
    }
    if (static_cast<uint64_t>(y.req_per_txn) * y.partitions > y.rows) {
      return "--req-per-txn " + std::to_string(y.req_per_txn) + ": with --partitions " + std::to_string(y.partitions) +
             " each partition needs at least that many rows (--rows " + std::to_string(y.rows) + ")";
    }
  }
  return {};
}

std::string Config::hash() const {
  const std::string text = to_json().dump();  // keys are sorted: canonical
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace abyss
