//===- TfDilatedConvs.cpp - Dilated convolutions made one op --------------===//
//
// The equivalence: SpaceToBatchND pads a spatial dimension of size S by
// (pb, pa) and splits it into b interleaved grids; the VALID convolution
// of a kernel of k taps reads taps j = 0..k-1 of each grid, which in the
// padded input are b apart; BatchToSpaceND interleaves the grids' outputs
// again (S + pb + pa - b (k - 1) of them) and crops (cb, ca). That is the
// convolution with dilation b of the input padded by (pb - cb, pa - ca).
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TensorFlow/TfDilatedConvs.h"

#include "compiler/Import/TensorFlow/TfGraph.h"
#include "compiler/Import/TensorFlow/TfRewrites.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>

using namespace mlir;

namespace kiln {
namespace {

/// One chain to rewrite.
struct DilatedChain {
  int spaceToBatch, expand = -1, conv, squeeze = -1, batchToSpace;
  /// Per spatial dimension of the convolution (H, W): dilation and padding.
  int64_t dilations[2] = {1, 1}, padLow[2] = {0, 0}, padHigh[2] = {0, 0};
  /// What SpaceToBatchND added to each dimension (before the crops).
  int64_t padded[2] = {0, 0};
};

class ChainMatcher : public TfPatternMatcher {
public:
  ChainMatcher(const TfGraph &graph, const std::function<Location(int)> &nodeLoc)
      : TfPatternMatcher(graph, nodeLoc) {}

