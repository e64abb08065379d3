//===- kilnc.cpp - The kiln compiler driver -------------------------------===//
//
//   kilnc MODEL (.pb | .pbtxt | .onnx | .mlir) [--emit=artifact|llvm|mlir]
//         [-o OUT] [--report[=json]] [--from=kiln|tensorflow|onnx|mlir]
//         [--input-shape NAME=D0,D1,...]... [--outputs=NODE,...]
//         [--train [--loss=KIND --output=NAME --label=NAME]
//                  [--optimizer=KIND] [--lr=F] [--batch=N]
//                  [--accumulate-steps=N]
//                  [--strategy=single|data-parallel [--bucket-bytes=N]]
//                  [--strategy=parameter-server [--partitioner=...]
//                   [--hash-embeddings=A,B] [--row-split=div|mod]]]
//
// Imports the model, verifies it, runs the import clean-up pipeline and
// writes the kiln IR (--emit=mlir), or compiles it for the host CPU and
// writes the kernels' LLVM IR (--emit=llvm) or the artifact (the default).
// --report prints a summary on stderr; --report=json one JSON object on
// stdout (with -o FILE.kiln). Every failure is one line on stderr and exit code 1;
// the output file is written whole (temporary file + rename) or not at all.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Graph/TrainFlags.h"
#include "compiler/Import/LossFromFlags.h"
#include "compiler/Import/ModelImporter.h"
#include "compiler/Import/Onnx/OnnxModelFile.h"
#include "dialects/Kiln/KilnDialect.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Target/ArtifactCache.h"
#include "compiler/Target/FitMemoryBudget.h"
#include "compiler/RegisterAll.h"
#include "compiler/Support/CompileTimings.h"
#include "compiler/Support/ModelReport.h"
#include "compiler/Support/OneLineDiagnostics.h"
#include "compiler/Target/ArtifactWriter.h"
#include "compiler/Target/CompileToArtifact.h"
#include "compiler/Target/JsonReport.h"
#include "compiler/Target/KernelModule.h"
#include "compiler/Target/PlanReport.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <utility>

#include <google/protobuf/stubs/logging.h>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Emit { Mlir, Kernels, Llvm, Artifact };

/// kilnc's own options: --help lists these and the training ones only
/// (LLVM's and MLIR's stay accepted; --help-hidden lists them).
cl::OptionCategory kilncCategory("kilnc options");
cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                               cl::desc("<model: .pb, .pbtxt, .onnx or .mlir>"),
                               cl::cat(kilncCategory));
cl::opt<std::string> outputPath("o", cl::desc("Output file ('-' = stdout)"),
                                cl::value_desc("file"), cl::init("-"), cl::cat(kilncCategory));
cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::Artifact),
    cl::values(clEnumValN(Emit::Mlir, "mlir", "kiln dialect IR after import"),
               clEnumValN(Emit::Kernels, "kernels",
                          "the kernel functions before lowering"),
               clEnumValN(Emit::Llvm, "llvm", "the kernels' optimized LLVM IR"),
               clEnumValN(Emit::Artifact, "artifact",
                          "the compiled model for `kiln run` (needs -o)")), cl::cat(kilncCategory));
cl::opt<std::string> target("target", cl::desc("Target to compile for"),
                            cl::value_desc("cpu"), cl::init("cpu"), cl::cat(kilncCategory));
cl::opt<std::string> targetCpu(
    "target-cpu",
    cl::desc("CPU the kernels may assume: 'host' (this machine, the default) "
             "or an LLVM CPU name such as x86-64-v3 for portable artifacts"),
    cl::value_desc("name"), cl::init("host"), cl::cat(kilncCategory));
cl::list<std::string> dims("dim",
                           cl::desc("Size of a symbolic ONNX input dimension"),
                           cl::value_desc("NAME=SIZE"), cl::cat(kilncCategory));
cl::opt<std::string> fromFormat(
    "from",
    cl::desc("The model's format: kiln, tensorflow, onnx or mlir (default: by "
             "the extension; .pb/.pbtxt by the content)"),
    cl::value_desc("format"), cl::cat(kilncCategory));
cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Shape of a TensorFlow Placeholder with unknown sizes"),
    cl::value_desc("NAME=D0,D1,..."), cl::cat(kilncCategory));
cl::list<std::string> graphOutputs(
    "outputs",
    cl::desc("The TensorFlow nodes the model returns (default: those nothing "
             "consumes)"),
    cl::value_desc("NODE,..."), cl::CommaSeparated, cl::cat(kilncCategory));
cl::opt<bool> noCache("no-cache",
                      cl::desc("Compile the kernels with LLVM even when the kernel cache "
                               "($KILN_CACHE_DIR, else ~/.cache/kiln) holds them"),
                               cl::cat(kilncCategory));

