#include "platform/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace abyss::platform {

namespace {

std::string os_reason() { return std::strerror(errno); }

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The parent directory exists, is a directory and accepts new entries.
std::string check_parent(const std::string& path) {
  const std::string parent = parent_of(path);
  struct stat st {};
  if (::stat(parent.c_str(), &st) != 0) return "directory " + parent + ": " + os_reason();
  if (!S_ISDIR(st.st_mode)) return parent + " is not a directory";
  if (::access(parent.c_str(), W_OK | X_OK) != 0) return "directory " + parent + ": " + os_reason();
  return {};
}

}  // namespace

std::string check_output_file(const std::string& path) {
  if (path.empty()) return "an empty path";
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return "it is a directory";
  if (!exists) {
    if (auto err = check_parent(path); !err.empty()) return err;
  }
  // Opening is the one test that also catches read-only file systems.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return os_reason();
  ::close(fd);
  if (!exists) ::unlink(path.c_str());
  return {};
}

std::string check_output_dir(const std::string& path) {
  if (path.empty()) return "an empty path";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return "it exists and is not a directory";
    if (::access(path.c_str(), W_OK | X_OK) != 0) return os_reason();
    return {};
  }
  if (errno != ENOENT) return os_reason();
  // The run creates every missing level: the nearest existing one must take it.
  std::string existing = parent_of(path);
  while (::stat(existing.c_str(), &st) != 0 && errno == ENOENT && existing != "/" && existing != ".") {
    existing = parent_of(existing);
  }
  if (::stat(existing.c_str(), &st) != 0) return "directory " + existing + ": " + os_reason();
  if (!S_ISDIR(st.st_mode)) return existing + " is not a directory";
  if (::access(existing.c_str(), W_OK | X_OK) != 0) return "directory " + existing + ": " + os_reason();
  return {};
}

}  // namespace abyss::platform
