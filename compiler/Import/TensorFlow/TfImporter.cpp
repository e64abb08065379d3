//===- TfImporter.cpp - TensorFlow GraphDef → kiln module -----------------===//
//
// Inlines function calls (TfInlineCalls.cpp), finds while loops
// (TfFrames.cpp), picks the outputs (those named by --outputs, else the ones
// nothing consumes), keeps the nodes they need, refuses a graph that is not
// frozen, and converts the rest in dependency order, each while loop
// unrolled where its first Exit comes (TfWhileLoops.cpp). Placeholders become arguments
// of @forward. Consts are decoded when reached and materialized only when a
// node uses them as data: a frozen variable (a float Const read through an
// Identity, or gathered from) becomes a `kiln.variable` read once at the top
// of @forward, any other a `kiln.constant`; one used only at import time (a
// shape, axes) leaves no trace in the module.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TensorFlow/TfImporter.h"
#include "compiler/Import/TensorFlow/TfGraphImporter.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/FirstErrorOnly.h"
#include "compiler/Import/ForwardFunction.h"
#include "compiler/Import/TensorFlow/TfGraph.h"
#include "compiler/Import/TensorFlow/TfGraphFile.h"
#include "compiler/Import/TensorFlow/TfDilatedConvs.h"
#include "compiler/Import/TensorFlow/TfInlineCalls.h"
#include "compiler/Import/TensorFlow/TfOps.h"
#include "compiler/Import/TensorFlow/TfTensor.h"

#include "dialects/Kiln/KilnDialect.h"
#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;

