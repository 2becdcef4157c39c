#include "embed/store.h"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cc/registry.h"
#include "cc/schemes.h"
#include "common/arena.h"
#include "engine/run_context.h"
#include "storage/database.h"
#include "txn/attempts.h"
#include "txn/txn.h"
#include "txn/worker_set.h"

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
 public:
  // The run's set-up (engine/run_context.h) without a load: the caller
  // creates and loads the tables, so each session keeps a cursor for as
  // many as a store may hold.
  StoreOf(const Config& config, uint32_t sessions)
      : Impl(config.cc), ctx_(config, config.partitions), cfg_(ctx_.config()), db_(ctx_.db()) {
    WorkerSet& workers = ctx_.start_workers(kMaxTables);
    CC& cc = ctx_.start_cc();
    for (uint32_t i = 0; i < sessions; i++) txns_.push_back(std::make_unique<Txn<CC>>(cc, workers[i], db_.layout()));
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
    t.load_row(load_cursors_[t.id()], load_nodes_, Table::kDefaultBlockRows, key, &RunContext<CC>::init_row, fill);
  }

  uint32_t sessions() const override { return static_cast<uint32_t>(txns_.size()); }

  Outcome run(uint32_t session, const std::function<Rc(Transaction&)>& body,
              std::span<const uint32_t> partitions) override {
    if (session >= txns_.size()) {
      throw std::invalid_argument("session " + std::to_string(session) + " of a store with " +
                                  std::to_string(txns_.size()) + " sessions");
    }
    Session hooks{{}, *this, body, partitions, TransactionOf<CC>(*txns_[session])};
    Attempts a;
    try {
      a = run_attempts(*txns_[session], ctx_.workers()[session], cfg_, false, 0, hooks);
    } catch (...) {
      ctx_.worker_left(session);
      throw;
    }
    // Between transactions a session holds no row: the other sessions'
    // removed rows' slots may be used again without waiting for it.
    ctx_.worker_left(session);
    return {a.rc, a.aborts};
  }

 private:
  // Tables a store may hold: each session keeps an insert cursor per table.
  static constexpr std::size_t kMaxTables = 64;

  // The attempt loop's hooks (txn/attempts.h): the caller's body, restarted
  // after every CC abort until it commits.
  struct Session : AttemptHooks {
    StoreOf& store;
    const std::function<Rc(Transaction&)>& body_of;
    std::span<const uint32_t> partitions;
    TransactionOf<CC> view;

    void declare(Txn<CC>& txn) {
      if constexpr (CC::kTraits.declares_partitions) store.declare(txn, partitions);
    }
    Rc body(Txn<CC>& /*txn*/) { return body_of(view); }
  };

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

  Arena load_nodes_{std::size_t{1} << 20, "the loaded rows' index nodes"};  // outlives the database
  RunContext<CC> ctx_;
  const Config& cfg_;
  Database& db_;
  std::vector<RowCursor> load_cursors_ = std::vector<RowCursor>(kMaxTables);
  std::vector<std::unique_ptr<Txn<CC>>> txns_;
};

}  // namespace

Store::Store(const Config& config, uint32_t sessions) {
  if (sessions == 0) throw std::invalid_argument("a store needs at least one session");
  const cc::SchemeTraits* s = cc::find_scheme(config.cc);
  if (s == nullptr) {
    throw std::invalid_argument("unknown scheme '" + config.cc + "' (one of " + cc::scheme_names() + ")");
  }
  // What a run keeps beside its transactions, a store does not.
  if (!config.history_path.empty()) throw std::invalid_argument("a store records no history: leave history_path empty");
  if (config.log.policy != LogPolicy::Off || config.log.recover) {
    throw std::invalid_argument("a store keeps no log: leave log.policy off and log.recover false");
  }
  if (!config.dump_dir.empty()) throw std::invalid_argument("a store dumps no tables: leave dump_dir empty");
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
