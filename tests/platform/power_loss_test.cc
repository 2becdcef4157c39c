// The simulated power loss (platform/power_loss.h): what was synced
// survives, what was not may be lost, cut short or undone, and files outside
// the armed directory are left alone. Each test draws the crash over many
// seeds and requires every outcome it allows to be a state a power loss can
// leave, and the outcomes that make the test worth having to occur.
#include "platform/power_loss.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "platform/file.h"
#include "platform/process.h"

namespace abyss::platform {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kSeeds = 64;

// A fresh, empty directory for one test, removed at its end.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) : path_(testing::TempDir() + "abyss-power-loss-" + name) {
    clear();
    fs::create_directories(path_);
  }
  ~ScratchDir() { clear(); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  void clear() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
    fs::remove_all(path_ + ".power-loss", ignored);
  }
  std::string path_;
};

bool present(const std::string& path) { return fs::exists(path); }

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A file written, synced and its directory entry synced before the layer is
// armed: durable.
void durable_file(const std::string& path, const std::string& bytes) {
  JournalFile f;
  ASSERT_EQ(f.open(path), "");
  ASSERT_EQ(f.append(bytes.data(), bytes.size()), "");
  ASSERT_EQ(f.sync(), "");
  ASSERT_EQ(f.close(), "");
  ASSERT_EQ(sync_dir(fs::path(path).parent_path().string()), "");
}

void append(JournalFile& f, const std::string& bytes) { ASSERT_EQ(f.append(bytes.data(), bytes.size()), ""); }

TEST(PowerLoss, AnUnsyncedAppendIsDroppedOrCutAndASyncedOneSurvives) {
  const ScratchDir scratch("append");
  const std::string& dir = scratch.path();
  const std::string path = dir + "/journal";
  const std::string head = "synced-";
  const std::string tail = "written-but-not-synced";
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= kSeeds; seed++) {
    fs::remove(path);
    ASSERT_EQ(power_loss::arm(dir, 0, seed), "");
    JournalFile f;
    ASSERT_EQ(f.open(path), "");
    append(f, head);
    ASSERT_EQ(f.sync(), "");
    ASSERT_EQ(sync_dir(dir), "");
    append(f, tail);
    const power_loss::CrashSummary c = power_loss::simulate_crash();
    ASSERT_EQ(c.error, "");
    EXPECT_FALSE(power_loss::armed());
    const std::string got = contents(path);
    ASSERT_EQ(got.substr(0, head.size()), head) << "seed " << seed << ": a synced write was lost";
    const std::string rest = got.substr(head.size());
    ASSERT_EQ(tail.substr(0, rest.size()), rest) << "seed " << seed << ": not a prefix of the unsynced write";
    seen.insert(rest.empty() ? "dropped" : rest.size() < tail.size() ? "torn" : "kept");
  }
  EXPECT_TRUE(seen.contains("dropped"));
  EXPECT_TRUE(seen.contains("torn"));
}

// A sync on BackgroundSync's helper thread makes durable what was appended
// before it began, as JournalFile::sync does; an append after it finished
// is still at the power loss's mercy.
TEST(PowerLoss, ABackgroundSyncMakesTheAppendsBeforeItDurable) {
  const ScratchDir scratch("background");
  const std::string& dir = scratch.path();
  const std::string path = dir + "/journal";
  const std::string head = "synced-off-thread-";
  const std::string tail = "written-after";
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= kSeeds; seed++) {
    fs::remove(path);
    ASSERT_EQ(power_loss::arm(dir, 0, seed), "");
    JournalFile f;
    ASSERT_EQ(f.open(path), "");
    ASSERT_EQ(sync_dir(dir), "");
    BackgroundSync syncing;
    EXPECT_FALSE(syncing.busy());
    append(f, head);
    syncing.start(f);
    EXPECT_TRUE(syncing.busy());
    std::string err = "unset";
    while (!syncing.done(err)) {
    }
    EXPECT_EQ(err, "");
    EXPECT_FALSE(syncing.busy());
    EXPECT_EQ(syncing.wait(), "");  // nothing in flight: returns at once
    append(f, tail);
    const power_loss::CrashSummary c = power_loss::simulate_crash();
    ASSERT_EQ(c.error, "");
    const std::string got = contents(path);
    ASSERT_EQ(got.substr(0, head.size()), head) << "seed " << seed << ": a write synced off-thread was lost";
    seen.insert(got.size() == head.size() ? "dropped" : "kept");
  }
  EXPECT_TRUE(seen.contains("dropped"));
}

TEST(PowerLoss, ABackgroundSyncOfAClosedFileFailsWithTheOsReason) {
  JournalFile f;
  BackgroundSync syncing;
  syncing.start(f);
  EXPECT_EQ(syncing.wait(), "Bad file descriptor");
  EXPECT_FALSE(syncing.busy());
}

