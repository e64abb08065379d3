//===- OnnxModelFile.h - Reading ONNX model and data files ------*- C++ -*-===//
//
// The untrusted bytes of an ONNX import: the model file itself and the
// external data files its tensors may point to. Sizes are checked against the
// file before anything is read or allocated; external data paths must stay
// inside the model's folder.
//
// Every function emits exactly one error at the given location on failure.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXMODELFILE_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXMODELFILE_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/MemoryBuffer.h"

#include "onnx/onnx_pb.h"

#include <memory>
#include <optional>
#include <string>

namespace kiln {

/// Reads and parses the ModelProto in `path`; errors name the file.
std::unique_ptr<onnx::ModelProto> readOnnxModelFile(llvm::StringRef path,
                                                    mlir::MLIRContext &context);

/// The folder external data paths are relative to: the model file's folder.
std::string getOnnxModelDir(llvm::StringRef modelPath);

/// Whether a tensor of the ONNX model at `modelPath` (an initializer, or a
/// node's tensor attribute, in any subgraph) keeps its data in `file`.
/// False where the model cannot be read: its import says why.
bool onnxModelKeepsDataIn(llvm::StringRef modelPath, llvm::StringRef file);

/// Where a tensor's external data lives, from its `external_data` entries.
struct OnnxExternalData {
  std::string location;
  uint64_t offset = 0;
  /// Absent: from `offset` to the end of the file.
  std::optional<uint64_t> length;
};

/// Reads the `location`, `offset` and `length` keys of a tensor stored
/// outside the model file.
mlir::FailureOr<OnnxExternalData>
parseOnnxExternalData(const onnx::TensorProto &tensor, mlir::Location loc);

/// The real path of `location` (relative to `modelDir`) after refusing empty
/// and absolute paths, `..` components and symlinks that resolve outside the
/// real path of `modelDir`.
mlir::FailureOr<std::string> resolveOnnxExternalPath(llvm::StringRef modelDir,
                                                     llvm::StringRef location,
                                                     mlir::Location loc);

/// Reads the bytes of `data` once its path is resolved under `modelDir`, its
/// range checked against the file's size and its length against
/// `expectedBytes`, the size the tensor's type and shape call for.
mlir::FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
readOnnxExternalData(llvm::StringRef modelDir, const OnnxExternalData &data,
                     uint64_t expectedBytes, mlir::Location loc);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXMODELFILE_H
