#pragma once
// TCP sockets, readiness polling and termination signals: what `abyss serve`
// and its clients need from the operating system (docs/server.md). Natively
// only; a simulated build refuses to serve.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace abyss::platform {

// An open socket; closed when destroyed. Moved, never copied.
class Socket final {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { close(); }
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  bool is_open() const { return fd_ >= 0; }
  void close();

  // What one read or write did: `bytes` moved; `closed` when the peer hung
  // up or the connection failed (`error` then says how, if it failed).
  // Neither on a non-blocking socket with nothing to do now.
  struct Io {
    std::size_t bytes = 0;
    bool closed = false;
    std::string error;
  };
  // Up to `n` bytes that have arrived. A blocking socket waits for at least one.
  Io read(char* buf, std::size_t n);
  // Up to `n` bytes, never raising SIGPIPE. A blocking socket writes them all.
  Io write(const char* buf, std::size_t n);
  // Shuts the sending half: the peer reads the end of the stream.
  void shutdown_write();

  int handle() const { return fd_; }

 private:
  int fd_ = -1;
};

// A non-blocking TCP socket listening on `host`:`port` (port 0: one the
// system picks; `bound` is the one it listens on). The reason it could not.
std::string listen_tcp(std::string_view host, uint16_t port, Socket& out, uint16_t& bound);
// What accept_tcp found.
enum class Accept : uint8_t {
  Connection,     // `out` is it
  None,           // no connection is waiting
  NoDescriptors,  // one waits, but this process (EMFILE) or the system (ENFILE) has no descriptor left for it
  Failed,         // the system refused for another reason (out of memory)
};
// One waiting connection into `out`, non-blocking, with Nagle's delay off.
Accept accept_tcp(const Socket& listener, Socket& out);

// One descriptor held open in reserve (on /dev/null), so that a process
// that has run out can still accept a connection to tell it so: release()
// frees the reserve, restore() takes it again.
class SpareDescriptor final {
 public:
  SpareDescriptor() { restore(); }
  ~SpareDescriptor() { release(); }
  SpareDescriptor(const SpareDescriptor&) = delete;
  SpareDescriptor& operator=(const SpareDescriptor&) = delete;

  bool held() const { return fd_ >= 0; }
  void release();
  void restore();  // held() after it unless no descriptor was free

 private:
  int fd_ = -1;
};

// The process's limit on open descriptors (RLIMIT_NOFILE); UINT64_MAX
// where it is unlimited.
struct DescriptorLimit {
  uint64_t soft = 0;  // what opening a descriptor is checked against
  uint64_t hard = 0;  // how far an unprivileged process may raise the soft limit
};
DescriptorLimit descriptor_limit();
// Sets the soft limit to `soft` (at most the hard limit); the reason it could not.
std::string set_descriptor_limit(uint64_t soft);
// A blocking connection to `host`:`port`, with Nagle's delay off (clients,
// benchmarks and tests). The reason it could not.
std::string connect_tcp(std::string_view host, uint16_t port, Socket& out);

// What a socket is ready for.
struct PollEvent {
  uint64_t token;  // what it was added with
  bool readable;
  bool writable;
  bool closed;  // hung up or failed: reading it tells which
};

// One thread's wait for its sockets (epoll), and a way for other threads to
// wake it. A waiting point.
class Poller final {
 public:
  Poller();
  ~Poller();
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;

  // Watches `s` for input; watch() changes what it is watched for (a hang-up
  // or failure is always reported).
  std::string add(const Socket& s, uint64_t token);
  void watch(const Socket& s, uint64_t token, bool read, bool write);
  void remove(const Socket& s);
  // Waits up to `timeout_ms` (0: not at all) for events; fills `out` and
  // returns how many. A wake() ends the wait early, with no event for it.
  std::size_t wait(std::span<PollEvent> out, int timeout_ms);
  // From any thread.
  void wake();
  // Why the poller could not be made, if it could not.
  const std::string& error() const { return error_; }

 private:
  int epoll_ = -1;
  int wake_ = -1;  // an eventfd
  std::string error_;
};

// SIGTERM and SIGINT set a flag instead of ending the process, and SIGPIPE
// is ignored: a server shuts down in order. Clears a request made before.
void catch_termination();
bool termination_requested();
// Asks for termination as a signal would (tests, a SHUTDOWN command).
void request_termination();

}  // namespace abyss::platform
