//===- RegisterAll.h - Every dialect and pass kiln tools know ---*- C++ -*-===//

#ifndef KILN_COMPILER_REGISTERALL_H
#define KILN_COMPILER_REGISTERALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace kiln {

/// Adds the kiln dialect and the upstream dialects kiln IR uses.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers kiln's passes and pipelines and the upstream passes tools expose;
/// calling it again does nothing.
void registerAllPasses();

} // namespace kiln

#endif // KILN_COMPILER_REGISTERALL_H
