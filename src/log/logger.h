#pragma once
// The logger policies on the commit path (docs/durability.md): every scheme
// hands its installed writes to the same Logger through Txn::commit, and a
// commit is acknowledged once its record is durable under the policy.
//
// Epochs order the journals for recovery, as SiloR's do. A global epoch
// number moves on after each group of writes and at least every
// --group-commit-us. A transaction reads it while the scheme still holds its
// writes (Txn::install_all), after its reads: a transaction that depends on
// another commits in the same epoch or a later one. Each worker publishes
// `persisted`, an epoch up to which every record of its own is durable; the
// least over the workers, once written to the `epoch` file, is the durable
// epoch D. A commit of epoch e is acknowledged when D >= e, and recovery
// applies exactly the records of epochs up to the D it finds in the file:
// a set closed under the dependencies between transactions.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/log_settings.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/file.h"
#include "platform/latch.h"

namespace abyss::log {

// The files of a log directory.
inline constexpr std::string_view kManifestFile = "manifest.json";
inline constexpr std::string_view kEpochFile = "epoch";
// "journal-<n>-<segment>.abj": a journal is a run of segments; a checkpoint
// starts new ones, and old ones go once a later checkpoint covers them.
std::string journal_name(uint32_t journal, uint32_t segment);
// The journal and segment numbers in a journal's file name; false if it is none.
bool parse_journal_name(std::string_view name, uint32_t& journal, uint32_t& segment);
inline constexpr std::string_view kCheckpointFile = "checkpoint";  // which checkpoint is in place (JSON)
std::string checkpoint_name(uint64_t number);                      // "checkpoint-<n>.abc"

// How far one journal is durable: every byte of its segments before
// `segment`, and the first `bytes` of that one (its header included).
// Whatever a crash cut off lies after that point.
struct JournalEnd {
  uint32_t segment = 0;
  uint64_t bytes = 0;
};

// What the epoch file says: the durable epoch and where each journal's
// durable part ends. `sequence` numbers the file's writes; of its two
// copies the one with the higher number is the newer.
struct DurablePoint {
  uint64_t sequence = 0;
  uint64_t epoch = 0;
  std::vector<JournalEnd> journals;
  // Written beside the syncs of the journal bytes it names, not after them
  // (--fsync always|group with per-worker journals): a crash before those
  // syncs end leaves it naming bytes the journals lack, and recovery then
  // uses the other copy, which was durable and whole before this one was
  // written. No commit of its epoch was acknowledged.
  bool beside = false;
};

// The epoch file holds two copies of a DurablePoint, each in sectors of its
// own, written in turn (copy `sequence % 2`) and synced: a crash that cuts
// one write off leaves the other copy whole. A copy is
//   "EPCH" | u32 format | u64 sequence | u64 epoch | u32 journals | u32 flags
//   | per journal: u32 segment | u32 zero | u64 bytes | u32 CRC-32 of all before
// padded to epoch_copy_stride(journals) bytes. Flags: 1, `beside`.
std::size_t epoch_copy_stride(std::size_t journals);
std::string epoch_copy_bytes(const DurablePoint& point);
// The whole file as a log starts it: `point` in copy 0 and again, one
// sequence number on, in copy 1.
std::string epoch_file_bytes(const DurablePoint& point);
// The newer of the whole copies in an epoch file's bytes; the reason there
// is none. `note` says which copy was damaged, when one was: the write a
// crash cut off, or damage at rest, which the file alone cannot tell apart.
// `older`, if given, gets the other copy when it is whole.
std::string parse_epoch_file(std::string_view bytes, DurablePoint& out, std::string& note,
                             std::optional<DurablePoint>* older = nullptr);
// The `checkpoint` file's contents (JSON): checkpoint `number` in `file`
// is in place, the journals are replayed over it from epoch `replay_from`,
// every version it holds is of `end_epoch` or older, and it holds `rows`.
std::string checkpoint_pointer(uint64_t number, std::string_view file, uint64_t replay_from, uint64_t end_epoch,
                               uint64_t rows);

// The database a run starts from (run --recover), written to the log
// directory as a checkpoint before the log opens: it holds every version of
// the log it was recovered from, whose durable epoch was `after_epoch`.
struct BaseCheckpoint {
  uint64_t number = 0;
  std::string file;  // in the log directory
  uint64_t rows = 0;
  uint64_t after_epoch = 0;
};

// What a run's log did, summed over the workers.
struct LogTotals {
  uint64_t records = 0;
  uint64_t bytes = 0;    // records' bytes handed to the journals
  uint64_t flushes = 0;  // groups written
  uint64_t fsyncs = 0;   // journal and epoch-file syncs
  uint64_t durable_epoch = 0;
};

class Logger;

// One worker's side: the records it has not yet written, its journal (per
// worker) and the commits it has not yet acknowledged. Used by its worker
// alone.
class WorkerLog final {
 public:
  struct Pending {
    uint64_t epoch;
    uint64_t tid;    // its commit id; 0 when it wrote no record
    uint64_t start;  // cycles: the transaction's first attempt began
    uint8_t type;
    bool measured;   // committed inside the measurement window
    uint64_t token;  // the committer's own: a served connection's number, a run's window
  };

