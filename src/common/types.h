#pragma once
// Strong types for the ids that flow through the engine (never a bare integer), and
// the status every transaction operation answers with.
#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <string_view>

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

// Why concurrency control aborted an attempt: the scheme names the cause as
// it answers Abort (Txn::abort_for), and the run counts each cause per
// transaction type (docs/metrics.md, "Abort causes").
enum class AbortCause : uint8_t {
  LockConflict,     // a row held by another and no waiting for it (NO_WAIT; a pending write under T/O, MVCC)
  Wound,            // wounded by an older transaction (WOUND_WAIT)
  WaitDie,          // younger than a holder it asked to wait for (WAIT_DIE)
  Deadlock,         // the victim of a waits-for cycle (DL_DETECT)
  Timeout,          // waited for a lock past --dl-timeout (DL_DETECT)
  ReadValidation,   // a row read changed before commit (OCC, Silo, TicToc; a read in place)
  WriteValidation,  // a row to write could not be locked at commit (TicToc)
  TimestampOrder,   // arrived after a younger transaction read or wrote the row (T/O, MVCC)
  Phantom,          // a key an insert takes is still held by a removed row older readers may see (MVCC)
  VersionTooNew,    // no version old enough for the reader, or one newer than its snapshot (MVCC)
  VersionTooOld,    // the version the transaction needs is gone
  Partition,        // a partition it needs is held (H-STORE)
  Certifier,        // a predecessor committed no earlier than a successor (SSN's exclusion window)
  Cascade,          // read or overwrote data whose writer then aborted (BAMBOO)
  Unnamed,          // a scheme answered Abort without a cause: a defect the tests catch
  kCount
};
inline constexpr std::size_t kAbortCauses = static_cast<std::size_t>(AbortCause::kCount);
inline constexpr std::array<std::string_view, kAbortCauses> kAbortCauseNames = {
    "lock_conflict",    "wound",           "wait_die", "deadlock",        "timeout",         "read_validation",
    "write_validation", "timestamp_order", "phantom",  "version_too_new", "version_too_old", "partition",
    "certifier",        "cascade",         "unnamed"};

// The order in which a scan visits its range (Txn::scan).
enum class ScanOrder : uint8_t { Ascending, Descending };

}  // namespace abyss