enum class Report { None, Text, Json };
cl::opt<Report> report(
    "report", cl::desc("Describe the compiled model"), cl::ValueOptional,
    cl::init(Report::None),
    cl::values(clEnumValN(Report::Text, "", "a readable summary on stderr (--report)"),
               clEnumValN(Report::Text, "text", "the same"),
               clEnumValN(Report::Json, "json",
                          "one JSON object on stdout: memory, kernels, flops, compile "
                          "time by pass (with -o FILE.kiln)")), cl::cat(kilncCategory));
cl::opt<bool> inferenceOnly(
    "inference-only",
    cl::desc("Compile only @forward even when the model has a train spec "
             "(by default such a model also gets a train_step program)"), cl::cat(kilncCategory));
cl::OptionCategory trainCategory(
    "Training (a model without a train spec, such as ONNX, or overrides of a "
    "graph file's spec)");
cl::opt<bool> train("train", cl::desc("Compile a training step"),
                    cl::cat(trainCategory));
cl::opt<std::string> lossKind(
    "loss",
    cl::desc("Loss to add, the mean over the batch, of logits (softmax_cross_entropy, "
             "sigmoid_cross_entropy), log-probabilities (nll: PyTorch's F.nll_loss after "
             "F.log_softmax), probabilities (sparse_categorical_crossentropy, "
             "categorical_crossentropy, binary_crossentropy: Keras' from_logits=False, a "
             "model ending in a softmax or a sigmoid) or values (mse); model: --output "
             "names an output the model computes its own loss in (a transformers model "
             "given labels)"),
    cl::value_desc("softmax_cross_entropy|sigmoid_cross_entropy|nll|"
                   "sparse_categorical_crossentropy|categorical_crossentropy|"
                   "binary_crossentropy|mse|model"),
    cl::cat(trainCategory));
cl::opt<std::string> lossOutput(
    "output", cl::desc("The model output the loss reads (default: the only one)"),
    cl::value_desc("name"), cl::cat(trainCategory));
cl::opt<std::string> labelName(
    "label",
    cl::desc("The input holding the targets, added if the model has none "
             "(default: label)"),
    cl::value_desc("name"), cl::cat(trainCategory));
cl::opt<int> classAxisFlag(
    "class-axis",
    cl::desc("A loss over classes: the output's axis of classes (default: the last; "
             "1 for PyTorch's F.cross_entropy over [N, C, H, W], a segmentation model's)"),
    cl::value_desc("axis"), cl::cat(trainCategory));
cl::opt<int> ignoreIndexFlag(
    "ignore-index",
    cl::desc("A loss over class ids: positions whose label is this value are left out of the "
             "loss and its gradient (PyTorch's ignore_index, often -100; a mask's 255)"),
    cl::value_desc("label"), cl::cat(trainCategory));
cl::opt<double> labelSmoothingFlag(
    "label-smoothing",
    cl::desc("softmax_cross_entropy, categorical_crossentropy: the target is (1 - E) "
             "one_hot(label) + E / classes, class probabilities t (1 - E) t + E / classes "
             "(PyTorch's label_smoothing; torchvision's recipes use 0.1), E in [0, 1]"),
    cl::value_desc("E"), cl::cat(trainCategory));
cl::opt<bool> classProbabilitiesFlag(
    "class-probabilities",
    cl::desc("softmax_cross_entropy: the labels are class probabilities shaped like the "
             "logits (float), not class ids: F.cross_entropy of a float target (mixup, "
             "cutmix, distillation), tf.nn.softmax_cross_entropy_with_logits"),
    cl::cat(trainCategory));
cl::opt<std::string> classWeightsFlag(
    "class-weights",
    cl::desc("A loss over classes: each class's weight, comma-separated (PyTorch's weight=: "
             "the weighted mean over the labels' weights; with a Keras loss, Keras' "
             "class_weight: each position's loss times its class's weight, over the positions)"),
    cl::value_desc("w0,w1,..."), cl::cat(trainCategory));
cl::opt<std::string> posWeightFlag(
    "pos-weight",
    cl::desc("sigmoid_cross_entropy: the weight of the positive term, one for every label "
             "column or one each, comma-separated (PyTorch's BCEWithLogitsLoss(pos_weight=))"),
    cl::value_desc("p|p0,p1,..."), cl::cat(trainCategory));
cl::opt<std::string> optimizerKind(
    "optimizer", cl::desc("Optimizer"),
    cl::value_desc("sgd|momentum|adam|adamw|adagrad"), cl::cat(trainCategory));
