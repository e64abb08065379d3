//===- Zip.cpp - Reading zip archives (numpy .npz) ------------------------===//
//
// The records read (APPNOTE.TXT 6.3): the end of central directory record
// (4.3.16), the central directory headers (4.3.12) and the fixed part of the
// local headers (4.3.7). All integers are little-endian.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Zip.h"

#include "runtime/data/DatasetRows.h"
#include "runtime/support/ReadAt.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

namespace kiln::data {

namespace {

constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint32_t kCentralSignature = 0x02014b50;
constexpr uint32_t kLocalSignature = 0x04034b50;
constexpr uint64_t kEndSize = 22;
constexpr uint64_t kZip64LocatorSize = 20;
constexpr uint64_t kCentralSize = 46;
constexpr uint64_t kLocalSize = 30;
/// Deflate's largest expansion: a 258-byte match costs at least 2 bits.
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr const char *kZip64 =
    "ZIP64 archives are not supported (a member or the archive past 4 GiB, "
    "or more than 65535 members); split the data into smaller .npz files";

uint16_t u16(const uint8_t *p) { return uint16_t(p[0] | p[1] << 8); }
uint32_t u32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}

/// The offset of the end of central directory record: the last signature
/// whose record and comment fit in the file.
bool findEnd(const std::vector<uint8_t> &bytes, uint64_t &offset) {
  if (bytes.size() < kEndSize)
    return false;
  uint64_t last = bytes.size() - kEndSize;
  uint64_t first = last > 0xffff ? last - 0xffff : 0;
  for (uint64_t at = last + 1; at-- > first;) {
    const uint8_t *p = bytes.data() + at;
    if (u32(p) == kEndSignature &&
        at + kEndSize + u16(p + 20) <= bytes.size()) {
      offset = at;
      return true;
    }
  }
  return false;
}

bool parseCentral(const std::vector<uint8_t> &bytes, uint64_t &at, uint64_t end,
                  ZipEntry &entry, std::string &problem) {
  std::string which = "central directory entry at offset " + std::to_string(at);
  if (at + kCentralSize > end || u32(bytes.data() + at) != kCentralSignature) {
    problem = "corrupt zip archive: no " + which;
    return false;
  }
  const uint8_t *p = bytes.data() + at;
  uint16_t flags = u16(p + 8);
  entry.method = u16(p + 10);
  entry.crc32 = u32(p + 16);
  entry.compressedSize = u32(p + 20);
  entry.uncompressedSize = u32(p + 24);
  uint64_t nameSize = u16(p + 28), extraSize = u16(p + 30),
           commentSize = u16(p + 32);
  uint64_t localOffset = u32(p + 42);
  if (at + kCentralSize + nameSize + extraSize + commentSize > end) {
    problem = "corrupt zip archive: " + which + " runs past the directory";
    return false;
  }
  entry.name.assign(reinterpret_cast<const char *>(p + kCentralSize), nameSize);
  at += kCentralSize + nameSize + extraSize + commentSize;
  std::string member = "zip member '" + entry.name + "': ";
  if (entry.compressedSize == 0xffffffff ||
      entry.uncompressedSize == 0xffffffff || localOffset == 0xffffffff) {
    problem = member + kZip64;
    return false;
  }
  if (flags & 1) {
    problem = member + "encrypted members are not supported";
    return false;
  }
  if (entry.method != 0 && entry.method != 8) {
    problem = member + "compression method " + std::to_string(entry.method) +
              " is not supported (only stored and deflate: np.savez, "
              "np.savez_compressed)";
    return false;
  }
  if (localOffset + kLocalSize > bytes.size() ||
      u32(bytes.data() + localOffset) != kLocalSignature) {
    problem = member + "corrupt zip archive: no local header at offset " +
              std::to_string(localOffset);
    return false;
  }
  const uint8_t *local = bytes.data() + localOffset;
  entry.dataOffset =
      localOffset + kLocalSize + u16(local + 26) + u16(local + 28);
  if (entry.dataOffset + entry.compressedSize > bytes.size()) {
    problem = member +
              "truncated zip archive: " + std::to_string(entry.compressedSize) +
              " bytes at offset " + std::to_string(entry.dataOffset) +
              " run past the end (" + std::to_string(bytes.size()) + " bytes)";
    return false;
  }
  if (entry.method == 0 && entry.compressedSize != entry.uncompressedSize) {
    problem = member + "corrupt zip archive: a stored member of " +
              std::to_string(entry.compressedSize) + " bytes claims " +
              std::to_string(entry.uncompressedSize) + " uncompressed";
    return false;
  }
  if (entry.method == 8 &&
      entry.uncompressedSize > entry.compressedSize * kMaxDeflateRatio + 64) {
    problem = member +
              "corrupt zip archive: " + std::to_string(entry.compressedSize) +
              " deflated bytes cannot hold the " +
              std::to_string(entry.uncompressedSize) + " bytes claimed";
    return false;
  }
  return true;
}

bool inflateMember(const uint8_t *in, uint64_t inSize, uint8_t *out,
                   uint64_t outSize, std::string &problem) {
  z_stream stream;
  std::memset(&stream, 0, sizeof stream);
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) {
    problem = "cannot start zlib's inflate";
    return false;
  }
  // Sizes fit in 32 bits: larger members are ZIP64, refused earlier.
  stream.next_in = const_cast<uint8_t *>(in);
  stream.avail_in = static_cast<uInt>(inSize);
  stream.next_out = out;
  stream.avail_out = static_cast<uInt>(outSize);
  int status = inflate(&stream, Z_FINISH);
  uint64_t produced = stream.total_out;
  inflateEnd(&stream);
  if (status == Z_STREAM_END && produced == outSize)
    return true;
  if (status == Z_DATA_ERROR)
    problem = std::string("corrupt deflate data") +
              (stream.msg ? std::string(" (") + stream.msg + ")" : "");
  else if (status == Z_STREAM_END)
    problem = "deflate data holds " + std::to_string(produced) +
              " bytes, the directory says " + std::to_string(outSize);
  else if (stream.avail_out == 0)
    problem = "deflate data holds more than the " + std::to_string(outSize) +
              " bytes the directory says";
  else
    problem = "truncated deflate data (" + std::to_string(produced) + " of " +
              std::to_string(outSize) + " bytes)";
  return false;
}

} // namespace

