//===- StagedFile.h - Files written whole or not at all ---------*- C++ -*-===//
//
// Every file write that matters is write-temp + fsync + rename (STYLE.md):
// a StagedFile holds the complete contents in a temporary file next to its
// destination, and commit() renames it into place. Several files can be
// staged first and committed together, so that a failure while writing any
// of them leaves every destination untouched.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SUPPORT_STAGEDFILE_H
#define KILN_RUNTIME_SUPPORT_STAGEDFILE_H

#include <cstddef>
#include <string>
#include <vector>

namespace kiln {

/// Bytes to write, not owned.
struct ByteRange {
  const void *data;
  size_t size;
};

class StagedFile {
public:
  StagedFile() = default;
  StagedFile(StagedFile &&other) noexcept;
  StagedFile &operator=(StagedFile &&other) noexcept;
  StagedFile(const StagedFile &) = delete;
  StagedFile &operator=(const StagedFile &) = delete;
  /// Removes the temporary file unless committed.
  ~StagedFile();

  /// Writes the concatenation of `pieces` to a new temporary file in the
  /// directory of `path` (created with mode 0666 less the umask) and fsyncs
  /// it. On failure sets `error` to "PATH: error: cannot write: REASON",
  /// leaves no temporary file behind and returns false.
  bool stage(const std::string &path, const std::vector<ByteRange> &pieces,
             std::string &error);

  /// Renames the staged file over its destination. On failure sets `error`
  /// as stage() does, removes the temporary file and returns false.
  bool commit(std::string &error);

  /// The destination path.
  const std::string &path() const { return path_; }

private:
  void discard();

  std::string path_;
  std::string tempPath_; ///< Empty when nothing is staged.
};

/// stage() and commit() in one step.
bool writeFileAtomically(const std::string &path,
                         const std::vector<ByteRange> &pieces,
                         std::string &error);

} // namespace kiln

#endif // KILN_RUNTIME_SUPPORT_STAGEDFILE_H
