//===- OnnxImporter.cpp - ONNX model → kiln module ------------------------===//
//
// Walks the graph in dependency order. Graph inputs become arguments of
// @forward, graph outputs its results. Initializers are decoded up front and
// materialized only when a node uses them as data: a float one becomes a
// `kiln.variable` read once at the top of @forward, any other a
// `kiln.constant`; one used only at import time (a shape, axes) leaves no
// trace in the module.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxImporter.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/FirstErrorOnly.h"
#include "compiler/Import/ForwardFunction.h"
#include "compiler/Import/Onnx/OnnxGraphOrder.h"
#include "compiler/Import/Onnx/OnnxModelFile.h"
#include "compiler/Import/Onnx/OnnxOps.h"
#include "compiler/Import/Onnx/OnnxTensor.h"
#include "compiler/Import/Onnx/OnnxTorchExport.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/ErrorHandling.h"

#include <cstring>

using namespace mlir;

namespace kiln {
namespace {

/// Default-domain opsets whose ops this importer knows: through 23, the
/// newest torch.onnx.export writes (ops changed after it are unchecked).
constexpr int64_t kMinOpset = 7;
constexpr int64_t kMaxOpset = 23;

class OnnxGraphImporter final : public OnnxValueScope {
public:
  OnnxGraphImporter(StringRef path, MLIRContext &context,
                    const OnnxImportOptions &options)
      : path(path), context(context), options(options),
        modelDir(getOnnxModelDir(path)),
        fileLoc(FileLineColLoc::get(&context, path, 0, 0)), builder(&context) {}

  OwningOpRef<ModuleOp> import();

  Value lookup(StringRef name) override;
  DenseElementsAttr lookupConstant(StringRef name) override;
  void define(StringRef name, Value value) override { values[name] = value; }
  void defineConstant(StringRef name, DenseElementsAttr value,
                      Location loc) override {
    known.try_emplace(name, Known{value, loc, /*isInitializer=*/false, {}});
  }
  void alias(StringRef name, StringRef source) override {
    aliases[name] = resolve(source).str();
  }
  bool isUsed(StringRef name) override { return uses.lookup(name) > 0; }
  bool copyInitializer(StringRef name, StringRef source) override;
  void defineSequence(StringRef name, SmallVector<Value> parts) override {
    sequences[name] = std::move(parts);
  }
  const SmallVector<Value> *lookupSequence(StringRef name) override {
    auto it = sequences.find(resolve(name));
    return it == sequences.end() ? nullptr : &it->second;
  }
  void defineStackedSequence(StringRef name, Value stacked) override {
    stackedSequences[name] = stacked;
  }
  Value lookupStackedSequence(StringRef name) override {
    return stackedSequences.lookup(resolve(name));
  }

private:
  /// A value known at import time: an initializer or a Constant's output.
  struct Known {
    DenseElementsAttr value;
    Location loc;
    bool isInitializer;
    /// Its variable read or constant, once used as data.
    Value materialized;
    /// For a float initializer: a variable training leaves alone (a buffer),
    /// or not a variable at all (a constant the exporter stored).
    bool frozen = false, constant = false;
  };

  Location namedLoc(const Twine &name) {
    return NameLoc::get(StringAttr::get(&context, name), fileLoc);
  }
  Location nodeLoc(int i);
  StringRef resolve(StringRef name);
  const onnx::GraphProto &graph() const { return model->graph(); }

  LogicalResult readOpset();
  LogicalResult decodeInitializers();
  LogicalResult applyTorchSignature();
  /// A warning when --train would train initializers the TorchScript
  /// exporter's constant folding made.
  void warnAboutFoldedParameters();
  FailureOr<RankedTensorType> getInputType(const onnx::ValueInfoProto &input,
                                           Location loc);
  LogicalResult buildFunction();
  void countUses();
  LogicalResult convertNodes();
  LogicalResult checkDeclaredType(const onnx::ValueInfoProto &output,
                                  Type computed, Location loc);
  LogicalResult buildReturn();
  Value materialize(StringRef name, Known &entry);

  StringRef path;
  MLIRContext &context;
  const OnnxImportOptions &options;
  std::string modelDir;
  Location fileLoc;
  OpBuilder builder;

  std::unique_ptr<onnx::ModelProto> model;
  int64_t opset = 0;
  OwningOpRef<ModuleOp> module;
  func::FuncOp function;
  ForwardPrologue prologue;

