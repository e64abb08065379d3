//===- ExecutionPlan.h - From @forward to steps over planned memory -*- C++ -*-===//
//
// The plan turns the kiln functions @forward and, in a training model,
// @train_step into what the runtime executes (one program each):
//
//   - memory: every tensor is a Buffer (a typed view) of a Slot (a byte
//     range of the arena, the state or the constants region). Variables get
//     state slots; kiln.constant values that must live in memory get
//     constants slots; feeds and computed values get arena slots whose
//     offsets come from their live ranges, so slots of values that are never
//     alive together share bytes. A reshape is a view: a new buffer of its
//     operand's slot.
//   - steps, in program order: a GEMM library call for each f32 matmul, a
//     convolution library call for each f32 convolution and its gradients,
//     and a compiled kernel for every other op. Constants a kernel reads are cloned
//     into it rather than given memory.
//
//   - updates: a kiln.assign whose value an elementwise kernel computes
//     becomes that kernel writing straight into the variable's state buffer
//     (when nothing reads the old value later); any other assign is a copy.
//     kiln.sparse_apply is a runtime step working in place on its variables.
//
// Programs share the state and constants regions; each has its own arena
// layout, and the arena is as large as the largest. It is computed from the
// IR in one pass per program, with no allocation at run time.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TARGET_EXECUTIONPLAN_H
#define KILN_COMPILER_TARGET_EXECUTIONPLAN_H

#include "dialects/Kiln/KilnOps.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln {

/// Where a slot's bytes are; Remote: a parameter-server variable, no memory
/// in the process (its buffer only describes the variable's shape).
enum class Region { Arena, State, Constants, Remote };

/// Alignment of every slot, in bytes.
constexpr uint64_t kSlotAlignment = 64;

