//===- OnnxModelFile.cpp - Reading ONNX model and data files --------------===//

#include "compiler/Import/Onnx/OnnxModelFile.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/ProtobufFile.h"
#include "compiler/Import/ProtobufWireCheck.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <climits>
#include <vector>

using namespace mlir;

namespace kiln {

std::unique_ptr<onnx::ModelProto> readOnnxModelFile(StringRef path,
                                                    MLIRContext &context) {
  Location loc = FileLineColLoc::get(&context, path, 0, 0);
  std::unique_ptr<llvm::MemoryBuffer> file =
      readProtobufFile(path, loc, "store large tensors as external data");
  if (!file)
    return nullptr;
  auto model = std::make_unique<onnx::ModelProto>();
  if (!model->ParseFromArray(file->getBufferStart(),
                             static_cast<int>(file->getBufferSize()))) {
    emitError(loc) << "not an ONNX model file ("
                   << protobufParseFailure(file->getBuffer(), *onnx::ModelProto::descriptor())
                   << ")";
    return nullptr;
  }
  return model;
}

std::string getOnnxModelDir(StringRef modelPath) {
  StringRef dir = llvm::sys::path::parent_path(modelPath);
  return dir.empty() ? std::string(".") : dir.str();
}

namespace {

/// The external data locations of `graph`'s tensors, subgraphs included.
void collectExternalLocations(const onnx::GraphProto &graph, std::vector<std::string> &out) {
  auto tensor = [&](const onnx::TensorProto &t) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL)
      return;
    for (const onnx::StringStringEntryProto &entry : t.external_data())
      if (entry.key() == "location")
        out.push_back(entry.value());
  };
  for (const onnx::TensorProto &t : graph.initializer())
    tensor(t);
  for (const onnx::SparseTensorProto &t : graph.sparse_initializer()) {
    tensor(t.values());
    tensor(t.indices());
  }
  for (const onnx::NodeProto &node : graph.node())
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      if (attribute.has_t())
        tensor(attribute.t());
      for (const onnx::TensorProto &t : attribute.tensors())
        tensor(t);
      if (attribute.has_g())
        collectExternalLocations(attribute.g(), out);
      for (const onnx::GraphProto &g : attribute.graphs())
        collectExternalLocations(g, out);
    }
}

} // namespace

bool onnxModelKeepsDataIn(StringRef modelPath, StringRef file) {
  // External data lies in the model's folder or below it
  // (resolveOnnxExternalPath): a file elsewhere needs no second parse.
  llvm::SmallString<256> realDir, realFile;
  if (llvm::sys::fs::real_path(getOnnxModelDir(modelPath), realDir) ||
      llvm::sys::fs::real_path(file, realFile) ||
      !StringRef(realFile).starts_with((realDir + "/").str()))
    return false;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> bytes =
      llvm::MemoryBuffer::getFile(modelPath, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  onnx::ModelProto model;
  if (!bytes || (*bytes)->getBufferSize() > static_cast<size_t>(INT_MAX) ||
      !model.ParseFromArray((*bytes)->getBufferStart(),
                            static_cast<int>((*bytes)->getBufferSize())))
    return false;
  std::vector<std::string> locations;
  collectExternalLocations(model.graph(), locations);
  std::string modelDir = getOnnxModelDir(modelPath);
  for (const std::string &location : locations) {
    llvm::SmallString<256> path(modelDir);
    llvm::sys::path::append(path, location);
    if (llvm::sys::fs::equivalent(path, file))
      return true;
  }
  return false;
}

FailureOr<OnnxExternalData>
parseOnnxExternalData(const onnx::TensorProto &tensor, Location loc) {
  OnnxExternalData data;
  bool hasLocation = false, hasOffset = false;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    StringRef key = entry.key(), value = entry.value();
    if (key == "location") {
      if (hasLocation)
        return emitError(loc) << "has more than one external data 'location'";
      hasLocation = true;
      data.location = value.str();
    } else if (key == "offset" || key == "length") {
      uint64_t number = 0;
      // getAsInteger returns true on failure (not a decimal, or overflow).
      if (value.getAsInteger(10, number))
        return emitError(loc)
               << "has external data " << key << " '" << printable(value)
               << "', expected a non-negative integer";
      bool duplicate = key == "offset" ? hasOffset : data.length.has_value();
      if (duplicate)
        return emitError(loc)
               << "has more than one external data '" << key << "'";
      if (key == "offset") {
        hasOffset = true;
        data.offset = number;
      } else {
        data.length = number;
      }
    }
    // Other keys ("checksum", ...) do not change what is read.
  }
  if (!hasLocation)
    return emitError(loc) << "stores its data externally but has no "
                             "'location' entry";
  return data;
}

