//===- JsonText.h - JSON string and number literals -------------*- C++ -*-===//
//
// The one place the runtime and its tools spell values as JSON: metrics
// lines, checkpoint manifests, safetensors headers, `kiln inspect --json`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SUPPORT_JSONTEXT_H
#define KILN_RUNTIME_SUPPORT_JSONTEXT_H

#include <string>
#include <string_view>

namespace kiln {

/// `text` as a JSON string literal, with its quotes. UTF-8 is copied as it
/// is; quotes, backslashes and control characters are escaped, and a byte
/// that is not well-formed UTF-8 becomes the text \xNN (JSON is UTF-8).
std::string jsonString(std::string_view text);

/// `value` as the shortest JSON number that reads back to it ("120",
/// "0.431234866"); "null" for NaN and infinities, which JSON cannot hold.
std::string jsonNumber(double value);

} // namespace kiln

#endif // KILN_RUNTIME_SUPPORT_JSONTEXT_H