TEST(PowerLoss, AnUnsyncedOverwriteIsUndone) {
  const ScratchDir scratch("overwrite");
  const std::string& dir = scratch.path();
  const std::string path = dir + "/epoch";
  durable_file(path, "");
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= kSeeds; seed++) {
    ASSERT_EQ(power_loss::arm(dir, 0, seed), "");
    JournalFile f;
    ASSERT_EQ(f.open(path), "");
    ASSERT_EQ(f.write_at(0, "0123456789", 10), "");
    ASSERT_EQ(f.sync(), "");
    ASSERT_EQ(f.write_at(2, "ab", 2), "");
    ASSERT_EQ(f.write_at(8, "xyz", 3), "");  // past the end: the file grows
    ASSERT_EQ(power_loss::simulate_crash().error, "");
    const std::string got = contents(path);
    // Neither kept, "ab" whole or torn, "ab" and "xyz" whole or "xyz" torn.
    const std::set<std::string> allowed = {"0123456789",  "01ab456789", "01a3456789",
                                           "01ab4567xyz", "01ab4567x9", "01ab4567xy"};
    ASSERT_TRUE(allowed.contains(got)) << "seed " << seed << ": " << got;
    seen.insert(got);
  }
  EXPECT_TRUE(seen.contains("0123456789"));
  EXPECT_TRUE(seen.contains("01ab4567xyz"));
}

TEST(PowerLoss, ATruncatingOpenUnsyncedIsUndone) {
  const ScratchDir scratch("truncate");
  const std::string& dir = scratch.path();
  const std::string path = dir + "/epoch";
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= kSeeds; seed++) {
    durable_file(path, "old-contents");
    ASSERT_EQ(power_loss::arm(dir, 0, seed), "");
    JournalFile f;
    ASSERT_EQ(f.open(path), "");  // truncates
    ASSERT_EQ(f.write_at(0, "new", 3), "");
    ASSERT_EQ(power_loss::simulate_crash().error, "");
    const std::string got = contents(path);
    ASSERT_TRUE(got == "old-contents" || got == "" || got == "n" || got == "ne" || got == "new")
        << "seed " << seed << ": " << got;
    seen.insert(got);
  }
  EXPECT_TRUE(seen.contains("old-contents"));
  EXPECT_TRUE(seen.contains("new"));
}

TEST(PowerLoss, AFileCreatedWithoutItsDirectorySyncedCanVanish) {
  const ScratchDir scratch("create");
  const std::string& dir = scratch.path();
  const std::string path = dir + "/journal-0-0.abj";
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= kSeeds; seed++) {
    fs::remove(path);
    ASSERT_EQ(power_loss::arm(dir, 0, seed), "");
    JournalFile f;
    ASSERT_EQ(f.open(path), "");
    append(f, "header");
    ASSERT_EQ(f.sync(), "");  // its data, not its name
    ASSERT_EQ(power_loss::simulate_crash().error, "");
    if (present(path)) {
      ASSERT_EQ(contents(path), "header") << "seed " << seed;
      seen.insert("kept");
    } else {
      seen.insert("vanished");
    }
  }
  EXPECT_TRUE(seen.contains("kept"));
  EXPECT_TRUE(seen.contains("vanished"));
}

TEST(PowerLoss, ARemovalWithoutItsDirectorySyncedCanBeUndone) {
  const ScratchDir scratch("remove");
  const std::string& dir = scratch.path();
  const std::string path = dir + "/journal-0-3.abj";
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= kSeeds; seed++) {
    durable_file(path, "segment");
    ASSERT_EQ(power_loss::arm(dir, 0, seed), "");
    ASSERT_EQ(remove_file(path), "");
    std::vector<std::string> names;
    ASSERT_EQ(list_dir(dir, names), "");
    ASSERT_TRUE(names.empty()) << "the removed file is still listed";
    ASSERT_EQ(power_loss::simulate_crash().error, "");
    if (present(path)) {
      ASSERT_EQ(contents(path), "segment") << "seed " << seed;
      seen.insert("back");
    } else {
      seen.insert("gone");
    }
    EXPECT_FALSE(present(dir + ".power-loss")) << "what was kept aside is left behind";
  }
  EXPECT_TRUE(seen.contains("back"));
  EXPECT_TRUE(seen.contains("gone"));
}

TEST(PowerLoss, ARemovalWithItsDirectorySyncedIsForGood) {
  const ScratchDir scratch("remove-synced");
  const std::string& dir = scratch.path();
  const std::string path = dir + "/checkpoint-1.abc";
  for (uint64_t seed = 1; seed <= kSeeds / 4; seed++) {
    durable_file(path, "checkpoint");
    ASSERT_EQ(power_loss::arm(dir, 0, seed), "");
    ASSERT_EQ(remove_file(path), "");
    ASSERT_EQ(sync_dir(dir), "");
    ASSERT_EQ(power_loss::simulate_crash().error, "");
    ASSERT_FALSE(present(path)) << "seed " << seed;
  }
}

