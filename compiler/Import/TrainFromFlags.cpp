//===- TrainFromFlags.cpp - kilnc --train on an imported model ------------===//

#include "compiler/Import/TrainFromFlags.h"

#include "compiler/Import/Graph/TrainSpecImport.h"
#include "compiler/Import/KilnOpBuilder.h"
#include "compiler/Import/LossFromFlags.h"

#include "dialects/Kiln/KilnDialect.h"
#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace kiln {
namespace {

/// The `kiln.name` of each argument or result of @forward.
SmallVector<std::string> argumentNames(func::FuncOp forward) {
  SmallVector<std::string> names;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    auto name = forward.getArgAttrOfType<StringAttr>(i, KilnDialect::kNameAttrName);
    names.push_back(name ? name.str() : "");
  }
  return names;
}

SmallVector<std::string> resultNames(func::FuncOp forward) {
  SmallVector<std::string> names;
  for (unsigned i = 0; i < forward.getNumResults(); ++i) {
    auto name =
        forward.getResultAttrOfType<StringAttr>(i, KilnDialect::kNameAttrName);
    names.push_back(name ? name.str() : "");
  }
  return names;
}

std::string joined(ArrayRef<std::string> names) {
  std::string text;
  for (const std::string &name : names)
    text += (text.empty() ? "'" : ", '") + name + "'";
  return text;
}

/// Adds the loss the flags name to @forward; returns the name of its result.
class LossBuilder {
public:
  LossBuilder(ModuleOp module, func::FuncOp forward, const TrainFlags &flags)
      : module(module), forward(forward), flags(flags),
        loc(NameLoc::get(StringAttr::get(module.getContext(), "--loss"),
                         module.getLoc())) {}

  FailureOr<std::string> build();
  /// --loss=model: the output the model computes its loss in (a float
  /// scalar), and its existing label input; returns the output's name.
  FailureOr<std::string> useModelLoss();
  StringRef labelName() const { return label; }

private:
  FailureOr<unsigned> findOutput();
  FailureOr<Value> labelArgument(RankedTensorType type);
  FailureOr<Value> loss(Value output, StringRef outputName, Value labels);
  std::string uniqueResultName() const;
  LogicalResult checkOptions(RankedTensorType outputType) const;
  FailureOr<int64_t> classAxis(RankedTensorType logits) const;

  ModuleOp module;
  func::FuncOp forward;
  const TrainFlags &flags;
  Location loc;
  std::string label;
};

FailureOr<unsigned> LossBuilder::findOutput() {
  SmallVector<std::string> names = resultNames(forward);
  if (flags.output.empty()) {
    if (names.size() == 1)
      return 0u;
    return emitError(loc) << "the model has " << names.size() << " outputs ("
                          << joined(names)
                          << "): name the one the loss reads with --output";
  }
  auto it = llvm::find(names, flags.output);
  if (it == names.end())
    return emitError(loc) << "--output=" << flags.output
                          << " is not an output of the model (its outputs: "
                          << joined(names) << ")";
  return static_cast<unsigned>(it - names.begin());
}

/// The label argument: an existing input of that name (its type checked)
/// or a new argument of `type` at the end of @forward.
FailureOr<Value> LossBuilder::labelArgument(RankedTensorType type) {
  SmallVector<std::string> names = argumentNames(forward);
  auto it = llvm::find(names, label);
  if (it != names.end()) {
    Value existing = forward.getArgument(it - names.begin());
    if (existing.getType() != type)
      return emitError(loc) << "--label=" << label << " names an input of type "
                            << existing.getType() << "; the " << flags.loss
                            << " loss needs " << type
                            << (lossTakesClassIds(flags) ? " (class ids)"
                                : lossOverClasses(flags.loss)
                                    ? " (class probabilities shaped like the output)"
                                    : "");
    return existing;
  }
  unsigned index = forward.getNumArguments();
  Builder b(module.getContext());
  NamedAttribute name(b.getStringAttr(KilnDialect::kNameAttrName),
                      b.getStringAttr(label));
  forward.insertArgument(index, type, b.getDictionaryAttr({name}), loc);
  return forward.getArgument(index);
}

