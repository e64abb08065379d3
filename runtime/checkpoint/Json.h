//===- Json.h - A small JSON reader and writer ------------------*- C++ -*-===//
//
// Just enough JSON for checkpoint manifests and safetensors headers: objects
// (keys in file order, duplicates refused), arrays, strings with every
// escape (\uXXXX with surrogate pairs becomes UTF-8), numbers (an integer
// that fits in int64 stays one; anything else is a double), true, false and
// null. Nesting is bounded, so hostile input cannot exhaust the stack.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CHECKPOINT_JSON_H
#define KILN_RUNTIME_CHECKPOINT_JSON_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::checkpoint {

class JsonValue {
public:
  enum class Kind { Null, Bool, Int, Double, String, Array, Object };
  using Member = std::pair<std::string, JsonValue>;

  Kind kind() const { return kind_; }
  bool isNull() const { return kind_ == Kind::Null; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isInt() const { return kind_ == Kind::Int; }
  bool isNumber() const { return isInt() || kind_ == Kind::Double; }
  bool isString() const { return kind_ == Kind::String; }
  bool isArray() const { return kind_ == Kind::Array; }
  bool isObject() const { return kind_ == Kind::Object; }

  bool asBool() const { return bool_; }
  int64_t asInt() const { return int_; }
  /// The number as a double (an Int converted).
  double asDouble() const { return isInt() ? double(int_) : double_; }
  const std::string &asString() const { return string_; }
  /// Elements of an array.
  const std::vector<JsonValue> &elements() const { return elements_; }
  /// Members of an object, in file order.
  const std::vector<Member> &members() const { return members_; }
  /// The member named `key` of an object, or null.
  const JsonValue *find(const std::string &key) const;

  /// "null", "a boolean", "an integer", "a number", "a string", "an array",
  /// "an object": for messages.
  const char *kindName() const { return kindName(kind_); }
  static const char *kindName(Kind kind);

  static JsonValue null() { return JsonValue(); }
  static JsonValue boolean(bool value);
  static JsonValue integer(int64_t value);
  static JsonValue number(double value);
  static JsonValue string(std::string value);
  static JsonValue array(std::vector<JsonValue> elements);
  static JsonValue object(std::vector<Member> members);

private:
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  std::vector<JsonValue> elements_;
  std::vector<Member> members_;
};

/// Parses all of `size` bytes at `text` as one JSON value (whitespace around
/// it allowed). On failure sets `problem` to "at byte OFFSET: WHAT", OFFSET
/// counted from `offsetBase` (where the text starts in its file), and
/// returns false.
bool parseJson(const char *text, size_t size, JsonValue &out,
               std::string &problem, size_t offsetBase = 0);

} // namespace kiln::checkpoint

#endif // KILN_RUNTIME_CHECKPOINT_JSON_H
