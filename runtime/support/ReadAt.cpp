//===- ReadAt.cpp - Whole reads at an offset ------------------------------===//

#include "runtime/support/ReadAt.h"

#include <cerrno>
#include <unistd.h>

namespace kiln {

int readAt(int fd, uint8_t *out, size_t size, off_t offset) {
  while (size > 0) {
    ssize_t got = ::pread(fd, out, size, offset);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return errno;
    if (got == 0)
      return EIO;
    out += got;
    size -= static_cast<size_t>(got);
    offset += got;
  }
  return 0;
}

} // namespace kiln
