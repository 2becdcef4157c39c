// Row slots used again (txn/epochs.h): the epoch moves on only when every
// running worker has announced the current one, and a slot retired in epoch
// e is free from e + 2. Under every scheme with concurrency control that one
// test thread can drive, a removed row's slot and an aborted insert's slot
// are not handed out while another transaction that began before they
// became unreachable is still running, and are handed out once it has ended.
// Freeing slots at once (free_at answering true) fails the first of these.
#include "txn/epochs.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "../cc/scheme_fixture.h"
#include "txn/txn.h"

namespace abyss {
namespace {

TEST(Epochs, MoveOnOnlyWhenEveryRunningWorkerHasAnnouncedTheCurrentOne) {
  Epochs e(3);
  EXPECT_EQ(e.now(), 1u);
  EXPECT_EQ(e.try_advance(), 2u) << "idle workers hold nothing";
  e.enter(0);  // announces 2
  e.enter(1);
  EXPECT_EQ(e.try_advance(), 3u);
  EXPECT_EQ(e.try_advance(), 3u) << "workers 0 and 1 still run in epoch 2";
  e.enter(0);
  EXPECT_EQ(e.try_advance(), 3u) << "worker 1 still runs in epoch 2";
  e.leave(1);
  EXPECT_EQ(e.try_advance(), 4u);
  EXPECT_FALSE(Epochs::free_at(3, 4));
  EXPECT_TRUE(Epochs::free_at(2, 4));
}

// Schemes one thread can drive here: t0 only begins and commits, so t1
// never waits for it; H-STORE's partitions and `none` are left out.
constexpr bool drivable(const cc::SchemeTraits& t) {
  return t.family != cc::Family::None && !t.declares_partitions && !test::runs_one_at_a_time(t);
}

template <class CC>
class SlotReuse : public ::testing::Test {};
TYPED_TEST_SUITE(SlotReuse, test::GtestTypes<test::SchemesWhere<drivable>>, test::SchemeName);

template <class CC>
struct ReuseFixture : test::Fixture<CC> {
  Epochs epochs{2};
  uint64_t next_key = 100;

  ReuseFixture() : test::Fixture<CC>(Config{}, 2, IndexType::Ordered) {
    for (auto& w : this->workers) w->epochs = &epochs;
  }

  // One committed transaction of t1 inserting a new key; answers its row.
  Row* insert_one() {
    const uint64_t key = next_key++;
    EXPECT_EQ(this->t1->begin(false), Rc::Ok);
    EXPECT_EQ(this->insert(*this->t1, key, 1), Rc::Ok);
    EXPECT_EQ(this->t1->commit(), Rc::Ok);
    return this->row(key);
  }

  // t0 is running (begun before `slot` became unreachable): t1's inserts
  // never take the slot. Then t0 ends, and the slot comes back within a few
  // rounds of both workers' transactions.
  void expect_reused_only_after_t0(const Row* slot) {
    for (int i = 0; i < 200; i++) ASSERT_NE(insert_one(), slot) << "reused while t0 runs, insert " << i;
    ASSERT_EQ(this->t0->commit(), Rc::Ok);
    for (int i = 0; i < 1000; i++) {
      ASSERT_EQ(this->t0->begin(false), Rc::Ok);
      ASSERT_EQ(this->t0->commit(), Rc::Ok);
      if (insert_one() == slot) {
        EXPECT_EQ(this->committed_value(next_key - 1), 1) << "the slot holds the new row";
        return;
      }
    }
    ADD_FAILURE() << "the slot never came back";
  }
};

TYPED_TEST(SlotReuse, ARemovedRowsSlotWaitsForTransactionsThatBeganBefore) {
  ReuseFixture<TypeParam> f;
  const Row* removed = f.row(3);
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->remove(*f.table, 3), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  f.expect_reused_only_after_t0(removed);
  EXPECT_EQ(f.row(3), nullptr);
}

TYPED_TEST(SlotReuse, AnAbortedInsertsSlotWaitsForTransactionsThatBeganBefore) {
  ReuseFixture<TypeParam> f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.insert(*f.t1, 50, 7), Rc::Ok);
  const Row* aborted = f.t1->accesses().back().row;
  f.t1->abort();
  f.expect_reused_only_after_t0(aborted);
  EXPECT_EQ(f.row(50), nullptr);
}

}  // namespace
}  // namespace abyss
