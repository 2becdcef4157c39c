#pragma once
// What a scheme declares about itself beside its hooks: its `--cc` name, its
// family and the run-time facts that the rest of abyss derives from (which
// flags it uses, whether the runner must ask the workload for partitions,
// which conformance tests apply). Each scheme class defines
//   static constexpr SchemeTraits kTraits{...};
// with a one-line reason per field, and src/cc/registry.h lists the classes.
// They sit here, in the transaction layer, because Txn<CC> reads them
// (CC::kTraits) and src/cc/ is above it; the schemes include them through
// cc/traits.h.
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "common/types.h"

namespace abyss::cc {

// The papers' grouping of schemes (Abyss §2, Tale §2).
enum class Family : uint8_t {
  None,               // no concurrency control: the throughput bound and the checker's negative control
  Locking,            // two-phase locking
  TimestampOrdering,  // timestamp ordering, single- or multi-version
  Optimistic,         // read freely, validate at commit
  PartitionLocking,   // coarse locks on whole partitions (H-STORE)
  // Read versions as of a begin timestamp and validate or certify at commit
  // (HEKATON, SSN: first updater wins at a write, then a commit timestamp;
  // CICADA: writes installed at commit, at the begin timestamp): conflicts
  // are decided partly at the access and partly at commit, so neither the
  // optimistic nor the timestamp-ordering typed rules hold; each scheme's own
  // tests say its rules.
  MultiVersionOptimistic,
};
inline constexpr std::string_view kFamilyNames[] = {"none",       "locking",           "timestamp_ordering",
                                                    "optimistic", "partition_locking", "multi_version_optimistic"};
constexpr std::string_view name_of(Family f) { return kFamilyNames[static_cast<std::size_t>(f)]; }

// A set of abort causes, bit k for AbortCause k.
constexpr uint32_t abort_causes(std::initializer_list<AbortCause> causes) {
  uint32_t bits = 0;
  for (AbortCause c : causes) bits |= uint32_t{1} << static_cast<unsigned>(c);
  return bits;
}
constexpr bool has_cause(uint32_t causes, AbortCause c) { return (causes >> static_cast<unsigned>(c) & 1U) != 0; }

struct SchemeTraits {
  std::string_view name;     // the --cc name, lower case
  std::string_view summary;  // one line for `abyss describe`
  std::string_view paper;    // where the scheme is specified
  Family family = Family::None;
  bool allocates_timestamps = false;  // takes timestamps from the shared source: --ts-alloc applies
  // Orders commits by timestamps taken at commit, so they must grow with
  // time across workers: --ts-alloc batch and clock are refused.
  bool commit_timestamps = false;
  bool uses_latch = false;           // guards row or partition state with a latch: --latch applies
  bool declares_partitions = false;  // needs each transaction's partitions before it begins
  bool waits = false;                // a conflict can make a transaction wait for another
  bool aborts = true;                // a conflict can abort a transaction: --backoff applies
  bool keeps_versions = false;       // keeps older row versions beside the newest
  bool writes_in_place = false;      // holds a written row exclusively until the end: writes it in place, no copy
  // Lets others read its writes before it commits: `none` writes in place
  // without holding the row (and sets writes_in_place too); BAMBOO shows a
  // retired write's private copy. The transaction takes its commit id at
  // its first such write (Txn::writer_id), so a read of data not yet
  // committed names the transaction it read from, and the history shows
  // dirty reads.
  bool dirty_writes = false;
  bool weaker_isolation = false;  // offers --isolation snapshot and read-committed beside serializable
  uint32_t causes = 0;            // the causes its aborts name (abort_causes({...})); none if it never aborts
};

}  // namespace abyss::cc
