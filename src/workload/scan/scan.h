#pragma once
// The phantom micro-benchmark: range scans racing inserts into the ranges
// they scan, built so that a scan that misses a concurrent insert closes a
// dependency cycle the history checker sees (docs/schemes.md, "Scans and
// phantoms").
//
// Table ITEM (ordered primary index) holds --scan-groups groups of
// --scan-rows rows each at first; table SUMMARY (hash index) one row per
// group. Two transaction types, each on one group:
//   scan    scans at most --scan-length rows of the group from a random key
//           of it, ascending or descending (--scan-reverse-ratio), and writes
//           the number of rows it saw into the group's SUMMARY row;
//   insert  reads the group's SUMMARY row and inserts a row at a random key
//           of the group (--scan-insert-ratio of all transactions);
//   delete  reads the group's SUMMARY row and removes the first row at or
//           after a random key of the group, if there is one
//           (--scan-delete-ratio of all transactions).
// An insert that a concurrent scan misses makes the scan precede it (a
// predicate anti-dependency); its read of the SUMMARY row before the scan's
// write makes it precede the scan too: a cycle, unless the scheme orders the
// two. Groups grow by their inserts, and a scan's range narrows as they do.
// Group g is partition g (H-STORE).
//
// A key is the group in its top bits (the very top one clear, so no key
// reaches the index's end key) and a position in the group below. Loaded
// rows sit at evenly spaced positions whose low bits are zero; an inserted
// row's position is random, with its worker plus one in the low bits, so
// workers never insert the same key and a worker redraws a key it has used.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "common/knob.h"
#include "common/types.h"
#include "common/zipf.h"
#include "storage/database.h"
#include "txn/txn.h"
#include "workload/traits.h"

namespace abyss {

// The micro-benchmark's settings (Scan::knobs).
struct ScanConfig {
  uint32_t groups = 4;         // few groups: scans and inserts meet often
  uint32_t rows = 64;          // loaded rows per group
  uint32_t length = 32;        // rows a scan visits at most
  double insert_ratio = 0.5;   // fraction of transactions that insert
  double delete_ratio = 0.0;   // fraction of transactions that remove a row
  double reverse_ratio = 0.5;  // fraction of scans that run in descending order
};

class Scan final {
 public:
  static constexpr WorkloadTraits kTraits{
      .name = "scan",
      .summary = "range scans against inserts into the scanned ranges: the phantom micro-benchmark",
      .spec = "docs/schemes.md, \"Scans and phantoms\"",
  };
  static constexpr std::array<std::string_view, 3> kTypeNames = {"scan", "insert", "delete"};
  static constexpr uint8_t kScan = 0;
  static constexpr uint8_t kInsert = 1;
  static constexpr uint8_t kDelete = 2;
  static std::span<const WorkloadMetric> metrics() { return {}; }
  static std::vector<Knob> knobs();
  static std::string validate(const Config& config);
  // One partition per group.
  static uint32_t partitions(const Config& config) { return config.settings<ScanConfig>().groups; }

  // Limits of the key layout: 7 bits of group, 56 of position, of which the
  // low 11 hold an inserting worker plus one. A scan's accesses stay below
  // kDefaultAccessCapacity: its rows, the next key and the SUMMARY row.
  static constexpr uint32_t kMaxGroups = 128;
  static constexpr uint32_t kMaxRows = 1u << 20;
  static constexpr uint32_t kMaxLength = 1000;
  static constexpr uint32_t kWorkerBits = 11;
  static constexpr uint32_t kMaxWorkers = (1u << kWorkerBits) - 1;
  static constexpr uint32_t kGroupShift = 56;
  static constexpr uint64_t kPositions = uint64_t{1} << kGroupShift;

  // The key of `position` in `group`, and of loaded row `slot` of `rows`.
  static constexpr uint64_t key(uint64_t group, uint64_t position) { return group << kGroupShift | position; }
  static uint64_t loaded_key(uint64_t group, uint64_t slot, uint64_t rows) {
    const uint64_t spacing = kPositions / rows;
    return key(group, (slot * spacing) >> kWorkerBits << kWorkerBits);
  }

