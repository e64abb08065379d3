//===- StagedFile.cpp - Files written whole or not at all -----------------===//

#include "runtime/support/StagedFile.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace kiln {

namespace {

std::string cannotWrite(const std::string &path, int errorNumber) {
  return path + ": error: cannot write: " + std::strerror(errorNumber);
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// Writes all `size` bytes; returns 0 or the errno of the failure.
int writeAll(int fd, const void *data, size_t size) {
  const char *bytes = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t written = ::write(fd, bytes, size);
    if (written < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return 0;
}

/// Creates a new file next to `path` with a name no other writer uses; returns
/// its descriptor (or -1 with errno set) and its name in `tempPath`.
int createTemporaryFile(const std::string &path, std::string &tempPath) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    tempPath = path + ".tmp." + std::to_string(::getpid()) + "." +
               std::to_string(counter.fetch_add(1));
    int fd =
        ::open(tempPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  errno = EEXIST;
  return -1;
}

} // namespace

StagedFile::StagedFile(StagedFile &&other) noexcept
    : path_(std::move(other.path_)), tempPath_(std::move(other.tempPath_)) {
  other.tempPath_.clear();
}

StagedFile &StagedFile::operator=(StagedFile &&other) noexcept {
  if (this != &other) {
    discard();
    path_ = std::move(other.path_);
    tempPath_ = std::move(other.tempPath_);
    other.tempPath_.clear();
  }
  return *this;
}

StagedFile::~StagedFile() { discard(); }

void StagedFile::discard() {
  if (!tempPath_.empty())
    ::unlink(tempPath_.c_str());
  tempPath_.clear();
}

bool StagedFile::stage(const std::string &path,
                       const std::vector<ByteRange> &pieces,
                       std::string &error) {
  discard();
  path_ = path;
  std::string tempPath;
  int fd = createTemporaryFile(path, tempPath);
  if (fd < 0) {
    error = cannotWrite(path, errno);
    return false;
  }
  int failure = 0;
  for (const ByteRange &piece : pieces)
    if (!failure)
      failure = writeAll(fd, piece.data, piece.size);
  if (!failure && ::fsync(fd) != 0)
    failure = errno;
  if (::close(fd) != 0 && !failure)
    failure = errno;
  if (failure) {
    ::unlink(tempPath.c_str());
    error = cannotWrite(path, failure);
    return false;
  }
  tempPath_ = std::move(tempPath);
  return true;
}

bool StagedFile::commit(std::string &error) {
  if (tempPath_.empty()) {
    error = path_ + ": error: cannot write: nothing was staged";
    return false;
  }
  if (::rename(tempPath_.c_str(), path_.c_str()) != 0) {
    error = cannotWrite(path_, errno);
    discard();
    return false;
  }
  tempPath_.clear();
  // Make the rename itself durable. The file is in place either way, so a
  // directory that cannot be synced is not reported as a failed write.
  int dir =
      ::open(directoryOf(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return true;
}

bool writeFileAtomically(const std::string &path,
                         const std::vector<ByteRange> &pieces,
                         std::string &error) {
  StagedFile file;
  return file.stage(path, pieces, error) && file.commit(error);
}

} // namespace kiln
