//===- Npz.cpp - Data sets from numpy .npz archives -----------------------===//
//
// Each member "NAME.npy" is parsed by parseNpy (Npy.h). numpy's float64
// ('<f8'), which parseNpy does not read, is parsed as '<i8' (the same item
// size and header length) and its bits converted to f32 here.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Dataset.h"

#include "runtime/data/DatasetRows.h"
#include "runtime/data/Npy.h"
#include "runtime/data/NpyHeader.h"
#include "runtime/data/RaggedIds.h"
#include "runtime/data/Zip.h"
#include "runtime/support/FloatRounding.h"
#include "runtime/support/PrintableText.h"

#include <cstring>
#include <limits>

namespace kiln::data {

namespace {

/// An array of a member, with float64 told apart from int64.
struct MemberArray {
  NpyArray array;
  bool float64 = false;
};

const char *dtypeText(const MemberArray &member) {
  return member.float64 ? "<f8" : npyDescr(member.array.dtype);
}

/// Rewrites a '<f8' descr in the header of `bytes` to '<i8'; true if it did.
bool renameFloat64(std::vector<uint8_t> &bytes) {
  uint64_t headerEnd = 0;
  std::string ignored;
  if (!readNpyPreamble(bytes.data(), bytes.size(), bytes.size(), headerEnd,
                       ignored))
    return false;
  std::string_view header(reinterpret_cast<const char *>(bytes.data()),
                          headerEnd);
  for (const char *quoted : {"'<f8'", "\"<f8\""}) {
    size_t at = header.find(quoted);
    if (at != std::string_view::npos) {
      bytes[at + 2] = 'i';
      return true;
    }
  }
  return false;
}

bool readMember(const ZipArchive &archive, const ZipMember &entry,
                MemberArray &member, std::string &error) {
  std::vector<uint8_t> bytes;
  if (!archive.read(entry, bytes, error))
    return false;
  member.float64 = renameFloat64(bytes);
  std::string npyError;
  if (parseNpy(bytes.data(), bytes.size(), entry.name, member.array, npyError))
    return true;
  // "NAME.npy: error: PROBLEM" becomes "PATH: error: array 'NAME.npy': ...".
  std::string prefix = printableText(entry.name) + ": error: ";
  error = dataError(archive.path(), "array '" + entry.name + "': ") +
          npyError.substr(prefix.size());
  return false;
}

/// The per-example shape of `shape` matches `spec` ([rows] and [rows, 1]
/// are interchangeable).
bool shapeMatches(const std::vector<int64_t> &shape, const FeedSpec &spec) {
  std::vector<int64_t> example(shape.begin() + 1, shape.end());
  if (example == spec.exampleShape)
    return true;
  auto scalar = [](const std::vector<int64_t> &s) {
    return s.empty() || s == std::vector<int64_t>{1};
  };
  return scalar(example) && scalar(spec.exampleShape);
}

template <typename From> From load(const uint8_t *bytes, size_t i) {
  From value;
  std::memcpy(&value, bytes + i * sizeof(From), sizeof(From));
  return value;
}

template <typename To> void store(uint8_t *bytes, size_t i, To value) {
  std::memcpy(bytes + i * sizeof(To), &value, sizeof(To));
}

/// Integers become f32 only where exact: |value| <= 2^24.
template <typename From>
bool intsToFloat(const uint8_t *in, uint8_t *out, size_t count,
                 size_t &badIndex, std::string &problem) {
  for (size_t i = 0; i < count; ++i) {
    From value = load<From>(in, i);
    if (value > (1 << 24) || value < -(1 << 24)) {
      badIndex = i;
      problem = "value " + std::to_string(value) +
                " is not exactly an f32 (integers convert up to 2^24)";
      return false;
    }
    store<float>(out, i, static_cast<float>(value));
  }
  return true;
}

/// Converts the elements of `member` into a column of `spec.type`. On a
/// value that cannot be converted, sets `badIndex` and `problem`.
bool convert(const MemberArray &member, const FeedSpec &spec,
             DatasetColumn &column, size_t &badIndex,
             std::string &problem) {
  const NpyArray &array = member.array;
  size_t count = array.data.size() / npyItemSize(array.dtype);
  const uint8_t *in = array.data.data();
  column.resize(count * elementSize(spec.type));
  uint8_t *out = column.data();
  NpyDType dtype = array.dtype;
  if (spec.type == ElementType::F32) {
    if (member.float64) {
      for (size_t i = 0; i < count; ++i)
        store<float>(out, i, static_cast<float>(load<double>(in, i)));
      return true;
    }
    switch (dtype) {
    case NpyDType::F32:
      std::memcpy(out, in, column.size());
      return true;
    case NpyDType::F16:
      for (size_t i = 0; i < count; ++i)
        store<float>(out, i, f16ToFloat(load<uint16_t>(in, i)));
      return true;
    case NpyDType::Bool:
      for (size_t i = 0; i < count; ++i)
        store<float>(out, i, in[i] ? 1.0f : 0.0f);
      return true;
    case NpyDType::I32:
    case NpyDType::I64:
      return dtype == NpyDType::I32
                 ? intsToFloat<int32_t>(in, out, count, badIndex, problem)
                 : intsToFloat<int64_t>(in, out, count, badIndex, problem);
    }
  }
  bool i32 = spec.type == ElementType::I32;
  if (member.float64 || dtype == NpyDType::F32 || dtype == NpyDType::F16)
    return false;
  for (size_t i = 0; i < count; ++i) {
    int64_t value = dtype == NpyDType::I64   ? load<int64_t>(in, i)
                    : dtype == NpyDType::I32 ? load<int32_t>(in, i)
                                             : in[i];
    if (!i32) {
      store<int64_t>(out, i, value);
    } else if (value < std::numeric_limits<int32_t>::min() ||
               value > std::numeric_limits<int32_t>::max()) {
      badIndex = i;
      problem = "value " + std::to_string(value) + " does not fit in i32";
      return false;
    } else {
      store<int32_t>(out, i, static_cast<int32_t>(value));
    }
  }
  return true;
}

const char *acceptedDtypes(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "<f4, <f8, <f2, |b1, or integers up to 2^24";
  case ElementType::I32:
    return "<i4, <i8 (values that fit), |b1";
  case ElementType::I64:
    return "<i8, <i4, |b1";
  }
  return "";
}

/// The first members' names, for a message.
std::string memberList(const ZipArchive &archive) {
  constexpr size_t kListed = 20;
  const std::vector<ZipMember> &members = archive.members();
  std::string list;
  for (size_t i = 0; i < members.size() && i < kListed; ++i)
    list += (list.empty() ? "" : ", ") + members[i].name;
  if (members.size() > kListed)
    list += " and " + std::to_string(members.size() - kListed) + " more";
  return list.empty() ? "none" : list;
}

/// Whether `spec` is a list of ids the archive holds ragged: NAME.values
/// and NAME.row_splits (a TensorFlow RaggedTensor's parts).
bool isRaggedInput(const ZipArchive &archive, const FeedSpec &spec) {
  return spec.paddedIds && spec.exampleShape.size() == 1 &&
         archive.find(spec.name + ".values.npy") && archive.find(spec.name + ".row_splits.npy");
}

/// Reads a ragged input as its lists padded with -1.
bool readRagged(const ZipArchive &archive, const FeedSpec &spec, MemberArray &member,
                std::string &error) {
  MemberArray values, splits;
  if (!readMember(archive, *archive.find(spec.name + ".values.npy"), values, error) ||
      !readMember(archive, *archive.find(spec.name + ".row_splits.npy"), splits, error))
    return false;
  std::string problem;
  if (values.float64 || splits.float64) {
    problem = "'values' and 'row_splits' must be integers";
  } else if (padRaggedIds(values.array, splits.array, spec.exampleShape[0], member.array,
                          problem)) {
    return true;
  }
  error = dataError(archive.path(), "ragged input '" + spec.name + "': " + problem);
  return false;
}

/// Reads the array of `spec` into a new column of `out`.
bool readColumn(const ZipArchive &archive, const FeedSpec &spec,
                const std::string &firstArray, Dataset &out,
                std::string &error) {
  auto fail = [&](const std::string &problem) {
    error = dataError(archive.path(), problem);
    return false;
  };
  std::string name = spec.name + ".npy";
  const ZipMember *entry = archive.find(name);
  MemberArray member;
  if (!entry && isRaggedInput(archive, spec)) {
    name = spec.name + ".values.npy";
    if (!readRagged(archive, spec, member, error))
      return false;
  } else if (!entry) {
    return fail("no array '" + name + "' for input '" + spec.name +
                "' (the archive holds: " + memberList(archive) + ")");
  } else if (!readMember(archive, *entry, member, error)) {
    return false;
  }
  const std::vector<int64_t> &shape = member.array.shape;
  std::string array = "array '" + name + "'";
  std::vector<int64_t> expected = {-1};
  expected.insert(expected.end(), spec.exampleShape.begin(),
                  spec.exampleShape.end());
  std::string expectedText = shapeText(expected);
  expectedText.replace(1, 2, "rows");
  if (shape.empty() || !shapeMatches(shape, spec))
    return fail(array + " has shape " + shapeText(shape) + "; input '" +
                spec.name + "' needs " + expectedText);
  if (out.columns.empty())
    out.rows = shape[0];
  else if (shape[0] != out.rows)
    return fail(array + " has " + std::to_string(shape[0]) + " rows, array '" +
                firstArray + "' has " + std::to_string(out.rows));
  size_t badIndex = 0;
  std::string problem;
  out.columns.emplace_back();
  if (convert(member, spec, out.columns.back(), badIndex, problem))
    return true;
  std::string conversion = std::string(" (") + dtypeText(member) + " to " +
                           elementTypeName(spec.type) + ")";
  if (problem.empty())
    return fail(array + " is " + dtypeText(member) + "; input '" + spec.name +
                "' is " + elementTypeName(spec.type) +
                " (accepted: " + acceptedDtypes(spec.type) + ")");
  int64_t perRow = exampleElements(spec);
  return fail("row " + std::to_string(badIndex / perRow + 1) + ": " + array +
              ": " + problem + conversion);
}

} // namespace