// A rename needs the crash between replace_file's rename and its directory
// sync: the fifth event (create the temporary, write it, sync it, rename,
// sync the directory), taken in a child process that the crash ends.
TEST(PowerLoss, ARenameWithoutItsDirectorySyncedCanBeUndone) {
  const ScratchDir scratch("rename");
  const std::string& dir = scratch.path();
  const std::string path = dir + "/manifest.json";
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= kSeeds / 2; seed++) {
    fs::remove(path + ".new");
    durable_file(path, "old manifest");
    const int status = run_in_child([&] {
      if (!power_loss::arm(dir, 5, seed).empty()) return;
      (void)replace_file(path, "new manifest");
    });
    ASSERT_EQ(status, power_loss::kExitCode) << "seed " << seed;
    const std::string got = contents(path);
    ASSERT_TRUE(got == "old manifest" || got == "new manifest") << "seed " << seed << ": " << got;
    if (present(path + ".new")) {
      // The temporary's creation kept, its rename undone: it holds what was synced.
      ASSERT_EQ(got, "old manifest");
      ASSERT_EQ(contents(path + ".new"), "new manifest");
    }
    seen.insert(got);
    EXPECT_FALSE(present(dir + ".power-loss"));
  }
  EXPECT_TRUE(seen.contains("old manifest"));
  EXPECT_TRUE(seen.contains("new manifest"));
}

TEST(PowerLoss, TheArmedEventEndsTheProcessBeforeItIsDone) {
  const ScratchDir scratch("count");
  const std::string& dir = scratch.path();
  const std::string path = dir + "/journal";
  for (uint64_t seed = 1; seed <= kSeeds / 4; seed++) {
    fs::remove(path);
    // Events: the creation (1), "first" (2), its sync (3), "second" (4).
    const int status = run_in_child([&] {
      if (!power_loss::arm(dir, 4, seed).empty()) return;
      JournalFile f;
      if (!f.open(path).empty() || !f.append("first", 5).empty() || !f.sync().empty()) return;
      (void)f.append("second", 6);
    });
    ASSERT_EQ(status, power_loss::kExitCode);
    // "first" was synced but its file's name was not: the file is there
    // with "first", or not there at all; "second" never reached it.
    if (present(path)) {
      ASSERT_EQ(contents(path), "first") << "seed " << seed;
    }
  }
  // Armed past what the child does: it ends as it would, having counted.
  const int status = run_in_child([&] {
    if (!power_loss::arm(dir, 5, 1).empty()) return;
    JournalFile f;
    if (!f.open(dir + "/other").empty() || !f.append("x", 1).empty()) return;
    if (power_loss::disarm() != 2) std::abort();
  });
  EXPECT_EQ(status, 0);
}

TEST(PowerLoss, FilesOutsideTheArmedDirectoryAreLeftAlone) {
  const ScratchDir scratch("armed");
  const std::string& dir = scratch.path();
  const ScratchDir scratch_other("outside");
  const std::string& other = scratch_other.path();
  const std::string acks = other + "/acks.txt";
  const std::string removed = other + "/removed";
  for (uint64_t seed = 1; seed <= kSeeds / 4; seed++) {
    fs::remove(acks);
    durable_file(removed, "r");
    ASSERT_EQ(power_loss::arm(dir, 0, seed), "");
    JournalFile f;
    ASSERT_EQ(f.open(acks, true), "");
    append(f, "c 1 t:1:u\na 1\n");  // never synced
    ASSERT_EQ(remove_file(removed), "");
    ASSERT_EQ(replace_file(other + "/pointer", "p"), "");
    const power_loss::CrashSummary c = power_loss::simulate_crash();
    EXPECT_EQ(c.writes_kept + c.writes_torn + c.writes_undone + c.entries_kept + c.entries_undone, 0U);
    EXPECT_EQ(c.event, 0U) << "a change outside the armed directory was counted";
    EXPECT_EQ(contents(acks), "c 1 t:1:u\na 1\n");
    EXPECT_FALSE(present(removed));
    EXPECT_EQ(contents(other + "/pointer"), "p");
  }
}

TEST(PowerLoss, UnarmedItDoesNothing) {
  EXPECT_FALSE(power_loss::armed());
  const power_loss::CrashSummary c = power_loss::simulate_crash();
  EXPECT_EQ(c.event, 0U);
  EXPECT_EQ(power_loss::disarm(), 0U);
}

}  // namespace
}  // namespace abyss::platform
