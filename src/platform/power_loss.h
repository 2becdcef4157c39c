#pragma once
// A simulated power loss for the files of one directory (docs/durability.md,
// "Power loss"). kill -9 leaves the OS's page cache whole, so it cannot tell
// a synced write from one that was only written; a power loss keeps only
// what was synced. Armed for a directory, the file layer (file.cc) keeps,
// beside every change it makes there, what undoes it:
//
// - per file, every write since the file's last sync (JournalFile::sync):
//   the size before an append, the bytes a write in place covered, the old
//   contents of a file a truncating open emptied;
// - per directory, every entry change since its last sync_dir: a file
//   created, renamed over another (kept aside, to be put back) or removed
//   (kept aside instead of deleted).
//
// At the crash each file keeps a random prefix of its pending writes, the
// last one kept possibly cut short (a torn write), and the rest are undone
// in reverse; the directory keeps a random prefix of its pending entry
// changes, and the rest are undone in reverse. Files outside the directory
// (the ack log, which is the client's memory) are left alone.
//
// Every hooked operation on the armed directory takes one lock, so no other
// thread changes it while a crash is simulated: this is a test mode, and its
// operations are serialised. Unarmed, a hook is one predictable branch.
#include <cstdint>
#include <string>

#include <sys/types.h>

namespace abyss::platform::power_loss {

// The exit status of a process the layer ended with a simulated power loss;
// no other exit of abyss uses it.
inline constexpr int kExitCode = 86;

// Arms the layer for the directory `dir`, spelt as the paths of its files
// are (`dir + "/" + name`; a trailing '/' is ignored). With `crash_at` >= 1
// the process crashes at that hooked event (1: the first), before doing it:
// a write, sync, create, rename or remove of a file in `dir`, or a sync or
// make_dirs of `dir` itself. 0: only simulate_crash() crashes. `seed` draws
// what the crash keeps. Call before any file of `dir` is opened and before
// the threads that use them start; answers why it cannot, empty if armed.
std::string arm(const std::string& dir, uint64_t crash_at, uint64_t seed);

// What a simulated crash kept and undid.
struct CrashSummary {
  uint64_t event = 0;           // the hooked events before it
  uint64_t writes_kept = 0;     // pending writes kept whole
  uint64_t writes_torn = 0;     // kept in part
  uint64_t writes_undone = 0;   // undone
  uint64_t entries_kept = 0;    // pending entry changes kept
  uint64_t entries_undone = 0;  // undone
  std::string error;            // an undo the OS refused, empty if none
};

// Undoes what a power loss now would, as drawn from the seed, removes what
// was kept aside, and disarms. For tests; an armed crash calls it, then ends
// the process at once with kExitCode.
CrashSummary simulate_crash();

// Forgets what is pending (it stays as it is: durable, as at a clean
// shutdown), removes what was kept aside, and disarms; answers the hooked
// events counted. Nothing if not armed.
uint64_t disarm();

// Whether the layer is armed: what every hook tests first.
bool armed();

// ---- the file layer's side (file.cc) ----------------------------------------
// Each performs one operation as its system call would (the result, errno
// set on failure), keeping what undoes it, under the layer's lock; each is
// an event that may crash first. Call them only while armed.

// Whether `path` is a file of the armed directory.
bool covers(const std::string& path);
// open(2) of a file in the directory with `flags`; `node` names the file
// for the calls below.
int open(const std::string& path, int flags, uint64_t& node);
// write(2) at the end, or pwrite(2) at `*offset`.
ssize_t write(uint64_t node, int fd, const char* data, std::size_t n, const uint64_t* offset);
int sync(uint64_t node, int fd);  // fdatasync(2)
int rename(const std::string& from, const std::string& to);
int remove(const std::string& path);  // unlink(2)
// fsync(2) of the directory `path`, or just that when it is not the armed one.
int sync_dir(const std::string& path);
// make_dirs of the armed directory: an event, nothing kept (its parent is
// not the armed directory).
void make_dirs(const std::string& path);

}  // namespace abyss::platform::power_loss