  WorkerLog(Logger& logger, uint32_t worker);
  ~WorkerLog();
  WorkerLog(const WorkerLog&) = delete;
  WorkerLog& operator=(const WorkerLog&) = delete;

  // The epoch a committing transaction joins, read under the scheme, and
  // announced while it installs: a checkpoint replays the journals from
  // the oldest epoch still installing when it began (Logger::replay_from).
  uint64_t enter_install();
  void leave_install();
  // Where the next record is built (RecordBuilder), then handed over by
  // appended(). The ack log's commit line for it, if any, goes first.
  std::string& record_buffer() { return shared_ ? record_ : buf_; }
  void appended(std::size_t bytes, uint64_t epoch);
  bool writes_ack_log() const { return ack_log_.is_open(); }
  void ack_log_line(std::string_view line);

  // The epoch a commit joins now, and the durable epoch.
  uint64_t current_epoch() const;
  uint64_t durable() const;

  // A committed transaction, to be acknowledged once its epoch is durable.
  void committed(const Pending& p) { pending_.push_back(p); }

  // Between transactions: writes the group if it is due, moves the epochs
  // on, and hands every newly acknowledged commit to `ack(pending, now)`.
  // Returns the cycles spent writing and syncing. Throws when a journal
  // cannot be written (the first such error of the run).
  template <class Ack>
  uint64_t poll(Ack&& ack);

  // The run is over for this worker: writes and syncs what is left; its
  // later epochs no longer hold the durable epoch back.
  void finish();

  // A server's worker with nothing to do: writes its records now, without
  // waiting for the group to fill, moves the epochs past them, and once
  // they are durable stops holding the durable epoch back, so the other
  // workers' commits are acknowledged without waiting for this one to poll.
  // A later call tries again while they are not yet durable. resume() makes
  // it take part again; it must come before its next commit.
  void idle();
  void resume();
  bool is_idle() const { return idle_; }
  // How to wake this worker when its log has news for it: a sync of its
  // own or of the epoch file ended, or another worker's records wait on its
  // publishing (a server's worker asleep in its poller). Set before the
  // run's threads start; without one the worker sees the news at its next
  // poll.
  void set_waker(std::function<void()> wake) { wake_ = std::move(wake); }

  const LogTotals& totals() const { return totals_; }

 private:
  friend class Logger;
  uint64_t flush_due(uint64_t now);
  void go_idle();
  void rotate();
  uint64_t write_group(uint64_t now);
  // The group syncing_ syncs, once it is durable (with `wait`, waiting for
  // it): publishes the journal's end and this worker's records as durable.
  // False while it is still on its way.
  bool collect(bool wait);
  void publish();
  void publish_through(uint64_t persisted);
  void wake() const {
    if (wake_) wake_();
  }
  void fail(const std::string& what, const std::string& reason);

  Logger& logger_;
  uint32_t worker_;
  bool shared_;
  std::string buf_;     // per-worker and memory: records not yet written
  std::string record_;  // shared: the record being built
  platform::JournalFile file_;
  std::function<void()> wake_;  // before syncing_: its helper calls it
  // Per-worker with --fsync always or group: the group written to file_ and
  // being synced while the worker runs on; once durable, the journal ends
  // at flight_end_ and this worker's records of epochs up to
  // flight_persisted_ are durable.
  platform::BackgroundSync syncing_;
  uint64_t flight_end_ = 0;
  uint64_t flight_persisted_ = 0;
  uint32_t segment_ = 0;        // per-worker: the segment file_ writes
  uint64_t segment_epoch_ = 0;  // per-worker: the newest epoch written to it
  platform::JournalFile ack_log_;
  uint64_t oldest_ = 0;      // cycles: when the oldest unwritten record was appended (0: none)
  uint64_t max_epoch_ = 0;   // the newest epoch among the unwritten records
  uint64_t shared_end_ = 0;  // shared: the journal offset after this worker's last record
  uint64_t next_tick_ = 0;   // cycles: when to look at the epochs again
  bool idle_ = false;        // idle(): `persisted` holds the durable epoch back no more
  std::deque<Pending> pending_;
  std::string acks_;  // the ack log's lines of one poll
  LogTotals totals_;
};

// Shared by the workers of one run.
class Logger final {
 public:
  Logger(const LogSettings& settings, uint32_t workers, double cycles_per_ns);
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  // --log file: creates the directory, its journals and epoch file, and
  // writes `manifest` (what recovery needs to rebuild the load). With a
  // `base`, already written, the base is put in place first, so a crash at
  // any step leaves the recovered database recoverable. Returns the reason
  // it could not.
  std::string open(std::string_view manifest, const BaseCheckpoint* base = nullptr);
  WorkerLog& worker(uint32_t i) { return *workers_[i]; }

