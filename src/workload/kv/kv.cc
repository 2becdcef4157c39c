#include "workload/kv/kv.h"

#include "platform/thread.h"
#include "storage/footprint.h"

namespace abyss {

namespace {

// Rows a loader takes at a time.
constexpr uint64_t kLoadBlockRows = 16384;

}  // namespace

std::string_view kv_status_text(KvStatus s) {
  switch (s) {
    case KvStatus::Ok:
      return "ok";
    case KvStatus::Missing:
      return "no such key";
    case KvStatus::Exists:
      return "key exists";
    case KvStatus::Full:
      return "no free slot for the key among its --kv-probe slots (the table is too full: raise --kv-slots)";
    case KvStatus::TooLarge:
      return "key or value longer than the table holds (--kv-max-key, --kv-max-value)";
    case KvStatus::NotInteger:
      return "value is not an integer or out of range";
    case KvStatus::Overflow:
      return "increment or decrement would overflow";
  }
  return "?";
}

Schema KvTable::schema(const KvConfig& cfg) {
  Schema s;
  s.add_int64("KV_STATE");  // kEmpty, kLive, kTombstone
  s.add_int64("KV_KEY_LEN");
  s.add_int64("KV_VALUE_LEN");
  s.add_chars("KV_KEY", cfg.max_key);
  s.add_chars("KV_VALUE", cfg.max_value);
  return s;
}

void KvTable::load(Database& db, uint32_t loaders, void (*init_row)(void* meta)) {
  table_ = &db.create_table("kv", schema(cfg_), cfg_.slots);
  state_ = table_->schema().column("KV_STATE");
  key_len_ = table_->schema().column("KV_KEY_LEN");
  value_len_ = table_->schema().column("KV_VALUE_LEN");
  key_ = table_->schema().column("KV_KEY");
  value_ = table_->schema().column("KV_VALUE");
  const uint64_t slots = cfg_.slots;
  platform::run_parallel(loaders, [&](uint32_t l) {
    RowCursor cursor;
    Arena nodes(std::size_t{8} << 20, "the index nodes of table kv");
    for (uint64_t s = slots * l / loaders; s < slots * (l + 1) / loaders; s++) {
      table_->load_row(cursor, nodes, kLoadBlockRows, s, init_row, [](char* /*data*/) {});  // zeroed: empty
    }
    table_->adopt(std::move(nodes));
  });
}

bool KvTable::parse_decimal(std::string_view text, int64_t& out) {
  if (text.empty() || text.size() > 20) return false;
  const bool negative = text[0] == '-';
  const std::string_view digits = negative ? text.substr(1) : text;
  if (digits.empty() || (digits[0] == '0' && (digits.size() > 1 || negative))) return false;
  uint64_t magnitude = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    if (__builtin_mul_overflow(magnitude, 10u, &magnitude) ||
        __builtin_add_overflow(magnitude, static_cast<uint64_t>(c - '0'), &magnitude)) {
      return false;
    }
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (magnitude > limit) return false;
  out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

Kv::Kv(const Config& config) : cfg_(config.settings<KvConfig>()), table_(cfg_) {}

Kv::Queries Kv::generate(uint32_t worker, uint32_t count, Rng& rng) const {
  Queries qs;
  qs.worker = worker;
  qs.queries.reserve(count);
  // The worker's keys in order, round and round its range, as the study's
  // client inserts its range.
  for (uint32_t i = 0; i < count; i++) {
    Query q{};
    q.n = i % cfg_.keys_per_worker;
    q.type = cfg_.read_ratio > 0 && rng.unit() < cfg_.read_ratio ? 1 : 0;
    q.partition = table_.partition_of(kv_hash(key_of(worker, q.n)));
    qs.queries.push_back(q);
  }
  return qs;
}

uint64_t Kv::estimate_load_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align,
                                 uint32_t loaders) {
  const KvConfig& k = config.settings<KvConfig>();
  const uint32_t stride =
      Table::stride_for(RowLayout::for_meta(meta_size, meta_align, config.storage.align), KvTable::schema(k));
  uint64_t bytes = footprint::hash_index(k.slots, config.storage);
  for (uint32_t l = 0; l < loaders; l++) {
    const uint64_t n = k.slots * (l + 1) / loaders - k.slots * l / loaders;
    bytes +=
        footprint::table_rows(n, kLoadBlockRows, stride, config.storage) + footprint::index_nodes(n, config.storage);
  }
  return bytes;
}

uint64_t Kv::estimate_worker_bytes(const Config& config, std::size_t /*meta_size*/, std::size_t /*meta_align*/) {
  return uint64_t{config.queries_per_worker} * sizeof(Query);
}

std::vector<Knob> Kv::knobs() {
  // What shapes a run's generated operations: a served table takes the keys
  // and values its clients send.
  constexpr std::string_view kRunOnly = "abyss serve sets the keys and values its clients send";
  std::vector<Knob> t;
  t.push_back(integer<uint64_t>(
      "kv-slots", "kv.slots", 16, uint64_t{1} << 34,
      +[](Config& c) -> uint64_t& { return c.settings<KvConfig>().slots; },
      "kv: rows of the key-value table, all loaded empty: the keys it holds at most"));
  t.push_back(integer<uint32_t>(
      "kv-max-key", "kv.max_key", 1, 4096, +[](Config& c) -> uint32_t& { return c.settings<KvConfig>().max_key; },
      "kv: bytes of a key at most"));
  t.push_back(integer<uint32_t>(
      "kv-max-value", "kv.max_value", 1, 1 << 20,
      +[](Config& c) -> uint32_t& { return c.settings<KvConfig>().max_value; }, "kv: bytes of a value at most"));
  t.push_back(integer<uint32_t>(
      "kv-probe", "kv.probe", 1, 4096, +[](Config& c) -> uint32_t& { return c.settings<KvConfig>().probe; },
      "kv: slots a key may sit past its home slot (open addressing); a set finding none free fails"));
  t.push_back(integer<uint32_t>(
      "keyspace-partitions", "kv.keyspace_partitions", 1, 4096,
      +[](Config& c) -> uint32_t& { return c.settings<KvConfig>().partitions; },
      "kv: partitions of the key space (a key's hash modulo this): what H-STORE locks and serve --schedule "
      "contention-aware claims"));
  t.push_back(integer<uint32_t>(
      "kv-value-size", "kv.value_size", 0, 1 << 20,
      +[](Config& c) -> uint32_t& { return c.settings<KvConfig>().value_size; },
      "kv: bytes of each value a run's worker sets (random letters)"));
  t.back().not_served = kRunOnly;
  t.push_back(integer<uint64_t>(
      "kv-keys-per-worker", "kv.keys_per_worker", 1, uint64_t{1} << 32,
      +[](Config& c) -> uint64_t& { return c.settings<KvConfig>().keys_per_worker; },
      "kv: keys of each run worker's own range, set in order, round and round"));
  t.back().not_served = kRunOnly;
  t.push_back(real(
      "kv-read-ratio", "kv.read_ratio", 0, 1, +[](Config& c) -> double& { return c.settings<KvConfig>().read_ratio; },
      "kv: fraction of a run's operations that get a key of the worker's range instead of setting it"));
  t.back().not_served = kRunOnly;
  return t;
}

std::string Kv::validate(const Config& config) {
  const KvConfig& k = config.settings<KvConfig>();
  if (k.slots % k.partitions != 0) {
    return "--kv-slots " + std::to_string(k.slots) + " is not a multiple of --keyspace-partitions " +
           std::to_string(k.partitions) + " (each partition holds the same number of slots)";
  }
  if (k.probe > k.slots / k.partitions) {
    return "--kv-probe " + std::to_string(k.probe) + " exceeds the " + std::to_string(k.slots / k.partitions) +
           " slots of a partition (--kv-slots / --keyspace-partitions)";
  }
  if (k.value_size > k.max_value) {
    return "--kv-value-size " + std::to_string(k.value_size) + " exceeds --kv-max-value " + std::to_string(k.max_value);
  }
  // The run's keys at most half the slots: open addressing's probes stay short.
  const double keys = static_cast<double>(k.keys_per_worker) * config.threads;
  if (config.workload == kTraits.name && keys > static_cast<double>(k.slots) / 2) {
    return "--kv-keys-per-worker " + std::to_string(k.keys_per_worker) + " x --threads " +
           std::to_string(config.threads) + " keys fill more than half of --kv-slots " + std::to_string(k.slots) +
           "; raise --kv-slots";
  }
  return {};
}

}  // namespace abyss
