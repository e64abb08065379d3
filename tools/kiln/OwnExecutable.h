//===- OwnExecutable.h - The path kiln re-runs itself from ------*- C++ -*-===//
//
// kiln runs itself again: once at start to give libgomp its settings
// (kiln.cpp), and as each task of kiln launch. Run from "/proc/self/exe" a
// process is named "exe" (its comm, what ps, top, pgrep and pkill match),
// so the link's target is run instead: the same file, named "kiln".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_OWNEXECUTABLE_H
#define KILN_TOOLS_KILN_OWNEXECUTABLE_H

#include <climits>
#include <string>
#include <unistd.h>

namespace kiln::tool {

/// The real path of this executable, or "/proc/self/exe" where it cannot
/// be read (the file was replaced, or no /proc).
inline std::string ownExecutable() {
  char path[PATH_MAX];
  ssize_t size = ::readlink("/proc/self/exe", path, sizeof path - 1);
  std::string real(path, size > 0 ? static_cast<size_t>(size) : 0);
  // A replaced file reads as "PATH (deleted)": its inode only /proc reaches.
  if (size <= 0 || size >= static_cast<ssize_t>(sizeof path - 1) ||
      real.find(" (deleted)") != std::string::npos || ::access(real.c_str(), X_OK) != 0)
    return "/proc/self/exe";
  return real;
}

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_OWNEXECUTABLE_H
