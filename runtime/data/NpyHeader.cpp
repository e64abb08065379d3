//===- NpyHeader.cpp - The header of a .npy file --------------------------===//
//
// The header text is a Python dict literal, as numpy writes it:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ending in a newline. The parser takes what numpy
// writes and what a person would write by hand (either quote, any spacing,
// trailing commas), and nothing else.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/NpyHeader.h"
#include "runtime/support/PrintableText.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace kiln::data {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

/// Reads the dict literal of a header. Positions in messages are byte
/// offsets in the file.
class HeaderParser {
public:
  HeaderParser(std::string_view text, uint64_t fileOffset)
      : text_(text), fileOffset_(fileOffset) {}

  bool parse(NpyHeader &header, std::string &problem);

private:
  bool fail(const std::string &what, std::string &problem) const {
    problem = "broken header at byte " + std::to_string(fileOffset_ + pos_) +
              ": " + what;
    return false;
  }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool consume(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool parseString(std::string &out, std::string &problem);
  bool parseBool(bool &out, std::string &problem);
  bool parseShape(std::vector<int64_t> &shape, std::string &problem);
  bool parseDescr(const std::string &descr, NpyDType &dtype,
                  std::string &problem);

  std::string_view text_;
  uint64_t fileOffset_;
  size_t pos_ = 0;
};

bool HeaderParser::parseString(std::string &out, std::string &problem) {
  skipSpace();
  if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
    return fail("expected a quoted string", problem);
  char quote = text_[pos_++];
  size_t end = text_.find(quote, pos_);
  if (end == std::string_view::npos)
    return fail("unterminated string", problem);
  out = std::string(text_.substr(pos_, end - pos_));
  pos_ = end + 1;
  return true;
}

bool HeaderParser::parseBool(bool &out, std::string &problem) {
  skipSpace();
  for (auto [word, value] : {std::pair{"True", true}, {"False", false}}) {
    size_t length = std::strlen(word);
    if (text_.substr(pos_, length) == word) {
      pos_ += length;
      out = value;
      return true;
    }
  }
  return fail("expected True or False", problem);
}

bool HeaderParser::parseShape(std::vector<int64_t> &shape,
                              std::string &problem) {
  if (!consume('('))
    return fail("expected a shape tuple such as (2, 3)", problem);
  shape.clear();
  while (!consume(')')) {
    if (!shape.empty() && !consume(','))
      return fail("expected ',' or ')' in the shape", problem);
    if (consume(')'))
      break; // A trailing comma: (3,)
    skipSpace();
    bool negative = pos_ < text_.size() && text_[pos_] == '-';
    size_t start = pos_ + (negative ? 1 : 0), end = start;
    uint64_t value = 0;
    for (; end < text_.size() && text_[end] >= '0' && text_[end] <= '9';
         ++end) {
      if (__builtin_mul_overflow(value, 10u, &value) ||
          __builtin_add_overflow(value, uint64_t(text_[end] - '0'), &value) ||
          value > uint64_t(INT64_MAX))
        return fail("shape dimension does not fit 64 bits", problem);
    }
    if (end == start)
      return fail("expected a dimension", problem);
    if (negative && value != 0) {
      problem = "shape dimension -" + std::to_string(value) + " is negative";
      return false;
    }
    pos_ = end;
    if (pos_ < text_.size() && text_[pos_] == 'L') // Python 2 long.
      ++pos_;
    shape.push_back(int64_t(value));
  }
  return true;
}

bool HeaderParser::parseDescr(const std::string &descr, NpyDType &dtype,
                              std::string &problem) {
  for (NpyDType known : {NpyDType::F32, NpyDType::F16, NpyDType::I32,
                         NpyDType::I64, NpyDType::Bool}) {
    std::string_view name = npyDescr(known);
    if (descr == name) {
      dtype = known;
      return true;
    }
  }
  // Big-endian forms of what is read little-endian (f8 too: converted
  // where a feed is f32).
  for (const char *name : {"f2", "f4", "f8", "i4", "i8"})
    if (descr.size() == 3 && descr[0] == '>' && descr.compare(1, 2, name) == 0) {
      // f8 is read only as a data set's f32 input: f4 is read everywhere.
      problem = "big-endian data ('" + descr + "'); only little-endian data is read (numpy: " +
                (std::string(name) == "f8" ? "a.astype('<f4'))"
                                           : "a.astype(a.dtype.newbyteorder('<')))");
      return false;
    }
  problem = "dtype '" + descr +
            "' is not supported (supported: <f4, <f2, <i4, <i8, |b1)";
  return false;
}

bool HeaderParser::parse(NpyHeader &header, std::string &problem) {
  if (!consume('{'))
    return fail("expected '{'", problem);
  bool seenDescr = false, seenOrder = false, seenShape = false;
  std::string descr;
  bool fortranOrder = false;
  while (!consume('}')) {
    std::string key;
    if (!parseString(key, problem))
      return false;
    if (!consume(':'))
      return fail("expected ':' after '" + key + "'", problem);
    bool *seen = key == "descr"           ? &seenDescr
                 : key == "fortran_order" ? &seenOrder
                 : key == "shape"         ? &seenShape
                                          : nullptr;
    if (!seen)
      return fail("unexpected key '" + key + "'", problem);
    if (*seen)
      return fail("key '" + key + "' appears twice", problem);
    *seen = true;
    // A record array's descr is a list of fields: not a header fault.
    skipSpace();
    if (key == "descr" && pos_ < text_.size() && text_[pos_] == '[') {
      size_t end = text_.find(']', pos_);
      std::string fields = end != std::string_view::npos && end - pos_ < 80
                               ? std::string(text_.substr(pos_, end - pos_ + 1))
                               : std::string(text_.substr(pos_, 40)) + "...";
      problem = "a structured (record) dtype, " + printableText(fields) +
                "; each input must be a plain numeric array (numpy: one array per field)";
      return false;
    }
    bool parsed = key == "descr"           ? parseString(descr, problem)
                  : key == "fortran_order" ? parseBool(fortranOrder, problem)
                                           : parseShape(header.shape, problem);
    if (!parsed)
      return false;
    if (!consume(',')) {
      if (!consume('}'))
        return fail("expected ',' or '}'", problem);
      break;
    }
  }
  skipSpace();
  if (pos_ != text_.size())
    return fail("unexpected text after the dict", problem);
  for (auto [seen, key] : {std::pair{seenDescr, "descr"},
                           {seenOrder, "fortran_order"},
                           {seenShape, "shape"}})
    if (!seen) {
      problem = std::string("broken header: no '") + key + "' key";
      return false;
    }
  if (!parseDescr(descr, header.dtype, problem))
    return false;
  if (fortranOrder) {
    problem = "Fortran-order data; only C order is read (numpy: "
              "np.ascontiguousarray(a))";
    return false;
  }
  return true;
}

} // namespace