  llvm::StringMap<Value> values;
  llvm::StringMap<SmallVector<Value>> sequences;
  llvm::StringMap<Value> stackedSequences;
  llvm::StringMap<Known> known;
  llvm::StringMap<std::string> aliases;
  llvm::StringMap<unsigned> uses;
};

Location OnnxGraphImporter::nodeLoc(int i) {
  const onnx::NodeProto &node = graph().node(i);
  if (node.name().empty())
    return namedLoc("node #" + Twine(i) + " (" + printable(node.op_type()) +
                    ")");
  return namedLoc("node '" + printable(node.name()) + "' (" +
                  printable(node.op_type()) + ")");
}

StringRef OnnxGraphImporter::resolve(StringRef name) {
  // Each alias points at a name defined earlier in graph order.
  auto it = aliases.find(name);
  return it == aliases.end() ? name : StringRef(it->second);
}

LogicalResult OnnxGraphImporter::readOpset() {
  bool found = false;
  for (const onnx::OperatorSetIdProto &entry : model->opset_import()) {
    if (!entry.domain().empty() && entry.domain() != "ai.onnx")
      continue; // Only nodes of other domains are refused.
    if (found)
      return emitError(fileLoc)
             << "the model imports the default ONNX domain twice (opsets "
             << opset << " and " << entry.version() << ")";
    found = true;
    opset = entry.version();
  }
  if (!found)
    return emitError(fileLoc)
           << "the model imports no opset of the default ONNX domain";
  if (opset < kMinOpset || opset > kMaxOpset)
    return emitError(fileLoc) << "the model imports opset " << opset
                              << " of the default ONNX domain; kiln reads "
                              << kMinOpset << " to " << kMaxOpset;
  return success();
}

LogicalResult OnnxGraphImporter::decodeInitializers() {
  if (graph().sparse_initializer_size() > 0)
    return emitError(fileLoc)
           << "the graph has " << graph().sparse_initializer_size()
           << " sparse initializers, which kiln does not "
              "support";
  for (const onnx::TensorProto &tensor : graph().initializer()) {
    Location loc = namedLoc("initializer '" + printable(tensor.name()) + "'");
    if (tensor.name().empty())
      return emitError(loc) << "has no name";
    if (tensor.name() == kForwardName)
      return emitError(loc)
             << "has the name of the @" << kForwardName << " function";
    FailureOr<DenseElementsAttr> value =
        decodeOnnxTensor(tensor, modelDir, loc);
    if (failed(value))
      return failure();
    if (!known.try_emplace(tensor.name(), Known{*value, loc, true, {}}).second)
      return emitError(loc) << "is defined twice";
  }
  return success();
}

/// With torch.onnx.export's signature, parameters train, buffers are frozen
/// variables and any other float initializer is a constant. A model to be
/// trained must still hold every parameter under its name: the exporter's
/// graph optimizer (on by default) folds transposed weights into new
/// constants, merges equal-valued parameters and drops zero biases, which
/// would silently tie or freeze what PyTorch trains.
/// Whether a float tensor holds an infinity or NaN: f32 by its bits (a
/// model's weights, read once each), other widths element by element.
bool holdsNonFinite(DenseElementsAttr value) {
  if (value.getElementType().isF32() && !value.isSplat()) {
    ArrayRef<char> raw = value.getRawData();
    for (size_t at = 0; at + 4 <= raw.size(); at += 4) {
      uint32_t bits;
      std::memcpy(&bits, raw.data() + at, 4);
      if ((bits & 0x7f800000u) == 0x7f800000u)
        return true;
    }
    return false;
  }
  return llvm::any_of(value.getValues<APFloat>(), [](const APFloat &v) { return !v.isFinite(); });
}

LogicalResult OnnxGraphImporter::applyTorchSignature() {
  // A value holding an infinity or NaN is never a parameter: the TorchScript
  // exporter folds a causal attention mask into an initializer of 0 and
  // -inf, which would otherwise train into a bias.
  for (auto &entry : known) {
    Known &k = entry.getValue();
    if (!k.isInitializer || !llvm::isa<FloatType>(k.value.getElementType()))
      continue;
    k.constant = holdsNonFinite(k.value);
  }
  TorchExportSignature signature = readTorchExportSignature(graph());
  if (!signature.present)
    return success();
  // What each node's PyTorch op reads, where the exporter recorded it.
  SmallVector<std::string> fxNodes;
  for (const onnx::NodeProto &node : graph().node())
    if (std::string fxNode = torchFxNodeOf(node); !fxNode.empty())
      fxNodes.push_back(std::move(fxNode));
  llvm::StringSet<> parameters;
  SmallVector<StringRef> missing;
  for (const std::string &name : signature.parameters) {
    parameters.insert(name);
    if (known.count(name))
      continue;
    // A parameter no op reads is tied to another (`head.weight =
    // emb.weight`: the program reads one of the two), not lost.
    auto placeholder = signature.placeholders.find(name);
    bool readByAnOp =
        fxNodes.empty() || placeholder == signature.placeholders.end() ||
        llvm::any_of(fxNodes, [&](const std::string &fxNode) {
          return fxNodeReads(fxNode, "%" + placeholder->second);
        });
    if (readByAnOp)
      missing.push_back(name);
  }
  if (options.forTraining && !missing.empty()) {
    InFlightDiagnostic error = emitError(fileLoc);
    error << "the exporter's graph optimizer removed or merged " << missing.size()
          << " of the model's " << signature.parameters.size() << " parameters (";
    for (size_t i = 0; i < std::min<size_t>(missing.size(), 3); ++i)
      error << (i ? ", " : "") << "'" << printable(missing[i]) << "'";
    if (missing.size() > 3)
      error << ", ...";
    return error << "), so it cannot be trained as PyTorch trains it: export with "
                    "torch.onnx.export(..., dynamo=True, optimize=False)";
  }
  // The optimizer also replaces constants with parameters of equal value (a
  // LayerNorm without weight reading another's ones): the node then reads a
  // parameter its PyTorch op does not, which would train it twice.
  if (options.forTraining && !fxNodes.empty())
    for (int i = 0, e = graph().node_size(); i < e; ++i) {
      const onnx::NodeProto &node = graph().node(i);
      std::string fxNode = torchFxNodeOf(node);
      if (fxNode.empty())
        continue;
      for (const std::string &input : node.input()) {
        auto placeholder = signature.placeholders.find(input);
        if (placeholder == signature.placeholders.end() ||
            fxNodeReads(fxNode, "%" + placeholder->second))
          continue;
        return emitError(nodeLoc(i))
               << "reads parameter '" << printable(input)
               << "', which the PyTorch op it was exported from does not: the exporter's graph "
                  "optimizer put the parameter in place of an equal-valued constant, so it "
                  "cannot be trained as PyTorch trains it: export with "
                  "torch.onnx.export(..., dynamo=True, optimize=False)";
      }
    }
  for (auto &entry : known) {
    Known &k = entry.getValue();
    if (!k.isInitializer || !llvm::isa<FloatType>(k.value.getElementType()))
      continue;
    k.frozen = signature.buffers.contains(entry.getKey());
    // A parameter holding an infinity stays the constant the rule above made.
    k.constant = !k.frozen && (k.constant || !parameters.contains(entry.getKey()));
  }
  return success();
}

FailureOr<RankedTensorType>
OnnxGraphImporter::getInputType(const onnx::ValueInfoProto &input,
                                Location loc) {
  if (!input.type().has_tensor_type())
    return emitError(loc) << "is not a tensor (kiln takes tensor inputs only)";
  const onnx::TypeProto::Tensor &tensor = input.type().tensor_type();
  FailureOr<Type> elementType =
      getSupportedElementType(context, tensor.elem_type(), loc);
  if (failed(elementType))
    return failure();
  if (!tensor.has_shape())
    return emitError(loc) << "has no shape; kiln needs the rank and sizes";
  SmallVector<int64_t> shape;
  for (auto [i, dim] : llvm::enumerate(tensor.shape().dim())) {
    if (dim.has_dim_value()) {
      // Kiln's tensors are never empty (the runtime refuses a product of
      // zero rows), as the graph format says.
      if (dim.dim_value() < 1)
        return emitError(loc) << "has dimension " << i << " of size " << dim.dim_value()
                              << "; kiln needs sizes >= 1";
      shape.push_back(dim.dim_value());
    } else if (dim.has_dim_param()) {
      auto it = options.dimSizes.find(dim.dim_param());
      if (it == options.dimSizes.end() && i == 0 && options.batchSize > 0) {
        shape.push_back(options.batchSize);
        continue;
      }
      if (it == options.dimSizes.end())
        return emitError(loc)
               << "has dimension " << i << " ('" << printable(dim.dim_param())
               << "') without a size; pass --dim " << printable(dim.dim_param())
               << "=SIZE";
      if (it->second <= 0)
        return emitError(loc)
               << "has dimension " << i << " ('" << printable(dim.dim_param())
               << "') bound to size " << it->second
               << ", expected a positive size";
      shape.push_back(it->second);
    } else {
      return emitError(loc)
             << "has dimension " << i << " with neither a size nor a name";
    }
  }
  if (failed(staticElementCount(shape)))
    return emitError(loc) << "has too many elements: shape "
                          << formatIntList(shape);
  return RankedTensorType::get(shape, *elementType);
}

LogicalResult OnnxGraphImporter::buildFunction() {
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  for (const onnx::ValueInfoProto &input : graph().input()) {
    // Before IR version 4, initializers are listed as inputs too.
    if (known.count(input.name()))
      continue;
    Location loc = namedLoc("input '" + printable(input.name()) + "'");
    if (input.name().empty())
      return emitError(loc) << "has no name";
    if (llvm::is_contained(argNames, input.name()))
      return emitError(loc) << "is declared twice";
    FailureOr<RankedTensorType> type = getInputType(input, loc);
    if (failed(type))
      return failure();
    argTypes.push_back(*type);
    argNames.push_back(input.name());
  }
  function = createForward(builder, *module, fileLoc, argTypes, argNames);
  prologue = ForwardPrologue(function);
  for (auto [i, name] : llvm::enumerate(argNames))
    values[name] = function.getArgument(i);
  return success();
}

/// Counts every read of a name in `graph` and the graphs nested in it (an
/// If's branch may be imported into the graph around it).
static void countReads(const onnx::GraphProto &graph, llvm::StringMap<unsigned> &uses) {
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &input : node.input())
      ++uses[input];
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      if (attribute.has_g())
        countReads(attribute.g(), uses);
      for (const onnx::GraphProto &nested : attribute.graphs())
        countReads(nested, uses);
    }
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    ++uses[output.name()];
}

