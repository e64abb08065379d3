//===- TfOps.cpp - The table of TensorFlow op conversions -----------------===//

#include "compiler/Import/TensorFlow/TfOps.h"

#include "compiler/Import/DiagnosticText.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace kiln {
namespace {

using OpTable = llvm::StringMap<const TfOpConversion *>;

OpTable buildTable() {
  OpTable table;
  for (ArrayRef<TfOpConversion> family :
       {getTfMathOps(), getTfShapeOps(), getTfNNOps(), getTfPadOps(), getTfPositionOps(),
        getTfBlockOps()})
    for (const TfOpConversion &op : family)
      table[op.op] = &op;
  return table;
}

LogicalResult checkAttributes(const TfOpConversion &op, TfNode &node) {
  SmallVector<StringRef> known;
  op.attributes.split(known, ' ', -1, /*KeepEmpty=*/false);
  // Sorted, so the error names the same attribute whatever the map order.
  SmallVector<StringRef> unknown;
  for (const auto &[name, value] : node.getProto().attr()) {
    (void)value;
    if (!StringRef(name).starts_with("_") && !llvm::is_contained(known, name))
      unknown.push_back(name);
  }
  if (unknown.empty())
    return success();
  llvm::sort(unknown);
  return node.emitError() << "unsupported attribute '"
                          << printable(unknown.front()) << "' on " << op.op;
}

} // namespace

const TfOpConversion *lookupTfOp(StringRef op) {
  static const OpTable table = buildTable();
  return table.lookup(op);
}

LogicalResult convertTfNode(const TfOpConversion &op, TfNode &node) {
  if (failed(node.requireCount(node.getNumInputs(), op.minInputs,
                               op.maxInputs, "data input")) ||
      failed(checkAttributes(op, node)))
    return failure();
  return op.convert(node);
}

} // namespace kiln
