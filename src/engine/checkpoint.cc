#include "engine/checkpoint.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

#include "engine/recover.h"
#include "log/record.h"
#include "platform/clock.h"
#include "platform/file.h"
#include "platform/shared_copy.h"

namespace abyss {

namespace {
// Records of a checkpoint hold about this many bytes of rows each.
constexpr std::size_t kRecordBytes = std::size_t{1} << 20;
constexpr uint64_t kDurablePollNs = 200'000;
}  // namespace

CheckpointFile write_checkpoint(const Database& db, const std::string& path, uint64_t number, uint64_t from,
                                Epochs* epochs, uint32_t slot) {
  auto fail = [&](const std::string& err) { throw std::runtime_error("checkpoint " + path + ": " + err); };
  platform::JournalFile file;
  if (auto err = file.open(path); !err.empty()) fail(err);
  std::string buf = log::checkpoint_header(number);
  log::RecordBuilder record(buf);
  CheckpointFile out;
  auto spill = [&] {
    if (record.open()) record.end();
    out.bytes += buf.size();
    if (auto err = file.append(buf.data(), buf.size()); !err.empty()) fail(err);
    buf.clear();
  };
  const RowLayout& layout = db.layout();
  // A row is copied from shared memory into aligned words first
  // (platform/shared_copy.h: both ends 8-byte aligned), then into the
  // record, where it lands at any offset.
  std::vector<uint64_t> copy;
  for (const auto& table : db.tables()) {
    const uint32_t size = table->schema().size();
    // Announced for the whole table: no row the walk reaches is reused
    // until it is done (txn/epochs.h).
    if (epochs != nullptr) epochs->enter(slot);
    table->index().for_each([&](uint64_t key, Row* row) {
      RowHeader& h = RowLayout::header(row);
      // The commit id first, then the data: a version installed meanwhile
      // makes the copy newer than its id, never older, and its record,
      // of an epoch from `from` on, is replayed over it.
      const uint64_t writer = platform::load_shared_word(h.writer.value);
      const uint32_t flags = platform::load_shared_u32(h.flags);
      if ((flags & RowHeader::kLive) == 0 || (flags & RowHeader::kDeleted) != 0) return;
      if (!record.open()) record.begin(from, 0);
      char* row_out = record.reserve(table->id(), log::WriteKind::Row, key, 8 + size);
      for (int i = 0; i < 8; i++) row_out[i] = static_cast<char>((writer >> (8 * i)) & 0xff);
      copy.resize((size + 7) / 8);
      platform::load_shared(copy.data(), layout.data(row), size);
      std::memcpy(row_out + 8, copy.data(), size);
      out.rows++;
      if (buf.size() >= kRecordBytes) spill();
    });
    if (epochs != nullptr) epochs->leave(slot);
  }
  spill();
  if (auto err = file.sync(); !err.empty()) fail(err);
  if (auto err = file.close(); !err.empty()) fail(err);
  return out;
}

bool Checkpointer::take(uint64_t number, const std::function<bool()>& stop) {
  const uint64_t t0 = platform::wall_ns();
  const std::string& dir = logger_.settings().dir;
  // Commits still installing may have joined an older epoch than the
  // current one: their records are replayed over this checkpoint too.
  const uint64_t from = logger_.replay_from();
  logger_.start_segments();
  const std::string name = log::checkpoint_name(number);
  const std::string path = dir + "/" + name;
  auto fail = [&](const std::string& err) { throw std::runtime_error("checkpoint " + path + ": " + err); };
  const CheckpointFile written = write_checkpoint(db_, path, number, from, &epochs_, slot_);
  // Every version copied was installed by a commit of this epoch or an
  // earlier one: once it is durable, so is each of them.
  const uint64_t end = logger_.epoch();
  while (logger_.durable() < end) {
    if (stop() || logger_.failed()) {
      (void)platform::remove_file(path);
      return false;
    }
    platform::sleep_ns(kDurablePollNs);
  }
  if (auto err = platform::replace_file(dir + "/" + std::string(log::kCheckpointFile),
                                        log::checkpoint_pointer(number, name, from, end, written.rows));
      !err.empty()) {
    fail(err);
  }
  if (auto err = logger_.remove_segments_before(from); !err.empty()) fail(err);
  // The one it replaces: the run's previous checkpoint, or the one it started from.
  if (number > 1) (void)platform::remove_file(dir + "/" + log::checkpoint_name(number - 1));
  totals_.checkpoints++;
  totals_.rows += written.rows;
  totals_.bytes += written.bytes;
  totals_.seconds += static_cast<double>(platform::wall_ns() - t0) / 1e9;
  return true;
}

std::string take_checkpoints(Checkpointer& checkpointer, uint64_t first, uint32_t every_ms,
                             const std::function<bool()>& done) {
  const uint64_t every_ns = uint64_t{every_ms} * 1'000'000;
  uint64_t next = platform::wall_ns() + every_ns;
  for (uint64_t number = first; !done();) {
    if (platform::wall_ns() < next) {
      platform::sleep_ns(std::min<uint64_t>(1'000'000, next - platform::wall_ns()));
      continue;
    }
    try {
      if (checkpointer.take(number, done)) number++;
    } catch (const std::exception& e) {
      return e.what();
    }
    next = platform::wall_ns() + every_ns;
  }
  return {};
}

OpenLog open_log(const Config& cfg, const Database& db, uint32_t workers, bool recovered, uint64_t recovered_checkpoint,
                 uint64_t recovered_epoch) {
  OpenLog out;
  out.logger = std::make_unique<log::Logger>(cfg.log, workers, platform::cycles_per_ns());
  // A recovered database's log starts from it: a checkpoint of it, in
  // place before the old journals go.
  std::optional<log::BaseCheckpoint> base;
  if (recovered && cfg.log.policy == LogPolicy::File) {
    base.emplace();
    base->number = recovered_checkpoint + 1;
    base->file = log::checkpoint_name(base->number);
    base->after_epoch = recovered_epoch;
    base->rows = write_checkpoint(db, cfg.log.dir + "/" + base->file, base->number, 1, nullptr, 0).rows;
    out.first_checkpoint = base->number + 1;
  }
  if (auto err = out.logger->open(log_manifest(cfg), base ? &*base : nullptr); !err.empty()) {
    throw std::runtime_error(err);
  }
  return out;
}

}  // namespace abyss
