//===- Safetensors.cpp - Tensor files in the safetensors layout -----------===//

#include "runtime/checkpoint/Safetensors.h"

#include "runtime/checkpoint/CheckpointFiles.h"
#include "runtime/checkpoint/Json.h"
#include "runtime/support/JsonText.h"
#include "runtime/support/ReadAt.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::checkpoint {

namespace {

constexpr const char *kMetadataKey = "__metadata__";

std::string integerList(const std::vector<int64_t> &values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? "," : "") + std::to_string(values[i]);
  return text + "]";
}

/// The integers of `value` if it is an array of non-negative ones.
bool nonNegativeIntegers(const JsonValue &value, std::vector<int64_t> &out) {
  if (!value.isArray())
    return false;
  out.clear();
  for (const JsonValue &element : value.elements()) {
    if (!element.isInt() || element.asInt() < 0)
      return false;
    out.push_back(element.asInt());
  }
  return true;
}

/// Reads a header's entry for the tensor `name` into `tensor`, checking its
/// offsets against the data (`dataSize` bytes from byte `dataStart`); returns
/// the problem, or "".
std::string readEntry(const std::string &name, const JsonValue &entry,
                      uint64_t dataStart, uint64_t dataSize,
                      ShardTensor &tensor) {
  if (!entry.isObject())
    return std::string("entry is ") + entry.kindName() + ", expected an object";
  tensor.name = name;
  const JsonValue *dtype = entry.find("dtype");
  const JsonValue *shape = entry.find("shape");
  const JsonValue *offsets = entry.find("data_offsets");
  for (auto [field, value] :
       {std::make_pair("dtype", dtype), std::make_pair("shape", shape),
        std::make_pair("data_offsets", offsets)})
    if (!value)
      return std::string("missing field '") + field + "'";
  if (!dtype->isString())
    return std::string("dtype is ") + dtype->kindName() + ", expected a string";
  if (!dtypeFromName(dtype->asString(), tensor.dtype))
    return "unknown dtype '" + dtype->asString() +
           "' (expected F32, F16, BF16, I32, I64 or BOOL)";
  if (!nonNegativeIntegers(*shape, tensor.shape))
    return "shape is not an array of non-negative integers";
  std::vector<int64_t> range;
  if (!nonNegativeIntegers(*offsets, range) || range.size() != 2 ||
      range[0] > range[1])
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
  std::string json = "{\"" + std::string(kMetadataKey) + "\":{";
  for (size_t i = 0; i < metadata.size(); ++i)
    json += (i ? "," : "") + jsonString(metadata[i].first) + ":" +
            jsonString(metadata[i].second);
  json += "}";
  int64_t offset = 0;
  for (const TensorRef *tensor : tensors) {
    int64_t end = offset + int64_t(tensor->bytes);
    json += "," + jsonString(tensor->name) + ":{\"dtype\":\"" +
            dtypeName(tensor->dtype) +
            "\",\"shape\":" + integerList(tensor->shape) +
            ",\"data_offsets\":" + integerList({offset, end}) + "}";
    offset = end;
  }
  json += "}";
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string header;
  for (int i = 0; i < 8; ++i)
    header.push_back(char((uint64_t(json.size()) >> (8 * i)) & 0xFF));
  return header + json;
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
  JsonValue header;
  std::string problem;
  if (!parseJson(text.data(), text.size(), header, problem, 8))
    return fail("header is not JSON: " + problem, error);
  if (!header.isObject())
    return fail(std::string("header is ") + header.kindName() +
                    ", expected an object",
                error);

  uint64_t dataStart = 8 + length;
  uint64_t dataSize = fileSize - dataStart;
  for (const auto &[name, entry] : header.members()) {
    if (name == kMetadataKey) {
      if (!entry.isObject())
        return fail("__metadata__ is " + std::string(entry.kindName()) +
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
