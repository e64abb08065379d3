//===- ReferenceInterpreter.h - kiln ops evaluated in float64 ---*- C++ -*-===//
//
// The numerics tests' oracle: evaluates @forward of a kiln module op by op
// in double precision, written as plainly as possible (loops over indices,
// no reuse of the compiler's code), so that a bug in the lowering cannot
// hide in both.
//
// Integers and bools are held as doubles too (exact below 2^53). Casts to
// f16/bf16 round as the target type would.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_REFERENCE_REFERENCEINTERPRETER_H
#define KILN_TEST_UNIT_REFERENCE_REFERENCEINTERPRETER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::reference {

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> data; // row-major

  int64_t size() const;
};

/// What elementwise ops and casts do with their float results: round them
/// to the element type, as the compiled kernels do, or keep every float in
/// float64 (finite differences, where a rounding of 1e-7 divided by a step of
/// 1e-4 would swamp the derivative).
enum class Rounding { ToElementType, None };

/// Evaluates @forward with `inputs` (by kiln.name) and `variables` (by
/// symbol name); returns the results by kiln.name. Aborts the test binary
/// with a message on an op it does not know (a test bug, not a user error).
llvm::StringMap<Tensor> evaluateForward(mlir::ModuleOp module,
                                        const llvm::StringMap<Tensor> &inputs,
                                        const llvm::StringMap<Tensor> &variables,
                                        Rounding rounding = Rounding::ToElementType);

} // namespace kiln::reference

#endif // KILN_TEST_UNIT_REFERENCE_REFERENCEINTERPRETER_H
