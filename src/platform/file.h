#pragma once
// Files, through the platform layer like every other hardware and OS
// primitive, so the simulated build can replace them. Every function that can
// fail returns the reason in the OS's words ("No such file or directory"),
// empty on success; callers add the path and what they were doing.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace abyss::platform {

// Whether a run will be able to write the file `path` at its end: the
// parent directory exists and accepts a new file, or the file exists, is not
// a directory and can be opened for writing. Returns the reason it cannot, in
// the OS's words ("No such file or directory"), or empty. Leaves no file
// behind that was not there before.
std::string check_output_file(const std::string& path);

// The same for a directory that a run fills with files (--dump): it exists
// and is writable, or it can be created (its nearest existing ancestor is a
// writable directory).
// A path naming an existing non-directory is refused.
std::string check_output_dir(const std::string& path);

enum class FileKind { kMissing, kRegular, kDirectory, kOther };

struct FileStatus {
  FileKind kind = FileKind::kMissing;
  std::string reason;  // kMissing only: why it could not be looked up ("No such file or directory")
};

// What `path` names, following symbolic links.
FileStatus file_status(const std::string& path);

// Creates the directory `path` and every missing parent (mkdir -p), each
// level it creates made durable (its parent synced). An existing directory
// is fine; an existing non-directory is "Not a directory".
std::string make_dirs(const std::string& path);

// Removes the file `path`.
std::string remove_file(const std::string& path);

// The names in directory `path` (not "." and ".."), in no order.
std::string list_dir(const std::string& path, std::vector<std::string>& names);

// A file written from the start through a buffer. The first failed write is
// kept: later writes are dropped, ok() turns false and close() returns it.
// Writes of at least the buffer's size go straight to the OS, so a caller
// that batches its own output costs one system call per batch and no copy.
class OutputFile {
 public:
  static constexpr std::size_t kDefaultBuffer = std::size_t{64} << 10;

  explicit OutputFile(std::size_t buffer_bytes = kDefaultBuffer) : cap_(buffer_bytes == 0 ? 1 : buffer_bytes) {}
  // Flushes and closes a file still open, dropping any error.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Creates `path`, or truncates it, for writing.
  [[nodiscard]] std::string open(const std::string& path);

  void write(std::string_view bytes) {
    if (bytes.size() <= cap_ - size_ && buf_ != nullptr) {
      std::memcpy(buf_.get() + size_, bytes.data(), bytes.size());
      size_ += bytes.size();
      return;
    }
    write_slow(bytes);
  }
  void put(char c) { write(std::string_view(&c, 1)); }

  // Copies the whole file at `path` to the end of this one. Returns why
  // `path` could not be read; a failed write is kept as for write().
  [[nodiscard]] std::string append_file(const std::string& path);

  [[nodiscard]] bool is_open() const { return fd_ >= 0; }
  [[nodiscard]] bool ok() const { return error_.empty(); }
  [[nodiscard]] const std::string& error() const { return error_; }

  // Flushes and closes the file; returns the first error of its writes or
  // of closing it. On a file already closed it only returns that again.
  [[nodiscard]] std::string close();

 private:
  void write_slow(std::string_view bytes);
  void flush();
  void write_all(const char* data, std::size_t n);

  int fd_ = -1;
  std::unique_ptr<char[]> buf_;  // allocated by open()
  std::size_t cap_;
  std::size_t size_ = 0;
  std::string error_;
};

// A file written unbuffered, for a journal: every append is write(2) of the
// caller's batch (retried while short), sync() makes what was written
// durable (fdatasync(2): the data and the size, not the times), and
// write_at() overwrites in place (a small header that must fit one sector).
// Errors come back from each call, in the OS's words ("No space left on
// device"); after one, the file takes nothing more.
class JournalFile {
 public:
  JournalFile() = default;
  ~JournalFile();
  JournalFile(const JournalFile&) = delete;
  JournalFile& operator=(const JournalFile&) = delete;

  // Creates `path`, or truncates it; with `keep`, opens it to append to
  // what it holds (every append then lands at its end, whoever else
  // appends to it).
  [[nodiscard]] std::string open(const std::string& path, bool keep = false);
  [[nodiscard]] std::string append(const char* data, std::size_t n);
  [[nodiscard]] std::string write_at(uint64_t offset, const char* data, std::size_t n);
  [[nodiscard]] std::string sync();
  [[nodiscard]] std::string close();
  [[nodiscard]] bool is_open() const { return fd_ >= 0; }
  [[nodiscard]] uint64_t size() const { return size_; }  // bytes appended

 private:
  friend class BackgroundSync;
  std::string write_all(const char* data, std::size_t n, uint64_t* offset);
  // fdatasync(2) of `fd` (through the power-loss layer for one of its
  // files): 0, or the errno it failed with.
  static int sync_fd(int fd, uint64_t node);

