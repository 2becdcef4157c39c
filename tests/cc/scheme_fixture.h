#pragma once
// What the scheme tests share: the registered schemes as GoogleTest type lists
// (all of them, or one family's), the fixture (one small table, one scheme and
// one worker and transaction per participant), and the helper that plays a
// waiting transaction on its own thread against a releasing one.
//
// Timestamps come from one shared TsSource with the run's method (atomic by
// default), so the transaction that calls begin() first is the older one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cc/registry.h"
#include "cc/traits.h"
#include "common/arena.h"
#include "common/config.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/thread.h"
#include "storage/database.h"
#include "txn/ts_source.h"
#include "txn/txn.h"

namespace abyss {

// A failed assertion prints a strong id (a Timestamp, say) as its value.
template <class Tag, class Rep>
void PrintTo(const StrongId<Tag, Rep>& id, std::ostream* os) {
  *os << id.value;
}

}  // namespace abyss

namespace abyss::test {

// ============================================================================
// The registry as type lists
// ============================================================================

// A plain list of scheme classes: unlike cc::SchemeList it checks nothing, so
// filtering builds no registry of its own.
template <class... S>
struct TypeList {};

namespace detail {

template <class... Lists>
struct Concat;
template <>
struct Concat<> {
  using type = TypeList<>;
};
template <class... A>
struct Concat<TypeList<A...>> {
  using type = TypeList<A...>;
};
template <class... A, class... B, class... Rest>
struct Concat<TypeList<A...>, TypeList<B...>, Rest...> {
  using type = typename Concat<TypeList<A..., B...>, Rest...>::type;
};

template <class List>
struct Schemes;
template <class... S>
struct Schemes<cc::SchemeList<S...>> {
  using type = TypeList<S...>;
};

template <bool (*Keep)(const cc::SchemeTraits&), class List>
struct Filter;
template <bool (*Keep)(const cc::SchemeTraits&), class... S>
struct Filter<Keep, TypeList<S...>> {
  using type = typename Concat<std::conditional_t<Keep(S::kTraits), TypeList<S>, TypeList<>>...>::type;
};

template <class List>
struct Gtest;
template <class... S>
struct Gtest<TypeList<S...>> {
  static_assert(sizeof...(S) > 0, "a typed suite over no scheme tests nothing");
  using type = ::testing::Types<S...>;
};

}  // namespace detail

// Every registered scheme, in registry order.
using AllSchemes = typename detail::Schemes<cc::Registry>::type;

// The registered schemes whose traits `Keep` accepts, in registry order.
template <bool (*Keep)(const cc::SchemeTraits&)>
using SchemesWhere = typename detail::Filter<Keep, AllSchemes>::type;

// A type list as the argument of TYPED_TEST_SUITE.
template <class List>
using GtestTypes = typename detail::Gtest<List>::type;

// The families whose rules are typed over their members. Each is a filter on
// the traits, so a newly registered scheme joins its family's suites.
constexpr bool any_scheme(const cc::SchemeTraits& /*t*/) { return true; }
constexpr bool with_cc(const cc::SchemeTraits& t) { return t.family != cc::Family::None; }
constexpr bool timestamp_ordering(const cc::SchemeTraits& t) { return t.family == cc::Family::TimestampOrdering; }
constexpr bool optimistic(const cc::SchemeTraits& t) { return t.family == cc::Family::Optimistic; }
// Two-phase locking of single rows: the locking schemes whose conflicts can
// abort. The one locking scheme that never aborts takes a single lock for the
// whole database (global_lock), and has no row lock to conflict on.
constexpr bool row_locking(const cc::SchemeTraits& t) { return t.family == cc::Family::Locking && t.aborts; }

// A scheme that can wait, never aborts and declares no partitions can only
// avoid deadlock by running one transaction at a time: on one test thread, a
// second transaction may begin only once the first has ended.
constexpr bool runs_one_at_a_time(const cc::SchemeTraits& t) { return t.waits && !t.aborts && !t.declares_partitions; }

// Names each typed test case after its scheme's --cc name.
struct SchemeName {
  template <class CC>
  static std::string GetName(int /*index*/) {
    return std::string(CC::kTraits.name);
  }
};

// ============================================================================
// The fixture
// ============================================================================

// Rows 0..kFixtureRows-1 (or as many as the fixture is given) hold K = key
// and V = 100 + key.
constexpr uint64_t kFixtureRows = 8;

// The scheme is built from `cfg` (so a test sets the Config first) and told
// exactly how many workers there are: MVCC's low-water mark counts every
// worker's slot.
//
// A scheme whose traits say it takes no timestamps gets workers without a
// timestamp source, so a stray allocate_ts() fails the test. A scheme that
// declares partitions gets at least one partition per participant, and
// transaction i declares partition i, so transactions driven by one test
// thread never wait for each other; a test that wants them to share a
// partition declares its own.
template <class CC>
struct Fixture {
  using RowMeta = typename CC::RowMeta;
  Config cfg;
  Database db{RowLayout::for_meta(sizeof(RowMeta), alignof(RowMeta)), {}, +[](void* m) { new (m) RowMeta(); }};
  Table* table;
  Column value;
  TsSource ts{cfg.ts_alloc};
  CC cc;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::unique_ptr<Txn<CC>>> txns;
  Txn<CC>* t0;
  Txn<CC>* t1;
  Txn<CC>* t2;  // null unless three participants
  Arena nodes;
  RowCursor cursor;

