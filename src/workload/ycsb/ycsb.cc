#include "workload/ycsb/ycsb.h"

#include <algorithm>
#include <cstdio>

#include "platform/thread.h"
#include "storage/footprint.h"

namespace abyss {

Ycsb::Ycsb(const Config& config)
    : cfg_(config.settings<YcsbConfig>()),
      rows_per_part_(cfg_.rows / cfg_.partitions),
      zipf_(rows_per_part_, cfg_.theta),
      inserts_(config.threads),
      queried_rows_(queried_rows(config)) {}

uint64_t Ycsb::queried_rows(const Config& config) {
  const YcsbConfig& y = config.settings<YcsbConfig>();
  return std::min<uint64_t>(y.rows, uint64_t{config.threads} * config.queries_per_worker * y.req_per_txn);
}

Schema Ycsb::schema(const YcsbConfig& cfg) {
  Schema s;
  s.add_int64("YCSB_KEY");
  for (uint32_t f = 0; f < cfg.fields; f++) s.add_chars("FIELD" + std::to_string(f), cfg.field_size);
  return s;
}

uint64_t Ycsb::estimate_load_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align,
                                   uint32_t loaders) {
  const YcsbConfig& y = config.settings<YcsbConfig>();
  const uint32_t stride =
      Table::stride_for(RowLayout::for_meta(meta_size, meta_align, config.storage.align), schema(y));
  uint64_t rows = y.rows / y.partitions * y.partitions;  // as load() fills them
  if (y.materialize == Materialize::Queried) {
    // At most the keys the queries name, loaded by one thread.
    rows = std::min(rows, queried_rows(config));
    loaders = 1;
  }
  const bool ordered = y.primary_index == IndexType::Ordered;
  uint64_t bytes = ordered ? 0 : footprint::hash_index(rows, config.storage);
  for (uint32_t l = 0; l < loaders; l++) {
    const uint64_t n = rows * (l + 1) / loaders - rows * l / loaders;
    bytes += footprint::table_rows(n, kLoadBlockRows, stride, config.storage) +
             (ordered ? footprint::ordered_index(n) : footprint::index_nodes(n, config.storage));
  }
  return bytes;
}

uint64_t Ycsb::max_accesses(const Config& config) {
  const YcsbConfig& y = config.settings<YcsbConfig>();
  // A scan's rows and the key past them; a long reader's rows.
  const uint64_t per_request = y.scan_ratio > 0 ? y.max_scan_length + 1 : 1;
  const uint64_t long_reader = y.long_reader_ratio > 0 ? y.long_reader_rows : 0;
  return std::max(uint64_t{y.req_per_txn} * per_request, long_reader);
}

uint64_t Ycsb::estimate_worker_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align) {
  const YcsbConfig& y = config.settings<YcsbConfig>();
  const uint64_t per_query = sizeof(Query) + uint64_t{y.req_per_txn} * sizeof(Request);
  uint64_t bytes = uint64_t{config.queries_per_worker} * per_query;
  if (y.insert_ratio > 0) {
    // Txn::insert takes blocks of Table::kDefaultBlockRows per worker, and
    // its index nodes from the worker's 1 MiB arena chunks.
    const RowLayout layout = RowLayout::for_meta(meta_size, meta_align, config.storage.align);
    bytes += footprint::table_rows(1, Table::kDefaultBlockRows, Table::stride_for(layout, schema(y)), config.storage) +
             (uint64_t{1} << 20);
  }
  return bytes;
}

void Ycsb::fill(char* data, uint64_t key) const {
  set_int64(data, key_column_, static_cast<int64_t>(key));
  for (uint32_t f = 0; f < cfg_.fields; f++) {
    const Column& c = field_columns_[f];
    std::memset(data + c.offset, 'a' + static_cast<int>((key + f) % 26), c.size);
  }
}