bool loadNpz(const std::string &path, const std::vector<FeedSpec> &specs,
             const ReadOptions &options, Dataset &out, std::string &error) {
  std::string problem;
  if (!checkSpecs(specs, problem)) {
    error = dataError(path, problem);
    return false;
  }
  if (specs.empty()) {
    error = dataError(path, "no inputs to read");
    return false;
  }
  ZipArchive archive;
  if (!archive.open(path, error))
    return false;
  Dataset data;
  data.path = path;
  data.specs = specs;
  for (const FeedSpec &spec : specs)
    if (!readColumn(archive, spec, specs.front().name + ".npy", data, error))
      return false;
  std::vector<bool> bad(data.rows, false);
  bool anyBad = false;
  for (int64_t row = 0; row < data.rows; ++row) {
    std::string rowError = rowProblem(data, row);
    if (rowError.empty())
      continue;
    if (!options.skipBadRows) {
      error =
          dataError(path, "row " + std::to_string(row + 1) + ": " + rowError);
      return false;
    }
    bad[row] = anyBad = true;
  }
  if (anyBad)
    dropRows(data, bad);
  if (data.rows == 0) {
    error =
        dataError(path, "holds no examples" +
                            (data.skippedRows
                                 ? " (all " + std::to_string(data.skippedRows) +
                                       " rows were bad and skipped)"
                                 : std::string()));
    return false;
  }
  out = std::move(data);
  return true;
}

} // namespace kiln::data
