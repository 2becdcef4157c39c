#include "platform/file.h"

#include "platform/power_loss.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string_view>
#include <thread>

namespace abyss::platform {

namespace {

std::string os_reason() { return std::strerror(errno); }
std::string reason_of(int err) { return std::strerror(err); }

constexpr std::size_t kReadBuffer = std::size_t{64} << 10;

// open(2) for reading, refusing a directory (reading one fails only later).
int open_for_reading(const std::string& path, std::string& reason) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    reason = os_reason();
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    reason = reason_of(EISDIR);
    return -1;
  }
  return fd;
}

// read(2), retried when a signal interrupts it.
ssize_t read_some(int fd, char* buf, std::size_t n) {
  ssize_t got = 0;
  do {
    got = ::read(fd, buf, n);
  } while (got < 0 && errno == EINTR);
  return got;
}

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

FileStatus file_status(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {FileKind::kMissing, os_reason()};
  if (S_ISREG(st.st_mode)) return {FileKind::kRegular, {}};
  if (S_ISDIR(st.st_mode)) return {FileKind::kDirectory, {}};
  return {FileKind::kOther, {}};
}

std::string make_dirs(const std::string& path) {
  if (path.empty()) return reason_of(ENOENT);
  if (power_loss::armed()) [[unlikely]]
    power_loss::make_dirs(path);
  // Every prefix that ends before a '/', then the whole path.
  for (std::size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    const std::string level = path.substr(0, end);
    if (::mkdir(level.c_str(), 0777) == 0) {
      // A new directory's entry is durable once its parent is synced.
      if (auto err = sync_dir(parent_of(level)); !err.empty()) return err;
    } else if (errno != EEXIST) {
      return os_reason();
    }
    if (end == std::string::npos) break;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return os_reason();
  return S_ISDIR(st.st_mode) ? std::string{} : reason_of(ENOTDIR);
}

std::string remove_file(const std::string& path) {
  if (power_loss::armed()) [[unlikely]] {
    if (power_loss::covers(path)) return power_loss::remove(path) == 0 ? std::string{} : os_reason();
  }
  return ::unlink(path.c_str()) == 0 ? std::string{} : os_reason();
}

std::string list_dir(const std::string& path, std::vector<std::string>& names) {
  names.clear();
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) return os_reason();
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  std::string err = errno != 0 ? os_reason() : std::string();
  ::closedir(d);
  return err;
}

// ---- OutputFile ------------------------------------------------------------

OutputFile::~OutputFile() { (void)close(); }

std::string OutputFile::open(const std::string& path) {
  if (fd_ >= 0) return reason_of(EBUSY);
  int fd = -1;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return os_reason();
  fd_ = fd;
  if (buf_ == nullptr) buf_ = std::make_unique<char[]>(cap_);
  size_ = 0;
  error_.clear();
  return {};
}

void OutputFile::write_all(const char* data, std::size_t n) {
  while (n > 0 && error_.empty()) {
    const ssize_t put = ::write(fd_, data, n);
    if (put < 0) {
      if (errno != EINTR) error_ = os_reason();
      continue;
    }
    data += put;
    n -= static_cast<std::size_t>(put);
  }
}

void OutputFile::flush() {
  if (size_ > 0) write_all(buf_.get(), size_);
  size_ = 0;
}

void OutputFile::write_slow(std::string_view bytes) {
  if (fd_ < 0) {
    if (error_.empty()) error_ = reason_of(EBADF);
    return;
  }
  flush();
  if (bytes.size() >= cap_) {
    write_all(bytes.data(), bytes.size());
  } else {
    std::memcpy(buf_.get(), bytes.data(), bytes.size());
    size_ = bytes.size();
  }
}

