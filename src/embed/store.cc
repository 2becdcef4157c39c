#include "embed/store.h"

#include <algorithm>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cc/registry.h"
#include "cc/schemes.h"
#include "common/arena.h"
#include "platform/backoff.h"
#include "storage/database.h"
#include "txn/ts_source.h"
#include "txn/txn.h"
#include "txn/worker.h"

namespace abyss {

// What the store keeps, whatever its scheme: the type-erased half.
struct Store::Impl {
  explicit Impl(std::string scheme) : name(std::move(scheme)) {}
  virtual ~Impl() = default;
  virtual Table& create_table(std::string name, Schema schema, uint64_t expected_rows) = 0;
  virtual void load(Table& t, uint64_t key, const std::function<void(char*)>& fill) = 0;
  virtual Outcome run(uint32_t session, const std::function<Rc(Transaction&)>& body,
                      std::span<const uint32_t> partitions) = 0;
  virtual uint32_t sessions() const = 0;

  std::string name;
};

namespace {

template <class CC>
class TransactionOf final : public Transaction {
 public:
  explicit TransactionOf(Txn<CC>& txn) : txn_(txn) {}
  Rc read(Table& t, uint64_t key, const char*& out) override { return txn_.read(t, key, out); }
  Rc update(Table& t, uint64_t key, char*& out) override { return txn_.update(t, key, out); }
  Rc insert(Table& t, uint64_t key, char*& out) override { return txn_.insert(t, key, out); }
  Rc remove(Table& t, uint64_t key) override { return txn_.remove(t, key); }

 private:
  Txn<CC>& txn_;
};

template <class CC>
class StoreOf final : public Store::Impl {
  using RowMeta = typename CC::RowMeta;

 public:
  StoreOf(const Config& config, uint32_t sessions)
      : Impl(config.cc), cfg_(config), ts_(cfg_.ts_alloc), cc_(cfg_, sessions) {
    for (uint32_t i = 0; i < sessions; i++) {
      auto& w = workers_.emplace_back(std::make_unique<Worker>(WorkerId{i}, sessions, cfg_.seed, kMaxTables));
      if (CC::kTraits.allocates_timestamps) w->ts = &ts_;
      txns_.push_back(std::make_unique<Txn<CC>>(cc_, *w, db_.layout()));
    }
  }

  Table& create_table(std::string name, Schema schema, uint64_t expected_rows) override {
    if (db_.tables().size() == kMaxTables) {
      throw std::invalid_argument("a store holds at most " + std::to_string(kMaxTables) + " tables");
    }
    return db_.create_table(std::move(name), std::move(schema), expected_rows);
  }

  void load(Table& t, uint64_t key, const std::function<void(char*)>& fill) override {
    if (t.index().find(key) != nullptr) {
      throw std::invalid_argument("table " + t.name() + " already holds key " + std::to_string(key));
    }
    t.load_row(
        load_cursors_[t.id()], load_nodes_, Table::kDefaultBlockRows, key, [](void* meta) { new (meta) RowMeta(); },
        fill);
  }

  uint32_t sessions() const override { return static_cast<uint32_t>(txns_.size()); }

  Outcome run(uint32_t session, const std::function<Rc(Transaction&)>& body,
              std::span<const uint32_t> partitions) override {
    if (session >= txns_.size()) {
      throw std::invalid_argument("session " + std::to_string(session) + " of a store with " +
                                  std::to_string(txns_.size()) + " sessions");
    }
    Txn<CC>& txn = *txns_[session];
    Worker& w = *workers_[session];
    TransactionOf<CC> view(txn);
    for (uint32_t aborts = 0;; aborts++) {
      w.reset_attempt();
      if constexpr (CC::kTraits.declares_partitions) declare(txn, partitions);
      Rc rc = txn.begin(aborts > 0);
      if (rc == Rc::Ok) {
        try {
          rc = body(view);
        } catch (...) {
          txn.abort();  // releases what the body's accesses took, then the caller sees the exception
          throw;
        }
      }
      if (rc == Rc::Ok) rc = txn.commit();
      if (rc == Rc::Ok) return {Rc::Ok, aborts};
      txn.abort();
      if (rc != Rc::Abort) return {rc, aborts};
      // The runner's backoff (engine/runner.h).
      if (cfg_.backoff != BackoffKind::None) platform::pause_for_ns(w.rng.uniform(cfg_.backoff_bound_ns(aborts) + 1));
    }
  }

 private:
  // Tables a store may hold: each session keeps an insert cursor per table.
  static constexpr std::size_t kMaxTables = 64;

  void declare(Txn<CC>& txn, std::span<const uint32_t> partitions) {
    std::vector<uint32_t>& out = txn.partitions();
    out.clear();
    if (partitions.empty()) {
      for (uint32_t p = 0; p < cfg_.partitions; p++) out.push_back(p);
      return;
    }
    for (uint32_t p : partitions) {
      if (p >= cfg_.partitions) {
        throw std::invalid_argument("partition " + std::to_string(p) + " of a store with " +
                                    std::to_string(cfg_.partitions) + " partitions");
      }
      out.push_back(p);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }

  Config cfg_;
  Arena load_nodes_{std::size_t{1} << 20, "the loaded rows' index nodes"};  // outlives db_
  Database db_{RowLayout::for_meta(sizeof(RowMeta), alignof(RowMeta)), {}, [](void* meta) { new (meta) RowMeta(); }};
  std::vector<RowCursor> load_cursors_ = std::vector<RowCursor>(kMaxTables);
  TsSource ts_;
  CC cc_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::unique_ptr<Txn<CC>>> txns_;
};

}  // namespace

Store::Store(const Config& config, uint32_t sessions) {
  if (sessions == 0) throw std::invalid_argument("a store needs at least one session");
  const cc::SchemeTraits* s = cc::find_scheme(config.cc);
  if (s == nullptr) {
    throw std::invalid_argument("unknown scheme '" + config.cc + "' (one of " + cc::scheme_names() + ")");
  }
  Config cfg = config;
  cfg.cc = std::string(s->name);
  cfg.threads = sessions;
  impl_ = cc::Registry::dispatch(
      cfg.cc, [&]<class CC>() -> std::unique_ptr<Impl> { return std::make_unique<StoreOf<CC>>(cfg, sessions); });
}

Store::~Store() = default;

const std::string& Store::scheme() const { return impl_->name; }
uint32_t Store::sessions() const { return impl_->sessions(); }

Table& Store::create_table(std::string name, Schema schema, uint64_t expected_rows) {
  return impl_->create_table(std::move(name), std::move(schema), expected_rows);
}

void Store::load(Table& t, uint64_t key, const std::function<void(char* data)>& fill) { impl_->load(t, key, fill); }

Outcome Store::run(uint32_t session, const std::function<Rc(Transaction&)>& body,
                   std::span<const uint32_t> partitions) {
  return impl_->run(session, body, partitions);
}

}  // namespace abyss
