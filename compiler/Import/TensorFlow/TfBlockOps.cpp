//===- TfBlockOps.cpp - TensorFlow SpaceToBatchND and BatchToSpaceND ------===//
//
// TensorFlow computes a dilated convolution (Keras' Conv1D and Conv2D with
// dilation_rate > 1 where it does not pass the dilation to the kernel, and
// causal Conv1D) as a convolution of blocks: SpaceToBatchND moves each
// block_shape-strided grid of the padded input into its own batch entry,
// the convolution runs undilated, and BatchToSpaceND puts the grids back
// and crops. Both are a reshape, a transpose and a reshape (with a pad
// before, or a crop after: compiler/Import/Padding.cpp), as TensorFlow's
// documentation defines them; block_shape, paddings and crops must be known
// at import time.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TensorFlow/TfOps.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Padding.h"

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// The blocks of input #0: block_shape (input #1, [M], each >= 1) and the
/// [M, 2] pairs of input #2 (paddings or crops, each >= 0).
struct Blocks {
  SmallVector<int64_t> shape, blocks, before, after;
};

FailureOr<Blocks> readBlocks(TfNode &node, StringRef pairs) {
  Blocks b;
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(node.getInput(0), "an input");
  FailureOr<SmallVector<int64_t>> blocks = node.getConstantInts(1, "block_shape");
  if (failed(shape) || failed(blocks))
    return failure();
  b.shape.assign(shape->begin(), shape->end());
  b.blocks = *blocks;
  auto m = static_cast<int64_t>(b.blocks.size()), rank = static_cast<int64_t>(b.shape.size());
  if (rank < 2)
    return node.emitError() << "expects an input of rank >= 2 (a batch and a block "
                               "dimension), got shape "
                            << formatIntList(b.shape);
  if (m < 1 || m + 1 > rank)
    return node.emitError() << "expects 1 to " << rank - 1
                            << " block dimensions for an input of shape "
                            << formatIntList(b.shape) << ", got " << m;
  for (int64_t size : b.blocks)
    if (size < 1 || size > (int64_t(1) << 24))
      return node.emitError() << "expects block_shape in [1, 2^24], got "
                              << formatIntList(b.blocks);
  DenseElementsAttr given = node.getConstantInput(2);
  auto type = given ? llvm::dyn_cast<RankedTensorType>(given.getType()) : nullptr;
  if (!type || !type.getElementType().isInteger() ||
      type.getShape() != ArrayRef<int64_t>{m, 2})
    return node.emitError() << "expects input #2 (" << pairs
                            << ") to be int32 or int64 values of shape [" << m
                            << ", 2], known at import time";
  for (auto [k, value] : llvm::enumerate(given.getValues<APInt>())) {
    int64_t amount = value.getSExtValue();
    if (amount < 0 || amount > (int64_t(1) << 24))
      return node.emitError() << "expects " << pairs << " in [0, 2^24], got " << amount
                              << " for block dimension " << k / 2;
    (k % 2 ? b.after : b.before).push_back(amount);
  }
  return b;
}

