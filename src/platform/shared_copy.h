#pragma once
// Copies of memory that another worker may write at the same time. An
// optimistic reader copies a row while a committer may be installing it, and
// finds out afterwards, by re-reading the row's version word, whether the copy
// can be torn (a seqlock: Silo §4.5, TicToc Algorithm 4). The reader writes no
// shared memory.
//
// C++ has no copy that may overlap another thread's writes (a byte-wise
// atomic memcpy is proposed, P1478), so the platform gives one, and the
// installer writes through its counterpart:
//   - natively on x86-64: one `rep movsb`, inline assembly the compiler
//     treats as opaque, so there is no C++ data race. The hardware gives
//     every byte some value that was written to it. It is as fast as memcpy
//     (a 1008-byte cold row: about 170 ns, against 420-530 ns word by word,
//     whose loads each hold a load-buffer entry and so keep fewer cache
//     misses in flight);
//   - under ThreadSanitizer or AddressSanitizer, and off x86-64: atomic
//     8-byte words (a tail byte by byte), acquire loads and release stores,
//     which the sanitizers check like any other access.
// A torn copy is then only a stale value, which the reader throws away.
//
// The order is the seqlock's (H.-J. Boehm, "Can seqlocks get along with
// programming language memory models?", MSPC 2012), without standalone
// fences, which ThreadSanitizer does not model:
//   writer: lock the word (a sequentially consistent RMW); store_shared(...);
//           store the new version word (release);
//   reader: v1 = load (acquire); load_shared(...); v2 = load; the copy is the
//           version v1 if v1 and v2 are unlocked and the same version.
// A reader that loaded any byte the writer stored sees the lock or the new
// version in v2: with atomic words, its acquire load synchronizes with that
// release store; on x86-64, loads are not reordered with later loads, and the
// locked RMW orders the lock bit before the copy's stores.
//
// Both ends of a copy must be 8-byte aligned; rows' data is (storage/row.h).
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace abyss::platform {

#if defined(ABYSS_SIM)
// A simulated core runs until it reaches a platform call, so a copy is never
// interleaved with another core's install, and the machine orders everything.
inline void load_shared(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }
inline void store_shared(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }
inline uint64_t load_shared_word(const uint64_t& w) { return w; }
inline void store_shared_word(uint64_t& w, uint64_t v) { w = v; }
inline uint32_t load_shared_u32(const uint32_t& w) { return w; }
inline void store_shared_u32(uint32_t& w, uint32_t v) { w = v; }
inline unsigned char load_shared_byte(const char* p) { return static_cast<unsigned char>(*p); }
inline uint64_t load_shared_u64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline bool same_shared(const void* shared, const void* local, std::size_t bytes) {
  return std::memcmp(shared, local, bytes) == 0;
}
#else
namespace detail {
// Row bytes are written as characters and columns elsewhere; read as words here.
using Word [[gnu::may_alias]] = uint64_t;
using Byte = unsigned char;

inline void load_words(void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<Word*>(dst);
  const auto* s = static_cast<const Word*>(src);
  const std::size_t words = bytes / 8;
  for (std::size_t i = 0; i < words; i++) d[i] = __atomic_load_n(&s[i], __ATOMIC_ACQUIRE);
  auto* db = reinterpret_cast<Byte*>(d + words);
  const auto* sb = reinterpret_cast<const Byte*>(s + words);
  for (std::size_t i = 0; i < bytes % 8; i++) db[i] = __atomic_load_n(&sb[i], __ATOMIC_ACQUIRE);
}

inline void store_words(void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<Word*>(dst);
  const auto* s = static_cast<const Word*>(src);
  const std::size_t words = bytes / 8;
  for (std::size_t i = 0; i < words; i++) __atomic_store_n(&d[i], s[i], __ATOMIC_RELEASE);
  auto* db = reinterpret_cast<Byte*>(d + words);
  const auto* sb = reinterpret_cast<const Byte*>(s + words);
  for (std::size_t i = 0; i < bytes % 8; i++) __atomic_store_n(&db[i], sb[i], __ATOMIC_RELEASE);
}

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
inline constexpr bool kSanitized = __has_feature(thread_sanitizer) || __has_feature(address_sanitizer);
#else
inline constexpr bool kSanitized = false;
#endif

#if defined(__x86_64__)
inline void string_copy(void* dst, const void* src, std::size_t bytes) {
  asm volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(bytes) : : "memory");
}
inline constexpr bool kStringCopy = !kSanitized;
#else
inline void string_copy(void* dst, const void* src, std::size_t bytes) { store_words(dst, src, bytes); }
inline constexpr bool kStringCopy = false;
#endif
}  // namespace detail

inline void load_shared(void* dst, const void* src, std::size_t bytes) {
  if constexpr (detail::kStringCopy) {
    detail::string_copy(dst, src, bytes);
  } else {
    detail::load_words(dst, src, bytes);
  }
}

inline void store_shared(void* dst, const void* src, std::size_t bytes) {
  if constexpr (detail::kStringCopy) {
    detail::string_copy(dst, src, bytes);
  } else {
    detail::store_words(dst, src, bytes);
  }
}

// One field of a row's header, read or written the same way.
inline uint64_t load_shared_word(const uint64_t& w) { return __atomic_load_n(&w, __ATOMIC_ACQUIRE); }
inline void store_shared_word(uint64_t& w, uint64_t v) { __atomic_store_n(&w, v, __ATOMIC_RELEASE); }
inline uint32_t load_shared_u32(const uint32_t& w) { return __atomic_load_n(&w, __ATOMIC_ACQUIRE); }
inline void store_shared_u32(uint32_t& w, uint32_t v) { __atomic_store_n(&w, v, __ATOMIC_RELEASE); }
// One byte of a row read in place under a seqlock (Txn::read_with): an
// acquire load, so the reader's re-read of the version word stays after it.
inline unsigned char load_shared_byte(const char* p) {
  return __atomic_load_n(reinterpret_cast<const unsigned char*>(p), __ATOMIC_ACQUIRE);
}
// Eight bytes at an 8-byte aligned address, the same way.
inline uint64_t load_shared_u64(const char* p) {
  return __atomic_load_n(reinterpret_cast<const detail::Word*>(p), __ATOMIC_ACQUIRE);
}
// Whether `bytes` of a row hold what `local` does, at any alignment: a
// committer finding the columns it changes (Txn::log_update) while its
// scheme keeps every other writer off the row, so the row holds still and
// a memcmp reads it. Under `none` nothing keeps the others off, and the
// answer may be stale; the sanitized builds read byte by byte, atomically,
// like the copies above.
inline bool same_shared(const void* shared, const void* local, std::size_t bytes) {
  if constexpr (!detail::kSanitized) {
    return std::memcmp(shared, local, bytes) == 0;
  } else {
    const auto* s = static_cast<const detail::Byte*>(shared);
    const auto* l = static_cast<const detail::Byte*>(local);
    for (std::size_t i = 0; i < bytes; i++) {
      if (__atomic_load_n(&s[i], __ATOMIC_RELAXED) != l[i]) return false;
    }
    return true;
  }
}
#endif

}  // namespace abyss::platform
