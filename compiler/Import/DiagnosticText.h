//===- DiagnosticText.h - Model-file text in diagnostics --------*- C++ -*-===//
//
// How names and integer lists read from a model file (ONNX, TensorFlow)
// appear in the importers' diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_DIAGNOSTICTEXT_H
#define KILN_COMPILER_IMPORT_DIAGNOSTICTEXT_H

#include "runtime/support/PrintableText.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln {

/// A name read from the file as diagnostics print it: control characters
/// and bytes that are not well-formed UTF-8 written as \xNN
/// (kiln::printableText, as the runtime's messages), so an error stays one
/// line of text whatever the file holds.
inline std::string printable(llvm::StringRef name) {
  return printableText(std::string_view(name.data(), name.size()));
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
