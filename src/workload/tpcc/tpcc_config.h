#pragma once
// TPC-C knobs (TPC-C rev 5.11, as Abyss §5.6 and Tale §4.2-4.3 run it). Kept
// apart from config.h so the TPC-C flag parsing lives with its own type.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "workload/materialize.h"

namespace abyss {

// full: the spec's cardinalities (clause 4.3.3.1). small: DBx1000's reduced
// database that the Abyss simulations used (10,000 items, 2,000 customers per
// district), with the same columns so dumps and checks read alike.
enum class TpccSchema : uint8_t { Full, Small };
inline constexpr std::array<std::string_view, 2> kTpccSchemaNames = {"full", "small"};

// The transaction types a TPC-C mix can name (clauses 2.4-2.8), in the order
// of Tpcc::kTypeNames.
inline constexpr std::array<std::string_view, 5> kTpccTxnNames = {"neworder", "payment", "delivery", "orderstatus",
                                                                  "stocklevel"};
using TpccMix = std::array<uint32_t, kTpccTxnNames.size()>;

struct TpccConfig {
  uint32_t warehouses = 1;  // 1..kMaxWarehouses (tpcc_schema.h)
  TpccSchema schema = TpccSchema::Full;
  bool inserts = true;              // off: DBx1000's insert-less variant (Tale §4.3)
  TpccMix mix = {45, 43, 4, 4, 4};  // percent per kTpccTxnNames entry; sums to 100 (clause 5.2.3)
  // Queried: the load makes WAREHOUSE, DISTRICT, ITEM and the last-name
  // index whole, and of CUSTOMER and STOCK only the rows the workers'
  // queries name, the same rows a whole load makes (each is drawn from its
  // own random stream); no initial ORDER, NEW-ORDER, ORDER-LINE or HISTORY
  // row, so only NewOrder and Payment can run.
  Materialize materialize = Materialize::All;
  // A copy of ITEM (the read-only table every NewOrder line reads) on each
  // memory node, each worker reading its own node's (Tale §4.3: ITEM
  // replicated per NUMA node); off: one ITEM wherever its pages land.
  bool replicate_item = false;

  // Whether a transaction of the mix reads a key range (Delivery,
  // Order-Status, Stock-Level): ORDER, NEW-ORDER and ORDER-LINE then have
  // ordered indexes; for NewOrder and Payment alone, hash indexes, as the
  // papers ran them.
  bool scans() const { return mix[2] + mix[3] + mix[4] > 0; }

  // Per-warehouse and per-district cardinalities of the chosen schema.
  uint32_t items() const { return schema == TpccSchema::Full ? 100'000 : 10'000; }
  uint32_t customers_per_district() const { return schema == TpccSchema::Full ? 3'000 : 2'000; }
};

// Parses "neworder=45,payment=43,delivery=4,..." into `mix` (names missing
// from the text get 0). Returns an error line naming the value and what is
// allowed, empty on success.
std::string parse_tpcc_mix(const std::string& text, TpccMix& mix);

// The canonical text of a mix: every name with a share, in kTpccTxnNames
// order ("neworder=50,payment=50").
std::string tpcc_mix_string(const TpccMix& mix);

}  // namespace abyss
