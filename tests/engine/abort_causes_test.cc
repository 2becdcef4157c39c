// Every abort is counted under the cause its scheme named (AbortCause): in
// contended runs of YCSB, SmallBank (a read, then a write, of one row: lock
// upgrades), TATP (inserts and deletes of one key) and, for a scheme with
// weaker levels, YCSB under snapshot isolation, each cause a scheme declares
// (SchemeTraits::causes) occurs, no other does, none is unnamed, and each
// run's causes sum to its cc_aborts, per transaction type.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cc/mocc/mocc.h"
#include "cc/polaris/polaris.h"
#include "cc/registry.h"
#include "common/config.h"
#include "common/types.h"
#include "engine/engine.h"
#include "stats/stats.h"
#include "workload/smallbank/smallbank_config.h"
#include "workload/tatp/tatp_config.h"
#include "workload/ycsb/ycsb_config.h"

namespace abyss {
namespace {

Config contended(const cc::SchemeTraits& t, double duration_s) {
  Config c;
  c.cc = std::string(t.name);
  c.threads = 8;
  c.duration_s = duration_s;
  c.warmup_s = 0.01;
  c.settings<YcsbConfig>().rows = 1000;
  c.settings<YcsbConfig>().theta = 0.9;
  c.settings<YcsbConfig>().req_per_txn = 8;
  // POLARIS gives way to a higher priority only when priorities differ: a
  // tenth of its transactions begin high.
  c.settings<cc::PolarisConfig>().high_ratio = 0.1;
  // MOCC refuses a lock only when it is taken out of address order and only
  // tried: rows turn hot after two failures, and out of order is only tried.
  c.settings<cc::MoccConfig>().temp_threshold = 2;
  c.settings<cc::MoccConfig>().restore_max = 0;
  return c;
}

std::vector<Config> runs(const cc::SchemeTraits& t, double duration_s) {
  std::vector<Config> out;
  out.push_back(contended(t, duration_s));
  Config bank = contended(t, duration_s);
  bank.workload = "smallbank";
  bank.settings<SmallBankConfig>().accounts = 1000;
  bank.settings<SmallBankConfig>().hot_accounts = 10;
  out.push_back(bank);
  Config tatp = contended(t, duration_s);
  tatp.workload = "tatp";
  tatp.settings<TatpConfig>().subscribers = 100;
  out.push_back(tatp);
  if (t.weaker_isolation) {
    Config snapshot = contended(t, duration_s);
    snapshot.isolation = Isolation::Snapshot;
    out.push_back(snapshot);
  }
  return out;
}

class AbortCauses : public ::testing::TestWithParam<cc::SchemeTraits> {};

TEST_P(AbortCauses, EachDeclaredCauseOccursAndTheCausesSumToTheAborts) {
  const cc::SchemeTraits& t = GetParam();
  uint32_t seen = 0;
  // A cause a short window missed (DL_DETECT's timeout, MVCC's insert over a
  // row not yet reclaimed) is looked for again in windows four times longer.
  double duration = 0.1;
  for (int round = 0; round < 4 && (round == 0 || seen != t.causes); round++, duration *= 4) {
    for (const Config& c : runs(t, duration)) {
      const RunResult r = run(c);
      for (std::size_t type = 0; type < r.total.types.size(); type++) {
        const TypeStats& ts = r.total.types[type];
        uint64_t sum = 0;
        for (std::size_t k = 0; k < kAbortCauses; k++) {
          const auto cause = static_cast<AbortCause>(k);
          sum += ts.aborts(cause);
          if (ts.aborts(cause) == 0) continue;
          seen |= cc::abort_causes({cause});
          EXPECT_TRUE(cc::has_cause(t.causes, cause))
              << c.workload << ": " << kAbortCauseNames[k] << " is not among the scheme's declared causes";
        }
        EXPECT_EQ(sum, ts[Counter::CcAborts]) << c.workload << ", type " << r.type_names[type];
      }
    }
  }
  for (std::size_t k = 0; k < kAbortCauses; k++) {
    const auto cause = static_cast<AbortCause>(k);
    if (cc::has_cause(t.causes, cause)) {
      EXPECT_TRUE(cc::has_cause(seen, cause)) << kAbortCauseNames[k] << " declared but never seen";
    }
  }
  EXPECT_FALSE(cc::has_cause(t.causes, AbortCause::Unnamed));
  EXPECT_EQ(t.causes == 0, !t.aborts) << "a scheme that aborts names why; one that never does names nothing";
}

std::vector<cc::SchemeTraits> schemes_with_cc() {
  std::vector<cc::SchemeTraits> out;
  for (const cc::SchemeTraits& t : cc::Registry::kTraits) {
    if (t.family != cc::Family::None) out.push_back(t);  // `none` races by design (and never aborts)
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(EveryScheme, AbortCauses, ::testing::ValuesIn(schemes_with_cc()),
                         [](const ::testing::TestParamInfo<cc::SchemeTraits>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace abyss
