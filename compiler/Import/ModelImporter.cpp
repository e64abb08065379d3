//===- ModelImporter.cpp - Any model file → kiln module -------------------===//

#include "compiler/Import/ModelImporter.h"

#include "compiler/Import/Graph/GraphImporter.h"
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
  OwningOpRef<ModuleOp> module;
  bool graphFile = ext == ".pb" || ext == ".pbtxt";
  if (graphFile) {
    module = importGraphFile(path, context, options.train);
  } else if (ext == ".onnx") {
    module = importOnnxFile(path, context, options.onnx);
  } else if (ext == ".mlir") {
    module = parseSourceFile<ModuleOp>(path, &context);
  } else {
    emitError(FileLineColLoc::get(&context, path, 0, 0))
        << "unknown input extension '" << ext
        << "' (expected .pb, .pbtxt, .onnx or .mlir)";
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
