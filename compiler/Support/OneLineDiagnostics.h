//===- OneLineDiagnostics.h - One line per error for tools ------*- C++ -*-===//
//
// Tools report a failure as a single line a user can act on:
//
//   model.pbtxt:42:3: error: node 'fc1': 'kiln.matmul' op expects lhs columns (3) to equal rhs rows (4)
//
// The file, line and column come from the diagnostic's FileLineColLoc (no
// line when it is 0), the label ("node 'fc1'") from an enclosing NameLoc.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_SUPPORT_ONELINEDIAGNOSTICS_H
#define KILN_COMPILER_SUPPORT_ONELINEDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln {

/// "file:line:col: error: label: message" for one diagnostic.
std::string formatOneLine(mlir::Diagnostic &diag);

/// While alive, prints the first error reported on the context (and any
/// warnings) to `os`, one line each; later errors are counted, not printed,
/// so a failure reads as one line.
class OneLineDiagnosticHandler : public mlir::ScopedDiagnosticHandler {
public:
  OneLineDiagnosticHandler(mlir::MLIRContext *context, llvm::raw_ostream &os);

  unsigned getErrorCount() const { return errorCount; }
  unsigned getWarningCount() const { return warningCount; }

private:
  llvm::raw_ostream &os;
  unsigned errorCount = 0, warningCount = 0;
};

} // namespace kiln

#endif // KILN_COMPILER_SUPPORT_ONELINEDIAGNOSTICS_H
