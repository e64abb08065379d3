//===- TensorValues.h - Graph-format types and constant tensors -*- C++ -*-===//

#ifndef KILN_COMPILER_IMPORT_GRAPH_TENSORVALUES_H
#define KILN_COMPILER_IMPORT_GRAPH_TENSORVALUES_H

#include "proto/kiln/graph.pb.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"

namespace kiln {

/// The IR element type of a graph dtype, or null for DT_INVALID and unknown
/// values.
mlir::Type elementTypeOf(graph::DataType dtype, mlir::MLIRContext &context);

/// A static tensor type from a dtype and dims; emits an error at `loc` for a
/// missing or unknown dtype, a dimension < 1 or more than 2^40 elements.
mlir::FailureOr<mlir::RankedTensorType>
tensorTypeOf(graph::DataType dtype, llvm::ArrayRef<int64_t> dims,
             mlir::Location loc);

/// Converts a constant tensor, checking that exactly one value field holds
/// either one value (a splat) or one per element. Errors are emitted at `loc`
/// and mention `what` (e.g. "attribute 'value'").
mlir::FailureOr<mlir::DenseElementsAttr>
convertTensorValue(const graph::TensorValue &value, mlir::Location loc,
                   llvm::StringRef what);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_GRAPH_TENSORVALUES_H
