//===- CheckpointFiles.cpp - Files and directories of checkpoints ---------===//

#include "runtime/checkpoint/CheckpointFiles.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::checkpoint {

std::string checkpointName(int64_t step) {
  return "ckpt-" + std::to_string(step);
}

bool parseCheckpointName(const std::string &name, int64_t &step) {
  const std::string prefix = "ckpt-";
  if (name.size() <= prefix.size() || name.compare(0, 5, prefix) != 0 ||
      name.size() > prefix.size() + 18)
    return false;
  step = 0;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9')
      return false;
    step = step * 10 + (name[i] - '0');
  }
  // Only the name checkpointName() gives: no leading zeros.
  return name == checkpointName(step);
}

std::string shardName(size_t index, size_t count) {
  char name[64];
  std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", index,
                count);
  return name;
}

int listStepDirectories(const std::string &directory,
                        std::vector<StepDirectory> &out) {
  out.clear();
  DIR *dir = ::opendir(directory.c_str());
  if (!dir)
    return errno;
  while (const dirent *entry = ::readdir(dir)) {
    int64_t step;
    std::string name = entry->d_name;
    struct stat info;
    std::string path = directory + "/" + name;
    if (!parseCheckpointName(name, step) || ::stat(path.c_str(), &info) != 0 ||
        !S_ISDIR(info.st_mode))
      continue;
    out.push_back({step, name, fileExists(path + "/" + kManifestName)});
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end(),
            [](const StepDirectory &a, const StepDirectory &b) {
              return a.step < b.step;
            });
  return 0;
}

int syncDirectory(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return errno;
  int failure = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return failure;
}

int removeCheckpointDirectory(const std::string &path) {
  std::string manifest = path + "/" + kManifestName;
  if (::unlink(manifest.c_str()) != 0 && errno != ENOENT)
    return errno;
  DIR *dir = ::opendir(path.c_str());
  if (!dir)
    return errno == ENOENT ? 0 : errno;
  std::vector<std::string> names;
  while (const dirent *entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..")
      names.push_back(name);
  }
  ::closedir(dir);
  for (const std::string &name : names)
    if (::unlink((path + "/" + name).c_str()) != 0 && errno != ENOENT)
      return errno;
  return ::rmdir(path.c_str()) == 0 || errno == ENOENT ? 0 : errno;
}

bool fileExists(const std::string &path) {
  return ::access(path.c_str(), F_OK) == 0;
}

int readWholeFile(const std::string &path, std::string &bytes) {
  bytes.clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno;
  char buffer[65536];
  int failure = 0;
  while (true) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      failure = errno;
    if (got <= 0)
      break;
    bytes.append(buffer, size_t(got));
  }
  ::close(fd);
  return failure;
}

std::string hex64(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(value));
  return text;
}

bool byteSize(const std::vector<int64_t> &shape, size_t itemSize,
              uint64_t &bytes) {
  const uint64_t limit = uint64_t(1) << 63;
  bytes = itemSize;
  for (int64_t dim : shape) {
    if (dim < 0)
      return false;
    if (dim != 0 && bytes > limit / uint64_t(dim))
      return false;
    bytes *= uint64_t(dim);
  }
  return bytes <= limit;
}

} // namespace kiln::checkpoint
