//===- RaggedIds.cpp - Ragged id lists padded to a fixed length -----------===//

#include "runtime/data/RaggedIds.h"

#include <cstring>

namespace kiln::data {

namespace {

/// Element `i` of an integer array of rank 1.
int64_t integerAt(const NpyArray &array, size_t i) {
  switch (array.dtype) {
  case NpyDType::I64: {
    int64_t v;
    std::memcpy(&v, array.data.data() + i * 8, 8);
    return v;
  }
  case NpyDType::I32: {
    int32_t v;
    std::memcpy(&v, array.data.data() + i * 4, 4);
    return v;
  }
  default:
    return array.data[i];
  }
}

bool isIntegerVector(const NpyArray &array) {
  return array.shape.size() == 1 && (array.dtype == NpyDType::I64 ||
                                     array.dtype == NpyDType::I32 ||
                                     array.dtype == NpyDType::Bool);
}

} // namespace

bool padRaggedIds(const NpyArray &values, const NpyArray &rowSplits, int64_t listLength,
                  NpyArray &padded, std::string &problem) {
  if (!isIntegerVector(values)) {
    problem = "'values' must be integers of rank 1";
    return false;
  }
  if (!isIntegerVector(rowSplits) || rowSplits.shape[0] < 1) {
    problem = "'row_splits' must be integers of rank 1 with at least one element";
    return false;
  }
  int64_t rows = rowSplits.shape[0] - 1, count = values.shape[0];
  if (integerAt(rowSplits, 0) != 0) {
    problem = "row_splits[0] = " + std::to_string(integerAt(rowSplits, 0)) + ", expected 0";
    return false;
  }
  int64_t last = integerAt(rowSplits, static_cast<size_t>(rows));
  if (last != count) {
    problem = "row_splits[" + std::to_string(rows) + "] = " + std::to_string(last) +
              ", expected the length of 'values' (" + std::to_string(count) + ")";
    return false;
  }
  padded.dtype = NpyDType::I64;
  padded.shape = {rows, listLength};
  padded.data.assign(static_cast<size_t>(rows * listLength) * sizeof(int64_t), 0);
  std::vector<int64_t> out(static_cast<size_t>(rows * listLength), -1);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t begin = integerAt(rowSplits, r), end = integerAt(rowSplits, r + 1);
    if (end < begin) {
      problem = "row_splits[" + std::to_string(r + 1) + "] = " + std::to_string(end) +
                " is below row_splits[" + std::to_string(r) + "] = " + std::to_string(begin);
      return false;
    }
    if (end > count) {
      problem = "row_splits[" + std::to_string(r + 1) + "] = " + std::to_string(end) +
                " is past the end of 'values' (" + std::to_string(count) + ")";
      return false;
    }
    if (end - begin > listLength) {
      problem = "row " + std::to_string(r + 1) + " has " + std::to_string(end - begin) +
                " ids; the input takes at most " + std::to_string(listLength);
      return false;
    }
    for (int64_t i = begin; i < end; ++i)
      out[r * listLength + (i - begin)] = integerAt(values, i);
  }
  std::memcpy(padded.data.data(), out.data(), padded.data.size());
  return true;
}

} // namespace kiln::data