/// The axis of classes, made non-negative: --class-axis, else the last.
FailureOr<int64_t> LossBuilder::classAxis(RankedTensorType logits) const {
  int64_t rank = logits.getRank();
  if (!flags.classAxis)
    return rank - 1;
  int64_t axis = *flags.classAxis < 0 ? *flags.classAxis + rank : *flags.classAxis;
  if (axis < 0 || axis >= rank)
    return emitError(loc) << "--class-axis=" << *flags.classAxis << " is not an axis of the "
                          << "output " << logits << " (rank " << rank << ")";
  if (axis == 0)
    return emitError(loc) << "--class-axis=" << *flags.classAxis << " is the batch axis of the "
                          << "output " << logits << "; the classes follow it";
  return axis;
}

FailureOr<Value> LossBuilder::loss(Value output, StringRef outputName, Value labels) {
  OpBuilder builder(forward.getBody().front().getTerminator());
  KilnOpBuilder kiln(builder);
  kiln.setLoc(loc);
  auto type = cast<RankedTensorType>(output.getType());
  int64_t axis = type.getRank() - 1;
  if (lossOverClasses(flags.loss)) {
    FailureOr<int64_t> classes = classAxis(type);
    if (failed(classes))
      return failure();
    axis = *classes;
  }
  return buildAddedLoss(kiln, flags, output, outputName, labels, axis);
}

/// One error for an option of the loss that does not fit its kind or the
/// output.
LogicalResult LossBuilder::checkOptions(RankedTensorType outputType) const {
  bool classIds = lossTakesClassIds(flags);
  if (flags.classAxis && !lossOverClasses(flags.loss))
    return emitError(loc) << "--class-axis is for a loss over classes (softmax_cross_entropy, "
                             "nll, sparse_categorical_crossentropy, categorical_crossentropy), "
                             "not "
                          << flags.loss;
  if (flags.classProbabilities && flags.loss != "softmax_cross_entropy")
    return emitError(loc) << "--class-probabilities is for --loss=softmax_cross_entropy, not "
                          << flags.loss
                          << (flags.loss == "categorical_crossentropy"
                                  ? " (whose labels are class probabilities already)"
                                  : "");
  if (flags.ignoreIndex && !classIds)
    return emitError(loc) << "--ignore-index is for a loss over class ids (softmax_cross_entropy, "
                             "nll, sparse_categorical_crossentropy), not "
                          << flags.loss
                          << (flags.classProbabilities ? " of class probabilities" : "");
  if (flags.labelSmoothing && flags.loss != "softmax_cross_entropy" &&
      flags.loss != "categorical_crossentropy")
    return emitError(loc) << "--label-smoothing is for --loss=softmax_cross_entropy or "
                             "categorical_crossentropy, not "
                          << flags.loss;
  if (lossOverClasses(flags.loss) && outputType.getRank() < 2)
    return emitError(loc) << flags.loss << " needs " << (flags.loss == "nll" ? "log-" : "")
                          << (flags.loss == "softmax_cross_entropy" ? "logits" : "probabilities")
                          << " of rank >= 2 ([batch, classes]), the output is " << outputType;
  bool binary = flags.loss == "binary_crossentropy";
  if (!flags.classWeights.empty() && !lossOverClasses(flags.loss) && !binary)
    return emitError(loc) << "--class-weights is for a loss over classes (softmax_cross_entropy, "
                             "nll, sparse_categorical_crossentropy, categorical_crossentropy) "
                             "or binary_crossentropy, not "
                          << flags.loss
                          << (flags.loss == "sigmoid_cross_entropy"
                                  ? " (PyTorch's BCEWithLogitsLoss weighs positives: --pos-weight)"
                                  : "");
  // Label columns: the last axis of an output [N, ..., K]; one of [N].
  int64_t columns = outputType.getRank() > 1 ? outputType.getShape().back() : 1;
  if (!flags.posWeights.empty() && flags.loss != "sigmoid_cross_entropy")
    return emitError(loc) << "--pos-weight is for --loss=sigmoid_cross_entropy (PyTorch's "
                             "BCEWithLogitsLoss), not "
                          << flags.loss
                          << (binary ? " (Keras' class_weight: --class-weights=w0,w1)" : "");
  if (flags.posWeights.size() > 1 && static_cast<int64_t>(flags.posWeights.size()) != columns)
    return emitError(loc) << "--pos-weight has " << flags.posWeights.size()
                          << " weights, but the output has " << columns
                          << " label columns (its last axis): one weight, or one per column";
  if (binary && !flags.classWeights.empty()) {
    if (flags.classWeights.size() != 2)
      return emitError(loc) << "--class-weights has " << flags.classWeights.size()
                            << " weights; binary_crossentropy takes 2 (w0,w1: Keras' "
                               "class_weight of the labels 0 and 1)";
    if (outputType.getRank() != 2 || columns != 1)
      return emitError(loc) << "--class-weights weighs binary_crossentropy by each example's "
                               "0/1 label (Keras' class_weight), an output [N, 1]; the output "
                               "is "
                            << outputType;
  }
  if (!lossOverClasses(flags.loss))
    return success();
  FailureOr<int64_t> axis = classAxis(outputType);
  if (failed(axis))
    return failure();
  int64_t classes = outputType.getDimSize(*axis);
  if (!flags.classWeights.empty() && static_cast<int64_t>(flags.classWeights.size()) != classes)
    return emitError(loc) << "--class-weights has " << flags.classWeights.size()
                          << " weights, but the output has " << classes
                          << " classes (its axis " << *axis << "): one weight per class";
  return success();
}