const ZipEntry *ZipArchive::find(const std::string &name) const {
  for (const ZipEntry &entry : entries)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

bool readZipFile(const std::string &path, ZipArchive &archive,
                 std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error =
        dataError(path, std::string("cannot read: ") + std::strerror(errno));
    return false;
  }
  std::string problem;
  std::vector<uint8_t> bytes;
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    problem = std::string("cannot read: ") + std::strerror(errno);
  } else if (!S_ISREG(info.st_mode)) {
    problem = "not a regular file";
  } else {
    bytes.resize(static_cast<size_t>(info.st_size));
    if (int failure = readAt(fd, bytes.data(), bytes.size(), 0))
      problem = std::string("cannot read: ") + std::strerror(failure);
  }
  ::close(fd);
  if (!problem.empty()) {
    error = dataError(path, problem);
    return false;
  }
  return parseZip(std::move(bytes), path, archive, error);
}

bool parseZip(std::vector<uint8_t> bytes, const std::string &path,
              ZipArchive &archive, std::string &error) {
  auto fail = [&](const std::string &problem) {
    error = dataError(path, problem);
    return false;
  };
  uint64_t end = 0;
  if (!findEnd(bytes, end))
    return fail("not a zip archive (no end of central directory record; "
                "a .npz is written by np.savez or np.savez_compressed)");
  const uint8_t *p = bytes.data() + end;
  if (end >= kZip64LocatorSize &&
      u32(p - kZip64LocatorSize) == kZip64LocatorSignature)
    return fail(kZip64);
  if (u16(p + 4) != 0 || u16(p + 6) != 0 || u16(p + 8) != u16(p + 10))
    return fail("split (multi-disk) zip archives are not supported");
  uint64_t count = u16(p + 10), directorySize = u32(p + 12),
           directoryOffset = u32(p + 16);
  if (count == 0xffff || directorySize == 0xffffffff ||
      directoryOffset == 0xffffffff)
    return fail(kZip64);
  if (directoryOffset + directorySize > end)
    return fail("truncated zip archive: the central directory (" +
                std::to_string(directorySize) + " bytes at offset " +
                std::to_string(directoryOffset) +
                ") runs past its end record at offset " + std::to_string(end));
  archive.path = path;
  archive.entries.clear();
  uint64_t at = directoryOffset, directoryEnd = directoryOffset + directorySize;
  std::string problem;
  for (uint64_t i = 0; i < count; ++i) {
    ZipEntry entry;
    if (!parseCentral(bytes, at, directoryEnd, entry, problem))
      return fail(problem);
    archive.entries.push_back(std::move(entry));
  }
  archive.bytes = std::move(bytes);
  return true;
}

bool extractZipEntry(const ZipArchive &archive, const ZipEntry &entry,
                     std::vector<uint8_t> &out, std::string &error) {
  // parseZip checked the sizes against the archive and deflate's ratio.
  const uint8_t *in = archive.bytes.data() + entry.dataOffset;
  std::string problem;
  if (entry.method == 0) {
    out.assign(in, in + entry.compressedSize);
  } else {
    out.resize(entry.uncompressedSize);
    if (!inflateMember(in, entry.compressedSize, out.data(), out.size(),
                       problem)) {
      out.clear();
      error = dataError(archive.path,
                        "zip member '" + entry.name + "': " + problem);
      return false;
    }
  }
  uLong crc = crc32(0L, Z_NULL, 0);
  for (uint64_t done = 0; done < out.size();) {
    uInt chunk =
        static_cast<uInt>(std::min<uint64_t>(out.size() - done, 1u << 30));
    crc = crc32(crc, out.data() + done, chunk);
    done += chunk;
  }
  if (crc != entry.crc32) {
    char text[64];
    std::snprintf(text, sizeof text,
                  "CRC-32 0x%08lx, the directory says 0x%08x",
                  static_cast<unsigned long>(crc), entry.crc32);
    out.clear();
    error = dataError(archive.path,
                      "zip member '" + entry.name + "': corrupt data: " + text);
    return false;
  }
  return true;
}

} // namespace kiln::data
