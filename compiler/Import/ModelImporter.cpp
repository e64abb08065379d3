//===- ModelImporter.cpp - Any model file → kiln module -------------------===//

#include "compiler/Import/ModelImporter.h"

#include "compiler/Import/Graph/GraphImporter.h"
#include "compiler/Import/TensorFlow/TfGraphFile.h"
#include "compiler/Import/TrainFromFlags.h"

#include "dialects/Kiln/KilnDialect.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace kiln {

OwningOpRef<ModuleOp> importModelFile(llvm::StringRef path,
                                      MLIRContext &context,
                                      const ImportOptions &options) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  std::string format = options.format;
  if (format.empty() && (ext == ".pb" || ext == ".pbtxt")) {
    FailureOr<GraphFileKind> kind = detectGraphFileKind(path, context);
    if (failed(kind))
      return nullptr;
    format = *kind == GraphFileKind::TensorFlow ? "tensorflow" : "kiln";
  } else if (format.empty() && (ext == ".onnx" || ext == ".mlir")) {
    format = ext.drop_front().str();
  }
  OwningOpRef<ModuleOp> module;
  bool graphFile = format == "kiln";
  if (graphFile) {
    module = importGraphFile(path, context, options.train);
  } else if (format == "tensorflow") {
    module = importTfGraphFile(path, isTfTextPath(path), context,
                               options.tensorflow);
  } else if (format == "onnx") {
    OnnxImportOptions onnx = options.onnx;
    onnx.forTraining = options.train.train;
    module = importOnnxFile(path, context, onnx);
  } else if (format == "mlir") {
    module = parseSourceFile<ModuleOp>(path, &context);
  } else {
    emitError(FileLineColLoc::get(&context, path, 0, 0))
        << "unknown input extension '" << ext
        << "' (expected .pb, .pbtxt, .onnx or .mlir); or name the format "
           "with --from=kiln|tensorflow|onnx|mlir";
    return nullptr;
  }
  if (!module || failed(verify(*module)))
    return nullptr;
  bool specFromFile =
      graphFile && (*module)->hasAttr(KilnDialect::kTrainSpecAttrName);
  if (failed(applyTrainFlags(*module, options.train, specFromFile)) ||
      failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace kiln