const char *npyDescr(NpyDType dtype) {
  switch (dtype) {
  case NpyDType::F32:
    return "<f4";
  case NpyDType::F16:
    return "<f2";
  case NpyDType::I32:
    return "<i4";
  case NpyDType::I64:
    return "<i8";
  case NpyDType::Bool:
    return "|b1";
  }
  return "?";
}

size_t npyItemSize(NpyDType dtype) {
  switch (dtype) {
  case NpyDType::F32:
  case NpyDType::I32:
    return 4;
  case NpyDType::F16:
    return 2;
  case NpyDType::I64:
    return 8;
  case NpyDType::Bool:
    return 1;
  }
  return 0;
}

bool readNpyPreamble(const uint8_t *bytes, size_t available, uint64_t fileSize,
                     uint64_t &headerEnd, std::string &problem) {
  if (available < kMagicSize || std::memcmp(bytes, kMagic, kMagicSize) != 0) {
    problem = "not a .npy file (it does not start with \\x93NUMPY)";
    return false;
  }
  if (available < kNpyPreambleV1) {
    problem = "broken header: the file ends inside the preamble";
    return false;
  }
  uint8_t major = bytes[6], minor = bytes[7];
  if (major < 1 || major > 3 || minor != 0) {
    problem = "unsupported .npy format version " + std::to_string(major) + "." +
              std::to_string(minor) + " (1.0, 2.0 and 3.0 are read)";
    return false;
  }
  uint64_t length = 0;
  size_t preamble = major == 1 ? kNpyPreambleV1 : kNpyPreambleV2;
  if (available < preamble) {
    problem = "broken header: the file ends inside the preamble";
    return false;
  }
  for (size_t i = 8; i < preamble; ++i)
    length |= uint64_t(bytes[i]) << (8 * (i - 8));
  headerEnd = preamble + length;
  if (headerEnd > fileSize) {
    problem = "broken header: its length field says " + std::to_string(length) +
              " bytes, past the end of the file (" + std::to_string(fileSize) +
              " bytes)";
    return false;
  }
  return true;
}

