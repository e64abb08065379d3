//===- Passes.h - Distribution passes ---------------------------*- C++ -*-===//

#ifndef KILN_PASSES_DISTRIBUTE_PASSES_H
#define KILN_PASSES_DISTRIBUTE_PASSES_H

#include "dialects/Dist/KDistDialect.h"
#include "dialects/Kiln/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "passes/Distribute/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Distribute/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_DISTRIBUTE_PASSES_H
