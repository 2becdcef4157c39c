// The history log's part files: merged into one log when the run ends, and
// never left behind, whether the merge succeeds or fails.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "txn/history.h"

namespace abyss {
namespace {

namespace fs = std::filesystem;

// A fresh directory for one test, and two writers with one transaction each.
struct Fixture {
  std::string dir;
  std::string log;
  std::vector<std::unique_ptr<HistoryWriter>> writers;
  std::vector<std::string> parts;

  explicit Fixture(const std::string& name) : dir(testing::TempDir() + "abyss-history-merge-" + name) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    log = dir + "/h.jsonl";
    for (uint64_t i = 0; i < 2; i++) {
      auto& w = writers.emplace_back(std::make_unique<HistoryWriter>(log + ".part" + std::to_string(i)));
      w->begin(TxnId{i + 1});
      w->write("t", i, TxnId{0});
      w->end();
    }
  }
  ~Fixture() { fs::remove_all(dir); }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;

  void close_all() {
    for (auto& w : writers) parts.push_back(w->close());
  }

  // The part files still in the directory.
  [[nodiscard]] std::vector<std::string> leftover_parts() const {
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (name.find(".part") != std::string::npos) left.push_back(name);
    }
    return left;
  }
};

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(HistoryMerge, ConcatenatesThePartsAndRemovesThem) {
  Fixture f("ok");
  f.close_all();
  EXPECT_EQ(HistoryWriter::merge(f.log, f.parts), "");
  EXPECT_EQ(contents(f.log),
            "{\"id\":1,\"reads\":[],\"writes\":[[\"t\",0,0]]}\n"
            "{\"id\":2,\"reads\":[],\"writes\":[[\"t\",1,0]]}\n");
  EXPECT_TRUE(f.leftover_parts().empty());
}

TEST(HistoryMerge, TargetThatCannotBeWrittenStillRemovesTheParts) {
  Fixture f("target_is_dir");
  fs::create_directory(f.log);  // appears after the writers opened their parts
  f.close_all();
  const std::string err = HistoryWriter::merge(f.log, f.parts);
  EXPECT_EQ(err, "cannot write " + f.log + ": Is a directory");
  EXPECT_TRUE(f.leftover_parts().empty());
  EXPECT_TRUE(fs::is_directory(f.log)) << "the merge removes only what it wrote";
}

TEST(HistoryMerge, UnreadablePartRemovesTheRestAndThePartialLog) {
  Fixture f("missing_part");
  f.close_all();
  fs::remove(f.parts[1]);
  const std::string err = HistoryWriter::merge(f.log, f.parts);
  EXPECT_EQ(err, "cannot read " + f.parts[1] + ": No such file or directory");
  EXPECT_TRUE(f.leftover_parts().empty());
  EXPECT_FALSE(fs::exists(f.log)) << "no partial log";
}

TEST(HistoryMerge, WriterOfAFailedRunRemovesItsPart) {
  Fixture f("failed_run");
  const std::string part = f.log + ".part0";
  EXPECT_TRUE(fs::exists(part));
  f.writers.clear();  // the run failed before the merge
  EXPECT_TRUE(f.leftover_parts().empty());
}

}  // namespace
}  // namespace abyss
