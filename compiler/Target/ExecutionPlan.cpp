//===- ExecutionPlan.cpp - From kiln functions to steps over planned memory ===//

#include "compiler/Target/ExecutionPlan.h"

#include "compiler/Target/MemoryPlan.h"
#include "dialects/Dist/KDistOps.h"
#include "dialects/Kiln/ComputePrecision.h"
#include "dialects/Kiln/FeedAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace kiln {

uint64_t tensorBytes(RankedTensorType type) {
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  return type.getNumElements() * std::max(1u, bits / 8);
}

unsigned ExecutionPlan::numKernels() const {
  unsigned count = 0;
  for (const ProgramPlan &program : programs)
    count += program.numKernels();
  return count;
}

uint64_t ExecutionPlan::arenaBytesWithoutReuse() const {
  uint64_t bytes = 0;
  for (const Slot &slot : slots)
    if (slot.region == Region::Arena)
      bytes += alignTo(slot.bytes);
  return bytes;
}

const ProgramPlan *ExecutionPlan::program(StringRef name) const {
  for (const ProgramPlan &program : programs)
    if (program.name == name)
      return &program;
  return nullptr;
}

namespace {

/// Whether a kernel for `op` may write its result over one of its operands:
/// each output element then depends only on the same element of each input.
/// (A fusion's broadcast inputs have another shape, so they are never the
/// buffer written; one that ends in a reduction or reads an input
/// transposed is no update.)
bool isElementwiseUpdate(Operation *op) {
  if (auto fusion = llvm::dyn_cast<FusionOp>(op))
    return llvm::none_of(fusion.getBody().getOps(), [](Operation &inner) {
      return llvm::isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, TransposeOp>(inner);
    });
  return op->hasTrait<OpTrait::Elementwise>() ||
         llvm::isa<ApplySgdOp, ApplyMomentumOp, ApplyAdamOp, ApplyAdagradOp>(op);
}

/// Whether `value` is a sigmoid, softmax or log_softmax of `logits`, directly, as the
/// softmax of a fused softmax cross-entropy or as a value a fusion computes.
bool isProbabilityOf(Value value, Value logits) {
  Operation *def = value.getDefiningOp();
  if (auto rows = llvm::dyn_cast_or_null<SoftmaxCrossEntropyRowsOp>(def))
    return value == rows.getProbs() && rows.getLogits() == logits;
  if (auto fusion = llvm::dyn_cast_or_null<FusionOp>(def)) {
    Value inner = fusion.getYield().getValues()[llvm::cast<OpResult>(value).getResultNumber()];
    def = inner.getDefiningOp();
    if (!llvm::isa_and_nonnull<SigmoidOp>(def))
      return false;
    // The sigmoid's operand outside: an input, or a value the fusion yields.
    Value operand = def->getOperand(0);
    if (auto arg = llvm::dyn_cast<BlockArgument>(operand))
      return fusion.getInputs()[arg.getArgNumber()] == logits;
    for (auto [inner, result] : llvm::zip(fusion.getYield().getValues(), fusion.getResults()))
      if (inner == operand && result == logits)
        return true;
    return false;
  }
  return llvm::isa_and_nonnull<SigmoidOp, SoftmaxOp, LogSoftmaxOp>(def) &&
         def->getOperand(0) == logits;
}

/// The softmax cross-entropies (plain, by rows, or with their gradient)
/// whose labels are `value` or values moved from it: reshaped, sliced,
/// concatenated or transposed, as a model that computes its own loss moves
/// its labels (transformers shifts them with a concat and a slice). Tables
/// are followed through reshapes only (slices of one input may index
/// tables of several sizes); labels through all of these.
void lossesLabelledBy(Value value, SmallVectorImpl<Operation *> &losses) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (llvm::isa<ReshapeOp, SliceOp, ConcatOp, TransposeOp>(user))
      lossesLabelledBy(user->getResult(0), losses);
    else if (llvm::isa<SoftmaxCrossEntropyOp, SoftmaxCrossEntropyRowsOp,
                       SoftmaxCrossEntropyGradRowsOp>(user) &&
             use.getOperandNumber() == 1)
      losses.push_back(user);
  }
}

/// The exclusive bound of the ids an integer value indexes: the rows of the
/// tables it gathers from, the classes it labels; 0 when it indexes nothing.
int64_t idBoundOf(Value value) {
  int64_t bound = 0;
  auto tighten = [&](int64_t size) {
    if (size > 0)
      bound = bound == 0 ? size : std::min(bound, size);
  };
  // The losses it labels, directly or moved (their classes).
  SmallVector<Operation *> losses;
  lossesLabelledBy(value, losses);
  for (Operation *loss : losses)
    tighten(llvm::cast<RankedTensorType>(loss->getOperand(0).getType()).getShape().back());
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto reshape = llvm::dyn_cast<ReshapeOp>(user)) {
      tighten(idBoundOf(reshape.getResult()));
    } else if (auto gather = llvm::dyn_cast<GatherOp>(user)) {
      if (use.getOperandNumber() == 1)
        tighten(llvm::cast<RankedTensorType>(gather.getTable().getType())
                    .getDimSize(gather.getAxis()));
    } else if (auto bag = llvm::dyn_cast<EmbeddingBagOp>(user)) {
      if (use.getOperandNumber() == 1)
        tighten(llvm::cast<RankedTensorType>(bag.getTable().getType()).getDimSize(0));
    } else if (auto pull = llvm::dyn_cast<dist::PsPullRowsOp>(user)) {
      // A fixed table's rows bound its ids; a hash table takes any id.
      auto table = SymbolTable::lookupNearestSymbolFrom<VariableOp>(pull, pull.getVariableAttr());
      auto placement = table ? table->getAttrOfType<DictionaryAttr>(dist::kPlacementAttr)
                             : DictionaryAttr();
      auto kind = placement ? placement.getAs<StringAttr>("kind") : StringAttr();
      if (table && !(kind && kind.getValue() == "hash"))
        tighten(table.getTensorType().getDimSize(0));
    } else if (auto hot = llvm::dyn_cast<OneHotOp>(user)) {
      tighten(llvm::cast<RankedTensorType>(hot.getType()).getShape().back());
    }
  }
  return bound;
}

