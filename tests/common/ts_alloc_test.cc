#include "common/ts_alloc.h"

#include <gtest/gtest.h>

namespace abyss {
namespace {

TEST(TsAlloc, ParsesEveryMethodAndRejectsOthers) {
  TsAllocConfig c;
  EXPECT_EQ(TsAllocConfig::parse("mutex", c), "");
  EXPECT_EQ(c.method, TsMethod::Mutex);
  EXPECT_EQ(TsAllocConfig::parse("batch:16", c), "");
  EXPECT_EQ(c.method, TsMethod::Batch);
  EXPECT_EQ(c.batch, 16u);
  EXPECT_EQ(c.to_string(), "batch:16");
  EXPECT_EQ(TsAllocConfig::parse("clock", c), "");
  EXPECT_EQ(c.method, TsMethod::Clock);
  EXPECT_EQ(TsAllocConfig::parse("hw", c), "");
  EXPECT_EQ(c.method, TsMethod::Hardware);
  EXPECT_EQ(c.to_string(), "hw");
  for (const char* bad : {"", "batch", "batch:", "batch:0", "batch:x", "batch:2000000", "atomics", "Mutex"}) {
    EXPECT_NE(TsAllocConfig::parse(bad, c), "") << bad;
  }
}

}  // namespace
}  // namespace abyss
