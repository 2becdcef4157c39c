#include "platform/power_loss.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace abyss::platform::power_loss {

namespace {

// A write to a file since its last sync, with what undoes it: the file's
// size before, and the bytes it covered of what was there. A truncating
// open is one too: it covered the whole old contents.
struct Write {
  uint64_t offset = 0;
  uint64_t length = 0;  // bytes written; 0 for a truncating open
  uint64_t old_size = 0;
  std::string old_bytes;  // the old contents of [offset, min(offset + length, old_size)), or all of it
  bool truncate = false;
};

// A file of the directory as the layer knows it: where it is now (its path
// in the directory, or aside once removed or renamed over) and its writes
// since its last sync.
struct Node {
  std::string path;
  std::vector<Write> pending;
};

enum class Change : uint8_t { Create, Rename, Remove };

// An entry change of the directory since its last sync.
struct Entry {
  Change kind = Change::Create;
  uint64_t node = 0;
  std::string path;        // created at, renamed to, removed from
  std::string from;        // Rename: the old path
  uint64_t displaced = 0;  // Rename: the node it replaced, kept aside; 0 if none
};

// splitmix64: enough for drawing a crash, and the same on every platform.
class Draw {
 public:
  explicit Draw(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31U);
  }
  uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }  // in [0, n)

 private:
  uint64_t s_;
};

struct State {
  std::mutex mu;
  std::string dir;    // the armed directory, without a trailing '/'
  std::string aside;  // where removed and replaced files wait: dir + ".power-loss"
  uint64_t crash_at = 0;
  uint64_t seed = 0;
  uint64_t events = 0;
  uint64_t next_node = 1;
  std::map<uint64_t, Node> nodes;
  std::map<std::string, uint64_t> names;  // a path in the directory -> its node
  std::vector<Entry> entries;
};

// The layer is process-wide by nature: it stands for the machine's disk.
State& state() {
  static State s;
  return s;
}
std::atomic<bool> g_armed{false};