/// Whether `value` (or a reshape of it) indexes rows of a table: a gather's,
/// an embedding bag's or a parameter server's.
bool indexesRows(Value value) {
  return llvm::any_of(value.getUses(), [](OpOperand &use) {
    Operation *user = use.getOwner();
    if (auto reshape = llvm::dyn_cast<ReshapeOp>(user))
      return indexesRows(reshape.getResult());
    return use.getOperandNumber() == 1 &&
           llvm::isa<GatherOp, EmbeddingBagOp, GatherElementsOp, dist::PsPullRowsOp>(user);
  });
}

/// The label a loss reading `value` (or values moved from it) as its labels
/// ignores (its ignore_index), which the runtime then accepts besides the
/// classes; none when the feed also indexes a table's rows, which that id
/// lies outside.
std::optional<int64_t> ignoredIdOf(Value value) {
  if (indexesRows(value))
    return std::nullopt;
  SmallVector<Operation *> losses;
  lossesLabelledBy(value, losses);
  for (Operation *loss : losses)
    if (auto ignored = loss->getAttrOfType<IntegerAttr>("ignore_index"))
      return ignored.getInt();
  return std::nullopt;
}

/// Whether `value` holds the id lists of an embedding bag (padded with -1),
/// before or after the parameter-server pass turned the bag into a pull.
bool takesPaddedIds(Value value) {
  return llvm::any_of(value.getUses(), [](OpOperand &use) {
    Operation *user = use.getOwner();
    if (auto reshape = llvm::dyn_cast<ReshapeOp>(user))
      return takesPaddedIds(reshape.getResult());
    if (llvm::isa<EmbeddingBagOp>(user))
      return use.getOperandNumber() == 1;
    auto pull = llvm::dyn_cast<dist::PsPullRowsOp>(user);
    return pull && pull.getPadded();
  });
}

/// The training facts the runtime needs, from the train spec and @forward.
TrainingInfo trainingInfo(ModuleOp module, func::FuncOp forward) {
  TrainingInfo info;
  auto spec = module->getAttrOfType<DictionaryAttr>(KilnDialect::kTrainSpecAttrName);
  auto text = [&](DictionaryAttr dict, StringRef key) {
    auto value = dict ? dict.getAs<StringAttr>(key) : StringAttr();
    return value ? value.str() : std::string();
  };
  info.loss = text(spec, "loss");
  info.label = text(spec, "label");
  info.optimizer = text(spec ? spec.getAs<DictionaryAttr>("optimizer") : DictionaryAttr(),
                        "kind");
  info.stepVariable = "global_step";
  if (auto steps = spec ? spec.getAs<IntegerAttr>("accumulate_steps") : IntegerAttr())
    info.accumulateSteps = std::max<int64_t>(1, steps.getInt());
  if (auto strategy = spec ? spec.getAs<DictionaryAttr>("strategy") : DictionaryAttr())
    if (!text(strategy, "kind").empty())
      info.strategy = text(strategy, "kind");
  info.optimizerSpec = spec ? spec.getAs<DictionaryAttr>("optimizer") : DictionaryAttr();
  info.lossKind = "other";
  auto ret = llvm::cast<func::ReturnOp>(forward.getBody().back().getTerminator());
  auto nameOf = [&](unsigned i) {
    auto name = forward.getResultAttrOfType<StringAttr>(i, KilnDialect::kNameAttrName);
    return name ? name.str() : std::string();
  };
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    if (nameOf(i) != info.loss)
      continue;
    Operation *loss = value.getDefiningOp();
    if (!loss)
      break;
    // A fused softmax cross-entropy: the mean of its positions' losses, or
    // with an ignore_index their sum over the count of kept labels.
    Value positions;
    if (auto mean = llvm::dyn_cast<ReduceMeanOp>(loss))
      positions = mean.getOperand();
    if (auto ratio = llvm::dyn_cast<DivOp>(loss))
      if (auto sum = ratio.getLhs().getDefiningOp<ReduceSumOp>())
        positions = sum.getOperand();
    if (Operation *rows = positions ? positions.getDefiningOp() : nullptr;
        llvm::isa_and_nonnull<SoftmaxCrossEntropyRowsOp, SoftmaxCrossEntropyGradRowsOp>(rows))
      loss = rows;
    if (llvm::isa<SoftmaxCrossEntropyOp, SoftmaxCrossEntropyRowsOp,
                  SoftmaxCrossEntropyGradRowsOp>(loss))
      info.lossKind = "softmax_cross_entropy";
    else if (llvm::isa<SigmoidCrossEntropyOp>(loss))
      info.lossKind = "sigmoid_cross_entropy";
    else if (llvm::isa<MeanSquaredErrorOp>(loss))
      info.lossKind = "mean_squared_error";
    // The loss's logits, or an output that is a monotonic function of them
    // (sigmoid, softmax), scores examples for evaluation.
    if (info.lossKind != "other")
      for (auto [j, other] : llvm::enumerate(ret.getOperands())) {
        bool scores =
            other == loss->getOperand(0) || isProbabilityOf(other, loss->getOperand(0));
        if (scores && info.prediction.empty())
          info.prediction = nameOf(j);
      }
  }
  for (BlockArgument arg : forward.getArguments())
    if (auto type = llvm::dyn_cast<RankedTensorType>(arg.getType()))
      if (type.getRank() > 0) {
        info.batchSize = type.getDimSize(0);
        break;
      }
  return info;
}

class Planner {
public:
  Planner(ModuleOp module, const PlanOptions &options) : module(module), options(options) {}