std::string OutputFile::append_file(const std::string& path) {
  std::string reason;
  const int in = open_for_reading(path, reason);
  if (in < 0) return reason;
  if (fd_ < 0 && error_.empty()) error_ = reason_of(EBADF);
  flush();
  // The buffer is empty now: it carries the copy.
  while (error_.empty()) {
    const ssize_t got = read_some(in, buf_.get(), cap_);
    if (got < 0) {
      reason = os_reason();
      break;
    }
    if (got == 0) break;
    write_all(buf_.get(), static_cast<std::size_t>(got));
  }
  ::close(in);
  return reason;
}

std::string OutputFile::close() {
  if (fd_ < 0) return error_;
  flush();
  if (::close(fd_) != 0 && error_.empty()) error_ = os_reason();
  fd_ = -1;
  return error_;
}

// ---- JournalFile -----------------------------------------------------------

JournalFile::~JournalFile() { (void)close(); }

std::string JournalFile::open(const std::string& path, bool keep) {
  if (fd_ >= 0) return reason_of(EBUSY);
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (keep ? O_APPEND : O_TRUNC);
  int fd = -1;
  node_ = 0;
  if (power_loss::armed() && power_loss::covers(path)) [[unlikely]] {
    fd = power_loss::open(path, flags, node_);
  } else {
    do {
      fd = ::open(path.c_str(), flags, 0666);
    } while (fd < 0 && errno == EINTR);
  }
  if (fd < 0) return os_reason();
  fd_ = fd;
  size_ = 0;
  error_.clear();
  return {};
}

std::string JournalFile::append(const char* data, std::size_t n) { return write_all(data, n, nullptr); }

std::string JournalFile::write_at(uint64_t offset, const char* data, std::size_t n) {
  return write_all(data, n, &offset);
}

// write(2) at the end, or pwrite(2) at `*offset`, until all `n` bytes are
// written or one fails for another reason than a signal.
std::string JournalFile::write_all(const char* data, std::size_t n, uint64_t* offset) {
  if (fd_ < 0) return reason_of(EBADF);
  while (n > 0 && error_.empty()) {
    ssize_t put = 0;
    if (node_ != 0) [[unlikely]] {
      put = power_loss::write(node_, fd_, data, n, offset);
    } else {
      put = offset == nullptr ? ::write(fd_, data, n) : ::pwrite(fd_, data, n, static_cast<off_t>(*offset));
    }
    if (put < 0) {
      if (errno != EINTR) error_ = os_reason();
      continue;
    }
    data += put;
    n -= static_cast<std::size_t>(put);
    if (offset == nullptr) {
      size_ += static_cast<uint64_t>(put);
    } else {
      *offset += static_cast<uint64_t>(put);
    }
  }
  return error_;
}

int JournalFile::sync_fd(int fd, uint64_t node) {
  const int r = node != 0 ? power_loss::sync(node, fd) : ::fdatasync(fd);
  return r != 0 ? errno : 0;
}

std::string JournalFile::sync() {
  if (fd_ < 0) return reason_of(EBADF);
  if (!error_.empty()) return error_;
  if (const int err = sync_fd(fd_, node_); err != 0) error_ = reason_of(err);
  return error_;
}

// ---- BackgroundSync --------------------------------------------------------

#if defined(ABYSS_SIM)

struct BackgroundSync::Helper {};

BackgroundSync::BackgroundSync() = default;
BackgroundSync::~BackgroundSync() = default;
void BackgroundSync::stop() {}

void BackgroundSync::start(const JournalFile& file, const std::function<void()>* on_done) {
  const int err = file.fd_ < 0 ? EBADF : JournalFile::sync_fd(file.fd_, file.node_);
  error_ = err != 0 ? reason_of(err) : std::string{};
  busy_ = true;
  if (on_done != nullptr && *on_done) (*on_done)();
}

bool BackgroundSync::done(std::string& error) {
  if (busy_) error = error_;
  busy_ = false;
  return true;
}

std::string BackgroundSync::wait() {
  std::string err;
  (void)done(err);
  return err;
}

#else