namespace kiln {
namespace tf_import {
namespace {

constexpr llvm::StringLiteral kFreezeHint =
    "the graph is not frozen; freeze it with "
    "tf.python.framework.convert_to_constants."
    "convert_variables_to_constants_v2";

} // namespace

Location TfGraphImporter::nodeLoc(int i) const {
  const tensorflow::NodeDef &node = file->graph.node(i);
  std::string label = node.name().empty()
                          ? "node #" + std::to_string(i)
                          : "node '" + printable(node.name()) + "'";
  label += " (" + printable(node.op()) + ")";
  return file->locate(context, file->nodeLines[i], label);
}

StringRef TfGraphImporter::resolve(StringRef key) const {
  // Each alias points at a key defined earlier in the order.
  auto it = aliases.find(key);
  return it == aliases.end() ? key : StringRef(it->second);
}

LogicalResult TfGraphImporter::pickOutputs() {
  Location flagLoc = NameLoc::get(StringAttr::get(&context, "--outputs"),
                                  file->locate(context, {}, ""));
  if (options.outputs.empty()) {
    // A while loop's nodes are none: its results leave it through Exits,
    // and an Exit nothing reads is a loop variable the model drops. Nor is
    // the frozen read of a variable that a loop takes as its Const (an
    // Identity nothing reads of a Const an Enter reads).
    outputs = graph->getDanglingOutputs();
    llvm::erase_if(outputs, [&](TfOutputRef ref) {
      int source = graph->skipIdentities(ref).node;
      bool enteredRead =
          graph->node(ref.node).op() == "Identity" && graph->node(source).op() == "Const" &&
          llvm::any_of(graph->getConsumers(source),
                       [&](int c) { return graph->node(c).op() == "Enter"; });
      // Nor is a node of an inlined function that nothing reads.
      return frames.frameOf[ref.node] >= 0 || enteredRead || ref.node >= fileNodes;
    });
    for (TfOutputRef output : outputs)
      outputNames.push_back(graph->node(output.node).name());
    if (outputs.empty())
      return emitError(file->locate(context, {}, ""))
             << "the graph has no outputs (every node's result is used); "
                "name them with --outputs=NODE,...";
    return success();
  }
  for (const std::string &name : options.outputs) {
    FailureOr<TfInputName> parsed = parseTfInputName(name);
    int node =
        succeeded(parsed) && !parsed->control ? graph->find(parsed->node) : -1;
    if (node < 0)
      return emitError(flagLoc)
             << "'" << printable(name) << "' names no node of the graph";
    if (llvm::is_contained(outputNames, name))
      return emitError(flagLoc) << "names '" << printable(name) << "' twice";
    outputs.push_back({node, parsed->output});
    outputNames.push_back(name);
  }
  return success();
}

LogicalResult
TfGraphImporter::checkFrozen(const std::vector<bool> &needed) const {
  for (int i = 0, e = graph->size(); i < e; ++i) {
    if (!needed[i])
      continue;
    const tensorflow::NodeDef &node = graph->node(i);
    StringRef op = node.op();
    if (op == "VarHandleOp" || op == "VariableV2" || op == "Variable")
      return emitError(nodeLoc(i))
             << "is a variable, not a value: " << kFreezeHint;
    if (op == "ReadVariableOp" || op == "ResourceGather")
      return emitError(nodeLoc(i)) << "reads a variable: " << kFreezeHint;
    auto dtype = node.attr().find("dtype");
    if (op == "Placeholder" && dtype != node.attr().end() &&
        dtype->second.type() == tensorflow::DT_RESOURCE)
      return emitError(nodeLoc(i))
             << "is a variable handle (a DT_RESOURCE Placeholder: a captured "
                "variable), not a value: "
             << kFreezeHint;
  }
  return success();
}

FailureOr<RankedTensorType> TfGraphImporter::getPlaceholderType(int i) {
  const tensorflow::NodeDef &node = graph->node(i);
  Location loc = nodeLoc(i);
  auto dtype = node.attr().find("dtype");
  if (dtype == node.attr().end())
    return emitError(loc) << "expects attribute 'dtype'";
  FailureOr<Type> elementType =
      getSupportedTfElementType(context, dtype->second.type(), loc);
  if (failed(elementType))
    return failure();
  std::optional<SmallVector<int64_t>> declared;
  auto shapeAttr = node.attr().find("shape");
  if (shapeAttr != node.attr().end()) {
    FailureOr<SmallVector<int64_t>> shape =
        getTfShape(shapeAttr->second.shape());
    if (succeeded(shape))
      declared = *shape;
  }
  auto given = options.inputShapes.find(node.name());
  SmallVector<int64_t> shape;
  if (given != options.inputShapes.end()) {
    shape = given->second;
    if (sparseLookups.idLists.contains(i) && shape.size() != 2)
      return emitError(loc) << "is a SparseTensor's indices, which kiln reads as the id lists "
                               "the embedding lookups take, [batch, L]; pass --input-shape "
                            << printable(node.name()) << "=B,L (got " << shape.size()
                            << (shape.size() == 1 ? " size)" : " sizes)");
    bool agrees = !declared || declared->size() == shape.size();
    for (size_t d = 0; declared && agrees && d < shape.size(); ++d)
      agrees = (*declared)[d] < 0 || (*declared)[d] == shape[d];
    if (!agrees)
      return emitError(loc)
             << "is declared with shape " << formatIntList(*declared)
             << ", which --input-shape " << printable(node.name()) << "="
             << llvm::join(
                    llvm::map_range(
                        shape, [](int64_t d) { return std::to_string(d); }),
                    ",")
             << " contradicts";
  } else if (!declared) {
    return emitError(loc) << "has no shape (unknown rank); pass --input-shape "
                          << printable(node.name()) << "=D0,D1,...";
  } else {
    shape = *declared;
    for (auto [d, size] : llvm::enumerate(shape)) {
      // Kiln's tensors are never empty (the runtime refuses a product of
      // zero rows), as --input-shape says.
      if (size == 0)
        return emitError(loc) << "is declared with shape " << formatIntList(shape)
                              << ": dimension " << d << " of size 0; kiln needs sizes >= 1";
      if (size > 0)
        continue;
      if (d == 0 && options.batchSize > 0) {
        size = options.batchSize;
        continue;
      }
      if (sparseLookups.idLists.contains(i))
        return emitError(loc)
               << "is a SparseTensor's indices, which kiln reads as the id lists the "
                  "embedding lookups take, padded with -1: [batch, L]; pass --input-shape "
               << printable(node.name()) << "=B,L (L: the most ids in one example)";
      std::string flag;
      for (auto [k, s] : llvm::enumerate(shape))
        flag += (k ? "," : "") +
                (s < 0 ? "D" + std::to_string(k) : std::to_string(s));
      return emitError(loc)
             << "has dimension " << d << " of unknown size (shape "
             << formatIntList(*declared) << "); pass --input-shape "
             << printable(node.name()) << "=" << flag
             << (d == 0 ? " (or --batch=N with --train)" : "");
    }
  }
  if (failed(staticElementCount(shape)))
    return emitError(loc) << "has too many elements: shape "
                          << formatIntList(shape);
  return RankedTensorType::get(shape, *elementType);
}

LogicalResult TfGraphImporter::buildFunction(ArrayRef<int> order) {
  for (const auto &entry : options.inputShapes) {
    int node = graph->find(entry.getKey());
    if (node < 0 || graph->node(node).op() != "Placeholder")
      return emitError(NameLoc::get(StringAttr::get(&context, "--input-shape"),
                                    file->locate(context, {}, "")))
             << "'" << printable(entry.getKey())
             << "' names no Placeholder of the graph";
  }
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  for (int i : order) {
    if (graph->node(i).op() != "Placeholder")
      continue;
    FailureOr<RankedTensorType> type = getPlaceholderType(i);
    if (failed(type))
      return failure();
    argTypes.push_back(*type);
    argNames.push_back(graph->node(i).name());
  }
  function = createForward(builder, *module, file->locate(context, {}, ""),
                           argTypes, argNames);
  prologue = ForwardPrologue(function);
  for (auto [i, name] : llvm::enumerate(argNames))
    values[tfValueKey(name, 0)] = function.getArgument(i);
  return success();
}

LogicalResult TfGraphImporter::readConst(int i) {
  const tensorflow::NodeDef &node = graph->node(i);
  Location loc = nodeLoc(i);
  auto value = node.attr().find("value");
  if (value == node.attr().end() ||
      value->second.value_case() != tensorflow::AttrValue::kTensor)
    return emitError(loc) << "expects attribute 'value' (a tensor)";
  auto dtype = node.attr().find("dtype");
  if (dtype != node.attr().end() &&
      dtype->second.type() != value->second.tensor().dtype())
    return emitError(loc) << "declares dtype "
                          << getTfDataTypeName(dtype->second.type())
                          << " but holds a tensor of "
                          << getTfDataTypeName(value->second.tensor().dtype());
  FailureOr<DenseElementsAttr> decoded =
      decodeTfTensor(value->second.tensor(), loc);
  if (failed(decoded))
    return failure();
  bool isVariable = frozenVariables[i];
  if (isVariable && node.name() == kForwardName)
    return emitError(loc) << "has the name of the @" << kForwardName
                          << " function";
  known.try_emplace(
      tfValueKey(node.name(), 0),
      Known{*decoded, loc, node.name(), isVariable, !statistics[i], {}});
  return success();
}

LogicalResult TfGraphImporter::convertNode(int i, KilnOpBuilder &kiln) {
  const tensorflow::NodeDef &proto = graph->node(i);
  StringRef op = proto.op();
  kiln.setLoc(nodeLoc(i));
  if (op == "Placeholder")
    return success();
  if (op == "Const")
    return readConst(i);
  if (isTensorListOp(op))
    return convertTensorListOp(i, kiln);
  if (auto bag = sparseLookups.bags.find(i); bag != sparseLookups.bags.end())
    return convertSparseLookup(i, bag->second, kiln);
  SmallVector<std::string> keys = inputKeys(i);
  for (auto [position, key] : llvm::enumerate(keys))
    if (lookupList(key) && !(op == "Identity" && position == 0))
      return kiln.emitError() << "reads a TensorList as input #" << position
                              << "; kiln holds TensorLists only at import time, for "
                                 "TensorList ops and while loops to read";
  const TfOpConversion *conversion = lookupTfOp(op);
  if (!conversion)
    return kiln.emitError()
           << "unsupported TensorFlow op '" << printable(op) << "'";
  TfNode node(proto, keys, kiln, *this);
  return convertTfNode(*conversion, node);
}

LogicalResult TfGraphImporter::convertSparseLookup(int i, EmbeddingCombiner combiner,
                                                   KilnOpBuilder &kiln) {
  SmallVector<std::string> keys = inputKeys(i);
  KilnOpBuilder::Result bag = kiln.embeddingBag(lookup(keys[0]), lookup(keys[1]), combiner);
  if (failed(bag))
    return failure();
  define(tfValueKey(graph->node(i).name(), 0), *bag);
  return success();
}

SmallVector<std::string> TfGraphImporter::inputKeys(int i) const {
  SmallVector<std::string> keys;
  for (TfOutputRef input : graph->getInputs(i))
    keys.push_back(tfValueKey(graph->node(input.node).name(), input.output));
  return keys;
}

LogicalResult TfGraphImporter::buildReturn() {
  SmallVector<Value> results;
  for (auto [output, name] : llvm::zip(outputs, outputNames)) {
    std::string key =
        tfValueKey(graph->node(output.node).name(), output.output);
    StringRef resolved = resolve(key);
    if (!values.count(resolved) && !known.count(resolved))
      return emitError(nodeLoc(output.node))
             << "has no output #" << output.output
             << " for the graph to return"
             << (lists.count(resolved) ? " (a TensorList, which exists only at import time)"
                                       : "");
    results.push_back(lookup(key));
  }
  returnFromForward(builder, function, file->locate(context, {}, ""), results,
                    outputNames);
  return success();
}

Value TfGraphImporter::lookup(StringRef key) {
  key = resolve(key);
  if (Value value = values.lookup(key))
    return value;
  auto it = known.find(key);
  if (it == known.end())
    llvm_unreachable("the graph order checked that every input exists");
  return materialize(it->second);
}

DenseElementsAttr TfGraphImporter::lookupConstant(StringRef key) {
  key = resolve(key);
  auto it = known.find(key);
  if (it != known.end())
    return it->second.isVariable ? DenseElementsAttr() : it->second.value;
  // A value the builder folded into a constant (shape arithmetic).
  return KilnOpBuilder::constantValueOf(values.lookup(key));
}

Value TfGraphImporter::materialize(Known &entry) {
  if (entry.materialized)
    return entry.materialized;
  if (entry.isVariable)
    entry.materialized = prologue.readVariable(entry.loc, entry.variable,
                                               entry.value, entry.trainable);
  else
    entry.materialized = prologue.constant(entry.loc, entry.value);
  return entry.materialized;
}

OwningOpRef<ModuleOp> TfGraphImporter::import() {
  context.loadDialect<KilnDialect, func::FuncDialect>();
  file = readTfGraphFile(path, text, context);
  if (!file)
    return nullptr;
  if (file->graph.node_size() == 0) {
    emitError(file->locate(context, {}, ""))
        << "the TensorFlow GraphDef has no nodes";
    return nullptr;
  }
  fileNodes = file->graph.node_size();
  if (failed(inlineTfFunctionCalls(*file, [this](int i) { return nodeLoc(i); })))
    return nullptr;
  // The rewrites leave alone what --outputs names inside what they rewrite.
  llvm::StringSet<> named;
  for (const std::string &name : options.outputs)
    if (FailureOr<TfInputName> parsed = parseTfInputName(name); succeeded(parsed))
      named.insert(parsed->node);
  if (failed(foldTfDilatedConvolutions(file->graph, [this](int i) { return nodeLoc(i); },
                                       named)))
    return nullptr;
  FailureOr<TfSparseLookups> sparse =
      rewriteTfSparseLookups(file->graph, [this](int i) { return nodeLoc(i); }, named);
  if (failed(sparse))
    return nullptr;
  sparseLookups = std::move(*sparse);
  graph = std::make_unique<TfGraph>(file->graph,
                                    [this](int i) { return nodeLoc(i); });
  if (failed(graph->index()))
    return nullptr;
  FailureOr<TfFrames> found = findTfFrames(*graph, [this](int i) { return nodeLoc(i); });
  if (failed(found))
    return nullptr;
  frames = std::move(*found);
  if (failed(pickOutputs()))
    return nullptr;
  std::vector<bool> needed = graph->getNeeded(outputs);
  // A loop is unrolled whole, with what each of its nodes reads.
  SmallVector<TfOutputRef> roots(outputs);
  for (const TfFrame &frame : frames.frames)
    if (llvm::any_of(frame.nodes, [&](int n) { return needed[n]; }))
      for (int n : frame.nodes)
        roots.push_back({n, 0});
  needed = graph->getNeeded(roots);
  if (failed(checkFrozen(needed)))
    return nullptr;
  // Before the Placeholders' shapes: a lookup not recognized leaves its
  // SparseTensor's sizes unknown.
  for (int i = 0, e = graph->size(); i < e; ++i)
    if (needed[i] && isTfSparseLookupOp(graph->node(i).op()) && !sparseLookups.bags.count(i)) {
      emitError(nodeLoc(i))
          << "unsupported TensorFlow op '" << printable(graph->node(i).op())
          << "': kiln reads it only inside a whole tf.nn.embedding_lookup_sparse or "
             "safe_embedding_lookup_sparse over a 2-D SparseTensor input, without "
             "weights, default_id, max_norm or partitions (docs/tensorflow.md, \"Sparse "
             "features\")";
      return nullptr;
    }
  FailureOr<SmallVector<int>> order = graph->order(needed, frames);
  if (failed(order))
    return nullptr;
  frozenVariables = graph->findFrozenVariables();
  statistics = graph->findMovingStatistics();
  std::vector<SmallVector<unsigned>> usedOutputs(graph->size());
  auto markUsed = [&](TfOutputRef ref) {
    if (used.insert(tfValueKey(graph->node(ref.node).name(), ref.output))
            .second)
      usedOutputs[ref.node].push_back(ref.output);
  };
  for (int i : *order)
    for (TfOutputRef input : graph->getInputs(i))
      markUsed(input);
  for (TfOutputRef output : outputs)
    markUsed(output);

  module = ModuleOp::create(file->locate(context, {}, ""));
  if (failed(buildFunction(*order)))
    return nullptr;
  KilnOpBuilder kiln(builder);
  std::vector<bool> unrolled(frames.frames.size(), false);
  for (int i : *order) {
    if (int f = frames.frameOf[i]; f >= 0) {
      // A frame runs whole where its first Exit comes, after its body and
      // all it reads; its Exits' outputs are checked as any node's.
      if (graph->node(i).op() != "Exit")
        continue;
      if (!unrolled[f]) {
        unrolled[f] = true;
        if (failed(runFrame(f, *order, kiln)))
          return nullptr;
      }
    } else if (failed(convertNode(i, kiln))) {
      return nullptr;
    }
    // Every output a needed node or the graph reads must have been made.
    for (unsigned k : usedOutputs[i]) {
      std::string key = tfValueKey(graph->node(i).name(), k);
      if (values.count(key) || known.count(key) || aliases.count(key) ||
          lists.count(key))
        continue;
      emitError(nodeLoc(i))
          << "the graph uses output #" << k << " of "
          << printable(graph->node(i).op()) << ", which kiln does not produce";
      return nullptr;
    }
  }
  if (failed(buildReturn()))
    return nullptr;
  return std::move(module);
}

} // namespace tf_import

OwningOpRef<ModuleOp> importTfGraphFile(StringRef path, bool text,
                                        MLIRContext &context,
                                        const TfImportOptions &options) {
  FirstErrorOnly oneError(context);
  return tf_import::TfGraphImporter(path, text, context, options).import();
}

} // namespace kiln
