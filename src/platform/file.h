#pragma once
// Files, through the platform layer like every other hardware and OS
// primitive, so the simulated build can replace them.
#include <string>

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

}  // namespace abyss::platform
