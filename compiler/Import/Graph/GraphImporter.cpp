//===- GraphImporter.cpp - Kiln graph file → kiln module ------------------===//
//
// Checks names, sorts nodes by their inputs (rejecting cycles and inputs
// nothing produces), then builds @forward node by node through the op table
// of GraphOps.cpp. Each error is one diagnostic at the line of the variable,
// input, node or output at fault.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Graph/GraphImporter.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/FirstErrorOnly.h"
#include "compiler/Import/Graph/GraphFile.h"
#include "compiler/Import/Graph/GraphOps.h"
#include "compiler/Import/Graph/TensorValues.h"
#include "compiler/Import/Graph/TrainSpecImport.h"
#include "compiler/Import/NodeOrder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"


using namespace mlir;

namespace kiln {
namespace {

class GraphImporter {
public:
  GraphImporter(const GraphFile &file, MLIRContext &context)
      : file(file), graph(file.graph), context(context), builder(&context),
        ops(builder) {}

  OwningOpRef<ModuleOp> run();

private:
  /// "node 'fc1'", or "node #3" for an unnamed one.
  static std::string label(StringRef kind, const std::string &name, int i) {
    if (name.empty())
      return (kind + " #" + Twine(i)).str();
    return (kind + " '" + name + "'").str();
  }
  Location variableLoc(int i) const {
    return file.locate(context, file.variableLines[i],
                       label("variable", graph.variables(i).name(), i));
  }
  Location inputLoc(int i) const {
    return file.locate(context, file.inputLines[i],
                       label("input", graph.inputs(i).name(), i));
  }
  Location nodeLoc(int i) const {
    return file.locate(context, file.nodeLines[i],
                       label("node", graph.nodes(i).name(), i));
  }
  Location outputLoc(int i) const {
    return file.locate(context, file.outputLines[i],
                       "output '" + graph.outputs(i) + "'");
  }

  LogicalResult checkNames();
  LogicalResult checkNodeInputs();
  FailureOr<SmallVector<int>> sortNodes();
  LogicalResult importVariables();
  LogicalResult createForward();
  LogicalResult importNode(int index);
  LogicalResult importOutputs();
  LogicalResult checkLoss();
  FailureOr<InitializerAttr> convertInitializer(const graph::Variable &var,
                                                RankedTensorType type,
                                                Location loc);

  /// The value of a name used as an input. Variables are read at their
  /// first use.
  Value valueOf(const std::string &name);

  const GraphFile &file;
  const graph::GraphDef &graph;
  MLIRContext &context;
  OpBuilder builder;
  KilnOpBuilder ops;
  OwningOpRef<ModuleOp> module;
  func::FuncOp forward;