void Ycsb::load(Database& db, uint32_t loaders, void (*init_row)(void* meta)) {
  // With --materialize queried the index is sized for the rows loaded, as a
  // full table's is for its rows.
  const uint64_t expected = cfg_.materialize == Materialize::Queried ? queried_rows_ : cfg_.rows;
  table_ = &db.create_table("ycsb", schema(cfg_), expected, cfg_.primary_index);
  key_column_ = table_->schema().column(0);
  for (uint32_t f = 0; f < cfg_.fields; f++) field_columns_.push_back(table_->schema().column(1 + f));

  const uint64_t rows = rows_per_part_ * cfg_.partitions;  // keys that partitioning can reach
  if (cfg_.materialize == Materialize::Queried) {
    init_row_ = init_row;
    loaded_.assign(rows, false);
    return;  // generate() loads the rows its queries name
  }
  platform::run_parallel(loaders, [&](uint32_t l) {
    RowCursor cursor;
    Arena nodes(std::size_t{8} << 20, "the index nodes of table ycsb");
    const uint64_t lo = rows * l / loaders;
    const uint64_t hi = rows * (l + 1) / loaders;
    for (uint64_t key = lo; key < hi; key++) {
      table_->load_row(cursor, nodes, kLoadBlockRows, key, init_row, [&](char* data) { fill(data, key); });
    }
    // Index nodes live as long as the table.
    table_->adopt(std::move(nodes));
  });
}

void Ycsb::load_queried(const Queries& qs) const {
  Arena nodes(std::size_t{1} << 20, "the index nodes of table ycsb");
  for (const Request& r : qs.requests) {
    if ((r.op != Op::Read && r.op != Op::Update) || r.key >= loaded_.size() || loaded_[r.key]) continue;
    loaded_[r.key] = true;
    table_->load_row(load_cursor_, nodes, kLoadBlockRows, r.key, init_row_, [&](char* data) { fill(data, r.key); });
  }
  table_->adopt(std::move(nodes));
}

Ycsb::Queries Ycsb::generate(uint32_t worker, uint32_t count, Rng& rng) const {
  Queries qs;
  qs.queries.reserve(count);
  qs.requests.reserve(static_cast<std::size_t>(count) * cfg_.req_per_txn);
  const uint32_t parts = cfg_.partitions;
  const uint32_t home = worker % parts;
  std::vector<uint32_t> chosen;
  for (uint32_t i = 0; i < count; i++) {
    Query q{static_cast<uint32_t>(qs.requests.size()), cfg_.req_per_txn, kReadWrite};
    // A long reader is one request, its first key (its draw is skipped when
    // off, so runs without long readers draw as before).
    if (cfg_.long_reader_ratio > 0 && rng.unit() < cfg_.long_reader_ratio) {
      q.count = 1;
      q.type = kLongRead;
      qs.requests.push_back({rng.uniform(rows_per_part_), Op::LongRead, 0});
      qs.queries.push_back(q);
      continue;
    }
    const bool read_only = rng.unit() < cfg_.read_only_txn_ratio;
    q.type = read_only ? kReadOnly : kReadWrite;
    // The partitions this transaction touches: its home, plus others when it
    // is multi-partition (Abyss §5.5).
    chosen.assign(1, home);
    if (parts > 1 && cfg_.parts_per_txn > 1 && rng.unit() < cfg_.multi_part_ratio) {
      while (chosen.size() < cfg_.parts_per_txn) {
        const auto p = static_cast<uint32_t>(rng.uniform(parts));
        if (std::find(chosen.begin(), chosen.end(), p) == chosen.end()) chosen.push_back(p);
      }
    }
    for (uint32_t r = 0; r < cfg_.req_per_txn; r++) {
      const uint32_t part = chosen[r % chosen.size()];
      // The hot spot, an update of the partition's first key.
      const bool hot = !read_only && cfg_.hotspot_position > 0;
      if (hot && r + 1 == cfg_.hotspot_position) {
        qs.requests.push_back({part, Op::Update, 0});
        continue;
      }
      // YCSB-E's accesses first (their draws are skipped when off, so runs
      // without them draw as before).
      const double u = cfg_.scan_ratio > 0 || cfg_.insert_ratio > 0 ? rng.unit() : 1.0;
      if (u < cfg_.scan_ratio) {
        const auto length = static_cast<uint16_t>(rng.range(1, cfg_.max_scan_length));
        qs.requests.push_back({zipf_.next(rng) * parts + part, Op::Scan, length});
        continue;
      }
      if (u < cfg_.scan_ratio + cfg_.insert_ratio && !read_only) {
        qs.requests.push_back({part, Op::Insert, 0});
        continue;
      }
      uint64_t key;
      bool fresh;
      do {  // the keys a transaction reads or updates are distinct (and not the hot spot)
        key = zipf_.next(rng) * parts + part;
        fresh = !hot || key != part;
        for (uint32_t j = q.begin; j < qs.requests.size(); j++) {
          const Request& o = qs.requests[j];
          fresh &= o.key != key || o.op == Op::Scan || o.op == Op::Insert;
        }
      } while (!fresh);
      const bool write = !read_only && rng.unit() < cfg_.write_ratio;
      qs.requests.push_back({key, write ? Op::Update : Op::Read, 0});
    }
    if (cfg_.key_order == KeyOrder::Sorted) {
      std::sort(qs.requests.begin() + q.begin, qs.requests.end(),
                [](const Request& a, const Request& b) { return a.key < b.key; });
    }
    qs.queries.push_back(q);
  }
  if (cfg_.materialize == Materialize::Queried) load_queried(qs);
  return qs;
}

