#include "workload/tatp/tatp.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "platform/thread.h"
#include "storage/footprint.h"

namespace abyss {

namespace {

// The load's rows per subscriber, on average: one to four access-info and
// special-facility rows, and zero to three call-forwarding rows per facility.
constexpr double kAccessInfoPerSubscriber = 2.5;
constexpr double kFacilitiesPerSubscriber = 2.5;
constexpr double kForwardingsPerSubscriber = 2.5 * 1.5;

// `n` of 1..of (of <= 4), distinct, in ascending order.
std::vector<uint64_t> distinct(Rng& rng, uint64_t n, uint64_t of) {
  std::array<uint64_t, 4> all = {1, 2, 3, 4};
  for (uint64_t i = 0; i < n; i++) std::swap(all[i], all[i + rng.uniform(of - i)]);
  std::vector<uint64_t> picked(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
  std::sort(picked.begin(), picked.end());
  return picked;
}

void letters(Rng& rng, char* out, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) out[i] = static_cast<char>('A' + rng.uniform(26));
}

}  // namespace

Tatp::Tatp(const Config& config)
    : cfg_(config.settings<TatpConfig>()),
      partitions_(partitions(config)),
      a_(cfg_.subscribers <= 1'000'000    ? 65'535
         : cfg_.subscribers <= 10'000'000 ? 1'048'575
                                          : 2'097'151),
      ledger_(config.threads),
      redraw_(config.threads) {
  for (uint32_t w = 0; w < config.threads; w++) redraw_[w].rng = Rng(config.seed * 7919 + w + 1);
}

uint32_t Tatp::partitions(const Config& config) {
  return std::max(1u, std::min(config.threads, config.settings<TatpConfig>().subscribers));
}

void Tatp::sub_nbr(uint64_t s_id, char* out) { number(s_id, out); }

void Tatp::number(uint64_t n, char* out) {
  for (uint32_t i = kSubNbrDigits; i-- > 0; n /= 10) out[i] = static_cast<char>('0' + n % 10);
}

Schema Tatp::subscriber_schema() {
  Schema s;
  s.add_int64("S_ID");
  s.add_chars("SUB_NBR", kSubNbrDigits + 1);
  s.add_int64("BITS");       // bit_1..bit_10, bit i-1 for bit_i
  s.add_int64("HEXES");      // hex_1..hex_10, four bits each
  s.add_chars("BYTES", 10);  // byte2_1..byte2_10
  s.add_int64("MSC_LOCATION");
  s.add_int64("VLR_LOCATION");
  return s;
}

Schema Tatp::access_info_schema() {
  Schema s;
  s.add_int64("S_ID");
  s.add_int64("AI_TYPE");
  s.add_int64("DATA1");
  s.add_int64("DATA2");
  s.add_chars("DATA3", 3);
  s.add_chars("DATA4", 5);
  return s;
}

Schema Tatp::facility_schema() {
  Schema s;
  s.add_int64("S_ID");
  s.add_int64("SF_TYPE");
  s.add_int64("IS_ACTIVE");
  s.add_int64("ERROR_CNTRL");
  s.add_int64("DATA_A");
  s.add_chars("DATA_B", 5);
  return s;
}

Schema Tatp::forwarding_schema() {
  Schema s;
  s.add_int64("S_ID");
  s.add_int64("SF_TYPE");
  s.add_int64("START_TIME");
  s.add_int64("END_TIME");
  s.add_chars("NUMBERX", kSubNbrDigits + 1);
  return s;
}

uint64_t Tatp::subscriber_primary_key(const char* data) {
  static const Column id = subscriber_schema().column("S_ID");
  return static_cast<uint64_t>(get_int64(data, id));
}

uint64_t Tatp::sub_nbr_key(const char* data) {
  static const Column nbr = subscriber_schema().column("SUB_NBR");
  uint64_t n = 0;
  for (uint32_t i = 0; i < kSubNbrDigits; i++) n = n * 10 + static_cast<uint64_t>(data[nbr.offset + i] - '0');
  return n;
}

uint64_t Tatp::estimate_load_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align,
                                   uint32_t loaders) {
  const uint64_t p = config.settings<TatpConfig>().subscribers;
  const RowLayout layout = RowLayout::for_meta(meta_size, meta_align, config.storage.align);
  const auto rows_of = [&](double per_subscriber) {
    return static_cast<uint64_t>(per_subscriber * static_cast<double>(p)) + 1;
  };
  struct Part {
    Schema schema;
    uint64_t rows;
    bool ordered;
  };
  const Part parts[] = {{subscriber_schema(), p, false},
                        {access_info_schema(), rows_of(kAccessInfoPerSubscriber), false},
                        {facility_schema(), rows_of(kFacilitiesPerSubscriber), true},
                        {forwarding_schema(), rows_of(kForwardingsPerSubscriber), true}};
  uint64_t bytes = footprint::ordered_index(p);  // SUBSCRIBER's index on SUB_NBR
  for (const Part& part : parts) {
    const uint32_t stride = Table::stride_for(layout, part.schema);
    bytes += part.ordered ? footprint::ordered_index(part.rows) : footprint::hash_index(part.rows, config.storage);
    for (uint32_t l = 0; l < loaders; l++) {
      const uint64_t n = part.rows * (l + 1) / loaders - part.rows * l / loaders;
      bytes += footprint::table_rows(n, kLoadBlockRows, stride, config.storage);
      if (!part.ordered) bytes += footprint::index_nodes(n, config.storage);
    }
  }
  return bytes;
}

