//===- PrintableText.cpp - Names from files, safe in a message ------------===//

#include "runtime/support/PrintableText.h"

#include <cstdio>

namespace kiln {

namespace {

/// The length of the well-formed UTF-8 sequence of a printable character
/// (not a C1 control, U+0080..U+009F) at the start of `text`, which begins
/// with a byte of 0x80 or more; 0 when there is none.
size_t printableUtf8Length(std::string_view text) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
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
  if (lead == 0xC2 && byte(1) <= 0x9F)
    return 0; // A C1 control character.
  return length;
}

} // namespace

std::string printableText(std::string_view text) {
  std::string printable;
  printable.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7F) {
      printable += text[i++];
      continue;
    }
    if (size_t length = byte >= 0x80 ? printableUtf8Length(text.substr(i)) : 0) {
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
