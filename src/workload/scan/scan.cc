#include "workload/scan/scan.h"

#include "storage/footprint.h"

namespace abyss {

namespace {

Schema item_schema() {
  Schema s;
  s.add_int64("ITEM_KEY");
  s.add_int64("ITEM_VALUE");  // the inserting worker; the loader's rows hold their slot
  return s;
}

Schema summary_schema() {
  Schema s;
  s.add_int64("GROUP_KEY");
  s.add_int64("SEEN");  // rows the group's last committed scan saw
  return s;
}

}  // namespace

Scan::Scan(const Config& config) : cfg_(config.settings<ScanConfig>()) {}

void Scan::load(Database& db, uint32_t /*loaders*/, void (*init_row)(void* meta)) {
  item_ = &db.create_table("item", item_schema(), uint64_t{cfg_.groups} * cfg_.rows, IndexType::Ordered);
  summary_ = &db.create_table("summary", summary_schema(), cfg_.groups);
  item_key_ = item_->schema().column("ITEM_KEY");
  item_value_ = item_->schema().column("ITEM_VALUE");
  seen_ = summary_->schema().column("SEEN");
  const Column group_key = summary_->schema().column("GROUP_KEY");
  // One loader: a run's groups are small.
  RowCursor items;
  RowCursor summaries;
  Arena nodes(std::size_t{64} << 10, "the index nodes of tables item and summary");
  for (uint32_t g = 0; g < cfg_.groups; g++) {
    summary_->load_row(summaries, nodes, Table::kDefaultBlockRows, g, init_row, [&](char* data) {
      set_int64(data, group_key, g);
      set_int64(data, seen_, cfg_.rows);
    });
    for (uint32_t s = 0; s < cfg_.rows; s++) {
      const uint64_t k = loaded_key(g, s, cfg_.rows);
      item_->load_row(items, nodes, Table::kDefaultBlockRows, k, init_row, [&](char* data) {
        set_int64(data, item_key_, static_cast<int64_t>(k));
        set_int64(data, item_value_, s);
      });
    }
  }
  item_->adopt(std::move(nodes));
}

Scan::Queries Scan::generate(uint32_t /*worker*/, uint32_t count, Rng& rng) const {
  Queries qs;
  qs.queries.reserve(count);
  for (uint32_t i = 0; i < count; i++) {
    Query q{};
    const double u = rng.unit();
    q.type = u < cfg_.insert_ratio ? kInsert : u < cfg_.insert_ratio + cfg_.delete_ratio ? kDelete : kScan;
    q.reverse = q.type == kScan && rng.unit() < cfg_.reverse_ratio;
    q.group = static_cast<uint16_t>(rng.uniform(cfg_.groups));
    q.position = rng.uniform(kPositions);
    qs.queries.push_back(q);
  }
  return qs;
}

uint64_t Scan::estimate_load_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align,
                                   uint32_t /*loaders*/) {
  const ScanConfig& s = config.settings<ScanConfig>();
  const RowLayout layout = RowLayout::for_meta(meta_size, meta_align, config.storage.align);
  const uint64_t items = uint64_t{s.groups} * s.rows;
  return footprint::table_rows(items, Table::kDefaultBlockRows, Table::stride_for(layout, item_schema()),
                               config.storage) +
         footprint::table_rows(s.groups, Table::kDefaultBlockRows, Table::stride_for(layout, summary_schema()),
                               config.storage) +
         footprint::ordered_index(items) + footprint::hash_index(s.groups, config.storage) +
         footprint::index_nodes(s.groups, config.storage);
}

uint64_t Scan::estimate_worker_bytes(const Config& config, std::size_t /*meta_size*/, std::size_t /*meta_align*/) {
  return uint64_t{config.queries_per_worker} * sizeof(Query);
}

std::vector<Knob> Scan::knobs() {
  std::vector<Knob> t;
  t.push_back(integer<uint32_t>(
      "scan-groups", "scan.groups", 1, kMaxGroups,
      +[](Config& c) -> uint32_t& { return c.settings<ScanConfig>().groups; },
      "scan: groups, each a key range that scans and inserts meet in"));
  t.push_back(integer<uint32_t>(
      "scan-rows", "scan.rows", 1, kMaxRows, +[](Config& c) -> uint32_t& { return c.settings<ScanConfig>().rows; },
      "scan: rows loaded per group"));
  t.push_back(integer<uint32_t>(
      "scan-length", "scan.length", 1, kMaxLength,
      +[](Config& c) -> uint32_t& { return c.settings<ScanConfig>().length; },
      "scan: rows a scan visits at most, from a random key of its group"));
  t.push_back(real(
      "scan-insert-ratio", "scan.insert_ratio", 0, 1,
      +[](Config& c) -> double& { return c.settings<ScanConfig>().insert_ratio; },
      "scan: fraction of transactions that insert a row (the rest scan)"));
  t.push_back(real(
      "scan-delete-ratio", "scan.delete_ratio", 0, 1,
      +[](Config& c) -> double& { return c.settings<ScanConfig>().delete_ratio; },
      "scan: fraction of transactions that remove a row (the first at or after a random key of a group)"));
  t.push_back(real(
      "scan-reverse-ratio", "scan.reverse_ratio", 0, 1,
      +[](Config& c) -> double& { return c.settings<ScanConfig>().reverse_ratio; },
      "scan: fraction of scans that run in descending key order"));
  return t;
}

std::string Scan::validate(const Config& config) {
  const ScanConfig& s = config.settings<ScanConfig>();
  if (s.insert_ratio + s.delete_ratio > 1) {
    return "--scan-insert-ratio " + std::to_string(s.insert_ratio) + " and --scan-delete-ratio " +
           std::to_string(s.delete_ratio) + ": their sum must be at most 1 (the rest of the transactions scan)";
  }
  if (config.threads > kMaxWorkers) {
    return "--threads " + std::to_string(config.threads) + ": the scan workload's keys hold at most " +
           std::to_string(kMaxWorkers) + " workers";
  }
  return {};
}

}  // namespace abyss
