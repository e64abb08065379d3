//===- KernelLibrary.cpp - An artifact's kernels, placed ------------------===//

#include "runtime/cpu/KernelLibrary.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace kiln::cpu {

namespace {

/// Writes all `size` bytes; returns 0 or the errno of the failure.
int writeAll(int fd, const uint8_t *data, size_t size) {
  while (size > 0) {
    ssize_t written = ::write(fd, data, size);
    if (written < 0 && errno == EINTR)
      continue;
    if (written < 0)
      return errno;
    data += written;
    size -= static_cast<size_t>(written);
  }
  return 0;
}

/// dlerror()'s message without the meaningless "/proc/self/fd/N: " or
/// temporary path it starts with.
std::string dlopenProblem(const std::string &path) {
  const char *message = ::dlerror();
  std::string text = message ? message : "unknown dlopen failure";
  if (text.compare(0, path.size() + 2, path + ": ") == 0)
    text.erase(0, path.size() + 2);
  return text;
}

/// A shared object opened by dlopen and the descriptor of its file.
struct OpenedObject {
  void *handle = nullptr;
  int fd = -1;
};

/// Places the object in an anonymous memory file. Returns false, with
/// `problem` set when dlopen itself failed, if this placement did not work.
bool openFromMemoryFile(const uint8_t *object, size_t size,
                        OpenedObject &opened, std::string &problem) {
  int fd = ::memfd_create("kiln-kernels", MFD_CLOEXEC);
  if (fd < 0)
    return false;
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (writeAll(fd, object, size) != 0) {
    ::close(fd);
    return false;
  }
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    problem = dlopenProblem(path);
    ::close(fd);
    return false;
  }
  opened = {handle, fd};
  return true;
}

/// Places the object in a private temporary file, removed after dlopen.
bool openFromTemporaryFile(const uint8_t *object, size_t size,
                           OpenedObject &opened, std::string &problem) {
  // The process-wide counter keeps names unique for the life of the process:
  // dlopen returns an already loaded library for a name it has seen.
  static std::atomic<unsigned> counter{0};
  const char *tmpdir = std::getenv("TMPDIR");
  std::string path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") +
                     "/kiln-kernels-" + std::to_string(::getpid()) + "-" +
                     std::to_string(counter.fetch_add(1)) + "-XXXXXX";
  int fd = ::mkostemp(path.data(), O_CLOEXEC); // Mode 0600: private.
  if (fd < 0) {
    problem = "cannot create a temporary file in " +
              path.substr(0, path.rfind('/')) + ": " + std::strerror(errno);
    return false;
  }
  if (int failure = writeAll(fd, object, size)) {
    problem = "cannot write a temporary file in " +
              path.substr(0, path.rfind('/')) + ": " + std::strerror(failure);
    ::unlink(path.c_str());
    ::close(fd);
    return false;
  }
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    problem = dlopenProblem(path);
  ::unlink(path.c_str());
  if (!handle) {
    ::close(fd);
    return false;
  }
  opened = {handle, fd};
  return true;
}

} // namespace

std::unique_ptr<KernelLibrary>
KernelLibrary::load(const uint8_t *object, size_t size,
                    const std::vector<std::string> &symbols,
                    KernelPlacement placement, std::string &error) {
  std::unique_ptr<KernelLibrary> library(new KernelLibrary());
  OpenedObject opened;
  std::string problem;
  if (placement == KernelPlacement::MemoryFile &&
      openFromMemoryFile(object, size, opened, problem)) {
    library->placement_ = KernelPlacement::MemoryFile;
  } else if (openFromTemporaryFile(object, size, opened, problem)) {
    library->placement_ = KernelPlacement::TemporaryFile;
  } else {
    error = "kernels.object: cannot load the shared object: " + problem;
    return nullptr;
  }
  library->handle_ = opened.handle;
  library->fd_ = opened.fd;
  library->functions_.reserve(symbols.size());
  for (size_t i = 0; i < symbols.size(); ++i) {
    void *address = ::dlsym(library->handle_, symbols[i].c_str());
    if (!address) {
      error = "kernels.symbols[" + std::to_string(i) + "]: '" + symbols[i] +
              "' is not defined in kernels.object";
      return nullptr;
    }
    library->functions_.push_back(reinterpret_cast<KernelFunction>(address));
  }
  return library;
}

KernelFunction KernelLibrary::lookup(const std::string &symbol) const {
  return reinterpret_cast<KernelFunction>(::dlsym(handle_, symbol.c_str()));
}

KernelLibrary::~KernelLibrary() {
  if (handle_)
    ::dlclose(handle_);
  if (fd_ >= 0)
    ::close(fd_);
}

} // namespace kiln::cpu
