#include "log/logger.h"

#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "log/record.h"

namespace abyss::log {

namespace {

// A worker's buffer is written before it grows past this, group or not.
constexpr std::size_t kGroupBytesMax = std::size_t{4} << 20;
constexpr uint32_t kEpochMagic = 0x48435045;  // "EPCH"

// "cannot <verb> <path>: <reason>".
std::string cannot(std::string_view verb, const std::string& path, const std::string& reason) {
  std::string s = "cannot ";
  s += verb;
  s += ' ';
  s += path;
  s += ": ";
  s += reason;
  return s;
}

void put_le(char* p, uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; i++) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

std::string journal_name(uint32_t journal, uint32_t segment) {
  return "journal-" + std::to_string(journal) + "-" + std::to_string(segment) + ".abj";
}

bool parse_journal_name(std::string_view name, uint32_t& journal, uint32_t& segment) {
  constexpr std::string_view kPrefix = "journal-";
  constexpr std::string_view kSuffix = ".abj";
  if (name.size() <= kPrefix.size() + kSuffix.size() || name.substr(0, kPrefix.size()) != kPrefix ||
      name.substr(name.size() - kSuffix.size()) != kSuffix) {
    return false;
  }
  const std::string_view mid = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  const std::size_t dash = mid.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == mid.size()) return false;
  auto number = [](std::string_view digits, uint32_t& out) {
    if (digits.size() > 9) return false;
    out = 0;
    for (const char c : digits) {
      if (c < '0' || c > '9') return false;
      out = out * 10 + static_cast<uint32_t>(c - '0');
    }
    return true;
  };
  return number(mid.substr(0, dash), journal) && number(mid.substr(dash + 1), segment);
}

std::string checkpoint_name(uint64_t number) { return "checkpoint-" + std::to_string(number) + ".abc"; }

namespace {
constexpr uint32_t kEpochFormat = 2;
constexpr std::size_t kEpochCopyHeader = 32;  // magic, format, sequence, epoch, journals, flags
constexpr uint32_t kEpochBeside = 1;
constexpr std::size_t kEpochJournalBytes = 16;
constexpr std::size_t kSector = 512;

std::size_t epoch_copy_size(std::size_t journals) { return kEpochCopyHeader + kEpochJournalBytes * journals + 4; }

// Why the copy of an epoch file at `copy` is not whole, or empty.
std::string parse_epoch_copy(std::string_view copy, DurablePoint& out) {
  if (load_le<uint32_t>(copy.data()) != kEpochMagic) return "is not an abyss epoch file";
  if (const uint32_t format = load_le<uint32_t>(copy.data() + 4); format != kEpochFormat) {
    return "is of format " + std::to_string(format) + ", this build reads format " + std::to_string(kEpochFormat);
  }
  const uint32_t journals = load_le<uint32_t>(copy.data() + 24);
  if (epoch_copy_size(journals) > copy.size()) return "names more journals than it has room for";
  const std::size_t crc_at = epoch_copy_size(journals) - 4;
  if (load_le<uint32_t>(copy.data() + crc_at) != crc32(copy.substr(0, crc_at))) return "fails its checksum";
  out.sequence = load_le<uint64_t>(copy.data() + 8);
  out.epoch = load_le<uint64_t>(copy.data() + 16);
  out.beside = (load_le<uint32_t>(copy.data() + 28) & kEpochBeside) != 0;
  out.journals.resize(journals);
  for (uint32_t j = 0; j < journals; j++) {
    const char* p = copy.data() + kEpochCopyHeader + kEpochJournalBytes * j;
    out.journals[j] = {load_le<uint32_t>(p), load_le<uint64_t>(p + 8)};
  }
  return {};
}
}  // namespace

std::size_t epoch_copy_stride(std::size_t journals) {
  return (epoch_copy_size(journals) + kSector - 1) / kSector * kSector;
}

std::string epoch_copy_bytes(const DurablePoint& point) {
  std::string b(epoch_copy_stride(point.journals.size()), '\0');
  put_le(b.data(), kEpochMagic, 4);
  put_le(b.data() + 4, kEpochFormat, 4);
  put_le(b.data() + 8, point.sequence, 8);
  put_le(b.data() + 16, point.epoch, 8);
  put_le(b.data() + 24, point.journals.size(), 4);
  put_le(b.data() + 28, point.beside ? kEpochBeside : 0, 4);
  for (std::size_t j = 0; j < point.journals.size(); j++) {
    char* p = b.data() + kEpochCopyHeader + kEpochJournalBytes * j;
    put_le(p, point.journals[j].segment, 4);
    put_le(p + 8, point.journals[j].bytes, 8);
  }
  const std::size_t crc_at = epoch_copy_size(point.journals.size()) - 4;
  put_le(b.data() + crc_at, crc32(std::string_view(b.data(), crc_at)), 4);
  return b;
}

std::string epoch_file_bytes(const DurablePoint& point) {
  DurablePoint next = point;
  next.sequence++;
  return point.sequence % 2 == 0 ? epoch_copy_bytes(point) + epoch_copy_bytes(next)
                                 : epoch_copy_bytes(next) + epoch_copy_bytes(point);
}

std::string parse_epoch_file(std::string_view bytes, DurablePoint& out, std::string& note,
                             std::optional<DurablePoint>* older) {
  if (bytes.size() < 2 * kSector || bytes.size() % (2 * kSector) != 0) {
    return "holds " + std::to_string(bytes.size()) + " bytes, not two copies of whole sectors";
  }
  const std::size_t stride = bytes.size() / 2;
  DurablePoint copies[2];
  std::string why[2];
  for (int c = 0; c < 2; c++) why[c] = parse_epoch_copy(bytes.substr(c * stride, stride), copies[c]);
  if (!why[0].empty() && !why[1].empty()) {
    return why[0] == why[1] ? why[0] : "copy 0 " + why[0] + " and copy 1 " + why[1];
  }
  const int newer = !why[0].empty() ? 1 : !why[1].empty() ? 0 : copies[1].sequence > copies[0].sequence ? 1 : 0;
  if (!why[1 - newer].empty()) {
    note = "copy " + std::to_string(1 - newer) + " " + why[1 - newer] + ": copy " + std::to_string(newer) + " (write " +
           std::to_string(copies[newer].sequence) + ") is used";
  }
  if (older != nullptr) {
    older->reset();
    if (why[1 - newer].empty()) *older = std::move(copies[1 - newer]);
  }
  out = std::move(copies[newer]);
  return {};
}

// ---- WorkerLog ----------------------------------------------------------------

WorkerLog::WorkerLog(Logger& logger, uint32_t worker)
    : logger_(logger), worker_(worker), shared_(logger.settings_.journal == JournalLayout::Shared) {}

WorkerLog::~WorkerLog() = default;

// The epoch is announced before it is read again: a checkpoint that reads
// the epoch and then the announcements (Logger::replay_from) either sees
// this announcement or began before the second read, which then returns
// its epoch or a later one. Both sides are sequentially consistent.
uint64_t WorkerLog::enter_install() {
  Logger::Slot& slot = logger_.slots_[worker_];
  slot.installing.store(logger_.epoch(), platform::memory_order_seq_cst);
  return logger_.epoch_.load(platform::memory_order_seq_cst);
}

void WorkerLog::leave_install() { logger_.slots_[worker_].installing.store(0, platform::memory_order_release); }

void WorkerLog::appended(std::size_t bytes, uint64_t epoch) {
  totals_.records++;
  totals_.bytes += bytes;
  if (shared_) {
    logger_.shared_latch_.lock();
    logger_.shared_buf_ += record_;
    logger_.shared_buf_epoch_ = std::max(logger_.shared_buf_epoch_, epoch);
    logger_.shared_appended_ += record_.size();
    shared_end_ = logger_.shared_appended_;
    logger_.shared_latch_.unlock();
    record_.clear();
  }
  max_epoch_ = std::max(max_epoch_, epoch);
  if (oldest_ == 0) oldest_ = platform::cycles() | 1;
}

void WorkerLog::ack_log_line(std::string_view line) {
  if (auto err = ack_log_.append(line.data(), line.size()); !err.empty()) fail("the ack log", err);
}

uint64_t WorkerLog::flush_due(uint64_t now) {
  if (logger_.failed()) throw std::runtime_error(logger_.error());
  if (syncing_.busy()) (void)collect(false);
  if (logger_.epoch_pending_.load(platform::memory_order_relaxed)) logger_.advance_durable();
  const LogSettings& s = logger_.settings_;
  const bool due = oldest_ != 0 && (s.fsync == FsyncPolicy::Always || now - oldest_ >= logger_.group_cycles_ ||
                                    (!shared_ && buf_.size() >= kGroupBytesMax));
  if (due) return write_group(now);
  if (now >= next_tick_) {
    next_tick_ = now + std::max<uint64_t>(1, logger_.group_cycles_ / 2);
    // The epoch moves on for this worker's records and unacknowledged
    // commits; a worker with neither (a server's serving reads of durable
    // versions) leaves it, so the epoch file is not written and synced
    // for nothing.
    if (oldest_ != 0 || !pending_.empty()) logger_.tick_epoch(now);
    publish();
  }
  return 0;
}

uint64_t WorkerLog::write_group(uint64_t now) {
  const uint64_t t0 = platform::cycles();
  if (shared_) {
    // A group's worker waits until its records are written, by another
    // worker or by itself: one that gave up while others write would keep
    // records back, and its epoch, for as long as it keeps committing.
    if (!logger_.write_shared(*this, true)) return platform::cycles() - t0;
  } else {
    if (logger_.files_) {
      // The group before is still on its way to disk: this one grows
      // meanwhile, unless it is already as large as a group gets.
      if (syncing_.busy() && !collect(buf_.size() >= kGroupBytesMax)) return platform::cycles() - t0;
      if (logger_.segment_.load(platform::memory_order_acquire) != segment_) rotate();
      const std::string name = journal_name(worker_, segment_);
      if (auto err = file_.append(buf_.data(), buf_.size()); !err.empty()) fail(name, err);
      if (file_.size() >> Logger::kEndBytesBits != 0) {
        fail(name, "a journal segment reached 1 TiB (take checkpoints: --checkpoint-every-ms)");
      }
      segment_epoch_ = std::max(segment_epoch_, max_epoch_);
      if (logger_.sync_) {
        // Synced while the worker runs on; collect() publishes it. Every
        // record of this group is of an epoch before the one the epoch
        // moves on to here, and every later record of this worker of that
        // epoch or a later one.
        totals_.flushes++;
        buf_.clear();
        oldest_ = 0;
        logger_.advance_epoch_past(max_epoch_);
        flight_persisted_ = logger_.epoch() - 1;
        flight_end_ = Logger::pack_end(segment_, file_.size());
        syncing_.start(file_, &wake_);
        totals_.fsyncs++;
        next_tick_ = now + std::max<uint64_t>(1, logger_.group_cycles_ / 2);
        // The epoch file's copy may be written and synced beside this sync:
        // the durable epoch waits for both (Logger::settle_epoch_flight).
        logger_.slots_[worker_].written.store(flight_end_, platform::memory_order_release);
        publish_through(flight_persisted_);
        return platform::cycles() - t0;
      }
      // Before this worker's records count as durable (publish below).
      const uint64_t end = Logger::pack_end(segment_, file_.size());
      logger_.slots_[worker_].synced.store(end, platform::memory_order_release);
      logger_.slots_[worker_].written.store(end, platform::memory_order_release);
    }
    totals_.flushes++;
    buf_.clear();
  }
  oldest_ = 0;
  logger_.advance_epoch_past(max_epoch_);
  next_tick_ = now + std::max<uint64_t>(1, logger_.group_cycles_ / 2);
  publish();
  return platform::cycles() - t0;
}

bool WorkerLog::collect(bool wait) {
  std::string err;
  if (wait) {
    err = syncing_.wait();
  } else if (!syncing_.done(err)) {
    return false;
  }
  if (!err.empty()) fail(journal_name(worker_, Logger::unpack_end(flight_end_).segment), err);
  // A copy of the epoch file that names these bytes waits for them.
  logger_.slots_[worker_].synced.store(flight_end_, platform::memory_order_release);
  if (oldest_ == 0) publish();  // nothing written since: every record so far is written
  logger_.advance_durable();
  return true;
}

// A checkpoint asked for new segments: this journal's next writes go to a
// new file, and the old one is noted with the newest epoch it holds.
void WorkerLog::rotate() {
  const uint32_t old = segment_;
  if (auto err = file_.close(); !err.empty()) fail(journal_name(worker_, old), err);
  logger_.note_old_segment({worker_, old, segment_epoch_});
  segment_ = logger_.segment_.load(platform::memory_order_acquire);
  segment_epoch_ = 0;
  if (auto err = logger_.open_segment(file_, worker_, segment_); !err.empty()) {
    fail(journal_name(worker_, segment_), err);
  }
}

// Every record of this worker so far is durable: the ones it appends from
// now on join the current epoch or a later one.
void WorkerLog::publish() {
  if (oldest_ != 0 || idle_) return;
  if (shared_ && logger_.shared_durable_.load(platform::memory_order_acquire) < shared_end_) return;
  publish_through(logger_.epoch() - 1);
}

void WorkerLog::publish_through(uint64_t persisted) {
  if (idle_) return;
  platform::Atomic<uint64_t>& mine = logger_.slots_[worker_].persisted;
  if (mine.load(platform::memory_order_relaxed) >= persisted) return;
  mine.store(persisted, platform::memory_order_release);
  logger_.advance_durable();
  if (logger_.durable() < persisted) logger_.wake_behind(persisted);
}

void WorkerLog::finish() {
  if (!logger_.failed()) {
    if (syncing_.busy()) (void)collect(true);
    if (oldest_ != 0) write_group(platform::cycles());
    if (syncing_.busy()) (void)collect(true);
  }
  logger_.slots_[worker_].persisted.store(Logger::kFinished, platform::memory_order_release);
  if (!logger_.failed()) logger_.advance_durable();
}

void WorkerLog::idle() {
  if (idle_ || logger_.failed()) return;
  go_idle();
  if (idle_ || pending_.empty()) return;
  // Commits wait for acknowledgement: whoever makes the oldest one's epoch
  // durable wakes this worker (Logger::publish_durable). Ordered before
  // the durable epoch's next reading, as the other side's store is before
  // its reading of this slot: either this worker sees the epoch durable or
  // the other sees it waiting.
  logger_.slots_[worker_].awaiting.store(pending_.front().epoch, platform::memory_order_relaxed);
  platform::fence();
}

void WorkerLog::go_idle() {
  // A group still syncing: a later call (its waker's) tries again.
  if (syncing_.busy() && !collect(false)) return;
  // The newest epoch of its records and of its commits not yet acknowledged
  // (a read-only commit writes no record but waits for its epoch too).
  const uint64_t newest = std::max(max_epoch_, pending_.empty() ? 0 : pending_.back().epoch);
  if (oldest_ != 0) (void)write_group(platform::cycles());
  logger_.advance_epoch_past(newest);
  publish();
  // Idle only once all of that is durable: no commit of its own waits on a
  // durable epoch that no worker would move on.
  if (oldest_ != 0 || syncing_.busy() || logger_.durable() < newest ||
      logger_.slots_[worker_].persisted.load(platform::memory_order_relaxed) < newest) {
    return;
  }
  if (shared_ && logger_.shared_durable_.load(platform::memory_order_acquire) < shared_end_) return;
  logger_.slots_[worker_].persisted.store(Logger::kFinished, platform::memory_order_seq_cst);
  idle_ = true;
}

void WorkerLog::resume() {
  if (!idle_) return;
  idle_ = false;
  // Sequentially consistent, as the epoch's advance and the durable
  // epoch's reading of the slots are: either a worker computing the durable
  // epoch sees this slot taken again, or this worker's next commit
  // (enter_install) reads an epoch past the one that worker makes durable.
  logger_.slots_[worker_].persisted.exchange(logger_.epoch() - 1, platform::memory_order_seq_cst);
}

void WorkerLog::fail(const std::string& what, const std::string& reason) {
  logger_.record_error(what + " in " + logger_.settings_.dir + ": " + reason);
  throw std::runtime_error(logger_.error());
}

// ---- Logger -------------------------------------------------------------------

Logger::Logger(const LogSettings& settings, uint32_t workers, double cycles_per_ns)
    : settings_(settings),
      workers_count_(workers),
      group_cycles_(static_cast<uint64_t>(static_cast<double>(settings.group_commit_us) * 1000.0 * cycles_per_ns)),
      files_(settings.policy == LogPolicy::File),
      sync_(settings.fsync != FsyncPolicy::Never),
      slots_(std::make_unique<Slot[]>(workers)) {
  epoch_began_.store(platform::cycles(), platform::memory_order_relaxed);
  for (uint32_t i = 0; i < workers; i++) workers_.push_back(std::make_unique<WorkerLog>(*this, i));
  wake_all_ = [this] {
    for (const auto& w : workers_) w->wake();
  };
}

// The epoch file's helper first: its waker reaches every worker's.
Logger::~Logger() { epoch_sync_.stop(); }

std::string checkpoint_pointer(uint64_t number, std::string_view file, uint64_t replay_from, uint64_t end_epoch,
                               uint64_t rows) {
  const nlohmann::json meta = {{"format", 1},
                               {"checkpoint", number},
                               {"file", std::string(file)},
                               {"replay_from", replay_from},
                               {"end_epoch", end_epoch},
                               {"rows", rows}};
  return meta.dump() + "\n";
}

std::string Logger::open(std::string_view manifest, const BaseCheckpoint* base) {
  if (!files_) return {};
  const std::string& dir = settings_.dir;
  if (auto err = platform::make_dirs(dir); !err.empty()) return "cannot create log directory " + dir + ": " + err;
  const std::string pointer_path = dir + "/" + std::string(kCheckpointFile);
  if (base != nullptr) {
    // The base goes in place over the old log: every record of the old
    // journals is of its durable epoch or older (in the base) or later
    // (never acknowledged), so from here on recovery reads the base alone.
    const std::string p = checkpoint_pointer(base->number, base->file, base->after_epoch + 1, 0, base->rows);
    if (auto err = platform::replace_file(pointer_path, p); !err.empty()) return cannot("write", pointer_path, err);
  }
  // This log's epoch file, before any older file goes: nothing durable yet,
  // both copies epoch 0 and no journal's byte. Written aside, synced and
  // renamed over the older log's, the directory synced, and kept open for
  // the writes in place that follow: a crash before the rename leaves the
  // older log as it was, after it a log that holds nothing durable (the
  // older journals' records all lie past its epoch, or in the base).
  const std::string epoch_path = dir + "/" + std::string(kEpochFile);
  const std::string epoch_aside = epoch_path + ".new";
  const uint32_t journals = settings_.journal == JournalLayout::Shared ? 1 : workers_count_;
  DurablePoint none;
  none.journals.resize(journals);
  const std::string zero = epoch_file_bytes(none);
  epoch_sequence_ = 1;
  epoch_segments_.assign(journals, 0);
  std::string err = epoch_file_.open(epoch_aside);
  if (err.empty()) err = epoch_file_.write_at(0, zero.data(), zero.size());
  if (err.empty()) err = epoch_file_.sync();
  if (err.empty()) err = platform::rename_file(epoch_aside, epoch_path);
  if (err.empty()) err = platform::sync_dir(dir);
  if (!err.empty()) return "cannot write " + epoch_path + ": " + err;
  // An earlier run's segments and checkpoints would be read as this run's.
  std::vector<std::string> names;
  if (auto err = platform::list_dir(dir, names); !err.empty()) return cannot("list", dir, err);
  for (const std::string& name : names) {
    uint32_t journal = 0;
    uint32_t segment = 0;
    const bool checkpoint = name == kCheckpointFile || (name.rfind("checkpoint-", 0) == 0 && name.ends_with(".abc"));
    if (!checkpoint && !parse_journal_name(name, journal, segment)) continue;
    if (base != nullptr && (name == kCheckpointFile || name == base->file)) continue;
    std::string path = dir;
    path += '/';
    path += name;
    if (auto err = platform::remove_file(path); !err.empty()) return cannot("remove", path, err);
  }
  if (base != nullptr) {
    // No journal is left: this run's records, of epochs from 1 on, are
    // replayed over the base.
    const std::string p = checkpoint_pointer(base->number, base->file, 1, 0, base->rows);
    if (auto err = platform::replace_file(pointer_path, p); !err.empty()) return cannot("write", pointer_path, err);
  }
  for (uint32_t j = 0; j < journals; j++) {
    platform::JournalFile& f = settings_.journal == JournalLayout::Shared ? shared_file_ : workers_[j]->file_;
    if (err = open_segment(f, j, 0); !err.empty()) return cannot("write", dir + "/" + journal_name(j, 0), err);
  }
  if (!settings_.ack_log.empty()) {
    platform::JournalFile truncate;
    err = truncate.open(settings_.ack_log);
    if (err.empty()) err = truncate.close();
    for (uint32_t i = 0; i < workers_count_ && err.empty(); i++)
      err = workers_[i]->ack_log_.open(settings_.ack_log, true);
    if (!err.empty()) return "cannot write " + settings_.ack_log + ": " + err;
  }
  const std::string manifest_path = dir + "/" + std::string(kManifestFile);
  if (err = platform::replace_file(manifest_path, manifest); !err.empty()) {
    return "cannot write " + manifest_path + ": " + err;
  }
  return {};
}

// A new segment file with its header, its directory entry durable before
// any record in it counts as durable.
std::string Logger::open_segment(platform::JournalFile& f, uint32_t journal, uint32_t segment) {
  const std::string header = journal_header(journal);
  std::string err = f.open(settings_.dir + "/" + journal_name(journal, segment));
  if (err.empty()) err = f.append(header.data(), header.size());
  if (err.empty() && sync_) err = f.sync();
  if (err.empty() && sync_) err = platform::sync_dir(settings_.dir);
  // From the next write of the epoch file on, recovery needs this file.
  platform::Atomic<uint64_t>& synced =
      settings_.journal == JournalLayout::Shared ? shared_synced_ : slots_[journal].synced;
  if (err.empty()) synced.store(pack_end(segment, f.size()), platform::memory_order_release);
  return err;
}

void Logger::note_old_segment(const OldSegment& s) {
  segments_latch_.lock();
  old_segments_.push_back(s);
  segments_latch_.unlock();
}

std::string Logger::remove_segments_before(uint64_t epoch) {
  durable_latch_.lock();
  const std::vector<uint32_t> named = epoch_segments_;
  durable_latch_.unlock();
  segments_latch_.lock();
  std::vector<OldSegment> gone;
  std::erase_if(old_segments_, [&](const OldSegment& s) {
    // One the epoch file still names waits for a later write of it.
    if (s.epoch >= epoch || s.segment >= named[s.journal]) return false;
    gone.push_back(s);
    return true;
  });
  segments_latch_.unlock();
  for (const OldSegment& s : gone) {
    const std::string path = settings_.dir + "/" + journal_name(s.journal, s.segment);
    if (auto err = platform::remove_file(path); !err.empty()) return cannot("remove", path, err);
  }
  return {};
}

uint64_t Logger::replay_from() const {
  uint64_t from = epoch_.load(platform::memory_order_seq_cst);
  for (uint32_t i = 0; i < workers_count_; i++) {
    const uint64_t e = slots_[i].installing.load(platform::memory_order_seq_cst);
    if (e != 0) from = std::min(from, e);
  }
  return from;
}

void Logger::advance_epoch_past(uint64_t e) {
  uint64_t now = e;
  // Sequentially consistent: WorkerLog::resume relies on it.
  if (epoch_.compare_exchange_strong(now, e + 1, platform::memory_order_seq_cst)) {
    epoch_began_.store(platform::cycles(), platform::memory_order_relaxed);
  }
}

void Logger::tick_epoch(uint64_t now) {
  const uint64_t began = epoch_began_.load(platform::memory_order_relaxed);
  if (now - began < group_cycles_ || now < began) return;
  advance_epoch_past(epoch());
}

void Logger::advance_durable() {
  auto least = [&] {
    platform::fence();  // orders the slots' reads after the epoch advances this worker has seen (resume)
    uint64_t d = kFinished;
    for (uint32_t i = 0; i < workers_count_; i++)
      d = std::min(d, slots_[i].persisted.load(platform::memory_order_acquire));
    return d;
  };
  // Once every worker finished, close() makes the last epoch durable.
  if (!epoch_pending_.load(platform::memory_order_acquire)) {
    if (const uint64_t d = least(); d == kFinished || d <= durable()) return;
  }
  if (!durable_latch_.try_lock()) return;
  // One copy at a time, and the next only once this one is durable: the
  // next write goes to the other copy, which recovery falls back to while
  // this one names bytes not yet synced.
  if (epoch_pending_.load(platform::memory_order_relaxed) && !settle_epoch_flight(false)) {
    durable_latch_.unlock();
    return;
  }
  const uint64_t d = least();
  if (d != kFinished && d > durable() && !failed()) {
    // Per-worker journals synced by helpers: the copy names the bytes
    // written, and its sync runs beside theirs.
    const bool beside = sync_ && settings_.journal != JournalLayout::Shared;
    if (!files_) {
      publish_durable(d);
    } else if (auto err = write_epoch_copy(d, beside, epoch_flight_); !err.empty()) {
      record_error(std::string(kEpochFile) + " in " + settings_.dir + ": " + err);
    } else if (sync_) {
      epoch_sync_.start(epoch_file_, &wake_all_);
      epoch_syncs_++;
      epoch_flight_landed_ = false;
      epoch_pending_.store(true, platform::memory_order_release);
      (void)settle_epoch_flight(false);  // the simulated build syncs at once
    } else {
      epoch_written(epoch_flight_);
      publish_durable(d);
    }
  }
  durable_latch_.unlock();
}

void Logger::wake_behind(uint64_t epoch) const {
  for (uint32_t i = 0; i < workers_count_; i++) {
    if (slots_[i].persisted.load(platform::memory_order_relaxed) < epoch) workers_[i]->wake();
  }
}

bool Logger::settle_epoch_flight(bool wait) {
  if (!epoch_flight_landed_) {
    std::string err;
    if (wait) {
      err = epoch_sync_.wait();
    } else if (!epoch_sync_.done(err)) {
      return false;
    }
    if (!err.empty()) {
      epoch_pending_.store(false, platform::memory_order_relaxed);
      record_error(std::string(kEpochFile) + " in " + settings_.dir + ": " + err);
      return false;
    }
    epoch_flight_landed_ = true;
  }
  if (!journals_synced_to(epoch_flight_)) return false;
  epoch_pending_.store(false, platform::memory_order_relaxed);
  epoch_written(epoch_flight_);
  publish_durable(epoch_flight_.epoch);
  return true;
}

bool Logger::journals_synced_to(const DurablePoint& point) const {
  if (!point.beside) return true;
  for (uint32_t i = 0; i < workers_count_; i++) {
    const JournalEnd& end = point.journals[i];
    if (slots_[i].synced.load(platform::memory_order_acquire) < pack_end(end.segment, end.bytes)) return false;
  }
  return true;
}

void Logger::publish_durable(uint64_t epoch) {
  durable_.store(epoch, platform::memory_order_release);
  platform::fence();  // before the slots' reading: see WorkerLog::idle
  for (uint32_t i = 0; i < workers_count_; i++) {
    const uint64_t awaiting = slots_[i].awaiting.load(platform::memory_order_relaxed);
    if (awaiting != 0 && awaiting <= epoch) workers_[i]->wake();
  }
}

void Logger::settle_durable() {
  if (!epoch_pending_.load(platform::memory_order_acquire)) return;
  durable_latch_.lock();
  if (epoch_pending_.load(platform::memory_order_relaxed)) (void)settle_epoch_flight(true);
  durable_latch_.unlock();
}

std::string Logger::write_epoch_file(uint64_t epoch) {
  DurablePoint point;
  std::string err = write_epoch_copy(epoch, false, point);
  if (err.empty() && sync_) {
    err = epoch_file_.sync();
    epoch_syncs_++;
  }
  if (err.empty()) epoch_written(point);
  return err;
}

std::string Logger::write_epoch_copy(uint64_t epoch, bool beside, DurablePoint& point) {
  // Each journal's end is read after the epochs that made `epoch` durable:
  // it covers every record of `epoch` and older, and perhaps later ones.
  point = {};
  point.sequence = epoch_sequence_ + 1;
  point.epoch = epoch;
  point.beside = beside;
  if (settings_.journal == JournalLayout::Shared) {
    point.journals.push_back(unpack_end(shared_synced_.load(platform::memory_order_acquire)));
  } else {
    for (uint32_t i = 0; i < workers_count_; i++) {
      const Slot& slot = slots_[i];
      point.journals.push_back(unpack_end((beside ? slot.written : slot.synced).load(platform::memory_order_acquire)));
    }
  }
  const std::string bytes = epoch_copy_bytes(point);
  return epoch_file_.write_at(point.sequence % 2 * bytes.size(), bytes.data(), bytes.size());
}

void Logger::epoch_written(const DurablePoint& point) {
  epoch_sequence_ = point.sequence;
  for (std::size_t j = 0; j < point.journals.size(); j++) epoch_segments_[j] = point.journals[j].segment;
}

bool Logger::write_shared(WorkerLog& by, bool wait) {
  for (;;) {
    if (shared_durable_.load(platform::memory_order_acquire) >= by.shared_end_) return true;
    if (failed()) return false;
    if (!shared_write_latch_.try_lock()) {
      if (!wait) return false;
      platform::yield_thread();  // another worker writes: this one's records may be in its group
      continue;
    }
    shared_latch_.lock();
    std::swap(shared_buf_, shared_writing_);
    const uint64_t end = shared_appended_;
    const uint64_t newest = shared_buf_epoch_;
    shared_buf_epoch_ = 0;
    shared_latch_.unlock();
    std::string err;
    if (files_ && segment_.load(platform::memory_order_acquire) != shared_segment_) {
      err = shared_file_.close();
      note_old_segment({0, shared_segment_, shared_segment_epoch_});
      shared_segment_ = segment_.load(platform::memory_order_acquire);
      shared_segment_epoch_ = 0;
      if (err.empty()) err = open_segment(shared_file_, 0, shared_segment_);
    }
    shared_segment_epoch_ = std::max(shared_segment_epoch_, newest);
    if (files_ && err.empty()) {
      err = shared_file_.append(shared_writing_.data(), shared_writing_.size());
      if (err.empty() && sync_) {
        err = shared_file_.sync();
        by.totals_.fsyncs++;
      }
    }
    by.totals_.flushes++;
    shared_writing_.clear();
    if (err.empty() && files_ && shared_file_.size() >> kEndBytesBits != 0) {
      err = "a journal segment reached 1 TiB (take checkpoints: --checkpoint-every-ms)";
    }
    if (err.empty()) {
      // Before the records written count as durable.
      shared_synced_.store(pack_end(shared_segment_, shared_file_.size()), platform::memory_order_release);
      shared_durable_.store(end, platform::memory_order_release);
    }
    shared_write_latch_.unlock();
    if (!err.empty()) by.fail(journal_name(0, shared_segment_), err);
  }
}

void Logger::record_error(const std::string& error) {
  error_latch_.lock();
  if (error_.empty()) error_ = error;
  error_latch_.unlock();
  failed_.store(true, platform::memory_order_release);
}

std::string Logger::error() {
  error_latch_.lock();
  std::string e = error_;
  error_latch_.unlock();
  return e;
}

void Logger::wait_for_syncs() {
  for (auto& w : workers_) {
    (void)w->syncing_.wait();
    w->syncing_.stop();
  }
  settle_durable();
  epoch_sync_.stop();
}

std::string Logger::close() {
  if (failed()) return error();
  // Every worker wrote its last records: all of them are durable, the
  // current epoch's too.
  const uint64_t last = epoch();
  if (files_) {
    // The copy a worker left syncing goes first: the next write is to the other.
    settle_durable();
    if (failed()) return error();
    std::string err = write_epoch_file(last);
    if (err.empty()) err = epoch_file_.close();
    if (err.empty()) err = shared_file_.close();
    for (auto& w : workers_) {
      if (err.empty()) err = w->file_.close();
      if (err.empty()) err = w->ack_log_.close();
    }
    if (!err.empty()) {
      record_error("closing the journals in " + settings_.dir + ": " + err);
      return error();
    }
  }
  durable_.store(last, platform::memory_order_release);
  return {};
}

LogTotals Logger::totals() const {
  LogTotals t;
  for (const auto& w : workers_) {
    t.records += w->totals_.records;
    t.bytes += w->totals_.bytes;
    t.flushes += w->totals_.flushes;
    t.fsyncs += w->totals_.fsyncs;
  }
  t.fsyncs += epoch_syncs_;
  t.durable_epoch = durable();
  return t;
}

}  // namespace abyss::log
