#include "platform/net.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <atomic>
#include <vector>

namespace abyss::platform {

namespace {

std::atomic<bool> g_terminate{false};

extern "C" void on_termination(int /*signal*/) { g_terminate.store(true, std::memory_order_relaxed); }

std::string errno_text(std::string_view what) { return std::string(what) + ": " + std::strerror(errno); }

void no_delay(int fd) {
  const int one = 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// The addresses `host`:`port` names; the reason it names none.
std::string resolve(std::string_view host, uint16_t port, bool passive, addrinfo*& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const std::string h(host);
  const std::string p = std::to_string(port);
  if (int rc = getaddrinfo(h.c_str(), p.c_str(), &hints, &out); rc != 0) {
    return "cannot resolve '" + h + "': " + gai_strerror(rc);
  }
  return {};
}

}  // namespace

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Socket::Io Socket::read(char* buf, std::size_t n) {
  Io io;
  for (;;) {
    const ssize_t got = ::recv(fd_, buf, n, 0);
    if (got > 0) {
      io.bytes = static_cast<std::size_t>(got);
    } else if (got == 0) {
      io.closed = n > 0;
    } else if (errno == EINTR) {
      continue;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
      io.closed = true;
      io.error = errno_text("read");
    }
    return io;
  }
}

Socket::Io Socket::write(const char* buf, std::size_t n) {
  Io io;
  while (io.bytes < n) {
    const ssize_t put = ::send(fd_, buf + io.bytes, n - io.bytes, MSG_NOSIGNAL);
    if (put >= 0) {
      io.bytes += static_cast<std::size_t>(put);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      io.closed = true;
      io.error = errno_text("write");
    }
    break;
  }
  return io;
}

void Socket::shutdown_write() {
  if (fd_ >= 0) (void)::shutdown(fd_, SHUT_WR);
}

std::string listen_tcp(std::string_view host, uint16_t port, Socket& out, uint16_t& bound) {
  addrinfo* addrs = nullptr;
  if (auto err = resolve(host, port, true, addrs); !err.empty()) return err;
  std::string why = "no address for '" + std::string(host) + "'";
  for (addrinfo* a = addrs; a != nullptr; a = a->ai_next) {
    Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!s.is_open()) {
      why = errno_text("socket");
      continue;
    }
    const int one = 1;
    (void)setsockopt(s.handle(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(s.handle(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(s.handle(), SOMAXCONN) != 0) {
      why = errno_text("cannot listen on " + std::string(host) + ":" + std::to_string(port));
      continue;
    }
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    (void)getsockname(s.handle(), reinterpret_cast<sockaddr*>(&addr), &len);
    bound = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    out = std::move(s);
    freeaddrinfo(addrs);
    return {};
  }
  freeaddrinfo(addrs);
  return why;
}

Accept accept_tcp(const Socket& listener, Socket& out) {
  for (;;) {
    const int fd = ::accept4(listener.handle(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      no_delay(fd);
      out = Socket(fd);
      return Accept::Connection;
    }
    switch (errno) {
      case EINTR:
      case ECONNABORTED:  // one that hung up while waiting: try the next
      case EPROTO:
        continue;
      case EAGAIN:
#if EWOULDBLOCK != EAGAIN
      case EWOULDBLOCK:
#endif
        return Accept::None;
      case EMFILE:
      case ENFILE:
        return Accept::NoDescriptors;
      default:
        return Accept::Failed;
    }
  }
}

void SpareDescriptor::release() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void SpareDescriptor::restore() {
  if (fd_ < 0) fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

namespace {

uint64_t from_rlim(rlim_t v) { return v == RLIM_INFINITY ? ~uint64_t{0} : static_cast<uint64_t>(v); }

}  // namespace

DescriptorLimit descriptor_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return {~uint64_t{0}, ~uint64_t{0}};
  return {from_rlim(r.rlim_cur), from_rlim(r.rlim_max)};
}

std::string set_descriptor_limit(uint64_t soft) {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return errno_text("getrlimit");
  r.rlim_cur = soft == ~uint64_t{0} ? RLIM_INFINITY : static_cast<rlim_t>(soft);
  if (setrlimit(RLIMIT_NOFILE, &r) != 0) return errno_text("setrlimit");
  return {};
}

std::string connect_tcp(std::string_view host, uint16_t port, Socket& out) {
  addrinfo* addrs = nullptr;
  if (auto err = resolve(host, port, false, addrs); !err.empty()) return err;
  std::string why = "no address for '" + std::string(host) + "'";
  for (addrinfo* a = addrs; a != nullptr; a = a->ai_next) {
    Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!s.is_open()) {
      why = errno_text("socket");
      continue;
    }
    if (::connect(s.handle(), a->ai_addr, a->ai_addrlen) != 0) {
      why = errno_text("cannot connect to " + std::string(host) + ":" + std::to_string(port));
      continue;
    }
    no_delay(s.handle());
    out = std::move(s);
    freeaddrinfo(addrs);
    return {};
  }
  freeaddrinfo(addrs);
  return why;
}

Poller::Poller() {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  wake_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_ < 0 || wake_ < 0) {
    error_ = errno_text("epoll");
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = ~uint64_t{0};
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &ev) != 0) error_ = errno_text("epoll");
}

Poller::~Poller() {
  if (wake_ >= 0) ::close(wake_);
  if (epoll_ >= 0) ::close(epoll_);
}

std::string Poller::add(const Socket& s, uint64_t token) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.u64 = token;
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, s.handle(), &ev) != 0) return errno_text("epoll");
  return {};
}

void Poller::watch(const Socket& s, uint64_t token, bool read, bool write) {
  epoll_event ev{};
  ev.events = (read ? EPOLLIN | EPOLLRDHUP : 0u) | (write ? EPOLLOUT : 0u);
  ev.data.u64 = token;
  (void)epoll_ctl(epoll_, EPOLL_CTL_MOD, s.handle(), &ev);
}

void Poller::remove(const Socket& s) { (void)epoll_ctl(epoll_, EPOLL_CTL_DEL, s.handle(), nullptr); }

std::size_t Poller::wait(std::span<PollEvent> out, int timeout_ms) {
  std::vector<epoll_event> evs(out.size());
  int n = epoll_wait(epoll_, evs.data(), static_cast<int>(evs.size()), timeout_ms);
  if (n < 0) return 0;  // EINTR: a signal; the caller looks at its flags
  std::size_t k = 0;
  for (int i = 0; i < n; i++) {
    if (evs[i].data.u64 == ~uint64_t{0}) {
      uint64_t count = 0;
      (void)::read(wake_, &count, sizeof count);
      continue;
    }
    const uint32_t e = evs[i].events;
    out[k++] = {evs[i].data.u64, (e & EPOLLIN) != 0, (e & EPOLLOUT) != 0, (e & (EPOLLHUP | EPOLLERR)) != 0};
  }
  return k;
}

void Poller::wake() {
  const uint64_t one = 1;
  (void)::write(wake_, &one, sizeof one);
}

void catch_termination() {
  g_terminate.store(false, std::memory_order_relaxed);
  struct sigaction sa {};
  sa.sa_handler = on_termination;
  sigemptyset(&sa.sa_mask);
  (void)sigaction(SIGTERM, &sa, nullptr);
  (void)sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

bool termination_requested() { return g_terminate.load(std::memory_order_relaxed); }

void request_termination() { g_terminate.store(true, std::memory_order_relaxed); }

}  // namespace abyss::platform