std::string LossBuilder::uniqueResultName() const {
  SmallVector<std::string> names = resultNames(forward);
  llvm::StringSet<> taken;
  for (const std::string &name : names)
    taken.insert(name);
  std::string name = "loss";
  for (int suffix = 1; taken.contains(name); ++suffix)
    name = "loss_" + std::to_string(suffix);
  return name;
}

FailureOr<std::string> LossBuilder::build() {
  label = flags.label.empty() ? "label" : flags.label;
  FailureOr<unsigned> outputIndex = findOutput();
  if (failed(outputIndex))
    return failure();
  auto returnOp = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
  Value output = returnOp.getOperand(*outputIndex);
  auto outputType = cast<RankedTensorType>(output.getType());
  if (!isa<FloatType>(outputType.getElementType()))
    return emitError(loc) << "the output '" << resultNames(forward)[*outputIndex]
                          << "' is " << outputType
                          << "; a loss needs a float tensor";
  if (failed(checkOptions(outputType)))
    return failure();
  RankedTensorType labelType = outputType; // Float targets are shaped like it.
  if (lossTakesClassIds(flags)) {
    FailureOr<int64_t> axis = classAxis(outputType);
    if (failed(axis))
      return failure();
    SmallVector<int64_t> positions(outputType.getShape());
    positions.erase(positions.begin() + *axis);
    labelType = RankedTensorType::get(positions, IntegerType::get(module.getContext(), 32));
  }
  FailureOr<Value> labels = labelArgument(labelType);
  if (failed(labels))
    return failure();
  FailureOr<Value> value = loss(output, resultNames(forward)[*outputIndex], *labels);
  if (failed(value))
    return failure();

  std::string name = uniqueResultName();
  Builder b(module.getContext());
  NamedAttribute nameAttr(b.getStringAttr(KilnDialect::kNameAttrName),
                          b.getStringAttr(name));
  unsigned index = forward.getNumResults();
  forward.insertResult(index, value->getType(), b.getDictionaryAttr({nameAttr}));
  returnOp->insertOperands(returnOp.getNumOperands(), *value);
  return name;
}

