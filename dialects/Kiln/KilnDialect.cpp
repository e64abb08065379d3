//===- KilnDialect.cpp - kiln dialect and its attributes ------------------===//

#include "dialects/Kiln/KilnDialect.h"
#include "dialects/Kiln/ComputePrecision.h"
#include "dialects/Kiln/FeedAttrs.h"
#include "dialects/Kiln/KilnOps.h"
#include "dialects/Kiln/TrainSpec.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln;

#include "dialects/Kiln/KilnDialect.cpp.inc"
#include "dialects/Kiln/KilnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Kiln/KilnAttrs.cpp.inc"

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Kiln/KilnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Kiln/KilnAttrs.cpp.inc"
      >();
}

Operation *KilnDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = llvm::dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, elements);
}

LogicalResult KilnDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == kNameAttrName)
    return op->emitError("'")
           << kNameAttrName << "' belongs on a function argument or result";
  if (attr.getName() == kRecomputedAttrName) {
    if (!llvm::isa<UnitAttr>(attr.getValue()))
      return op->emitError("'") << kRecomputedAttrName << "' must be a unit attribute";
    return success();
  }
  if (attr.getName() == kComputePrecisionAttrName) {
    auto type = llvm::dyn_cast<TypeAttr>(attr.getValue());
    bool convolution = llvm::isa<ConvOp, ConvBackwardDataOp, ConvBackwardFilterOp>(op);
    if (!llvm::isa<MatmulOp>(op) && !convolution)
      return op->emitError("'") << kComputePrecisionAttrName
                                << "' belongs on a kiln.matmul or a convolution";
    if (convolution && !(type && type.getValue().isBF16()))
      return op->emitError("'") << kComputePrecisionAttrName
                                << "' on a convolution must be bf16, got " << attr.getValue();
    if (!type || !(type.getValue().isBF16() || type.getValue().isF16()))
      return op->emitError("'") << kComputePrecisionAttrName
                                << "' must be the type bf16 or f16, got " << attr.getValue();
    return success();
  }
  if (attr.getName() != kTrainSpecAttrName)
    return op->emitError("unknown kiln attribute '")
           << attr.getName().getValue() << "'";
  auto module = llvm::dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("'") << kTrainSpecAttrName << "' belongs on a module";
  return verifyTrainSpec(module, attr.getValue());
}

/// Checks a `kiln.name` on argument or result `index` (`what`) of `op`.
static LogicalResult verifyNameAttr(Operation *op, StringRef what,
                                    unsigned index, NamedAttribute attr) {
  if (attr.getName() != KilnDialect::kNameAttrName)
    return op->emitError("unknown kiln attribute '")
           << attr.getName().getValue() << "' on " << what << " #" << index;
  auto name = llvm::dyn_cast<StringAttr>(attr.getValue());
  if (!name || name.getValue().empty())
    return op->emitError("'")
           << KilnDialect::kNameAttrName << "' of " << what << " #" << index
           << " must be a non-empty string, got " << attr.getValue();
  return success();
}

LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kIgnoredLabelAttr) {
    if (!llvm::isa<IntegerAttr>(attr.getValue()))
      return op->emitError("'") << name << "' of argument #" << argIndex
                                << " must be an integer, got " << attr.getValue();
    return success();
  }
  if (name == kIdsPerExampleAttr || name == kOffsetsStrideAttr || name == kClassCountAttr) {
    auto value = llvm::dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() < 1)
      return op->emitError("'") << name << "' of argument #" << argIndex
                                << " must be a positive integer, got " << attr.getValue();
    return success();
  }
  return verifyNameAttr(op, "argument", argIndex, attr);
}

LogicalResult KilnDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  // kiln-autodiff's gradient results name their variable.
  StringRef name = attr.getName().getValue();
  if (name == kGradientAttr || name == kGradientIndicesAttr || name == kGradientRowsAttr) {
    if (!llvm::isa<FlatSymbolRefAttr>(attr.getValue()))
      return op->emitError("'") << name << "' of result #" << resultIndex
                                << " must name a variable, got " << attr.getValue();
    return success();
  }
  if (name == kRowsUnscaledAttr || name == kRowsCheckAttr) {
    if (!llvm::isa<UnitAttr>(attr.getValue()))
      return op->emitError("'") << name << "' of result #" << resultIndex
                                << " must be a unit attribute";
    return success();
  }
  return verifyNameAttr(op, "result", resultIndex, attr);
}

