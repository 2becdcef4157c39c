#pragma once
// YCSB as Abyss §3.3 uses it: one table, an integer key and `fields` string
// columns of `field_size` bytes, a hash index on the key; each transaction
// makes req_per_txn accesses to distinct keys drawn from a Zipfian(theta),
// each a read or (with probability write_ratio) an update of one field.
// Partitioned runs place key k in partition k % partitions; a worker's home
// partition is its id % partitions (Abyss §5.5).
//
// YCSB-E (Cooper et al., SoCC 2010, workload E) as an option: with an
// ordered primary index, an access may instead be a scan of up to
// 1..max_scan_length rows from a Zipfian key (--scan-ratio), or an insert of
// a key past the loaded ones (--insert-ratio); E itself is
// `--primary-index ordered --req-per-txn 1 --scan-ratio 0.95 --insert-ratio 0.05`.
//
// Long readers as an option (--long-reader-ratio): a transaction may instead
// read --long-reader-rows consecutive keys, from a uniform start, wrapping
// past the last: a read-only transaction thousands of rows long beside the
// short writers, reported as its own type (long_read).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
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
#include "workload/ycsb/ycsb_config.h"

namespace abyss {

class Ycsb final {
 public:
  static constexpr WorkloadTraits kTraits{
      .name = "ycsb",
      .summary = "one table, Zipfian keys, transactions of reads and single-field updates",
      .spec = "Abyss §3.3 (Cooper et al., SoCC 2010)",
  };
  static constexpr std::array<std::string_view, 3> kTypeNames = {"read_write", "read_only", "long_read"};
  static constexpr uint8_t kReadWrite = 0;
  static constexpr uint8_t kReadOnly = 1;
  static constexpr uint8_t kLongRead = 2;
  // No number beside throughput.
  static std::span<const WorkloadMetric> metrics() { return {}; }
  // --rows, --theta, ... (ycsb.cc).
  static std::vector<Knob> knobs();
  // Cross-field checks the per-flag ranges cannot express; one line naming
  // the flags, the values and what is allowed, or empty.
  static std::string validate(const Config& config);
  // Key k is in partition k % --partitions (Abyss §5.5).
  static uint32_t partitions(const Config& config) { return config.settings<YcsbConfig>().partitions; }
  static constexpr uint32_t kMaxPartsPerTxn = 64;

  enum class Op : uint8_t { Read, Update, Scan, Insert, LongRead };
  struct Request {
    uint64_t key;  // a scan's or a long read's first key; an insert's home partition (its key is drawn at run time)
    Op op;
    uint16_t length;  // a scan's row limit
  };
  struct Query {
    uint32_t begin;  // into Queries::requests
    uint32_t count;
    uint8_t type;
  };
  struct Queries {
    std::vector<Request> requests;
    std::vector<Query> queries;
    std::size_t size() const { return queries.size(); }
  };

  explicit Ycsb(const Config& config);

  // Creates the table and fills it with `loaders` threads. `init_row` sets up
  // the scheme's per-row metadata of a new row.
  void load(Database& db, uint32_t loaders, void (*init_row)(void* meta));
  // After the database was recovered from a log (run --recover): picks up
  // where the logged run left the keys this workload makes up, so none is
  // made twice. YCSB-E's inserts take keys past the highest one there.
  void resume(const Database& db);

  // A worker's queries. With --materialize queried it also loads the rows
  // they name that no earlier worker's queries did (set-up, before the run).
  Queries generate(uint32_t worker, uint32_t count, Rng& rng) const;

  // The resident bytes load() takes with `loaders` threads under a scheme
  // whose RowMeta has this size and alignment: row blocks, the index's
  // buckets and nodes (storage/footprint.h). Nothing is allocated.
  static uint64_t estimate_load_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align,
                                      uint32_t loaders);
  // The bytes one worker takes before its first transaction: its
  // pre-generated queries.
  static uint64_t estimate_worker_bytes(const Config& config, std::size_t meta_size = 0, std::size_t meta_align = 0);
  // The accesses one transaction may make: a long reader's rows.
  static uint64_t max_accesses(const Config& config);

  uint8_t type_of(const Queries& qs, std::size_t i) const { return qs.queries[i].type; }

