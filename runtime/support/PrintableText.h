//===- PrintableText.h - Names from files, safe in a message ----*- C++ -*-===//

#ifndef KILN_RUNTIME_SUPPORT_PRINTABLETEXT_H
#define KILN_RUNTIME_SUPPORT_PRINTABLETEXT_H

#include <string>
#include <string_view>

namespace kiln {

/// `text` with control characters (bytes below 0x20, and 0x7F) written as
/// \xNN, so that a name read from a file cannot break an error message's
/// one line. Other bytes, UTF-8 included, are kept.
std::string printableText(std::string_view text);

} // namespace kiln

#endif // KILN_RUNTIME_SUPPORT_PRINTABLETEXT_H