std::string without_slash(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string aside_path(const State& s, uint64_t node) { return s.aside + "/" + std::to_string(node); }

// The node of the file at `path`: one the layer made, or a new one for a
// file that was there before it was armed (all of it durable).
uint64_t node_at(State& s, const std::string& path) {
  if (auto it = s.names.find(path); it != s.names.end()) return it->second;
  const uint64_t id = s.next_node++;
  s.nodes[id].path = path;
  s.names[path] = id;
  return id;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Reads [offset, offset + n) of `path`, less where the file ends.
std::string read_range(const std::string& path, uint64_t offset, uint64_t n) {
  std::string out;
  if (n == 0) return out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  out.resize(n);
  uint64_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, out.data() + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<uint64_t>(r);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

std::string os_reason(const std::string& what) { return what + ": " + std::strerror(errno); }

// Puts `bytes` at `offset` of `path` and sets its size to `size`.
std::string restore(const std::string& path, uint64_t offset, const std::string& bytes, uint64_t size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return os_reason("undo " + path);
  std::string err;
  std::size_t done = 0;
  while (done < bytes.size() && err.empty()) {
    const ssize_t put = ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) err = os_reason("undo " + path);
    if (put > 0) done += static_cast<std::size_t>(put);
  }
  if (err.empty() && ::ftruncate(fd, static_cast<off_t>(size)) != 0) err = os_reason("undo " + path);
  ::close(fd);
  return err;
}

// Undoes `w` on the file at `path`, all of it (keep == 0) or all but its
// first `keep` bytes (a torn write). The writes after it are undone already.
std::string undo(const std::string& path, const Write& w, uint64_t keep) {
  if (w.truncate) return restore(path, 0, w.old_bytes, w.old_size);
  const std::string tail = keep < w.old_bytes.size() ? w.old_bytes.substr(keep) : std::string();
  const uint64_t size = keep == 0 ? w.old_size : std::max(w.old_size, w.offset + keep);
  return restore(path, w.offset + keep, tail, size);
}

std::string move(const std::string& from, const std::string& to) {
  return ::rename(from.c_str(), to.c_str()) == 0 ? std::string() : os_reason("rename " + from + " to " + to);
}

// Removes the aside directory and what it holds: files whose removal (or
// replacement) is kept.
void clear_aside(const State& s) {
  for (const auto& entry : s.nodes) {
    const std::string p = aside_path(s, entry.first);
    if (entry.second.path == p) ::unlink(p.c_str());
  }
  ::rmdir(s.aside.c_str());
}

void reset(State& s) {
  s.nodes.clear();
  s.names.clear();
  s.entries.clear();
  s.events = 0;
  s.next_node = 1;
  g_armed.store(false, std::memory_order_relaxed);
}

CrashSummary crash_locked(State& s) {
  CrashSummary out;
  out.event = s.events;
  Draw draw(s.seed);
  auto note = [&](const std::string& err) {
    if (out.error.empty()) out.error = err;
  };
  // Each file keeps a prefix of its writes, the last of it perhaps torn.
  for (const auto& entry : s.nodes) {
    const Node& node = entry.second;
    const std::size_t n = node.pending.size();
    if (n == 0) continue;
    const std::size_t kept = draw.below(n + 1);
    for (std::size_t i = n; i > kept; i--) note(undo(node.path, node.pending[i - 1], 0));
    out.writes_undone += n - kept;
    if (kept == 0) continue;
    const Write& last = node.pending[kept - 1];
    if (!last.truncate && last.length > 1 && draw.below(2) == 0) {
      note(undo(node.path, last, 1 + draw.below(last.length - 1)));
      out.writes_torn++;
      out.writes_kept += kept - 1;
    } else {
      out.writes_kept += kept;
    }
  }
  // The directory keeps a prefix of its entry changes.
  const std::size_t n = s.entries.size();
  const std::size_t kept = draw.below(n + 1);
  for (std::size_t i = n; i > kept; i--) {
    const Entry& e = s.entries[i - 1];
    Node& node = s.nodes[e.node];
    switch (e.kind) {
      case Change::Create:
        if (::unlink(e.path.c_str()) != 0) note(os_reason("undo the creation of " + e.path));
        node.path.clear();
        break;
      case Change::Rename:
        note(move(e.path, e.from));
        node.path = e.from;
        if (e.displaced != 0) {
          note(move(aside_path(s, e.displaced), e.path));
          s.nodes[e.displaced].path = e.path;
        }
        break;
      case Change::Remove:
        note(move(aside_path(s, e.node), e.path));
        node.path = e.path;
        break;
    }
  }
  out.entries_kept = kept;
  out.entries_undone = n - kept;
  clear_aside(s);
  reset(s);
  return out;
}

// Counts one event; at the armed one, crashes: the lock is held until the
// process is gone, so no other thread changes the directory meanwhile.
void event(State& s) {
  s.events++;
  if (s.crash_at == 0 || s.events != s.crash_at) return;
  const CrashSummary c = crash_locked(s);
  char line[512];
  const int len =
      std::snprintf(line, sizeof line,
                    "abyss: simulated power loss at event %llu: writes kept %llu, torn %llu, undone "
                    "%llu; directory entries kept %llu, undone %llu%s%s\n",
                    static_cast<unsigned long long>(c.event), static_cast<unsigned long long>(c.writes_kept),
                    static_cast<unsigned long long>(c.writes_torn), static_cast<unsigned long long>(c.writes_undone),
                    static_cast<unsigned long long>(c.entries_kept), static_cast<unsigned long long>(c.entries_undone),
                    c.error.empty() ? "" : "; ", c.error.c_str());
  if (len > 0)
    (void)!::write(STDERR_FILENO, line, std::min<std::size_t>(static_cast<std::size_t>(len), sizeof line - 1));
  ::_exit(kExitCode);
}

// The aside directory, made when first needed.
bool ensure_aside(const State& s) { return ::mkdir(s.aside.c_str(), 0777) == 0 || errno == EEXIST; }

}  // namespace

std::string arm(const std::string& dir, uint64_t crash_at, uint64_t seed) {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.mu);
  if (g_armed.load(std::memory_order_relaxed)) return "the power-loss layer is armed already (for " + s.dir + ")";
  if (dir.empty()) return "an empty directory";
  reset(s);
  s.dir = without_slash(dir);
  s.aside = s.dir + ".power-loss";
  s.crash_at = crash_at;
  s.seed = seed;
  g_armed.store(true, std::memory_order_relaxed);
  return {};
}

bool armed() { return g_armed.load(std::memory_order_relaxed); }

CrashSummary simulate_crash() {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.mu);
  if (!g_armed.load(std::memory_order_relaxed)) return {};
  return crash_locked(s);
}

uint64_t disarm() {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.mu);
  if (!g_armed.load(std::memory_order_relaxed)) return 0;
  const uint64_t events = s.events;
  clear_aside(s);
  reset(s);
  return events;
}

bool covers(const std::string& path) {
  if (!armed()) return false;
  const State& s = state();
  return parent_of(path) == s.dir;
}