void Ycsb::partitions_of(const Queries& qs, std::size_t i, std::vector<uint32_t>& out) const {
  out.clear();
  const Query& q = qs.queries[i];
  for (uint32_t r = q.begin; r < q.begin + q.count; r++) {
    const auto p = static_cast<uint32_t>(qs.requests[r].key % cfg_.partitions);
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
}

namespace {

std::string unless_multi_partition(const cc::SchemeTraits& /*scheme*/, const Config& c) {
  const YcsbConfig& y = c.settings<YcsbConfig>();
  return y.partitions > 1 && y.parts_per_txn > 1
             ? ""
             : "a multi-partition transaction needs --partitions and --parts-per-txn above 1";
}

// A ratio as an error line quotes it.
std::string shown(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string unless_scans(const cc::SchemeTraits& /*scheme*/, const Config& c) {
  return c.settings<YcsbConfig>().scan_ratio > 0 ? "" : "only scans (--scan-ratio above 0) have a length";
}

std::string unless_long_readers(const cc::SchemeTraits& /*scheme*/, const Config& c) {
  return c.settings<YcsbConfig>().long_reader_ratio > 0 ? ""
                                                        : "only long readers (--long-reader-ratio above 0) have rows";
}

}  // namespace

void Ycsb::resume(const Database& /*db*/) {
  const uint64_t base = rows_per_part_ * cfg_.partitions;  // the first key past the loaded ones
  uint64_t top = 0;
  bool inserted = false;
  table_->index().for_each([&](uint64_t key, Row* /*row*/) {
    if (key < base) return;
    inserted = true;
    top = std::max(top, key);
  });
  if (!inserted) return;
  // next_insert_key(w, p) = base + (n * workers + w) * partitions + p: from
  // this n on, past `top` for every worker and partition.
  const uint64_t stride = uint64_t{inserts_.size()} * cfg_.partitions;
  for (InsertSeq& s : inserts_) s.next = (top - base) / stride + 1;
}

std::vector<Knob> Ycsb::knobs() {
  std::vector<Knob> t;
  t.push_back(integer<uint64_t>(
      "rows", "ycsb.rows", 1, uint64_t{1} << 34, +[](Config& c) -> uint64_t& { return c.settings<YcsbConfig>().rows; },
      "YCSB rows"));
  t.push_back(integer<uint32_t>(
      "req-per-txn", "ycsb.req_per_txn", 1, 64,
      +[](Config& c) -> uint32_t& { return c.settings<YcsbConfig>().req_per_txn; }, "YCSB accesses per transaction"));
  t.push_back(real(
      "theta", "ycsb.theta", 0, 0.9999, +[](Config& c) -> double& { return c.settings<YcsbConfig>().theta; },
      "YCSB Zipfian skew (0 = uniform)"));
  t.push_back(real(
      "write-ratio", "ycsb.write_ratio", 0, 1,
      +[](Config& c) -> double& { return c.settings<YcsbConfig>().write_ratio; },
      "YCSB probability that an access is an update"));
  t.push_back(real(
      "read-only-txn-ratio", "ycsb.read_only_txn_ratio", 0, 1,
      +[](Config& c) -> double& { return c.settings<YcsbConfig>().read_only_txn_ratio; },
      "YCSB fraction of read-only transactions"));
  t.push_back(integer<uint32_t>(
      "partitions", "ycsb.partitions", 1, 1024,
      +[](Config& c) -> uint32_t& { return c.settings<YcsbConfig>().partitions; },
      "YCSB partitions (key % partitions)"));
  t.push_back(real(
      "multi-part-ratio", "ycsb.multi_part_ratio", 0, 1,
      +[](Config& c) -> double& { return c.settings<YcsbConfig>().multi_part_ratio; },
      "YCSB fraction of multi-partition transactions"));
  t.back().ignored_because = unless_multi_partition;
  t.push_back(integer<uint32_t>(
      "parts-per-txn", "ycsb.parts_per_txn", 1, 64,
      +[](Config& c) -> uint32_t& { return c.settings<YcsbConfig>().parts_per_txn; },
      "YCSB partitions a multi-partition transaction touches"));
  t.push_back(choice(
      "key-order", "ycsb.key_order", kKeyOrderNames,
      +[](Config& c) -> KeyOrder& { return c.settings<YcsbConfig>().key_order; },
      "YCSB order of a transaction's keys"));
  t.push_back(integer<uint32_t>(
      "fields", "ycsb.fields", 1, 64, +[](Config& c) -> uint32_t& { return c.settings<YcsbConfig>().fields; },
      "YCSB string columns per row"));
  t.push_back(integer<uint32_t>(
      "field-size", "ycsb.field_size", 1, 4096,
      +[](Config& c) -> uint32_t& { return c.settings<YcsbConfig>().field_size; }, "YCSB bytes per string column"));
  t.push_back(choice(
      "primary-index", "ycsb.primary_index", kIndexTypeNames,
      +[](Config& c) -> IndexType& { return c.settings<YcsbConfig>().primary_index; },
      "YCSB table's primary index: hash, or ordered (the B+-tree)"));
  t.push_back(choice(
      "materialize", "ycsb.materialize", kMaterializeNames,
      +[](Config& c) -> Materialize& { return c.settings<YcsbConfig>().materialize; },
      "YCSB rows the load makes: all, or only those the workers' pre-generated queries read or update (the key space "
      "of --rows without its memory: the paper's 20 M rows)"));
  t.push_back(real(
      "scan-ratio", "ycsb.scan_ratio", 0, 1, +[](Config& c) -> double& { return c.settings<YcsbConfig>().scan_ratio; },
      "YCSB-E: probability that an access is a range scan (needs --primary-index ordered)"));
  t.push_back(real(
      "insert-ratio", "ycsb.insert_ratio", 0, 1,
      +[](Config& c) -> double& { return c.settings<YcsbConfig>().insert_ratio; },
      "YCSB-E: probability that an access inserts a new key (not in read-only transactions)"));
  t.push_back(integer<uint32_t>(
      "max-scan-length", "ycsb.max_scan_length", 1, 1000,
      +[](Config& c) -> uint32_t& { return c.settings<YcsbConfig>().max_scan_length; },
      "YCSB-E: a scan visits up to N rows, N uniform in 1..max-scan-length"));
  t.back().ignored_because = unless_scans;
  t.push_back(real(
      "long-reader-ratio", "ycsb.long_reader_ratio", 0, 1,
      +[](Config& c) -> double& { return c.settings<YcsbConfig>().long_reader_ratio; },
      "YCSB: probability that a transaction is a long reader, a read-only one of --long-reader-rows consecutive keys "
      "(reported as type long_read)"));
  t.push_back(integer<uint64_t>(
      "long-reader-rows", "ycsb.long_reader_rows", 1, uint64_t{1} << 34,
      +[](Config& c) -> uint64_t& { return c.settings<YcsbConfig>().long_reader_rows; },
      "YCSB: rows a long reader reads, at most --rows"));
  t.back().ignored_because = unless_long_readers;
  t.push_back(integer<uint32_t>(
      "hotspot-position", "ycsb.hotspot_position", 0, 64,
      +[](Config& c) -> uint32_t& { return c.settings<YcsbConfig>().hotspot_position; },
      "YCSB hot spot (Bamboo's): the K-th access of every read-write transaction updates one hot row, the first key "
      "of its partition, and the other keys avoid it; 0: none"));
  return t;
}

std::string Ycsb::validate(const Config& config) {
  const YcsbConfig& y = config.settings<YcsbConfig>();
  if (y.req_per_txn > y.rows) {
    return "--req-per-txn " + std::to_string(y.req_per_txn) + ": must be at most --rows (" + std::to_string(y.rows) +
           ") because a transaction's keys are distinct";
  }
  if (y.partitions > y.rows) {
    return "--partitions " + std::to_string(y.partitions) + ": must be at most --rows (" + std::to_string(y.rows) + ")";
  }
  if (y.hotspot_position > y.req_per_txn) {
    return "--hotspot-position " + std::to_string(y.hotspot_position) + ": must be at most --req-per-txn (" +
           std::to_string(y.req_per_txn) + ")";
  }
  if (y.parts_per_txn > y.partitions) {
    return "--parts-per-txn " + std::to_string(y.parts_per_txn) + ": must be at most --partitions (" +
           std::to_string(y.partitions) + ")";
  }
  if (y.parts_per_txn > y.req_per_txn) {
    return "--parts-per-txn " + std::to_string(y.parts_per_txn) + ": must be at most --req-per-txn (" +
           std::to_string(y.req_per_txn) + ")";
  }
  if (y.scan_ratio + y.insert_ratio > 1) {
    return "--scan-ratio " + shown(y.scan_ratio) + " and --insert-ratio " + shown(y.insert_ratio) +
           ": must sum to at most 1";
  }
  if (y.materialize == Materialize::Queried && (y.scan_ratio > 0 || y.insert_ratio > 0)) {
    return "--materialize queried loads only the rows the queries read or update; YCSB-E's scans and inserts "
           "(--scan-ratio, --insert-ratio) need every row: use --materialize all";
  }
  if (y.scan_ratio > 0 && y.primary_index != IndexType::Ordered) {
    return "--scan-ratio " + shown(y.scan_ratio) + ": scans need an ordered primary index (--primary-index ordered)";
  }
  if (y.scan_ratio > 0 && y.partitions > 1) {
    return "--scan-ratio " + shown(y.scan_ratio) + " with --partitions " + std::to_string(y.partitions) +
           ": a scan's keys run through every partition; use one";
  }
  if (y.long_reader_ratio > 0) {
    if (y.long_reader_rows > y.rows) {
      return "--long-reader-rows " + std::to_string(y.long_reader_rows) + ": must be at most --rows (" +
             std::to_string(y.rows) + ") because a long reader reads each key once";
    }
    if (y.partitions > 1) {
      return "--long-reader-ratio " + shown(y.long_reader_ratio) + " with --partitions " +
             std::to_string(y.partitions) + ": a long reader's keys run through every partition; use one";
    }
    if (y.materialize == Materialize::Queried) {
      return "--materialize queried loads only the rows the queries read or update; long readers "
             "(--long-reader-ratio) need every row: use --materialize all";
    }
  }
  if (static_cast<uint64_t>(y.req_per_txn) * y.partitions > y.rows) {
    return "--req-per-txn " + std::to_string(y.req_per_txn) + ": with --partitions " + std::to_string(y.partitions) +
           " each partition needs at least that many rows (--rows " + std::to_string(y.rows) + ")";
  }
  return {};
}

}  // namespace abyss
