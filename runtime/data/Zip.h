//===- Zip.h - Reading zip archives (numpy .npz) ----------------*- C++ -*-===//
//
// Reads the zip archives numpy writes, np.savez (members stored) and
// np.savez_compressed (members deflated), ZIP64 ones included, with libzip.
// The archive is read from the file as members are asked for, never whole;
// libzip checks each local header against the central directory when the
// archive is opened and each member's CRC-32 when it is read.
//
// A member's name becomes the name of a feed, so an archive with a name that
// leaves its folder (an absolute path, a drive letter, a '..' component) or a
// name twice is refused. Members are read only if stored or deflated and not
// encrypted; a member's claimed size is checked against its compressed size
// (equal if stored, at most deflate's largest ratio, 1032:1, if deflated)
// before it is allocated. Every failure is one line, "PATH: error: PROBLEM",
// naming the member where there is one.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DATA_ZIP_H
#define KILN_RUNTIME_DATA_ZIP_H

#include <cstdint>
#include <string>
#include <vector>

struct zip; // libzip's zip_t.

namespace kiln::data {

/// One member, as the central directory describes it.
struct ZipMember {
  std::string name;
  uint64_t index = 0;      ///< In the central directory.
  uint16_t method = 0;     ///< 0 stored, 8 deflate.
  uint16_t encryption = 0; ///< libzip's ZIP_EM_*; 0 for none.
  uint64_t compressedSize = 0;
  uint64_t size = 0; ///< Uncompressed.
};

/// A zip archive open for reading. Not copyable; one thread at a time.
class ZipArchive {
public:
  ZipArchive() = default;
  ~ZipArchive();
  ZipArchive(const ZipArchive &) = delete;
  ZipArchive &operator=(const ZipArchive &) = delete;

  /// Opens the archive at `path` and reads its central directory.
  bool open(const std::string &path, std::string &error);

  const std::string &path() const { return path_; }
  const std::vector<ZipMember> &members() const { return members_; }

  /// The member named `name`, or null.
  const ZipMember *find(const std::string &name) const;

  /// The uncompressed bytes of `member`, CRC-checked.
  bool read(const ZipMember &member, std::vector<uint8_t> &out,
            std::string &error) const;

private:
  std::string path_;
  uint64_t fileSize_ = 0;
  zip *archive_ = nullptr;
  std::vector<ZipMember> members_;
};

} // namespace kiln::data

#endif // KILN_RUNTIME_DATA_ZIP_H