  FailureOr<ExecutionPlan> run();

private:
  /// The constants region's slot of each constant value, for every program.
  llvm::DenseMap<Attribute, int> constantSlots;
  int newSlot(Region region, uint64_t bytes) {
    plan.slots.push_back({region, 0, bytes});
    ranges.push_back({kNotPlaced, kNotPlaced});
    return plan.slots.size() - 1;
  }
  int newBuffer(int slot, RankedTensorType type) {
    plan.buffers.push_back({slot, type});
    return plan.buffers.size() - 1;
  }
  /// A buffer whose bytes are a fresh arena slot, alive from step `step`.
  int newArenaBuffer(RankedTensorType type, int step) {
    int slot = newSlot(Region::Arena, tensorBytes(type));
    arenaSlots.push_back(slot);
    int buffer = newBuffer(slot, type);
    ranges[slot] = {step, step};
    return buffer;
  }
  /// Keeps the buffer's slot alive through `step`.
  void use(int buffer, int step) {
    LiveRange &range = ranges[plan.buffers[buffer].slot];
    if (range.first != kNotPlaced)
      range.last = std::max(range.last, step);
  }

  /// The buffer of a value an op computes at `step`: a fresh arena slot,
  /// or its place in an in-place bucket.
  int resultBuffer(Value result, int step) {
    auto type = llvm::cast<RankedTensorType>(result.getType());
    auto member = bucketMembers.find(result);
    if (member == bucketMembers.end())
      return newArenaBuffer(type, step);
    auto [slot, offset] = member->second;
    plan.buffers.push_back({slot, type, offset});
    LiveRange &range = ranges[slot];
    if (range.first == kNotPlaced)
      range = {step, step};
    return plan.buffers.size() - 1;
  }
  /// Gives each all-reduce whose gradients nothing else reads one arena
  /// slot with the gradients side by side, so that the runtime reduces it
  /// in place: no copy out at the start, none back at the wait.
  void planBuckets(func::FuncOp func);
  void planVariables();
  LogicalResult planFunction(func::FuncOp func);
  void planFeeds(func::FuncOp func);
  LogicalResult planOp(Operation *op);
  LogicalResult planKernel(Operation *op);
  /// An f32 convolution or gradient as a library call; false if `op` is none.
  bool planConvolution(Operation *op);
  LogicalResult planAssign(AssignOp assign);
  LogicalResult planSparseApply(SparseApplyOp apply);
  /// kdist.all_reduce_start and kdist.wait; other kdist ops fail.
  LogicalResult planCollective(Operation *op);
  /// kdist.ps_pull, ps_pull_rows, ps_push and ps_push_rows; false if `op`
  /// is none of them.
  bool planParameterAccess(Operation *op);
  /// The buffer of `value`, giving a constant a constants slot on first need.
  int bufferOf(Value value);
  void planFetches(func::FuncOp func);
  /// Whether `writer` may overwrite variable `name` in place: no read of it
  /// (or view of a read) is used after `writer` or returned.
  bool canWriteInPlace(StringRef name, Operation *writer);
  /// The state buffer `result` goes to when its only use assigns it and
  /// `writer` may write there; -1 otherwise.
  int inPlaceTarget(Value result, Operation *writer);

  static constexpr int kNotPlaced = -2;
  ModuleOp module;
  const PlanOptions &options;
  ExecutionPlan plan;
  SmallVector<LiveRange> ranges; // by slot; arena slots only
  llvm::StringMap<int> variableBuffers;
  llvm::StringMap<int> variableIndex; ///< Into plan.variables.
  // Per function:
  ProgramPlan *program = nullptr;
  func::FuncOp function;
  /// The reads of each variable in `function`.
  llvm::StringMap<SmallVector<Value>> readsOf;
  DenseMap<Value, int> buffers;
  /// Gradients an all-reduce bucket reduces in place: the bucket's slot
  /// and the value's byte offset in it (planBuckets).
  DenseMap<Value, std::pair<int, uint64_t>> bucketMembers;
  /// The all-reduces whose gradients are bucket members (or views of them).
  DenseSet<Operation *> inPlaceStarts;
  /// The ids and rows a sparse all-reduce's wait gives: (tag, the start's
  /// buffer of the same part).
  DenseMap<Value, std::pair<int64_t, int>> gathered;
  SmallVector<int> arenaSlots;
  DenseSet<Operation *> assignedInPlace;
  /// The copy slot (GemmStep::copyA) of each f32 tensor two or more 16-bit
  /// products of `function` read, by the value it is a view of (a bf16
  /// product's inputs come rounded by a kiln.cast: none to convert).
  DenseMap<Value, int> copySlots;
  void planCopySlots(func::FuncOp func);
  int copySlotOf(Value operand) const;
  /// Products computed by blocks of rows (GemmStep::blockRows), planned
  /// when their reader is: by the value they compute.
  DenseMap<Value, GemmStep> blockedProducts;
  /// The rows of a block of `matmul`'s product, or 0 when it is computed
  /// whole.
  int64_t gradientBlockRows(MatmulOp matmul, const GemmStep &gemm) const;
  /// Whether `matmul`'s one reader can run as its epilogue; if so, makes
  /// `gemm` one product whose single block is all of C (GemmStep::epilogue).
  bool planAsEpilogue(MatmulOp matmul, GemmStep &gemm) const;
  /// Plans the blocked products `op` reads, just before it.
  void planBlockedProducts(Operation *op);
};

Value viewedValue(Value value);

/// The gradient operand of an optimizer update, or null.
Value gradientOf(Operation *op) {
  if (auto apply = llvm::dyn_cast<ApplySgdOp>(op))
    return apply.getGrad();
  if (auto apply = llvm::dyn_cast<ApplyMomentumOp>(op))
    return apply.getGrad();
  if (auto apply = llvm::dyn_cast<ApplyAdamOp>(op))
    return apply.getGrad();
  if (auto apply = llvm::dyn_cast<ApplyAdagradOp>(op))
    return apply.getGrad();
  return {};
}

