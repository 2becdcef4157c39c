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

nlohmann::json Config::to_json() const {
  nlohmann::json j;
  j["workload"] = name_of(kWorkloadNames, workload);
  j["cc"] = cc;
  j["threads"] = threads;
  j["duration_s"] = duration_s;
  j["warmup_s"] = warmup_s;
  j["pin"] = pin;
  j["seed"] = seed;
  j["queries_per_worker"] = queries_per_worker;
  j["ts_alloc"] = ts_alloc.to_string();
  j["latch"] = name_of(kLatchNames, latch);
  j["backoff"] = name_of(kBackoffNames, backoff);
  j["backoff_max_us"] = backoff_max_us;
  j["dl_timeout_us"] = dl_timeout_us;
  j["dl_detect"] = dl_detect;
  if (workload == WorkloadKind::Ycsb) {
    j["ycsb"] = {{"rows", ycsb.rows},
                 {"req_per_txn", ycsb.req_per_txn},
                 {"theta", ycsb.theta},
                 {"write_ratio", ycsb.write_ratio},
                 {"read_only_txn_ratio", ycsb.read_only_txn_ratio},
                 {"partitions", ycsb.partitions},
                 {"multi_part_ratio", ycsb.multi_part_ratio},
                 {"parts_per_txn", ycsb.parts_per_txn},
                 {"key_order", name_of(kKeyOrderNames, ycsb.key_order)},
                 {"fields", ycsb.fields},
                 {"field_size", ycsb.field_size}};
  }
  if (workload == WorkloadKind::Tpcc) {
    j["tpcc"] = {{"warehouses", tpcc.warehouses},
                 {"schema", name_of(kTpccSchemaNames, tpcc.schema)},
                 {"inserts", tpcc.inserts},
                 {"mix", tpcc_mix_string(tpcc.mix)}};
  }
  return j;
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
