//===- KernelModule.h - One function per kernel step ------------*- C++ -*-===//

#ifndef KILN_COMPILER_TARGET_KERNELMODULE_H
#define KILN_COMPILER_TARGET_KERNELMODULE_H

#include "compiler/Target/ExecutionPlan.h"

#include "mlir/IR/OwningOpRef.h"

namespace kiln {

/// The symbol of the i-th kernel in the shared object.
std::string kernelSymbol(unsigned index);

/// A module holding, for the i-th kernel step of `plan`, a function
/// `kernelSymbol(i)` with one memref argument per input buffer and one for
/// the output, in that order. Its body reads the inputs as tensors, computes
/// the step's op (constants cloned in) and materializes the result into the
/// output memref: destination-passing style, so bufferization writes in
/// place.
mlir::OwningOpRef<mlir::ModuleOp> buildKernelModule(const ExecutionPlan &plan,
                                                    mlir::MLIRContext &context);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_KERNELMODULE_H
