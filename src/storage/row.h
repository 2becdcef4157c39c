#pragma once
// Row layout: [RowHeader][scheme's per-row metadata][data]. Aligned (the
// default, Tale §5), each row is padded to a multiple of 64 bytes and starts a
// cache line, so a row's header never shares a line with another row; packed
// (--align packed), rows follow each other at 8-byte (or the metadata's)
// alignment and neighbours share lines: less memory, false sharing.
// A Row (common/types.h) is opaque: addressed by pointer, its parts
// reached through RowLayout.
#include <cstddef>
#include <cstdint>

#include "common/storage_options.h"
#include "common/types.h"

namespace abyss {

struct RowHeader {
  // Id of the committed transaction whose version this is (0 = the load).
  // Written only by the holder of the row's write permission under the scheme.
  TxnId writer;
  uint32_t flags;
  // With a log, the epoch the version's writer committed in, up to
  // kEpochUnknown (Txn::install_all; Txn::read_epoch reads it). Recovery
  // marks a checkpoint's rows here while it applies the checkpoint.
  uint32_t epoch;

  static constexpr uint32_t kEpochUnknown = ~uint32_t{0};  // an epoch past 32 bits, which may not be durable

  static constexpr uint32_t kLive = 1;     // a committed row (load or insert)
  static constexpr uint32_t kDeleted = 2;  // removed by a committed transaction
};
static_assert(sizeof(RowHeader) == 16);

inline constexpr std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Offsets shared by every table of one run: they depend on the scheme's
// metadata size, fixed when the run starts.
struct RowLayout {
  uint32_t meta_offset = sizeof(RowHeader);
  uint32_t data_offset = sizeof(RowHeader);
  uint32_t row_align = 64;  // rows start at, and are padded to, a multiple of this

  static RowLayout for_meta(std::size_t meta_size, std::size_t meta_align, RowAlign align = RowAlign::Aligned) {
    RowLayout l;
    l.meta_offset = static_cast<uint32_t>(round_up(sizeof(RowHeader), meta_align));
    l.data_offset = static_cast<uint32_t>(round_up(l.meta_offset + meta_size, 8));
    l.row_align = static_cast<uint32_t>(align == RowAlign::Aligned ? 64 : (meta_align > 8 ? meta_align : 8));
    return l;
  }

  static RowHeader& header(Row* r) { return *reinterpret_cast<RowHeader*>(r); }
  void* meta(Row* r) const { return reinterpret_cast<char*>(r) + meta_offset; }
  char* data(Row* r) const { return reinterpret_cast<char*>(r) + data_offset; }
  const char* data(const Row* r) const { return reinterpret_cast<const char*>(r) + data_offset; }
};

}  // namespace abyss
