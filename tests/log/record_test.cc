// The journal format (log/record.h): what is written reads back, and a cut
// or damaged journal is told apart from a clean end.
#include "log/record.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "log/logger.h"

namespace abyss::log {
namespace {

std::string two_records() {
  std::string j = journal_header(3);
  RecordBuilder b(j);
  b.begin(7, 41);
  b.write(2, WriteKind::Update, 1000, "abcd", 4);
  b.write(0, WriteKind::Delete, 99, nullptr, 0);
  b.end();
  b.begin(8, 52);
  b.write(1, WriteKind::Insert, 5, "xy", 2);
  b.end();
  return j;
}

TEST(Record, WhatIsWrittenReadsBack) {
  const std::string j = two_records();
  ASSERT_EQ(check_journal_header(j), "");
  std::size_t pos = kJournalHeaderBytes;
  RecordView r;
  std::string why;
  ASSERT_EQ(read_record(j, pos, r, why), ReadStatus::Ok) << why;
  EXPECT_EQ(r.epoch, 7u);
  EXPECT_EQ(r.tid, 41u);
  std::vector<std::string> seen;
  r.for_each_write([&](const WriteView& w) {
    seen.push_back(std::to_string(w.table) + ":" + std::to_string(w.key) + ":" +
                   std::to_string(static_cast<int>(w.kind)) + ":" + std::string(w.data, w.bytes));
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"2:1000:1:abcd", "0:99:3:"}));
  ASSERT_EQ(read_record(j, pos, r, why), ReadStatus::Ok) << why;
  EXPECT_EQ(r.epoch, 8u);
  EXPECT_EQ(r.tid, 52u);
  EXPECT_EQ(read_record(j, pos, r, why), ReadStatus::End);
}

TEST(Record, AJournalCutInsideItsLastRecordIsTorn) {
  const std::string j = two_records();
  for (std::size_t cut = 1; cut < 34; cut++) {
    const std::string cut_j = j.substr(0, j.size() - cut);
    std::size_t pos = kJournalHeaderBytes;
    RecordView r;
    std::string why;
    ASSERT_EQ(read_record(cut_j, pos, r, why), ReadStatus::Ok);
    EXPECT_EQ(read_record(cut_j, pos, r, why), ReadStatus::Torn) << "cut " << cut;
    EXPECT_FALSE(why.empty());
  }
}

TEST(Record, ZerosAfterTheLastRecordAreATornTail) {
  const std::string j = two_records() + std::string(4096, '\0');
  std::size_t pos = kJournalHeaderBytes;
  RecordView r;
  std::string why;
  ASSERT_EQ(read_record(j, pos, r, why), ReadStatus::Ok);
  ASSERT_EQ(read_record(j, pos, r, why), ReadStatus::Ok);
  EXPECT_EQ(read_record(j, pos, r, why), ReadStatus::Torn);
  EXPECT_NE(why.find("zero"), std::string::npos) << why;
}

// Every byte of the first record flipped in turn: never read as a record,
// always reported (the second record follows, so it is no torn tail).
TEST(Record, EveryFlippedByteOfARecordWithMoreAfterItIsCorrupt) {
  const std::string j = two_records();
  std::size_t first_end = kJournalHeaderBytes;
  {
    RecordView r;
    std::string why;
    ASSERT_EQ(read_record(j, first_end, r, why), ReadStatus::Ok);
  }
  for (std::size_t i = kJournalHeaderBytes; i < first_end; i++) {
    std::string bad = j;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    std::size_t pos = kJournalHeaderBytes;
    RecordView r;
    std::string why;
    const ReadStatus s = read_record(bad, pos, r, why);
    // A flipped size can make the record run past the journal's end: torn.
    EXPECT_TRUE(s == ReadStatus::Corrupt || (i < kJournalHeaderBytes + 4 && s == ReadStatus::Torn))
        << "byte " << i << " read as " << static_cast<int>(s);
  }
}

TEST(Record, ABadLastRecordIsTornNotCorrupt) {
  std::string j = two_records();
  j[j.size() - 1] ^= 1;
  std::size_t pos = kJournalHeaderBytes;
  RecordView r;
  std::string why;
  ASSERT_EQ(read_record(j, pos, r, why), ReadStatus::Ok);
  EXPECT_EQ(read_record(j, pos, r, why), ReadStatus::Torn);
  EXPECT_NE(why.find("checksum"), std::string::npos) << why;
}

// Format 1 (zlib's CRC-32) is still read; its checksums are not format 2's.
TEST(Record, AFormatOneJournalStillReads) {
  std::string j = journal_header(3, kFormatCrc32);
  RecordBuilder b(j, kFormatCrc32);
  b.begin(7, 41);
  b.write(2, WriteKind::Update, 1000, "abcd", 4);
  b.end();
  ASSERT_EQ(check_journal_header(j), "");
  EXPECT_EQ(file_format(j), kFormatCrc32);
  std::size_t pos = kJournalHeaderBytes;
  RecordView r;
  std::string why;
  ASSERT_EQ(read_record(j, pos, r, why, kFormatCrc32), ReadStatus::Ok) << why;
  EXPECT_EQ(r.tid, 41u);
  pos = kJournalHeaderBytes;
  EXPECT_EQ(read_record(j, pos, r, why, kFormat), ReadStatus::Torn) << "a CRC-32 passed as a CRC-32C";
  EXPECT_EQ(file_format(two_records()), kFormat);
}

// A Columns write built by appending its columns is the one built by
// filling in the space reserved for them.
TEST(Record, AppendedColumnsBuildTheSameRecordAsReservedOnes) {
  std::string reserved;
  RecordBuilder r(reserved);
  r.begin(4, 40);
  std::memcpy(r.reserve_columns(2, 9, 0b101, 7), "abcdefg", 7);
  r.end();
  std::string appended;
  RecordBuilder a(appended);
  a.begin(4, 40);
  a.begin_columns(2, 9, 0b101, 7);
  a.append("abc", 3);
  a.append("defg", 4);
  a.end();
  EXPECT_EQ(appended, reserved);
}

// A Columns write (format 3) carries its mask and the masked columns'
// bytes; format 2, whose updates are whole rows, has no such write.
TEST(Record, AColumnsWriteCarriesItsMaskAndReadsOnlyInFormatThree) {
  auto journal = [](uint32_t format) {
    std::string j = journal_header(0, format);
    RecordBuilder b(j, format);
    b.begin(3, 30);
    char* p = b.reserve_columns(1, 77, 0b1010, 5);
    std::memcpy(p, "hello", 5);
    b.end();
    b.begin(3, 31);
    b.write(1, WriteKind::Insert, 78, "row", 3);
    b.end();
    return j;
  };
  const std::string j = journal(kFormat);
  std::size_t pos = kJournalHeaderBytes;
  RecordView r;
  std::string why;
  ASSERT_EQ(read_record(j, pos, r, why), ReadStatus::Ok) << why;
  std::vector<std::string> seen;
  r.for_each_write([&](const WriteView& w) {
    EXPECT_EQ(w.kind, WriteKind::Columns);
    EXPECT_EQ(w.bytes, kColumnMaskBytes + 5);
    EXPECT_EQ(load_le<uint64_t>(w.data), 0b1010u);
    seen.emplace_back(w.data + kColumnMaskBytes, w.bytes - kColumnMaskBytes);
  });
  EXPECT_EQ(seen, std::vector<std::string>{"hello"});
  const std::string old = journal(kFormatRows);
  pos = kJournalHeaderBytes;
  EXPECT_EQ(read_record(old, pos, r, why, kFormatRows), ReadStatus::Corrupt) << "a Columns write in format 2";
  EXPECT_NE(why.find("do not parse"), std::string::npos) << why;
}

TEST(Record, ForeignFilesAreNotJournals) {
  EXPECT_NE(check_journal_header("hello"), "");
  std::string other = journal_header(0);
  other[8] = 9;  // another format
  EXPECT_NE(check_journal_header(other).find("format 9"), std::string::npos);
}

DurablePoint point(uint64_t sequence, uint64_t epoch) {
  DurablePoint p;
  p.sequence = sequence;
  p.epoch = epoch;
  p.journals = {{0, 4096}, {3, 123456789012}};
  return p;
}

TEST(EpochFile, RoundTripsTheNewerCopy) {
  DurablePoint got;
  std::string note;
  ASSERT_EQ(parse_epoch_file(epoch_file_bytes(point(6, 123456789)), got, note), "");
  EXPECT_EQ(note, "");
  EXPECT_EQ(got.sequence, 7u);
  EXPECT_EQ(got.epoch, 123456789u);
  ASSERT_EQ(got.journals.size(), 2u);
  EXPECT_EQ(got.journals[1].segment, 3u);
  EXPECT_EQ(got.journals[1].bytes, 123456789012u);

  // The next write goes to the copy with the older point, in place.
  std::string file = epoch_file_bytes(point(6, 10));
  const std::string next = epoch_copy_bytes(point(8, 11));
  ASSERT_EQ(file.size(), 2 * next.size());
  file.replace(0, next.size(), next);
  ASSERT_EQ(parse_epoch_file(file, got, note), "");
  EXPECT_EQ(got.epoch, 11u);
}

// A write the crash cut off leaves the other copy: the one before it.
TEST(EpochFile, ACopyCutOffLeavesTheOtherOneAndSaysSo) {
  std::string file = epoch_file_bytes(point(6, 10));
  const std::string next = epoch_copy_bytes(point(8, 11));
  for (std::size_t cut = 1; cut < 60; cut++) {
    std::string torn = file;
    torn.replace(0, cut, next.substr(0, cut));
    DurablePoint got;
    std::string note;
    ASSERT_EQ(parse_epoch_file(torn, got, note), "") << "cut " << cut;
    if (torn == file) continue;  // the bytes cut in agree with the old ones
    EXPECT_EQ(got.epoch, 10u) << "cut " << cut;
    EXPECT_NE(note.find("copy 0"), std::string::npos) << note;
  }
}

TEST(EpochFile, RefusesTwoDamagedCopiesAndForeignBytes) {
  std::string bad = epoch_file_bytes(point(0, 5));
  bad[20] ^= 1;
  bad[bad.size() / 2 + 20] ^= 1;
  DurablePoint got;
  std::string note;
  EXPECT_NE(parse_epoch_file(bad, got, note).find("checksum"), std::string::npos);
  EXPECT_NE(parse_epoch_file("short", got, note), "");
  EXPECT_NE(parse_epoch_file(std::string(1024, 'x'), got, note).find("not an abyss epoch file"), std::string::npos);
}

}  // namespace
}  // namespace abyss::log
