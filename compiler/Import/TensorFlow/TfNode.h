//===- TfNode.h - What an op conversion sees of one TF node -----*- C++ -*-===//
//
// An op conversion (TfOps.h) reads its node's data inputs, constant operands
// and attributes through TfNode and sets its results (ImportNode.h has what
// ONNX and TensorFlow nodes share). Every accessor that can fail emits
// exactly one error at the node's location, so a conversion just returns
// failure when one does.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_TENSORFLOW_TFNODE_H
#define KILN_COMPILER_IMPORT_TENSORFLOW_TFNODE_H

#include "compiler/Import/ImportNode.h"

#include "proto/tensorflow/node_def.pb.h"

#include <optional>
#include <string>

namespace kiln {

class TfNode : public ImportNode {
public:
  /// `inputKeys` are the node's data inputs as "name:k"; `scope` holds the
  /// graph's values by the same keys.
  TfNode(const tensorflow::NodeDef &proto,
         llvm::ArrayRef<std::string> inputKeys, KilnOpBuilder &builder,
         ImportValueScope &scope)
      : ImportNode(builder, scope), proto(proto), inputKeys(inputKeys) {}

  const tensorflow::NodeDef &getProto() const { return proto; }
  llvm::StringRef getOp() const { return proto.op(); }

  //===--------------------------------------------------------------------===//
  // Inputs (data inputs only; control inputs never reach a conversion)
  //===--------------------------------------------------------------------===//

  unsigned getNumInputs() const { return inputKeys.size(); }
  /// Input `i` read at import time as integers (int32 or int64, rank 0 or
  /// 1); `what` names it in errors ("shape", "axes").
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  getConstantInts(unsigned i, llvm::StringRef what);
  /// Input `i` read at import time as one axis of a value of `rank`
  /// dimensions, made non-negative.
  mlir::FailureOr<int64_t> getConstantAxis(unsigned i, int64_t rank);

  //===--------------------------------------------------------------------===//
  // Attributes
  //===--------------------------------------------------------------------===//

  const tensorflow::AttrValue *getAttr(llvm::StringRef name) const;
  mlir::FailureOr<bool> getBoolAttr(llvm::StringRef name,
                                    bool defaultValue) const;
  mlir::FailureOr<int64_t> getIntAttr(llvm::StringRef name,
                                      int64_t defaultValue) const;
  mlir::FailureOr<float> getFloatAttr(llvm::StringRef name,
                                      float defaultValue) const;
  mlir::FailureOr<std::string>
  getStringAttr(llvm::StringRef name, llvm::StringRef defaultValue) const;
  /// A type attribute (T, dtype, DstT); it must be present.
  mlir::FailureOr<int> getTypeAttr(llvm::StringRef name) const;
  /// A list(int) attribute; std::nullopt when absent.
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
  getIntsAttr(llvm::StringRef name) const;
  /// A list(float) attribute; std::nullopt when absent.
  mlir::FailureOr<std::optional<llvm::SmallVector<float>>>
  getFloatsAttr(llvm::StringRef name) const;

  //===--------------------------------------------------------------------===//
  // Checks
  //===--------------------------------------------------------------------===//

  /// Where a new dimension goes among the rank + 1 of the result
  /// (ExpandDims, Pack): `axis` in [-rank - 1, rank], made non-negative.
  mlir::FailureOr<int64_t> normalizeNewAxis(int64_t axis, int64_t rank) const {
    return normalizeAxisIn(axis, -rank - 1, rank + 1, rank);
  }

private:
  llvm::StringRef getInputName(unsigned i) const override {
    return inputKeys[i];
  }
  /// "name:i", the key of output i among the scope's values.
  std::string getOutputName(unsigned i) const override;

  const tensorflow::NodeDef &proto;
  llvm::ArrayRef<std::string> inputKeys;
};

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORFLOW_TFNODE_H
