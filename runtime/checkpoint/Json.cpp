//===- Json.cpp - Strict JSON for checkpoint files ------------------------===//
//
// parseJsonStrict drives nlohmann's SAX parser with a handler that builds the
// ordered_json on an explicit stack and refuses what the library would let
// through. The handler places its own errors through the input iterator,
// which remembers the last byte the library read.
//
//===----------------------------------------------------------------------===//

#include "runtime/checkpoint/Json.h"

#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <unordered_set>
#include <utility>

namespace kiln::checkpoint {

using nlohmann::ordered_json;

namespace {

/// A pointer into the text that records, in `*lastRead`, each byte the
/// library reads through it.
class TrackingIterator {
public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char *;
  using reference = const char &;

  TrackingIterator(const char *at, const char **lastRead)
      : at_(at), lastRead_(lastRead) {}
  reference operator*() const {
    *lastRead_ = at_;
    return *at_;
  }
  TrackingIterator &operator++() {
    ++at_;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator before = *this;
    ++at_;
    return before;
  }
  bool operator==(const TrackingIterator &other) const {
    return at_ == other.at_;
  }
  bool operator!=(const TrackingIterator &other) const {
    return at_ != other.at_;
  }

private:
  const char *at_;
  const char **lastRead_;
};

/// Where the string whose closing quote is at `close` opens: the nearest
/// quote before it that no odd run of backslashes escapes.
size_t openingQuote(const char *text, size_t close) {
  for (size_t at = close; at-- > 0;) {
    if (text[at] != '"')
      continue;
    size_t slashes = 0;
    while (slashes < at && text[at - 1 - slashes] == '\\')
      ++slashes;
    if (slashes % 2 == 0)
      return at;
  }
  return close;
}

/// nlohmann's message without its "[json.exception.parse_error.101] parse
/// error at line 1, column 7: " prefix.
std::string libraryMessage(const nlohmann::detail::exception &error) {
  std::string what = error.what();
  size_t end = what.find("] ");
  if (what.rfind("[json.exception.", 0) == 0 && end != std::string::npos)
    what.erase(0, end + 2);
  end = what.find(": ");
  if (what.rfind("parse error", 0) == 0 && end != std::string::npos)
    what.erase(0, end + 2);
  // The text quoted after "last read:" may stop inside a UTF-8 sequence.
  if (isValidUtf8(what))
    return what;
  std::string clean;
  for (unsigned char c : what) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02x", c);
    clean += c < 0x80 ? std::string(1, char(c)) : std::string(hex);
  }
  return clean;
}

class StrictBuilder {
public:
  using Json = ordered_json;

  explicit StrictBuilder(const char *text, const char *const &lastRead)
      : text_(text), lastRead_(lastRead) {}

  Json &root() { return root_; }
  /// After a failure: the offset at fault and what is wrong there.
  size_t errorOffset() const { return errorOffset_; }
  const std::string &errorMessage() const { return errorMessage_; }

