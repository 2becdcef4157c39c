#pragma once
// YCSB's settings (Abyss §3.3), one knob row each (Ycsb::knobs in ycsb.cc);
// a run's are Config::settings<YcsbConfig>().
#include <array>
#include <cstdint>
#include <string_view>

#include "common/storage_options.h"
#include "workload/materialize.h"

namespace abyss {

enum class KeyOrder : uint8_t { Random, Sorted };
inline constexpr std::array<std::string_view, 2> kKeyOrderNames = {"random", "sorted"};

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
  IndexType primary_index = IndexType::Hash;  // the table's: hash, or the ordered B+-tree
  Materialize materialize = Materialize::All;
  // YCSB-E (Cooper et al. §4.1, workload E): an access is a short range scan
  // with probability scan_ratio, an insert of a new key with probability
  // insert_ratio, else a read or update as above.
  double scan_ratio = 0.0;
  double insert_ratio = 0.0;
  uint32_t max_scan_length = 100;  // a scan visits up to 1..max_scan_length rows, uniform
  // Long readers: a transaction is, with probability long_reader_ratio, a
  // read-only one of long_reader_rows consecutive keys from a uniform start
  // (wrapping past the last), the case multi-version schemes are built for.
  double long_reader_ratio = 0.0;
  uint64_t long_reader_rows = 1000;
  // A hot spot (Bamboo's synthetic hot-spot workload, Guo et al. §5.2): the
  // hotspot_position-th access of every read-write transaction updates one
  // hot row, the first key of its partition; 0: none.
  uint32_t hotspot_position = 0;
};

}  // namespace abyss