// A product is computed by blocks when: it is one f32 [m, n] matrix (no
// batch, no 16-bit inputs); its one reader is an optimizer update taking it
// as the gradient (elementwise: row r of the update reads row r of the
// gradient only); its inputs are values of this program, not variables or
// constants (the product now runs where the update does, later: no
// variable is written in between); and there are at least two blocks.
int64_t Planner::gradientBlockRows(MatmulOp matmul, const GemmStep &gemm) const {
  if (!options.blockedGradients || gemm.batch != 1 || gemm.precision ||
      !matmul.getResult().hasOneUse() || bucketMembers.count(matmul.getResult()))
    return 0;
  Operation *reader = *matmul.getResult().getUsers().begin();
  if (gradientOf(reader) != matmul.getResult())
    return 0;
  for (Value input : {matmul.getLhs(), matmul.getRhs()})
    if (Operation *def = viewedValue(input).getDefiningOp();
        llvm::isa_and_nonnull<ReadOp, ConstantOp>(def))
      return 0;
  int64_t rowBytes = gemm.n * static_cast<int64_t>(sizeof(float));
  int64_t rows = std::max<int64_t>(kMinBlockRows, options.gradientBlockBytes / rowBytes);
  return gemm.m >= 2 * rows ? rows : 0;
}

/// Whether `op` writes a variable when it runs: an assign, a sparse update,
/// a communication op, or a kernel whose result is assigned (the planner
/// may write it straight into the variable, inPlaceTarget).
bool mayWriteState(Operation *op) {
  if (llvm::isa<AssignOp, SparseApplyOp>(op) ||
      llvm::isa_and_nonnull<dist::KDistDialect>(op->getDialect()))
    return true;
  return llvm::any_of(op->getResults(), [](Value result) {
    return llvm::any_of(result.getUsers(), [](Operation *user) { return llvm::isa<AssignOp>(user); });
  });
}

// A product runs its reader as its epilogue when: it is one matrix or a
// batch of them sharing B with A untransposed (the batches are then rows of
// one product, runtime/cpu/Gemm.cpp), f32 or 16-bit (a 16-bit product's
// threads each run it on their part's rows, runtime/cpu/LowPrecisionGemm.h),
// and in no all-reduce bucket; its one reader is elementwise (one op, or a fusion
// without reductions or transposes) over tensors of C's shape, so that row r
// of its results reads row r of C only (kiln-split-rows checks it again),
// and assigns none of them to a variable, nor reads another product
// computed by blocks; and nothing between the two communicates, nor writes a
// variable where A or B is one (the product now runs where its reader does,
// and the reader's threads write while others still read A and B).
bool Planner::planAsEpilogue(MatmulOp matmul, GemmStep &gemm) const {
  Value product = matmul.getResult();
  auto type = llvm::cast<RankedTensorType>(product.getType());
  if (!options.gemmEpilogues || !product.hasOneUse() ||
      bucketMembers.count(product) || (gemm.batch != 1 && (!gemm.sharedB || gemm.transposeA)) ||
      type.getDimSize(0) < 2)
    return false;
  Operation *reader = *product.getUsers().begin();
  if (reader->getBlock() != matmul->getBlock() || mayWriteState(reader) ||
      !(llvm::isa<FusionOp>(reader) || reader->hasTrait<OpTrait::Elementwise>()) ||
      !isElementwiseUpdate(reader))
    return false;
  for (Type result : reader->getResultTypes())
    if (llvm::cast<ShapedType>(result).getShape() != type.getShape())
      return false;
  // One block per reader: a sum of two products keeps the second whole.
  for (Value operand : reader->getOperands())
    if (blockedProducts.count(operand))
      return false;
  // A product of values kernels computed may move past variable writes (a
  // bf16 backward product reads the weight's rounded copy, not the weight
  // its optimizer update may overwrite in between); one reading a variable
  // may not, nor any product past a communication op.
  bool readsVariable = llvm::any_of(matmul->getOperands(), [](Value input) {
    return llvm::isa_and_nonnull<ReadOp>(viewedValue(input).getDefiningOp());
  });
  for (Operation *between = matmul->getNextNode(); between != reader;
       between = between->getNextNode())
    if (llvm::isa_and_nonnull<dist::KDistDialect>(between->getDialect()) ||
        (readsVariable && mayWriteState(between)))
      return false;
  gemm.m *= gemm.batch; // The batches as rows of one product.
  gemm.batch = 1;
  gemm.sharedB = false;
  gemm.rowsPerKernelRow = gemm.m / type.getDimSize(0);
  gemm.blockRows = gemm.m;
  gemm.epilogue = true;
  return true;
}

void Planner::planBlockedProducts(Operation *op) {
  for (Value operand : op->getOperands()) {
    auto blocked = blockedProducts.find(operand);
    if (blocked == blockedProducts.end())
      continue;
    GemmStep gemm = blocked->second;
    blockedProducts.erase(blocked);
    int step = program->steps.size();
    // A and B stay alive through the reader's step: its threads write their
    // rows while others may still be reading A and B.
    use(gemm.a, step + 1);
    use(gemm.b, step + 1);
    auto block = RankedTensorType::get({gemm.blockRows, gemm.n},
                                       llvm::cast<ShapedType>(operand.getType()).getElementType());
    gemm.c = newArenaBuffer(block, step);
    buffers[operand] = gemm.c;
    program->steps.push_back(gemm);
  }
}

/// The value whose buffer `value` reuses: through reshapes and
/// stop_gradient, which are views.
Value viewedValue(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto reshape = llvm::dyn_cast<ReshapeOp>(def))
      value = reshape.getOperand();
    else if (auto stop = llvm::dyn_cast<StopGradientOp>(def))
      value = stop.getOperand();
    else
      break;
  }
  return value;
}