  int fd_ = -1;
  uint64_t size_ = 0;
  // A file of the directory a simulated power loss is armed for
  // (power_loss.h): its name there; 0 for every other file.
  uint64_t node_ = 0;
  std::string error_;
};

// Syncs a JournalFile off the caller's thread, so that a worker goes on
// running transactions while its journal's group reaches the disk: start()
// hands an fdatasync(2) of every byte appended to the file so far to a
// helper thread of this object's own and returns at once; done() says,
// without waiting, whether that sync has finished, and wait() waits for it.
// One sync at a time; the file takes appends meanwhile (they may or may not
// be covered) and stays open until the sync is done. With `on_done`, the
// helper calls it once the sync has finished (a server's worker asleep in
// its poller is woken so). The simulated build syncs within start(): a
// helper thread's time would not be simulated time.
class BackgroundSync {
 public:
  BackgroundSync();
  ~BackgroundSync();  // waits for a sync in flight and ends the helper
  BackgroundSync(const BackgroundSync&) = delete;
  BackgroundSync& operator=(const BackgroundSync&) = delete;

  // Begins syncing `file`; none may be in flight. `on_done`, if any, must
  // outlive the sync. Not a waiting point.
  void start(const JournalFile& file, const std::function<void()>* on_done = nullptr);
  [[nodiscard]] bool busy() const { return busy_; }
  // Whether the sync in flight has finished (then not busy any more), its
  // failure in the OS's words in `error`, empty if it succeeded. Not a
  // waiting point.
  [[nodiscard]] bool done(std::string& error);
  // Waits until the sync in flight, if any, has finished; its failure. A
  // waiting point.
  [[nodiscard]] std::string wait();
  // Ends the helper thread once its sync in flight, and the `on_done` call
  // after it, are over: from then on nothing `on_done` reaches is used. A
  // later start() starts a new one. A waiting point.
  void stop();

 private:
  struct Helper;
  std::unique_ptr<Helper> helper_;  // natively: started by the first start()
  bool busy_ = false;
  std::string error_;  // simulated: the sync start() did
};

// Makes the entries of directory `path` durable (a file it created, or
// renamed into it, survives a crash only once its directory is synced).
std::string sync_dir(const std::string& path);

// Replaces the file `path` with `bytes` all at once: written to a temporary
// beside it, synced, renamed over it, and the directory synced.
std::string replace_file(const std::string& path, std::string_view bytes);

// Renames the file `from` to `to`, over any file there (rename(2)): durable
// once their directory is synced. A JournalFile open on `from` writes on to
// the file under its new name.
std::string rename_file(const std::string& from, const std::string& to);

// A file read from the start in pieces of the caller's size.
class InputFile {
 public:
  InputFile() = default;
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Opens `path` for reading; a directory is refused ("Is a directory").
  [[nodiscard]] std::string open(const std::string& path);
  // Reads up to `n` bytes into `buf`; the count, 0 at the end, -1 on an
  // error (error() says which).
  int64_t read(char* buf, std::size_t n);
  // The same from byte `offset` on, leaving the next read() where it was.
  int64_t read_at(char* buf, std::size_t n, uint64_t offset);
  [[nodiscard]] uint64_t size() const { return size_; }  // the file's size when opened
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  template <class ReadSome>
  int64_t read_fully(char* buf, std::size_t n, ReadSome some);

  int fd_ = -1;
  uint64_t size_ = 0;
  std::string error_;
};

// Reads the whole file `path` into `out`; the reason it could not, or empty.
std::string read_file(const std::string& path, std::string& out);
// Reads up to `n` bytes of `path` from byte `offset` into `out`: fewer
// where the file ends before. The reason it could not, or empty.
std::string read_file_range(const std::string& path, uint64_t offset, std::size_t n, std::string& out);

// A file read line by line from the start, through a buffer.
class LineReader {
 public:
  LineReader();
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Opens `path` for reading. A directory is refused ("Is a directory").
  [[nodiscard]] std::string open(const std::string& path);

  // Reads the next line into `line`, without its '\n'. Returns false at the
  // end of the file, or on a read error: error() then says why.
  bool next(std::string& line);

  // How many lines next() has returned: the number of the last one.
  [[nodiscard]] uint64_t line_number() const { return line_number_; }
  // Whether the last line ended with '\n'; false only for a last line that
  // the file ends in the middle of.
  [[nodiscard]] bool ended_with_newline() const { return newline_; }
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  std::unique_ptr<char[]> buf_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  bool newline_ = false;
  uint64_t line_number_ = 0;
  std::string error_;
};

}  // namespace abyss::platform