cl::opt<double> learningRate("lr", cl::desc("Base learning rate"),
                             cl::value_desc("rate"), cl::cat(trainCategory));
cl::opt<int64_t> batchSize(
    "batch",
    cl::desc("Examples per step; also sizes a symbolic ONNX batch dimension"),
    cl::value_desc("N"), cl::cat(trainCategory));
cl::opt<int64_t> accumulateSteps(
    "accumulate-steps",
    cl::desc("Micro-batches whose gradients make one update"),
    cl::value_desc("N"), cl::cat(trainCategory));
cl::opt<double> momentumFlag("momentum", cl::desc("Momentum coefficient (default 0.9)"),
                             cl::value_desc("MU"), cl::cat(trainCategory));
cl::opt<bool> nesterovFlag("nesterov", cl::desc("Nesterov momentum"),
                           cl::cat(trainCategory));
cl::opt<double> weightDecayFlag("weight-decay",
                                cl::desc("AdamW's decoupled weight decay (default 0.01)"),
                                cl::value_desc("WD"), cl::cat(trainCategory));
cl::opt<double> clipNormFlag("clip-norm", cl::desc("Clip gradients to this global norm"),
                             cl::value_desc("NORM"), cl::cat(trainCategory));
cl::opt<std::string> scheduleFlag(
    "lr-schedule", cl::desc("constant, linear_warmup or cosine_decay"),
    cl::value_desc("KIND"), cl::cat(trainCategory));
cl::opt<int64_t> warmupFlag("warmup-steps", cl::desc("Linear warm-up length"),
                            cl::value_desc("N"), cl::cat(trainCategory));
cl::opt<int64_t> decayFlag("decay-steps",
                           cl::desc("Step at which cosine decay reaches --min-lr"),
                           cl::value_desc("N"), cl::cat(trainCategory));
cl::opt<double> minLrFlag("min-lr", cl::desc("Cosine decay's final rate"),
                          cl::value_desc("LR"), cl::cat(trainCategory));
cl::opt<std::string> sparseUpdatesFlag(
    "sparse-updates",
    cl::desc("Embedding tables under momentum/Adam: dense (every row, as torch.optim; "
             "the default) or lazy (looked-up rows only, as SparseAdam)"),
    cl::value_desc("dense|lazy"), cl::cat(trainCategory));
cl::opt<std::string> strategyFlag(
    "strategy",
    cl::desc("single (one replica), data-parallel (gradients averaged over the replicas "
             "by all-reduce, as MirroredStrategy) or parameter-server (variables on "
             "parameter servers, as ParameterServerStrategy); kiln launch runs both"),
    cl::value_desc("single|data-parallel|parameter-server"), cl::cat(trainCategory));
cl::opt<std::string> partitionerFlag(
    "partitioner",
    cl::desc("parameter-server: how variables split over the servers (axis 0): none, "
             "fixed-shards:N, min-shard-bytes:B[,max-shards:M] or "
             "max-shard-bytes:B[,max-shards:M]; M defaults to the number of servers"),
    cl::value_desc("KIND[:...]"), cl::cat(trainCategory));
cl::opt<std::string> hashEmbeddingsFlag(
    "hash-embeddings",
    cl::desc("parameter-server: embedding tables held as hash tables (any int64 id, rows "
             "created on first use); none: no hash tables, whatever the graph file says"),
    cl::value_desc("NAME[,NAME...]|none"), cl::cat(trainCategory));
cl::opt<std::string> rowSplitFlag(
    "row-split",
    cl::desc("parameter-server: a table's rows to shards in contiguous ranges (div, the "
             "default) or by id mod shards (mod)"),
    cl::value_desc("div|mod"), cl::cat(trainCategory));
cl::opt<int64_t> bucketBytesFlag(
    "bucket-bytes",
    cl::desc("data-parallel: gradients per all-reduce, in bytes (default 26214400)"),
    cl::value_desc("N"), cl::cat(trainCategory));
cl::opt<std::string> rematFlag(
    "remat",
    cl::desc("Recompute forward activations in backward instead of keeping them: none, "
             "auto (the cheapest set that fits --memory-budget), sqrt (Chen et al.'s "
             "sqrt(n) segments) or all (while that lowers the peak)"),
    cl::value_desc("none|auto|sqrt|all"), cl::cat(trainCategory));
cl::opt<std::string> memoryBudgetFlag(
    "memory-budget",
    cl::desc("The train step's planned arena (peak_bytes) at most, in bytes, or with a "
             "suffix K, M or G (powers of 1024); implies --remat=auto"),
    cl::value_desc("BYTES"), cl::cat(trainCategory));
