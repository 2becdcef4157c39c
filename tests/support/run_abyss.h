#pragma once
// Runs the abyss binary of the build the test belongs to, as a user would,
// and collects its exit code and output.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace abyss::test {

// build/<preset>/apps/abyss, beside build/<preset>/tests/abyss_tests.
inline std::filesystem::path abyss_binary() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "apps" / "abyss";
}

// A path under the test temp dir that no other test (or concurrent ctest
// process) uses.
inline std::string temp_path(const std::string& what) {
  static int counter = 0;
  return testing::TempDir() + "abyss_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" + what;
}

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Outcome {
  int exit_code = -1;  // -1: did not exit normally (signal)
  std::string out;
  std::string err;
  std::string command;
};

// `timeout` turns a hang into a failed test instead of a stuck suite.
inline Outcome run_abyss(const std::vector<std::string>& args, int timeout_s = 300) {
  const std::string out_path = temp_path("stdout");
  const std::string err_path = temp_path("stderr");
  Outcome o;
  o.command = shell_quote(abyss_binary().string());
  for (const auto& a : args) o.command += " " + shell_quote(a);
  const std::string line = "timeout " + std::to_string(timeout_s) + " " + o.command + " </dev/null >" +
                           shell_quote(out_path) + " 2>" + shell_quote(err_path);
  const int status = std::system(line.c_str());
  if (status != -1 && WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  o.out = slurp(out_path);
  o.err = slurp(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return o;
}

}  // namespace abyss::test