FailureOr<std::string>
resolveOnnxExternalPath(StringRef modelDir, StringRef location, Location loc) {
  namespace path = llvm::sys::path;
  if (location.empty())
    return emitError(loc) << "has an empty external data path";
  if (location.contains('\0'))
    return emitError(loc) << "has an external data path with a NUL character";
  if (path::is_absolute(location))
    return emitError(loc) << "external data path '" << printable(location)
                          << "' is absolute; it must be relative to the "
                             "model's folder";
  for (StringRef component :
       llvm::make_range(path::begin(location), path::end(location))) {
    if (component == "..")
      return emitError(loc) << "external data path '" << printable(location)
                            << "' leaves the model's folder";
  }
  llvm::SmallString<256> realDir;
  if (std::error_code ec = llvm::sys::fs::real_path(modelDir, realDir))
    return emitError(loc) << "cannot resolve the model's folder '" << modelDir
                          << "': " << ec.message();
  llvm::SmallString<256> joined(modelDir);
  path::append(joined, location);
  llvm::SmallString<256> realFile;
  if (std::error_code ec = llvm::sys::fs::real_path(joined, realFile))
    return emitError(loc) << "cannot open external data file '"
                          << printable(location) << "': " << ec.message();
  // A symlink inside the folder may still point anywhere.
  std::string prefix = realDir.str().str();
  if (prefix.empty() || prefix.back() != '/')
    prefix += '/';
  if (!StringRef(realFile).starts_with(prefix))
    return emitError(loc) << "external data path '" << printable(location)
                          << "' resolves outside the model's folder (to '"
                          << realFile << "')";
  return realFile.str().str();
}

FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
readOnnxExternalData(StringRef modelDir, const OnnxExternalData &data,
                     uint64_t expectedBytes, Location loc) {
  FailureOr<std::string> realPath =
      resolveOnnxExternalPath(modelDir, data.location, loc);
  if (failed(realPath))
    return failure();
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(*realPath, status))
    return emitError(loc) << "cannot open external data file '"
                          << printable(data.location) << "': " << ec.message();
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return emitError(loc) << "external data path '" << printable(data.location)
                          << "' is not a regular file";
  uint64_t fileSize = status.getSize();
  if (data.offset > fileSize)
    return emitError(loc) << "external data offset " << data.offset
                          << " is beyond the end of '"
                          << printable(data.location) << "' (" << fileSize
                          << " bytes)";
  uint64_t available = fileSize - data.offset;
  uint64_t length = data.length.value_or(available);
  if (length > available)
    return emitError(loc) << "external data at offset " << data.offset
                          << " with length " << length
                          << " runs beyond the end of '"
                          << printable(data.location) << "' (" << fileSize
                          << " bytes)";
  if (length != expectedBytes)
    return emitError(loc) << "external data holds " << length
                          << " bytes, but the tensor's type and shape need "
                          << expectedBytes;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileSlice(*realPath, length, data.offset);
  if (!buffer)
    return emitError(loc) << "cannot read external data file '"
                          << printable(data.location)
                          << "': " << buffer.getError().message();
  if ((*buffer)->getBufferSize() != length)
    return emitError(loc) << "read " << (*buffer)->getBufferSize()
                          << " bytes of external data from '"
                          << printable(data.location) << "', expected "
                          << length;
  return std::move(*buffer);
}

} // namespace kiln