cl::opt<std::string> convFlag(
    "conv",
    cl::desc("f32 convolutions: library (oneDNN, the default) or generated (compiled "
             "kernels, as for other element types)"),
    cl::value_desc("library|generated"), cl::init("library"), cl::cat(kilncCategory));
cl::opt<std::string> fusionFlag(
    "fusion",
    cl::desc("Fuse chains of elementwise ops into one kernel each, and run a matrix "
             "product's elementwise reader as its epilogue: on (the default; "
             "--emit=mlir shows the fusions only when asked with --fusion=on) or off "
             "(one kernel per op, for comparison)"),
    cl::value_desc("on|off"), cl::init("on"), cl::cat(kilncCategory));
cl::opt<bool> sinkTransposesFlag(
    "sink-transposes",
    cl::desc("Move transposes below elementwise ops so that a channels-last model's "
             "pairs around each convolution cancel (default true; false for comparison)"),
    cl::init(true), cl::cat(kilncCategory));
cl::opt<std::string> precisionFlag(
    "precision",
    cl::desc("Matrix products in bf16 or fp16, and convolutions in bf16: inputs rounded, "
             "products summed in f32; weights, optimizer state and elementwise ops stay f32 "
             "(default: the train spec's precision, else fp32)"),
    cl::value_desc("fp32|bf16|fp16"), cl::cat(kilncCategory));
cl::opt<bool> roundInKernelsFlag(
    "round-in-kernels",
    cl::desc("With --precision=bf16, the kernels that compute a product's inputs also "
             "write them rounded to bf16 (default true; false: the runtime converts them "
             "before each product, for comparison: the same bits)"),
    cl::init(true), cl::cat(kilncCategory));
cl::opt<std::string> bf16ActivationsFlag(
    "bf16-activations",
    cl::desc("With --precision=bf16 and --fusion=on, the forward values the backward pass "
             "reads are kept as bf16 copies between the two, half the memory (default on; "
             "off: kept in f32, for comparison)"),
    cl::value_desc("on|off"), cl::init("on"), cl::cat(kilncCategory));
cl::opt<std::string> opOrderFlag(
    "schedule",
    cl::desc("Order of the training step's ops: memory (the default: each update right "
             "after its gradient where it can, communication started early, the rest in "
             "program order) or program (as the training passes wrote them, for comparison)"),
    cl::value_desc("memory|program"), cl::init("memory"), cl::cat(kilncCategory));
cl::opt<std::string> rowParallelFlag(
    "row-parallel",
    cl::desc("Let the runtime split a kernel whose rows are independent over its "
             "threads (OMP_NUM_THREADS): on (the default) or off (every kernel on "
             "one thread, for comparison)"),
    cl::value_desc("on|off"), cl::init("on"), cl::cat(kilncCategory));
cl::opt<std::string> blockedGradientsFlag(
    "blocked-gradients",
    cl::desc("Compute a weight gradient that only its optimizer update reads by blocks "
             "of rows, each updated before the next is computed, so that the whole "
             "gradient is never in memory: on (the default) or off (whole, for comparison)"),
    cl::value_desc("on|off"), cl::init("on"), cl::cat(kilncCategory));
cl::opt<std::string> gemmEpiloguesFlag(
    "gemm-epilogues",
    cl::desc("Run the elementwise kernel (bias, activation, residual add) that alone "
             "reads an f32 matrix product as the product's epilogue: each thread "
             "computes its rows of the product, then the kernel on those rows: on (the "
             "default; off under --fusion=off) or off (two steps, for comparison)"),
    cl::value_desc("on|off"), cl::init("on"), cl::cat(kilncCategory));
cl::opt<int64_t> rowParallelMinIterations(
    "row-parallel-min-iterations",
    cl::desc("The fewest innermost loop iterations of a row-parallel kernel (default "
             "16384: a smaller kernel cannot gain from a second thread; of the others, "
             "kiln measures which do and splits those)"),
    cl::value_desc("N"), cl::init(16384), cl::cat(kilncCategory));
cl::opt<bool> noCleanup("no-cleanup",
                        cl::desc("Print the module as imported, before "
                                 "shape refinement and canonicalization"), cl::cat(kilncCategory));

/// Parses the --dim flags into `options`; prints one line on failure.
LogicalResult parseDims(kiln::OnnxImportOptions &options) {
  for (const std::string &flag : dims) {
    auto [name, size] = llvm::StringRef(flag).split('=');
    int64_t value = 0;
    if (name.empty() || size.getAsInteger(10, value) || value < 1) {
      llvm::errs() << "kilnc: error: --dim '" << flag
                   << "': expected NAME=SIZE with SIZE >= 1\n";
      return failure();
    }
    options.dimSizes[name] = value;
  }
  return success();
}

