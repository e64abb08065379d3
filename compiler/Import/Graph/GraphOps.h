//===- GraphOps.h - The ops of the graph format -----------------*- C++ -*-===//
//
// One table entry per graph-format op: its name, how many inputs it takes,
// which attributes it knows and how it becomes kiln ops. docs/graph-format.md
// documents the same table for users.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_GRAPH_GRAPHOPS_H
#define KILN_COMPILER_IMPORT_GRAPH_GRAPHOPS_H

#include "compiler/Import/KilnOpBuilder.h"
#include "proto/kiln/graph.pb.h"

#include <optional>

namespace kiln {

/// What a node's conversion sees: its inputs, its attributes (read through
/// checked getters that emit one error on a missing or mistyped attribute)
/// and the op builder positioned at the node's location.
class NodeContext {
public:
  NodeContext(const graph::Node &node, llvm::ArrayRef<mlir::Value> inputs,
              KilnOpBuilder &builder)
      : node(node), inputs(inputs), builder(builder) {}

  mlir::Value input(unsigned i) const { return inputs[i]; }
  size_t numInputs() const { return inputs.size(); }
  llvm::ArrayRef<mlir::Value> allInputs() const { return inputs; }
  KilnOpBuilder &b() { return builder; }

  /// Whether the node sets the attribute.
  bool has(llvm::StringRef name) const { return node.attrs().count(name.str()) > 0; }
  /// Attribute getters. With `fallback` unset, the attribute is required.
  mlir::FailureOr<int64_t> getInt(llvm::StringRef name,
                                  std::optional<int64_t> fallback = {});
  mlir::FailureOr<double> getFloat(llvm::StringRef name,
                                   std::optional<double> fallback = {});
  mlir::FailureOr<bool> getBool(llvm::StringRef name,
                                std::optional<bool> fallback = {});
  mlir::FailureOr<std::string> getString(llvm::StringRef name,
                                         std::optional<std::string> fallback = {});
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  getInts(llvm::StringRef name,
          std::optional<llvm::SmallVector<int64_t>> fallback = {});
  mlir::FailureOr<mlir::Type> getType(llvm::StringRef name);
  mlir::FailureOr<mlir::DenseElementsAttr> getTensor(llvm::StringRef name);

  /// `axis` in [-rank, rank) made non-negative, or an error naming `attr`.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                         llvm::StringRef attr);

private:
  /// The attribute, or null after emitting an error if it is required.
  const graph::AttrValue *find(llvm::StringRef name, bool required);
  mlir::LogicalResult wrongKind(llvm::StringRef name, llvm::StringRef expected);

  const graph::Node &node;
  llvm::ArrayRef<mlir::Value> inputs;
  KilnOpBuilder &builder;
};

struct GraphOpSpec {
  llvm::StringLiteral name;
  unsigned minInputs;
  unsigned maxInputs;
  llvm::ArrayRef<llvm::StringLiteral> attrs;
  KilnOpBuilder::Result (*build)(NodeContext &);
};

/// The op named `name`, or null.
const GraphOpSpec *lookupGraphOp(llvm::StringRef name);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_GRAPH_GRAPHOPS_H
