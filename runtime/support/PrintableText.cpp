//===- PrintableText.cpp - Names from files, safe in a message ------------===//

#include "runtime/support/PrintableText.h"

#include <cstdio>

namespace kiln {

size_t utf8SequenceLength(std::string_view text) {
  if (text.empty())
    return 0;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  if (byte(0) < 0x80)
    return 1;
  unsigned char lead = byte(0);
  size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                  : lead >= 0xE0 && lead <= 0xEF ? 3
                  : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                 : 0;
  if (length == 0 || text.size() < length)
    return 0;
  // The second byte's range excludes overlong forms, surrogates and code
  // points above U+10FFFF (RFC 3629's table); the others are 0x80..0xBF.
  unsigned char low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
  unsigned char high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
  if (byte(1) < low || byte(1) > high)
    return 0;
  for (size_t i = 2; i < length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xBF)
      return 0;
  return length;
}

std::string printableText(std::string_view text) {
  std::string printable;
  printable.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7F) {
      printable += text[i++];
      continue;
    }
    // A C1 control character (U+0080..U+009F: C2 80..C2 9F) is escaped.
    size_t length = byte >= 0x80 ? utf8SequenceLength(text.substr(i)) : 0;
    if (length && !(byte == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F)) {
      printable.append(text.substr(i, length));
      i += length;
      continue;
    }
    char escaped[5];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
    printable += escaped;
    ++i;
  }
  return printable;
}

} // namespace kiln