int open(const std::string& path, int flags, uint64_t& node) {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.mu);
  const bool existed = exists(path);
  const bool creates = !existed && (flags & O_CREAT) != 0;
  const bool truncates = existed && (flags & O_TRUNC) != 0;
  if (creates || truncates) event(s);
  std::string old;
  if (truncates) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) old = read_range(path, 0, static_cast<uint64_t>(st.st_size));
  }
  int fd = -1;
  do {
    fd = ::open(path.c_str(), flags, 0666);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return fd;
  if (creates) {
    const uint64_t id = s.next_node++;
    s.nodes[id].path = path;
    s.names[path] = id;
    s.entries.push_back({Change::Create, id, path, {}, 0});
    node = id;
  } else {
    node = node_at(s, path);
  }
  if (truncates) {
    Write w;
    w.truncate = true;
    w.old_size = old.size();
    w.old_bytes = std::move(old);
    s.nodes[node].pending.push_back(std::move(w));
  }
  return fd;
}

ssize_t write(uint64_t node, int fd, const char* data, std::size_t n, const uint64_t* offset) {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.mu);
  // A file opened while armed and written after disarm() is an ordinary file.
  if (!armed()) return offset == nullptr ? ::write(fd, data, n) : ::pwrite(fd, data, n, static_cast<off_t>(*offset));
  event(s);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return -1;
  const auto old_size = static_cast<uint64_t>(st.st_size);
  uint64_t at = old_size;
  if (offset != nullptr) {
    at = *offset;
  } else if ((::fcntl(fd, F_GETFL) & O_APPEND) == 0) {
    const off_t pos = ::lseek(fd, 0, SEEK_CUR);
    if (pos < 0) return -1;
    at = static_cast<uint64_t>(pos);
  }
  Node& file = s.nodes[node];
  Write w;
  w.offset = at;
  w.old_size = old_size;
  if (at < old_size) w.old_bytes = read_range(file.path, at, std::min<uint64_t>(n, old_size - at));
  const ssize_t put = offset == nullptr ? ::write(fd, data, n) : ::pwrite(fd, data, n, static_cast<off_t>(at));
  if (put <= 0) return put;
  w.length = static_cast<uint64_t>(put);
  if (w.old_bytes.size() > w.length) w.old_bytes.resize(w.length);
  file.pending.push_back(std::move(w));
  return put;
}

int sync(uint64_t node, int fd) {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.mu);
  if (!armed()) return ::fdatasync(fd);
  event(s);
  const int r = ::fdatasync(fd);
  if (r == 0) s.nodes[node].pending.clear();
  return r;
}

int rename(const std::string& from, const std::string& to) {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.mu);
  event(s);
  const uint64_t moved = node_at(s, from);
  uint64_t displaced = 0;
  if (exists(to)) {
    // The file renamed over stays, aside, until the rename is durable.
    displaced = node_at(s, to);
    if (!ensure_aside(s) || ::link(to.c_str(), aside_path(s, displaced).c_str()) != 0) return -1;
  }
  if (::rename(from.c_str(), to.c_str()) != 0) {
    const int err = errno;
    if (displaced != 0) ::unlink(aside_path(s, displaced).c_str());
    errno = err;
    return -1;
  }
  s.names.erase(from);
  s.names[to] = moved;
  s.nodes[moved].path = to;
  if (displaced != 0) s.nodes[displaced].path = aside_path(s, displaced);
  s.entries.push_back({Change::Rename, moved, to, from, displaced});
  return 0;
}

int remove(const std::string& path) {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.mu);
  event(s);
  if (!exists(path)) {
    errno = ENOENT;
    return -1;
  }
  const uint64_t id = node_at(s, path);
  // Kept aside, not deleted, until the removal is durable.
  if (!ensure_aside(s) || ::rename(path.c_str(), aside_path(s, id).c_str()) != 0) return -1;
  s.names.erase(path);
  s.nodes[id].path = aside_path(s, id);
  s.entries.push_back({Change::Remove, id, path, {}, 0});
  return 0;
}

int sync_dir(const std::string& path) {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.mu);
  const bool ours = without_slash(path) == s.dir;
  if (ours) event(s);
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  const int r = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (r == 0 && ours) {
    // Durable: files removed or replaced are gone for good.
    for (const Entry& e : s.entries) {
      const uint64_t gone = e.kind == Change::Remove ? e.node : e.displaced;
      if (gone == 0) continue;
      ::unlink(aside_path(s, gone).c_str());
      s.nodes.erase(gone);
    }
    s.entries.clear();
  }
  errno = err;
  return r;
}

void make_dirs(const std::string& path) {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.mu);
  if (without_slash(path) == s.dir) event(s);
}

}  // namespace abyss::platform::power_loss
