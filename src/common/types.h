#pragma once
// Strong types for the ids that flow through the engine (never a bare integer), and
// the status every transaction operation answers with.
#include <compare>
#include <cstdint>

namespace abyss {

template <class Tag, class Rep = uint64_t>
struct StrongId {
  Rep value{};
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value(v) {}
  constexpr bool operator==(const StrongId&) const = default;
  // Written out rather than defaulted: clang-tidy 14's modernize-use-nullptr
  // flags the `!= 0` inside a defaulted <=> once a strong id is ordered.
  constexpr auto operator<=>(const StrongId& other) const { return value <=> other.value; }
};

// Id of a committed transaction in the history log; 0 is the initial load.
using TxnId = StrongId<struct TxnIdTag>;
// A worker of the run, 0..threads-1; `.value` indexes per-worker arrays.
using WorkerId = StrongId<struct WorkerIdTag, uint32_t>;
// A timestamp from the run's timestamp source (--ts-alloc): unique and never 0;
// ordered within a worker, and across workers with the mutex and atomic methods.
using Timestamp = StrongId<struct TimestampTag>;
// A row, addressed by pointer and otherwise opaque: storage/row.h lays out
// its parts (RowLayout), and an index (src/index/) maps keys to it.
struct Row;

inline constexpr TxnId kLoadTxn{0};
// Never allocated, so older than every timestamp: a row's timestamps before
// any transaction set them, an empty pending-write or waiting slot.
inline constexpr Timestamp kNoTimestamp{0};

// What a transaction operation answers. CC aborts are ordinary control flow:
// the runner restarts the transaction (docs/architecture.md, "One run").
enum class [[nodiscard]] Rc : uint8_t{
    Ok,
    Abort,         // CC abort: roll back, back off, restart with the same inputs
    NotFound,      // the key has no live row; the transaction may go on
    LogicalAbort,  // the transaction's own logic rolls back (TPC-C 2.4.2.3); not retried
};

// The order in which a scan visits its range (Txn::scan).
enum class ScanOrder : uint8_t { Ascending, Descending };

}  // namespace abyss
