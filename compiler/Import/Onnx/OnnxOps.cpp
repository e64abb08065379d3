//===- OnnxOps.cpp - The table of ONNX op conversions ---------------------===//

#include "compiler/Import/Onnx/OnnxOps.h"

#include "compiler/Import/DiagnosticText.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace kiln {
namespace {

using OpTable = llvm::StringMap<const OnnxOpConversion *>;

OpTable buildTable() {
  OpTable table;
  for (ArrayRef<OnnxOpConversion> family :
       {getOnnxMathOps(), getOnnxShapeOps(), getOnnxNormOps(), getOnnxNNOps(),
        getOnnxRecurrentOps(), getOnnxResizeOps(), getOnnxActivationOps(),
        getOnnxPadOps(), getOnnxPositionOps(), getOnnxEinsumOps()})
    for (const OnnxOpConversion &op : family)
      table[op.opType] = &op;
  return table;
}

LogicalResult checkCounts(const OnnxOpConversion &op, OnnxNode &node) {
  if (failed(node.requireCount(node.getNumInputs(), op.minInputs, op.maxInputs,
                               "input")))
    return failure();
  for (unsigned i = 0; i < op.minInputs; ++i)
    if (!node.hasInput(i))
      return node.emitError()
             << "expects input #" << i << " to be given, got an empty name";
  unsigned outputs = node.getNumOutputs();
  if (outputs == 0 || outputs > op.maxOutputs) {
    InFlightDiagnostic error = node.emitError();
    if (op.maxOutputs == 1)
      error << "expects 1 output";
    else
      error << "expects 1 to " << op.maxOutputs << " outputs";
    return error << ", got " << outputs;
  }
  return success();
}

LogicalResult checkAttributes(const OnnxOpConversion &op, OnnxNode &node) {
  SmallVector<StringRef> known;
  op.attributes.split(known, ' ', -1, /*KeepEmpty=*/false);
  for (const onnx::AttributeProto &attr : node.getProto().attribute()) {
    if (!llvm::is_contained(known, attr.name()))
      return node.emitError() << "unsupported attribute '"
                              << printable(attr.name()) << "' on " << op.opType;
  }
  return success();
}

} // namespace

const OnnxOpConversion *lookupOnnxOp(StringRef opType) {
  static const OpTable table = buildTable();
  return table.lookup(opType);
}

LogicalResult convertOnnxNode(const OnnxOpConversion &op, OnnxNode &node) {
  if (node.getOpset() < op.sinceOpset)
    return node.emitError()
           << op.opType << " needs opset " << op.sinceOpset
           << " or newer, the model imports opset " << node.getOpset();
  if (failed(checkCounts(op, node)) || failed(checkAttributes(op, node)) ||
      failed(op.convert(node)))
    return failure();
  // Outputs the conversion does not produce must be unused.
  for (unsigned i = 0, e = node.getNumOutputs(); i < e; ++i) {
    if (!node.hasResult(i) && node.isOutputUsed(i))
      return node.emitError()
             << "the model uses output #" << i << " ('"
             << printable(node.getProto().output(i)) << "') of " << op.opType
             << ", which kiln does not produce";
  }
  return success();
}

} // namespace kiln
