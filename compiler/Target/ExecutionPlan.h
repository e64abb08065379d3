//===- ExecutionPlan.h - From @forward to steps over planned memory -*- C++ -*-===//
//
// The plan turns the kiln function @forward into what the runtime executes:
//
//   - memory: every tensor is a Buffer (a typed view) of a Slot (a byte
//     range of the arena, the state or the constants region). Variables get
//     state slots; kiln.constant values that must live in memory get
//     constants slots; feeds and computed values get arena slots whose
//     offsets come from their live ranges, so slots of values that are never
//     alive together share bytes. A reshape is a view: a new buffer of its
//     operand's slot.
//   - steps, in program order: a GEMM library call for each f32 matmul, and a
//     compiled kernel for every other op. Constants a kernel reads are cloned
//     into it rather than given memory.
//
// It is computed from the IR in one pass, with no allocation at run time.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TARGET_EXECUTIONPLAN_H
#define KILN_COMPILER_TARGET_EXECUTIONPLAN_H

#include "dialects/Kiln/KilnOps.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <variant>

namespace kiln {

enum class Region { Arena, State, Constants };

/// Alignment of every slot, in bytes.
constexpr uint64_t kSlotAlignment = 64;

/// A byte range of a region.
struct Slot {
  Region region;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

/// A tensor in memory: a typed view of a slot.
struct Buffer {
  int slot;
  mlir::RankedTensorType type;
};

/// A compiled kernel computing `op`: it reads the distinct buffers `inputs`
/// and writes the buffer `output`. `operandInputs[i]` is the position in
/// `inputs` of the op's operand i, or -1 for a constant cloned into the
/// kernel.
struct KernelStep {
  mlir::Operation *op;
  llvm::SmallVector<int> inputs;
  llvm::SmallVector<int> operandInputs;
  int output;
};

/// C = A x B through the GEMM library (see artifact.fbs, table Gemm).
struct GemmStep {
  int a, b, c;
  int64_t batch, m, n, k;
  bool transposeA, transposeB, sharedB;
};

using Step = std::variant<KernelStep, GemmStep>;

/// A variable's state buffer and initializer.
struct PlannedVariable {
  VariableOp op;
  int buffer;
};

struct ExecutionPlan {
  llvm::SmallVector<Slot> slots;
  llvm::SmallVector<Buffer> buffers;
  llvm::SmallVector<Step> steps;
  llvm::SmallVector<PlannedVariable> variables;
  /// Contents of the constants region's slots, by slot index.
  llvm::DenseMap<int, mlir::DenseElementsAttr> constantData;
  /// Model input and output names with their buffers, in @forward's order.
  llvm::SmallVector<std::pair<std::string, int>> feeds, fetches;
  uint64_t arenaBytes = 0, stateBytes = 0, constantsBytes = 0;

  unsigned numKernels() const;
};

/// Plans @forward of `module`. Emits one error and fails on what the plan
/// cannot place (dynamic shapes, ops outside the kiln dialect).
mlir::FailureOr<ExecutionPlan> planForward(mlir::ModuleOp module);

/// Bytes of a tensor in memory (bools take a byte each).
uint64_t tensorBytes(mlir::RankedTensorType type);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_EXECUTIONPLAN_H
