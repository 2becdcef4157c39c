// What the multi-version optimistic schemes (HEKATON, SSN, CICADA) share
// through cc/common/versions.h: an older transaction reads the version a
// younger commit replaced, kept for it, and once no running transaction is
// that old the kept versions are collected. Each scheme's own rules are in
// its own test file.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "cc/common/versions.h"
#include "cc/schemes.h"
#include "common/config.h"
#include "common/knob.h"
#include "common/types.h"
#include "txn/txn.h"

#include "scheme_fixture.h"

namespace abyss {
namespace {

constexpr bool multi_version_optimistic(const cc::SchemeTraits& t) {
  return t.family == cc::Family::MultiVersionOptimistic;
}

template <class CC>
class VersionedScheme : public ::testing::Test {};
TYPED_TEST_SUITE(VersionedScheme, test::GtestTypes<test::SchemesWhere<multi_version_optimistic>>, test::SchemeName);

// The scheme's --NAME-refresh-every knob set to 0: the low-water mark is
// recomputed at every begin.
template <class CC>
Config refresh_at_every_begin() {
  Config c;
  const std::string name = std::string(CC::kTraits.name) + "-refresh-every";
  for (const Knob& k : cc::scheme_knobs()) {
    if (k.name == name) {
      EXPECT_EQ(k.apply(c, "0"), "");
      return c;
    }
  }
  ADD_FAILURE() << "no --" << name;
  return c;
}

// The versions kept behind the row of `key`.
template <class CC>
int chain_length(test::Fixture<CC>& f, uint64_t key) {
  int n = 0;
  for (const cc::Version* v = f.meta(key).older; v != nullptr; v = v->older) n++;
  return n;
}

TYPED_TEST(VersionedScheme, AnOlderReaderReadsTheKeptVersionAndOldVersionsAreCollected) {
  test::Fixture<TypeParam> f(refresh_at_every_begin<TypeParam>());
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  for (int i = 0; i < 4; i++) ASSERT_EQ(f.add(*f.t1, 3, 1), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 3, v), Rc::Ok);
  EXPECT_EQ(v, 103);
  EXPECT_EQ(chain_length(f, 3), 4) << "each commit kept the version it replaced";
  ASSERT_EQ(f.t0->commit(), Rc::Ok) << "read only, of the versions as of its begin";
  for (int i = 0; i < 16; i++) {
    ASSERT_EQ(f.add(*f.t1, 3, 1), Rc::Ok);
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ASSERT_EQ(f.read(*f.t0, 3, v), Rc::Ok);
    ASSERT_EQ(f.t0->commit(), Rc::Ok);
  }
  EXPECT_LE(chain_length(f, 3), 1) << "superseded versions are not collected";
  EXPECT_EQ(f.committed_value(3), 103 + 20);
}

// One worker only reads, and so collects the versions the other's commits
// keep; the versions it frees go back to the writer (through the shared
// pool), which then allocates no more than a pool's worth.
TYPED_TEST(VersionedScheme, VersionsAReaderCollectsAreReusedByTheWriter) {
  test::Fixture<TypeParam> f(refresh_at_every_begin<TypeParam>());
  int64_t v = 0;
  constexpr int kCommits = 4000;
  for (int i = 0; i < kCommits; i++) {
    ASSERT_EQ(f.add(*f.t1, 3, 1), Rc::Ok);
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ASSERT_EQ(f.read(*f.t0, 3, v), Rc::Ok);
    ASSERT_EQ(f.t0->commit(), Rc::Ok);
  }
  EXPECT_EQ(f.committed_value(3), 103 + kCommits);
  EXPECT_LT(f.cc.versions_allocated(), static_cast<uint64_t>(kCommits / 4))
      << "the writer allocated a version for nearly every commit: the reader kept the ones it collected";
}

}  // namespace
}  // namespace abyss
