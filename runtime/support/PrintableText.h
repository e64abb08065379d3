//===- PrintableText.h - Names from files, safe in a message ----*- C++ -*-===//

#ifndef KILN_RUNTIME_SUPPORT_PRINTABLETEXT_H
#define KILN_RUNTIME_SUPPORT_PRINTABLETEXT_H

#include <cstddef>
#include <string>
#include <string_view>

namespace kiln {

/// `text` with control characters (bytes below 0x20, 0x7F, and C1 controls
/// U+0080..U+009F) and bytes that are not well-formed UTF-8 written as
/// \xNN, so that a name read from a file cannot break an error message's
/// one line or reach the terminal raw. Other characters are kept.
std::string printableText(std::string_view text);

/// The length of the well-formed UTF-8 sequence at the start of `text`
/// (RFC 3629: no overlong forms, surrogates or code points above U+10FFFF;
/// 1 for ASCII), or 0 when it starts with none (or is empty).
size_t utf8SequenceLength(std::string_view text);

} // namespace kiln

#endif // KILN_RUNTIME_SUPPORT_PRINTABLETEXT_H
