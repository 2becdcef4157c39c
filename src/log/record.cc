#include "log/record.h"

#include <zlib.h>

#include <cstring>

#include "platform/checksum.h"

namespace abyss::log {

namespace {

template <class T>
void put_le(std::string& out, T v) {
  for (std::size_t i = 0; i < sizeof(T); i++) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
template <class T>
void store_le(char* p, T v) {
  for (std::size_t i = 0; i < sizeof(T); i++) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Whether every byte of `bytes` is zero: a file system may leave a crashed
// append's blocks allocated but unwritten.
bool all_zero(std::string_view bytes) {
  for (const char c : bytes) {
    if (c != 0) return false;
  }
  return true;
}

// Whether the writes of a record fill its body exactly, each of a kind
// its format has, a delete without data, a checkpoint's row with its
// commit id, a columns write with its mask.
bool writes_parse(std::string_view body, uint32_t writes, uint32_t format) {
  const uint8_t kinds = format >= kFormat ? 5 : 4;
  std::size_t pos = 0;
  for (uint32_t i = 0; i < writes; i++) {
    if (body.size() - pos < kWriteHeaderBytes) return false;
    const char* p = body.data() + pos;
    const auto kind = static_cast<uint8_t>(p[10]);
    const uint32_t bytes = load_le<uint32_t>(p + 12);
    if (kind < 1 || kind > kinds || (kind == 3 && bytes != 0) || (kind == 4 && bytes < 8) ||
        (kind == 5 && bytes < kColumnMaskBytes)) {
      return false;
    }
    if (body.size() - pos - kWriteHeaderBytes < bytes) return false;
    pos += kWriteHeaderBytes + bytes;
  }
  return pos == body.size();
}

}  // namespace

uint32_t crc32(std::string_view bytes, uint32_t crc) {
  // zlib takes lengths as uInt: large inputs go in pieces.
  while (!bytes.empty()) {
    const std::size_t n = bytes.size() < (std::size_t{1} << 30) ? bytes.size() : (std::size_t{1} << 30);
    crc = static_cast<uint32_t>(::crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n)));
    bytes.remove_prefix(n);
  }
  return crc;
}

namespace {

// A journal's or a checkpoint's header: magic, format, number.
std::string file_header(std::string_view magic, uint32_t number, uint32_t format = kFormat) {
  std::string h(magic);
  put_le<uint32_t>(h, format);
  put_le<uint32_t>(h, number);
  return h;
}

// Why `bytes` do not start with the header of a `what` (named by `magic`).
std::string check_file_header(std::string_view bytes, std::string_view magic, const std::string& what) {
  if (bytes.size() < kJournalHeaderBytes || bytes.substr(0, magic.size()) != magic) {
    return "not an abyss " + what + " (no " + std::string(magic) + " header)";
  }
  const uint32_t format = load_le<uint32_t>(bytes.data() + 8);
  if (format < kFormatCrc32 || format > kFormat) {
    return what + " format " + std::to_string(format) + ", this build reads formats " + std::to_string(kFormatCrc32) +
           " to " + std::to_string(kFormat);
  }
  return {};
}

}  // namespace

uint32_t file_format(std::string_view bytes) { return load_le<uint32_t>(bytes.data() + 8); }

uint32_t record_checksum(std::string_view bytes, uint32_t format) {
  return format == kFormatCrc32 ? crc32(bytes) : platform::crc32c(bytes);
}

std::string journal_header(uint32_t journal, uint32_t format) { return file_header(kJournalMagic, journal, format); }
std::string checkpoint_header(uint64_t number) { return file_header(kCheckpointMagic, static_cast<uint32_t>(number)); }
std::string check_journal_header(std::string_view bytes) { return check_file_header(bytes, kJournalMagic, "journal"); }
std::string check_checkpoint_header(std::string_view bytes) {
  return check_file_header(bytes, kCheckpointMagic, "checkpoint");
}

void RecordBuilder::begin(uint64_t epoch, uint64_t tid) {
  start_ = out_.size();
  writes_ = 0;
  open_ = true;
  out_.resize(start_ + kRecordHeaderBytes);
  char* h = out_.data() + start_;
  store_le<uint64_t>(h + 8, epoch);
  store_le<uint64_t>(h + 16, tid);
}

void RecordBuilder::write(uint32_t table, WriteKind kind, uint64_t key, const char* data, uint32_t bytes) {
  write_header(table, kind, key, bytes);
  if (bytes > 0) out_.append(data, bytes);
}

void RecordBuilder::write_header(uint32_t table, WriteKind kind, uint64_t key, uint32_t bytes) {
  char h[kWriteHeaderBytes];
  store_le<uint64_t>(h, key);
  store_le<uint16_t>(h + 8, static_cast<uint16_t>(table));
  h[10] = static_cast<char>(kind);
  h[11] = 0;
  store_le<uint32_t>(h + 12, bytes);
  out_.append(h, kWriteHeaderBytes);
  writes_++;
}

char* RecordBuilder::reserve(uint32_t table, WriteKind kind, uint64_t key, uint32_t bytes) {
  write_header(table, kind, key, bytes);
  const std::size_t at = out_.size();
  out_.resize(at + bytes);
  return out_.data() + at;
}

char* RecordBuilder::reserve_columns(uint32_t table, uint64_t key, uint64_t mask, uint32_t bytes) {
  char* p = reserve(table, WriteKind::Columns, key, static_cast<uint32_t>(kColumnMaskBytes) + bytes);
  store_le<uint64_t>(p, mask);
  return p + kColumnMaskBytes;
}

void RecordBuilder::begin_columns(uint32_t table, uint64_t key, uint64_t mask, uint32_t bytes) {
  write_header(table, WriteKind::Columns, key, static_cast<uint32_t>(kColumnMaskBytes) + bytes);
  char m[kColumnMaskBytes];
  store_le<uint64_t>(m, mask);
  out_.append(m, kColumnMaskBytes);
}

void RecordBuilder::end() {
  char* h = out_.data() + start_;
  const std::size_t size = out_.size() - start_;
  store_le<uint32_t>(h, static_cast<uint32_t>(size));
  store_le<uint32_t>(h + 24, writes_);
  store_le<uint32_t>(h + 28, 0);
  store_le<uint32_t>(h + 4, record_checksum(std::string_view(h + 8, size - 8), format_));
  open_ = false;
}

ReadStatus read_record(std::string_view journal, std::size_t& pos, RecordView& out, std::string& why, uint32_t format) {
  if (pos >= journal.size()) return ReadStatus::End;
  const std::string_view rest = journal.substr(pos);
  if (all_zero(rest)) {
    why = std::to_string(rest.size()) + " zero bytes after the last record";
    return ReadStatus::Torn;
  }
  if (rest.size() < kRecordHeaderBytes) {
    why = "the journal ends " + std::to_string(rest.size()) + " bytes into a record's header";
    return ReadStatus::Torn;
  }
  const uint32_t size = load_le<uint32_t>(rest.data());
  if (size < kRecordHeaderBytes) {
    why = "a record's size field says " + std::to_string(size) + " bytes, less than its header";
    return ReadStatus::Corrupt;
  }
  if (size > rest.size()) {
    why = "the journal ends " + std::to_string(rest.size()) + " bytes into a record of " + std::to_string(size);
    return ReadStatus::Torn;
  }
  const uint32_t crc = load_le<uint32_t>(rest.data() + 4);
  const std::string_view record = rest.substr(0, size);
  const bool last = size == rest.size();
  if (record_checksum(record.substr(8), format) != crc) {
    why = "a record of " + std::to_string(size) + " bytes fails its checksum";
    return last ? ReadStatus::Torn : ReadStatus::Corrupt;
  }
  out.epoch = load_le<uint64_t>(record.data() + 8);
  out.tid = load_le<uint64_t>(record.data() + 16);
  out.writes = load_le<uint32_t>(record.data() + 24);
  out.body = record.substr(kRecordHeaderBytes);
  if (!writes_parse(out.body, out.writes, format)) {
    why = "a record whose checksum holds but whose " + std::to_string(out.writes) + " writes do not parse";
    return ReadStatus::Corrupt;
  }
  pos += size;
  return ReadStatus::Ok;
}

}  // namespace abyss::log
