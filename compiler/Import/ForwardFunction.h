//===- ForwardFunction.h - The @forward function of an import ---*- C++ -*-===//
//
// ONNX and TensorFlow graphs become @forward alike: graph inputs are its
// arguments and graph outputs its results, each named by a kiln.name
// attribute, and values known at import time are materialized at its top
// (a variable read or a constant) when first used as data.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_FORWARDFUNCTION_H
#define KILN_COMPILER_IMPORT_FORWARDFUNCTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kiln {

/// The name of the function an import builds.
constexpr llvm::StringLiteral kForwardName = "forward";

/// Creates @forward at the end of `module`'s body, taking `argTypes` named
/// `argNames`, and sets `builder` at the end of its entry block.
mlir::func::FuncOp createForward(mlir::OpBuilder &builder,
                                 mlir::ModuleOp module, mlir::Location loc,
                                 mlir::TypeRange argTypes,
                                 llvm::ArrayRef<std::string> argNames);

/// Ends @forward, at `builder`'s insertion point, by returning `results`
/// named `resultNames`, and makes its type return them.
void returnFromForward(mlir::OpBuilder &builder, mlir::func::FuncOp forward,
                       mlir::Location loc, mlir::ValueRange results,
                       llvm::ArrayRef<std::string> resultNames);

/// The variable reads and constants at the top of @forward, in the order
/// they are first used, so that each comes before every use.
class ForwardPrologue {
public:
  ForwardPrologue() = default;
  explicit ForwardPrologue(mlir::func::FuncOp forward) : forward(forward) {}

  /// Declares kiln.variable `name` holding `value` (frozen unless
  /// `trainable`) and reads it.
  mlir::Value readVariable(mlir::Location loc, llvm::StringRef name,
                           mlir::DenseElementsAttr value, bool trainable);
  mlir::Value constant(mlir::Location loc, mlir::DenseElementsAttr value);

private:
  /// A builder after the last op of the prologue.
  mlir::OpBuilder atEnd();

  mlir::func::FuncOp forward;
  mlir::Operation *last = nullptr;
};

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_FORWARDFUNCTION_H