/// Parses --from, --input-shape and --outputs into `options`; prints one
/// line on failure.
LogicalResult parseFormatFlags(kiln::ImportOptions &options) {
  if (!fromFormat.empty() &&
      !llvm::is_contained({"kiln", "tensorflow", "onnx", "mlir"}, fromFormat)) {
    llvm::errs() << "kilnc: error: --from=" << fromFormat
                 << ": expected kiln, tensorflow, onnx or mlir\n";
    return failure();
  }
  options.format = fromFormat;
  for (const std::string &flag : inputShapes) {
    auto [name, sizes] = llvm::StringRef(flag).split('=');
    SmallVector<StringRef> parts;
    sizes.split(parts, ',');
    SmallVector<int64_t> shape;
    for (StringRef part : parts) {
      int64_t size = 0;
      if (part.getAsInteger(10, size) || size < 1)
        break;
      shape.push_back(size);
    }
    if (name.empty() || sizes.empty() || shape.size() != parts.size() ||
        !options.tensorflow.inputShapes.try_emplace(name, shape).second) {
      llvm::errs() << "kilnc: error: --input-shape '" << flag
                   << "': expected NAME=D0,D1,... with sizes >= 1, once per "
                      "input\n";
      return failure();
    }
  }
  options.tensorflow.outputs.assign(graphOutputs.begin(), graphOutputs.end());
  return success();
}

/// --NAME=TEXT's comma-separated weights (one per `unit`), each finite and
/// >= 0 (with `someNonZero`, not all 0), appended to `weights`.
LogicalResult parseWeights(StringRef name, StringRef text, StringRef unit, bool someNonZero,
                           std::vector<double> &weights) {
  SmallVector<StringRef> fields;
  text.split(fields, ',');
  for (StringRef field : fields) {
    double weight;
    if (field.trim().getAsDouble(weight) || !std::isfinite(weight) || weight < 0) {
      llvm::errs() << "kilnc: error: --" << name << "=" << text << ": '" << field
                   << "' is not a weight (a finite number >= 0, one per " << unit
                   << ", comma-separated)\n";
      return failure();
    }
    weights.push_back(weight);
  }
  if (someNonZero && llvm::all_of(weights, [](double weight) { return weight == 0.0; })) {
    llvm::errs() << "kilnc: error: --" << name << "=" << text
                 << ": every weight is 0 (nothing counts)\n";
    return failure();
  }
  return success();
}