  // `primary`: the table's primary index (ordered, for scans).
  explicit Fixture(const Config& c = Config{}, uint32_t participants = 2, IndexType primary = IndexType::Hash,
                   uint64_t rows = kFixtureRows)
      : cfg(with_partitions(c, participants)), cc(cfg, participants) {
    Schema s;
    s.add_int64("K");
    s.add_int64("V");
    table = &db.create_table("t", std::move(s), rows, primary);
    value = table->schema().column("V");
    for (uint64_t k = 0; k < rows; k++) load_row(k);
    for (uint32_t i = 0; i < participants; i++) {
      workers.push_back(std::make_unique<Worker>(WorkerId{i}, participants, 1, 1));
      if (CC::kTraits.allocates_timestamps) workers.back()->ts = &ts;
      txns.push_back(std::make_unique<Txn<CC>>(cc, *workers.back(), db.layout()));
      if (CC::kTraits.declares_partitions) txns.back()->partitions() = {i};
    }
    t0 = txns[0].get();
    t1 = txns[1].get();
    t2 = participants > 2 ? txns[2].get() : nullptr;
  }

  Row* row(uint64_t key) { return table->index().find(key); }
  RowMeta& meta(uint64_t key) { return t0->row_meta(row(key)); }
  int64_t committed_value(uint64_t key) { return get_int64(db.layout().data(row(key)), value); }

  int live_rows() {
    int live = 0;
    table->for_each_live([&](const Row*) { live++; });
    return live;
  }

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
    TsLocal local;
    return ts.allocate(static_cast<uint32_t>(workers.size()), local);
  }

 private:
  static Config with_partitions(Config c, uint32_t participants) {
    if (CC::kTraits.declares_partitions) c.partitions = std::max(c.partitions, participants);
    return c;
  }

  void load_row(uint64_t k) {
    Row* r = table->allocate(cursor);
    new (db.layout().meta(r)) RowMeta();
    set_int64(db.layout().data(r), table->schema().column("K"), static_cast<int64_t>(k));
    set_int64(db.layout().data(r), value, static_cast<int64_t>(100 + k));
    RowLayout::header(r).flags = RowHeader::kLive;
    table->index().insert(k, r, nodes);
  }
};

// ============================================================================
// Interleaving on threads
// ============================================================================
//
// One test thread drives every transaction wherever no rule makes one wait.
// Where a rule does, race() plays the waiter on its own platform thread and
// asserts the order of two events, never a duration.

// How long a thread polls for an event before it gives up and goes on, so a
// broken scheme fails an assertion instead of hanging the test. A correct
// scheme makes every awaited event happen within milliseconds.
constexpr uint64_t kLimitMs = 10'000;
// How long a transaction that must wait is left to run, where the test cannot
// see it queue, before the test releases what it waits for. A broken scheme
// would return within it; a correct one cannot return before the release
// whatever the machine's speed.
constexpr uint64_t kWaitMarginMs = 100;

// Polls `done()` every millisecond until it holds or `limit_ms` have passed.
template <class Done>
void await(Done&& done, uint64_t limit_ms = kLimitMs) {
  for (uint64_t ms = 0; ms < limit_ms && !done(); ms++) platform::sleep_ms(1);
}

enum class First : uint8_t { WaiterReturned, ReleaseCalled };

// Runs `waiter` on one thread. A second thread, once `waiter` has started,
// waits until `waiter` returns, `ready()` holds (say, the waiter has queued)
// or `limit_ms` have passed, then calls `release`. Answers which came first:
// `waiter` returning or `release` being called.
template <class Waiter, class Ready, class Release>
First race(uint64_t limit_ms, Waiter&& waiter, Ready&& ready, Release&& release) {
  platform::Atomic<bool> started{false};
  platform::Atomic<bool> returned{false};
  platform::Atomic<uint32_t> events{0};
  uint32_t waiter_at = 0;
  uint32_t release_at = 0;
  platform::run_threads(2, false, [&](uint32_t i) {
    if (i == 0) {
      started.store(true, platform::memory_order_release);
      waiter();
      waiter_at = events.fetch_add(1, platform::memory_order_acq_rel);
      returned.store(true, platform::memory_order_release);
      return;
    }
    while (!started.load(platform::memory_order_acquire)) platform::yield_thread();
    await([&] { return returned.load(platform::memory_order_acquire) || ready(); }, limit_ms);
    release_at = events.fetch_add(1, platform::memory_order_acq_rel);
    release();
  });
  return waiter_at < release_at ? First::WaiterReturned : First::ReleaseCalled;
}

// As above where the test cannot see the waiter queue: the release comes when
// `waiter` returns or after `limit_ms`.
template <class Waiter, class Release>
First race(uint64_t limit_ms, Waiter&& waiter, Release&& release) {
  return race(
      limit_ms, waiter, [] { return false; }, release);
}

}  // namespace abyss::test