void OnnxGraphImporter::countUses() { countReads(graph(), uses); }

LogicalResult OnnxGraphImporter::convertNodes() {
  llvm::StringSet<> available;
  for (const auto &entry : known)
    available.insert(entry.getKey());
  for (const auto &entry : values)
    available.insert(entry.getKey());
  FailureOr<SmallVector<int>> order =
      orderOnnxNodes(graph(), available, [&](int i) { return nodeLoc(i); });
  if (failed(order))
    return failure();
  KilnOpBuilder kiln(builder);
  for (int i : *order) {
    kiln.setLoc(nodeLoc(i));
    if (failed(convertOnnxNodeProto(graph().node(i), opset, modelDir, kiln, *this)))
      return failure();
  }
  return success();
}

/// Where the file declares an output's type, it must be what the graph
/// computes (dimensions named by a dim_param are compared once bound).
LogicalResult
OnnxGraphImporter::checkDeclaredType(const onnx::ValueInfoProto &output,
                                     Type computed, Location loc) {
  if (!output.type().has_tensor_type())
    return success();
  const onnx::TypeProto::Tensor &declared = output.type().tensor_type();
  auto type = llvm::cast<RankedTensorType>(computed);
  bool matches = true;
  if (declared.elem_type() != onnx::TensorProto::UNDEFINED)
    matches = getOnnxElementType(context, declared.elem_type()) ==
              type.getElementType();
  std::string shape;
  if (declared.has_shape()) {
    matches &= declared.shape().dim_size() == type.getRank();
    llvm::raw_string_ostream os(shape);
    os << " and shape [";
    for (auto [i, dim] : llvm::enumerate(declared.shape().dim())) {
      os << (i ? ", " : "");
      int64_t size = -1;
      if (dim.has_dim_value()) {
        os << dim.dim_value();
        size = dim.dim_value();
      } else if (dim.has_dim_param()) {
        os << dim.dim_param();
        auto bound = options.dimSizes.find(dim.dim_param());
        if (bound != options.dimSizes.end())
          size = bound->second;
      } else {
        os << "?";
      }
      if (size >= 0 && static_cast<int64_t>(i) < type.getRank() &&
          type.getDimSize(i) != size)
        matches = false;
    }
    os << "]";
  }
  if (matches)
    return success();
  return emitError(loc) << "is declared with element type "
                        << getOnnxDataTypeName(declared.elem_type()) << shape
                        << ", but the graph computes " << computed;
}