/// A byte range of a region.
struct Slot {
  Region region;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

/// A tensor in memory: a typed view of a slot, from byte `offset` of it (a
/// multiple of kSlotAlignment; non-zero only for the gradients an
/// all-reduce bucket lays out side by side in one slot).
struct Buffer {
  int slot;
  mlir::RankedTensorType type;
  uint64_t offset = 0;
};

/// A compiled kernel computing `op`: it reads the distinct buffers `inputs`
/// and writes the buffers `outputs`, one per result. `operandInputs[i]` is
/// the position in `inputs` of the op's operand i, or -1 for a constant
/// cloned into the kernel. An output may be one of the inputs (an
/// elementwise update in place). `rows` > 0: the kernel can compute any
/// range of its rows (kiln-split-rows), so the runtime may split it over
/// threads. `kernel` is its function in the kernel module (buildKernelModule
/// sets it): steps whose kernels are the same code share one.
struct KernelStep {
  mlir::Operation *op;
  llvm::SmallVector<int> inputs;
  llvm::SmallVector<int> operandInputs;
  llvm::SmallVector<int> outputs;
  int64_t rows = 0;
  int kernel = -1;
  /// >= 0: the position in `inputs` of the one block of rows of a product
  /// the GemmStep just before this one computes (GemmStep::blockRows): the
  /// kernel's argument keeps the product's whole type and is read by rows.
  int blockedInput = -1;
};

/// C = A x B through the GEMM library (see artifact.fbs, table Gemm).
struct GemmStep {
  int a, b, c;
  int64_t batch, m, n, k;
  bool transposeA, transposeB, sharedB;
  /// The type A and B are rounded to (kiln.compute_precision), or null: f32.
  /// A or B may be a buffer of that type already (rounded by a kernel).
  mlir::Type precision = {};
  /// With a precision: the copy slot of A's and B's converted values when
  /// another product of the program reads the same tensor (artifact.fbs,
  /// Gemm.a_copy), else -1.
  int copyA = -1, copyB = -1;
  /// > 0: C is computed this many rows at a time into `c`, one block of
  /// rows, each block then handed to the KernelStep that follows (its
  /// `blockedInput`) before the next is computed (artifact.fbs,
  /// BlockedGemm): a weight gradient its optimizer update alone reads (C is
  /// never whole), or a product with its elementwise epilogue (`epilogue`).
  int64_t blockRows = 0;
  /// The rows of C each row of the following kernel's row entry covers: C's
  /// leading dimensions past the first, folded into its rows (1 for a
  /// matrix).
  int64_t rowsPerKernelRow = 1;
  /// The kernel that follows is the product's elementwise epilogue (bias,
  /// activation, residual), run by each thread on the rows it has just
  /// computed; false: a blocked gradient's optimizer update.
  bool epilogue = false;
};

/// A convolution or one of its gradients through the library (see
/// artifact.fbs, table Convolution): `input`, `filter` and `output` are the
/// forward convolution's three buffers; `kind` says which one is written.
struct ConvStep {
  enum Kind { Forward, BackwardData, BackwardFilter } kind;
  int input, filter, output;
  std::vector<int64_t> strides, dilations, padLow, padHigh;
  int64_t groups;
  bool bf16 = false; ///< The two buffers read rounded to bf16 (kiln.compute_precision).
};

/// dst = src, same bytes.
struct CopyStep {
  int src, dst;
};

/// A kiln.sparse_apply run by the runtime in place on state buffers. With
/// `gatheredTag` >= 0 its ids and rows are those the sparse all-reduce of
/// that tag gathered (their number known at run time); `indices` and `rows`
/// are then this replica's share, for their types.
struct SparseApplyStep {
  SparseApplyOp op;
  int param;
  llvm::SmallVector<int> slots;
  int indices, rows, lr, step;
  int when = -1; ///< An i1 scalar: the update runs where it is true (-1: always).
  int64_t gatheredTag = -1;
};

/// A kdist.all_reduce_start: `inputs` are handed to the collective layer
/// (copied out at this step), reduced over the replicas as `mean` says
/// (else sum) under `tag`.
struct AllReduceStartStep {
  int64_t tag;
  bool mean;
  llvm::SmallVector<int> inputs;
};

/// The kdist.wait of the all-reduce started under `tag`: its results land
/// in `outputs`, one per input of the start.
struct AllReduceWaitStep {
  int64_t tag;
  llvm::SmallVector<int> outputs;
};

/// A kdist.sparse_all_reduce_start: every replica's ids and rows
/// gathered under `tag`, the rows divided by their number for `mean`.
struct SparseAllReduceStartStep {
  int64_t tag;
  bool mean;
  int indices, rows;
};

/// Its kdist.wait: the gathered ids and rows stay with the runtime, for the
/// SparseApplySteps that name the tag.
struct SparseAllReduceWaitStep {
  int64_t tag;
};

/// A kdist.ps_pull, ps_pull_rows, ps_push or ps_push_rows: `variable`
/// indexes ExecutionPlan::variables; `data` is the pulled result, or the
/// pushed gradient or rows; `ids` the rows' ids (-1 for dense ones).
struct ParameterStep {
  enum Kind { Pull, PullRows, Push, PushRows } kind;
  int variable;
  int data;
  int ids = -1;
};

using Step = std::variant<KernelStep, GemmStep, ConvStep, CopyStep, SparseApplyStep,
                          AllReduceStartStep, AllReduceWaitStep, SparseAllReduceStartStep,
                          SparseAllReduceWaitStep, ParameterStep>;

/// A model input or output and its buffer. For an integer input, `idBound`
/// is the exclusive bound its values index (an embedding table's rows, a
/// classifier's classes); 0 when it indexes nothing. `paddedIds`: it feeds
/// an embedding bag, whose id lists are padded with -1. `idsPerExample` and
/// `offsetsStride`: an EmbeddingBag's flat ids and its offsets, which
/// training fills as dialects/Kiln/FeedAttrs.h says; 0 otherwise.
/// `ignoredId`: the labels of a loss with an ignore_index, which is allowed
/// besides [0, idBound).
struct NamedBuffer {
  std::string name;
  int buffer;
  int64_t idBound = 0;
  bool paddedIds = false;
  int64_t idsPerExample = 0;
  int64_t offsetsStride = 0;
  std::optional<int64_t> ignoredId = std::nullopt;
};

/// One function as a program: steps in order, its inputs and outputs.
struct ProgramPlan {
  std::string name;
  llvm::SmallVector<Step> steps;
  llvm::SmallVector<NamedBuffer> feeds, fetches;

