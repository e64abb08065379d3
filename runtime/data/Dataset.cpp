//===- Dataset.cpp - Training data held in memory -------------------------===//

#include "runtime/data/Dataset.h"

#include "runtime/data/DatasetRows.h"
#include "runtime/support/PrintableText.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <set>

namespace kiln::data {

const char *elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  }
  return "?";
}

size_t elementSize(ElementType type) {
  return type == ElementType::I64 ? 8 : 4;
}

int64_t exampleElements(const FeedSpec &spec) {
  int64_t count = 1;
  for (int64_t dim : spec.exampleShape)
    count *= dim;
  return count;
}

size_t exampleBytes(const FeedSpec &spec) {
  return static_cast<size_t>(exampleElements(spec)) * elementSize(spec.type);
}

std::string dataError(const std::string &path, const std::string &problem) {
  return printableText(path + ": error: " + problem);
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

bool checkSpecs(const std::vector<FeedSpec> &specs, std::string &problem) {
  std::set<std::string> names;
  for (size_t i = 0; i < specs.size(); ++i) {
    const FeedSpec &spec = specs[i];
    std::string what = "input '" + spec.name + "'";
    if (spec.name.empty()) {
      problem = "input " + std::to_string(i) + " has no name";
      return false;
    }
    if (!names.insert(spec.name).second) {
      problem = what + " is asked for twice";
      return false;
    }
    int64_t count = 1;
    for (int64_t dim : spec.exampleShape) {
      if (dim < 1 || __builtin_mul_overflow(count, dim, &count) ||
          count > (int64_t(1) << 40)) {
        problem = what + " has an invalid example shape " +
                  shapeText(spec.exampleShape);
        return false;
      }
    }
    if (spec.idBound < 0 ||
        (spec.type == ElementType::F32 && spec.idBound != 0)) {
      problem =
          what + " has an invalid idBound " + std::to_string(spec.idBound) +
          (spec.type == ElementType::F32 ? " (an f32 input takes 0)" : "");
      return false;
    }
  }
  return true;
}

namespace {

std::string atElement(const FeedSpec &spec, int64_t k) {
  return exampleElements(spec) > 1 ? " at [" + std::to_string(k) + "]" : "";
}

template <typename T>
std::string idProblem(const FeedSpec &spec, const uint8_t *bytes) {
  int64_t count = exampleElements(spec);
  for (int64_t k = 0; k < count; ++k) {
    T id;
    std::memcpy(&id, bytes + k * sizeof(T), sizeof(T));
    if ((id < 0 || id >= spec.idBound) && !(spec.paddedIds && id == -1) &&
        !(spec.ignoredId && id == *spec.ignoredId))
      return "input " + spec.name + ": id " + std::to_string(id) +
             " out of range [0, " + std::to_string(spec.idBound) + ")" +
             (spec.ignoredId ? " and not the ignored label " + std::to_string(*spec.ignoredId)
                             : std::string()) +
             atElement(spec, k);
  }
  return "";
}

} // namespace

std::string rowProblem(const Dataset &data, int64_t row) {
  for (size_t i = 0; i < data.specs.size(); ++i) {
    const FeedSpec &spec = data.specs[i];
    const uint8_t *bytes = data.columns[i].data() + row * exampleBytes(spec);
    std::string problem;
    if (spec.type == ElementType::F32) {
      int64_t count = exampleElements(spec);
      for (int64_t k = 0; k < count && problem.empty(); ++k) {
        float value;
        std::memcpy(&value, bytes + k * sizeof(float), sizeof(float));
        if (std::isnan(value))
          problem = "input " + spec.name + ": NaN" + atElement(spec, k);
        else if (std::isinf(value))
          problem = "input " + spec.name + ": " + (value > 0 ? "+" : "-") +
                    "Inf" + atElement(spec, k);
      }
    } else if (spec.idBound > 0) {
      problem = spec.type == ElementType::I32 ? idProblem<int32_t>(spec, bytes)
                                              : idProblem<int64_t>(spec, bytes);
    }
    if (!problem.empty())
      return problem;
  }
  return "";
}

void dropRows(Dataset &data, const std::vector<bool> &bad) {
  for (size_t i = 0; i < data.specs.size(); ++i) {
    size_t size = exampleBytes(data.specs[i]);
    uint8_t *column = data.columns[i].data();
    int64_t kept = 0;
    for (int64_t row = 0; row < data.rows; ++row) {
      if (bad[row])
        continue;
      if (kept != row)
        std::memmove(column + kept * size, column + row * size, size);
      ++kept;
    }
    data.columns[i].resize(kept * size);
    data.columns[i].shrink_to_fit();
  }
  int64_t kept = 0;
  for (int64_t row = 0; row < data.rows; ++row)
    kept += bad[row] ? 0 : 1;
  data.skippedRows += data.rows - kept;
  data.rows = kept;
}

namespace {

std::string extensionOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return "";
  std::string extension = path.substr(dot);
  for (char &c : extension)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension;
}

} // namespace

bool loadDataset(const std::string &path, const std::vector<FeedSpec> &specs,
                 const std::string &labelFeed, const ReadOptions &options,
                 Dataset &out, std::string &error) {
  std::string extension = extensionOf(path);
  if (extension == ".npz")
    return loadNpz(path, specs, options, out, error);
  if (extension == ".csv" || extension == ".tsv" || extension == ".txt")
    return loadCriteo(path, specs, labelFeed, options, out, error);
  error = dataError(path, (extension.empty()
                               ? std::string("the name has no extension")
                               : "unknown extension '" + extension + "'") +
                              "; data files are .npz, .csv, .tsv or .txt");
  return false;
}

} // namespace kiln::data