/// Copies the --train flags into `options`; prints one line on a value
/// no model could take.
LogicalResult parseTrainFlags(kiln::ImportOptions &options) {
  kiln::TrainFlags &flags = options.train;
  flags.train = train;
  flags.loss = lossKind;
  if (!flags.loss.empty() && !kiln::isAddedLossKind(flags.loss) && flags.loss != "model") {
    llvm::errs() << "kilnc: error: --loss=" << flags.loss
                 << ": expected softmax_cross_entropy, sigmoid_cross_entropy, nll, "
                    "sparse_categorical_crossentropy, categorical_crossentropy, "
                    "binary_crossentropy, mse or model\n";
    return failure();
  }
  flags.output = lossOutput;
  flags.label = labelName;
  if (classAxisFlag.getNumOccurrences())
    flags.classAxis = classAxisFlag;
  if (ignoreIndexFlag.getNumOccurrences())
    flags.ignoreIndex = ignoreIndexFlag;
  if (labelSmoothingFlag.getNumOccurrences()) {
    if (!(labelSmoothingFlag >= 0.0 && labelSmoothingFlag <= 1.0)) {
      llvm::errs() << "kilnc: error: --label-smoothing="
                   << llvm::format("%g", static_cast<double>(labelSmoothingFlag))
                   << ": expected a number from 0 to 1\n";
      return failure();
    }
    flags.labelSmoothing = labelSmoothingFlag;
  }
  flags.classProbabilities = classProbabilitiesFlag;
  if (classWeightsFlag.getNumOccurrences() &&
      failed(parseWeights("class-weights", classWeightsFlag, "class", true, flags.classWeights)))
    return failure();
  if (posWeightFlag.getNumOccurrences() &&
      failed(parseWeights("pos-weight", posWeightFlag, "label column", false, flags.posWeights)))
    return failure();
  flags.optimizer = optimizerKind;
  if (!flags.optimizer.empty() &&
      !llvm::is_contained({"sgd", "momentum", "adam", "adamw", "adagrad"},
                          flags.optimizer)) {
    llvm::errs() << "kilnc: error: --optimizer=" << flags.optimizer
                 << ": expected sgd, momentum, adam, adamw or adagrad\n";
    return failure();
  }
  if (learningRate.getNumOccurrences())
    flags.learningRate = learningRate;
  if (batchSize.getNumOccurrences()) {
    if (batchSize < 1) {
      llvm::errs() << "kilnc: error: --batch=" << batchSize
                   << ": expected a size >= 1\n";
      return failure();
    }
    flags.batchSize = batchSize;
    options.onnx.batchSize = batchSize;
    options.tensorflow.batchSize = batchSize;
  }
  if (accumulateSteps.getNumOccurrences()) {
    if (accumulateSteps < 1) {
      llvm::errs() << "kilnc: error: --accumulate-steps=" << accumulateSteps
                   << ": expected a count >= 1\n";
      return failure();
    }
    flags.accumulateSteps = accumulateSteps;
  }
  if (momentumFlag.getNumOccurrences())
    flags.momentum = momentumFlag;
  flags.nesterov = nesterovFlag;
  if (weightDecayFlag.getNumOccurrences())
    flags.weightDecay = weightDecayFlag;
  if (clipNormFlag.getNumOccurrences())
    flags.clipNorm = clipNormFlag;
  flags.schedule = scheduleFlag;
  if (warmupFlag.getNumOccurrences())
    flags.warmupSteps = warmupFlag;
  if (decayFlag.getNumOccurrences())
    flags.decaySteps = decayFlag;
  if (minLrFlag.getNumOccurrences())
    flags.minLr = minLrFlag;
  flags.sparseUpdates = sparseUpdatesFlag;
  flags.strategy = strategyFlag;
  flags.partitioner = partitionerFlag;
  flags.hashEmbeddings = hashEmbeddingsFlag;
  flags.rowSplit = rowSplitFlag;
  if (std::string error = kiln::checkParameterServerFlags(flags); !error.empty()) {
    llvm::errs() << "kilnc: error: " << error << "\n";
    return failure();
  }
  if (bucketBytesFlag.getNumOccurrences()) {
    if (bucketBytesFlag < 1) {
      llvm::errs() << "kilnc: error: --bucket-bytes=" << bucketBytesFlag
                   << ": expected a size >= 1\n";
      return failure();
    }
    flags.bucketBytes = bucketBytesFlag;
  }
  flags.remat = rematFlag;
  if (memoryBudgetFlag.getNumOccurrences()) {
    std::optional<int64_t> bytes = kiln::parseByteSize(memoryBudgetFlag);
    if (!bytes) {
      llvm::errs() << "kilnc: error: --memory-budget=" << memoryBudgetFlag
                   << ": expected a size in bytes from 1 to 2^50, with an optional suffix "
                      "K, M or G\n";
      return failure();
    }
    flags.memoryBudget = *bytes;
  }
  if (flags.train && inferenceOnly) {
    llvm::errs() << "kilnc: error: --train and --inference-only contradict "
                    "each other\n";
    return failure();
  }
  return success();
}

/// --precision over the train spec's (what the training passes read: fp16
/// adds loss scaling).
void setTrainSpecPrecision(ModuleOp module, llvm::StringRef precision) {
  auto spec = module->getAttrOfType<DictionaryAttr>(kiln::KilnDialect::kTrainSpecAttrName);
  if (!spec)
    return;
  NamedAttrList entries(spec);
  entries.set("precision", StringAttr::get(module.getContext(),
                                           precision == "fp32" ? "fp32" : precision + "_mixed"));
  module->setAttr(kiln::KilnDialect::kTrainSpecAttrName,
                  entries.getDictionary(module.getContext()));
}

