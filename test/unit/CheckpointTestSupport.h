//===- CheckpointTestSupport.h - Directories for checkpoint tests -*- C++ -*-=//

#ifndef KILN_TEST_UNIT_CHECKPOINTTESTSUPPORT_H
#define KILN_TEST_UNIT_CHECKPOINTTESTSUPPORT_H

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace kiln::test {

/// Removes `path` and everything under it.
inline void removeTree(const std::string &path) {
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0)
    return;
  if (S_ISDIR(info.st_mode)) {
    ::chmod(path.c_str(), 0700);
    if (DIR *dir = ::opendir(path.c_str())) {
      std::vector<std::string> names;
      while (const dirent *entry = ::readdir(dir)) {
        std::string name = entry->d_name;
        if (name != "." && name != "..")
          names.push_back(name);
      }
      ::closedir(dir);
      for (const std::string &name : names)
        removeTree(path + "/" + name);
    }
    ::rmdir(path.c_str());
  } else {
    ::unlink(path.c_str());
  }
}

/// A fresh directory under $TMPDIR (else /tmp), removed with all it holds.
class ScratchDirectory {
public:
  ScratchDirectory() {
    const char *tmpdir = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/kiln-ckpt-XXXXXX";
    path_ = ::mkdtemp(pattern.data()) ? pattern : "";
  }
  ~ScratchDirectory() { removeTree(path_); }
  ScratchDirectory(const ScratchDirectory &) = delete;
  ScratchDirectory &operator=(const ScratchDirectory &) = delete;

  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

/// The names in `path`, sorted, without "." and "..".
inline std::vector<std::string> listDirectory(const std::string &path) {
  std::vector<std::string> names;
  if (DIR *dir = ::opendir(path.c_str())) {
    while (const dirent *entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..")
        names.push_back(name);
    }
    ::closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline std::string readText(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file),
          std::istreambuf_iterator<char>()};
}

inline void writeText(const std::string &path, const std::string &text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
}

} // namespace kiln::test

#endif // KILN_TEST_UNIT_CHECKPOINTTESTSUPPORT_H
