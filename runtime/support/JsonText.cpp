//===- JsonText.cpp - JSON string and number literals ---------------------===//

#include "runtime/support/JsonText.h"

#include "runtime/support/PrintableText.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kiln {

std::string jsonString(std::string_view text) {
  std::string quoted = "\"";
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      // JSON text is UTF-8: a byte that is not part of a well-formed
      // sequence is written as the text \xNN (as printableText shows it).
      size_t length = utf8SequenceLength(text.substr(i));
      if (length == 0) {
        char escape[8];
        std::snprintf(escape, sizeof escape, "\\\\x%02x", c);
        quoted += escape;
      } else {
        quoted.append(text.substr(i, length));
        i += length - 1;
      }
      continue;
    }
    switch (c) {
    case '"':
      quoted += "\\\"";
      break;
    case '\\':
      quoted += "\\\\";
      break;
    case '\n':
      quoted += "\\n";
      break;
    case '\t':
      quoted += "\\t";
      break;
    case '\r':
      quoted += "\\r";
      break;
    default:
      if (c < 0x20) {
        char escape[8];
        std::snprintf(escape, sizeof escape, "\\u%04x", c);
        quoted += escape;
      } else {
        quoted += char(c);
      }
    }
  }
  return quoted + "\"";
}

std::string jsonNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  char text[32];
  if (value == std::trunc(value) && std::fabs(value) < 9007199254740992.0) {
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(value));
    return text;
  }
  for (int digits = 9; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  return text;
}

} // namespace kiln
