//===- PrintableText.cpp - Names from files, safe in a message ------------===//

#include "runtime/support/PrintableText.h"

#include <cstdio>

namespace kiln {

std::string printableText(std::string_view text) {
  std::string printable;
  printable.reserve(text.size());
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7F) {
      printable += c;
      continue;
    }
    char escaped[5];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
    printable += escaped;
  }
  return printable;
}

} // namespace kiln
