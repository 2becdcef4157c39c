#pragma once
// The key-value table that `abyss serve` serves (src/server/), and the NoSQL
// study's write-heavy workload on it: clients each inserting 100-byte random
// values under keys of their own range (nosql-single-node-scaling, §2).
//
// String keys in a table of fixed rows. The table holds --kv-slots rows,
// all loaded empty, keyed by slot number; a key's row is found by open
// addressing: its 64-bit FNV-1a hash picks a partition (hash % P) and a
// home slot in it, and the key lives in the first of --kv-probe slots of
// that partition, from its home on, that holds it. Every slot a lookup
// passes is read under the scheme, so a key's absence is read as surely as
// its presence: two clients setting one new key conflict on the empty slot
// they both read, and no insert ever races another. Removing a key leaves a
// tombstone, so the keys past it stay reachable; a later SET reuses it.
// Slot s is in partition s % P, so a key's probes stay in its partition (an
// H-STORE partition, a --keyspace-partitions partition of the server).
//
// The hash and the layout are part of the log format: a log written by one
// build is read back by another (docs/formats.md, "The key-value table").
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

struct KvConfig {
  uint64_t slots = uint64_t{1} << 18;  // rows of the table; keys it holds at most
  uint32_t max_key = 64;               // bytes of a key at most
  uint32_t max_value = 128;            // bytes of a value at most
  uint32_t probe = 32;                 // slots a key may sit past its home
  uint32_t partitions = 1;
  // The insert workload of `abyss run --workload kv`.
  uint32_t value_size = 100;         // bytes of each value written (the study's 100)
  uint64_t keys_per_worker = 16384;  // each worker's own key range, set over and over
  double read_ratio = 0;             // fraction of operations that GET instead (the study: none)
};

