//===- Criteo.cpp - Data sets from Criteo-layout text files ---------------===//
//
// One example per line: label, D dense numbers, C categorical strings,
// separated by tabs or commas (Dataset.h, loadCriteo). Lines are read one at
// a time; only the columns are kept. Messages give the line (counted from 1
// in the file) and the row (counted from 1 in the data lines), and the
// column (counted from 1) of a field that cannot be read.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Dataset.h"

#include "runtime/data/DatasetRows.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string_view>

namespace kiln::data {

namespace {

/// Which feed each field goes to.
struct Layout {
  size_t label = 0;
  int dense = -1; ///< Index in specs, or -1 for no dense columns.
  int64_t denseCount = 0;
  std::vector<size_t> categorical; ///< Indices in specs, in column order.
  size_t fields() const { return 1 + denseCount + categorical.size(); }
};

std::string inputList(const std::vector<FeedSpec> &specs) {
  std::string list;
  for (const FeedSpec &spec : specs)
    list += (list.empty() ? "" : ", ") + spec.name;
  return list;
}

bool planLayout(const std::vector<FeedSpec> &specs,
                const std::string &labelFeed, Layout &layout,
                std::string &problem) {
  auto label = std::find_if(specs.begin(), specs.end(), [&](const FeedSpec &s) {
    return s.name == labelFeed;
  });
  if (label == specs.end()) {
    problem = "no input named '" + labelFeed +
              "' for the label (inputs: " + inputList(specs) + ")";
    return false;
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const FeedSpec &spec = specs[i];
    std::string what = "input '" + spec.name + "' (" +
                       elementTypeName(spec.type) + " " +
                       shapeText(spec.exampleShape) + ")";
    bool single = exampleElements(spec) == 1 && spec.exampleShape.size() <= 1;
    if (spec.name == labelFeed) {
      if (!single) {
        problem = "label " + what + " must hold one value per example";
        return false;
      }
      layout.label = i;
    } else if (spec.type == ElementType::F32 && spec.exampleShape.size() == 1) {
      if (layout.dense >= 0) {
        problem = "inputs '" + specs[layout.dense].name + "' and '" +
                  spec.name +
                  "' both ask for the dense columns (f32 [D]); "
                  "a Criteo file has one set";
        return false;
      }
      layout.dense = static_cast<int>(i);
      layout.denseCount = spec.exampleShape[0];
    } else if (spec.type != ElementType::F32 && single) {
      // Without an idBound (a hash embedding's ids), strings hash onto
      // every non-negative value of the id type.
      layout.categorical.push_back(i);
    } else {
      problem = what + " has no column in a Criteo file (label, one f32 [D] "
                       "dense input, integer inputs of one id each)";
      return false;
    }
  }
  return true;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && text.front() == ' ')
    text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ')
    text.remove_suffix(1);
  if (text.size() > 1 && text.front() == '+' && text[1] != '-')
    text.remove_prefix(1);
  return text;
}

/// Parses all of `text` as a number; sets `problem` if it is not one.
bool parseNumber(std::string_view text, double &value, std::string &problem) {
  text = trimmed(text);
  auto [end, status] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (status == std::errc() && end == text.data() + text.size() &&
      !text.empty())
    return true;
  problem = "'" + std::string(text.substr(0, 40)) + "' " +
            (status == std::errc::result_out_of_range ? "is out of range"
                                                      : "is not a number");
  return false;
}

/// Parses an integer label: digits, or a number with no fraction.
bool parseInteger(std::string_view text, int64_t &value, std::string &problem) {
  text = trimmed(text);
  auto [end, status] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (status == std::errc() && end == text.data() + text.size() &&
      !text.empty())
    return true;
  double number = 0;
  if (!parseNumber(text, number, problem))
    return false;
  if (number != std::floor(number) || std::fabs(number) > 9.0e18) {
    problem = "'" + std::string(text.substr(0, 40)) + "' is not an integer";
    return false;
  }
  value = static_cast<int64_t>(number);
  return true;
}

void append(DatasetColumn &column, const void *value, size_t size) {
  const uint8_t *bytes = static_cast<const uint8_t *>(value);
  column.insert(column.end(), bytes, bytes + size);
}

void appendInteger(DatasetColumn &column, ElementType type,
                   int64_t value) {
  if (type == ElementType::I64) {
    append(column, &value, sizeof value);
  } else {
    int32_t narrow = static_cast<int32_t>(value);
    append(column, &narrow, sizeof narrow);
  }
}

/// Reads the lines of one file into a Dataset.
class CriteoReader {
public:
  CriteoReader(Dataset &data, const Layout &layout, char delimiter)
      : data_(data), layout_(layout), delimiter_(delimiter) {}