  /// The chain that ends at BatchToSpaceND `node`, if it is one.
  std::optional<DilatedChain> match(int node);

private:
  /// Whether `ref` is output 0 of a node of `op` (the ops matched have one).
  bool isResult(TfOutputRef ref, StringRef op) const { return is(ref, op) && ref.output == 0; }
  /// Whether node `node` is read by `reader` alone.
  bool readOnlyBy(int node, int reader) const {
    return llvm::all_of(graph.getConsumers(node), [&](int c) { return c == reader; }) &&
           llvm::count_if(graph.getInputs(reader),
                          [&](TfOutputRef in) { return in.node == node; }) == 1;
  }
  /// Whether `conv` is an NHWC VALID convolution of stride and dilation 1.
  bool isPlainConvolution(int conv) const;
};

bool ChainMatcher::isPlainConvolution(int conv) const {
  auto ones = [](ArrayRef<int64_t> values) {
    return llvm::all_of(values, [](int64_t v) { return v == 1; });
  };
  std::string format = stringAttr(conv, "data_format");
  return (format.empty() || format == "NHWC") && stringAttr(conv, "padding") == "VALID" &&
         intsAttr(conv, "strides").size() == 4 && ones(intsAttr(conv, "strides")) &&
         ones(intsAttr(conv, "dilations"));
}

std::optional<DilatedChain> ChainMatcher::match(int node) {
  DilatedChain chain;
  chain.batchToSpace = node;
  TfOutputRef produced = input(node, 0);
  if (isResult(produced, "Squeeze")) {
    // A Conv1D: [B, L, C] expanded to [B, 1, L, C] around its Conv2D.
    chain.squeeze = produced.node;
    SmallVector<int64_t> dims = intsAttr(chain.squeeze, "squeeze_dims");
    if (dims.size() != 1 || (dims[0] != -3 && dims[0] != 1) ||
        !readOnlyBy(chain.squeeze, node))
      return std::nullopt;
    produced = input(chain.squeeze, 0);
  }
  if (!isResult(produced, "Conv2D") && !isResult(produced, "DepthwiseConv2dNative"))
    return std::nullopt;
  chain.conv = produced.node;
  if (!isPlainConvolution(chain.conv) ||
      !readOnlyBy(chain.conv, chain.squeeze >= 0 ? chain.squeeze : node))
    return std::nullopt;
  TfOutputRef blocks = input(chain.conv, 0);
  if (chain.squeeze >= 0) {
    if (!isResult(blocks, "ExpandDims"))
      return std::nullopt;
    chain.expand = blocks.node;
    std::optional<SmallVector<int64_t>> axis = constantInts(input(chain.expand, 1));
    if (!axis || axis->size() != 1 || ((*axis)[0] != -3 && (*axis)[0] != 1) ||
        !readOnlyBy(chain.expand, chain.conv))
      return std::nullopt;
    blocks = input(chain.expand, 0);
  }
  if (!isResult(blocks, "SpaceToBatchND") ||
      !readOnlyBy(blocks.node, chain.expand >= 0 ? chain.expand : chain.conv))
    return std::nullopt;
  chain.spaceToBatch = blocks.node;
  // The same blocks on both sides: one per spatial dimension of the input
  // (1 for a Conv1D's, 2 for a Conv2D's).
  size_t spatial = chain.squeeze >= 0 ? 1 : 2;
  std::optional<SmallVector<int64_t>> shape = constantInts(input(chain.spaceToBatch, 1));
  std::optional<SmallVector<int64_t>> shapeBack = constantInts(input(node, 1));
  SmallVector<int64_t> padsShape, cropsShape;
  std::optional<SmallVector<int64_t>> pads =
      constantInts(input(chain.spaceToBatch, 2), 2, &padsShape);
  std::optional<SmallVector<int64_t>> crops = constantInts(input(node, 2), 2, &cropsShape);
  auto pairs = SmallVector<int64_t>{static_cast<int64_t>(spatial), 2};
  if (!shape || !shapeBack || !pads || !crops || *shape != *shapeBack ||
      shape->size() != spatial || padsShape != pairs || cropsShape != pairs)
    return std::nullopt;
  // What SpaceToBatchND and BatchToSpaceND accept (TfBlockOps.cpp); the
  // padded size's divisibility is checked on import (kBlockPaddingAttr).
  auto within = [](int64_t v, int64_t low) { return v >= low && v <= (int64_t(1) << 24); };
  if (!llvm::all_of(*shape, [&](int64_t b) { return within(b, 1); }) ||
      !llvm::all_of(*pads, [&](int64_t p) { return within(p, 0); }) ||
      !llvm::all_of(*crops, [&](int64_t c) { return within(c, 0); }))
    return std::nullopt;
  // A Conv1D's length is the Conv2D's W (its H, of size 1, undilated).
  size_t first = spatial == 1 ? 1 : 0;
  for (size_t d = 0; d < spatial; ++d) {
    int64_t low = (*pads)[2 * d] - (*crops)[2 * d], high = (*pads)[2 * d + 1] - (*crops)[2 * d + 1];
    if (low < 0 || high < 0)
      return std::nullopt;
    chain.dilations[first + d] = (*shape)[d];
    chain.padLow[first + d] = low;
    chain.padHigh[first + d] = high;
    chain.padded[first + d] = (*pads)[2 * d] + (*pads)[2 * d + 1];
  }
  return chain;
}

void setInts(tensorflow::NodeDef &node, StringRef name, ArrayRef<int64_t> values) {
  tensorflow::AttrValue::ListValue *list = (*node.mutable_attr())[name.str()].mutable_list();
  list->clear_i();
  for (int64_t v : values)
    list->add_i(v);
}

} // namespace

LogicalResult foldTfDilatedConvolutions(tensorflow::GraphDef &graphDef,
                                        std::function<Location(int)> nodeLoc,
                                        const llvm::StringSet<> &outputs) {
  if (llvm::none_of(graphDef.node(), [](const tensorflow::NodeDef &node) {
        return node.op() == "BatchToSpaceND";
      }))
    return success();
  TfGraph graph(graphDef, nodeLoc);
  if (failed(graph.index()))
    return failure();
  ChainMatcher matcher(graph, nodeLoc);
  SmallVector<DilatedChain> chains;
  for (int i = 0, e = graph.size(); i < e; ++i) {
    if (graph.node(i).op() != "BatchToSpaceND")
      continue;
    std::optional<DilatedChain> chain = matcher.match(i);
    if (matcher.broken)
      return failure();
    auto named = [&](int n) { return n >= 0 && outputs.contains(graph.node(n).name()); };
    if (chain && !named(chain->spaceToBatch) && !named(chain->expand) && !named(chain->conv) &&
        !named(chain->squeeze))
      chains.push_back(*chain);
  }
  for (const DilatedChain &chain : chains) {
    std::string source = firstDataInput(graphDef.node(chain.spaceToBatch));
    tensorflow::NodeDef &reader =
        *graphDef.mutable_node(chain.expand >= 0 ? chain.expand : chain.conv);
    // The input, then the reader's other inputs (the ExpandDims' axis, the
    // filter) and control inputs as they were.
    reader.set_input(0, source);
    tensorflow::NodeDef &conv = *graphDef.mutable_node(chain.conv);
    setInts(conv, "dilations", {1, chain.dilations[0], chain.dilations[1], 1});
    setInts(conv, "explicit_paddings", {0, 0, chain.padLow[0], chain.padHigh[0], chain.padLow[1],
                                        chain.padHigh[1], 0, 0});
    (*conv.mutable_attr())["padding"].set_s("EXPLICIT");
    setInts(conv, kBlockPaddingAttr,
            {chain.dilations[0], chain.padded[0], chain.dilations[1], chain.padded[1]});
    tensorflow::NodeDef &back = *graphDef.mutable_node(chain.batchToSpace);
    std::string result = graphDef.node(chain.squeeze >= 0 ? chain.squeeze : chain.conv).name();
    tensorflow::AttrValue type = back.attr().count("T") ? back.attr().at("T")
                                                        : tensorflow::AttrValue();
    back.set_op("Identity");
    back.clear_input();
    back.add_input(result);
    back.clear_attr();
    if (type.value_case() == tensorflow::AttrValue::kType)
      (*back.mutable_attr())["T"] = type;
    makeNoOp(*graphDef.mutable_node(chain.spaceToBatch));
  }
  return success();
}

} // namespace kiln
