//===- RuntimeTestSupport.h - Files for the runtime's tests -----*- C++ -*-===//

#ifndef KILN_TEST_UNIT_RUNTIMETESTSUPPORT_H
#define KILN_TEST_UNIT_RUNTIMETESTSUPPORT_H

#include <cstdint>
#include <cstdlib>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace kiln::test {

/// A fresh directory under $TMPDIR (else /tmp), removed with its files.
class TemporaryDirectory {
public:
  TemporaryDirectory() {
    const char *tmpdir = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/kiln-test-XXXXXX";
    path_ = ::mkdtemp(pattern.data()) ? pattern : "";
  }
  /// Removes the whole tree, folders a test made inside included.
  ~TemporaryDirectory() {
    if (path_.empty())
      return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryDirectory(const TemporaryDirectory &) = delete;
  TemporaryDirectory &operator=(const TemporaryDirectory &) = delete;

  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

  /// The names in the directory, without "." and "..".
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    if (DIR *dir = ::opendir(path_.c_str())) {
      while (const dirent *entry = ::readdir(dir)) {
        std::string name = entry->d_name;
        if (name != "." && name != "..")
          names.push_back(name);
      }
      ::closedir(dir);
    }
    return names;
  }

private:
  std::string path_;
};

inline void writeFile(const std::string &path,
                      const std::vector<uint8_t> &bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

inline std::vector<uint8_t> readFile(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file),
          std::istreambuf_iterator<char>()};
}

inline bool fileExists(const std::string &path) {
  return ::access(path.c_str(), F_OK) == 0;
}

} // namespace kiln::test

#endif // KILN_TEST_UNIT_RUNTIMETESTSUPPORT_H