// The helper sleeps on `wake` until a sync is asked for or it is to end.
// `finished` is read without the lock by done(), which polls it.
struct BackgroundSync::Helper {
  std::mutex mu;
  std::condition_variable wake;
  std::condition_variable idle;
  bool asked = false;                              // under mu
  bool stop = false;                               // under mu
  int fd = -1;                                     // under mu
  uint64_t node = 0;                               // under mu
  const std::function<void()>* on_done = nullptr;  // under mu
  int error = 0;                                   // written before `finished` is set
  std::atomic<bool> finished{false};
  std::thread thread;

  void loop() {
    std::unique_lock<std::mutex> hold(mu);
    for (;;) {
      wake.wait(hold, [&] { return asked || stop; });
      if (!asked) return;
      const int f = fd;
      const uint64_t n = node;
      const std::function<void()>* then = on_done;
      hold.unlock();
      error = JournalFile::sync_fd(f, n);
      hold.lock();
      asked = false;
      finished.store(true, std::memory_order_release);
      idle.notify_all();
      if (then != nullptr && *then) (*then)();
    }
  }
};

BackgroundSync::BackgroundSync() = default;

BackgroundSync::~BackgroundSync() { stop(); }

void BackgroundSync::stop() {
  if (helper_ == nullptr || !helper_->thread.joinable()) return;
  {
    std::lock_guard<std::mutex> hold(helper_->mu);
    helper_->stop = true;
  }
  helper_->wake.notify_one();
  helper_->thread.join();  // a sync in flight finishes first
}

void BackgroundSync::start(const JournalFile& file, const std::function<void()>* on_done) {
  if (helper_ == nullptr) helper_ = std::make_unique<Helper>();
  if (!helper_->thread.joinable()) {
    helper_->stop = false;
    helper_->thread = std::thread([h = helper_.get()] { h->loop(); });
  }
  {
    std::lock_guard<std::mutex> hold(helper_->mu);
    helper_->fd = file.fd_;
    helper_->node = file.node_;
    helper_->on_done = on_done;
    helper_->asked = true;
    helper_->finished.store(false, std::memory_order_relaxed);
  }
  helper_->wake.notify_one();
  busy_ = true;
}

bool BackgroundSync::done(std::string& error) {
  if (!busy_) return true;
  if (!helper_->finished.load(std::memory_order_acquire)) return false;
  busy_ = false;
  error = helper_->error != 0 ? reason_of(helper_->error) : std::string{};
  return true;
}

std::string BackgroundSync::wait() {
  if (!busy_) return {};
  {
    std::unique_lock<std::mutex> hold(helper_->mu);
    helper_->idle.wait(hold, [&] { return helper_->finished.load(std::memory_order_relaxed); });
  }
  std::string err;
  (void)done(err);
  return err;
}

#endif

std::string JournalFile::close() {
  if (fd_ < 0) return error_;
  if (::close(fd_) != 0 && error_.empty()) error_ = os_reason();
  fd_ = -1;
  node_ = 0;
  return error_;
}

std::string sync_dir(const std::string& path) {
  if (power_loss::armed()) [[unlikely]]
    return power_loss::sync_dir(path) == 0 ? std::string{} : os_reason();
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return os_reason();
  std::string err;
  if (::fsync(fd) != 0) err = os_reason();
  ::close(fd);
  return err;
}

std::string replace_file(const std::string& path, std::string_view bytes) {
  const std::string temp = path + ".new";
  JournalFile f;
  if (auto err = f.open(temp); !err.empty()) return err;
  std::string err = f.append(bytes.data(), bytes.size());
  if (err.empty()) err = f.sync();
  if (auto closed = f.close(); err.empty()) err = closed;
  if (err.empty()) err = rename_file(temp, path);
  if (!err.empty()) {
    (void)remove_file(temp);
    return err;
  }
  return sync_dir(parent_of(path));
}

std::string rename_file(const std::string& from, const std::string& to) {
  const bool hooked = power_loss::armed() && power_loss::covers(to);
  return (hooked ? power_loss::rename(from, to) : ::rename(from.c_str(), to.c_str())) == 0 ? std::string{}
                                                                                           : os_reason();
}