// The 64-bit FNV-1a hash of a key: stable across builds and machines.
constexpr uint64_t kv_hash(std::string_view key) {
  uint64_t h = 14695981039346656037ull;
  for (char c : key) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// What an operation found, beside the scheme's answer.
enum class KvStatus : uint8_t {
  Ok,
  Missing,     // no such key (GET, DEL, SET XX, INCR never fail on it; the caller decides)
  Exists,      // SET NX of a key present
  Full,        // no free slot among the key's --kv-probe
  TooLarge,    // a key or value longer than the table holds
  NotInteger,  // INCR of a value that is no 64-bit decimal integer
  Overflow,    // INCR past the 64-bit range
};
std::string_view kv_status_text(KvStatus s);

enum class SetMode : uint8_t { Always, IfAbsent, IfPresent };  // SET, SET NX, SET XX

// The table and its operations, each a part of a transaction: an Rc other
// than Ok is the scheme's (pass it on); KvStatus is the operation's outcome.
class KvTable final {
 public:
  static constexpr int64_t kEmpty = 0;
  static constexpr int64_t kLive = 1;
  static constexpr int64_t kTombstone = 2;

  explicit KvTable(const KvConfig& cfg) : cfg_(cfg), per_part_(cfg.slots / cfg.partitions) {}
  static Schema schema(const KvConfig& cfg);
  // Creates the table with every slot empty.
  void load(Database& db, uint32_t loaders, void (*init_row)(void* meta));
  Table& table() const { return *table_; }
  const KvConfig& config() const { return cfg_; }

  uint32_t partition_of(uint64_t hash) const { return static_cast<uint32_t>(hash % cfg_.partitions); }
  uint64_t slot(uint64_t hash, uint32_t probe) const {
    const uint64_t home = hash / cfg_.partitions % per_part_;
    return (home + probe) % per_part_ * cfg_.partitions + partition_of(hash);
  }

  template <class CC>
  Rc get(Txn<CC>& txn, std::string_view key, std::string& value, KvStatus& status) const {
    Found f;
    if (Rc rc = find(txn, key, f, status); rc != Rc::Ok || status != KvStatus::Ok) return rc;
    if (!f.found) {
      status = KvStatus::Missing;
      return Rc::Ok;
    }
    value.assign(f.data + value_.offset, static_cast<std::size_t>(get_int64(f.data, value_len_)));
    return Rc::Ok;
  }

  template <class CC>
  Rc set(Txn<CC>& txn, std::string_view key, std::string_view value, SetMode mode, KvStatus& status) const {
    if (value.size() > cfg_.max_value) {
      status = KvStatus::TooLarge;
      return Rc::Ok;
    }
    Found f;
    if (Rc rc = find(txn, key, f, status); rc != Rc::Ok || status != KvStatus::Ok) return rc;
    if (f.found ? mode == SetMode::IfAbsent : mode == SetMode::IfPresent) {
      status = f.found ? KvStatus::Exists : KvStatus::Missing;
      return Rc::Ok;
    }
    if (!f.found && !f.has_free) {
      status = KvStatus::Full;
      return Rc::Ok;
    }
    char* data = nullptr;
    if (Rc rc = txn.update(*table_, f.found ? f.slot : f.free, data); rc != Rc::Ok) return rc;
    if (!f.found) write_key(data, key);
    set_int64(data, value_len_, static_cast<int64_t>(value.size()));
    value.copy(data + value_.offset, value.size());
    return Rc::Ok;
  }

  template <class CC>
  Rc remove(Txn<CC>& txn, std::string_view key, KvStatus& status) const {
    Found f;
    if (Rc rc = find(txn, key, f, status); rc != Rc::Ok || status != KvStatus::Ok) return rc;
    if (!f.found) {
      status = KvStatus::Missing;
      return Rc::Ok;
    }
    char* data = nullptr;
    if (Rc rc = txn.update(*table_, f.slot, data); rc != Rc::Ok) return rc;
    set_int64(data, state_, kTombstone);
    return Rc::Ok;
  }

  // INCRBY: a missing key counts from 0, as in Redis.
  template <class CC>
  Rc increment(Txn<CC>& txn, std::string_view key, int64_t by, int64_t& result, KvStatus& status) const {
    Found f;
    if (Rc rc = find(txn, key, f, status); rc != Rc::Ok || status != KvStatus::Ok) return rc;
    int64_t now = 0;
    if (f.found) {
      const auto len = static_cast<std::size_t>(get_int64(f.data, value_len_));
      if (!parse_decimal(std::string_view(f.data + value_.offset, len), now)) {
        status = KvStatus::NotInteger;
        return Rc::Ok;
      }
    }
    if (__builtin_add_overflow(now, by, &result)) {
      status = KvStatus::Overflow;
      return Rc::Ok;
    }
    const std::string text = std::to_string(result);
    return set(txn, key, text, SetMode::Always, status);
  }

  // A 64-bit decimal integer as Redis reads one: an optional '-', digits,
  // no leading zero (but "0"), nothing else.
  static bool parse_decimal(std::string_view text, int64_t& out);

 private:
  struct Found {
    bool found = false;
    uint64_t slot = 0;  // the key's slot, when found
    const char* data = nullptr;
    bool has_free = false;
    uint64_t free = 0;  // the first empty or tombstone slot on the way
  };

  template <class CC>
  Rc find(Txn<CC>& txn, std::string_view key, Found& f, KvStatus& status) const {
    status = KvStatus::Ok;
    if (key.size() > cfg_.max_key) {
      status = KvStatus::TooLarge;
      return Rc::Ok;
    }
    const uint64_t hash = kv_hash(key);
    for (uint32_t p = 0; p < cfg_.probe; p++) {
      const uint64_t s = slot(hash, p);
      const char* data = nullptr;
      if (Rc rc = txn.read(*table_, s, data); rc != Rc::Ok) return rc;
      const int64_t state = get_int64(data, state_);
      if (state == kLive && holds(data, key)) {
        f.found = true;
        f.slot = s;
        f.data = data;
        return Rc::Ok;
      }
      if (state != kLive && !f.has_free) {
        f.has_free = true;
        f.free = s;
      }
      if (state == kEmpty) return Rc::Ok;  // no key was ever placed past it
    }
    return Rc::Ok;
  }

  bool holds(const char* data, std::string_view key) const {
    return static_cast<std::size_t>(get_int64(data, key_len_)) == key.size() &&
           std::string_view(data + key_.offset, key.size()) == key;
  }
  void write_key(char* data, std::string_view key) const {
    set_int64(data, state_, kLive);
    set_int64(data, key_len_, static_cast<int64_t>(key.size()));
    key.copy(data + key_.offset, key.size());
  }

  const KvConfig& cfg_;
  uint64_t per_part_;  // slots of each partition
  Table* table_ = nullptr;
  Column state_;
  Column key_len_;
  Column value_len_;
  Column key_;
  Column value_;
};

// `abyss run --workload kv`: each worker sets keys "c<worker>:<n>" of its
// own range to --kv-value-size random bytes, one per transaction (a GET of
// one with --kv-read-ratio).
class Kv final {
 public:
  static constexpr WorkloadTraits kTraits{
      .name = "kv",
      .summary = "string keys set to 100-byte values, each worker its own range: the NoSQL study's inserts",
      .spec = "nosql-single-node-scaling §2; docs/server.md",
  };
  static constexpr std::array<std::string_view, 2> kTypeNames = {"set", "get"};
  static std::span<const WorkloadMetric> metrics() { return {}; }
  static std::vector<Knob> knobs();
  static std::string validate(const Config& config);
  static uint32_t partitions(const Config& config) { return config.settings<KvConfig>().partitions; }

  struct Query {
    uint64_t n;  // the key's number in its worker's range
    uint32_t partition;
    uint8_t type;
  };
  struct Queries {
    std::vector<Query> queries;
    uint32_t worker = 0;
    std::size_t size() const { return queries.size(); }
  };

  explicit Kv(const Config& config);
  void load(Database& db, uint32_t loaders, void (*init_row)(void* meta)) { table_.load(db, loaders, init_row); }
  // Nothing to pick up: a set of a key that is there overwrites it.
  void resume(const Database& /*db*/) {}
  Queries generate(uint32_t worker, uint32_t count, Rng& rng) const;
  uint8_t type_of(const Queries& qs, std::size_t i) const { return qs.queries[i].type; }
  void partitions_of(const Queries& qs, std::size_t i, std::vector<uint32_t>& out) const {
    out.assign(1, qs.queries[i].partition);
  }
  static uint64_t estimate_load_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align,
                                      uint32_t loaders);
  static uint64_t estimate_worker_bytes(const Config& config, std::size_t meta_size = 0, std::size_t meta_align = 0);

  // The key of a worker's n-th key.
  static std::string key_of(uint32_t worker, uint64_t n) {
    return "c" + std::to_string(worker) + ":" + std::to_string(n);
  }

  template <class CC>
  Rc run(Txn<CC>& txn, const Queries& qs, std::size_t i, uint64_t& sink) const {
    const Query& q = qs.queries[i];
    const std::string key = key_of(qs.worker, q.n);
    KvStatus status = KvStatus::Ok;
    if (q.type == 1) {
      std::string value;
      const Rc rc = table_.get(txn, key, value, status);
      sink += value.size();
      return rc;
    }
    // Random printable bytes, as the study's client writes.
    std::string value(cfg_.value_size, '\0');
    Rng& rng = txn.worker().rng;
    for (char& c : value) c = static_cast<char>('a' + rng.uniform(26));
    const Rc rc = table_.set(txn, key, value, SetMode::Always, status);
    if (rc == Rc::Ok && status != KvStatus::Ok) throw std::runtime_error("kv: " + std::string(kv_status_text(status)));
    return rc;
  }

 private:
  const KvConfig& cfg_;
  KvTable table_;
};

}  // namespace abyss
