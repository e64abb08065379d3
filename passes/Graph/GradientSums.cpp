//===- GradientSums.cpp - A value's gradient from its uses' ---------------===//

#include "passes/Graph/GradientSums.h"

using namespace mlir;

namespace kiln {
namespace {

/// A product A^T B of two matrices that nothing reads yet and that carries
/// no attribute but transpose_a.
MatmulOp rowContraction(Value part) {
  auto matmul = part.getDefiningOp<MatmulOp>();
  if (!matmul || !matmul.getTransposeA() || matmul.getTransposeB() || !part.use_empty() ||
      tensorType(matmul.getLhs()).getRank() != 2 || tensorType(matmul.getRhs()).getRank() != 2 ||
      matmul->getAttrs().size() != 1)
    return {};
  return matmul;
}

} // namespace

Value sumGradients(ArrayRef<Value> parts, GradientBuilder &gb) {
  SmallVector<MatmulOp> products;
  SmallVector<Value> rest;
  // Products of the first one's result and operand types merge.
  auto mergesWithFirst = [&](MatmulOp product) {
    if (products.empty())
      return true;
    MatmulOp first = products.front();
    return product.getType() == first.getType() &&
           tensorType(product.getLhs()).getElementType() ==
               tensorType(first.getLhs()).getElementType() &&
           tensorType(product.getRhs()).getElementType() ==
               tensorType(first.getRhs()).getElementType();
  };
  for (Value part : parts) {
    MatmulOp product = rowContraction(part);
    if (product && mergesWithFirst(product))
      products.push_back(product);
    else
      rest.push_back(part);
  }
  if (products.size() >= 2) {
    SmallVector<Value> lhs, rhs;
    for (MatmulOp product : products) {
      lhs.push_back(product.getLhs());
      rhs.push_back(product.getRhs());
    }
    Value stackedLhs = gb.builder().create<ConcatOp>(gb.location(), lhs, 0);
    Value stackedRhs = gb.builder().create<ConcatOp>(gb.location(), rhs, 0);
    rest.push_back(gb.matmul(stackedLhs, stackedRhs, /*transposeA=*/true, false));
    // The merged products are left to the sweep's dead-code removal: a rule
    // passing its gradient through (an add's) may have given one to another
    // value too.
  } else if (products.size() == 1) {
    rest.push_back(products.front());
  }
  Value sum;
  for (Value part : rest)
    sum = sum ? gb.add(sum, part) : part;
  return sum;
}

} // namespace kiln