void Planner::planCopySlots(func::FuncOp func) {
  copySlots.clear();
  DenseMap<Value, int> readers;
  SmallVector<Value> order;
  func.walk([&](MatmulOp matmul) {
    if (!computePrecisionOf(matmul))
      return;
    for (Value operand : {matmul.getLhs(), matmul.getRhs()})
      if (llvm::cast<ShapedType>(operand.getType()).getElementType().isF32() &&
          readers[viewedValue(operand)]++ == 0)
        order.push_back(viewedValue(operand));
  });
  for (Value value : order)
    if (readers[value] > 1)
      copySlots[value] = copySlots.size();
}

int Planner::copySlotOf(Value operand) const {
  auto found = copySlots.find(viewedValue(operand));
  return found == copySlots.end() ? -1 : found->second;
}

void Planner::planVariables() {
  for (auto variable : module.getOps<VariableOp>()) {
    RankedTensorType type = variable.getTensorType();
    auto placement = variable->getAttrOfType<DictionaryAttr>(dist::kPlacementAttr);
    int buffer = newBuffer(
        newSlot(placement ? Region::Remote : Region::State, placement ? 0 : tensorBytes(type)),
        type);
    variableBuffers[variable.getSymName()] = buffer;
    variableIndex[variable.getSymName()] = plan.variables.size();
    plan.variables.push_back({variable, buffer, placement});
  }
}

void Planner::planFeeds(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    auto type = llvm::cast<RankedTensorType>(arg.getType());
    int buffer = newArenaBuffer(type, /*step=*/-1);
    buffers[arg] = buffer;
    auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  KilnDialect::kNameAttrName);
    bool ids = llvm::isa<IntegerType>(type.getElementType());
    auto positive = [&](StringRef attr) -> int64_t {
      auto value = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), attr);
      return value ? value.getInt() : 0;
    };
    int64_t perExample = positive(kIdsPerExampleAttr);
    // Class ids a loss reads through generic ops carry their classes and
    // ignored label on the argument (WeightedCrossEntropy.h).
    int64_t bound = ids ? idBoundOf(arg) : 0, classes = positive(kClassCountAttr);
    if (ids && classes > 0)
      bound = bound == 0 ? classes : std::min(bound, classes);
    std::optional<int64_t> ignored = ids ? ignoredIdOf(arg) : std::nullopt;
    if (auto label = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), kIgnoredLabelAttr);
        ids && label)
      ignored = label.getInt();
    program->feeds.push_back({name ? name.str() : "arg" + std::to_string(arg.getArgNumber()),
                              buffer, bound, ids && (perExample > 0 || takesPaddedIds(arg)),
                              perExample, ids ? positive(kOffsetsStrideAttr) : 0, ignored});
  }
}

int Planner::bufferOf(Value value) {
  auto it = buffers.find(value);
  if (it != buffers.end())
    return it->second;
  // Only constants get memory lazily: the ones no kernel could inline.
  auto constant = value.getDefiningOp<ConstantOp>();
  assert(constant && "values are planned before their uses");
  auto type = llvm::cast<RankedTensorType>(constant.getType());
  // One slot a value, whichever programs read it (forward and train_step
  // both multiply by a frozen weight).
  auto data = llvm::cast<DenseElementsAttr>(constant.getValue());
  auto [known, fresh] = constantSlots.try_emplace(data, -1);
  if (fresh) {
    known->second = newSlot(Region::Constants, tensorBytes(type));
    plan.constantData[known->second] = data;
    plan.constantLocs.try_emplace(known->second, constant.getLoc());
  }
  int buffer = newBuffer(known->second, type);
  buffers[value] = buffer;
  return buffer;
}

bool Planner::canWriteInPlace(StringRef name, Operation *writer) {
  SmallVector<Value> views(readsOf.lookup(name));
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (Operation *user : view.getUsers()) {
      if (user == writer)
        continue;
      if (auto reshape = llvm::dyn_cast<ReshapeOp>(user)) {
        views.push_back(reshape.getResult());
        continue;
      }
      if (llvm::isa<func::ReturnOp>(user) || writer->isBeforeInBlock(user))
        return false;
    }
  }
  return true;
}

int Planner::inPlaceTarget(Value result, Operation *writer) {
  if (!result.hasOneUse())
    return -1;
  auto assign = llvm::dyn_cast<AssignOp>(*result.getUsers().begin());
  if (!assign || !canWriteInPlace(assign.getVariable(), writer))
    return -1;
  assignedInPlace.insert(assign);
  return variableBuffers.lookup(assign.getVariable());
}

