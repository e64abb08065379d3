//===- TfTensorLists.cpp - TensorLists at import time ---------------------===//
//
// tf.TensorArray, as a frozen while loop uses it (a recurrent layer's inputs
// read by step, its outputs written by step and stacked): TensorListReserve,
// TensorListFromTensor, TensorListGetItem, TensorListSetItem,
// TensorListStack and TensorListLength. A list exists only at import time,
// as the values of its elements; the indices must be known at import time
// (a loop's step, once unrolled). Setting an element makes a new list, so a
// list a loop variable held in an earlier iteration never changes.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TensorFlow/TfGraphImporter.h"

#include "compiler/Import/DiagnosticText.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace tf_import {
namespace {

/// Lists longer than this are refused (each element is a value, and
/// setting one copies the list).
constexpr int64_t kMaxElements = int64_t(1) << 16;

} // namespace

bool TfGraphImporter::isTensorListOp(StringRef op) { return op.starts_with("TensorList"); }

std::shared_ptr<TensorList> TfGraphImporter::lookupList(StringRef key) const {
  return lists.lookup(resolve(key));
}

LogicalResult TfGraphImporter::convertTensorListOp(int i, KilnOpBuilder &kiln) {
  const tensorflow::NodeDef &proto = graph->node(i);
  StringRef op = proto.op();
  SmallVector<std::string> keys = inputKeys(i);
  TfNode node(proto, keys, kiln, *this);
  std::string out = tfValueKey(proto.name(), 0);
  // The inputs that are TensorLists: input #0 of the ops that take one.
  bool readsList = op != "TensorListReserve" && op != "TensorListFromTensor";
  auto requireInputs = [&](unsigned count) -> LogicalResult {
    if (failed(node.requireCount(node.getNumInputs(), count, count, "data input")))
      return failure();
    for (unsigned k = readsList ? 1 : 0; k < count; ++k)
      if (lookupList(keys[k]))
        return kiln.emitError() << "reads a TensorList as input #" << k
                                << ", which takes a tensor";
    return success();
  };
  auto listInput = [&]() -> std::shared_ptr<TensorList> {
    std::shared_ptr<TensorList> list = lookupList(keys[0]);
    if (!list)
      kiln.emitError() << "expects input #0 to be a TensorList";
    return list;
  };
  auto index = [&](const TensorList &list, bool growing) -> FailureOr<int64_t> {
    FailureOr<SmallVector<int64_t>> given = node.getConstantInts(1, "index");
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return kiln.emitError() << "expects input #1 (index) to be one integer";
    int64_t k = given->front();
    int64_t size = static_cast<int64_t>(list.items.size());
    if (k < 0 || (!growing && k >= size) || k >= kMaxElements)
      return kiln.emitError() << "index " << k << " is out of range of a TensorList of "
                              << size << " elements";
    return k;
  };

  if (op == "TensorListReserve") {
    if (failed(requireInputs(2)))
      return failure();
    FailureOr<SmallVector<int64_t>> count = node.getConstantInts(1, "num_elements");
    if (failed(count))
      return failure();
    if (count->size() != 1 || count->front() < 0 || count->front() > kMaxElements)
      return kiln.emitError() << "expects input #1 (num_elements) to be one integer in [0, "
                              << kMaxElements << "]";
    auto list = std::make_shared<TensorList>();
    list->items.resize(count->front());
    defineList(out, std::move(list));
    return success();
  }
  if (op == "TensorListFromTensor") {
    if (failed(requireInputs(2)))
      return failure();
    Value tensor = node.getInput(0);
    FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(tensor, "input #0");
    if (failed(shape))
      return failure();
    if (shape->empty() || (*shape)[0] > kMaxElements)
      return kiln.emitError() << "expects input #0 to have a first dimension of at most "
                              << kMaxElements << " elements, got shape "
                              << formatIntList(*shape);
    SmallVector<int64_t> start(shape->size(), 0), limit(*shape), step(shape->size(), 1);
    ArrayRef<int64_t> elementShape = shape->drop_front();
    auto list = std::make_shared<TensorList>();
    for (int64_t k = 0; k < (*shape)[0]; ++k) {
      start[0] = k;
      limit[0] = k + 1;
      KilnOpBuilder::Result slice = kiln.slice(tensor, start, limit, step);
      if (failed(slice))
        return failure();
      KilnOpBuilder::Result element = kiln.reshape(*slice, elementShape);
      if (failed(element))
        return failure();
      list->items.push_back(*element);
    }
    defineList(out, std::move(list));
    return success();
  }
  if (op == "TensorListGetItem") {
    if (failed(requireInputs(3)))
      return failure();
    std::shared_ptr<TensorList> list = listInput();
    if (!list)
      return failure();
    FailureOr<int64_t> k = index(*list, false);
    if (failed(k))
      return failure();
    if (!list->items[*k])
      return kiln.emitError() << "reads element " << *k
                              << " of a TensorList before it is set";
    return node.setResult(0, list->items[*k]);
  }
  if (op == "TensorListSetItem") {
    if (failed(requireInputs(3)))
      return failure();
    std::shared_ptr<TensorList> list = listInput();
    if (!list)
      return failure();
    const tensorflow::AttrValue *resize = node.getAttr("resize_if_index_out_of_bounds");
    FailureOr<int64_t> k = index(*list, resize && resize->b());
    if (failed(k))
      return failure();
    auto copy = std::make_shared<TensorList>(*list);
    if (*k >= static_cast<int64_t>(copy->items.size()))
      copy->items.resize(*k + 1);
    copy->items[*k] = node.getInput(2);
    defineList(out, std::move(copy));
    return success();
  }
  if (op == "TensorListStack") {
    if (failed(requireInputs(2)))
      return failure();
    std::shared_ptr<TensorList> list = listInput();
    if (!list)
      return failure();
    if (list->items.empty())
      return kiln.emitError() << "stacks a TensorList of no elements";
    SmallVector<Value> parts;
    for (auto [k, item] : llvm::enumerate(list->items)) {
      if (!item)
        return kiln.emitError() << "stacks a TensorList whose element " << k
                                << " is not set";
      if (item.getType() != list->items.front().getType())
        return kiln.emitError() << "stacks a TensorList whose elements differ in type: "
                                << list->items.front().getType() << " and "
                                << item.getType();
      SmallVector<int64_t> shape{1};
      llvm::append_range(shape, KilnOpBuilder::shapeOf(item));
      KilnOpBuilder::Result part = kiln.reshape(item, shape);
      if (failed(part))
        return failure();
      parts.push_back(*part);
    }
    return node.setResult(0, parts.size() == 1 ? KilnOpBuilder::Result(parts.front())
                                               : kiln.concat(parts, 0));
  }
  if (op == "TensorListLength") {
    if (failed(requireInputs(1)))
      return failure();
    std::shared_ptr<TensorList> list = listInput();
    if (!list)
      return failure();
    auto type = RankedTensorType::get({}, kiln.getBuilder().getI32Type());
    node.setConstantResult(
        0, DenseElementsAttr::get(type, static_cast<int32_t>(list->items.size())));
    return success();
  }
  return kiln.emitError() << "unsupported TensorFlow op '" << printable(op) << "'";
}

} // namespace tf_import
} // namespace kiln
