// An allocation that cannot be satisfied throws a std::bad_alloc whose what()
// names the size and the purpose, so the run ends with a useful line.
#include "common/out_of_memory.h"

#include <gtest/gtest.h>

#include <new>
#include <string>

#include "common/arena.h"
#include "index/hash_index.h"
#include "storage/table.h"

namespace abyss {
namespace {

// The sizes below exceed any address space (2^57 bytes with 5-level paging),
// so they fail even under overcommit. Sanitizer allocators abort on such
// sizes instead of failing them.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ABYSS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ABYSS_SANITIZED 1
#endif
#endif
#if defined(ABYSS_SANITIZED)
#define ABYSS_SKIP_UNDER_SANITIZER() GTEST_SKIP() << "sanitizer allocators abort on impossible sizes"
#else
#define ABYSS_SKIP_UNDER_SANITIZER() (void)0
#endif

// The what() of the std::bad_alloc that fn throws ("" if none).
template <class Fn>
std::string bad_alloc_message(Fn&& fn) {
  try {
    fn();
  } catch (const std::bad_alloc& e) {
    return e.what();
  }
  return "";
}

TEST(OutOfMemory, MessageNamesSizeAndPurpose) {
  const OutOfMemory e(std::size_t{3} << 19, "table ", "ycsb", " (a block of 16384 rows)");
  EXPECT_EQ(std::string(e.what()), "out of memory allocating 1.5 MiB for table ycsb (a block of 16384 rows)");
}

TEST(OutOfMemory, ArenaNamesItsPurpose) {
  ABYSS_SKIP_UNDER_SANITIZER();
  Arena arena(std::size_t{1} << 20, "the test's nodes");
  const std::string what = bad_alloc_message([&] { arena.allocate(std::size_t{1} << 62); });
  EXPECT_NE(what.find("out of memory allocating"), std::string::npos) << what;
  EXPECT_NE(what.find("the test's nodes"), std::string::npos) << what;
}

TEST(OutOfMemory, TableBlockNamesTheTable) {
  ABYSS_SKIP_UNDER_SANITIZER();
  Schema schema;
  schema.add_int64("K");
  Table table(0, "usertable", std::move(schema), RowLayout::for_meta(8, 8), 16);
  RowCursor cursor;
  const std::string what = bad_alloc_message([&] { table.allocate(cursor, uint64_t{1} << 54); });
  EXPECT_NE(what.find("for table usertable (a block of"), std::string::npos) << what;
}

TEST(OutOfMemory, HashIndexNamesTheTable) {
  ABYSS_SKIP_UNDER_SANITIZER();
  for (const IndexKind kind : {IndexKind::Flat, IndexKind::Chained}) {
    for (const bool huge : {false, true}) {
      const std::string what = bad_alloc_message([&] {
        HashIndex index(uint64_t{1} << 58, StorageOptions{kind, huge}, "usertable");
      });
      EXPECT_NE(what.find("for the hash index of table usertable"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace abyss