LogicalResult Planner::planOp(Operation *op) {
  if (planParameterAccess(op))
    return success();
  if (llvm::isa_and_nonnull<dist::KDistDialect>(op->getDialect()))
    return planCollective(op);
  if (!llvm::isa_and_nonnull<KilnDialect>(op->getDialect()))
    return op->emitOpError("cannot be compiled for the CPU yet");
  for (Type type : op->getResultTypes())
    if (!llvm::cast<RankedTensorType>(type).hasStaticShape())
      return op->emitOpError("needs static shapes, got ") << type;

  if (auto read = llvm::dyn_cast<ReadOp>(op)) {
    buffers[read.getResult()] = variableBuffers.lookup(read.getVariable());
    return success();
  }
  if (llvm::isa<ConstantOp>(op))
    return success(); // Inlined into kernels, or placed by bufferOf.
  if (auto assign = llvm::dyn_cast<AssignOp>(op))
    return planAssign(assign);
  if (auto apply = llvm::dyn_cast<SparseApplyOp>(op))
    return planSparseApply(apply);
  int step = program->steps.size();
  if (auto reshape = llvm::dyn_cast<ReshapeOp>(op)) {
    // A view: the same bytes (from the same offset: a gradient in a
    // bucket), another shape.
    int source = bufferOf(reshape.getOperand());
    plan.buffers.push_back(
        {plan.buffers[source].slot, reshape.getType(), plan.buffers[source].offset});
    buffers[reshape.getResult()] = plan.buffers.size() - 1;
    return success();
  }
  if (auto stop = llvm::dyn_cast<StopGradientOp>(op)) {
    buffers[stop.getResult()] = bufferOf(stop.getOperand());
    return success();
  }
  auto resultType = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  auto matmul = llvm::dyn_cast<MatmulOp>(op);
  if (matmul && resultType.getElementType().isF32()) {
    auto lhs = llvm::cast<RankedTensorType>(matmul.getLhs().getType());
    auto rhs = llvm::cast<RankedTensorType>(matmul.getRhs().getType());
    int64_t rank = resultType.getRank();
    int64_t batch = 1;
    for (int64_t d = 0; d < rank - 2; ++d)
      batch *= resultType.getDimSize(d);
    int64_t k = matmul.getTransposeA() ? lhs.getDimSize(lhs.getRank() - 2)
                                       : lhs.getDimSize(lhs.getRank() - 1);
    GemmStep gemm{bufferOf(matmul.getLhs()),
                  bufferOf(matmul.getRhs()),
                  -1,
                  batch,
                  resultType.getDimSize(rank - 2),
                  resultType.getDimSize(rank - 1),
                  k,
                  matmul.getTransposeA(),
                  matmul.getTransposeB(),
                  rank > 2 && rhs.getRank() == 2,
                  computePrecisionOf(matmul)};
    if (gemm.precision) {
      gemm.copyA = copySlotOf(matmul.getLhs());
      gemm.copyB = copySlotOf(matmul.getRhs());
    }
    if ((gemm.blockRows = gradientBlockRows(matmul, gemm)) > 0 || planAsEpilogue(matmul, gemm)) {
      blockedProducts[matmul.getResult()] = gemm; // Planned with its reader.
      return success();
    }
    use(gemm.a, step);
    use(gemm.b, step);
    gemm.c = resultBuffer(matmul.getResult(), step);
    buffers[matmul.getResult()] = gemm.c;
    program->steps.push_back(gemm);
    return success();
  }
  if (planConvolution(op))
    return success();
  return planKernel(op);
}

/// The window attributes every conv op shares, into `step`.
template <typename OpTy> void copyWindow(OpTy op, ConvStep &step) {
  step.strides.assign(op.getStrides().begin(), op.getStrides().end());
  step.dilations.assign(op.getDilations().begin(), op.getDilations().end());
  step.padLow.assign(op.getPadLow().begin(), op.getPadLow().end());
  step.padHigh.assign(op.getPadHigh().begin(), op.getPadHigh().end());
  step.groups = op.getGroups();
}

bool Planner::planConvolution(Operation *op) {
  auto resultType = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  if (!options.convolutionLibrary || !resultType.getElementType().isF32() ||
      !llvm::isa<ConvOp, ConvBackwardDataOp, ConvBackwardFilterOp>(op))
    return false;
  int step = program->steps.size();
  ConvStep conv{ConvStep::Forward, -1, -1, -1, {}, {}, {}, {}, 1};
  if (Type precision = computePrecisionOf(op))
    conv.bf16 = precision.isBF16();
  // Each op reads two of the forward convolution's buffers and writes the
  // third.
  int *written;
  if (auto forward = llvm::dyn_cast<ConvOp>(op)) {
    copyWindow(forward, conv);
    conv.input = bufferOf(forward.getInput());
    conv.filter = bufferOf(forward.getFilter());
    written = &conv.output;
  } else if (auto data = llvm::dyn_cast<ConvBackwardDataOp>(op)) {
    copyWindow(data, conv);
    conv.kind = ConvStep::BackwardData;
    conv.output = bufferOf(data.getGrad());
    conv.filter = bufferOf(data.getFilter());
    written = &conv.input;
  } else {
    auto filter = llvm::cast<ConvBackwardFilterOp>(op);
    copyWindow(filter, conv);
    conv.kind = ConvStep::BackwardFilter;
    conv.input = bufferOf(filter.getInput());
    conv.output = bufferOf(filter.getGrad());
    written = &conv.filter;
  }
  for (int buffer : {conv.input, conv.filter, conv.output})
    if (buffer >= 0)
      use(buffer, step);
  *written = resultBuffer(op->getResult(0), step);
  buffers[op->getResult(0)] = *written;
  program->steps.push_back(std::move(conv));
  return true;
}

LogicalResult Planner::planKernel(Operation *op) {
  planBlockedProducts(op);
  int step = program->steps.size();
  KernelStep kernel{op, {}, {}, {}};
  const GemmStep *before = step > 0 ? std::get_if<GemmStep>(&program->steps.back()) : nullptr;
  for (Value operand : op->getOperands()) {
    if (operand.getDefiningOp<ConstantOp>() && !buffers.count(operand)) {
      kernel.operandInputs.push_back(-1); // Cloned into the kernel.
      continue;
    }
    int buffer = bufferOf(operand);
    auto *position = llvm::find(kernel.inputs, buffer);
    kernel.operandInputs.push_back(position - kernel.inputs.begin());
    if (position == kernel.inputs.end())
      kernel.inputs.push_back(buffer);
    if (before && before->blockRows > 0 && before->c == buffer)
      kernel.blockedInput = kernel.operandInputs.back();
    use(buffer, step);
  }
  for (Value result : op->getResults()) {
    int target = isElementwiseUpdate(op) ? inPlaceTarget(result, op) : -1;
    int buffer = target >= 0 ? target : resultBuffer(result, step);
    kernel.outputs.push_back(buffer);
    buffers[result] = buffer;
  }
  program->steps.push_back(kernel);
  return success();
}

