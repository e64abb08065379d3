//===- kilnc.cpp - The kiln compiler driver -------------------------------===//
//
//   kilnc MODEL (.pb | .pbtxt | .onnx | .mlir) --emit=mlir [-o OUT] [--report]
//
// Imports the model, verifies it, runs the import clean-up pipeline and
// writes the result. Every failure is one line on stderr and exit code 1;
// the output file is written whole (temporary file + rename) or not at all.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ModelImporter.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/RegisterAll.h"
#include "compiler/Support/ModelReport.h"
#include "compiler/Support/OneLineDiagnostics.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <google/protobuf/stubs/logging.h>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Emit { Mlir };

cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                               cl::desc("<model: .pb, .pbtxt, .onnx or .mlir>"));
cl::opt<std::string> outputPath("o", cl::desc("Output file ('-' = stdout)"),
                                cl::value_desc("file"), cl::init("-"));
cl::opt<Emit> emit("emit", cl::desc("What to write"), cl::init(Emit::Mlir),
                   cl::values(clEnumValN(Emit::Mlir, "mlir",
                                         "kiln dialect IR after import")));
cl::list<std::string> dims("dim",
                           cl::desc("Size of a symbolic ONNX input dimension"),
                           cl::value_desc("NAME=SIZE"));
cl::opt<bool> report("report",
                     cl::desc("Print a summary of the compiled model to stderr"));
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

LogicalResult writeModule(ModuleOp module) {
  OpPrintingFlags flags;
  auto print = [&](llvm::raw_ostream &os) -> llvm::Error {
    module->print(os, flags);
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
  if (failed(parseDims(options.onnx)))
    return 1;

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
    if (failed(pm.run(*module)))
      return 1;
  }
  if (report)
    kiln::printModelReport(*module, llvm::errs());
  return failed(writeModule(*module)) ? 1 : 0;
}
