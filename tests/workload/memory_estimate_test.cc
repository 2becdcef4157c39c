// The load-size estimates (Ycsb/Tpcc::estimate_load_bytes) that let a run be
// refused before any work: they agree with the structures load() builds, grow
// linearly with rows, warehouses and field size, and stay within the bounds
// the row layout implies. Sizes only, no timing.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdint>
#include <fstream>
#include <new>
#include <string>

#include "common/config.h"
#include "index/hash_index.h"
#include "index/ordered_index.h"
#include "platform/process.h"
#include "storage/database.h"
#include "storage/footprint.h"
#include "workload/tpcc/tpcc.h"
#include "workload/tpcc/tpcc_config.h"
#include "workload/ycsb/ycsb.h"
#include "workload/ycsb/ycsb_config.h"

namespace abyss {
namespace {

struct Meta {
  uint64_t word;
};
void init_meta(void* m) { new (m) Meta(); }
constexpr std::size_t kMeta = sizeof(Meta);
constexpr std::size_t kAlign = alignof(Meta);

// The layout the bound checks below are written for: a node per key, an
// 8-byte bucket head per key, blocks on small pages.
constexpr StorageOptions kChainedSmall{IndexKind::Chained, false};

Config ycsb_config(uint64_t rows, uint32_t fields, uint32_t field_size, StorageOptions storage = kChainedSmall) {
  Config cfg;
  cfg.storage = storage;
  cfg.settings<YcsbConfig>().rows = rows;
  cfg.settings<YcsbConfig>().fields = fields;
  cfg.settings<YcsbConfig>().field_size = field_size;
  return cfg;
}

Config tpcc_config(uint32_t warehouses, TpccSchema schema, StorageOptions storage = kChainedSmall) {
  Config cfg;
  cfg.storage = storage;
  cfg.workload = "tpcc";
  cfg.settings<TpccConfig>().warehouses = warehouses;
  cfg.settings<TpccConfig>().schema = schema;
  return cfg;
}

// What a loaded database holds: row blocks, index buckets and index nodes.
uint64_t built_bytes(const Database& db) {
  uint64_t bytes = 0;
  for (const auto& t : db.tables()) {
    bytes += t->reserved_bytes();
    if (const HashIndex* h = t->index().hash()) {
      bytes += h->bucket_bytes() + h->nodes() * sizeof(HashIndex::Node);
    } else {
      bytes += t->index().ordered()->nodes() * sizeof(OrderedIndex::Leaf);
    }
  }
  return bytes;
}

// YCSB loaded by `loaders` threads: what it built, and what was estimated.
struct Loaded {
  uint64_t built;
  uint64_t estimate;
};
Loaded load_ycsb(const Config& cfg, uint32_t loaders) {
  Database db(RowLayout::for_meta(kMeta, kAlign), cfg.storage);
  Ycsb ycsb(cfg);
  ycsb.load(db, loaders, init_meta);
  return {built_bytes(db), Ycsb::estimate_load_bytes(cfg, kMeta, kAlign, loaders)};
}

TEST(MemoryEstimate, YcsbMatchesTheLoadedStructures) {
  for (const uint32_t loaders : {1u, 3u}) {
    const auto [built, estimate] = load_ycsb(ycsb_config(50'000, 4, 30), loaders);
    // The estimate adds only page rounding: each loader's last node page.
    EXPECT_GE(estimate, built) << loaders << " loaders";
    EXPECT_LE(estimate, built + 64 * footprint::kPage) << loaders << " loaders";
  }
}

TEST(MemoryEstimate, YcsbOnFlatIndexAndHugePagesBoundsTheLoadedStructures) {
  for (const uint32_t loaders : {1u, 3u}) {
    const auto [built, estimate] =
        load_ycsb(ycsb_config(200'000, 4, 30, StorageOptions{IndexKind::Flat, true}), loaders);
    // Flat buckets send a few keys to overflow nodes; the estimate allows a
    // node for a quarter of the keys.
    EXPECT_GE(estimate, built) << loaders << " loaders";
    EXPECT_LE(estimate, built + 200'000 / 4 * sizeof(HashIndex::Node) + 64 * footprint::kPage) << loaders;
  }
}

TEST(MemoryEstimate, YcsbOnTheOrderedIndexBoundsTheLoadedStructures) {
  for (const uint32_t loaders : {1u, 3u}) {
    Config cfg = ycsb_config(200'000, 4, 30);
    cfg.settings<YcsbConfig>().primary_index = IndexType::Ordered;
    const auto [built, estimate] = load_ycsb(cfg, loaders);
    // The estimate takes every leaf half full, as a split leaves it; keys
    // loaded in ascending order fill leaves no fuller.
    EXPECT_GE(estimate, built) << loaders << " loaders";
    EXPECT_LE(estimate, 2 * built + 64 * footprint::kPage) << loaders << " loaders";
  }
}

TEST(MemoryEstimate, TpccMatchesTheLoadedStructures) {
  for (const StorageOptions storage : {kChainedSmall, StorageOptions{IndexKind::Flat, false}}) {
    const Config cfg = tpcc_config(2, TpccSchema::Small, storage);
    Database db(RowLayout::for_meta(kMeta, kAlign), cfg.storage);
    Tpcc tpcc(cfg);
    tpcc.load(db, 2, init_meta);
    const auto built = static_cast<double>(built_bytes(db));
    const auto estimate = static_cast<double>(Tpcc::estimate_load_bytes(cfg, kMeta, kAlign, 2));
    // ORDER-LINE's 5..15 lines per order are drawn at load; the estimate takes
    // the expected 10. The last-name index, page rounding and (flat) the
    // allowance for overflow nodes are a little more.
    EXPECT_NEAR(estimate, built, 0.05 * built) << (storage.index == IndexKind::Flat ? "flat" : "chained");
  }
}

// --tpcc-materialize queried: the estimate bounds what the load and every
// worker's queries build, and is a small part of a whole load's.
TEST(MemoryEstimate, TpccQueriedBoundsTheLoadedStructures) {
  Config cfg = tpcc_config(8, TpccSchema::Small);
  cfg.threads = 8;
  cfg.queries_per_worker = 128;
  cfg.settings<TpccConfig>().mix = {50, 50, 0, 0, 0};
  const Config whole = cfg;
  cfg.settings<TpccConfig>().materialize = Materialize::Queried;
  Database db(RowLayout::for_meta(kMeta, kAlign), cfg.storage);
  Tpcc tpcc(cfg);
  tpcc.load(db, 2, init_meta);
  for (uint32_t w = 0; w < cfg.threads; w++) {
    Rng rng(w + 1);
    tpcc.generate(w, cfg.queries_per_worker, rng);
  }
  const uint64_t built = built_bytes(db);
  const uint64_t estimate = Tpcc::estimate_load_bytes(cfg, kMeta, kAlign, 2);
  EXPECT_GE(estimate, built);
  EXPECT_LT(estimate, Tpcc::estimate_load_bytes(whole, kMeta, kAlign, 2) / 4);
}

TEST(MemoryEstimate, YcsbGrowsLinearlyWithRows) {
  for (const uint64_t rows : {uint64_t{1} << 20, uint64_t{1} << 22, uint64_t{1} << 26}) {
    const auto one = static_cast<double>(Ycsb::estimate_load_bytes(ycsb_config(rows, 10, 100), kMeta, kAlign, 4));
    const auto two = static_cast<double>(Ycsb::estimate_load_bytes(ycsb_config(2 * rows, 10, 100), kMeta, kAlign, 4));
    EXPECT_NEAR(two / one, 2.0, 0.01) << rows << " rows";
  }
}

TEST(MemoryEstimate, YcsbGrowsLinearlyWithFieldSize) {
  // Rows of 8 + 2 * size data bytes after a 24-byte header and lock word:
  // with sizes 64 apart the stride grows by 128 bytes a step.
  const uint64_t rows = uint64_t{1} << 20;
  uint64_t previous = Ycsb::estimate_load_bytes(ycsb_config(rows, 2, 16), kMeta, kAlign, 2);
  for (const uint32_t size : {80u, 144u, 208u, 272u}) {
    const uint64_t next = Ycsb::estimate_load_bytes(ycsb_config(rows, 2, size), kMeta, kAlign, 2);
    EXPECT_EQ(next - previous, rows * 128) << "field size " << size;
    previous = next;
  }
}

TEST(MemoryEstimate, YcsbIsWithinTheLayoutsBounds) {
  const uint64_t rows = uint64_t{1} << 22;
  for (const uint32_t fields : {1u, 10u, 64u}) {
    for (const uint32_t size : {1u, 100u, 1000u}) {
      for (const std::size_t meta : {std::size_t{1}, std::size_t{8}, std::size_t{48}}) {
        const Config cfg = ycsb_config(rows, fields, size);
        const auto estimate = static_cast<double>(Ycsb::estimate_load_bytes(cfg, meta, 8, 2));
        // Per row at least the header, metadata, key, fields, an index node
        // and a bucket; at most that with the data 8-aligned and the row
        // padded to a cache line, plus each loader's partly filled last block.
        const double row = 16.0 + static_cast<double>(meta) + 8 + fields * size;
        const double lower = static_cast<double>(rows) * (row + sizeof(HashIndex::Node) + 8);
        const double upper = static_cast<double>(rows) * (row + 7 + 63 + sizeof(HashIndex::Node) + 8) +
                             2 * 16384 * (row + 7 + 63) + (uint64_t{1} << 20);
        EXPECT_GE(estimate, lower) << fields << " x " << size << " meta " << meta;
        EXPECT_LE(estimate, upper) << fields << " x " << size << " meta " << meta;
      }
    }
  }
}

TEST(MemoryEstimate, TpccGrowsLinearlyWithWarehouses) {
  for (const TpccSchema schema : {TpccSchema::Full, TpccSchema::Small}) {
    for (const uint32_t w : {8u, 32u, 128u}) {
      const auto one = static_cast<double>(Tpcc::estimate_load_bytes(tpcc_config(w, schema), kMeta, kAlign, 2));
      const auto two = static_cast<double>(Tpcc::estimate_load_bytes(tpcc_config(2 * w, schema), kMeta, kAlign, 2));
      // ITEM does not grow with warehouses; index buckets double in steps.
      EXPECT_NEAR(two / one, 2.0, 0.06) << w << " warehouses";
    }
  }
}

TEST(MemoryEstimate, TpccIsWithinTheLayoutsBounds) {
  // Clause 4.3.3.1 per warehouse (full schema): 100,000 STOCK; per district
  // 3,000 CUSTOMER, HISTORY and ORDER, about 30,000 ORDER-LINE and 900
  // NEW-ORDER. Each row takes at least header + metadata + data + an index
  // node, and at most that padded by a cache line.
  for (const TpccSchema schema : {TpccSchema::Full, TpccSchema::Small}) {
    const Config cfg = tpcc_config(16, schema);
    const double items = cfg.settings<TpccConfig>().items();
    const double cust = cfg.settings<TpccConfig>().customers_per_district();
    const double lo_extra = 16 + kMeta + sizeof(HashIndex::Node);
    double lower = items * (tpcc::item_schema().size() + lo_extra);
    double upper = items * (tpcc::item_schema().size() + lo_extra + 64 + 8);
    auto add = [&](double rows, const Schema& s) {
      lower += 16 * rows * (s.size() + lo_extra);
      upper += 16 * rows * (s.size() + lo_extra + 64 + 16);
    };
    add(1, tpcc::warehouse_schema());
    add(10, tpcc::district_schema());
    add(items, tpcc::stock_schema());
    add(10 * cust, tpcc::customer_schema());
    add(10 * cust, tpcc::history_schema());
    add(10 * cust, tpcc::order_schema());
    add(10 * cust * 10, tpcc::order_line_schema());
    add(10 * 900, tpcc::new_order_schema());
    const auto estimate = static_cast<double>(Tpcc::estimate_load_bytes(cfg, kMeta, kAlign, 2));
    EXPECT_GE(estimate, lower);
    EXPECT_LE(estimate, upper + (uint64_t{64} << 20));
  }
}

TEST(MemoryEstimate, RefusalLineNamesBothSizes) {
  EXPECT_EQ(footprint::shortfall(uint64_t{1} << 30, uint64_t{2} << 30), "");
  EXPECT_EQ(footprint::shortfall(uint64_t{3} << 30, uint64_t{1} << 30),
            "needs 3.0 GiB, this machine has 1.0 GiB available");
}

// This process's mapped address space (VmSize), as the kernel counts it
// against `ulimit -v`.
uint64_t mapped_bytes() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  }
  ADD_FAILURE() << "no VmSize in /proc/self/status";
  return 0;
}

// The figure a run is refused by is the least of what the machine and this
// process's limits leave. Under `ulimit -v` that is the address space left
// under the limit: with the limit set 256 MiB above what the process has
// mapped, the figure falls from the machine's gigabytes to about 256 MiB
// (the process maps a little more or less between the two readings).
TEST(MemoryEstimate, AvailableMemoryFallsToWhatTheAddressSpaceLimitLeaves) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's allocator may map more while the limit holds, and abort";
#endif
  constexpr uint64_t kHeadroom = uint64_t{256} << 20;
  ASSERT_GT(platform::available_memory_bytes(), 4 * kHeadroom) << "too little memory here to see the limit";
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &saved), 0);
  rlimit limited = saved;
  limited.rlim_cur = mapped_bytes() + kHeadroom;
  ASSERT_EQ(setrlimit(RLIMIT_AS, &limited), 0);
  const uint64_t under_limit = platform::available_memory_bytes();
  ASSERT_EQ(setrlimit(RLIMIT_AS, &saved), 0);
  EXPECT_GT(under_limit, kHeadroom / 2);
  EXPECT_LT(under_limit, 2 * kHeadroom) << "the figure ignores `ulimit -v`";
}

}  // namespace
}  // namespace abyss
