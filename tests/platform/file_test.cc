// The platform's files: buffered writes, line reading, directories and the
// OS's reasons for failures.
#include "platform/file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace abyss::platform {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) { return testing::TempDir() + "abyss-platform-file-" + name; }

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PlatformFile, OutputFileKeepsTheOrderOfSmallAndLargeWrites) {
  const std::string path = temp_path("out");
  OutputFile out(8);  // small: "0123456789" goes straight to the OS
  ASSERT_EQ(out.open(path), "");
  out.write("ab");
  out.put('c');
  out.write("0123456789");
  out.write("de");
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(out.close(), "");
  EXPECT_EQ(contents(path), "abc0123456789de");
  ASSERT_EQ(out.open(path), "");  // truncates
  out.write("x");
  EXPECT_EQ(out.close(), "");
  EXPECT_EQ(contents(path), "x");
  fs::remove(path);
}

TEST(PlatformFile, OutputFileReportsTheOsReason) {
  OutputFile out;
  EXPECT_EQ(out.open("/nonexistent-abyss-dir/f"), "No such file or directory");
  EXPECT_EQ(out.open(testing::TempDir()), "Is a directory");
  out.write("dropped");
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(out.close(), "Bad file descriptor");
}

TEST(PlatformFile, AppendFileCopiesAWholeFile) {
  const std::string a = temp_path("a");
  const std::string b = temp_path("b");
  {
    OutputFile out(4);
    ASSERT_EQ(out.open(a), "");
    out.write("line one\nline two\n");
    ASSERT_EQ(out.close(), "");
  }
  OutputFile out(4);
  ASSERT_EQ(out.open(b), "");
  out.write(">");
  EXPECT_EQ(out.append_file(a), "");
  EXPECT_EQ(out.append_file(temp_path("missing")), "No such file or directory");
  out.write("<");
  EXPECT_EQ(out.close(), "");
  EXPECT_EQ(contents(b), ">line one\nline two\n<");
  fs::remove(a);
  fs::remove(b);
}

TEST(PlatformFile, LineReaderNumbersLinesAndSeesACutLastLine) {
  const std::string path = temp_path("lines");
  std::string text;
  for (int i = 0; i < 20000; i++) text += "line " + std::to_string(i) + "\n";  // beyond one buffer
  text += "\nlast";
  std::ofstream(path) << text;
  LineReader in;
  ASSERT_EQ(in.open(path), "");
  std::string line;
  for (int i = 0; i < 20000; i++) {
    ASSERT_TRUE(in.next(line));
    ASSERT_EQ(line, "line " + std::to_string(i));
    ASSERT_TRUE(in.ended_with_newline());
  }
  ASSERT_TRUE(in.next(line));
  EXPECT_EQ(line, "");
  ASSERT_TRUE(in.next(line));
  EXPECT_EQ(line, "last");
  EXPECT_FALSE(in.ended_with_newline());
  EXPECT_EQ(in.line_number(), 20002u);
  EXPECT_FALSE(in.next(line));
  EXPECT_EQ(in.error(), "");
  fs::remove(path);
}

TEST(PlatformFile, LineReaderRefusesWhatItCannotRead) {
  LineReader in;
  EXPECT_EQ(in.open("/nonexistent-abyss-dir/f"), "No such file or directory");
  EXPECT_EQ(in.open(testing::TempDir()), "Is a directory");
}

TEST(PlatformFile, MakeDirsStatusAndRemove) {
  const std::string root = temp_path("dirs");
  fs::remove_all(root);
  EXPECT_EQ(file_status(root).kind, FileKind::kMissing);
  EXPECT_EQ(file_status(root).reason, "No such file or directory");
  EXPECT_EQ(make_dirs(root + "/a/b"), "");
  EXPECT_EQ(make_dirs(root + "/a/b"), "");  // already there
  EXPECT_EQ(file_status(root + "/a/b").kind, FileKind::kDirectory);
  std::ofstream(root + "/f") << "x";
  EXPECT_EQ(file_status(root + "/f").kind, FileKind::kRegular);
  EXPECT_EQ(make_dirs(root + "/f"), "Not a directory");
  EXPECT_EQ(make_dirs(root + "/f/g"), "Not a directory");
  EXPECT_EQ(remove_file(root + "/f"), "");
  EXPECT_EQ(remove_file(root + "/f"), "No such file or directory");
  EXPECT_EQ(file_status("/dev/null").kind, FileKind::kOther);
  fs::remove_all(root);
}

}  // namespace
}  // namespace abyss::platform