  template <class CC>
  Rc run(Txn<CC>& txn, const Queries& qs, std::size_t i, uint64_t& sink) const {
    // Touches every field, as a read of the whole record.
    auto read_fields = [&](const char* data) {
      for (const Column& f : field_columns_) sink += static_cast<unsigned char>(data[f.offset]);
    };
    const Query& q = qs.queries[i];
    if (q.type == kLongRead) [[unlikely]] {
      return long_read(txn, qs.requests[q.begin].key, sink);
    }
    const uint32_t end = q.begin + q.count;
    for (uint32_t r = q.begin; r < end; r++) {
      if ((r - q.begin) % kPrefetchBatch == 0) {
        // The next batch of keys, fetched together (--prefetch).
        std::array<uint64_t, kPrefetchBatch> keys;
        const uint32_t n = std::min(kPrefetchBatch, end - r);
        for (uint32_t k = 0; k < n; k++) keys[k] = qs.requests[r + k].key;
        txn.prefetch(*table_, std::span<const uint64_t>(keys.data(), n));
      }
      const Request& req = qs.requests[r];
      switch (req.op) {
        case Op::Update: {
          // Update one field, chosen by the key (as a YCSB update of one column).
          const std::size_t field = req.key % field_columns_.size();
          const Column& f = field_columns_[field];
          char* data = nullptr;
          if (Rc rc = txn.update(*table_, req.key, data, field_mask(field)); rc != Rc::Ok) return rc;
          std::memset(data + f.offset, static_cast<int>('a' + (data[f.offset] - 'a' + 1) % 26), f.size);
          break;
        }
        case Op::Read: {
          // Read in place where the scheme allows (Txn::read_with): the
          // fields read, not a copy of the row.
          uint64_t sum = 0;
          const Rc rc = txn.read_with(*table_, req.key, [&](const SharedRow& row) {
            uint64_t s = 0;  // in a register: `sum` may live in memory, behind the row's loads
            for (const Column& f : field_columns_) s += row.byte(f.offset);
            sum = s;
          });
          if (rc != Rc::Ok) return rc;
          sink += sum;
          break;
        }
        case Op::Scan: {
          Rc rc = txn.scan(*table_, req.key, Index::kEndKey - 1, req.length, ScanOrder::Ascending,
                           [&](uint64_t /*key*/, const char* data) {
                             read_fields(data);
                             return true;
                           });
          if (rc != Rc::Ok) return rc;
          break;
        }
        case Op::Insert: {
          const uint64_t key = next_insert_key(txn.worker().id.value, static_cast<uint32_t>(req.key));
          char* data = nullptr;
          if (Rc rc = txn.insert(*table_, key, data); rc != Rc::Ok) return rc;
          fill(data, key);
          break;
        }
        case Op::LongRead:  // a long reader's one request, served by long_read() above
          break;
      }
    }
    return Rc::Ok;
  }

  // The partitions a query touches (H-STORE declares them up front).
  void partitions_of(const Queries& qs, std::size_t i, std::vector<uint32_t>& out) const;

  Table& table() const { return *table_; }

 private:
  // Keys a transaction prefetches at a time: enough misses in flight to
  // keep the memory system busy, few enough to stay in the first-level cache.
  static constexpr uint32_t kPrefetchBatch = 16;
  // Rows per table block a loader takes at a time.
  static constexpr uint64_t kLoadBlockRows = 16384;
  static Schema schema(const YcsbConfig& cfg);
  // A row's data: its key, and each field a letter chosen by key and field.
  void fill(char* data, uint64_t key) const;
  // A long reader: --long-reader-rows keys from `first`, wrapping past the
  // last loaded one, each read as Op::Read reads, fetched a batch ahead.
  // Out of line: the short transactions' loop in run() stays as compact as
  // it was before long readers.
  template <class CC>
  [[gnu::noinline]] Rc long_read(Txn<CC>& txn, uint64_t first, uint64_t& sink) const {
    const uint64_t rows = rows_per_part_;  // one partition: the loaded keys are 0..rows-1
    std::array<uint64_t, kPrefetchBatch> keys;
    for (uint64_t n = 0; n < cfg_.long_reader_rows; n += kPrefetchBatch) {
      const auto batch = static_cast<uint32_t>(std::min<uint64_t>(kPrefetchBatch, cfg_.long_reader_rows - n));
      for (uint32_t k = 0; k < batch; k++) keys[k] = (first + n + k) % rows;
      txn.prefetch(*table_, std::span<const uint64_t>(keys.data(), batch));
      for (uint32_t k = 0; k < batch; k++) {
        uint64_t sum = 0;
        const Rc rc = txn.read_with(*table_, keys[k], [&](const SharedRow& row) {
          uint64_t s = 0;
          for (const Column& f : field_columns_) s += row.byte(f.offset);
          sum = s;
        });
        if (rc != Rc::Ok) return rc;
        sink += sum;
      }
    }
    return Rc::Ok;
  }
  // A key no row has, in partition `part`: past the loaded keys, numbered by
  // worker and by that worker's inserts.
  uint64_t next_insert_key(uint32_t worker, uint32_t part) const {
    const uint64_t n = inserts_[worker].next++;
    return rows_per_part_ * cfg_.partitions + (n * inserts_.size() + worker) * cfg_.partitions + part;
  }
  // A per-worker count of inserts, on its own cache line.
  struct alignas(64) InsertSeq {
    uint64_t next = 0;
  };

  // The columns an update of field `f` changes (Txn::update): the key is
  // column 0, field f column f + 1; past the mask's 64 bits, any.
  static uint64_t field_mask(std::size_t f) { return f + 1 < 64 ? uint64_t{1} << (f + 1) : ~uint64_t{0}; }

  const YcsbConfig& cfg_;
  uint64_t rows_per_part_;
  Zipf zipf_;
  Table* table_ = nullptr;
  Column key_column_;
  std::vector<Column> field_columns_;
  mutable std::vector<InsertSeq> inserts_;  // one per worker; only that worker touches its entry
  // --materialize queried: the scheme's row set-up, and the keys loaded so far.
  // --materialize queried: the most rows the workers' queries can name.
  static uint64_t queried_rows(const Config& config);
  uint64_t queried_rows_;
  void (*init_row_)(void* meta) = nullptr;
  mutable std::vector<bool> loaded_;
  mutable RowCursor load_cursor_;
  // Loads the rows `qs` reads or updates that are not loaded yet.
  void load_queried(const Queries& qs) const;
};

}  // namespace abyss