FailureOr<std::string> LossBuilder::useModelLoss() {
  label = flags.label.empty() ? "label" : flags.label;
  const char *option = flags.classAxis               ? "--class-axis"
                       : flags.ignoreIndex           ? "--ignore-index"
                       : flags.labelSmoothing        ? "--label-smoothing"
                       : flags.classProbabilities    ? "--class-probabilities"
                       : !flags.classWeights.empty() ? "--class-weights"
                       : !flags.posWeights.empty()   ? "--pos-weight"
                                                     : nullptr;
  if (option)
    return emitError(loc) << option << " is for a loss kilnc adds; with --loss=model the "
                                       "model's loss has its own";
  FailureOr<unsigned> outputIndex = findOutput();
  if (failed(outputIndex))
    return failure();
  std::string name = resultNames(forward)[*outputIndex];
  auto type = cast<RankedTensorType>(forward.getResultTypes()[*outputIndex]);
  if (type.getRank() != 0 || !isa<FloatType>(type.getElementType()))
    return emitError(loc) << "the output '" << name << "' is " << type
                          << "; a loss the model computes (--loss=model) must be a float scalar";
  SmallVector<std::string> inputs = argumentNames(forward);
  if (!llvm::is_contained(inputs, label))
    return emitError(loc) << "--label=" << label
                          << (flags.label.empty() ? " (the default)" : "")
                          << " is not an input of the model (its inputs: " << joined(inputs)
                          << "); name the input holding the labels";
  return name;
}

/// The names a spec built from flags may refer to, read off the module.
TrainSpecNames moduleTrainSpecNames(ModuleOp module, func::FuncOp forward,
                                    Value label) {
  TrainSpecNames names;
  llvm::StringSet<> variables;
  module.walk([&](VariableOp variable) { variables.insert(variable.getSymName()); });
  names.isLossCandidate = [results = resultNames(forward)](const std::string &name) {
    return llvm::is_contained(results, name);
  };
  names.isInput = [arguments = argumentNames(forward)](const std::string &name) {
    return llvm::is_contained(arguments, name);
  };
  names.isVariable = [variables = std::move(variables)](const std::string &name) {
    return variables.contains(name);
  };
  auto type = cast<RankedTensorType>(label.getType());
  names.defaultBatch = type.getRank() > 0 ? type.getDimSize(0) : 1;
  return names;
}

} // namespace

LogicalResult applyTrainFlags(ModuleOp module, const TrainFlags &flags,
                              bool hadSpecInFile) {
  Location loc = module.getLoc();
  if (!flags.train) {
    if (flags.addsLoss() || flags.overridesSpec())
      return emitError(loc) << "--loss, --output, --label, --class-axis, --ignore-index, "
                               "--label-smoothing, --class-probabilities, --class-weights, "
                               "--pos-weight, --optimizer, --lr, --batch, --accumulate-steps, "
                               "--strategy, --remat and --memory-budget need --train";
    return success();
  }
  if (module->hasAttr(KilnDialect::kTrainSpecAttrName)) {
    if (flags.addsLoss())
      return emitError(loc)
             << "the model has a train spec naming its loss; --loss, --output, "
                "--label, --class-axis, --ignore-index, --label-smoothing, "
                "--class-probabilities, --class-weights and --pos-weight are for "
                "models without one (ONNX)";
    if (!hadSpecInFile && flags.overridesSpec())
      return emitError(loc) << "--optimizer, --lr, --batch and "
                               "--accumulate-steps override a graph file's "
                               "train spec; this model's spec is already IR";
    return success();
  }
  if (flags.loss.empty())
    return emitError(loc) << "the model has no train spec: name its loss with "
                             "--loss=softmax_cross_entropy|"
                             "sigmoid_cross_entropy|nll|sparse_categorical_crossentropy|"
                             "categorical_crossentropy|binary_crossentropy|mse (and --output, "
                             "--label), or "
                             "--loss=model for an output the model computes its loss in";
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward || forward.isExternal())
    return emitError(loc) << "the model has no @forward function to train";

  LossBuilder builder(module, forward, flags);
  FailureOr<std::string> lossName =
      flags.loss == "model" ? builder.useModelLoss() : builder.build();
  if (failed(lossName))
    return failure();

  graph::TrainSpec spec;
  spec.set_loss(*lossName);
  spec.set_label(builder.labelName().str());
  if (failed(applyTrainOverrides(flags, spec, loc)))
    return failure();
  SmallVector<std::string> arguments = argumentNames(forward);
  Value label = forward.getArgument(
      llvm::find(arguments, builder.labelName().str()) - arguments.begin());
  FailureOr<DictionaryAttr> dict =
      importTrainSpec(spec, moduleTrainSpecNames(module, forward, label), loc);
  if (failed(dict))
    return failure();
  module->setAttr(KilnDialect::kTrainSpecAttrName, *dict);
  return success();
}

} // namespace kiln
