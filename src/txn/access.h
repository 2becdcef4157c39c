#pragma once
// One entry of a transaction's access set, and the kind of access. Scheme
// headers include this (not txn.h) to name access types and read an entry.
#include <cstddef>
#include <cstdint>

#include "common/types.h"
#include "storage/row.h"
#include "storage/table.h"

namespace abyss {

enum class AccessType : uint8_t { Read, Write, Insert, Remove };

// The accesses a transaction may make unless its workload asks for more
// (access_capacity in workload/registry.h: YCSB's long readers).
inline constexpr std::size_t kDefaultAccessCapacity = 1024;

template <class CC>
struct Access {
  Table* table;
  uint64_t key;
  Row* row;
  AccessType type;
  bool read_first = false;     // a Write that was a Read of this transaction first
  bool found = true;           // false: the row is deleted (the access only holds CC state)
  bool older_version = false;  // reads a version older than the row's (MVCC): live whatever the row is now
  bool next_key_only = false;  // written only as an insert's or a removal's next key: its data is unchanged
  bool visited = false;        // read by Txn::read_with in place, uncopied: `view` and `local` are null
  const char* view = nullptr;  // what the transaction reads: the row in place or `local`
  char* local = nullptr;       // private copy that a write modifies, or the row itself (write_in_place)
  char* undo = nullptr;        // a write in place: the row's data before it, put back if the transaction rolls back
  TxnId seen{};                // history: the version read, or replaced by a write
  uint64_t columns = 0;        // a Write's columns the transaction may change (Txn::update), bit i: column i
  typename CC::AccessMeta cc{};
};

}  // namespace abyss