  enum class NameKind { Variable, Input, Node };
  llvm::StringMap<std::pair<NameKind, int>> names;
  llvm::StringMap<Value> values;
  SmallVector<VariableOp> variableOps;
  SmallVector<Value> resultValues;
  SmallVector<std::string> resultNames;
};

StringRef describe(int kind) {
  static const char *kinds[] = {"a variable", "an input", "a node"};
  return kinds[kind];
}

LogicalResult GraphImporter::checkNames() {
  auto declare = [&](const std::string &name, NameKind kind, int index,
                     Location loc) -> LogicalResult {
    if (name.empty())
      return emitError(loc) << "has an empty name";
    // As the binary form's parser requires (artifacts and reports carry
    // names into JSON and messages).
    if (!llvm::json::isUTF8(name))
      return emitError(loc) << "name '" << printable(name) << "' is not valid UTF-8";
    auto [it, inserted] = names.try_emplace(name, kind, index);
    if (!inserted)
      return emitError(loc) << "name '" << printable(name) << "' is already used by "
                            << describe(static_cast<int>(it->second.first));
    return success();
  };
  for (int i = 0; i < graph.variables_size(); ++i)
    if (failed(declare(graph.variables(i).name(), NameKind::Variable, i,
                       variableLoc(i))))
      return failure();
  for (int i = 0; i < graph.inputs_size(); ++i)
    if (failed(declare(graph.inputs(i).name(), NameKind::Input, i, inputLoc(i))))
      return failure();
  for (int i = 0; i < graph.nodes_size(); ++i)
    if (failed(declare(graph.nodes(i).name(), NameKind::Node, i, nodeLoc(i))))
      return failure();
  return success();
}

LogicalResult GraphImporter::checkNodeInputs() {
  for (int i = 0; i < graph.nodes_size(); ++i) {
    const graph::Node &node = graph.nodes(i);
    for (int k = 0; k < node.inputs_size(); ++k)
      if (!names.count(node.inputs(k)))
        return emitError(nodeLoc(i))
               << "input " << k << " '" << printable(node.inputs(k))
               << "' is not a variable, input or node";
  }
  return success();
}

FailureOr<SmallVector<int>> GraphImporter::sortNodes() {
  SmallVector<int> cycle;
  FailureOr<SmallVector<int>> order = orderNodes(
      graph.nodes_size(),
      [&](int node, SmallVectorImpl<int> &producers) {
        for (const std::string &input : graph.nodes(node).inputs()) {
          auto [kind, index] = names.lookup(input);
          if (kind == NameKind::Node)
            producers.push_back(index);
        }
      },
      cycle);
  if (succeeded(order))
    return order;
  InFlightDiagnostic error = emitError(nodeLoc(cycle.front()));
  error << "is part of a cycle: ";
  for (int node : cycle)
    error << "'" << printable(graph.nodes(node).name()) << "' -> ";
  error << "'" << printable(graph.nodes(cycle.front()).name()) << "'";
  return failure();
}

FailureOr<InitializerAttr>
GraphImporter::convertInitializer(const graph::Variable &var,
                                  RankedTensorType type, Location loc) {
  const graph::Initializer &init = var.initializer();
  auto make = [&](InitKind kind, double a, double b, ElementsAttr value) {
    return InitializerAttr::get(&context, kind, APFloat(a), APFloat(b),
                                init.seed(), value);
  };
  InitializerAttr attr;
  switch (init.kind()) {
  case graph::Initializer::ZEROS:
    attr = make(InitKind::zeros, 0, 0, {});
    break;
  case graph::Initializer::ONES:
    attr = make(InitKind::ones, 0, 0, {});
    break;
  case graph::Initializer::CONSTANT: {
    FailureOr<DenseElementsAttr> value =
        convertTensorValue(init.value(), loc, "initializer value");
    if (failed(value))
      return failure();
    attr = make(InitKind::constant, 0, 0, *value);
    break;
  }
  case graph::Initializer::UNIFORM:
    attr = make(InitKind::uniform, init.min(), init.max(), {});
    break;
  case graph::Initializer::NORMAL:
    attr = make(InitKind::normal, init.mean(), init.stddev(), {});
    break;
  case graph::Initializer::TRUNCATED_NORMAL:
    attr = make(InitKind::truncated_normal, init.mean(), init.stddev(), {});
    break;
  case graph::Initializer::GLOROT_UNIFORM:
    attr = make(InitKind::glorot_uniform, 0, 0, {});
    break;
  case graph::Initializer::GLOROT_NORMAL:
    attr = make(InitKind::glorot_normal, 0, 0, {});
    break;
  default:
    return emitError(loc) << "initializer kind " << static_cast<int>(init.kind())
                          << " is unknown";
  }
  if (failed(attr.verifyFor(type, [&] { return emitError(loc); })))
    return failure();
  return attr;
}

LogicalResult GraphImporter::importVariables() {
  builder.setInsertionPointToEnd(module->getBody());
  for (int i = 0; i < graph.variables_size(); ++i) {
    const graph::Variable &var = graph.variables(i);
    Location loc = variableLoc(i);
    SmallVector<int64_t> dims(var.shape().begin(), var.shape().end());
    FailureOr<RankedTensorType> type = tensorTypeOf(var.dtype(), dims, loc);
    if (failed(type))
      return failure();
    FailureOr<InitializerAttr> init = convertInitializer(var, *type, loc);
    if (failed(init))
      return failure();
    bool trainable = !var.has_trainable() || var.trainable();
    variableOps.push_back(
        builder.create<VariableOp>(loc, var.name(), *type, *init, trainable));
  }
  return success();
}

LogicalResult GraphImporter::createForward() {
  SmallVector<Type> argTypes;
  for (int i = 0; i < graph.inputs_size(); ++i) {
    const graph::Input &input = graph.inputs(i);
    SmallVector<int64_t> dims(input.shape().begin(), input.shape().end());
    FailureOr<RankedTensorType> type = tensorTypeOf(input.dtype(), dims, inputLoc(i));
    if (failed(type))
      return failure();
    argTypes.push_back(*type);
  }
  builder.setInsertionPointToEnd(module->getBody());
  Location loc = file.locate(context, {}, "");
  forward = builder.create<func::FuncOp>(
      loc, "forward", builder.getFunctionType(argTypes, {}));
  Block *entry = forward.addEntryBlock();
  for (int i = 0; i < graph.inputs_size(); ++i) {
    forward.setArgAttr(i, KilnDialect::kNameAttrName,
                       builder.getStringAttr(graph.inputs(i).name()));
    values[graph.inputs(i).name()] = entry->getArgument(i);
  }
  builder.setInsertionPointToEnd(entry);
  return success();
}

Value GraphImporter::valueOf(const std::string &name) {
  if (Value value = values.lookup(name))
    return value;
  auto [kind, index] = names.lookup(name);
  assert(kind == NameKind::Variable && "inputs and nodes are bound in order");
  VariableOp variable = variableOps[index];
  Value read = builder.create<ReadOp>(variableLoc(index), variable.getType(),
                                      variable.getSymName());
  values[name] = read;
  return read;
}

LogicalResult GraphImporter::importNode(int index) {
  const graph::Node &node = graph.nodes(index);
  ops.setLoc(nodeLoc(index));
  const GraphOpSpec *spec = lookupGraphOp(node.op());
  if (!spec)
    return ops.emitError() << "unknown op '" << node.op() << "'";
  unsigned count = node.inputs_size();
  if (count < spec->minInputs || count > spec->maxInputs) {
    InFlightDiagnostic error = ops.emitError();
    error << "op '" << node.op() << "' expects ";
    unsigned bound = spec->maxInputs;
    if (spec->minInputs == spec->maxInputs) {
      error << bound;
    } else if (spec->maxInputs == ~0u) {
      bound = spec->minInputs;
      error << "at least " << bound;
    } else {
      error << spec->minInputs << " to " << bound;
    }
    return error << (bound == 1 ? " input" : " inputs") << ", got " << count;
  }
  for (const auto &[name, value] : node.attrs()) {
    if (llvm::is_contained(spec->attrs, name))
      continue;
    InFlightDiagnostic error = ops.emitError();
    error << "op '" << node.op() << "' has no attribute '" << name << "'";
    if (spec->attrs.empty())
      return error << " (it takes none)";
    error << " (it takes: ";
    llvm::interleaveComma(spec->attrs, error);
    return error << ")";
  }
  SmallVector<Value> inputs;
  for (const std::string &input : node.inputs())
    inputs.push_back(valueOf(input));
  NodeContext nodeContext(node, inputs, ops);
  KilnOpBuilder::Result result = spec->build(nodeContext);
  if (failed(result))
    return failure();
  values[node.name()] = *result;
  return success();
}

LogicalResult GraphImporter::importOutputs() {
  if (graph.outputs_size() == 0 && !graph.has_train())
    return emitError(file.locate(context, {}, ""))
           << "graph has no outputs: list the nodes it returns in 'outputs'";
  llvm::StringSet<> seen;
  for (int i = 0; i < graph.outputs_size(); ++i) {
    const std::string &name = graph.outputs(i);
    if (!names.count(name))
      return emitError(outputLoc(i)) << "is not a variable, input or node";
    if (!seen.insert(name).second)
      return emitError(outputLoc(i)) << "is listed twice";
    resultNames.push_back(name);
  }
  // Training needs the loss out of the step even if the file did not list it.
  if (graph.has_train() && !graph.train().loss().empty() &&
      !seen.contains(graph.train().loss()))
    resultNames.push_back(graph.train().loss());
  for (const std::string &name : resultNames)
    resultValues.push_back(valueOf(name));
  builder.create<func::ReturnOp>(forward.getLoc(), resultValues);
  forward.setType(builder.getFunctionType(forward.getArgumentTypes(),
                                          ValueRange(resultValues).getTypes()));
  for (auto [i, name] : llvm::enumerate(resultNames))
    forward.setResultAttr(i, KilnDialect::kNameAttrName,
                          builder.getStringAttr(name));
  return success();
}

LogicalResult GraphImporter::checkLoss() {
  if (!graph.has_train())
    return success();
  auto type = llvm::cast<RankedTensorType>(values.lookup(graph.train().loss()).getType());
  if (type.getRank() == 0 && llvm::isa<FloatType>(type.getElementType()))
    return success();
  return emitError(file.locate(context, file.trainLine, ""))
         << "train.loss names '" << graph.train().loss()
         << "', which must be a float scalar, got " << type;
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  module = ModuleOp::create(file.locate(context, {}, ""),
                            graph.name().empty() ? std::optional<StringRef>()
                                                 : StringRef(graph.name()));
  if (failed(checkNames()) || failed(checkNodeInputs()))
    return nullptr;
  FailureOr<SmallVector<int>> order = sortNodes();
  if (failed(order) || failed(importVariables()) || failed(createForward()))
    return nullptr;
  for (int index : *order)
    if (failed(importNode(index)))
      return nullptr;
  if (graph.has_train()) {
    FailureOr<DictionaryAttr> spec =
        importTrainSpec(graph.train(), graphTrainSpecNames(graph),
                        file.locate(context, file.trainLine, ""));
    if (failed(spec))
      return nullptr;
    (*module)->setAttr(KilnDialect::kTrainSpecAttrName, *spec);
  }
  if (failed(importOutputs()) || failed(checkLoss()))
    return nullptr;
  return std::move(module);
}

/// kilnc --batch N on a graph file: every input whose dimension 0 is the
/// file's batch (that of the first input with a dimension) gets batch N.
/// The shapes of the nodes follow from the inputs; a node that spells the
/// old batch out (a reshape to [64, ...]) then fails shape inference, naming
/// itself.
void rebatchInputs(graph::GraphDef &graph, int64_t batch) {
  int64_t old = -1;
  for (const graph::Input &input : graph.inputs())
    if (input.shape_size() > 0) {
      old = input.shape(0);
      break;
    }
  if (old < 0 || old == batch)
    return;
  for (graph::Input &input : *graph.mutable_inputs())
    if (input.shape_size() > 0 && input.shape(0) == old)
      input.set_shape(0, batch);
}

} // namespace

OwningOpRef<ModuleOp> importGraphFile(StringRef path, MLIRContext &context,
                                      const TrainFlags &trainFlags) {
  FirstErrorOnly oneError(context);
  context.loadDialect<KilnDialect, func::FuncDialect>();
  std::unique_ptr<GraphFile> file = readGraphFile(path, context);
  if (!file)
    return nullptr;
  if (trainFlags.train && file->graph.has_train() &&
      failed(applyTrainOverrides(trainFlags, *file->graph.mutable_train(),
                                 file->locate(context, file->trainLine, ""))))
    return nullptr;
  if (trainFlags.train && trainFlags.batchSize)
    rebatchInputs(file->graph, *trainFlags.batchSize);
  return GraphImporter(*file, context).run();
}

} // namespace kiln
