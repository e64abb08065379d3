//===- OnnxNode.h - What an op conversion sees of one ONNX node -*- C++ -*-===//
//
// An op conversion (OnnxOps.h) reads its node's inputs, constant operands and
// attributes through OnnxNode and sets its results. Every accessor that can
// fail emits exactly one error at the node's location, so a conversion just
// returns failure when one does.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXNODE_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXNODE_H

#include "compiler/Import/KilnOpBuilder.h"

#include "onnx/onnx_pb.h"

#include <optional>

namespace kiln {

/// The values of the graph being imported, by ONNX name.
class OnnxValueScope {
public:
  virtual ~OnnxValueScope() = default;
  /// The value named `name`, materializing an initializer (as a variable read
  /// or a constant) or a Constant node's value on first use as data. The
  /// name is known to exist (the graph order checked it).
  virtual mlir::Value lookup(llvm::StringRef name) = 0;
  /// The value of `name` if known at import time (an initializer, a
  /// Constant node's output, or a value folded to a constant), else null.
  /// Never materializes anything.
  virtual mlir::DenseElementsAttr lookupConstant(llvm::StringRef name) = 0;
  /// Binds a node output to a value.
  virtual void define(llvm::StringRef name, mlir::Value value) = 0;
  /// Binds a node output to a value known at import time, materialized at
  /// `loc` only when used as data.
  virtual void defineConstant(llvm::StringRef name,
                              mlir::DenseElementsAttr value,
                              mlir::Location loc) = 0;
  /// Makes `name` another name of `source`: the same value, and the same
  /// import-time constant if `source` is one.
  virtual void alias(llvm::StringRef name, llvm::StringRef source) = 0;
  /// Whether any node or graph output reads `name`.
  virtual bool isUsed(llvm::StringRef name) = 0;
  /// If `source` is a float initializer, makes `name` a new initializer
  /// with the same value (its own variable) and returns true.
  virtual bool copyInitializer(llvm::StringRef name, llvm::StringRef source) = 0;
};

class OnnxNode {
public:
  OnnxNode(const onnx::NodeProto &proto, int64_t opset,
           llvm::StringRef modelDir, KilnOpBuilder &builder,
           OnnxValueScope &scope)
      : proto(proto), opset(opset), modelDir(modelDir), builder(builder),
        scope(scope) {}

  const onnx::NodeProto &getProto() const { return proto; }
  llvm::StringRef getOpType() const { return proto.op_type(); }
  /// The model's opset for the default ONNX domain.
  int64_t getOpset() const { return opset; }
  llvm::StringRef getModelDir() const { return modelDir; }
  KilnOpBuilder &getBuilder() { return builder; }
  mlir::Location getLoc() const { return builder.getLoc(); }
  mlir::MLIRContext *getContext() const { return getLoc().getContext(); }
  mlir::InFlightDiagnostic emitError() const { return builder.emitError(); }

  //===--------------------------------------------------------------------===//
  // Inputs
  //===--------------------------------------------------------------------===//

  /// Number of inputs, counting omitted optional ones ("") before the last.
  unsigned getNumInputs() const { return proto.input_size(); }
  /// Whether input `i` is given (present and not "").
  bool hasInput(unsigned i) const {
    return i < getNumInputs() && !proto.input(i).empty();
  }
  /// Input `i` as a value; it must be given.
  mlir::Value getInput(unsigned i) { return scope.lookup(proto.input(i)); }
  /// Input `i`'s value if it is known at import time, else null.
  mlir::DenseElementsAttr getConstantInput(unsigned i);
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
  // Checks shared by conversions
  //===--------------------------------------------------------------------===//

  /// `axis` in [-rank, rank) (or [-rank, rank] with `inclusive`), made
  /// non-negative.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                         bool inclusive = false) const;
  /// Normalized, sorted axes; duplicates are an error.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  normalizeAxes(llvm::ArrayRef<int64_t> axes, int64_t rank) const;
  /// The shape of `value`, which must be static; `what` names it.
  mlir::FailureOr<llvm::ArrayRef<int64_t>>
  getStaticShape(mlir::Value value, llvm::StringRef what) const;
  /// Errors unless `value` has a float element type; `what` names it.
  mlir::LogicalResult requireFloat(mlir::Value value,
                                   llvm::StringRef what) const;
  /// Errors if `value` is boolean (arithmetic needs numbers).
  mlir::LogicalResult requireNumeric(mlir::Value value,
                                     llvm::StringRef what) const;

  //===--------------------------------------------------------------------===//
  // Results
  //===--------------------------------------------------------------------===//

  unsigned getNumOutputs() const { return proto.output_size(); }
  /// Binds output `i` (if the node names it) to `value`.
  mlir::LogicalResult setResult(unsigned i, mlir::FailureOr<mlir::Value> value);
  /// Makes output `i` another name of input `input` (Identity).
  void setResultToInput(unsigned i, unsigned input);
  /// Makes output `i` a new float initializer with input `input`'s value, if
  /// that input is a float initializer; returns whether it was.
  bool setResultToInitializerCopy(unsigned i, unsigned input);
  /// Binds output `i` to a value known at import time.
  void setConstantResult(unsigned i, mlir::DenseElementsAttr value);
  /// Whether output `i` was set by the conversion.
  bool hasResult(unsigned i) const { return i < results.size() && results[i]; }
  bool isOutputUsed(unsigned i) const {
    return i < getNumOutputs() && !proto.output(i).empty() &&
           scope.isUsed(proto.output(i));
  }

private:
  const onnx::NodeProto &proto;
  int64_t opset;
  llvm::StringRef modelDir;
  KilnOpBuilder &builder;
  OnnxValueScope &scope;
  llvm::SmallVector<bool> results;
};

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXNODE_H
