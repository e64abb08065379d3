//===- JsonWriter.h - Streaming JSON output ---------------------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_JSONWRITER_H
#define KILN_TOOLS_KILN_JSONWRITER_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::tool {

/// Writes indented JSON into a string; commas and nesting are its business.
/// Inside an object, key() precedes each value.
class JsonWriter {
public:
  void beginObject() { open('{'); }
  void endObject() { close('}'); }
  void beginArray() { open('['); }
  void endArray() { close(']'); }
  void key(std::string_view name);
  void value(std::string_view text);
  void value(const char *text) { value(std::string_view(text)); }
  void value(int64_t number) { scalar(std::to_string(number)); }
  void value(uint64_t number) { scalar(std::to_string(number)); }
  void value(bool flag) { scalar(flag ? "true" : "false"); }
  void null() { scalar("null"); }

  /// The document, ending in a newline.
  std::string str() const { return text_ + "\n"; }

private:
  void open(char bracket);
  void close(char bracket);
  void scalar(const std::string &text);
  /// Comma and indentation before a value that is not after a key.
  void separate();

  std::string text_;
  std::vector<bool> hasItems_; ///< Per open container.
  bool afterKey_ = false;
};

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_JSONWRITER_H
