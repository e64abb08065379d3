//===- OnnxNames.h - Names from an ONNX file in diagnostics -----*- C++ -*-===//

#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXNAMES_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXNAMES_H

#include "llvm/ADT/StringExtras.h"

#include <string>

namespace kiln {

/// A name read from the file as diagnostics print it: control characters
/// become \XX escapes, so an error stays on one line whatever the file holds.
inline std::string printable(llvm::StringRef name) {
  std::string text;
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      text += '\\';
      text += llvm::hexdigit(c >> 4);
      text += llvm::hexdigit(c & 0xf);
    } else {
      text += static_cast<char>(c);
    }
  }
  return text;
}

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXNAMES_H