uint64_t Tatp::estimate_worker_bytes(const Config& config, std::size_t /*meta_size*/, std::size_t /*meta_align*/) {
  return uint64_t{config.queries_per_worker} * sizeof(Query);
}

void Tatp::load(Database& db, uint32_t loaders, void (*init_row)(void* meta)) {
  const uint64_t p = cfg_.subscribers;
  subscriber_ = &db.create_table("subscriber", subscriber_schema(), p);
  subscriber_->set_primary_key_of(subscriber_primary_key);
  if (subscriber_->add_index("by_sub_nbr", IndexType::Ordered, p, sub_nbr_key) != kSubNbrIndex) {
    throw std::logic_error("SUBSCRIBER's index on SUB_NBR is not its first secondary index");
  }
  access_info_ = &db.create_table("access_info", access_info_schema(),
                                  static_cast<uint64_t>(kAccessInfoPerSubscriber * static_cast<double>(p)) + 1);
  facility_ = &db.create_table("special_facility", facility_schema(),
                               static_cast<uint64_t>(kFacilitiesPerSubscriber * static_cast<double>(p)) + 1,
                               IndexType::Ordered);
  forwarding_ = &db.create_table("call_forwarding", forwarding_schema(),
                                 static_cast<uint64_t>(kForwardingsPerSubscriber * static_cast<double>(p)) + 1,
                                 IndexType::Ordered);
  const Schema& ss = subscriber_->schema();
  s_ = {ss.column("S_ID"),  ss.column("SUB_NBR"),      ss.column("BITS"),        ss.column("HEXES"),
        ss.column("BYTES"), ss.column("MSC_LOCATION"), ss.column("VLR_LOCATION")};
  const Schema& fs = facility_->schema();
  sf_ = {fs.column("S_ID"),        fs.column("SF_TYPE"), fs.column("IS_ACTIVE"),
         fs.column("ERROR_CNTRL"), fs.column("DATA_A"),  fs.column("DATA_B")};
  const Schema& cs = forwarding_->schema();
  cf_ = {cs.column("S_ID"), cs.column("SF_TYPE"), cs.column("START_TIME"), cs.column("END_TIME"), cs.column("NUMBERX")};
  const Schema& as = access_info_->schema();
  ai_s_id_ = as.column("S_ID");
  ai_type_ = as.column("AI_TYPE");
  ai_data1_ = as.column("DATA1");
  const Column ai_data2 = as.column("DATA2");
  const Column ai_data3 = as.column("DATA3");
  const Column ai_data4 = as.column("DATA4");
  if (ss.column(2).name != "BITS" || ss.column(6).name != "VLR_LOCATION" || fs.column(4).name != "DATA_A") {
    throw std::logic_error("TATP's update masks name the wrong columns");
  }

  std::vector<uint64_t> forwardings(loaders, 0);
  platform::run_parallel(loaders, [&](uint32_t l) {
    RowCursor cursors[4];
    Arena nodes(std::size_t{8} << 20, "the index nodes of TATP's tables");
    const uint64_t lo = p * l / loaders + 1;
    const uint64_t hi = p * (l + 1) / loaders + 1;
    for (uint64_t s = lo; s < hi; s++) {
      // Drawn from the subscriber's id, so the load is the same whatever the loaders.
      Rng rng(s * 0x9E3779B97F4A7C15ULL + 1);
      subscriber_->load_row(cursors[0], nodes, kLoadBlockRows, subscriber_key(s), init_row, [&](char* d) {
        set_int64(d, s_.s_id, static_cast<int64_t>(s));
        sub_nbr(s, d + s_.sub_nbr.offset);
        set_int64(d, s_.bits, static_cast<int64_t>(rng.uniform(1 << 10)));
        set_int64(d, s_.hexes, static_cast<int64_t>(rng.uniform(uint64_t{1} << 40)));
        for (uint32_t b = 0; b < 10; b++) d[s_.bytes.offset + b] = static_cast<char>(rng.uniform(256));
        set_int64(d, s_.msc_location, static_cast<int64_t>(rng.uniform(uint64_t{1} << 32)));
        set_int64(d, s_.vlr_location, static_cast<int64_t>(rng.uniform(uint64_t{1} << 32)));
      });
      for (const uint64_t type : distinct(rng, rng.range(1, 4), 4)) {
        access_info_->load_row(cursors[1], nodes, kLoadBlockRows, access_info_key(s, type), init_row, [&](char* d) {
          set_int64(d, ai_s_id_, static_cast<int64_t>(s));
          set_int64(d, ai_type_, static_cast<int64_t>(type));
          set_int64(d, ai_data1_, static_cast<int64_t>(rng.uniform(256)));
          set_int64(d, ai_data2, static_cast<int64_t>(rng.uniform(256)));
          letters(rng, d + ai_data3.offset, 3);
          letters(rng, d + ai_data4.offset, 5);
        });
      }
      for (const uint64_t type : distinct(rng, rng.range(1, 4), 4)) {
        facility_->load_row(cursors[2], nodes, kLoadBlockRows, facility_key(s, type), init_row, [&](char* d) {
          set_int64(d, sf_.s_id, static_cast<int64_t>(s));
          set_int64(d, sf_.sf_type, static_cast<int64_t>(type));
          set_int64(d, sf_.is_active, rng.uniform(100) < 85 ? 1 : 0);
          set_int64(d, sf_.error_cntrl, static_cast<int64_t>(rng.uniform(256)));
          set_int64(d, sf_.data_a, static_cast<int64_t>(rng.uniform(256)));
          letters(rng, d + sf_.data_b.offset, 5);
        });
        // Zero to three call forwardings, at distinct start times.
        const uint64_t n = rng.uniform(4);
        for (const uint64_t slot : distinct(rng, n, 3)) {
          const uint64_t start = (slot - 1) * 8;
          forwarding_->load_row(cursors[3], nodes, kLoadBlockRows, forwarding_key(s, type, start), init_row,
                                [&](char* d) {
                                  set_int64(d, cf_.s_id, static_cast<int64_t>(s));
                                  set_int64(d, cf_.sf_type, static_cast<int64_t>(type));
                                  set_int64(d, cf_.start_time, static_cast<int64_t>(start));
                                  set_int64(d, cf_.end_time, static_cast<int64_t>(start + rng.range(1, 8)));
                                  number(rng.uniform(uint64_t{1'000'000'000'000'000}), d + cf_.numberx.offset);
                                });
          forwardings[l]++;
        }
      }
    }
    subscriber_->adopt(std::move(nodes));
  });
  for (const uint64_t n : forwardings) start_rows_ += n;
}

void Tatp::resume(const Database& /*db*/) { start_rows_ = forwarding_rows(); }

uint64_t Tatp::forwarding_rows() const {
  uint64_t n = 0;
  forwarding_->for_each_live([&](const Row*) { n++; });
  return n;
}

uint32_t Tatp::draw_subscriber(Rng& rng) const {
  const uint64_t p = cfg_.subscribers;
  return static_cast<uint32_t>((rng.range(0, a_) | rng.range(1, p)) % p + 1);
}

Tatp::Queries Tatp::generate(uint32_t /*worker*/, uint32_t count, Rng& rng) const {
  Queries qs;
  qs.queries.reserve(count);
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t type = draw_type(rng, kMix);
    Query q{};
    q.type = type;
    q.s_id = draw_subscriber(rng);
    q.kind = static_cast<uint8_t>(rng.range(1, 4));
    q.start_time = static_cast<uint8_t>(rng.uniform(3) * 8);
    switch (type) {
      case GetNewDestination:
        q.end_time = static_cast<uint8_t>(rng.range(1, 24));
        break;
      case UpdateSubscriberData:
        q.bit = static_cast<uint8_t>(rng.uniform(2));
        q.data_a = static_cast<uint8_t>(rng.uniform(256));
        break;
      case UpdateLocation:
        q.vlr_location = static_cast<uint32_t>(rng.uniform(uint64_t{1} << 32));
        break;
      case InsertCallForwarding:
      case DeleteCallForwarding:
        draw_call_forwarding(q, rng);
        break;
      default:
        break;
    }
    qs.queries.push_back(q);
  }
  return qs;
}

void Tatp::draw_call_forwarding(Query& q, Rng& rng) {
  q.kind = static_cast<uint8_t>(rng.range(1, 4));
  q.start_time = static_cast<uint8_t>(rng.uniform(3) * 8);
  q.end_time = static_cast<uint8_t>(q.start_time + rng.range(1, 8));
  q.numberx = rng.uniform(uint64_t{1'000'000'000'000'000});
}

Tatp::Query Tatp::redrawn(const Query& q, uint32_t worker) const {
  Query fresh = q;
  Rng& rng = redraw_[worker].rng;
  const uint32_t s = draw_subscriber(rng);
  const uint32_t same_partition = s - s % partitions_ + q.s_id % partitions_;
  if (same_partition >= 1 && same_partition <= cfg_.subscribers) fresh.s_id = same_partition;
  draw_call_forwarding(fresh, rng);
  return fresh;
}

std::vector<ConsistencyCheck> Tatp::check() const {
  // Every row is indexed under the key its columns give, and what it refers
  // to is there and live.
  uint64_t rows = 0;
  uint64_t unindexed = 0;
  uint64_t dangling = 0;
  auto live = [](const Table& t, uint64_t key) {
    Row* r = t.index().find(key);
    return r != nullptr && (RowLayout::header(r).flags & (RowHeader::kLive | RowHeader::kDeleted)) == RowHeader::kLive;
  };
  subscriber_->for_each_live([&](const Row* r) {
    const char* d = subscriber_->layout().data(r);
    const auto s = static_cast<uint64_t>(get_int64(d, s_.s_id));
    rows++;
    unindexed += subscriber_->index().find(subscriber_key(s)) != r || subscriber_->index(kSubNbrIndex).find(s) != r;
  });
  access_info_->for_each_live([&](const Row* r) {
    const char* d = access_info_->layout().data(r);
    const auto s = static_cast<uint64_t>(get_int64(d, ai_s_id_));
    rows++;
    unindexed += access_info_->index().find(access_info_key(s, static_cast<uint64_t>(get_int64(d, ai_type_)))) != r;
    dangling += !live(*subscriber_, subscriber_key(s));
  });
  facility_->for_each_live([&](const Row* r) {
    const char* d = facility_->layout().data(r);
    const auto s = static_cast<uint64_t>(get_int64(d, sf_.s_id));
    rows++;
    unindexed += facility_->index().find(facility_key(s, static_cast<uint64_t>(get_int64(d, sf_.sf_type)))) != r;
    dangling += !live(*subscriber_, subscriber_key(s));
  });
  uint64_t forwardings = 0;
  uint64_t bad_times = 0;
  forwarding_->for_each_live([&](const Row* r) {
    const char* d = forwarding_->layout().data(r);
    const auto s = static_cast<uint64_t>(get_int64(d, cf_.s_id));
    const auto type = static_cast<uint64_t>(get_int64(d, cf_.sf_type));
    const int64_t start = get_int64(d, cf_.start_time);
    const int64_t end = get_int64(d, cf_.end_time);
    rows++;
    forwardings++;
    unindexed += forwarding_->index().find(forwarding_key(s, type, static_cast<uint64_t>(start))) != r;
    dangling += !live(*facility_, facility_key(s, type));
    bad_times += (start != 0 && start != 8 && start != 16) || end <= start || end > start + 8;
  });
  char refs[256];
  std::snprintf(refs, sizeof refs,
                "%" PRIu64 " rows: %" PRIu64 " not indexed under their own key, %" PRIu64
                " referring to a missing subscriber or facility, %" PRIu64 " with a bad start or end time",
                rows, unindexed, dangling, bad_times);
  const int64_t moved = ledger_.committed_total();
  char count[256];
  std::snprintf(count, sizeof count,
                "%" PRIu64 " now; %" PRIu64 " at the start, %+" PRId64
                " inserted less deleted by committed transactions",
                forwardings, start_rows_, moved);
  return {{"references", unindexed == 0 && dangling == 0 && bad_times == 0, refs},
          {"call forwardings", static_cast<int64_t>(forwardings) == static_cast<int64_t>(start_rows_) + moved, count}};
}

std::vector<Knob> Tatp::knobs() {
  std::vector<Knob> t;
  t.push_back(integer<uint32_t>(
      "subscribers", "tatp.subscribers", 1, 1u << 28,
      +[](Config& c) -> uint32_t& { return c.settings<TatpConfig>().subscribers; },
      "TATP's population: subscriber ids 1..N, each with its access-info, special-facility and "
      "call-forwarding rows"));
  return t;
}

std::string Tatp::validate(const Config& /*config*/) { return {}; }

}  // namespace abyss