LogicalResult Planner::planAssign(AssignOp assign) {
  if (assignedInPlace.contains(assign))
    return success();
  if (!canWriteInPlace(assign.getVariable(), assign))
    return assign.emitOpError("cannot update @")
           << assign.getVariable() << ": its old value is used after the assign";
  int step = program->steps.size();
  int source = bufferOf(assign.getValue());
  use(source, step);
  program->steps.push_back(CopyStep{source, variableBuffers.lookup(assign.getVariable())});
  return success();
}

LogicalResult Planner::planSparseApply(SparseApplyOp apply) {
  // Every result must go back into the variable its operand was read from.
  SmallVector<Value> state = {apply.getParam()};
  llvm::append_range(state, apply.getSlots());
  SparseApplyStep step{apply, -1, {}, -1, -1, -1, -1, -1};
  for (auto [operand, result] : llvm::zip(state, apply->getResults())) {
    auto read = operand.getDefiningOp<ReadOp>();
    auto assign = result.hasOneUse() ? llvm::dyn_cast<AssignOp>(*result.getUsers().begin())
                                     : AssignOp();
    if (!read || !assign || assign.getVariable() != read.getVariable() ||
        !canWriteInPlace(read.getVariable(), apply))
      return apply.emitOpError("must read its parameter and slots from variables and "
                               "assign each result back to its own variable, with no "
                               "later use of the old values");
    assignedInPlace.insert(assign);
    int buffer = variableBuffers.lookup(read.getVariable());
    buffers[result] = buffer;
    if (step.param < 0)
      step.param = buffer;
    else
      step.slots.push_back(buffer);
  }
  int index = program->steps.size();
  auto ids = gathered.find(apply.getIndices());
  auto rows = gathered.find(apply.getRows());
  if ((ids == gathered.end()) != (rows == gathered.end()) ||
      (ids != gathered.end() && ids->second.first != rows->second.first))
    return apply.emitOpError("cannot be compiled for the CPU: its ids and rows come from "
                             "different sparse all-reduces");
  if (ids != gathered.end()) {
    step.gatheredTag = ids->second.first;
    step.indices = ids->second.second;
    step.rows = rows->second.second;
  } else {
    step.indices = bufferOf(apply.getIndices());
    step.rows = bufferOf(apply.getRows());
  }
  step.lr = bufferOf(apply.getLr());
  step.step = bufferOf(apply.getStep());
  step.when = apply.getWhen() ? bufferOf(apply.getWhen()) : -1;
  for (int buffer : {step.indices, step.rows, step.lr, step.step, step.when})
    if (buffer >= 0)
      use(buffer, index);
  program->steps.push_back(step);
  return success();
}

void Planner::planBuckets(func::FuncOp func) {
  func.walk([&](dist::AllReduceStartOp start) {
    // Each gradient must be a fresh result of a computing op, read by
    // nothing but the start (the communication thread changes its bytes),
    // or a reshape of one read by nothing but the reshape (its view).
    SmallVector<Value> inputs;
    llvm::SmallDenseSet<Value> seen;
    for (Value input : start.getInputs()) {
      while (auto reshape = input.getDefiningOp<ReshapeOp>()) {
        if (!input.hasOneUse())
          return;
        input = reshape.getOperand();
      }
      inputs.push_back(input);
      Operation *def = input.getDefiningOp();
      auto type = llvm::dyn_cast<RankedTensorType>(input.getType());
      if (!def || !input.hasOneUse() || !seen.insert(input).second || !type ||
          !type.hasStaticShape() || !type.getElementType().isF32() ||
          !llvm::isa_and_nonnull<KilnDialect>(def->getDialect()) ||
          llvm::isa<ReadOp, ReshapeOp, StopGradientOp, ConstantOp, SparseApplyOp>(def) ||
          bucketMembers.count(input))
        return;
    }
    uint64_t size = 0;
    SmallVector<uint64_t> offsets;
    for (Value input : inputs) {
      offsets.push_back(size);
      size = alignTo(size + tensorBytes(llvm::cast<RankedTensorType>(input.getType())));
    }
    int slot = newSlot(Region::Arena, size);
    arenaSlots.push_back(slot);
    for (auto [input, offset] : llvm::zip(inputs, offsets))
      bucketMembers[input] = {slot, offset};
    inPlaceStarts.insert(start);
  });
}

