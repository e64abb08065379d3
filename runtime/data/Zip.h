//===- Zip.h - Reading zip archives (numpy .npz) ----------------*- C++ -*-===//
//
// Reads the zip archives numpy writes: np.savez (members stored) and
// np.savez_compressed (members deflated). Sizes and offsets come from the
// central directory; a local header is read only for the length of its name
// and extra field (numpy's local headers carry ZIP64 extra fields even for
// small members, and their sizes may be 0xffffffff). ZIP64 archives (a member
// or archive past 4 GiB, or more than 65535 members), split archives and
// encrypted members are refused with a message saying so.
//
// Every size and offset is checked against the archive's length before it is
// used; a deflated member's claimed size is bounded by deflate's largest
// ratio (1032:1) before it is allocated, and its CRC-32 is checked. Every
// failure is one line, "PATH: error: PROBLEM".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DATA_ZIP_H
#define KILN_RUNTIME_DATA_ZIP_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::data {

/// One member, as the central directory describes it.
struct ZipEntry {
  std::string name;
  uint16_t method = 0; ///< 0 stored, 8 deflate.
  uint32_t crc32 = 0;
  uint64_t compressedSize = 0;
  uint64_t uncompressedSize = 0;
  uint64_t dataOffset = 0; ///< Of the member's (compressed) bytes.
};

/// A zip archive in memory.
struct ZipArchive {
  std::string path; ///< For messages.
  std::vector<uint8_t> bytes;
  std::vector<ZipEntry> entries;

  /// The member named `name`, or null.
  const ZipEntry *find(const std::string &name) const;
};

/// Reads the archive at `path` and its central directory.
bool readZipFile(const std::string &path, ZipArchive &archive,
                 std::string &error);

/// Reads the central directory of the archive `bytes`; `path` names it in
/// messages.
bool parseZip(std::vector<uint8_t> bytes, const std::string &path,
              ZipArchive &archive, std::string &error);

/// The uncompressed bytes of `entry`, CRC-checked.
bool extractZipEntry(const ZipArchive &archive, const ZipEntry &entry,
                     std::vector<uint8_t> &out, std::string &error);

} // namespace kiln::data

#endif // KILN_RUNTIME_DATA_ZIP_H