/// SpaceToBatchND(input, block_shape, paddings): [B, S1..SM, rest] padded to
/// [B, P1..PM, rest], then [B, P1/b1, b1, ..., PM/bM, bM, rest], with the
/// block offsets moved before the batch, merged into
/// [b1 ... bM B, P1/b1, ..., PM/bM, rest].
LogicalResult convertSpaceToBatch(TfNode &node) {
  FailureOr<Blocks> b = readBlocks(node, "paddings");
  if (failed(b))
    return failure();
  auto m = static_cast<int64_t>(b->blocks.size()), rank = static_cast<int64_t>(b->shape.size());
  SmallVector<int64_t> axes, padded(b->shape);
  for (int64_t d = 0; d < m; ++d) {
    axes.push_back(d + 1);
    padded[d + 1] += b->before[d] + b->after[d];
    if (padded[d + 1] % b->blocks[d] != 0)
      return node.emitError() << "pads dimension " << d + 1 << " to " << padded[d + 1]
                              << ", which block size " << b->blocks[d] << " does not divide";
  }
  Value x = node.getInput(0);
  Attribute zero = node.getBuilder().getBuilder().getZeroAttr(
      llvm::cast<ShapedType>(x.getType()).getElementType());
  FailureOr<Value> y = buildPad(node, x, axes, b->before, b->after, PadMode::Constant, zero);
  if (failed(y))
    return failure();
  SmallVector<int64_t> split{padded[0]}, perm, merged{padded[0]};
  for (int64_t d = 0; d < m; ++d) {
    split.append({padded[d + 1] / b->blocks[d], b->blocks[d]});
    merged[0] *= b->blocks[d];
    merged.push_back(padded[d + 1] / b->blocks[d]);
  }
  for (int64_t d = 0; d < m; ++d)
    perm.push_back(2 + 2 * d);
  perm.push_back(0);
  for (int64_t d = 0; d < m; ++d)
    perm.push_back(1 + 2 * d);
  for (int64_t d = m + 1; d < rank; ++d) {
    perm.push_back(static_cast<int64_t>(split.size()));
    split.push_back(padded[d]);
    merged.push_back(padded[d]);
  }
  KilnOpBuilder &kiln = node.getBuilder();
  Result z = kiln.reshape(*y, split);
  if (succeeded(z))
    z = kiln.transpose(*z, perm);
  if (succeeded(z))
    z = kiln.reshape(*z, merged);
  return node.setResult(0, z);
}

/// BatchToSpaceND(input, block_shape, crops): [b1 ... bM B, S1..SM, rest]
/// as [b1, ..., bM, B, S1, ..., SM, rest], the block offsets moved after
/// their dimensions, merged into [B, S1 b1, ..., SM bM, rest], then cropped.
LogicalResult convertBatchToSpace(TfNode &node) {
  FailureOr<Blocks> b = readBlocks(node, "crops");
  if (failed(b))
    return failure();
  auto m = static_cast<int64_t>(b->blocks.size()), rank = static_cast<int64_t>(b->shape.size());
  int64_t product = 1;
  bool divides = true;
  for (int64_t size : b->blocks) {
    divides = divides && product <= b->shape[0] / size;
    product = divides ? product * size : product;
  }
  if (!divides || b->shape[0] % product != 0)
    return node.emitError() << "expects a batch divisible by the product of block_shape "
                            << formatIntList(b->blocks) << ", got shape "
                            << formatIntList(b->shape);
  SmallVector<int64_t> split(b->blocks), perm{m}, merged{b->shape[0] / product}, axes;
  split.push_back(b->shape[0] / product);
  for (int64_t d = 0; d < m; ++d) {
    split.push_back(b->shape[d + 1]);
    perm.append({m + 1 + d, d});
    merged.push_back(b->shape[d + 1] * b->blocks[d]);
    axes.push_back(d + 1);
    if (b->before[d] + b->after[d] >= merged.back())
      return node.emitError() << "crops dimension " << d + 1 << " of size " << merged.back()
                              << " by " << b->before[d] << " and " << b->after[d]
                              << ", leaving nothing";
  }
  for (int64_t d = m + 1; d < rank; ++d) {
    perm.push_back(static_cast<int64_t>(split.size()));
    split.push_back(b->shape[d]);
    merged.push_back(b->shape[d]);
  }
  KilnOpBuilder &kiln = node.getBuilder();
  Result z = kiln.reshape(node.getInput(0), split);
  if (succeeded(z))
    z = kiln.transpose(*z, perm);
  if (succeeded(z))
    z = kiln.reshape(*z, merged);
  if (failed(z))
    return failure();
  SmallVector<int64_t> cropBefore, cropAfter;
  for (int64_t d = 0; d < m; ++d) {
    cropBefore.push_back(-b->before[d]);
    cropAfter.push_back(-b->after[d]);
  }
  return node.setResult(0, buildPad(node, *z, axes, cropBefore, cropAfter, PadMode::Constant,
                                    Attribute()));
}

const TfOpConversion kBlockOps[] = {
    {"SpaceToBatchND", 3, 3, "T Tblock_shape Tpaddings", convertSpaceToBatch},
    {"BatchToSpaceND", 3, 3, "T Tblock_shape Tcrops", convertBatchToSpace},
};

} // namespace

ArrayRef<TfOpConversion> getTfBlockOps() { return kBlockOps; }

} // namespace kiln