LogicalResult Planner::planCollective(Operation *op) {
  int step = program->steps.size();
  if (auto start = llvm::dyn_cast<dist::AllReduceStartOp>(op)) {
    if (start.getKind() == dist::ReduceKind::max)
      return op->emitOpError("cannot be compiled for the CPU yet: max all-reduce");
    AllReduceStartStep planned{static_cast<int64_t>(start.getTag()), start.getKind() == dist::ReduceKind::mean, {}};
    for (Value input : start.getInputs()) {
      auto type = llvm::cast<RankedTensorType>(input.getType());
      if (!type.getElementType().isF32() || !type.hasStaticShape())
        return op->emitOpError("cannot be compiled for the CPU yet: all-reduce of ") << type;
      int buffer = bufferOf(input);
      use(buffer, step);
      planned.inputs.push_back(buffer);
    }
    program->steps.push_back(std::move(planned));
    return success();
  }
  if (auto start = llvm::dyn_cast<dist::SparseAllReduceStartOp>(op)) {
    auto rowsType = llvm::cast<RankedTensorType>(start.getRows().getType());
    if (start.getKind() == dist::ReduceKind::max || !rowsType.getElementType().isF32())
      return op->emitOpError("cannot be compiled for the CPU yet: sparse ")
             << dist::stringifyReduceKind(start.getKind()) << " of " << rowsType;
    SparseAllReduceStartStep planned{static_cast<int64_t>(start.getTag()),
                                     start.getKind() == dist::ReduceKind::mean,
                                     bufferOf(start.getIds()), bufferOf(start.getRows())};
    use(planned.indices, step);
    use(planned.rows, step);
    program->steps.push_back(planned);
    return success();
  }
  if (auto wait = llvm::dyn_cast<dist::WaitOp>(op)) {
    if (auto sparse = wait.getPending().getDefiningOp<dist::SparseAllReduceStartOp>()) {
      int64_t tag = static_cast<int64_t>(sparse.getTag());
      for (Value result : wait.getResults())
        for (OpOperand &use : result.getUses())
          if (!llvm::isa<SparseApplyOp>(use.getOwner()))
            return use.getOwner()->emitOpError(
                "cannot be compiled for the CPU yet: only kiln.sparse_apply reads a gathered "
                "sparse gradient");
      // The start's buffers live on as the gathered parts' types.
      gathered[wait.getResult(0)] = {tag, bufferOf(sparse.getIds())};
      gathered[wait.getResult(1)] = {tag, bufferOf(sparse.getRows())};
      program->steps.push_back(SparseAllReduceWaitStep{tag});
      return success();
    }
    auto start = wait.getPending().getDefiningOp<dist::AllReduceStartOp>();
    if (!start)
      return op->emitOpError("cannot be compiled for the CPU yet: only all-reduces are "
                             "waited for");
    AllReduceWaitStep planned{static_cast<int64_t>(start.getTag()), {}};
    if (inPlaceStarts.contains(start)) {
      // In place: the results are the gradients' own bytes, reduced.
      for (auto [input, result] : llvm::zip(start.getInputs(), wait.getResults())) {
        int buffer = bufferOf(input);
        use(buffer, step);
        buffers[result] = buffer;
        planned.outputs.push_back(buffer);
      }
      program->steps.push_back(std::move(planned));
      return success();
    }
    for (Value result : wait.getResults()) {
      int buffer = newArenaBuffer(llvm::cast<RankedTensorType>(result.getType()), step);
      buffers[result] = buffer;
      planned.outputs.push_back(buffer);
    }
    program->steps.push_back(std::move(planned));
    return success();
  }
  return op->emitOpError("cannot be compiled for the CPU yet");
}

bool Planner::planParameterAccess(Operation *op) {
  int step = program->steps.size();
  auto result = [&](Value value) {
    int buffer = newArenaBuffer(llvm::cast<RankedTensorType>(value.getType()), step);
    buffers[value] = buffer;
    return buffer;
  };
  auto read = [&](Value value) {
    int buffer = bufferOf(value);
    use(buffer, step);
    return buffer;
  };
  if (auto pull = llvm::dyn_cast<dist::PsPullOp>(op)) {
    program->steps.push_back(ParameterStep{ParameterStep::Pull,
                                           variableIndex.lookup(pull.getVariable()),
                                           result(pull.getResult())});
  } else if (auto pull = llvm::dyn_cast<dist::PsPullRowsOp>(op)) {
    int ids = read(pull.getIds());
    program->steps.push_back(ParameterStep{ParameterStep::PullRows,
                                           variableIndex.lookup(pull.getVariable()),
                                           result(pull.getResult()), ids});
  } else if (auto push = llvm::dyn_cast<dist::PsPushOp>(op)) {
    program->steps.push_back(ParameterStep{ParameterStep::Push,
                                           variableIndex.lookup(push.getVariable()),
                                           read(push.getGradient())});
  } else if (auto push = llvm::dyn_cast<dist::PsPushRowsOp>(op)) {
    int ids = read(push.getIds());
    program->steps.push_back(ParameterStep{ParameterStep::PushRows,
                                           variableIndex.lookup(push.getVariable()),
                                           read(push.getRows()), ids});
  } else {
    return false;
  }
  return true;
}

void Planner::planFetches(func::FuncOp func) {
  auto ret = llvm::cast<func::ReturnOp>(func.getBody().back().getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    int buffer = bufferOf(value);
    use(buffer, std::numeric_limits<int>::max());
    auto name = func.getResultAttrOfType<StringAttr>(i, KilnDialect::kNameAttrName);
    program->fetches.push_back({name ? name.str() : "result" + std::to_string(i), buffer});
  }
}

LogicalResult Planner::planFunction(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("must have one block to be compiled");
  plan.programs.push_back({func.getSymName().str(), {}, {}, {}});
  program = &plan.programs.back();
  function = func;
  readsOf.clear();
  func.walk([&](ReadOp read) { readsOf[read.getVariable()].push_back(read.getResult()); });
  buffers.clear();
  gathered.clear();
  bucketMembers.clear();
  inPlaceStarts.clear();
  arenaSlots.clear();
  assignedInPlace.clear();
  blockedProducts.clear();
  planCopySlots(func);
  planFeeds(func);
  planBuckets(func);
  for (Operation &op : func.getBody().front().without_terminator())
    if (failed(planOp(&op)))
      return failure();
  planFetches(func);
  plan.arenaBytes =
      std::max(plan.arenaBytes, assignArenaOffsets(plan.slots, arenaSlots, ranges));
  return success();
}

FailureOr<ExecutionPlan> Planner::run() {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward || forward.isExternal())
    return module.emitError("the module has no @forward function to compile");
  planVariables();
  if (failed(planFunction(forward)))
    return failure();
  if (auto train = module.lookupSymbol<func::FuncOp>("train_step")) {
    auto accumulate = module.lookupSymbol<func::FuncOp>("accumulate_step");
    if ((accumulate && failed(planFunction(accumulate))) || failed(planFunction(train)))
      return failure();
    plan.training = trainingInfo(module, forward);
  }
  uint64_t state = 0, constants = 0;
  for (Slot &slot : plan.slots) {
    if (slot.region == Region::State) {
      slot.offset = state;
      state = alignTo(state + slot.bytes);
    } else if (slot.region == Region::Constants) {
      slot.offset = constants;
      constants = alignTo(constants + slot.bytes);
    }
  }
  plan.stateBytes = state;
  plan.constantsBytes = constants;
  return std::move(plan);
}

} // namespace

FailureOr<ExecutionPlan> planModule(ModuleOp module, const PlanOptions &options) {
  return Planner(module, options).run();
}

} // namespace kiln
