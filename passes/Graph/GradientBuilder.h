//===- GradientBuilder.h - Building blocks of gradient rules ----*- C++ -*-===//
//
// Gradient rules build kiln ops on static shapes over and over: elementwise
// arithmetic, splat constants, broadcasting a reduced gradient back and
// summing a broadcast one down. GradientBuilder keeps each rule to its math.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_GRAPH_GRADIENTBUILDER_H
#define KILN_PASSES_GRAPH_GRADIENTBUILDER_H

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace kiln {

class GradientBuilder {
public:
  GradientBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : b(builder), loc(loc) {}

  mlir::OpBuilder &builder() { return b; }
  mlir::Location location() const { return loc; }

  mlir::Value add(mlir::Value x, mlir::Value y) { return b.create<AddOp>(loc, x, y); }
  mlir::Value sub(mlir::Value x, mlir::Value y) { return b.create<SubOp>(loc, x, y); }
  mlir::Value mul(mlir::Value x, mlir::Value y) { return b.create<MulOp>(loc, x, y); }
  mlir::Value div(mlir::Value x, mlir::Value y) { return b.create<DivOp>(loc, x, y); }
  mlir::Value neg(mlir::Value x) { return b.create<NegOp>(loc, x); }

  /// A constant of `type` with every element `value`.
  mlir::Value splat(mlir::RankedTensorType type, double value);
  /// A constant like `x`'s type, with every element `value`.
  mlir::Value splatLike(mlir::Value x, double value);
  /// `x * value`, elementwise.
  mlir::Value scale(mlir::Value x, double value) { return mul(x, splatLike(x, value)); }

  /// `x` numpy-broadcast to `type` (x itself when the types match).
  mlir::Value broadcastTo(mlir::Value x, mlir::RankedTensorType type);
  /// The reverse of broadcastTo: `g` summed over the dimensions broadcasting
  /// added or stretched, shaped as `type`.
  mlir::Value sumTo(mlir::Value g, mlir::RankedTensorType type);
  mlir::Value reshape(mlir::Value x, mlir::RankedTensorType type);
  mlir::Value reduceSum(mlir::Value x, llvm::ArrayRef<int64_t> axes, bool keepDims);
  mlir::Value reduceMean(mlir::Value x, llvm::ArrayRef<int64_t> axes, bool keepDims);
  /// A reduction result `r` (over `axes` of `full`) shaped with size-1
  /// dimensions kept, then broadcast to `full`.
  mlir::Value expandReduced(mlir::Value r, llvm::ArrayRef<int64_t> axes,
                            mlir::RankedTensorType full);
  /// `g` where `condition`, else zero.
  mlir::Value where(mlir::Value condition, mlir::Value g);
  /// Zero where `condition`, else `g`.
  mlir::Value whereNot(mlir::Value condition, mlir::Value g);
  mlir::Value compare(ComparePredicate predicate, mlir::Value x, mlir::Value y) {
    return b.create<CompareOp>(loc, predicate, x, y);
  }
  mlir::Value matmul(mlir::Value x, mlir::Value y, bool transposeA, bool transposeB);
  /// `x` with every dimension before the last `trailing` ones merged into one.
  mlir::Value flattenLeading(mlir::Value x, int64_t trailing);

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
};

/// Makes `values` the results of `func` (one block): a new return, the
/// function type and one attribute dictionary per result.
void setFunctionResults(mlir::func::FuncOp func, mlir::ValueRange values,
                        llvm::ArrayRef<mlir::DictionaryAttr> attrs);

/// The tensor type of a value.
inline mlir::RankedTensorType tensorType(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}

} // namespace kiln

#endif // KILN_PASSES_GRAPH_GRADIENTBUILDER_H
