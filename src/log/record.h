#pragma once
// The journal format (docs/durability.md, "Record format"): a journal file is
// a 16-byte header and then log records, each one committed transaction's
// writes with the epoch it committed in and its commit id, guarded by a
// checksum of everything after the checksum field: CRC-32C from format 2
// on (platform/checksum.h), zlib's CRC-32 in format 1. An update logs the
// columns it changed from format 3 on, the whole row before. Formats 1
// and 2 are still read. All integers little-endian.
//
//   journal header  "ABYSSJNL" | u32 format | u32 journal number
//   record          u32 size (whole record) | u32 crc | u64 epoch | u64 tid
//                   | u32 writes | u32 zero | writes...
//   write           u64 key | u16 table | u8 kind | u8 zero | u32 bytes | data
//   Columns data    u64 mask (bit i: column i of the table's schema) | each
//                   masked column's bytes, in column order
//
// A commit id orders the writes of one row (txn/txn.h, ordered_commit_id);
// the epoch says whether recovery may apply the record at all.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace abyss::log {

inline constexpr std::string_view kJournalMagic = "ABYSSJNL";
inline constexpr std::string_view kCheckpointMagic = "ABYSSCKP";
inline constexpr uint32_t kFormat = 3;       // what this build writes
inline constexpr uint32_t kFormatRows = 2;   // CRC-32C, updates log whole rows: still read
inline constexpr uint32_t kFormatCrc32 = 1;  // the first format: zlib's CRC-32, whole rows: still read
inline constexpr std::size_t kJournalHeaderBytes = 16;
inline constexpr std::size_t kRecordHeaderBytes = 32;
inline constexpr std::size_t kWriteHeaderBytes = 16;

// Row is a checkpoint's: its data is the row's commit id (u64), then its
// contents. Columns (format 3) is an update of the masked columns only;
// Update is one of the whole row.
enum class WriteKind : uint8_t { Update = 1, Insert = 2, Delete = 3, Row = 4, Columns = 5 };
// A Columns write's mask has a bit per column: a table of more columns logs
// its updates whole.
inline constexpr std::size_t kMaskColumns = 64;
inline constexpr std::size_t kColumnMaskBytes = 8;

// The header a journal file starts with (of format 1: for tests of reading it).
std::string journal_header(uint32_t journal, uint32_t format = kFormat);
// Whether `bytes` start with a journal header of a format this build reads;
// the reason they do not.
std::string check_journal_header(std::string_view bytes);
// The format of a journal's or a checkpoint's header already checked.
uint32_t file_format(std::string_view bytes);
// A checkpoint file is a journal whose header says ABYSSCKP and whose
// records hold Row writes (engine/checkpoint.h).
std::string checkpoint_header(uint64_t number);
std::string check_checkpoint_header(std::string_view bytes);

// Appends one record to a buffer: begin(), a write() per row, end(). Of
// this build's format; of an older one for tests of reading it (which
// then takes no Columns write).
class RecordBuilder {
 public:
  explicit RecordBuilder(std::string& out, uint32_t format = kFormat) : out_(out), format_(format) {}
  void begin(uint64_t epoch, uint64_t tid);
  // A delete carries no data.
  void write(uint32_t table, WriteKind kind, uint64_t key, const char* data, uint32_t bytes);
  // A write whose `bytes` of data the caller fills in at the pointer returned.
  char* reserve(uint32_t table, WriteKind kind, uint64_t key, uint32_t bytes);
  // A Columns write of the columns in `mask`, whose `bytes` in all the
  // caller fills in, in column order, at the pointer returned.
  char* reserve_columns(uint32_t table, uint64_t key, uint64_t mask, uint32_t bytes);
  // The same, the caller appending the columns' bytes in column order
  // (append), which spares filling them twice.
  void begin_columns(uint32_t table, uint64_t key, uint64_t mask, uint32_t bytes);
  void append(const char* data, std::size_t bytes) { out_.append(data, bytes); }
  [[nodiscard]] bool open() const { return open_; }
  // Fills in the size and the checksum.
  void end();

 private:
  void write_header(uint32_t table, WriteKind kind, uint64_t key, uint32_t bytes);

  std::string& out_;
  uint32_t format_;
  std::size_t start_ = 0;
  uint32_t writes_ = 0;
  bool open_ = false;
};

struct WriteView {
  uint64_t key = 0;
  uint32_t table = 0;
  WriteKind kind = WriteKind::Update;
  const char* data = nullptr;
  uint32_t bytes = 0;
};

struct RecordView {
  uint64_t epoch = 0;
  uint64_t tid = 0;
  uint32_t writes = 0;
  std::string_view body;  // the writes

  // Visits every write in order.
  template <class Visit>
  void for_each_write(Visit&& visit) const;
};

enum class ReadStatus {
  Ok,       // `out` is the next record
  End,      // the journal ends here, cleanly
  Torn,     // the journal ends inside a record, or in a bad record nothing follows: a write the crash cut off
  Corrupt,  // a record that fails its checksum or does not parse, with more after it
};

// Reads the record at `pos` of a journal's bytes (after its header), of
// the journal's `format`, and moves `pos` past it. On Torn and Corrupt,
// `why` says what was wrong.
ReadStatus read_record(std::string_view journal, std::size_t& pos, RecordView& out, std::string& why,
                       uint32_t format = kFormat);

// CRC-32 (zlib's polynomial) of `bytes`, continuing from `crc`: format 1's
// records and the epoch file.
uint32_t crc32(std::string_view bytes, uint32_t crc = 0);
// A record's checksum in `format`.
uint32_t record_checksum(std::string_view bytes, uint32_t format);

// The little-endian integers of the format.
template <class T>
T load_le(const char* p) {
  T v{};
  for (std::size_t i = 0; i < sizeof(T); i++) v |= static_cast<T>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

template <class Visit>
void RecordView::for_each_write(Visit&& visit) const {
  std::size_t pos = 0;
  for (uint32_t i = 0; i < writes; i++) {
    WriteView w;
    const char* p = body.data() + pos;
    w.key = load_le<uint64_t>(p);
    w.table = load_le<uint16_t>(p + 8);
    w.kind = static_cast<WriteKind>(static_cast<uint8_t>(p[10]));
    w.bytes = load_le<uint32_t>(p + 12);
    w.data = p + kWriteHeaderBytes;
    pos += kWriteHeaderBytes + w.bytes;
    visit(w);
  }
}

}  // namespace abyss::log