//===----------------------------------------------------------------------===//
// InitializerAttr
//===----------------------------------------------------------------------===//

static bool hasBounds(InitKind kind) {
  return kind == InitKind::uniform || kind == InitKind::normal ||
         kind == InitKind::truncated_normal;
}

static bool isRandomKind(InitKind kind) {
  return hasBounds(kind) || kind == InitKind::glorot_uniform ||
         kind == InitKind::glorot_normal;
}

bool InitializerAttr::isRandom() const { return isRandomKind(getKind()); }

Attribute InitializerAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  SMLoc kindLoc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return {};
  std::optional<InitKind> kind = symbolizeInitKind(keyword);
  if (!kind) {
    parser.emitError(kindLoc, "unknown initializer '") << keyword << "'";
    return {};
  }
  double a = 0.0, b = 0.0;
  uint64_t seed = 0;
  ElementsAttr value;
  if (*kind == InitKind::constant) {
    SMLoc valueLoc = parser.getCurrentLocation();
    Attribute attr;
    if (parser.parseAttribute(attr))
      return {};
    value = llvm::dyn_cast<ElementsAttr>(attr);
    if (!value) {
      parser.emitError(valueLoc, "expects a tensor value for a constant initializer");
      return {};
    }
  }
  if (hasBounds(*kind) &&
      (parser.parseLParen() || parser.parseFloat(a) || parser.parseComma() ||
       parser.parseFloat(b) || parser.parseRParen()))
    return {};
  if (isRandomKind(*kind) && succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("seed") || parser.parseEqual() ||
       parser.parseInteger(seed)))
    return {};
  if (parser.parseGreater())
    return {};
  return get(parser.getContext(), *kind, llvm::APFloat(a), llvm::APFloat(b),
             seed, value);
}

void InitializerAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyInitKind(getKind());
  if (getKind() == InitKind::constant) {
    printer << " ";
    printer.printAttribute(getValue());
  }
  if (hasBounds(getKind())) {
    printer << "(";
    printer.printFloat(getA());
    printer << ", ";
    printer.printFloat(getB());
    printer << ")";
  }
  if (isRandom())
    printer << ", seed = " << getSeed();
  printer << ">";
}

LogicalResult
InitializerAttr::verifyFor(RankedTensorType type,
                           function_ref<InFlightDiagnostic()> emitError) const {
  InitKind kind = getKind();
  if (kind == InitKind::constant) {
    if (!getValue())
      return emitError() << "expects a value for a constant initializer";
    if (getValue().getType() != type)
      return emitError() << "expects a constant initializer of type " << type
                         << ", got " << getValue().getType();
    return success();
  }
  if (kind == InitKind::zeros || kind == InitKind::ones)
    return success();
  if (!llvm::isa<FloatType>(type.getElementType()))
    return emitError() << "expects a float variable for initializer '"
                       << stringifyInitKind(kind) << "', got "
                       << type.getElementType();
  if (!std::isfinite(getFirst()) || !std::isfinite(getSecond()))
    return emitError() << "expects finite initializer parameters, got "
                       << getFirst() << " and " << getSecond();
  if (kind == InitKind::uniform && !(getFirst() < getSecond()))
    return emitError() << "expects uniform min (" << getFirst()
                       << ") to be less than max (" << getSecond() << ")";
  if ((kind == InitKind::normal || kind == InitKind::truncated_normal) &&
      !(getSecond() > 0.0))
    return emitError() << "expects a positive stddev, got " << getSecond();
  if ((kind == InitKind::glorot_uniform || kind == InitKind::glorot_normal) &&
      type.getRank() < 1)
    return emitError() << "expects a variable of rank >= 1 for initializer '"
                       << stringifyInitKind(kind) << "'";
  return success();
}
