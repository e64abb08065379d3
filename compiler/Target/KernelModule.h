//===- KernelModule.h - One function per kernel step ------------*- C++ -*-===//

#ifndef KILN_COMPILER_TARGET_KERNELMODULE_H
#define KILN_COMPILER_TARGET_KERNELMODULE_H

#include "compiler/Target/ExecutionPlan.h"

#include "mlir/IR/OwningOpRef.h"

namespace kiln {

/// The symbol of the i-th kernel function in the shared object.
std::string kernelSymbol(unsigned index);

/// A module holding a function per kernel step of `plan`, with one memref
/// argument per input buffer and one per output, in that order. Its body
/// reads the inputs as tensors, computes the step's op (constants cloned in)
/// and materializes the result into the output memref: destination-passing
/// style, so bufferization writes in place. Steps whose functions would be
/// the same code (a repeated layer's ops, the updates of same-shaped
/// variables) share one: each step's `kernel` is its function's index i,
/// named `kernelSymbol(i)`, and `plan.kernelFunctions` their number.
mlir::OwningOpRef<mlir::ModuleOp> buildKernelModule(ExecutionPlan &plan,
                                                    mlir::MLIRContext &context);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_KERNELMODULE_H
