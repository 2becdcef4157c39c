#pragma once
// abyss as a library (docs/embedding.md): tables in memory under one
// concurrency-control scheme named at run time, and transactions that the
// calling program runs from its own threads, one session per thread.
//
// The scheme is picked once, when the store is built, by the same registry
// dispatch as a run (cc/registry.h); a transaction reaches its scheme through
// one virtual call per operation, the price of choosing it at run time.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "common/config.h"
#include "common/types.h"
#include "storage/schema.h"
#include "storage/table.h"

namespace abyss {

// The workload-facing operations of txn/txn.h, for a transaction whose
// scheme is known only at run time. The answers are the same: Ok, Abort (a
// CC abort: return it, and the store restarts the transaction), NotFound.
class Transaction {
 public:
  virtual ~Transaction() = default;
  // The row's contents, valid until the transaction ends.
  virtual Rc read(Table& t, uint64_t key, const char*& out) = 0;
  // A private copy of the row to modify, installed at commit. It is
  // written before the transaction's next operation: a scheme may show it
  // to others from then on (BAMBOO retires the write), and update() is
  // called again to change the row later (a checked build refuses a change
  // made otherwise).
  virtual Rc update(Table& t, uint64_t key, char*& out) = 0;
  // A zeroed row to fill in under a key no other transaction inserts.
  virtual Rc insert(Table& t, uint64_t key, char*& out) = 0;
  virtual Rc remove(Table& t, uint64_t key) = 0;
};

// How a transaction ended: Rc::Ok when it committed, Rc::LogicalAbort when
// its body asked to roll back; `aborts` counts the CC aborts before that.
struct Outcome {
  Rc rc;
  uint32_t aborts;
};

class Store final {
 public:
  // A store under `config.cc` (any registered name, in any case) with
  // `sessions` sessions: session i may run transactions on one thread at a
  // time. The other fields of `config` are the run's knobs that concern one
  // transaction (--latch, --ts-alloc, --backoff, ...). Throws
  // std::invalid_argument naming what is wrong.
  Store(const Config& config, uint32_t sessions);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The scheme's canonical name.
  const std::string& scheme() const;
  uint32_t sessions() const;

  // Tables are created and loaded before the first transaction.
  Table& create_table(std::string name, Schema schema, uint64_t expected_rows);
  // Loads the row `key` of `t`, its data written by `fill`.
  void load(Table& t, uint64_t key, const std::function<void(char* data)>& fill);

  // Runs `body` as one transaction on `session`, restarting it (after the
  // configured backoff) whenever the scheme aborts it, until it commits or
  // the body answers Rc::LogicalAbort. The body must pass on every Rc::Abort
  // it is given. An exception from the body rolls the transaction back and
  // reaches the caller. A scheme that locks partitions (hstore) takes `partitions`
  // before the transaction starts; none named means every partition.
  Outcome run(uint32_t session, const std::function<Rc(Transaction&)>& body, std::span<const uint32_t> partitions = {});

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace abyss
