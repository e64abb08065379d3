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
        getOnnxPadOps(), getOnnxPositionOps(), getOnnxEinsumOps(), getOnnxLoopOps(),
        getOnnxIfOps()})
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

LogicalResult convertOnnxNodeProto(const onnx::NodeProto &proto, int64_t opset,
                                   StringRef modelDir, KilnOpBuilder &builder,
                                   OnnxValueScope &scope) {
  if (!proto.domain().empty() && proto.domain() != "ai.onnx")
    return builder.emitError() << "is in domain '" << printable(proto.domain())
                               << "'; kiln reads the default ONNX domain only";
  const OnnxOpConversion *op = lookupOnnxOp(proto.op_type());
  if (!op)
    return builder.emitError() << "unsupported ONNX op '" << printable(proto.op_type())
                               << "' (opset " << opset << ")";
  // Sequences hold several tensors: only these ops take them.
  if (!llvm::is_contained({"SequenceAt", "ConcatFromSequence", "Loop"}, proto.op_type()))
    for (const std::string &input : proto.input())
      if (!input.empty() && (scope.lookupSequence(input) || scope.lookupStackedSequence(input)))
        return builder.emitError() << "reads the sequence '" << printable(input)
                                   << "'; kiln reads sequences only through SequenceAt and "
                                      "ConcatFromSequence";
  OnnxNode node(proto, opset, modelDir, builder, scope);
  return convertOnnxNode(*op, node);
}

} // namespace kiln