LogicalResult OnnxGraphImporter::buildReturn() {
  SmallVector<Value> results;
  SmallVector<std::string> names;
  for (const onnx::ValueInfoProto &output : graph().output()) {
    Location loc = namedLoc("output '" + printable(output.name()) + "'");
    if (output.name().empty())
      return emitError(loc) << "has no name";
    StringRef name = resolve(output.name());
    if (sequences.count(name) || stackedSequences.count(name))
      return emitError(loc) << "is a sequence; kiln returns tensors only";
    if (!values.count(name) && !known.count(name))
      return emitError(loc)
             << "is not produced by any node, graph input or initializer";
    Value value = lookup(name);
    if (failed(checkDeclaredType(output, value.getType(), loc)))
      return failure();
    results.push_back(value);
    names.push_back(output.name());
  }
  returnFromForward(builder, function, fileLoc, results, names);
  return success();
}

Value OnnxGraphImporter::lookup(StringRef name) {
  name = resolve(name);
  if (Value value = values.lookup(name))
    return value;
  auto it = known.find(name);
  if (it == known.end())
    llvm_unreachable("the graph order checked that every input exists");
  return materialize(name, it->second);
}

DenseElementsAttr OnnxGraphImporter::lookupConstant(StringRef name) {
  name = resolve(name);
  auto it = known.find(name);
  if (it != known.end())
    return it->second.value;
  // A value the builder folded into a constant (shape arithmetic).
  return KilnOpBuilder::constantValueOf(values.lookup(name));
}

