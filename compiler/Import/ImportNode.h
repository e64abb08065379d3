//===- ImportNode.h - What an op conversion sees of one node ----*- C++ -*-===//
//
// The part of a node that ONNX and TensorFlow conversions see alike: inputs
// and results by the names the graph gives them, and the checks conversions
// share. OnnxNode and TfNode add their format's attributes and naming. Every
// check that can fail emits exactly one error at the node's location, so a
// conversion just returns failure when one does.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_IMPORTNODE_H
#define KILN_COMPILER_IMPORT_IMPORTNODE_H

#include "compiler/Import/KilnOpBuilder.h"

#include <string>

namespace kiln {

/// The values of the graph being imported, by the name a node output has in
/// its format (ONNX "name", TensorFlow "node:k").
class ImportValueScope {
public:
  virtual ~ImportValueScope() = default;
  /// The value named `name`, materializing a value known at import time (as
  /// a variable read or a constant) on first use as data. The name is known
  /// to exist (the graph order checked it).
  virtual mlir::Value lookup(llvm::StringRef name) = 0;
  /// The value of `name` if known at import time, else null. Never
  /// materializes anything.
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
  /// Whether any node or graph output that is imported reads `name`.
  virtual bool isUsed(llvm::StringRef name) = 0;
};

class ImportNode {
public:
  virtual ~ImportNode() = default;

  KilnOpBuilder &getBuilder() { return builder; }
  mlir::Location getLoc() const { return builder.getLoc(); }
  mlir::MLIRContext *getContext() const { return getLoc().getContext(); }
  mlir::InFlightDiagnostic emitError() const { return builder.emitError(); }

  //===--------------------------------------------------------------------===//
  // Inputs
  //===--------------------------------------------------------------------===//

  /// Input `i` as a value; it must be given.
  mlir::Value getInput(unsigned i) { return scope.lookup(getInputName(i)); }
  /// Input `i`'s value if it is given and known at import time, else null.
  mlir::DenseElementsAttr getConstantInput(unsigned i);

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
  /// Errors unless `value` has rank `rank`.
  mlir::LogicalResult requireRank(mlir::Value value, int64_t rank,
                                  llvm::StringRef what) const;
  /// Errors unless `count` is in [min, max] (max UINT_MAX: any number from
  /// min): "expects 1 to 3 inputs, got 4", `noun` being "input".
  mlir::LogicalResult requireCount(unsigned count, unsigned min, unsigned max,
                                   llvm::StringRef noun) const;

  //===--------------------------------------------------------------------===//
  // Results
  //===--------------------------------------------------------------------===//

  /// Binds output `i` (if the node names it) to `value`.
  mlir::LogicalResult setResult(unsigned i, mlir::FailureOr<mlir::Value> value);
  /// Makes output `i` another name of input `input` (Identity).
  void setResultToInput(unsigned i, unsigned input);
  /// Binds output `i` to a value known at import time.
  void setConstantResult(unsigned i, mlir::DenseElementsAttr value);
  /// Whether output `i` was set by the conversion.
  bool hasResult(unsigned i) const { return i < results.size() && results[i]; }
  /// Whether a node or a graph output that is imported reads output `i`.
  bool isOutputUsed(unsigned i) const;

protected:
  ImportNode(KilnOpBuilder &builder, ImportValueScope &scope)
      : builder(builder), scope(scope) {}

  /// The scope's name of input `i`; "" when it is not given.
  virtual llvm::StringRef getInputName(unsigned i) const = 0;
  /// The scope's name of output `i`; "" when the node leaves it unnamed.
  virtual std::string getOutputName(unsigned i) const = 0;

  /// Input `i` read at import time as integers: int32 or int64 values of
  /// rank 0 or 1. `what` names it ("shape", "axes"); `sources` says what is
  /// known at import time and `elementTypes` which integers the format
  /// takes, in the errors.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  readConstantInts(unsigned i, llvm::StringRef what, llvm::StringRef sources,
                   llvm::StringRef elementTypes);

  /// `axis` in [low, limit), made non-negative by subtracting `low`.
  mlir::FailureOr<int64_t> normalizeAxisIn(int64_t axis, int64_t low,
                                           int64_t limit, int64_t rank) const;
  void markResult(unsigned i);

  KilnOpBuilder &builder;
  ImportValueScope &scope;

private:
  llvm::SmallVector<bool> results;
};

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_IMPORTNODE_H