  /// Appends the example of `line` to the columns; on failure, leaves them
  /// as they were and sets `problem` (a bad row) or `fatal` (a layout that
  /// cannot be read at all).
  bool addRow(std::string_view line, bool first, std::string &problem,
              bool &fatal);

  void setDelimiter(char delimiter) { delimiter_ = delimiter; }

private:
  bool parseFields(std::string &problem);

  Dataset &data_;
  const Layout &layout_;
  char delimiter_;
  std::vector<std::string_view> fields_;
  std::vector<size_t> sizes_; ///< Column sizes before the row.
};

bool CriteoReader::addRow(std::string_view line, bool first,
                          std::string &problem, bool &fatal) {
  fields_.clear();
  for (size_t start = 0;;) {
    size_t end = line.find(delimiter_, start);
    fields_.push_back(line.substr(start, end - start));
    if (end == std::string_view::npos)
      break;
    start = end + 1;
  }
  if (fields_.size() != layout_.fields()) {
    fatal = first;
    int64_t categorical =
        static_cast<int64_t>(fields_.size()) - 1 - layout_.denseCount;
    problem = std::to_string(fields_.size()) + " fields; expected " +
              std::to_string(layout_.fields()) + " (the label, " +
              std::to_string(layout_.denseCount) + " dense, " +
              std::to_string(layout_.categorical.size()) + " categorical)";
    if (first)
      problem += ": the inputs take " +
                 std::to_string(layout_.categorical.size()) +
                 " categorical columns, the file has " +
                 std::to_string(std::max<int64_t>(categorical, 0));
    return false;
  }
  sizes_.resize(data_.columns.size());
  for (size_t i = 0; i < sizes_.size(); ++i)
    sizes_[i] = data_.columns[i].size();
  bool parsed = parseFields(problem);
  if (parsed) {
    ++data_.rows;
    std::string bad = rowProblem(data_, data_.rows - 1);
    if (bad.empty())
      return true;
    --data_.rows;
    problem = bad;
  }
  for (size_t i = 0; i < sizes_.size(); ++i)
    data_.columns[i].resize(sizes_[i]);
  return false;
}

bool CriteoReader::parseFields(std::string &problem) {
  auto column = [&](size_t field, const FeedSpec &spec, std::string suffix) {
    return "column " + std::to_string(field + 1) + " (input " + spec.name +
           suffix + "): ";
  };
  const FeedSpec &label = data_.specs[layout_.label];
  DatasetColumn &labelColumn = data_.columns[layout_.label];
  std::string fieldProblem;
  if (label.type == ElementType::F32) {
    double value = 0;
    if (!parseNumber(fields_[0], value, fieldProblem)) {
      problem = column(0, label, "") + fieldProblem;
      return false;
    }
    float narrow = static_cast<float>(value);
    append(labelColumn, &narrow, sizeof narrow);
  } else {
    int64_t value = 0;
    if (!parseInteger(fields_[0], value, fieldProblem)) {
      problem = column(0, label, "") + fieldProblem;
      return false;
    }
    if (label.type == ElementType::I32 &&
        (value < std::numeric_limits<int32_t>::min() ||
         value > std::numeric_limits<int32_t>::max())) {
      problem =
          column(0, label, "") + std::to_string(value) + " does not fit in i32";
      return false;
    }
    appendInteger(labelColumn, label.type, value);
  }
  for (int64_t k = 0; k < layout_.denseCount; ++k) {
    std::string_view field = fields_[1 + k];
    double value = 0;
    if (!trimmed(field).empty() && !parseNumber(field, value, fieldProblem)) {
      const FeedSpec &dense = data_.specs[layout_.dense];
      problem =
          column(1 + k, dense, "[" + std::to_string(k) + "]") + fieldProblem;
      return false;
    }
    float narrow = static_cast<float>(value);
    append(data_.columns[layout_.dense], &narrow, sizeof narrow);
  }
  size_t first = 1 + layout_.denseCount;
  for (size_t c = 0; c < layout_.categorical.size(); ++c) {
    const FeedSpec &spec = data_.specs[layout_.categorical[c]];
    std::string_view field = fields_[first + c];
    uint64_t hash = fnv1a64(field.data(), field.size());
    uint64_t id = spec.idBound > 0 ? hash % static_cast<uint64_t>(spec.idBound)
                  : spec.type == ElementType::I64 ? hash & uint64_t(INT64_MAX)
                                                  : hash & uint64_t(INT32_MAX);
    appendInteger(data_.columns[layout_.categorical[c]], spec.type,
                  static_cast<int64_t>(id));
  }
  return true;
}

/// The delimiter the extension names, else the one the first line uses.
char delimiterFor(const std::string &path, std::string_view firstLine) {
  auto endsWith = [&](const char *suffix) {
    size_t n = std::strlen(suffix);
    if (path.size() < n)
      return false;
    for (size_t i = 0; i < n; ++i)
      if (std::tolower(static_cast<unsigned char>(path[path.size() - n + i])) !=
          suffix[i])
        return false;
    return true;
  };
  if (endsWith(".tsv"))
    return '\t';
  if (endsWith(".csv"))
    return ',';
  return firstLine.find('\t') != std::string_view::npos  ? '\t'
         : firstLine.find(',') != std::string_view::npos ? ','
                                                         : '\t';
}

struct FileCloser {
  void operator()(std::FILE *file) const { std::fclose(file); }
};

struct LineBuffer {
  char *text = nullptr;
  size_t capacity = 0;
  ~LineBuffer() { std::free(text); }
};

} // namespace

