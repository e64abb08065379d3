//===- Passes.h - Optimization passes over the kiln dialect -----*- C++ -*-===//

#ifndef KILN_PASSES_OPTIMIZE_PASSES_H
#define KILN_PASSES_OPTIMIZE_PASSES_H

#include "dialects/Kiln/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "passes/Optimize/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Optimize/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_OPTIMIZE_PASSES_H
