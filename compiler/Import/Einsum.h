//===- Einsum.h - Einsum as transposes and one product ----------*- C++ -*-===//
//
// Einsum as ONNX (Einsum) and TensorFlow (Einsum: Keras' MultiHeadAttention
// and EinsumDense) write it: one or two operands, an explicit or implicit
// output, no ellipsis and no letter repeated within an operand.
// torch.einsum exports to it ('bij,bjk->bik', 'bhqd,bhkd->bhqk'), and so do
// Keras' attention layers ('abcd,aecd->acbe').
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_EINSUM_H
#define KILN_COMPILER_IMPORT_EINSUM_H

#include "compiler/Import/ImportNode.h"

namespace kiln {

/// Sets the node's result 0 to `equation` of its first `operands` inputs;
/// one error naming the equation for what kiln does not support.
mlir::LogicalResult buildEinsum(ImportNode &node, llvm::StringRef equation,
                                unsigned operands);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_EINSUM_H