  /// How many steps are of kind `StepT` (KernelStep, GemmStep, ...).
  template <typename StepT> unsigned count() const {
    return llvm::count_if(steps, [](const Step &step) { return std::holds_alternative<StepT>(step); });
  }
  unsigned numKernels() const { return count<KernelStep>(); }
  /// How many products are computed by blocks of rows (GemmStep::blockRows).
  unsigned numBlockedGemms() const {
    return llvm::count_if(steps, [](const Step &step) {
      const auto *gemm = std::get_if<GemmStep>(&step);
      return gemm && gemm->blockRows > 0 && !gemm->epilogue;
    });
  }
  /// How many products run their elementwise epilogue on the rows each
  /// thread has computed (GemmStep::epilogue).
  unsigned numEpilogueGemms() const {
    return llvm::count_if(steps, [](const Step &step) {
      const auto *gemm = std::get_if<GemmStep>(&step);
      return gemm && gemm->epilogue;
    });
  }
  /// How many kernels the runtime may split into rows (KernelStep::rows),
  /// not counting the updates of blocked products (called on each block).
  unsigned numRowParallelKernels() const {
    return llvm::count_if(steps, [](const Step &step) {
      const auto *kernel = std::get_if<KernelStep>(&step);
      return kernel && kernel->rows > 0 && kernel->blockedInput < 0;
    });
  }
};

/// A variable's state buffer and initializer; with `placement` (its
/// kdist.placement), a remote buffer: the variable lives on parameter servers.
struct PlannedVariable {
  VariableOp op;
  int buffer;
  mlir::DictionaryAttr placement;
};

/// What a training run needs to know (artifact.fbs, table Training).
struct TrainingInfo {
  std::string loss, label, lossKind, prediction, optimizer, stepVariable;
  int64_t batchSize = 0;
  /// Micro-batches per update: above 1, `accumulate_step` runs on each
  /// micro-batch and `train_step` (without feeds) makes the update.
  int64_t accumulateSteps = 1;
  /// "single", "all_reduce" (data-parallel: train_step averages the
  /// gradients and the loss over the replicas) or "parameter_server".
  std::string strategy = "single";
  /// The train spec's optimizer dictionary (parameter_server: what the
  /// servers apply).
  mlir::DictionaryAttr optimizerSpec;
};

struct ExecutionPlan {
  llvm::SmallVector<Slot> slots;
  llvm::SmallVector<Buffer> buffers;
  llvm::SmallVector<PlannedVariable> variables;
  /// Contents of the constants region's slots, by slot index, and where
  /// each constant is in the model.
  llvm::DenseMap<int, mlir::DenseElementsAttr> constantData;
  llvm::DenseMap<int, mlir::Location> constantLocs;
  /// "forward", then "accumulate_step" and "train_step" when the module has
  /// them.
  std::vector<ProgramPlan> programs;
  /// Set when the module has a @train_step.
  std::optional<TrainingInfo> training;
  uint64_t arenaBytes = 0, stateBytes = 0, constantsBytes = 0;
  /// The distinct kernel functions the kernel steps call (buildKernelModule).
  unsigned kernelFunctions = 0;

  /// Kernel steps of all programs.
  unsigned numKernels() const;
  /// The arena the slots would take with no reuse (each aligned), against
  /// which `arenaBytes` shows what the memory plan saved.
  uint64_t arenaBytesWithoutReuse() const;
  const ProgramPlan *program(llvm::StringRef name) const;
};

/// Choices the plan leaves to its caller.
struct PlanOptions {
  /// f32 convolutions as library calls (oneDNN); false compiles them as
  /// kernels like every other op (kilnc --conv=generated).
  bool convolutionLibrary = true;
  /// Kernels whose rows are independent, with at least
  /// `rowParallelMinIterations` innermost iterations, may run split over
  /// threads (kiln-split-rows, KernelStep::rows); false keeps every kernel
  /// whole (kilnc --row-parallel=off).
  bool rowParallel = true;
  int64_t rowParallelMinIterations = 262144;
  /// A weight gradient that only its optimizer update reads is computed by
  /// blocks of rows, each updated before the next (GemmStep::blockRows);
  /// false computes it whole (kilnc --blocked-gradients=off).
  bool blockedGradients = true;
  /// The bytes a block of a blocked gradient holds at most (whole rows,
  /// at least kMinBlockRows of them).
  uint64_t gradientBlockBytes = 128 * 1024;
  /// An f32 product whose one reader is an elementwise kernel (a fusion of
  /// bias, activation, residual add) runs that kernel as its epilogue: each
  /// thread computes its rows of the product, then the kernel on the same
  /// rows while they are in its cache, in one parallel region
  /// (GemmStep::epilogue); false keeps them two steps (kilnc
  /// --gemm-epilogues=off, and --fusion=off).
  bool gemmEpilogues = true;
};

/// The fewest rows a blocked gradient's block has: four threads' worth of
/// 16 rows each. The GEMM library sums fewer rows in another order
/// (runtime/cpu/Gemm.cpp) and the blocks must sum as the whole product does,
/// so a block of 16 rows would run on one thread (measured: the exported
/// CNN's [128, 3136] gradient by blocks of 16 rows took 0.56 ms against
/// 0.37 whole on two threads).
constexpr int64_t kMinBlockRows = 64;

/// Plans @forward of `module`, and @train_step when there is one. Emits one
/// error and fails on what the plan cannot place (dynamic shapes, ops
/// outside the kiln dialect, an update that cannot happen in place).
mlir::FailureOr<ExecutionPlan> planModule(mlir::ModuleOp module,
                                          const PlanOptions &options = {});

/// Bytes of a tensor in memory (bools take a byte each).
uint64_t tensorBytes(mlir::RankedTensorType type);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_EXECUTIONPLAN_H
