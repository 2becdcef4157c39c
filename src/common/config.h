#pragma once
// The run's configuration: every experiment knob is a field here with a
// validated range (engine/knobs.cc). It is built once by the CLI and passed down.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "common/platform_choices.h"
#include "common/tpcc_config.h"

namespace abyss {

enum class BackoffKind : uint8_t { None, Exp };
inline constexpr std::array<std::string_view, 2> kBackoffNames = {"none", "exp"};

enum class KeyOrder : uint8_t { Random, Sorted };
inline constexpr std::array<std::string_view, 2> kKeyOrderNames = {"random", "sorted"};

template <std::size_t N>
std::string_view name_of(const std::array<std::string_view, N>& names, auto value) {
  return names[static_cast<std::size_t>(value)];
}

struct YcsbConfig {
  uint64_t rows = 1 << 20;           // Abyss §3.3 used 20 M; this default loads in about a second
  uint32_t req_per_txn = 16;         // Abyss §3.3
  double theta = 0.0;                // Zipf skew, [0, 1)
  double write_ratio = 0.5;          // per access
  double read_only_txn_ratio = 0.0;  // fraction of transactions with no writes
  uint32_t partitions = 1;
  double multi_part_ratio = 0.0;
  uint32_t parts_per_txn = 1;
  KeyOrder key_order = KeyOrder::Random;
  uint32_t fields = 10;
  uint32_t field_size = 100;
};

struct Config {
  std::string workload = "ycsb";  // a registered workload's name (workload/registry.h)
  std::string cc = "no_wait";     // a registered scheme's name (cc/registry.h)
  uint32_t threads = 1;
  double duration_s = 1.0;
  double warmup_s = 0.2;
  bool pin = false;
  uint64_t seed = 1;
  uint32_t queries_per_worker = 4096;  // pre-generated, served round-robin (Abyss §3.2)

  TsAllocConfig ts_alloc{};
  LatchKind latch = LatchKind::Spin;
  BackoffKind backoff = BackoffKind::Exp;
  uint32_t backoff_base_ns = 1000;  // bound after the first abort, doubled per abort (Tale §5)
  uint32_t backoff_max_us = 100;

  uint32_t dl_timeout_us = 100;  // Abyss §4.2
  bool dl_detect = true;
  uint32_t dl_detect_every = 64;  // spins of a waiter between cycle searches
  uint32_t dl_max_edges = 32;     // waits-for edges a waiter publishes; more are dropped

  uint32_t mvcc_refresh_every = 32;  // begins between low-water-mark recomputations
  uint32_t silo_epoch_ms = 40;       // Silo §4.1

  YcsbConfig ycsb{};
  TpccConfig tpcc{};

  std::string history_path;  // empty: no history log
  std::string dump_dir;      // empty: no dump
  std::string json_path;     // empty: no JSON report
  bool memory_check = true;  // refuse a load the machine cannot hold (engine/engine.h estimate_bytes)

  // How many partitions the workload is split into (H-STORE locks them).
  // TPC-C: one partition per warehouse (Abyss §5.6).
  uint32_t partition_count() const { return workload == "tpcc" ? tpcc.warehouses : ycsb.partitions; }

  // Every knob that applies to the workload (not the output paths), under
  // the JSON keys of the knob table, which defines it (engine/knobs.cc).
  nlohmann::json to_json() const;
  // FNV-1a of the canonical JSON of to_json(): joins runs of one configuration.
  std::string hash() const;
};

}  // namespace abyss
