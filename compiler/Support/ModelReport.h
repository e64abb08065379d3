//===- ModelReport.h - What kilnc made of a model ---------------*- C++ -*-===//

#ifndef KILN_COMPILER_SUPPORT_MODELREPORT_H
#define KILN_COMPILER_SUPPORT_MODELREPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

/// Prints a summary of a kiln module: variables and parameter count, the
/// inputs and outputs of @forward, op counts and the training setup.
void printModelReport(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace kiln

#endif // KILN_COMPILER_SUPPORT_MODELREPORT_H