bool parseNpyHeader(const uint8_t *bytes, uint64_t headerEnd, uint64_t fileSize,
                    NpyHeader &header, std::string &problem) {
  size_t preamble = bytes[6] == 1 ? kNpyPreambleV1 : kNpyPreambleV2;
  std::string_view text(reinterpret_cast<const char *>(bytes) + preamble,
                        headerEnd - preamble);
  if (!HeaderParser(text, preamble).parse(header, problem))
    return false;
  uint64_t count = 1;
  for (int64_t dim : header.shape)
    if (__builtin_mul_overflow(count, uint64_t(dim), &count)) {
      problem = "shape " + shapeText(header.shape) + " overflows 64 bits";
      return false;
    }
  if (__builtin_mul_overflow(count, npyItemSize(header.dtype),
                             &header.dataSize)) {
    problem = "shape " + shapeText(header.shape) + " overflows 64 bits";
    return false;
  }
  header.dataOffset = headerEnd;
  uint64_t held = fileSize - headerEnd;
  std::string needs = "shape " + shapeText(header.shape) + " of " +
                      npyDescr(header.dtype) + " needs " +
                      std::to_string(header.dataSize) + " bytes of data";
  if (held < header.dataSize) {
    problem =
        "truncated data: " + needs + ", the file holds " + std::to_string(held);
    return false;
  }
  if (held > header.dataSize) {
    problem = std::to_string(held - header.dataSize) +
              " unexpected bytes after the data (" + needs + ")";
    return false;
  }
  return true;
}

std::vector<uint8_t> encodeNpyHeader(NpyDType dtype,
                                     const std::vector<int64_t> &shape) {
  std::string dict = std::string("{'descr': '") + npyDescr(dtype) +
                     "', 'fortran_order': False, 'shape': " + shapeText(shape) +
                     ", }";
  // numpy pads the preamble and the dict (ending in '\n') to 64 bytes; the
  // length field of version 1.0 holds at most 65535.
  auto paddedSize = [&](size_t preamble) {
    return (preamble + dict.size() + 1 + 63) / 64 * 64;
  };
  size_t preamble = paddedSize(kNpyPreambleV1) - kNpyPreambleV1 <= 65535
                        ? kNpyPreambleV1
                        : kNpyPreambleV2;
  dict.append(paddedSize(preamble) - preamble - dict.size() - 1, ' ');
  dict += '\n';
  std::vector<uint8_t> bytes(kMagic, kMagic + kMagicSize);
  bytes.push_back(preamble == kNpyPreambleV1 ? 1 : 2);
  bytes.push_back(0);
  uint64_t length = dict.size();
  for (size_t i = 8; i < preamble; ++i)
    bytes.push_back(static_cast<uint8_t>(length >> (8 * (i - 8))));
  bytes.insert(bytes.end(), dict.begin(), dict.end());
  return bytes;
}

} // namespace kiln::data
