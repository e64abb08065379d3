//===- TfFrames.cpp - The while loops of a frozen GraphDef ----------------===//

#include "compiler/Import/TensorFlow/TfFrames.h"

#include "compiler/Import/DiagnosticText.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace kiln {
namespace {

constexpr llvm::StringLiteral kCannotUnroll = "is part of a while loop kiln cannot unroll: ";

class FrameFinder {
public:
  FrameFinder(const TfGraph &graph, llvm::function_ref<Location(int)> nodeLoc)
      : graph(graph), nodeLoc(nodeLoc) {}

  FailureOr<TfFrames> run();

private:
  StringRef op(int i) const { return graph.node(i).op(); }
  LogicalResult collect(int enter, int frame);
  LogicalResult classify(TfFrame &frame, int index);

  const TfGraph &graph;
  llvm::function_ref<Location(int)> nodeLoc;
  TfFrames result;
};

LogicalResult FrameFinder::collect(int enter, int frame) {
  SmallVector<int> work{enter};
  while (!work.empty()) {
    int n = work.pop_back_val();
    int &owner = result.frameOf[n];
    if (owner == frame)
      continue;
    if (owner >= 0)
      return emitError(nodeLoc(n))
             << kCannotUnroll << "it is reached from the loops '"
             << printable(result.frames[owner].name) << "' and '"
             << printable(result.frames[frame].name) << "'";
    if (n != enter && op(n) == "Enter")
      return emitError(nodeLoc(n)) << kCannotUnroll
                                   << "it enters a loop inside the loop '"
                                   << printable(result.frames[frame].name)
                                   << "' (kiln unrolls loops that hold no loop)";
    owner = frame;
    result.frames[frame].nodes.push_back(n);
    // An Exit's consumers are outside the frame.
    if (op(n) == "Exit")
      continue;
    for (int consumer : graph.getConsumers(n))
      work.push_back(consumer);
  }
  return success();
}

LogicalResult FrameFinder::classify(TfFrame &frame, int index) {
  llvm::sort(frame.nodes);
  auto inFrame = [&](TfOutputRef ref) { return result.frameOf[ref.node] == index; };
  for (int n : frame.nodes) {
    ArrayRef<TfOutputRef> in = graph.getInputs(n);
    StringRef kind = op(n);
    if ((kind == "Enter" || kind == "Exit" || kind == "NextIteration" ||
         kind == "LoopCond") &&
        in.size() != 1)
      return emitError(nodeLoc(n)) << kCannotUnroll << "it has " << in.size()
                                   << " data inputs, not one";
    for (TfOutputRef input : in)
      if (!inFrame(input) && !llvm::is_contained(frame.reads, input.node))
        frame.reads.push_back(input.node);
    if (kind == "NextIteration") {
      ArrayRef<int> readers = graph.getConsumers(n);
      if (readers.size() != 1 || op(readers.front()) != "Merge")
        return emitError(nodeLoc(n)) << kCannotUnroll
                                     << "a NextIteration feeds its loop's Merge alone";
    }
    if (kind == "Exit" && (op(in[0].node) != "Switch" || in[0].output != 0 || !inFrame(in[0])))
      return emitError(nodeLoc(n)) << kCannotUnroll
                                   << "an Exit reads its loop's Switch's false output";
    if (kind == "Switch")
      for (int reader : graph.getConsumers(n))
        if (op(reader) != "Exit" &&
            llvm::is_contained(graph.getInputs(reader), TfOutputRef{n, 0}))
          return emitError(nodeLoc(reader))
                 << kCannotUnroll << "it reads a Switch's false output, which only an "
                 << "Exit may read";
    if (kind == "Merge") {
      bool loopVariable = in.size() == 2 && op(in[0].node) == "Enter" &&
                          op(in[1].node) == "NextIteration" && inFrame(in[0]) &&
                          inFrame(in[1]);
      if (!loopVariable)
        return emitError(nodeLoc(n)) << kCannotUnroll
                                     << "a Merge of a loop merges its Enter and its "
                                        "NextIteration";
      frame.merges.push_back(n);
    } else if (kind == "LoopCond") {
      if (frame.loopCond >= 0)
        return emitError(nodeLoc(n)) << kCannotUnroll << "the loop has a second LoopCond";
      frame.loopCond = n;
    } else if (kind == "Switch") {
      frame.switches.push_back(n);
    } else if (kind == "Exit") {
      frame.exits.push_back(n);
    } else if (kind == "NextIteration") {
      frame.nextIterations.push_back(n);
    }
  }
  if (frame.loopCond < 0)
    return emitError(nodeLoc(frame.nodes.front()))
           << kCannotUnroll << "the loop has no LoopCond";
  for (int n : frame.switches) {
    ArrayRef<TfOutputRef> in = graph.getInputs(n);
    if (in.size() != 2 || in[1].node != frame.loopCond || op(in[0].node) != "Merge")
      return emitError(nodeLoc(n)) << kCannotUnroll
                                   << "a Switch of a loop sends a Merge by its LoopCond";
  }
  // The body: what the Switches' true outputs reach, up to the Merges.
  frame.body.assign(graph.size(), false);
  SmallVector<int> work;
  for (int s : frame.switches)
    for (int consumer : graph.getConsumers(s))
      if (llvm::is_contained(graph.getInputs(consumer), TfOutputRef{s, 1}))
        work.push_back(consumer);
  while (!work.empty()) {
    int n = work.pop_back_val();
    if (frame.body[n] || result.frameOf[n] != index || op(n) == "Merge")
      continue;
    frame.body[n] = true;
    for (int consumer : graph.getConsumers(n))
      work.push_back(consumer);
  }
  return success();
}

FailureOr<TfFrames> FrameFinder::run() {
  result.frameOf.assign(graph.size(), -1);
  llvm::StringMap<int> byName;
  for (int i = 0, e = graph.size(); i < e; ++i) {
    if (op(i) != "Enter")
      continue;
    auto name = graph.node(i).attr().find("frame_name");
    if (name == graph.node(i).attr().end() ||
        name->second.value_case() != tensorflow::AttrValue::kS)
      return emitError(nodeLoc(i)) << "expects attribute 'frame_name' (a string)";
    auto [it, inserted] = byName.try_emplace(name->second.s(), result.frames.size());
    if (inserted) {
      result.frames.emplace_back();
      result.frames.back().name = name->second.s();
    }
    if (failed(collect(i, it->second)))
      return failure();
  }
  for (auto [index, frame] : llvm::enumerate(result.frames))
    if (failed(classify(frame, static_cast<int>(index))))
      return failure();
  return std::move(result);
}

} // namespace

bool TfFrames::isBackEdge(const TfGraph &graph, int consumer, TfOutputRef input) const {
  return frameOf[consumer] >= 0 && graph.node(consumer).op() == "Merge" &&
         graph.node(input.node).op() == "NextIteration";
}

void TfFrames::addFrameProducers(const TfGraph &graph, int node,
                                 SmallVectorImpl<int> &producers) const {
  if (frameOf[node] < 0)
    return;
  const TfFrame &frame = frames[frameOf[node]];
  StringRef op = graph.node(node).op();
  if (op == "NextIteration")
    producers.push_back(frame.loopCond);
  if (op != "Exit")
    return;
  llvm::append_range(producers, frame.nextIterations);
  producers.push_back(frame.loopCond);
  llvm::append_range(producers, frame.reads);
}

FailureOr<TfFrames> findTfFrames(const TfGraph &graph,
                                 llvm::function_ref<Location(int)> nodeLoc) {
  return FrameFinder(graph, nodeLoc).run();
}

} // namespace kiln
