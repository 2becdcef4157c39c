#pragma once
// Offline serializability checker for the history log (`--history FILE`, the
// format is in docs/formats.md), which also classifies a history that is not
// serializable by the phenomena it shows and the strongest isolation level
// it still satisfies.
//
// It builds the direct serialization graph (DSG) of Adya, Liskov and O'Neil,
// "Generalized Isolation Level Definitions" (ICDE 2000): nodes are committed
// transactions, edges are ww (write dependency), wr (read dependency) and rw
// (anti-dependency). The version order of each (table, key) comes from the
// prev-writer links in the log. A history is serializable when every version
// it names was written by a committed transaction, no key's version order
// forks, and the DSG has no cycle (phenomena G0, G1c and G2). Scans are
// predicate reads: a committed insert or delete inside a scanned range that
// the scan did not see orders the two transactions (Adya's predicate
// dependencies), so phantoms show up as cycles too.
//
// The checker is a test oracle, not part of the transaction path, so it
// reports an input it cannot read with an exception (InputError) and every
// anomaly as data.
#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "check/input_error.h"

namespace abyss::check {

enum class AnomalyKind : uint8_t {
  LostUpdate,          // two committed writes replaced the same version of a key
  UncommittedRead,     // a read of a version no committed transaction wrote
  UnknownPrevVersion,  // a write over a version no committed transaction wrote
  Cycle,               // a cycle in the DSG
  DuplicateId,         // two log lines with the same transaction id
};
inline constexpr size_t kAnomalyKinds = 5;
[[nodiscard]] std::string_view to_string(AnomalyKind kind);

// The phenomena of Adya et al. (ICDE 2000) a history can show, each ruling
// out the isolation levels that proscribe it. A cycle's edges are
// dependencies (ww, wr, and a scan's pwr) or anti-dependencies (rw, and a
// scan's prw).
enum class Phenomenon : uint8_t {
  G0,          // a cycle of write dependencies (ww) alone
  G1a,         // a read of (or a write over) a version no committed transaction wrote
  G1c,         // a cycle of dependencies with a read dependency in it
  LostUpdate,  // two committed writes replaced one version of a key (P4)
  GSingle,     // a cycle with exactly one anti-dependency: read skew
  G2Item,      // a cycle through an item anti-dependency (rw): write skew
  G2,          // a cycle through a predicate anti-dependency (prw): a phantom
};
inline constexpr size_t kPhenomena = 7;
[[nodiscard]] std::string_view to_string(Phenomenon p);

// The isolation levels a history is classified by, strongest first:
// serializable (no anomaly); snapshot isolation (no G0, G1a, G1c, lost
// update or G-single: every cycle has at least two anti-dependencies, as
// Fekete et al. show every cycle under SI has); read committed (no G0, G1a
// or G1c: Adya's PL-2); none.
enum class Level : uint8_t { Serializable, Snapshot, ReadCommitted, None };
inline constexpr size_t kLevels = 4;
[[nodiscard]] std::string_view to_string(Level level);  // serializable, snapshot, read-committed, none
// The level named so, or false.
[[nodiscard]] bool parse_level(std::string_view name, Level& out);

// PRW (predicate anti-dependency): a scan precedes the insert of a key in its
// range that it did not see. PWR (predicate read dependency): the delete of
// a loaded key in a scanned range that the scan did not see precedes the scan.
enum class EdgeKind : uint8_t { WW, WR, RW, PRW, PWR };
[[nodiscard]] std::string_view to_string(EdgeKind kind);

struct Anomaly {
  AnomalyKind kind;
  std::string description;     // one sentence naming the transactions and key
  std::vector<uint64_t> txns;  // the transactions involved (for a Cycle: in cycle order)
  std::string key;             // `table[42]` or `table["abc"]`; empty for Cycle and DuplicateId
  // Cycle only: cycle_edges[i] is the edge from txns[i] to txns[(i + 1) % txns.size()].
  std::vector<EdgeKind> cycle_edges;
};

// A broken history can hold millions of anomalies; details are kept for the
// first few of each kind so the report stays small, but all are counted.
inline constexpr size_t kMaxKeptPerKind = 10;

struct Report {
  uint64_t transactions = 0;                             // committed transactions (duplicate ids not counted)
  uint64_t reads = 0;                                    // read entries, and keys scans saw, over all transactions
  uint64_t writes = 0;                                   // write entries over all transactions
  uint64_t scans = 0;                                    // scan entries over all transactions
  uint64_t edges = 0;                                    // distinct (from, to, kind) DSG edges
  std::vector<Anomaly> anomalies;                        // at most kMaxKeptPerKind per kind
  std::array<uint64_t, kAnomalyKinds> anomaly_counts{};  // all found, indexed by kind

  // The phenomena found: for G1a and lost update the anomalies that show
  // them, for a cycle's phenomena the strongly connected sets of the DSG
  // that hold such a cycle; and one example of each (a cycle: "T1 -rw
  // t[1]-> T2 -wr t[2]-> T1").
  std::array<uint64_t, kPhenomena> phenomena{};
  std::array<std::string, kPhenomena> examples;
  // The search for G-single stopped at its budget in some set: it may be
  // there, so the level says no more than read committed.
  bool phenomena_cut = false;

  [[nodiscard]] uint64_t count(AnomalyKind kind) const { return anomaly_counts[static_cast<size_t>(kind)]; }
  [[nodiscard]] uint64_t count(Phenomenon p) const { return phenomena[static_cast<size_t>(p)]; }
  [[nodiscard]] bool serializable() const;
  // The strongest level the history satisfies.
  [[nodiscard]] Level strongest_level() const;
  // One human paragraph: the counts and the first few anomalies. For people
  // only; tools read the fields.
  [[nodiscard]] std::string summary() const;
};

// Thrown for a line that does not follow the format (a line cut short by a
// truncated file is one). what() reads "<source>:<line>: <message>".
class HistoryFormatError : public InputError {
 public:
  HistoryFormatError(const std::string& source, uint64_t line, const std::string& message)
      : InputError(source, line, message) {}
};

// Reads a whole history and checks it. Blank lines are skipped and unknown
// fields are ignored; an empty input is the valid history of no transactions.
// `source` only names the input in error messages. Throws HistoryFormatError
// on the first malformed line, and InputError if the stream fails or the log
// holds more than 2^32 - 1 transactions or keys (the checker's index width).
[[nodiscard]] Report check_history(std::istream& in, const std::string& source = "history");
// As above; also throws InputError (line 0) when the file cannot be opened.
[[nodiscard]] Report check_history_file(const std::string& path);

}  // namespace abyss::check
