//===- Npy.cpp - numpy .npy files -----------------------------------------===//

#include "runtime/data/Npy.h"

#include "runtime/data/NpyHeader.h"
#include "runtime/support/PrintableText.h"
#include "runtime/support/ReadAt.h"
#include "runtime/support/StagedFile.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::data {

namespace {

/// Bools are stored as one byte, 0 or 1.
bool checkBools(const NpyArray &array, std::string &problem) {
  if (array.dtype != NpyDType::Bool)
    return true;
  auto bad = std::find_if(array.data.begin(), array.data.end(),
                          [](uint8_t byte) { return byte > 1; });
  if (bad == array.data.end())
    return true;
  problem = "element " + std::to_string(bad - array.data.begin()) +
            " of the |b1 data is " + std::to_string(*bad) +
            "; bools are 0 or 1";
  return false;
}

bool readFile(int fd, NpyArray &array, std::string &problem) {
  auto readFailure = [&](int errorNumber) {
    problem = std::string("cannot read: ") + std::strerror(errorNumber);
    return false;
  };
  struct stat info;
  if (::fstat(fd, &info) != 0)
    return readFailure(errno);
  if (!S_ISREG(info.st_mode)) {
    problem = "not a regular file";
    return false;
  }
  uint64_t fileSize = static_cast<uint64_t>(info.st_size);
  uint8_t preamble[kNpyPreambleV2];
  size_t available = std::min<uint64_t>(fileSize, sizeof preamble);
  if (int failure = readAt(fd, preamble, available, 0))
    return readFailure(failure);
  uint64_t headerEnd = 0;
  if (!readNpyPreamble(preamble, available, fileSize, headerEnd, problem))
    return false;
  // headerEnd <= fileSize, so this allocation is bounded by the file.
  std::vector<uint8_t> header(headerEnd);
  if (int failure = readAt(fd, header.data(), header.size(), 0))
    return readFailure(failure);
  NpyHeader parsed;
  if (!parseNpyHeader(header.data(), headerEnd, fileSize, parsed, problem))
    return false;
  array.dtype = parsed.dtype;
  array.shape = std::move(parsed.shape);
  array.data.resize(parsed.dataSize); // Equal to the rest of the file.
  if (int failure = readAt(fd, array.data.data(), array.data.size(),
                           static_cast<off_t>(parsed.dataOffset)))
    return readFailure(failure);
  return checkBools(array, problem);
}

} // namespace

bool readNpyFile(const std::string &path, NpyArray &array, std::string &error) {
  std::string problem;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  bool read = false;
  if (fd < 0) {
    problem = std::string("cannot read: ") + std::strerror(errno);
  } else {
    read = readFile(fd, array, problem);
    ::close(fd);
  }
  if (!read)
    error = printableText(path + ": error: " + problem);
  return read;
}

bool parseNpy(const uint8_t *bytes, size_t size, const std::string &path,
              NpyArray &array, std::string &error) {
  std::string problem;
  uint64_t headerEnd = 0;
  NpyHeader header;
  if (!readNpyPreamble(bytes, size, size, headerEnd, problem) ||
      !parseNpyHeader(bytes, headerEnd, size, header, problem)) {
    error = printableText(path + ": error: " + problem);
    return false;
  }
  array.dtype = header.dtype;
  array.shape = std::move(header.shape);
  array.data.assign(bytes + header.dataOffset, bytes + size);
  if (!checkBools(array, problem)) {
    error = printableText(path + ": error: " + problem);
    return false;
  }
  return true;
}

std::vector<uint8_t> encodeNpy(const NpyArray &array) {
  std::vector<uint8_t> bytes = encodeNpyHeader(array.dtype, array.shape);
  bytes.insert(bytes.end(), array.data.begin(), array.data.end());
  return bytes;
}

bool writeNpyFile(const std::string &path, const NpyArray &array,
                  std::string &error) {
  std::vector<uint8_t> header = encodeNpyHeader(array.dtype, array.shape);
  return writeFileAtomically(
      path,
      {{header.data(), header.size()}, {array.data.data(), array.data.size()}},
      error);
}

} // namespace kiln::data
