//===- TfRecord.cpp - TFRecord framing ------------------------------------===//

#include "runtime/metrics/TfRecord.h"

#include "runtime/metrics/Crc32c.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>

namespace kiln::metrics {

namespace {

void appendLittleEndian(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(char((value >> (8 * i)) & 0xFFu));
}

uint64_t readLittleEndian(const std::string &in, size_t offset, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value |= uint64_t(uint8_t(in[offset + size_t(i)])) << (8 * i);
  return value;
}

} // namespace

void appendTfRecord(std::string &out, const void *data, size_t size) {
  size_t start = out.size();
  appendLittleEndian(out, size, 8);
  appendLittleEndian(out, maskCrc32c(crc32c(out.data() + start, 8)), 4);
  out.append(static_cast<const char *>(data), size);
  appendLittleEndian(out, maskCrc32c(crc32c(data, size)), 4);
}

bool readTfRecords(const std::string &path, std::vector<std::string> &records,
                   std::string &error) {
  records.clear();
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = path + ": error: cannot read: " + std::strerror(errno);
    return false;
  }
  std::string bytes{std::istreambuf_iterator<char>(file),
                    std::istreambuf_iterator<char>()};
  size_t offset = 0;
  while (offset < bytes.size()) {
    auto fail = [&](const std::string &problem) {
      error = path + ": error: record at byte " + std::to_string(offset) +
              ": " + problem;
      return false;
    };
    size_t left = bytes.size() - offset;
    if (left < 12)
      return fail("truncated length header (" + std::to_string(left) +
                  " bytes left)");
    uint64_t length = readLittleEndian(bytes, offset, 8);
    uint32_t lengthCrc = uint32_t(readLittleEndian(bytes, offset + 8, 4));
    if (lengthCrc != maskCrc32c(crc32c(bytes.data() + offset, 8)))
      return fail("length CRC mismatch");
    if (length > left - 12 || left - 12 - length < 4)
      return fail("length " + std::to_string(length) +
                  " is beyond the end of the file (" +
                  std::to_string(left - 12) + " bytes left)");
    const char *data = bytes.data() + offset + 12;
    uint32_t dataCrc =
        uint32_t(readLittleEndian(bytes, offset + 12 + size_t(length), 4));
    if (dataCrc != maskCrc32c(crc32c(data, size_t(length))))
      return fail("data CRC mismatch");
    records.emplace_back(data, size_t(length));
    offset += 16 + size_t(length);
  }
  return true;
}

} // namespace kiln::metrics