bool OnnxGraphImporter::copyInitializer(StringRef name, StringRef source) {
  auto it = known.find(resolve(source));
  if (it == known.end() || !it->second.isInitializer ||
      !llvm::isa<FloatType>(it->second.value.getElementType()) || known.count(name))
    return false;
  Location loc = namedLoc("initializer '" + printable(name) + "'");
  Known copy{it->second.value, loc, /*isInitializer=*/true, {}};
  copy.frozen = it->second.frozen;
  copy.constant = it->second.constant;
  known.try_emplace(name, copy);
  return true;
}

Value OnnxGraphImporter::materialize(StringRef name, Known &entry) {
  if (entry.materialized)
    return entry.materialized;
  if (entry.isInitializer && !entry.constant &&
      llvm::isa<FloatType>(entry.value.getElementType()))
    entry.materialized =
        prologue.readVariable(entry.loc, name, entry.value, !entry.frozen);
  else
    entry.materialized = prologue.constant(entry.loc, entry.value);
  return entry.materialized;
}

OwningOpRef<ModuleOp> OnnxGraphImporter::import() {
  context.loadDialect<KilnDialect, func::FuncDialect>();
  model = readOnnxModelFile(path, context);
  if (!model)
    return nullptr;
  if (!model->has_graph()) {
    emitError(fileLoc) << "the model has no graph";
    return nullptr;
  }
  // The graph's name names the module (PyTorch writes "main_graph").
  const std::string &name = model->graph().name();
  module = ModuleOp::create(fileLoc, name.empty() ? std::optional<StringRef>()
                                                  : StringRef(name));
  countUses();
  if (failed(readOpset()) || failed(decodeInitializers()) ||
      failed(applyTorchSignature()) || failed(buildFunction()) || failed(convertNodes()) ||
      failed(buildReturn()))
    return nullptr;
  warnAboutFoldedParameters();
  return std::move(module);
}

void OnnxGraphImporter::warnAboutFoldedParameters() {
  if (!options.forTraining || readTorchExportSignature(graph()).present)
    return;
  // The TorchScript exporter names what its constant folding made
  // "onnx::OP_N": a weight transposed (trains the same), but also a
  // BatchNorm folded into its convolution (does not).
  SmallVector<StringRef> folded;
  for (auto &entry : known) {
    const Known &k = entry.getValue();
    if (k.isInitializer && k.materialized && !k.constant && !k.frozen &&
        llvm::isa<FloatType>(k.value.getElementType()) &&
        entry.getKey().starts_with("onnx::"))
      folded.push_back(entry.getKey());
  }
  if (folded.empty())
    return;
  llvm::sort(folded);
  InFlightDiagnostic warning = emitWarning(fileLoc);
  warning << folded.size() << " trainable initializer" << (folded.size() == 1 ? "" : "s")
          << " came from the exporter's constant folding (";
  for (size_t i = 0; i < std::min<size_t>(folded.size(), 3); ++i)
    warning << (i ? ", " : "") << "'" << printable(folded[i]) << "'";
  warning << (folded.size() > 3 ? ", ...)" : ")")
          << ": they train as folded values (a BatchNorm folded into its convolution trains as "
             "one), not as PyTorch's parameters; to train those, export with "
             "torch.onnx.export(..., do_constant_folding=False) or (dynamo=True, "
             "optimize=False)";
}

} // namespace

OwningOpRef<ModuleOp> importOnnxFile(StringRef path, MLIRContext &context,
                                     const OnnxImportOptions &options) {
  FirstErrorOnly oneError(context);
  return OnnxGraphImporter(path, context, options).import();
}

} // namespace kiln