  uint64_t epoch() const { return epoch_.load(platform::memory_order_acquire); }
  // Checkpoints (engine/checkpoint.h): the epoch from which the journals
  // must be replayed over a checkpoint that starts now (the current epoch,
  // or an older one a commit still installing joined); asking for new
  // segments, so old ones can go; and removing the segments whose records
  // all precede `epoch` (once a checkpoint from `epoch` is in place).
  uint64_t replay_from() const;
  void start_segments() { segment_.fetch_add(1, platform::memory_order_acq_rel); }
  std::string remove_segments_before(uint64_t epoch);
  uint64_t durable() const { return durable_.load(platform::memory_order_acquire); }
  bool failed() const { return failed_.load(platform::memory_order_acquire); }
  std::string error();

  // After the workers' threads are joined, finished or failed: waits for
  // every sync still in flight (one a failed worker left) and ends the
  // helpers, so no waker is called after this.
  void wait_for_syncs();
  // After every worker finished: makes the last epoch durable and closes
  // the files. Returns the reason it could not.
  std::string close();
  LogTotals totals() const;
  const LogSettings& settings() const { return settings_; }

 private:
  friend class WorkerLog;
  static constexpr uint64_t kFinished = ~uint64_t{0};
  struct alignas(platform::kCacheLine) Slot {
    // Every record of this worker's of this epoch or older is written and
    // synced, or written and being synced up to `written`.
    platform::Atomic<uint64_t> persisted{0};
    platform::Atomic<uint64_t> installing{0};  // the epoch of the commit installing now, 0 if none
    platform::Atomic<uint64_t> synced{0};      // per-worker: its journal's end once written and synced (pack_end)
    platform::Atomic<uint64_t> written{0};     // per-worker: its journal's end once written, perhaps still syncing
    // A server's worker about to wait with commits not yet acknowledged:
    // the epoch of its oldest, so the worker that makes it durable wakes
    // it (0: none).
    platform::Atomic<uint64_t> awaiting{0};
  };
  // A JournalEnd in one word, so that it is read whole: the segment above
  // kEndBytesBits, the bytes below.
  static constexpr int kEndBytesBits = 40;
  static uint64_t pack_end(uint32_t segment, uint64_t bytes) { return (uint64_t{segment} << kEndBytesBits) | bytes; }
  static JournalEnd unpack_end(uint64_t end) {
    return {static_cast<uint32_t>(end >> kEndBytesBits), end & ((uint64_t{1} << kEndBytesBits) - 1)};
  }
  // A segment no longer written, and the newest epoch in it.
  struct OldSegment {
    uint32_t journal;
    uint32_t segment;
    uint64_t epoch;
  };
  void note_old_segment(const OldSegment& s);
  std::string open_segment(platform::JournalFile& f, uint32_t journal, uint32_t segment);
  void advance_epoch_past(uint64_t e);
  void tick_epoch(uint64_t now);
  // Writes the least persisted epoch to the epoch file if it moved on, and
  // makes it the durable epoch once that write and the journal bytes it
  // names are synced.
  void advance_durable();
  // Writes `epoch` and every journal's end to the older copy of the epoch
  // file, as `point`: the ends written (`beside`: their syncs may still
  // be on their way) or synced. epoch_written() once `point` is durable and
  // so are the journal bytes it names; or both and the sync between them.
  // Under durable_latch_, or after every worker finished.
  std::string write_epoch_copy(uint64_t epoch, bool beside, DurablePoint& point);
  // The epoch file's copy in flight (`wait`: once its sync ends): when it
  // and the journal bytes it names are synced, publishes the durable epoch
  // it makes and returns true. An error is the run's. Under durable_latch_.
  bool settle_epoch_flight(bool wait);
  // Whether every journal is synced up to the ends `point` names.
  bool journals_synced_to(const DurablePoint& point) const;
  // Wakes the workers whose `persisted` is below `epoch`: the durable
  // epoch waits on them.
  void wake_behind(uint64_t epoch) const;
  // Makes `epoch` the durable epoch and wakes the workers awaiting it.
  void publish_durable(uint64_t epoch);
  // Waits for the epoch file's copy in flight, if any, and publishes the
  // durable epoch it makes.
  void settle_durable();
  void epoch_written(const DurablePoint& point);
  std::string write_epoch_file(uint64_t epoch);
  bool write_shared(WorkerLog& by, bool wait);
  void record_error(const std::string& error);

