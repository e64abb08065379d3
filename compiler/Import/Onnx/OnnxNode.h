//===- OnnxNode.h - What an op conversion sees of one ONNX node -*- C++ -*-===//
//
// An op conversion (OnnxOps.h) reads its node's inputs, constant operands and
// attributes through OnnxNode and sets its results (ImportNode.h has what
// ONNX and TensorFlow nodes share). Every accessor that can fail emits
// exactly one error at the node's location, so a conversion just returns
// failure when one does.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXNODE_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXNODE_H

#include "compiler/Import/ImportNode.h"

#include "onnx/onnx_pb.h"

#include <optional>

namespace kiln {

/// The values of the graph being imported, by ONNX name. An initializer is
/// materialized (as a variable read or a constant) on first use as data, as
/// is a Constant node's value.
class OnnxValueScope : public ImportValueScope {
public:
  /// If `source` is a float initializer, makes `name` a new initializer
  /// with the same value (its own variable) and returns true.
  virtual bool copyInitializer(llvm::StringRef name, llvm::StringRef source) = 0;
  /// A sequence value (SplitToSequence's tensors), read only by SequenceAt.
  virtual void defineSequence(llvm::StringRef name, llvm::SmallVector<mlir::Value> parts) = 0;
  /// The tensors of sequence `name`, or null when it names none.
  virtual const llvm::SmallVector<mlir::Value> *lookupSequence(llvm::StringRef name) = 0;
  /// A sequence held as one tensor, `stacked` [count, element...]: element i
  /// is stacked[i] (a Loop's rows, read by ConcatFromSequence).
  virtual void defineStackedSequence(llvm::StringRef name, mlir::Value stacked) = 0;
  /// The tensor of stacked sequence `name`, or null when it names none.
  virtual mlir::Value lookupStackedSequence(llvm::StringRef name) = 0;
};

class OnnxNode : public ImportNode {
public:
  OnnxNode(const onnx::NodeProto &proto, int64_t opset,
           llvm::StringRef modelDir, KilnOpBuilder &builder,
           OnnxValueScope &scope)
      : ImportNode(builder, scope), proto(proto), opset(opset),
        modelDir(modelDir), onnxScope(scope) {}

  const onnx::NodeProto &getProto() const { return proto; }
  llvm::StringRef getOpType() const { return proto.op_type(); }
  /// The model's opset for the default ONNX domain.
  int64_t getOpset() const { return opset; }
  llvm::StringRef getModelDir() const { return modelDir; }

  //===--------------------------------------------------------------------===//
  // Inputs
  //===--------------------------------------------------------------------===//

  /// Number of inputs, counting omitted optional ones ("") before the last.
  unsigned getNumInputs() const { return proto.input_size(); }
  /// Whether input `i` is given (present and not "").
  bool hasInput(unsigned i) const {
    return i < getNumInputs() && !proto.input(i).empty();
  }
  /// Input `i` as a kiln.constant when it is known at import time, else its
  /// value: for hyperparameters (Clip's bounds, Pow's exponent), which must
  /// never become trainable variables even when stored as initializers.
  mlir::FailureOr<mlir::Value> getInputAsConstant(unsigned i);
  /// Input `i` read at import time as a list of integers (int32 or int64);
  /// `what` names it in errors ("shape", "axes").
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  getConstantInts(unsigned i, llvm::StringRef what);

  //===--------------------------------------------------------------------===//
  // Attributes
  //===--------------------------------------------------------------------===//

  const onnx::AttributeProto *getAttribute(llvm::StringRef name) const;
  bool hasAttribute(llvm::StringRef name) const {
    return getAttribute(name) != nullptr;
  }
  mlir::FailureOr<int64_t> getIntAttr(llvm::StringRef name,
                                      int64_t defaultValue) const;
  mlir::FailureOr<float> getFloatAttr(llvm::StringRef name,
                                      float defaultValue) const;
  mlir::FailureOr<std::string>
  getStringAttr(llvm::StringRef name, llvm::StringRef defaultValue) const;
  /// A list of ints; std::nullopt when the attribute is absent.
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
  getIntsAttr(llvm::StringRef name) const;
  /// Errors if `name` is present: "attribute 'axes' is not part of <Op>-<N>".
  mlir::LogicalResult refuseAttr(llvm::StringRef name,
                                 llvm::StringRef hint) const;

  //===--------------------------------------------------------------------===//
  // Results
  //===--------------------------------------------------------------------===//

  unsigned getNumOutputs() const { return proto.output_size(); }
  /// Makes output `i` a new float initializer with input `input`'s value, if
  /// that input is a float initializer; returns whether it was.
  bool setResultToInitializerCopy(unsigned i, unsigned input);
  /// Makes output `i` a sequence of `parts`.
  void setSequenceResult(unsigned i, llvm::SmallVector<mlir::Value> parts) {
    markResult(i);
    onnxScope.defineSequence(getOutputName(i), std::move(parts));
  }
  /// Input `i`'s tensors when it is a sequence, else null.
  const llvm::SmallVector<mlir::Value> *getSequenceInput(unsigned i) {
    return onnxScope.lookupSequence(getInputName(i));
  }
  /// Makes output `i` a sequence held as one tensor (element j: stacked[j]).
  void setStackedSequenceResult(unsigned i, mlir::Value stacked) {
    markResult(i);
    onnxScope.defineStackedSequence(getOutputName(i), stacked);
  }
  /// Input `i`'s tensor when it is a stacked sequence, else null.
  mlir::Value getStackedSequenceInput(unsigned i) {
    return onnxScope.lookupStackedSequence(getInputName(i));
  }

  /// A value the node's subgraphs read from the graph around it (the graph
  /// order put its producer first).
  mlir::Value lookupOuter(llvm::StringRef name) { return onnxScope.lookup(name); }
  /// That value if known at import time, else null.
  mlir::DenseElementsAttr lookupOuterConstant(llvm::StringRef name) {
    return onnxScope.lookupConstant(name);
  }
  /// Imports the nodes of `branch` (one of this node's subgraphs, named
  /// `tag`) into the graph around the node, in dependency order, under
  /// names of their own; the node's outputs become the branch's. One error
  /// at the failing node.
  mlir::LogicalResult importBranch(const onnx::GraphProto &branch, llvm::StringRef tag);
  /// Makes output `i` another name of `source`.
  void setResultToName(unsigned i, llvm::StringRef source) {
    markResult(i);
    onnxScope.alias(getOutputName(i), source);
  }
  /// Whether the graph around the node holds an empty sequence named `name`
  /// (SequenceEmpty's).
  bool isOuterEmptySequence(llvm::StringRef name) {
    const llvm::SmallVector<mlir::Value> *parts = onnxScope.lookupSequence(name);
    return parts && parts->empty();
  }

private:
  llvm::StringRef getInputName(unsigned i) const override {
    return i < getNumInputs() ? llvm::StringRef(proto.input(i)) : "";
  }
  std::string getOutputName(unsigned i) const override {
    return i < getNumOutputs() ? proto.output(i) : "";
  }

  const onnx::NodeProto &proto;
  int64_t opset;
  llvm::StringRef modelDir;
  OnnxValueScope &onnxScope;
};

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXNODE_H
