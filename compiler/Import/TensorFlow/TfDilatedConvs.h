//===- TfDilatedConvs.h - Dilated convolutions made one op ------*- C++ -*-===//
//
// TensorFlow writes a dilated convolution (Keras' Conv1D and Conv2D with
// dilation_rate > 1, causal Conv1D) as SpaceToBatchND, an undilated VALID
// convolution of the blocks and BatchToSpaceND (a Conv1D with an
// ExpandDims and a Squeeze around its Conv2D). Imported op by op that is a
// pad, three reshapes and two transposes on either side of the
// convolution (TfBlockOps.cpp); kiln's convolution dilates itself, so
// before the graph is read each such triple is rewritten into the one
// Conv2D (or DepthwiseConv2dNative) it computes: dilations of the block
// shape and explicit padding of the blocks' padding less the crops.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_TENSORFLOW_TFDILATEDCONVS_H
#define KILN_COMPILER_IMPORT_TENSORFLOW_TFDILATEDCONVS_H

#include "compiler/Import/TensorFlow/TfGraphFile.h"

#include "llvm/ADT/StringSet.h"

#include <functional>

namespace kiln {

/// The attribute a folded convolution carries, [block, padding added] per
/// spatial dimension (H, W): SpaceToBatchND required block | size +
/// padding, which the convolution's import checks (its input's shape is
/// known only then).
constexpr llvm::StringLiteral kBlockPaddingAttr = "_kiln_block_padding";

/// Rewrites each SpaceToBatchND -> [ExpandDims ->] Conv2D or
/// DepthwiseConv2dNative -> [Squeeze ->] BatchToSpaceND whose convolution
/// is NHWC, VALID, of stride and dilation 1 and read only by the chain,
/// none of whose nodes but the last `outputs` names (--outputs), and whose
/// padding less the crops is >= 0, into the dilated convolution; others
/// stay as they are. Fails (one error, at `nodeLoc(i)`) only for a
/// Const inside such a chain that does not decode.
mlir::LogicalResult foldTfDilatedConvolutions(tensorflow::GraphDef &graph,
                                              std::function<mlir::Location(int)> nodeLoc,
                                              const llvm::StringSet<> &outputs);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORFLOW_TFDILATEDCONVS_H