// ---- InputFile -------------------------------------------------------------

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string InputFile::open(const std::string& path) {
  if (fd_ >= 0) return reason_of(EBUSY);
  std::string reason;
  fd_ = open_for_reading(path, reason);
  if (fd_ < 0) return reason;
  struct stat st {};
  size_ = ::fstat(fd_, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  error_.clear();
  return {};
}

// Reads until `n` bytes or the file's end, `some(to, left, got)` reading
// once after `got` bytes.
template <class ReadSome>
int64_t InputFile::read_fully(char* buf, std::size_t n, ReadSome some) {
  if (fd_ < 0) {
    error_ = reason_of(EBADF);
    return -1;
  }
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = some(buf + got, n - got, got);
    if (r < 0) {
      error_ = os_reason();
      return -1;
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return static_cast<int64_t>(got);
}

int64_t InputFile::read(char* buf, std::size_t n) {
  return read_fully(buf, n, [&](char* to, std::size_t left, std::size_t) { return read_some(fd_, to, left); });
}

int64_t InputFile::read_at(char* buf, std::size_t n, uint64_t offset) {
  return read_fully(buf, n, [&](char* to, std::size_t left, std::size_t got) {
    ssize_t r = 0;
    do {
      r = ::pread(fd_, to, left, static_cast<off_t>(offset + got));
    } while (r < 0 && errno == EINTR);
    return r;
  });
}

std::string read_file_range(const std::string& path, uint64_t offset, std::size_t n, std::string& out) {
  InputFile in;
  if (auto err = in.open(path); !err.empty()) return err;
  out.resize(offset >= in.size() ? 0 : static_cast<std::size_t>(std::min<uint64_t>(n, in.size() - offset)));
  const int64_t got = in.read_at(out.data(), out.size(), offset);
  if (got < 0) return in.error();
  out.resize(static_cast<std::size_t>(got));
  return {};
}

std::string read_file(const std::string& path, std::string& out) {
  InputFile in;
  if (auto err = in.open(path); !err.empty()) return err;
  out.resize(in.size());
  const int64_t got = in.read(out.data(), out.size());
  if (got < 0) return in.error();
  out.resize(static_cast<std::size_t>(got));
  return {};
}

// ---- LineReader ------------------------------------------------------------

LineReader::LineReader() = default;

LineReader::~LineReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::string LineReader::open(const std::string& path) {
  if (fd_ >= 0) return reason_of(EBUSY);
  std::string reason;
  fd_ = open_for_reading(path, reason);
  if (fd_ < 0) return reason;
  if (buf_ == nullptr) buf_ = std::make_unique<char[]>(kReadBuffer);
  pos_ = end_ = 0;
  eof_ = false;
  line_number_ = 0;
  error_.clear();
  return {};
}

bool LineReader::next(std::string& line) {
  line.clear();
  if (fd_ < 0 || !error_.empty()) return false;
  bool any = false;  // a byte of this line was read
  for (;;) {
    if (pos_ < end_) {
      const char* from = buf_.get() + pos_;
      const auto* nl = static_cast<const char*>(std::memchr(from, '\n', end_ - pos_));
      if (nl != nullptr) {
        line.append(from, nl);
        pos_ += static_cast<std::size_t>(nl - from) + 1;
        newline_ = true;
        line_number_++;
        return true;
      }
      line.append(from, end_ - pos_);
      any = true;
      pos_ = end_;
    }
    if (eof_) break;
    const ssize_t got = read_some(fd_, buf_.get(), kReadBuffer);
    if (got < 0) {
      error_ = os_reason();
      line.clear();
      return false;
    }
    pos_ = 0;
    end_ = static_cast<std::size_t>(got);
    eof_ = got == 0;
  }
  if (!any) return false;
  newline_ = false;
  line_number_++;
  return true;
}

}  // namespace abyss::platform
