//===- kilnc.cpp - The kiln compiler driver -------------------------------===//
//
//   kilnc MODEL (.pb | .pbtxt | .onnx | .mlir) [--emit=artifact|llvm|mlir]
//         [-o OUT] [--report]
//         [--train [--loss=KIND --output=NAME --label=NAME]
//                  [--optimizer=KIND] [--lr=F] [--batch=N]
//                  [--accumulate-steps=N]]
//
// Imports the model, verifies it, runs the import clean-up pipeline and
// writes the kiln IR (--emit=mlir), or compiles it for the host CPU and
// writes the kernels' LLVM IR (--emit=llvm) or the artifact (the default). Every failure is one line on stderr and exit code 1;
// the output file is written whole (temporary file + rename) or not at all.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ModelImporter.h"
#include "dialects/Kiln/KilnDialect.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/RegisterAll.h"
#include "compiler/Support/ModelReport.h"
#include "compiler/Support/OneLineDiagnostics.h"
#include "compiler/Target/ArtifactWriter.h"
#include "compiler/Target/CompileToArtifact.h"
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
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <google/protobuf/stubs/logging.h>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Emit { Mlir, Kernels, Llvm, Artifact };

cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                               cl::desc("<model: .pb, .pbtxt, .onnx or .mlir>"));
cl::opt<std::string> outputPath("o", cl::desc("Output file ('-' = stdout)"),
                                cl::value_desc("file"), cl::init("-"));
cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::Artifact),
    cl::values(clEnumValN(Emit::Mlir, "mlir", "kiln dialect IR after import"),
               clEnumValN(Emit::Kernels, "kernels",
                          "the kernel functions before lowering"),
               clEnumValN(Emit::Llvm, "llvm", "the kernels' optimized LLVM IR"),
               clEnumValN(Emit::Artifact, "artifact",
                          "the compiled model for `kiln run` (needs -o)")));
cl::opt<std::string> target("target", cl::desc("Target to compile for"),
                            cl::value_desc("cpu"), cl::init("cpu"));
cl::opt<std::string> targetCpu(
    "target-cpu",
    cl::desc("CPU the kernels may assume: 'host' (this machine, the default) "
             "or an LLVM CPU name such as x86-64-v3 for portable artifacts"),
    cl::value_desc("name"), cl::init("host"));
cl::list<std::string> dims("dim",
                           cl::desc("Size of a symbolic ONNX input dimension"),
                           cl::value_desc("NAME=SIZE"));
cl::opt<bool> report("report",
                     cl::desc("Print a summary of the compiled model to stderr"));
cl::opt<bool> inferenceOnly(
    "inference-only",
    cl::desc("Compile only @forward even when the model has a train spec "
             "(by default such a model also gets a train_step program)"));
cl::OptionCategory trainCategory(
    "Training (a model without a train spec, such as ONNX, or overrides of a "
    "graph file's spec)");
cl::opt<bool> train("train", cl::desc("Compile a training step"),
                    cl::cat(trainCategory));
cl::opt<std::string> lossKind(
    "loss", cl::desc("Loss to add, the mean over the batch"),
    cl::value_desc("softmax_cross_entropy|sigmoid_cross_entropy|mse"),
    cl::cat(trainCategory));
cl::opt<std::string> lossOutput(
    "output", cl::desc("The model output the loss reads (default: the only one)"),
    cl::value_desc("name"), cl::cat(trainCategory));
cl::opt<std::string> labelName(
    "label",
    cl::desc("The input holding the targets, added if the model has none "
             "(default: label)"),
    cl::value_desc("name"), cl::cat(trainCategory));
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
cl::opt<bool> noCleanup("no-cleanup",
                        cl::desc("Print the module as imported, before "
                                 "shape refinement and canonicalization"));

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

/// Copies the --train flags into `options`; prints one line on a value
/// no model could take.
LogicalResult parseTrainFlags(kiln::ImportOptions &options) {
  kiln::TrainFlags &flags = options.train;
  flags.train = train;
  flags.loss = lossKind;
  if (!flags.loss.empty() && flags.loss != "softmax_cross_entropy" &&
      flags.loss != "sigmoid_cross_entropy" && flags.loss != "mse") {
    llvm::errs() << "kilnc: error: --loss=" << flags.loss
                 << ": expected softmax_cross_entropy, sigmoid_cross_entropy "
                    "or mse\n";
    return failure();
  }
  flags.output = lossOutput;
  flags.label = labelName;
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
  }
  if (accumulateSteps.getNumOccurrences()) {
    if (accumulateSteps < 1) {
      llvm::errs() << "kilnc: error: --accumulate-steps=" << accumulateSteps
                   << ": expected a count >= 1\n";
      return failure();
    }
    flags.accumulateSteps = accumulateSteps;
  }
  if (flags.train && inferenceOnly) {
    llvm::errs() << "kilnc: error: --train and --inference-only contradict "
                    "each other\n";
    return failure();
  }
  return success();
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
  cl::ParseCommandLineOptions(argc, argv, "kiln compiler\n");

  kiln::ImportOptions options;
  if (failed(parseDims(options.onnx)) || failed(parseTrainFlags(options)))
    return 1;
  if (target != "cpu") {
    llvm::errs() << "kilnc: error: --target=" << target
                 << " is not supported (this build compiles for: cpu)\n";
    return 1;
  }
  if (emit == Emit::Artifact && outputPath == "-") {
    llvm::errs() << "kilnc: error: an artifact is binary: name the file with "
                    "-o FILE.kiln (or pass --emit=mlir to print IR)\n";
    return 1;
  }

  DialectRegistry registry;
  kiln::registerAllDialects(registry);
  MLIRContext context(registry);
  kiln::OneLineDiagnosticHandler diagnostics(&context, llvm::errs());

  OwningOpRef<ModuleOp> module =
      kiln::importModelFile(inputPath, context, options);
  if (!module)
    return 1;

  if (!noCleanup) {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return 1;
    kiln::buildImportCleanupPipeline(pm);
    if (!inferenceOnly && (*module)->hasAttr(kiln::KilnDialect::kTrainSpecAttrName))
      kiln::buildTrainingPipeline(pm);
    if (failed(pm.run(*module)))
      return 1;
  }
  if (report)
    kiln::printModelReport(*module, llvm::errs());
  if (emit == Emit::Mlir)
    return failed(writeText([&](llvm::raw_ostream &os) { module->print(os); })) ? 1 : 0;

  if (emit == Emit::Kernels) {
    FailureOr<kiln::ExecutionPlan> plan = kiln::planModule(*module);
    if (failed(plan))
      return 1;
    OwningOpRef<ModuleOp> kernels = kiln::buildKernelModule(*plan, context);
    return failed(writeText([&](llvm::raw_ostream &os) { kernels->print(os); })) ? 1 : 0;
  }
  std::unique_ptr<kiln::CompiledModel> compiled =
      kiln::compileKernels(*module, targetCpu);
  if (!compiled)
    return 1;
  if (report)
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
  return 0;
}
