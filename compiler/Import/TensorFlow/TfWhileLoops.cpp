//===- TfWhileLoops.cpp - While frames unrolled at import -----------------===//
//
// A frame (TfFrames.h) runs where the walk meets its first Exit, after every
// node it reads. Each iteration converts the frame's nodes in order: an
// Enter names its input, a Merge the loop variable's value (the Enter's
// first, then the last iteration's NextIteration's), a LoopCond reads the
// condition, which must be known at import time, a Switch sends its value to
// output 1 while the condition holds and to output 0 when it does not, and
// every other node converts as anywhere else. The iteration whose condition
// is false converts no body node; its Exits name the variables' values. Each
// NextIteration's value is kept under a key of its own ("merge:0#k") before
// the next iteration drops the keys the last one defined, so that the
// iterations' values never mix.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TensorFlow/TfGraphImporter.h"

#include "compiler/Import/DiagnosticText.h"

#include "llvm/ADT/DenseMap.h"

#include <optional>

using namespace mlir;

namespace kiln {
namespace tf_import {
namespace {

/// Loops running longer are refused: each iteration is a copy of the body.
constexpr int kMaxIterations = 10000;
/// Nor may a loop convert more nodes than this over its iterations.
constexpr int64_t kMaxConversions = int64_t(1) << 22;

} // namespace

bool TfGraphImporter::hasBinding(StringRef key) const {
  StringRef resolved = resolve(key);
  return values.count(resolved) || known.count(resolved) || lists.count(resolved);
}

void TfGraphImporter::snapshot(StringRef from, const std::string &to) {
  StringRef key = resolve(from);
  if (std::shared_ptr<TensorList> list = lookupList(key)) {
    lists[to] = std::move(list);
  } else if (Value value = values.lookup(key)) {
    values[to] = value;
  } else {
    Known &entry = known.find(key)->second;
    // A frozen variable is read once, whatever the loop carries it through.
    if (entry.isVariable)
      values[to] = materialize(entry);
    else
      known.insert_or_assign(to, entry);
  }
}

void TfGraphImporter::forget(StringRef key) {
  values.erase(key);
  known.erase(key);
  aliases.erase(key);
  lists.erase(key);
}

void TfGraphImporter::forgetFrameKeys() {
  for (const std::string &key : frameKeys)
    forget(key);
  frameKeys.clear();
}

LogicalResult TfGraphImporter::runFrame(int f, ArrayRef<int> order, KilnOpBuilder &kiln) {
  const TfFrame &frame = frames.frames[f];
  SmallVector<int> nodes;
  for (int i : order)
    if (frames.frameOf[i] == f)
      nodes.push_back(i);
  // Each NextIteration feeds one Merge (TfFrames checked).
  llvm::DenseMap<int, int> mergeOf;
  for (int merge : frame.merges)
    mergeOf[graph->getInputs(merge)[1].node] = merge;
  int64_t conversions = 0;
  // The key each Merge reads after the first iteration.
  llvm::DenseMap<int, std::string> state, next;
  for (int iteration = 0;; ++iteration) {
    conversions += static_cast<int64_t>(nodes.size());
    if (iteration > kMaxIterations || conversions > kMaxConversions)
      return emitError(nodeLoc(frame.loopCond))
             << "the while loop runs more than " << kMaxIterations << " iterations or "
             << kMaxConversions << " nodes in all; kiln unrolls loops at import";
    forgetFrameKeys();
    inFrame = true;
    std::optional<bool> condition;
    for (int n : nodes) {
      const tensorflow::NodeDef &node = graph->node(n);
      StringRef op = node.op();
      SmallVector<std::string> keys = inputKeys(n);
      std::string out = tfValueKey(node.name(), 0);
      kiln.setLoc(nodeLoc(n));
      bool skipped = frame.body[n] && condition && !*condition;
      for (auto [position, key] : llvm::enumerate(keys))
        if (!skipped && !(op == "Merge" && position == 1) &&
            !(op == "Exit" && condition && *condition) && !hasBinding(key))
          return kiln.emitError() << "reads " << printable(key)
                                  << " in the while loop, which kiln does not produce";
      if (op == "Enter") {
        alias(out, keys[0]);
      } else if (op == "Merge") {
        alias(out, iteration == 0 ? keys[0] : state[n]);
      } else if (op == "LoopCond") {
        DenseElementsAttr value = lookupConstant(keys[0]);
        if (!value || !value.getElementType().isInteger(1) || value.getNumElements() != 1)
          return kiln.emitError()
                 << "the while loop's condition is not known at import time (iteration "
                 << iteration << "); kiln unrolls loops over a count it knows, as a "
                 << "recurrent layer's over a sequence of static length";
        condition = *value.getValues<bool>().begin();
        alias(out, keys[0]);
      } else if (op == "Switch" || op == "Exit" || op == "NextIteration") {
        if (!condition)
          return kiln.emitError() << "reads the while loop's condition before its LoopCond";
        if (op == "Switch")
          alias(tfValueKey(node.name(), *condition ? 1 : 0), keys[0]);
        else if (op == "Exit" && !*condition)
          alias(out, keys[0]);
        else if (op == "NextIteration" && *condition) {
          int merge = mergeOf.find(n)->second;
          std::string key = tfValueKey(graph->node(merge).name(), 0) + "#" +
                            std::to_string(iteration + 1);
          snapshot(keys[0], key);
          next[merge] = key;
        }
      } else if (!skipped) {
        if (failed(convertNode(n, kiln)))
          return failure();
      }
    }
    inFrame = false;
    if (!condition)
      return emitError(nodeLoc(frame.loopCond)) << "the while loop's LoopCond was not reached";
    if (!*condition)
      break;
    // The iteration before last's values are read no more.
    for (auto &[merge, key] : state)
      forget(key);
    state = next;
  }
  // The last iteration's keys stay: the Exits name its values.
  frameKeys.clear();
  return success();
}

} // namespace tf_import
} // namespace kiln
