//===- JsonReport.h - kilnc --report=json -----------------------*- C++ -*-===//

#ifndef KILN_COMPILER_TARGET_JSONREPORT_H
#define KILN_COMPILER_TARGET_JSONREPORT_H

#include "compiler/Support/CompileTimings.h"
#include "compiler/Target/ExecutionPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

/// Floating-point operations of one run of `func` (estimateFlops of each
/// kiln op, before lowering).
int64_t countFlops(mlir::func::FuncOp func);


/// Prints one JSON object describing the compiled artifact (docs/compiler.md
/// has the fields): the plan's memory and kernels, the train step's flops,
/// the precision, and the compile time, whole and by pass and phase.
void printJsonReport(mlir::ModuleOp module, const ExecutionPlan &plan,
                     llvm::StringRef kernelCache, const CompileTimings &timings,
                     double compileSeconds, llvm::raw_ostream &os);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_JSONREPORT_H