  // nlohmann's json_sax interface.
  bool null() { return add(nullptr); }
  bool boolean(bool value) { return add(value); }
  bool number_integer(Json::number_integer_t value) { return add(value); }
  bool number_unsigned(Json::number_unsigned_t value) {
    // One kind of integer for every reader: int64 where it fits.
    if (value <= Json::number_unsigned_t(
                     std::numeric_limits<Json::number_integer_t>::max()))
      return add(Json::number_integer_t(value));
    return add(Json::number_float_t(value));
  }
  bool number_float(Json::number_float_t value, const Json::string_t &) {
    return add(value);
  }
  bool string(Json::string_t &value) { return add(std::move(value)); }
  bool binary(Json::binary_t &) { return failAtLastRead("binary value"); }
  bool start_object(size_t) { return open(Json::value_t::object); }
  bool start_array(size_t) { return open(Json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(Json::string_t &key) {
    if (!isNewKey(frames_.back(), key)) {
      size_t close = size_t(lastRead_ - text_);
      return fail(openingQuote(text_, close),
                  "duplicate key " + Json(key).dump());
    }
    key_ = std::move(key);
    return true;
  }
  bool parse_error(size_t position, const std::string &,
                   const nlohmann::detail::exception &error) {
    // `position` counts the bytes read, the one at fault included.
    return fail(position ? position - 1 : 0, libraryMessage(error));
  }

private:
  struct Frame {
    Json *value;
    /// The keys of a large object so far; a small one is searched.
    std::unordered_set<std::string> keys;
  };

  static bool isNewKey(Frame &object, const std::string &key) {
    const Json::object_t &members = object.value->get_ref<Json::object_t &>();
    if (members.size() < 16) {
      for (const auto &member : members)
        if (member.first == key)
          return false;
      return true;
    }
    if (object.keys.empty())
      for (const auto &member : members)
        object.keys.insert(member.first);
    return object.keys.insert(key).second;
  }

  bool fail(size_t offset, std::string message) {
    errorOffset_ = offset;
    errorMessage_ = std::move(message);
    return false;
  }
  bool failAtLastRead(const std::string &message) {
    return fail(lastRead_ ? size_t(lastRead_ - text_) : 0, message);
  }

  /// Stores `value` where the text puts it: the root, the next element of
  /// the open array or the member of the open object under the last key.
  Json &place(Json value) {
    if (frames_.empty())
      return root_ = std::move(value);
    Json &parent = *frames_.back().value;
    if (parent.is_array())
      return parent.get_ref<Json::array_t &>().emplace_back(std::move(value));
    // The key is new to this object (key() checked), so append without the
    // ordered map's linear search.
    return parent.get_ref<Json::object_t &>()
        .emplace_back(std::move(key_), std::move(value))
        .second;
  }
  bool add(Json value) {
    place(std::move(value));
    return true;
  }

  bool open(Json::value_t kind) {
    if (frames_.size() >= size_t(kMaxJsonDepth))
      return failAtLastRead("nesting deeper than " +
                            std::to_string(kMaxJsonDepth));
    frames_.push_back({&place(Json(kind)), {}});
    return true;
  }

  bool close() {
    frames_.pop_back();
    return true;
  }

  const char *text_;
  const char *const &lastRead_;
  Json root_;
  std::vector<Frame> frames_;
  std::string key_;
  size_t errorOffset_ = 0;
  std::string errorMessage_;
};

} // namespace

bool parseJsonStrict(const char *text, size_t size, ordered_json &out,
                     std::string &problem, size_t offsetBase) {
  const char *lastRead = nullptr;
  StrictBuilder builder(text, lastRead);
  bool ok = ordered_json::sax_parse(TrackingIterator(text, &lastRead),
                                    TrackingIterator(text + size, &lastRead),
                                    &builder);
  size_t offset = ok ? size : builder.errorOffset();
  std::string message = builder.errorMessage();
  // nlohmann takes a NUL byte for the end of the text; nothing valid holds
  // one, so refuse the first unless an error comes before it.
  if (const void *nul = size ? std::memchr(text, 0, size) : nullptr) {
    size_t at = size_t(static_cast<const char *>(nul) - text);
    if (at <= offset) {
      ok = false;
      offset = at;
      message = "unexpected byte 0x00";
    }
  }
  if (!ok) {
    problem = "at byte " + std::to_string(offsetBase + offset) + ": " + message;
    return false;
  }
  out = std::move(builder.root());
  return true;
}

const char *jsonKindName(ordered_json::value_t kind) {
  switch (kind) {
  case ordered_json::value_t::null:
    return "null";
  case ordered_json::value_t::boolean:
    return "a boolean";
  case ordered_json::value_t::number_integer:
  case ordered_json::value_t::number_unsigned:
    return "an integer";
  case ordered_json::value_t::number_float:
    return "a number";
  case ordered_json::value_t::string:
    return "a string";
  case ordered_json::value_t::array:
    return "an array";
  case ordered_json::value_t::object:
    return "an object";
  case ordered_json::value_t::binary:
  case ordered_json::value_t::discarded:
    break;
  }
  return "a value";
}

std::string readNonNegativeIntegers(const ordered_json &value,
                                    const std::string &field,
                                    std::vector<int64_t> &out) {
  if (!value.is_array())
    return field + " is " + jsonKindName(value) +
           ", expected an array of non-negative integers";
  out.clear();
  for (const ordered_json &element : value) {
    std::string where = field + "[" + std::to_string(out.size()) + "]";
    if (!element.is_number_integer())
      return where + " is " + jsonKindName(element) +
             ", expected a non-negative integer";
    int64_t number = element.get<int64_t>();
    if (number < 0)
      return where + " is " + std::to_string(number) +
             ", expected a non-negative integer";
    out.push_back(number);
  }
  return "";
}

bool isValidUtf8(const std::string &text) {
  try {
    (void)ordered_json(text).dump();
    return true;
  } catch (const ordered_json::type_error &) {
    return false;
  }
}

} // namespace kiln::checkpoint
