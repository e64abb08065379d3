//===- DiagnosticText.h - Model-file text in diagnostics --------*- C++ -*-===//
//
// How names and integer lists read from a model file (ONNX, TensorFlow)
// appear in the importers' diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_DIAGNOSTICTEXT_H
#define KILN_COMPILER_IMPORT_DIAGNOSTICTEXT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln {

/// A name read from the file as diagnostics print it: control characters
/// and bytes that are not well-formed UTF-8 become \XX escapes, so an error
/// stays one line of text whatever the file holds.
inline std::string printable(llvm::StringRef name) {
  std::string text;
  for (size_t i = 0; i < name.size(); ++i) {
    auto c = static_cast<unsigned char>(name[i]);
    if (c >= 0x80) {
      auto *at = reinterpret_cast<const llvm::UTF8 *>(name.data() + i);
      unsigned length = llvm::getNumBytesForUTF8(c);
      if (i + length <= name.size() && llvm::isLegalUTF8Sequence(at, at + length)) {
        text.append(name.data() + i, length);
        i += length - 1;
        continue;
      }
    } else if (c >= 0x20 && c != 0x7f) {
      text += static_cast<char>(c);
      continue;
    }
    text += '\\';
    text += llvm::hexdigit(c >> 4);
    text += llvm::hexdigit(c & 0xf);
  }
  return text;
}

/// "[2, 3]": a shape, axes or pads for diagnostics, every value printed as
/// it is (a TensorFlow unknown size as -1). kiln::formatShape prints
/// ShapedType::kDynamic as "?"; in a list read from a file that number is
/// a value like any other.
inline std::string formatIntList(llvm::ArrayRef<int64_t> values) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(values, os);
  os << "]";
  return text;
}

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_DIAGNOSTICTEXT_H
