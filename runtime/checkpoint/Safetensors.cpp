//===- Safetensors.cpp - Tensor files in the safetensors layout -----------===//

#include "runtime/checkpoint/Safetensors.h"

#include "runtime/checkpoint/CheckpointFiles.h"
#include "runtime/checkpoint/Json.h"
#include "runtime/support/ReadAt.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::checkpoint {

using nlohmann::ordered_json;

namespace {

constexpr const char *kMetadataKey = "__metadata__";

/// Reads a header's entry for the tensor `name` into `tensor`, checking its
/// offsets against the data (`dataSize` bytes from byte `dataStart`); returns
/// the problem, or "".
std::string readEntry(const std::string &name, const ordered_json &entry,
                      uint64_t dataStart, uint64_t dataSize,
                      ShardTensor &tensor) {
  if (!entry.is_object())
    return std::string("entry is ") + jsonKindName(entry) +
           ", expected an object";
  tensor.name = name;
  for (const char *field : {"dtype", "shape", "data_offsets"})
    if (!entry.contains(field))
      return std::string("missing field '") + field + "'";
  const ordered_json &dtype = entry.at("dtype");
  if (!dtype.is_string())
    return std::string("dtype is ") + jsonKindName(dtype) +
           ", expected a string";
  const std::string &dtypeText = dtype.get_ref<const std::string &>();
  if (!dtypeFromName(dtypeText, tensor.dtype))
    return "unknown dtype '" + dtypeText +
           "' (expected F32, F16, BF16, I32, I64 or BOOL)";
  std::string problem =
      readNonNegativeIntegers(entry.at("shape"), "shape", tensor.shape);
  if (!problem.empty())
    return problem;
  std::vector<int64_t> range;
  problem =
      readNonNegativeIntegers(entry.at("data_offsets"), "data_offsets", range);
  if (!problem.empty())
    return problem;
  if (range.size() != 2 || range[0] > range[1])
    return "data_offsets is not [begin, end] with begin <= end";
  std::string rangeText = "data_offsets [" + std::to_string(range[0]) + ", " +
                          std::to_string(range[1]) + "]";
  if (uint64_t(range[1]) > dataSize)
    return rangeText + " are beyond the data (" + std::to_string(dataSize) +
           " bytes from byte " + std::to_string(dataStart) + ")";
  uint64_t needed;
  if (!byteSize(tensor.shape, dtypeSize(tensor.dtype), needed))
    return "shape " + tensorTypeString(tensor.dtype, tensor.shape) +
           " is too large";
  tensor.offset = dataStart + uint64_t(range[0]);
  tensor.bytes = uint64_t(range[1] - range[0]);
  if (needed != tensor.bytes)
    return tensorTypeString(tensor.dtype, tensor.shape) + " needs " +
           std::to_string(needed) + " bytes, " + rangeText + " hold " +
           std::to_string(tensor.bytes);
  return "";
}

} // namespace

std::string encodeSafetensorsHeader(
    const std::vector<const TensorRef *> &tensors,
    const std::vector<std::pair<std::string, std::string>> &metadata) {
  ordered_json header = ordered_json::object();
  ordered_json &strings = header[kMetadataKey] = ordered_json::object();
  for (const auto &[key, value] : metadata)
    strings[key] = value;
  // Names are unique (the caller checks), so append without the ordered
  // map's linear search.
  auto &members = header.get_ref<ordered_json::object_t &>();
  int64_t offset = 0;
  for (const TensorRef *tensor : tensors) {
    int64_t end = offset + int64_t(tensor->bytes);
    members.emplace_back(
        tensor->name,
        ordered_json{{"dtype", dtypeName(tensor->dtype)},
                     {"shape", tensor->shape},
                     {"data_offsets", ordered_json::array({offset, end})}});
    offset = end;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string encoded;
  for (int i = 0; i < 8; ++i)
    encoded.push_back(char((uint64_t(json.size()) >> (8 * i)) & 0xFF));
  return encoded + json;
}

SafetensorsReader::~SafetensorsReader() {
  if (fd_ >= 0)
    ::close(fd_);
}

bool SafetensorsReader::fail(const std::string &problem,
                             std::string &error) const {
  error = path_ + ": error: " + problem;
  return false;
}

const ShardTensor *SafetensorsReader::find(const std::string &name) const {
  for (const ShardTensor &tensor : tensors_)
    if (tensor.name == name)
      return &tensor;
  return nullptr;
}

bool SafetensorsReader::open(const std::string &path, std::string &error) {
  path_ = path;
  tensors_.clear();
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info;
  if (fd_ < 0 || ::fstat(fd_, &info) != 0)
    return fail(std::string("cannot read: ") + std::strerror(errno), error);
  return readHeader(uint64_t(info.st_size), error);
}

bool SafetensorsReader::readHeader(uint64_t fileSize, std::string &error) {
  if (fileSize < 8)
    return fail("the file is " + std::to_string(fileSize) +
                    " bytes, too short for the 8-byte header length",
                error);
  uint8_t lengthBytes[8];
  if (int failure = readAt(fd_, lengthBytes, 8, 0))
    return fail(std::string("cannot read: ") + std::strerror(failure), error);
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i)
    length |= uint64_t(lengthBytes[i]) << (8 * i);
  if (length > fileSize - 8)
    return fail("header length " + std::to_string(length) +
                    " (at byte 0) is beyond the file's size (" +
                    std::to_string(fileSize) + " bytes)",
                error);
  std::string text(size_t(length), '\0');
  if (int failure =
          readAt(fd_, reinterpret_cast<uint8_t *>(text.data()), text.size(), 8))
    return fail(std::string("cannot read: ") + std::strerror(failure), error);
  ordered_json header;
  std::string problem;
  if (!parseJsonStrict(text.data(), text.size(), header, problem, 8))
    return fail("header is not JSON: " + problem, error);
  if (!header.is_object())
    return fail(std::string("header is ") + jsonKindName(header) +
                    ", expected an object",
                error);

  uint64_t dataStart = 8 + length;
  uint64_t dataSize = fileSize - dataStart;
  for (const auto &[name, entry] : header.items()) {
    if (name == kMetadataKey) {
      if (!entry.is_object())
        return fail(std::string("__metadata__ is ") + jsonKindName(entry) +
                        ", expected an object",
                    error);
      continue;
    }
    ShardTensor tensor;
    std::string problem = readEntry(name, entry, dataStart, dataSize, tensor);
    if (!problem.empty())
      return fail("tensor '" + name + "': " + problem, error);
    tensors_.push_back(std::move(tensor));
  }
  return true;
}

bool SafetensorsReader::read(const ShardTensor &tensor,
                             std::vector<uint8_t> &out,
                             std::string &error) const {
  out.resize(size_t(tensor.bytes));
  if (int failure = readAt(fd_, out.data(), out.size(), off_t(tensor.offset)))
    return fail("tensor '" + tensor.name + "': cannot read " +
                    std::to_string(tensor.bytes) + " bytes at byte " +
                    std::to_string(tensor.offset) + ": " +
                    std::strerror(failure),
                error);
  return true;
}

} // namespace kiln::checkpoint