bool loadCriteo(const std::string &path, const std::vector<FeedSpec> &specs,
                const std::string &labelFeed, const ReadOptions &options,
                Dataset &out, std::string &error) {
  auto fail = [&](const std::string &problem) {
    error = dataError(path, problem);
    return false;
  };
  std::string problem;
  Layout layout;
  if (!checkSpecs(specs, problem) ||
      !planLayout(specs, labelFeed, layout, problem))
    return fail(problem);
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file)
    return fail(std::string("cannot read: ") + std::strerror(errno));

  Dataset data;
  data.path = path;
  data.specs = specs;
  data.columns.resize(specs.size());
  CriteoReader reader(data, layout, '\t');
  LineBuffer buffer;
  int64_t line = 0, row = 0;
  bool firstLine = true;
  for (;;) {
    errno = 0;
    ssize_t length = ::getline(&buffer.text, &buffer.capacity, file.get());
    if (length < 0)
      break;
    ++line;
    std::string_view text(buffer.text, static_cast<size_t>(length));
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
      text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == std::string_view::npos)
      continue;
    if (firstLine) {
      firstLine = false;
      char delimiter = delimiterFor(path, text);
      reader.setDelimiter(delimiter);
      double ignored;
      std::string notNumber;
      std::string_view label = text.substr(0, text.find(delimiter));
      if (!parseNumber(label, ignored, notNumber))
        continue; // A header line.
    }
    ++row;
    bool fatal = false;
    if (reader.addRow(text, row == 1, problem, fatal))
      continue;
    std::string where =
        "line " + std::to_string(line) + ": row " + std::to_string(row) + ": ";
    if (fatal || !options.skipBadRows)
      return fail(where + problem);
    ++data.skippedRows;
  }
  if (std::ferror(file.get()))
    return fail(std::string("cannot read: ") + std::strerror(errno));
  if (data.rows == 0)
    return fail("holds no examples" +
                (data.skippedRows
                     ? " (all " + std::to_string(data.skippedRows) +
                           " rows were bad and skipped)"
                     : std::string()));
  for (DatasetColumn &column : data.columns)
    column.shrink_to_fit();
  out = std::move(data);
  return true;
}

} // namespace kiln::data