/// Writes text to -o (whole or not at all) or stdout.
LogicalResult writeText(llvm::function_ref<void(llvm::raw_ostream &)> write) {
  auto print = [&](llvm::raw_ostream &os) -> llvm::Error {
    write(os);
    return llvm::Error::success();
  };
  if (outputPath == "-") {
    (void)print(llvm::outs());
    return success();
  }
  if (llvm::Error error = llvm::writeToOutput(outputPath, print)) {
    llvm::errs() << outputPath << ": error: cannot write: "
                 << llvm::toString(std::move(error)) << "\n";
    return failure();
  }
  return success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Protobuf reports through kiln's diagnostics, never its own log lines.
  google::protobuf::SetLogHandler(nullptr);
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerAsmPrinterCLOptions();
  kiln::registerAllPasses();
  cl::HideUnrelatedOptions({&kilncCategory, &trainCategory});
  cl::ParseCommandLineOptions(argc, argv, "kiln compiler\n");

  kiln::ImportOptions options;
  if (failed(parseDims(options.onnx)) || failed(parseFormatFlags(options)) ||
      failed(parseTrainFlags(options)))
    return 1;
  if (convFlag != "library" && convFlag != "generated") {
    llvm::errs() << "kilnc: error: --conv=" << convFlag
                 << ": expected library or generated\n";
    return 1;
  }
  const std::pair<const char *, const cl::opt<std::string> *> onOffFlags[] = {
      {"fusion", &fusionFlag},
      {"row-parallel", &rowParallelFlag},
      {"blocked-gradients", &blockedGradientsFlag},
      {"gemm-epilogues", &gemmEpiloguesFlag},
      {"bf16-activations", &bf16ActivationsFlag}};
  for (auto [name, value] : onOffFlags)
    if (value->getValue() != "on" && value->getValue() != "off") {
      llvm::errs() << "kilnc: error: --" << name << "=" << value->getValue()
                   << ": expected on or off\n";
      return 1;
    }
  if (precisionFlag.getNumOccurrences() && precisionFlag != "fp32" && precisionFlag != "bf16" &&
      precisionFlag != "fp16") {
    llvm::errs() << "kilnc: error: --precision=" << precisionFlag
                 << ": expected fp32, bf16 or fp16\n";
    return 1;
  }
  if (opOrderFlag != "memory" && opOrderFlag != "program") {
    llvm::errs() << "kilnc: error: --schedule=" << opOrderFlag
                 << ": expected memory or program\n";
    return 1;
  }
  if (rowParallelMinIterations < 1) {
    llvm::errs() << "kilnc: error: --row-parallel-min-iterations=" << rowParallelMinIterations
                 << ": expected at least 1\n";
    return 1;
  }
  if (target != "cpu") {
    llvm::errs() << "kilnc: error: --target=" << target
                 << " is not supported (this build compiles for: cpu)\n";
    return 1;
  }
  if (report == Report::Json && (emit != Emit::Artifact || outputPath == "-")) {
    llvm::errs() << "kilnc: error: --report=json describes an artifact: write it with -o "
                    "FILE.kiln (the report goes to standard output)\n";
    return 1;
  }
  if (emit == Emit::Artifact && outputPath == "-") {
    llvm::errs() << "kilnc: error: an artifact is binary: name the file with "
                    "-o FILE.kiln (or pass --emit=mlir to print IR)\n";
    return 1;
  }
  // Writing over the model being compiled, or over the file an ONNX model
  // keeps its weights in, would lose it.
  bool onnxInput = fromFormat == "onnx" || llvm::StringRef(inputPath).ends_with(".onnx");
  if (llvm::sys::fs::equivalent(inputPath, outputPath)) {
    llvm::errs() << outputPath << ": error: -o names the input model; write the output "
                                  "to another file\n";
    return 1;
  }
  if (onnxInput && llvm::sys::fs::exists(outputPath) &&
      kiln::onnxModelKeepsDataIn(inputPath, outputPath)) {
    llvm::errs() << outputPath << ": error: -o names the file where " << inputPath
                 << " keeps its weights (external data); write the output to another file\n";
    return 1;
  }

  // A repeated compile copies the artifact the first one made.
  std::string cacheDirectory = kiln::KernelCache::defaultDirectory();
  std::optional<kiln::KernelCache> artifactCache;
  std::optional<std::string> artifactKey;
  if (!noCache && emit == Emit::Artifact && report == Report::None && !onnxInput &&
      !cacheDirectory.empty()) {
    artifactCache.emplace(cacheDirectory, ".kiln");
    artifactKey = kiln::artifactCacheKey(llvm::ArrayRef(argv + 1, argc - 1), inputPath);
    if (artifactKey)
      if (std::optional<std::vector<uint8_t>> artifact = artifactCache->find(*artifactKey)) {
        MLIRContext context;
        kiln::OneLineDiagnosticHandler diagnostics(&context, llvm::errs());
        return failed(kiln::writeArtifactFile(*artifact, outputPath,
                                              FileLineColLoc::get(&context, inputPath, 0, 0)))
                   ? 1
                   : 0;
      }
  }

  auto compileBegin = std::chrono::steady_clock::now();
  kiln::CompileTimings timings;
  if (report == Report::Json)
    kiln::CompileTimings::setActive(&timings);
  DialectRegistry registry;
  kiln::registerAllDialects(registry);
  MLIRContext context(registry);
  kiln::OneLineDiagnosticHandler diagnostics(&context, llvm::errs());

  OwningOpRef<ModuleOp> module = [&] {
    kiln::CompileTimings::Phase phase("import");
    return kiln::importModelFile(inputPath, context, options);
  }();
  if (!module)
    return 1;

  if (precisionFlag.getNumOccurrences())
    setTrainSpecPrecision(*module, precisionFlag);
  if (!noCleanup) {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return 1;
    if (report == Report::Json)
      timings.instrument(pm);
    kiln::buildImportCleanupPipeline(pm);
    if (sinkTransposesFlag)
      kiln::buildLayoutPipeline(pm);
    if (!inferenceOnly && (*module)->hasAttr(kiln::KilnDialect::kTrainSpecAttrName))
      kiln::buildTrainingPipeline(pm);
    // Before fusion: the casts that round a bf16 product's inputs join the
    // kernels that compute them.
    kiln::buildMixedPrecisionPipeline(pm, precisionFlag, roundInKernelsFlag,
                                      bf16ActivationsFlag == "on" && fusionFlag == "on");
    // --emit=mlir shows the graph as the training passes leave it unless
    // --fusion=on asks for the fused one.
    if (fusionFlag == "on" && (emit != Emit::Mlir || fusionFlag.getNumOccurrences() > 0))
      kiln::buildOptimizationPipeline(pm);
    if (opOrderFlag == "memory" && !inferenceOnly &&
        (*module)->hasAttr(kiln::KilnDialect::kTrainSpecAttrName) &&
        (emit != Emit::Mlir || opOrderFlag.getNumOccurrences() > 0 ||
         fusionFlag.getNumOccurrences() > 0))
      kiln::buildSchedulingPipeline(pm);
    // An artifact gets recomputation checked by the plan (fitMemoryBudget).
    if (!inferenceOnly && (*module)->hasAttr(kiln::KilnDialect::kTrainSpecAttrName) &&
        emit == Emit::Mlir)
      kiln::buildRecomputationPipeline(pm);
    if (failed(pm.run(*module)))
      return 1;
  }
  kiln::PlanOptions planOptions;
  planOptions.convolutionLibrary = convFlag == "library";
  planOptions.rowParallel = rowParallelFlag == "on";
  planOptions.rowParallelMinIterations = rowParallelMinIterations;
  planOptions.blockedGradients = blockedGradientsFlag == "on";
  planOptions.gemmEpilogues = gemmEpiloguesFlag == "on" && fusionFlag == "on";
  if (!noCleanup && !inferenceOnly && emit != Emit::Mlir &&
      (*module)->hasAttr(kiln::KilnDialect::kTrainSpecAttrName)) {
    kiln::CompileTimings::Phase phase("kiln-remat");
    if (failed(kiln::fitMemoryBudget(*module, planOptions)))
      return 1;
  }
  if (report == Report::Text)
    kiln::printModelReport(*module, llvm::errs());
  if (emit == Emit::Mlir)
    return failed(writeText([&](llvm::raw_ostream &os) { module->print(os); })) ? 1 : 0;

  if (emit == Emit::Kernels) {
    FailureOr<kiln::ExecutionPlan> plan = kiln::planModule(*module, planOptions);
    if (failed(plan))
      return 1;
    OwningOpRef<ModuleOp> kernels = kiln::buildKernelModule(*plan, context);
    return failed(writeText([&](llvm::raw_ostream &os) { kernels->print(os); })) ? 1 : 0;
  }
  // --emit=llvm prints the IR LLVM makes, so it always makes it.
  std::optional<kiln::KernelCache> cache;
  if (!noCache && emit != Emit::Llvm && !cacheDirectory.empty())
    cache.emplace(cacheDirectory);
  std::unique_ptr<kiln::CompiledModel> compiled =
      kiln::compileKernels(*module, targetCpu, planOptions, cache ? &*cache : nullptr);
  if (!compiled)
    return 1;
  if (report == Report::Text)
    kiln::printPlanReport(compiled->plan, llvm::errs());
  if (emit == Emit::Llvm)
    return failed(writeText([&](llvm::raw_ostream &os) {
             compiled->kernelsIR->print(os, nullptr);
           }))
               ? 1
               : 0;
  if (failed(kiln::finishArtifact(*compiled, *module)) ||
      failed(kiln::writeArtifactFile(compiled->artifact, outputPath,
                                     module->getLoc())))
    return 1;
  // Only the next compile's time; a compile that warned is not filed, so
  // that the next one warns again.
  if (artifactKey && diagnostics.getWarningCount() == 0)
    (void)artifactCache->store(*artifactKey, compiled->artifact);
  if (compiled->cacheUnwritable)
    llvm::errs() << "kilnc: warning: cannot write the kernel cache in " << cache->directory()
                 << ": compiled without it (set KILN_CACHE_DIR, or pass --no-cache)\n";
  if (report == Report::Json)
    kiln::printJsonReport(
        *module, compiled->plan, compiled->cacheOutcome, timings,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - compileBegin).count(),
        llvm::outs());
  return 0;
}
