//===- JsonWriter.cpp - Streaming JSON output -----------------------------===//

#include "tools/kiln/JsonWriter.h"

#include "runtime/support/JsonText.h"

#include <cstdio>

namespace kiln::tool {


void JsonWriter::separate() {
  if (afterKey_) {
    afterKey_ = false;
    return;
  }
  if (!hasItems_.empty()) {
    if (hasItems_.back())
      text_ += ",";
    hasItems_.back() = true;
    text_ += "\n" + std::string(2 * hasItems_.size(), ' ');
  }
}

void JsonWriter::open(char bracket) {
  separate();
  text_ += bracket;
  hasItems_.push_back(false);
}

void JsonWriter::close(char bracket) {
  bool hadItems = hasItems_.back();
  hasItems_.pop_back();
  if (hadItems)
    text_ += "\n" + std::string(2 * hasItems_.size(), ' ');
  text_ += bracket;
}

void JsonWriter::key(std::string_view name) {
  separate();
  text_ += jsonString(name) + ": ";
  afterKey_ = true;
}

void JsonWriter::value(std::string_view text) { scalar(jsonString(text)); }

void JsonWriter::scalar(const std::string &text) {
  separate();
  text_ += text;
}

} // namespace kiln::tool
