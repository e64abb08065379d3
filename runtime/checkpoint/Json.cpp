//===- Json.cpp - A small JSON reader and writer --------------------------===//

#include "runtime/checkpoint/Json.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace kiln::checkpoint {

const JsonValue *JsonValue::find(const std::string &key) const {
  for (const Member &member : members_)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

const char *JsonValue::kindName(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Int:
    return "an integer";
  case Kind::Double:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "a value";
}

JsonValue JsonValue::boolean(bool value) {
  JsonValue v;
  v.kind_ = Kind::Bool;
  v.bool_ = value;
  return v;
}

JsonValue JsonValue::integer(int64_t value) {
  JsonValue v;
  v.kind_ = Kind::Int;
  v.int_ = value;
  return v;
}

JsonValue JsonValue::number(double value) {
  JsonValue v;
  v.kind_ = Kind::Double;
  v.double_ = value;
  return v;
}

JsonValue JsonValue::string(std::string value) {
  JsonValue v;
  v.kind_ = Kind::String;
  v.string_ = std::move(value);
  return v;
}

JsonValue JsonValue::array(std::vector<JsonValue> elements) {
  JsonValue v;
  v.kind_ = Kind::Array;
  v.elements_ = std::move(elements);
  return v;
}

JsonValue JsonValue::object(std::vector<Member> members) {
  JsonValue v;
  v.kind_ = Kind::Object;
  v.members_ = std::move(members);
  return v;
}

namespace {

constexpr int kMaxDepth = 64;

class Parser {
public:
  Parser(const char *text, size_t size, size_t offsetBase)
      : text_(text), size_(size), base_(offsetBase) {}

  bool parseDocument(JsonValue &out, std::string &problem) {
    skipSpace();
    bool ok = parseValue(out, 0);
    if (ok) {
      skipSpace();
      if (pos_ < size_)
        ok = fail("unexpected " + describe(pos_) + " after the value");
    }
    if (!ok)
      problem = problem_;
    return ok;
  }

private:
  bool fail(const std::string &what) { return failAt(pos_, what); }
  bool failAt(size_t at, const std::string &what) {
    problem_ = "at byte " + std::to_string(base_ + at) + ": " + what;
    return false;
  }

  /// The byte at `at` for messages: "'x'", "byte 0x01" or "end of text".
  std::string describe(size_t at) const {
    if (at >= size_)
      return "end of text";
    unsigned char c = static_cast<unsigned char>(text_[at]);
    if (c >= 0x20 && c < 0x7F)
      return std::string("'") + char(c) + "'";
    char hex[16];
    std::snprintf(hex, sizeof hex, "byte 0x%02x", c);
    return hex;
  }

  void skipSpace() {
    while (pos_ < size_ && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                            text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  bool expect(char c) {
    skipSpace();
    if (pos_ < size_ && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return fail(std::string("expected '") + c + "', found " + describe(pos_));
  }

  bool parseValue(JsonValue &out, int depth) {
    if (pos_ >= size_)
      return fail("expected a value, found end of text");
    char c = text_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= kMaxDepth)
        return fail("nesting deeper than " + std::to_string(kMaxDepth));
      return c == '{' ? parseObject(out, depth + 1)
                      : parseArray(out, depth + 1);
    }
    if (c == '"') {
      std::string text;
      if (!parseString(text))
        return false;
      out = JsonValue::string(std::move(text));
      return true;
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(out);
    for (const char *word : {"true", "false", "null"}) {
      std::string w = word;
      if (size_ - pos_ >= w.size() &&
          w.compare(0, w.size(), text_ + pos_, w.size()) == 0) {
        pos_ += w.size();
        out = w == "null" ? JsonValue::null() : JsonValue::boolean(w == "true");
        return true;
      }
    }
    return fail("expected a value, found " + describe(pos_));
  }

  bool parseObject(JsonValue &out, int depth) {
    ++pos_; // '{'
    std::vector<JsonValue::Member> members;
    skipSpace();
    if (pos_ < size_ && text_[pos_] == '}') {
      ++pos_;
      out = JsonValue::object(std::move(members));
      return true;
    }
    while (true) {
      skipSpace();
      if (pos_ >= size_ || text_[pos_] != '"')
        return fail("expected a string key, found " + describe(pos_));
      size_t keyAt = pos_;
      std::string key;
      if (!parseString(key))
        return false;
      for (const JsonValue::Member &member : members)
        if (member.first == key)
          return failAt(keyAt, "duplicate key \"" + key + "\"");
      if (!expect(':'))
        return false;
      skipSpace();
      JsonValue value;
      if (!parseValue(value, depth))
        return false;
      members.emplace_back(std::move(key), std::move(value));
      skipSpace();
      if (pos_ < size_ && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (!expect('}'))
        return false;
      out = JsonValue::object(std::move(members));
      return true;
    }
  }

  bool parseArray(JsonValue &out, int depth) {
    ++pos_; // '['
    std::vector<JsonValue> elements;
    skipSpace();
    if (pos_ < size_ && text_[pos_] == ']') {
      ++pos_;
      out = JsonValue::array(std::move(elements));
      return true;
    }
    while (true) {
      skipSpace();
      JsonValue value;
      if (!parseValue(value, depth))
        return false;
      elements.push_back(std::move(value));
      skipSpace();
      if (pos_ < size_ && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (!expect(']'))
        return false;
      out = JsonValue::array(std::move(elements));
      return true;
    }
  }

  bool parseHex4(unsigned &code) {
    if (size_ - pos_ < 4)
      return fail("truncated \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_];
      unsigned digit;
      if (c >= '0' && c <= '9')
        digit = unsigned(c - '0');
      else if (c >= 'a' && c <= 'f')
        digit = unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        digit = unsigned(c - 'A' + 10);
      else
        return fail("expected a hex digit in \\u escape, found " +
                    describe(pos_));
      code = code * 16 + digit;
      ++pos_;
    }
    return true;
  }

  static void appendUtf8(std::string &out, unsigned code) {
    if (code < 0x80) {
      out += char(code);
    } else if (code < 0x800) {
      out += char(0xC0 | (code >> 6));
      out += char(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += char(0xE0 | (code >> 12));
      out += char(0x80 | ((code >> 6) & 0x3F));
      out += char(0x80 | (code & 0x3F));
    } else {
      out += char(0xF0 | (code >> 18));
      out += char(0x80 | ((code >> 12) & 0x3F));
      out += char(0x80 | ((code >> 6) & 0x3F));
      out += char(0x80 | (code & 0x3F));
    }
  }

  bool parseEscape(std::string &out) {
    size_t at = pos_ - 1; // The backslash.
    if (pos_ >= size_)
      return fail("unterminated string");
    char c = text_[pos_++];
    switch (c) {
    case '"':
    case '\\':
    case '/':
      out += c;
      return true;
    case 'b':
      out += '\b';
      return true;
    case 'f':
      out += '\f';
      return true;
    case 'n':
      out += '\n';
      return true;
    case 'r':
      out += '\r';
      return true;
    case 't':
      out += '\t';
      return true;
    case 'u':
      break;
    default:
      return failAt(at, "invalid escape '\\" + std::string(1, c) + "'");
    }
    unsigned code = 0;
    if (!parseHex4(code))
      return false;
    if (code >= 0xDC00 && code <= 0xDFFF)
      return failAt(at, "unpaired low surrogate in \\u escape");
    if (code >= 0xD800 && code <= 0xDBFF) {
      unsigned low = 0;
      if (size_ - pos_ < 2 || text_[pos_] != '\\' || text_[pos_ + 1] != 'u')
        return failAt(at, "unpaired high surrogate in \\u escape");
      pos_ += 2;
      if (!parseHex4(low))
        return false;
      if (low < 0xDC00 || low > 0xDFFF)
        return failAt(at, "unpaired high surrogate in \\u escape");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    appendUtf8(out, code);
    return true;
  }

  bool parseString(std::string &out) {
    size_t start = pos_;
    ++pos_; // '"'
    while (true) {
      if (pos_ >= size_)
        return failAt(start, "unterminated string");
      unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20)
        return fail("unescaped control character (" + describe(pos_) +
                    ") in a string");
      ++pos_;
      if (c == '\\') {
        if (!parseEscape(out))
          return false;
      } else {
        out += char(c);
      }
    }
  }

  bool parseNumber(JsonValue &out) {
    size_t start = pos_;
    auto digits = [&] {
      size_t first = pos_;
      while (pos_ < size_ && text_[pos_] >= '0' && text_[pos_] <= '9')
        ++pos_;
      return pos_ - first;
    };
    if (text_[pos_] == '-')
      ++pos_;
    size_t intStart = pos_;
    if (digits() == 0)
      return fail("expected a digit, found " + describe(pos_));
    if (text_[intStart] == '0' && pos_ - intStart > 1)
      return failAt(intStart, "leading zero in a number");
    bool integral = true;
    if (pos_ < size_ && text_[pos_] == '.') {
      ++pos_;
      integral = false;
      if (digits() == 0)
        return fail("expected a digit after '.', found " + describe(pos_));
    }
    if (pos_ < size_ && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      integral = false;
      if (pos_ < size_ && (text_[pos_] == '+' || text_[pos_] == '-'))
        ++pos_;
      if (digits() == 0)
        return fail("expected a digit in the exponent, found " +
                    describe(pos_));
    }
    std::string literal(text_ + start, pos_ - start);
    if (integral) {
      errno = 0;
      long long value = std::strtoll(literal.c_str(), nullptr, 10);
      if (errno == 0) {
        out = JsonValue::integer(value);
        return true;
      }
    }
    out = JsonValue::number(std::strtod(literal.c_str(), nullptr));
    return true;
  }

  const char *text_;
  size_t size_;
  size_t base_;
  size_t pos_ = 0;
  std::string problem_;
};

} // namespace

bool parseJson(const char *text, size_t size, JsonValue &out,
               std::string &problem, size_t offsetBase) {
  return Parser(text, size, offsetBase).parseDocument(out, problem);
}

} // namespace kiln::checkpoint