  struct Query {
    uint8_t type;  // kScan, kInsert, kDelete
    bool reverse;
    uint16_t group;
    uint64_t position;  // where a scan starts, or a removal looks for its row
  };
  struct Queries {
    std::vector<Query> queries;
    std::size_t size() const { return queries.size(); }
  };

  explicit Scan(const Config& config);

  void load(Database& db, uint32_t loaders, void (*init_row)(void* meta));
  // After the database was recovered from a log (run --recover): picks up
  // where the logged run left the keys this workload makes up, so none is
  // made twice. Nothing to do: an insert redraws a key the index holds.
  void resume(const Database& /*db*/) {}
  Queries generate(uint32_t worker, uint32_t count, Rng& rng) const;
  uint8_t type_of(const Queries& qs, std::size_t i) const { return qs.queries[i].type; }
  void partitions_of(const Queries& qs, std::size_t i, std::vector<uint32_t>& out) const {
    out.assign(1, qs.queries[i].group);
  }
  static uint64_t estimate_load_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align,
                                      uint32_t loaders);
  static uint64_t estimate_worker_bytes(const Config& config, std::size_t meta_size = 0, std::size_t meta_align = 0);

  template <class CC>
  Rc run(Txn<CC>& txn, const Queries& qs, std::size_t i, uint64_t& sink) const {
    const Query& q = qs.queries[i];
    if (q.type != kScan) {
      const char* summary = nullptr;
      if (Rc rc = txn.read(*summary_, q.group, summary); rc != Rc::Ok) return rc;
      sink += static_cast<uint64_t>(get_int64(summary, seen_));
    }
    if (q.type == kDelete) {
      uint64_t victim = 0;
      bool found = false;
      if (Rc rc = txn.scan(*item_, key(q.group, q.position), key(q.group, kPositions - 1), 1, ScanOrder::Ascending,
                           [&](uint64_t k, const char* /*data*/) {
                             victim = k;
                             found = true;
                             return false;
                           });
          rc != Rc::Ok) {
        return rc;
      }
      return found ? txn.remove(*item_, victim) : Rc::Ok;
    }
    if (q.type == kInsert) {
      Worker& w = txn.worker();
      uint64_t k = 0;
      do {
        const uint64_t position = (w.rng.uniform(kPositions) >> kWorkerBits << kWorkerBits) | (w.id.value + 1);
        k = key(q.group, position);
      } while (item_->index().find(k) != nullptr);  // this worker's own, committed earlier
      char* row = nullptr;
      if (Rc rc = txn.insert(*item_, k, row); rc != Rc::Ok) return rc;
      set_int64(row, item_key_, static_cast<int64_t>(k));
      set_int64(row, item_value_, static_cast<int64_t>(w.id.value));
      return Rc::Ok;
    }
    const uint64_t from = key(q.group, q.position);
    const uint64_t lo = q.reverse ? key(q.group, 0) : from;
    const uint64_t hi = q.reverse ? from : key(q.group, kPositions - 1);
    int64_t count = 0;
    if (Rc rc = txn.scan(*item_, lo, hi, cfg_.length, q.reverse ? ScanOrder::Descending : ScanOrder::Ascending,
                         [&](uint64_t /*key*/, const char* data) {
                           sink += static_cast<uint64_t>(get_int64(data, item_value_));
                           count++;
                           return true;
                         });
        rc != Rc::Ok) {
      return rc;
    }
    char* summary = nullptr;
    if (Rc rc = txn.update(*summary_, q.group, summary); rc != Rc::Ok) return rc;
    set_int64(summary, seen_, count);
    return Rc::Ok;
  }

 private:
  const ScanConfig& cfg_;
  Table* item_ = nullptr;
  Table* summary_ = nullptr;
  Column item_key_;
  Column item_value_;
  Column seen_;
};

}  // namespace abyss
