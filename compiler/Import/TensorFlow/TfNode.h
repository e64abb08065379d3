//===- TfNode.h - What an op conversion sees of one TF node -----*- C++ -*-===//
//
// An op conversion (TfOps.h) reads its node's data inputs, constant operands
// and attributes through TfNode and sets its results. Every accessor that
// can fail emits exactly one error at the node's location, so a conversion
// just returns failure when one does.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_TENSORFLOW_TFNODE_H
#define KILN_COMPILER_IMPORT_TENSORFLOW_TFNODE_H

#include "compiler/Import/KilnOpBuilder.h"

#include "proto/tensorflow/node_def.pb.h"

#include <optional>
#include <string>

namespace kiln {

/// The values of the graph being imported, by node output ("name:k").
class TfValueScope {
public:
  virtual ~TfValueScope() = default;
  /// The value of `key`, materializing a Const on first use as data (a
  /// frozen variable becomes a variable read, any other a constant). The
  /// key is known to exist (the graph order checked it).
  virtual mlir::Value lookup(llvm::StringRef key) = 0;
  /// The value of `key` if known at import time (a Const that is not a
  /// frozen variable, or a value folded to a constant), else null. Never
  /// materializes anything.
  virtual mlir::DenseElementsAttr lookupConstant(llvm::StringRef key) = 0;
  /// Binds a node output to a value.
  virtual void define(llvm::StringRef key, mlir::Value value) = 0;
  /// Binds a node output to a value known at import time, materialized at
  /// `loc` only when used as data.
  virtual void defineConstant(llvm::StringRef key,
                              mlir::DenseElementsAttr value,
                              mlir::Location loc) = 0;
  /// Makes `key` another name of `source` (Identity).
  virtual void alias(llvm::StringRef key, llvm::StringRef source) = 0;
  /// Whether any needed node or graph output reads `key`.
  virtual bool isUsed(llvm::StringRef key) = 0;
};

class TfNode {
public:
  /// `inputKeys` are the node's data inputs as "name:k".
  TfNode(const tensorflow::NodeDef &proto,
         llvm::ArrayRef<std::string> inputKeys, KilnOpBuilder &builder,
         TfValueScope &scope)
      : proto(proto), inputKeys(inputKeys), builder(builder), scope(scope) {}

  const tensorflow::NodeDef &getProto() const { return proto; }
  llvm::StringRef getOp() const { return proto.op(); }
  KilnOpBuilder &getBuilder() { return builder; }
  mlir::Location getLoc() const { return builder.getLoc(); }
  mlir::MLIRContext *getContext() const { return getLoc().getContext(); }
  mlir::InFlightDiagnostic emitError() const { return builder.emitError(); }

  //===--------------------------------------------------------------------===//
  // Inputs (data inputs only; control inputs never reach a conversion)
  //===--------------------------------------------------------------------===//

  unsigned getNumInputs() const { return inputKeys.size(); }
  mlir::Value getInput(unsigned i) { return scope.lookup(inputKeys[i]); }
  /// Input `i`'s value if it is known at import time, else null.
  mlir::DenseElementsAttr getConstantInput(unsigned i) {
    return scope.lookupConstant(inputKeys[i]);
  }
  /// Input `i` read at import time as integers (int32 or int64, rank 0 or
  /// 1); `what` names it in errors ("shape", "axes").
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  getConstantInts(unsigned i, llvm::StringRef what);

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
  /// Errors unless `value` has a float element type; `what` names it.
  mlir::LogicalResult requireFloat(mlir::Value value,
                                   llvm::StringRef what) const;
  /// Errors if `value` is boolean (arithmetic needs numbers).
  mlir::LogicalResult requireNumeric(mlir::Value value,
                                     llvm::StringRef what) const;
  /// Errors unless `value` has rank `rank`.
  mlir::LogicalResult requireRank(mlir::Value value, int64_t rank,
                                  llvm::StringRef what) const;

  //===--------------------------------------------------------------------===//
  // Results
  //===--------------------------------------------------------------------===//

  /// Binds output `i` to `value`.
  mlir::LogicalResult setResult(unsigned i, mlir::FailureOr<mlir::Value> value);
  /// Makes output `i` another name of input `input` (Identity).
  void setResultToInput(unsigned i, unsigned input);
  /// Binds output `i` to a value known at import time.
  void setConstantResult(unsigned i, mlir::DenseElementsAttr value);
  /// Whether output `i` was set by the conversion.
  bool hasResult(unsigned i) const { return i < results.size() && results[i]; }
  /// Whether a needed node or a graph output reads output `i`.
  bool isOutputUsed(unsigned i) const;

private:
  void markResult(unsigned i);
  /// "name:i", the key of output i among the scope's values.
  std::string keyOf(unsigned i) const;

  const tensorflow::NodeDef &proto;
  llvm::ArrayRef<std::string> inputKeys;
  KilnOpBuilder &builder;
  TfValueScope &scope;
  llvm::SmallVector<bool> results;
};

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORFLOW_TFNODE_H
