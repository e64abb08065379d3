//===- Directories.cpp - Creating and probing output directories ----------===//

#include "runtime/support/Directories.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln {

int makeDirectories(const std::string &path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string prefix = path.substr(0, slash);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      return errno;
    if (slash == std::string::npos)
      break;
  }
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return errno;
  return S_ISDIR(info.st_mode) ? 0 : ENOTDIR;
}

int probeWritableDirectory(const std::string &path) {
  if (int failure = makeDirectories(path))
    return failure;
  std::string probe = path + "/.kiln-write-probe-" + std::to_string(::getpid());
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return errno;
  ::close(fd);
  ::unlink(probe.c_str());
  return 0;
}

} // namespace kiln
