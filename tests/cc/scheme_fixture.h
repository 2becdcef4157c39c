#pragma once
// The fixture of the scheme-rule tests: one small table, one scheme and one
// worker and transaction per participant, so a test can interleave
// transactions by hand.
//
// Timestamps come from one shared TsSource with the run's method (atomic by
// default), so the transaction that calls begin() first is the older one.
#include <cstdint>
#include <memory>
#include <vector>

#include "common/arena.h"
#include "common/config.h"
#include "platform/ts_source.h"
#include "storage/database.h"
#include "txn/txn.h"

namespace abyss::test {

// Rows 0..kFixtureRows-1 hold K = key and V = 100 + key.
constexpr uint64_t kFixtureRows = 8;

// The scheme is built from `cfg` (so a test sets the Config first) and told
// exactly how many workers there are: MVCC's low-water mark counts every
// worker's slot.
template <class CC>
struct Fixture {
  using RowMeta = typename CC::RowMeta;
  Config cfg;
  Database db{RowLayout::for_meta(sizeof(RowMeta), alignof(RowMeta))};
  Table* table;
  Column value;
  platform::TsSource ts{cfg.ts_alloc};
  CC cc;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::unique_ptr<Txn<CC>>> txns;
  Txn<CC>* t0;
  Txn<CC>* t1;
  Txn<CC>* t2;  // null unless three participants
  Arena nodes;
  RowCursor cursor;

  explicit Fixture(const Config& c = Config{}, uint32_t participants = 2) : cfg(c), cc(cfg, participants) {
    Schema s;
    s.add_int64("K");
    s.add_int64("V");
    table = &db.create_table("t", std::move(s), kFixtureRows);
    value = table->schema().column("V");
    for (uint64_t k = 0; k < kFixtureRows; k++) {
      Row* r = table->allocate(cursor);
      new (db.layout().meta(r)) RowMeta();
      set_int64(db.layout().data(r), table->schema().column("K"), static_cast<int64_t>(k));
      set_int64(db.layout().data(r), value, static_cast<int64_t>(100 + k));
      RowLayout::header(r).flags = RowHeader::kLive;
      table->index().insert(k, r, static_cast<HashIndex::Node*>(nodes.allocate(sizeof(HashIndex::Node))));
    }
    for (uint32_t i = 0; i < participants; i++) {
      workers.push_back(std::make_unique<Worker>(i, participants, 1, 1));
      workers.back()->ts = &ts;
      txns.push_back(std::make_unique<Txn<CC>>(cc, *workers.back(), db.layout()));
    }
    t0 = txns[0].get();
    t1 = txns[1].get();
    t2 = participants > 2 ? txns[2].get() : nullptr;
  }

  Row* row(uint64_t key) { return table->index().find(key); }
  RowMeta& meta(uint64_t key) { return t0->row_meta(row(key)); }
  int64_t committed_value(uint64_t key) { return get_int64(db.layout().data(row(key)), value); }

  // Reads V of `key` into `out` when the read answers Ok.
  Rc read(Txn<CC>& t, uint64_t key, int64_t& out) {
    const char* d = nullptr;
    const Rc rc = t.read(*table, key, d);
    if (rc == Rc::Ok) out = get_int64(d, value);
    return rc;
  }

  // Reads V of `key` for writing into `seen`, and sets it to `v` in the
  // transaction's private copy.
  Rc write(Txn<CC>& t, uint64_t key, int64_t v, int64_t& seen) {
    char* d = nullptr;
    const Rc rc = t.update(*table, key, d);
    if (rc == Rc::Ok) {
      seen = get_int64(d, value);
      set_int64(d, value, v);
    }
    return rc;
  }
  Rc write(Txn<CC>& t, uint64_t key, int64_t v) {
    int64_t seen = 0;
    return write(t, key, v, seen);
  }

  // Adds `delta` to V of `key` in one transaction of `t` and commits it.
  Rc add(Txn<CC>& t, uint64_t key, int64_t delta) {
    char* d = nullptr;
    if (Rc rc = t.begin(false); rc != Rc::Ok) return rc;
    if (Rc rc = t.update(*table, key, d); rc != Rc::Ok) return rc;
    set_int64(d, value, get_int64(d, value) + delta);
    return t.commit();
  }

  Rc insert(Txn<CC>& t, uint64_t key, int64_t v) {
    char* d = nullptr;
    const Rc rc = t.insert(*table, key, d);
    if (rc == Rc::Ok) {
      set_int64(d, table->schema().column("K"), static_cast<int64_t>(key));
      set_int64(d, value, v);
    }
    return rc;
  }

  // The transaction's access-set entry for `key`, or null.
  static const Access<CC>* access(Txn<CC>& t, uint64_t key) {
    for (const Access<CC>& a : t.accesses()) {
      if (a.key == key) return &a;
    }
    return nullptr;
  }

  // The next timestamp the shared source hands out, taken by a worker id no
  // transaction uses: tells how many timestamps the transactions took.
  uint64_t probe_ts() {
    platform::TsLocal local;
    return ts.allocate(static_cast<uint32_t>(workers.size()), local);
  }
};

}  // namespace abyss::test
