//===- TfFrames.h - The while loops of a frozen GraphDef --------*- C++ -*-===//
//
// Freezing lowers tf.while_loop (every Keras LSTM, GRU and SimpleRNN built
// without unroll=True) to TF1 control flow: a frame whose values come in
// through Enter nodes, loop variables that are Merges of their initial value
// and a NextIteration, a LoopCond over the variables, Switches that send
// each variable to the body while the condition holds and to an Exit when it
// no longer does. Kiln finds each frame here and unrolls it at import
// (TfWhileLoops.cpp): the condition must be known at import time at every
// iteration, as a loop over a sequence of static length is.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_TENSORFLOW_TFFRAMES_H
#define KILN_COMPILER_IMPORT_TENSORFLOW_TFFRAMES_H

#include "compiler/Import/TensorFlow/TfGraph.h"

namespace kiln {

struct TfFrame {
  std::string name;
  /// Every node of the frame, in file order: those reached from its Enters
  /// through data edges, its Exits included and their consumers not.
  std::vector<int> nodes;
  llvm::SmallVector<int> merges, switches, exits, nextIterations;
  int loopCond = -1;
  /// The nodes reached from the Switches' true outputs: the body, skipped on
  /// the iteration whose condition is false.
  std::vector<bool> body;
  /// The nodes outside the frame that its nodes read.
  llvm::SmallVector<int> reads;
};

struct TfFrames {
  std::vector<TfFrame> frames;
  /// The frame of each node, -1 outside every frame.
  std::vector<int> frameOf;

  /// The producers order() sees for node i, beyond its data inputs: a
  /// frame's Exits wait for its NextIterations, its LoopCond and every node
  /// outside it that its nodes read, its NextIterations wait for the
  /// LoopCond, and a Merge does not wait for its NextIteration (the loop's
  /// back edge).
  bool isBackEdge(const TfGraph &graph, int consumer, TfOutputRef input) const;
  void addFrameProducers(const TfGraph &graph, int node,
                         llvm::SmallVectorImpl<int> &producers) const;
};

/// The while frames of the graph. One error at a node for a frame kiln
/// cannot unroll: a loop inside a loop, a node reached from two frames, an
/// Enter, Exit, NextIteration or LoopCond without one data input, a Merge
/// that is not of an Enter and a NextIteration, a NextIteration that feeds
/// anything but its Merge, a Switch not steered by the frame's one LoopCond,
/// a Switch's false output read by anything but an Exit, an Exit reading
/// anything else.
mlir::FailureOr<TfFrames>
findTfFrames(const TfGraph &graph, llvm::function_ref<mlir::Location(int)> nodeLoc);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORFLOW_TFFRAMES_H
