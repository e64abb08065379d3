//===- BoolBytes.h - Boolean elements loaded and stored as bytes -*- C++
//-*-===//
//
// A boolean tensor's element is one byte in memory, 0 or 1 (as numpy's and
// LLVM's i1 store it). LLVM's loop vectorizer will not widen a loop that
// loads or stores i1 (a vector of i1 is packed in bits, not bytes): such a
// loop gathers its booleans one at a time (an attention mask read by the
// transformer's score kernels: 16 scalar loads per 16 elements). Loading
// the byte and truncating it, storing the zero-extended byte, reads and
// writes the same memory and vectorizes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TARGET_BOOLBYTES_H
#define KILN_COMPILER_TARGET_BOOLBYTES_H

namespace llvm {
class Module;
} // namespace llvm

namespace kiln {

/// Rewrites every load and store of an i1 in `module` as one of an i8.
void accessBoolsAsBytes(llvm::Module &module);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_BOOLBYTES_H
