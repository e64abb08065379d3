//===- FirstErrorOnly.h - One error per failed import ------------*- C++ -*-===//
//
// The importers' contract: a malformed model file gives one error. A node
// converter checks several attributes or inputs before it gives up, and two
// of them may be bad at once; while this guard lives, the first error reaches
// the context's handlers and later ones are dropped.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_FIRSTERRORONLY_H
#define KILN_COMPILER_IMPORT_FIRSTERRORONLY_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

namespace kiln {

class FirstErrorOnly : public mlir::ScopedDiagnosticHandler {
public:
  explicit FirstErrorOnly(mlir::MLIRContext &context)
      : ScopedDiagnosticHandler(&context) {
    setHandler([this](mlir::Diagnostic &diag) -> mlir::LogicalResult {
      if (diag.getSeverity() != mlir::DiagnosticSeverity::Error)
        return mlir::failure(); // Pass warnings and notes on.
      // failure() hands the diagnostic to the handlers registered before.
      return seenError++ == 0 ? mlir::failure() : mlir::success();
    });
  }

private:
  unsigned seenError = 0;
};

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_FIRSTERRORONLY_H