  LogSettings settings_;
  uint32_t workers_count_;
  uint64_t group_cycles_;
  bool files_;  // --log file
  bool sync_;   // --fsync always or group
  alignas(platform::kCacheLine) platform::Atomic<uint64_t> epoch_{1};
  alignas(platform::kCacheLine) platform::Atomic<uint64_t> epoch_began_{0};  // cycles
  alignas(platform::kCacheLine) platform::Atomic<uint64_t> durable_{0};
  alignas(platform::kCacheLine) platform::Atomic<bool> failed_{false};
  platform::SpinLatch durable_latch_;  // held by the one worker writing the epoch file
  platform::JournalFile epoch_file_;
  // The epoch file's copy being synced off the worker's thread, and what
  // it makes durable once the journals' bytes it names are synced too:
  // written under durable_latch_.
  std::function<void()> wake_all_;  // before epoch_sync_: its helper calls it
  platform::BackgroundSync epoch_sync_;
  DurablePoint epoch_flight_;
  bool epoch_flight_landed_ = false;  // under durable_latch_: its own sync ended
  alignas(platform::kCacheLine) platform::Atomic<bool> epoch_pending_{false};  // a copy in flight
  uint64_t epoch_syncs_ = 0;                                                   // under durable_latch_
  uint64_t epoch_sequence_ = 0;  // under durable_latch_: the last copy written
  // Under durable_latch_: per journal, the segment the epoch file names. A
  // segment older than it may go (remove_segments_before); the one it
  // names must stay, so recovery can tell a missing journal.
  std::vector<uint32_t> epoch_segments_;
  // --journal shared: one buffer under one latch, written by one worker at a time.
  alignas(platform::kCacheLine) platform::SpinLatch shared_latch_;
  std::string shared_buf_;         // under shared_latch_
  uint64_t shared_buf_epoch_ = 0;  // under shared_latch_: the newest epoch in shared_buf_
  uint64_t shared_appended_ = 0;   // under shared_latch_: the journal's length once every buffered record is written
  alignas(platform::kCacheLine) platform::Atomic<uint64_t> shared_durable_{0};
  platform::Atomic<uint64_t> shared_synced_{0};  // the shared journal's end once written and synced (pack_end)
  platform::SpinLatch shared_write_latch_;
  std::string shared_writing_;  // under shared_write_latch_
  platform::JournalFile shared_file_;
  uint32_t shared_segment_ = 0;        // under shared_write_latch_
  uint64_t shared_segment_epoch_ = 0;  // under shared_write_latch_
  alignas(platform::kCacheLine) platform::Atomic<uint32_t> segment_{0};
  platform::SpinLatch segments_latch_;
  std::vector<OldSegment> old_segments_;  // under segments_latch_
  std::unique_ptr<Slot[]> slots_;
  std::vector<std::unique_ptr<WorkerLog>> workers_;
  platform::SpinLatch error_latch_;
  std::string error_;
};

inline uint64_t WorkerLog::current_epoch() const { return logger_.epoch(); }
inline uint64_t WorkerLog::durable() const { return logger_.durable(); }

// ---- WorkerLog::poll --------------------------------------------------------

template <class Ack>
uint64_t WorkerLog::poll(Ack&& ack) {
  const uint64_t now = platform::cycles();
  const uint64_t spent = flush_due(now);
  const uint64_t durable = logger_.durable();
  if (pending_.empty() || pending_.front().epoch > durable) return spent;
  const uint64_t at = now + spent;
  for (; !pending_.empty() && pending_.front().epoch <= durable; pending_.pop_front()) {
    ack(pending_.front(), at);
    if (ack_log_.is_open() && pending_.front().tid != 0) acks_ += "a " + std::to_string(pending_.front().tid) + "\n";
  }
  if (!acks_.empty()) {
    ack_log_line(acks_);
    acks_.clear();
  }
  platform::Atomic<uint64_t>& awaiting = logger_.slots_[worker_].awaiting;
  if (awaiting.load(platform::memory_order_relaxed) != 0) awaiting.store(0, platform::memory_order_relaxed);
  return spent;
}

}  // namespace abyss::log
