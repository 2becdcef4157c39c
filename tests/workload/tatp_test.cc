// TATP's generator, load and checks: the mix, the spec's subscriber draw,
// the load's references and counts, and a check that catches a
// call-forwarding row no index finds under its own key.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include "common/config.h"
#include "common/zipf.h"
#include "engine/engine.h"
#include "storage/database.h"
#include "support/growing_window.h"
#include "workload/tatp/tatp.h"

namespace abyss {
namespace {

TEST(TatpGenerate, TheMixAndTheSubscribersAreTheSpecs) {
  Config cfg;
  cfg.settings<TatpConfig>().subscribers = 1000;
  const Tatp tatp(cfg);
  Rng rng(3);
  constexpr uint32_t kQueries = 100'000;
  const auto qs = tatp.generate(0, kQueries, rng);
  std::array<uint64_t, Tatp::kTypeNames.size()> types{};
  for (const auto& q : qs.queries) {
    types[q.type]++;
    EXPECT_GE(q.s_id, 1u);
    EXPECT_LE(q.s_id, 1000u);
    EXPECT_GE(q.kind, 1u);
    EXPECT_LE(q.kind, 4u);
    EXPECT_TRUE(q.start_time == 0 || q.start_time == 8 || q.start_time == 16);
  }
  for (std::size_t t = 0; t < types.size(); t++) {
    EXPECT_NEAR(static_cast<double>(types[t]) / kQueries, Tatp::kMix[t] / 100.0, 0.005) << Tatp::kTypeNames[t];
  }
}

TEST(TatpKeys, SubNbrIsFifteenDigitsAndKeysDoNotCollide) {
  char nbr[16] = {};
  Tatp::sub_nbr(42, nbr);
  EXPECT_EQ(std::string(nbr), "000000000000042");
  EXPECT_LT(Tatp::forwarding_key(7, 4, 16), Tatp::forwarding_key(8, 1, 0));
  EXPECT_EQ(Tatp::forwarding_key(7, 4, 16) + 1, Tatp::forwarding_key(8, 1, 0));
  EXPECT_EQ(Tatp::facility_key(7, 4) + 1, Tatp::facility_key(8, 1));
}

// The load passes its own checks, and a row moved off its key (as a
// duplicate insert leaves one) breaks them.
TEST(TatpCheck, ARowNotIndexedUnderItsOwnKeyBreaksTheReferences) {
  Config cfg;
  cfg.threads = 1;
  cfg.settings<TatpConfig>().subscribers = 500;
  Database db(RowLayout::for_meta(8, 8));
  Tatp tatp(cfg);
  tatp.load(
      db, 2, +[](void* /*meta*/) {});
  auto checks = tatp.check();
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_TRUE(checks[0].held) << checks[0].detail;
  EXPECT_TRUE(checks[1].held) << checks[1].detail;
  Table& cf = *db.tables()[3];
  ASSERT_EQ(cf.name(), "call_forwarding");
  const Column start = cf.schema().column("START_TIME");
  bool moved = false;
  cf.for_each_live_row([&](Row* r) {
    char* d = db.layout().data(r);
    if (!moved && get_int64(d, start) == 0) {
      set_int64(d, start, 8);  // now it claims a key its index entry is not under
      moved = true;
    }
  });
  ASSERT_TRUE(moved);
  checks = tatp.check();
  EXPECT_FALSE(checks[0].held) << "a row off its key went unnoticed: " << checks[0].detail;
}

// A run keeps TATP's checks, and its inserts and deletes commit about as
// often as the spec says (a third of the time each).
TEST(TatpRun, ARunKeepsItsChecksAndItsInsertsAndDeletesSucceed) {
  Config cfg;
  cfg.workload = "tatp";
  cfg.cc = "silo";
  cfg.threads = 2;
  cfg.duration_s = 0.1;
  cfg.warmup_s = 0.01;
  cfg.settings<TatpConfig>().subscribers = 1000;
  // Inserts are 2% of the mix: a slow build on a loaded machine needs a
  // longer window to try enough of them.
  const RunResult r = test::grow_window(
      cfg.duration_s,
      [&](double duration_s) {
        cfg.duration_s = duration_s;
        return run(cfg);
      },
      [](const RunResult& got) {
        const TypeStats& t = got.total.types[Tatp::InsertCallForwarding];
        return t[Counter::Commits] + t[Counter::LogicalAborts] > 100;
      },
      6, 3);
  const uint64_t inserts = r.total.types[Tatp::InsertCallForwarding][Counter::Commits];
  const uint64_t failed = r.total.types[Tatp::InsertCallForwarding][Counter::LogicalAborts];
  ASSERT_EQ(r.checks.size(), 2u);
  for (const ConsistencyCheck& k : r.checks) EXPECT_TRUE(k.held) << k.name << ": " << k.detail;
  ASSERT_GT(inserts + failed, 100u);
  const double success = static_cast<double>(inserts) / static_cast<double>(inserts + failed);
  EXPECT_GT(success, 0.15) << "an insert's row is drawn anew each time round the queries";
  EXPECT_LT(success, 0.5);
}

}  // namespace
}  // namespace abyss
