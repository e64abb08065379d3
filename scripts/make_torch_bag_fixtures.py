#!/usr/bin/env python3
"""Writes PyTorch models built on nn.EmbeddingBag called with offsets (what
recommender models do), exported to ONNX by both of torch.onnx.export's
exporters (each writes the bags as an ONNX Loop), and what PyTorch computes
and trains with them, to test/Inputs/torch_bags/.

A development script, never run by the tests (they read the committed files).
Run from the repository root with the venv that has torch, onnx and
onnxscript:

    /work/venv/bin/python scripts/make_torch_bag_fixtures.py

Every model takes a batch of 4 examples, each a list of ids of any length
(0 to 5 in the training data), and returns logits [4, 5]. The ids of the
batch are one flat input of 20 ids with the offsets where each example's
list starts, as PyTorch's EmbeddingBag takes them; the exports fix 20 (4
examples x at most 5 ids).

  bags      EmbeddingBag(40, 6, mode='sum') on (ids_a, offsets_a), and
            EmbeddingBag(30, 6, mode='mean') on (ids_b, offsets_b), with
            dense features x [4, 3]: Linear(15, 5) of their concatenation.
  dlrm      facebookresearch/dlrm's DLRM_Net, small: Linear(3, 6) and ReLU on
            x, three EmbeddingBag(40, 6, mode='sum'), the pairwise dot
            products of the four (torch.bmm and Z[:, li, lj], which the
            dynamo exporter writes as GatherND), Linear(12, 8), ReLU,
            Linear(8, 5).
  last      EmbeddingBag(40, 6, mode='mean', include_last_offset=True) on
            (ids, offsets [5]), Linear(6, 5).
  weighted  EmbeddingBag(40, 6, mode='sum') on (ids, offsets) with
            per_sample_weights w [20], Linear(6, 5).
  padding   EmbeddingBag(40, 6, mode='sum', padding_idx=0), Linear(6, 5):
            the dynamo exporter only (the TorchScript one refuses
            padding_idx).
  fixed     EmbeddingBag(40, 6, mode='mean') on ids [20] with offsets the
            model holds (a buffer: lists of 5), Linear(6, 5); training data
            `ids` [80, 5].
  padding_last  EmbeddingBag(40, 6, mode='mean', padding_idx=0,
            include_last_offset=True), Linear(6, 5): the dynamo exporter
            with its defaults (graph optimizer on: padding_last_optimized.onnx),
            which sets the last offset with ScatterElements.

For each model:
  MODEL_opset17.onnx  torch.onnx.export(dynamo=False, opset_version=17)
  MODEL_dynamo.onnx   torch.onnx.export(dynamo=True, optimize=False)
  MODEL.reference.npz  one ragged batch as PyTorch takes it (`in.NAME`):
      lists of 9, 0, 11 and 0 ids (20 in all), and PyTorch's output on it
      (`out.logits`), as scripts/compare_outputs.py reads them.
  MODEL.npz           training data, 80 examples as kiln reads a ragged
      input: NAME.values and NAME.row_splits for each id list (and the
      per-sample weights padded to 5 per example with zeros), `x`, and
      `label` int32 in [0, 5).
  MODEL_sgd.jsonl, MODEL_adam.jsonl  20 steps of PyTorch training from the
      exported weights, step k on examples [(k-1)4, 4k) as PyTorch batches
      them (the lists concatenated, offsets where each starts): the loss
      before each update in float64 ("loss") and float32 ("loss_f32");
      SGD rate 0.1, Adam rate 1e-3 (make_torch_layer_fixtures.py's settings).

Besides: if_names.onnx, gathernd.onnx and topk.onnx with onnxruntime's
outputs (*.reference.npz), gathernd_clamp.onnx (out-of-range indices,
clamped), and the bad_*.onnx / bad_*.npz files of
errors-loops.test and kiln-torch-bags.test (make_bad_files).
"""

import copy
import os
import sys
import warnings
import logging

import numpy as np
import onnx
import torch
from onnx import numpy_helper
import torch.nn.functional as F

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
import make_torch_layer_fixtures as layers  # noqa: E402

OUT = os.path.join(layers.ROOT, "test", "Inputs", "torch_bags")
BATCH, ROWS, STEPS, CLASSES, LIST = 4, 80, 20, 5, 5
IDS = BATCH * LIST


class Bags(torch.nn.Module):
    inputs = ("ids_a", "offsets_a", "ids_b", "offsets_b", "x")

    def __init__(self):
        super().__init__()
        self.a = torch.nn.EmbeddingBag(40, 6, mode="sum")
        self.b = torch.nn.EmbeddingBag(30, 6, mode="mean")
        self.fc = torch.nn.Linear(15, CLASSES)

    def forward(self, ids_a, offsets_a, ids_b, offsets_b, x):
        return self.fc(torch.cat([self.a(ids_a, offsets_a), self.b(ids_b, offsets_b), x], 1))


class Dlrm(torch.nn.Module):
    """facebookresearch/dlrm's DLRM_Net, small: a bottom MLP on the dense
    features, three bags, their pairwise dot products (torch.bmm, then
    Z[:, li, lj] with constant index tensors: GatherND from the dynamo
    exporter), a top MLP."""
    inputs = ("ids_a", "offsets_a", "ids_b", "offsets_b", "ids_c", "offsets_c", "x")

    def __init__(self):
        super().__init__()
        self.bottom = torch.nn.Sequential(torch.nn.Linear(3, 6), torch.nn.ReLU())
        self.bags = torch.nn.ModuleList(torch.nn.EmbeddingBag(40, 6, mode="sum")
                                        for _ in range(3))
        pairs = [(i, j) for i in range(4) for j in range(i)]
        self.register_buffer("li", torch.tensor([i for i, _ in pairs]), persistent=False)
        self.register_buffer("lj", torch.tensor([j for _, j in pairs]), persistent=False)
        self.top = torch.nn.Sequential(torch.nn.Linear(6 + len(pairs), 8), torch.nn.ReLU(),
                                       torch.nn.Linear(8, CLASSES))

    def forward(self, ids_a, offsets_a, ids_b, offsets_b, ids_c, offsets_c, x):
        dense = self.bottom(x)
        bags = [bag(ids, offsets) for bag, ids, offsets in
                zip(self.bags, (ids_a, ids_b, ids_c), (offsets_a, offsets_b, offsets_c))]
        t = torch.cat([dense] + bags, dim=1).view(x.shape[0], -1, 6)
        z = torch.bmm(t, torch.transpose(t, 1, 2))
        return self.top(torch.cat([dense, z[:, self.li, self.lj]], dim=1))


class Last(torch.nn.Module):
    inputs = ("ids", "offsets")

    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(40, 6, mode="mean", include_last_offset=True)
        self.fc = torch.nn.Linear(6, CLASSES)

    def forward(self, ids, offsets):
        return self.fc(self.bag(ids, offsets))


class Weighted(torch.nn.Module):
    inputs = ("ids", "offsets", "w")

    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(40, 6, mode="sum")
        self.fc = torch.nn.Linear(6, CLASSES)

    def forward(self, ids, offsets, w):
        return self.fc(self.bag(ids, offsets, per_sample_weights=w))


class PaddingLast(torch.nn.Module):
    inputs = ("ids", "offsets")

    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(40, 6, mode="mean", padding_idx=0,
                                         include_last_offset=True)
        self.fc = torch.nn.Linear(6, CLASSES)

    def forward(self, ids, offsets):
        return self.fc(self.bag(ids, offsets))


class Fixed(torch.nn.Module):
    """Lists of one length, the offsets a buffer of the model's own (an
    input of ids alone)."""
    inputs = ("ids",)
    own_offsets = True

    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(40, 6, mode="mean")
        self.register_buffer("offsets", torch.arange(0, IDS, LIST), persistent=False)
        self.fc = torch.nn.Linear(6, CLASSES)

    def forward(self, ids):
        return self.fc(self.bag(ids, self.offsets))


class Padding(torch.nn.Module):
    inputs = ("ids", "offsets")

    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(40, 6, mode="sum", padding_idx=0)
        self.fc = torch.nn.Linear(6, CLASSES)

    def forward(self, ids, offsets):
        return self.fc(self.bag(ids, offsets))


# name: (class, seed, exporters)
MODELS = {
    "bags": (Bags, 1, ("opset17", "dynamo")),
    "dlrm": (Dlrm, 7, ("opset17", "dynamo")),
    "last": (Last, 2, ("opset17", "dynamo")),
    "weighted": (Weighted, 3, ("opset17", "dynamo")),
    "padding": (Padding, 4, ("dynamo",)),
    "padding_last": (PaddingLast, 6, ("optimized",)),
    "fixed": (Fixed, 9, ("opset17", "dynamo")),
}
# "optimized": the dynamo exporter's defaults (its graph optimizer on), which
# set the last offset with a ScatterElements.
EXPORTS = dict(layers.EXPORTS, optimized={"dynamo": True})


def table_size(name, list_name):
    return 30 if (name, list_name) == ("bags", "ids_b") else 40


def make_module(name):
    cls, seed, _ = MODELS[name]
    torch.manual_seed(seed)
    return cls().eval()


def batch_inputs(name, examples, include_last):
    """PyTorch's inputs for `examples` ({input: per-example value}): each id
    list concatenated with the offsets where its lists start."""
    inputs = []
    for input_name in MODELS[name][0].inputs:
        if input_name.startswith("ids"):
            lists = examples[input_name]
            inputs.append(torch.from_numpy(np.concatenate(lists).astype(np.int64)))
            if getattr(MODELS[name][0], "own_offsets", False):
                continue
            starts = np.cumsum([0] + [len(ids) for ids in lists])
            offsets = starts if include_last else starts[:-1]
            inputs.append(torch.from_numpy(offsets.astype(np.int64)))
        elif input_name == "w":
            inputs.append(torch.from_numpy(np.concatenate(examples["w"]).astype(np.float32)))
        elif input_name == "x":
            inputs.append(torch.from_numpy(np.stack(examples["x"])))
    return inputs


def make_data(name):
    """(the ragged feed batch, its examples; the training examples)."""
    _, seed, _ = MODELS[name]
    rng = np.random.default_rng(2000 + seed)
    lists = [n for n in MODELS[name][0].inputs if n.startswith("ids")]

    def examples(lengths_of):
        data = {}
        for list_name in lists:
            lengths = lengths_of()
            data[list_name] = [rng.integers(0, table_size(name, list_name), n) for n in lengths]
        data["w"] = [rng.uniform(0.5, 1.5, len(ids)).astype(np.float32)
                     for ids in data[lists[0]]]
        count = len(data[lists[0]])
        data["x"] = [rng.uniform(-1, 1, 3).astype(np.float32) for _ in range(count)]
        data["label"] = rng.integers(0, CLASSES, count).astype(np.int32)
        return data

    # The feed: lists of 9, 0, 11 and 0 ids (20 in all; two empty bags).
    if getattr(MODELS[name][0], "own_offsets", False):
        feed = examples(lambda: [LIST] * BATCH)
        train = examples(lambda: [LIST] * ROWS)
    else:
        feed = examples(lambda: [9, 0, 11, 0])
        train = examples(lambda: rng.integers(0, LIST + 1, ROWS))
    if name.startswith("padding"):
        # Some padding_idx ids among the others.
        for data in (feed, train):
            for ids in data["ids"]:
                ids[::3] = 0
    return feed, train


def training_arrays(name, train):
    """MODEL.npz: each id list ragged (NAME.values, NAME.row_splits), or as
    [rows, LIST] where every list has LIST ids, the weights padded to LIST
    per example, x and label."""
    arrays = {}
    for input_name in MODELS[name][0].inputs:
        if input_name.startswith("ids") and getattr(MODELS[name][0], "own_offsets", False):
            arrays[input_name] = np.stack(train[input_name]).astype(np.int64)
        elif input_name.startswith("ids"):
            lists = train[input_name]
            arrays[input_name + ".values"] = np.concatenate(lists).astype(np.int64)
            arrays[input_name + ".row_splits"] = np.cumsum(
                [0] + [len(ids) for ids in lists]).astype(np.int64)
        elif input_name == "w":
            padded = np.zeros([ROWS, LIST], np.float32)
            for row, weights in enumerate(train["w"]):
                padded[row, :len(weights)] = weights
            arrays["w"] = padded
        elif input_name == "x":
            arrays["x"] = np.stack(train["x"])
    arrays["label"] = train["label"]
    return arrays


def torch_losses(name, module, train, optimizer, dtype):
    module = copy.deepcopy(module).to(dtype).eval()
    opt = layers.make_optimizer(module, optimizer)
    include_last = name in ("last", "padding_last")
    losses = []
    for step in range(STEPS):
        rows = range(step * BATCH, (step + 1) * BATCH)
        examples = {key: [values[r] for r in rows] for key, values in train.items()}
        inputs = [t.to(dtype) if t.is_floating_point() else t
                  for t in batch_inputs(name, examples, include_last)]
        logits = module(*inputs)
        loss = F.cross_entropy(logits, torch.from_numpy(train["label"][list(rows)]).long())
        losses.append(loss.item())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return losses


# --- Bad files ------------------------------------------------------------------


def make_bad_files():
    """bad_*.onnx: each one defect kilnc reports in one line (errors-loops.test):
    a Loop that is no EmbeddingBag, mode 'max' from both exporters, a bag
    loop whose offsets are too short or whose bags do not meet, an If on a
    run-time condition, an If of the wrong output count, a subgraph reading a
    name nothing makes, a Loop without its body, ConcatFromSequence of an
    empty sequence and without an axis."""
    from onnx import TensorProto, helper
    from make_onnx_fixtures import ints, model, value

    def save(m, filename):
        write("bad_%s.onnx" % filename, m.SerializeToString(deterministic=True))

    # A counter summed over 3 iterations: no rows reduced.
    body = helper.make_graph(
        [helper.make_node("Add", ["sum_in", "i"], ["sum_out"], name="add"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep")],
        "body", [value("i", TensorProto.INT64, []), value("cond_in", TensorProto.BOOL, []),
                 value("sum_in", TensorProto.INT64, [])],
        [value("cond_out", TensorProto.BOOL, []), value("sum_out", TensorProto.INT64, [])])
    save(model("loop_counter", [helper.make_node("Loop", ["trips", "", "zero"], ["total"],
                                                 name="loop", body=body)],
               [value("x", TensorProto.FLOAT, [2])], [value("total", TensorProto.INT64, [])],
               [ints("trips", 3), ints("zero", 0)], opset=17), "loop_not_bag")
    save(model("loop_no_body", [helper.make_node("Loop", ["trips", ""], ["y"], name="loop")],
               [value("x", TensorProto.FLOAT, [2])], [value("y", TensorProto.FLOAT, [2])],
               [ints("trips", 3)], opset=17, check=False), "loop_no_body")

    # An If on a graph input, and one whose branch has two outputs for one.
    then_branch = helper.make_graph([helper.make_node("Neg", ["x"], ["t"], name="neg")],
                                    "then", [], [value("t", TensorProto.FLOAT, [2])])
    else_branch = helper.make_graph([helper.make_node("Abs", ["x"], ["e"], name="abs")],
                                    "else", [], [value("e", TensorProto.FLOAT, [2])])
    save(model("if_runtime", [helper.make_node("If", ["flag"], ["y"], name="choose",
                                               then_branch=then_branch,
                                               else_branch=else_branch)],
               [value("x", TensorProto.FLOAT, [2]), value("flag", TensorProto.BOOL, [])],
               [value("y", TensorProto.FLOAT, [2])], opset=17), "if_runtime")
    two = helper.make_graph([helper.make_node("Neg", ["x"], ["t"], name="neg"),
                             helper.make_node("Abs", ["x"], ["u"], name="abs")],
                            "then", [], [value("t", TensorProto.FLOAT, [2]),
                                         value("u", TensorProto.FLOAT, [2])])
    save(model("if_outputs", [
        helper.make_node("Constant", [], ["yes"], name="yes", value_int=1),
        helper.make_node("Cast", ["yes"], ["flag"], name="flag", to=TensorProto.BOOL),
        helper.make_node("If", ["flag"], ["y"], name="choose", then_branch=two,
                         else_branch=else_branch)],
        [value("x", TensorProto.FLOAT, [2])], [value("y", TensorProto.FLOAT, [2])], opset=17,
        check=False), "if_outputs")
    stray = helper.make_graph([helper.make_node("Add", ["x", "nowhere"], ["t"], name="add")],
                              "then", [], [value("t", TensorProto.FLOAT, [2])])
    save(model("if_stray", [
        helper.make_node("Constant", [], ["flag"], name="flag",
                         value=helper.make_tensor("v", TensorProto.BOOL, [], [True])),
        helper.make_node("If", ["flag"], ["y"], name="choose", then_branch=stray,
                         else_branch=else_branch)],
        [value("x", TensorProto.FLOAT, [2])], [value("y", TensorProto.FLOAT, [2])], opset=17,
        check=False), "subgraph_reads_nothing")

    # Sequences: ConcatFromSequence of an empty one, and without its axis.
    save(model("empty_sequence", [
        helper.make_node("SequenceEmpty", [], ["parts"], name="empty"),
        helper.make_node("ConcatFromSequence", ["parts"], ["y"], name="join", axis=0)],
        [value("x", TensorProto.FLOAT, [2])], [value("y", TensorProto.FLOAT, [2])],
        opset=17, check=False), "concat_empty_sequence")
    save(model("no_axis", [
        helper.make_node("SplitToSequence", ["x"], ["parts"], name="split"),
        helper.make_node("ConcatFromSequence", ["parts"], ["y"], name="join")],
        [value("x", TensorProto.FLOAT, [2])], [value("y", TensorProto.FLOAT, [2])],
        opset=17, check=False), "concat_sequence_no_axis")

    # mode='max', as both exporters write it.
    torch.manual_seed(5)
    bag = torch.nn.EmbeddingBag(40, 6, mode="max").eval()
    ids = torch.arange(20) % 40
    offsets = torch.tensor([0, 5, 10, 15])
    module = type("MaxBag", (torch.nn.Module,), {
        "inputs": ("ids", "offsets"), "forward": lambda self, i, o: self.bag(i, o)})()
    module.bag = bag
    for suffix, options in EXPORTS.items():
        m = layers.export_tidy(module, [ids, offsets], module.inputs, options)
        save(m, "bag_max_" + suffix)

    # Training data: an example of 7 ids where the model takes 5 per example,
    # and per-sample weights not padded to 5 per example.
    _, train = make_data("weighted")
    arrays = training_arrays("weighted", train)
    lengths = np.diff(arrays["ids.row_splits"])
    splits = arrays["ids.row_splits"].copy()
    splits[3:] += 7 - lengths[2]
    values = np.concatenate([arrays["ids.values"][:splits[2]], np.arange(7),
                             arrays["ids.values"][arrays["ids.row_splits"][3]:]])
    layers.write_npz("bad_long_list.npz", dict(arrays, **{"ids.values": values,
                                                          "ids.row_splits": splits}))
    layers.write_npz("bad_weights_shape.npz", dict(arrays, w=np.ones(ROWS, np.float32)))

    # ScatterElements at run-time indices, and with a reduction.
    scatter_inputs = [value("x", TensorProto.FLOAT, [4]), value("at", TensorProto.INT64, [2]),
                      value("u", TensorProto.FLOAT, [2])]
    save(model("scatter_runtime", [helper.make_node("ScatterElements", ["x", "at", "u"], ["y"],
                                                    name="scatter")],
               scatter_inputs, [value("y", TensorProto.FLOAT, [4])], opset=17),
         "scatter_runtime_indices")
    save(model("scatter_add", [helper.make_node("ScatterElements", ["x", "where", "u"], ["y"],
                                                name="scatter", reduction="add")],
               [scatter_inputs[0], scatter_inputs[2]], [value("y", TensorProto.FLOAT, [4])],
               [ints("where", [1, 3])], opset=17), "scatter_reduction")

    # A Loop whose body takes fewer inputs than it carries values; an If
    # whose branch declares an input.
    short_body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
         helper.make_node("Identity", ["i"], ["sum_out"], name="count")],
        "body", [value("i", TensorProto.INT64, []), value("cond_in", TensorProto.BOOL, [])],
        [value("cond_out", TensorProto.BOOL, []), value("sum_out", TensorProto.INT64, [])])
    save(model("loop_short", [helper.make_node("Loop", ["trips", "", "zero"], ["total"],
                                               name="loop", body=short_body)],
               [value("x", TensorProto.FLOAT, [2])], [value("total", TensorProto.INT64, [])],
               [ints("trips", 3), ints("zero", 0)], opset=17, check=False), "loop_body_inputs")
    with_input = helper.make_graph([helper.make_node("Neg", ["z"], ["t"], name="neg")], "then",
                                   [value("z", TensorProto.FLOAT, [2])],
                                   [value("t", TensorProto.FLOAT, [2])])
    save(model("if_input", [
        helper.make_node("Constant", [], ["flag"], name="flag",
                         value=helper.make_tensor("v", TensorProto.BOOL, [], [True])),
        helper.make_node("If", ["flag"], ["y"], name="choose", then_branch=with_input,
                         else_branch=else_branch)],
        [value("x", TensorProto.FLOAT, [2])], [value("y", TensorProto.FLOAT, [2])], opset=17,
        check=False), "if_branch_inputs")

    # Real bag loops that compute something else: the TorchScript export of
    # `last` with a Relu on its scan output, and the dynamo export inserting
    # each row at the sequence's front.
    m = onnx.load(os.path.join(OUT, "last_opset17.onnx"))
    body = next(n for n in m.graph.node if n.op_type == "Loop").attribute[0].g
    row = body.output[1].name
    body.node.append(helper.make_node("Relu", [row], [row + "_relu"], name="relu"))
    body.output[1].name = row + "_relu"
    save(m, "bag_scan_output")
    m = onnx.load(os.path.join(OUT, "last_dynamo.onnx"))
    body = next(n for n in m.graph.node if n.op_type == "Loop").attribute[0].g
    insert = next(n for n in body.node if n.op_type == "SequenceInsert")
    body.node.insert(0, helper.make_node("Constant", [], ["front"], name="front",
                                         value=helper.make_tensor("v", TensorProto.INT64, [],
                                                                  [0])))
    insert.input.append("front")
    save(m, "bag_insert_front")

    # TopK: K past the dimension, K given at run time, integer input.
    for filename, k, elem, k_input in (("topk_large", [9], TensorProto.FLOAT, False),
                                       ("topk_runtime_k", None, TensorProto.FLOAT, True),
                                       ("topk_ints", [2], TensorProto.INT64, False)):
        inputs = [value("x", elem, [2, 5])] + ([value("k", TensorProto.INT64, [1])]
                                               if k_input else [])
        save(model(filename, [helper.make_node("TopK", ["x", "k"], ["v", "i"], name="top")],
                   inputs, [value("v", elem, None), value("i", TensorProto.INT64, None)],
                   [] if k_input else [ints("k", k)], opset=17, check=False), filename)

    # TopK without K: no input K (opset 17), no attribute k (opset 9).
    save(model("topk_no_k", [helper.make_node("TopK", ["x"], ["v", "i"], name="top")],
               [value("x", TensorProto.FLOAT, [2, 5])],
               [value("v", TensorProto.FLOAT, None), value("i", TensorProto.INT64, None)],
               opset=17, check=False), "topk_no_k_input")
    save(model("topk_no_k", [helper.make_node("TopK", ["x"], ["v", "i"], name="top")],
               [value("x", TensorProto.FLOAT, [2, 5])],
               [value("v", TensorProto.FLOAT, None), value("i", TensorProto.INT64, None)],
               opset=9, check=False), "topk_no_k_attribute")
    # GatherND from an empty constant.
    empty = helper.make_tensor("empty", TensorProto.FLOAT, [0, 3], [])
    save(model("gathernd_empty", [helper.make_node("GatherND", ["empty", "at"], ["y"],
                                                   name="gather", batch_dims=1)],
               [value("x", TensorProto.FLOAT, [2])], [value("y", TensorProto.FLOAT, None)],
               [empty, numpy_helper.from_array(np.zeros([0, 1], np.int64), "at")], opset=17,
               check=False), "gathernd_empty")

    # Two bags of 5 and 10 ids per example sharing one offsets input: kilnc
    # warns, and training refuses the data (no layout fits both).
    shared = type("SharedOffsets", (torch.nn.Module,), {
        "forward": lambda self, ids_a, ids_b, offsets: self.fc(torch.cat(
            [self.a(ids_a, offsets), self.b(ids_b, offsets)], 1))})()
    torch.manual_seed(8)
    shared.a, shared.b = torch.nn.EmbeddingBag(40, 6), torch.nn.EmbeddingBag(40, 6)
    shared.fc = torch.nn.Linear(12, CLASSES)
    shared.inputs = ("ids_a", "ids_b", "offsets")
    m = layers.export_tidy(shared.eval(), [torch.arange(20) % 40, torch.arange(40) % 40,
                                           torch.tensor([0, 5, 10, 15])], shared.inputs,
                           EXPORTS["dynamo"])
    save(m, "bag_shared_offsets")
    splits = np.arange(0, 4 * ROWS + 1, 4, dtype=np.int64)
    layers.write_npz("bad_shared_offsets.npz", {
        "ids_a.values": np.arange(4 * ROWS, dtype=np.int64) % 40, "ids_a.row_splits": splits,
        "ids_b.values": np.arange(4 * ROWS, dtype=np.int64) % 40, "ids_b.row_splits": splits,
        "label": np.zeros(ROWS, np.int32)})

    # GatherND: batch dimensions that differ, an index past its dimension,
    # tuples longer than the data's rank.
    data = [value("x", TensorProto.FLOAT, [2, 3, 4])]
    out = [value("y", TensorProto.FLOAT, None)]
    for filename, indices, batch_dims in (("gathernd_batch", [[1], [2], [0]], 1),
                                          ("gathernd_range", [[0, 3]], 0),
                                          ("gathernd_tuple", [[0, 1, 2, 3]], 0)):
        save(model(filename, [helper.make_node("GatherND", ["x", "at"], ["y"], name="gather",
                                               batch_dims=batch_dims)],
                   data, out, [ints("at", indices)], opset=17, check=False), filename)

    # The TorchScript export of `last` with its trip count past the offsets,
    # and with each bag ending at the ids' end rather than the next start.
    m = onnx.load(os.path.join(OUT, "last_opset17.onnx"))
    loop = next(n for n in m.graph.node if n.op_type == "Loop")
    m.graph.initializer.append(ints("nine", 9))
    loop.input[0] = "nine"
    save(m, "bag_trip_count")
    m = onnx.load(os.path.join(OUT, "last_opset17.onnx"))
    loop = next(n for n in m.graph.node if n.op_type == "Loop")
    body = loop.attribute[0].g
    end = next(n for n in body.node if n.op_type == "Gather" and n.input[0] != "offsets")
    end.input[0] = "offsets"
    save(m, "bag_not_contiguous")


def make_if_names():
    """if_names.onnx: two Ifs on constant conditions whose branches name
    their values alike (ONNX scopes a subgraph's names), and a later node
    that reuses one of the names; if_names.reference.npz: onnxruntime's
    output (kiln imported the names into one scope and gave y1 - y2 = 0)."""
    import onnxruntime
    from onnx import TensorProto, helper
    from make_onnx_fixtures import model, value

    def branch(op, graph_name):
        return helper.make_graph([helper.make_node(op, ["x"], ["t"], name=op.lower())],
                                 graph_name, [], [value("t", TensorProto.FLOAT, [3])])

    yes = helper.make_node("Constant", [], ["c"], name="c",
                           value=helper.make_tensor("v", TensorProto.BOOL, [], [True]))
    m = model("if_names", [
        yes,
        helper.make_node("If", ["c"], ["y1"], name="if1", then_branch=branch("Neg", "a"),
                         else_branch=branch("Relu", "b")),
        helper.make_node("If", ["c"], ["y2"], name="if2", then_branch=branch("Abs", "c2"),
                         else_branch=branch("Relu", "d")),
        helper.make_node("Sub", ["y1", "y2"], ["t"], name="sub"),
        helper.make_node("Mul", ["t", "x"], ["y"], name="mul")],
        [value("x", TensorProto.FLOAT, [3])], [value("y", TensorProto.FLOAT, [3])], opset=17)
    write("if_names.onnx", m.SerializeToString(deterministic=True))
    x = np.array([1.0, -2.0, 3.0], np.float32)
    session = onnxruntime.InferenceSession(m.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    layers.write_npz("if_names.reference.npz",
                     {"in.x": x, "out.y": session.run(["y"], {"x": x})[0]})


def make_gathernd():
    """gathernd.onnx: GatherND in four forms — whole tuples (negative indices
    too), tuples naming slices, batch_dims 1, indices fed at run time
    — and gathernd.reference.npz, onnxruntime's outputs."""
    import onnxruntime
    from onnx import TensorProto, helper
    from make_onnx_fixtures import ints, model, value

    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("GatherND", ["a", "pairs"], ["y0"], name="pairs"),
        helper.make_node("GatherND", ["b", "firsts"], ["y1"], name="slices"),
        helper.make_node("GatherND", ["b", "batched"], ["y2"], name="batched", batch_dims=1),
        helper.make_node("GatherND", ["b", "fed"], ["y3"], name="fed")]
    m = model("gathernd", nodes,
              [value("a", f, [3, 4]), value("b", f, [2, 3, 4]),
               value("fed", TensorProto.INT64, [2, 2, 2])],
              [value("y0", f, [3]), value("y1", f, [2, 3, 4]), value("y2", f, [2, 2]),
               value("y3", f, [2, 2, 4])],
              [ints("pairs", [[0, 1], [2, -1], [-3, 2]]), ints("firsts", [[1], [0]]),
               ints("batched", [[[2, 1], [0, 3]], [[1, -1], [2, 0]]])], opset=17)
    write("gathernd.onnx", m.SerializeToString(deterministic=True))
    rng = np.random.default_rng(7)
    feeds = {"a": rng.standard_normal([3, 4]).astype(np.float32),
             "b": rng.standard_normal([2, 3, 4]).astype(np.float32),
             "fed": np.array([[[1, 2], [0, -1]], [[-2, 0], [1, 1]]], np.int64)}
    session = onnxruntime.InferenceSession(m.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    outputs = session.run(["y0", "y1", "y2", "y3"], feeds)
    reference = {"in." + name: array for name, array in feeds.items()}
    reference.update({"out.y%d" % i: array for i, array in enumerate(outputs)})
    layers.write_npz("gathernd.reference.npz", reference)


def make_gathernd_clamp():
    """gathernd_clamp.onnx and .reference.npz: indices fed at run time outside
    their dimensions, clamped into them as kiln.gather clamps (onnxruntime
    refuses them; PyTorch raises), the expected values computed here."""
    from onnx import TensorProto, helper
    from make_onnx_fixtures import model, value

    m = model("gathernd_clamp", [helper.make_node("GatherND", ["a", "at"], ["y"], name="gather")],
              [value("a", TensorProto.FLOAT, [2, 3]), value("at", TensorProto.INT64, [3, 2])],
              [value("y", TensorProto.FLOAT, [3])], opset=17)
    write("gathernd_clamp.onnx", m.SerializeToString(deterministic=True))
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    at = np.array([[0, 5], [1, -7], [9, -1]], np.int64)
    wrapped = np.where(at < 0, at + np.array([2, 3]), at)
    clamped = np.clip(wrapped, 0, np.array([1, 2]))
    layers.write_npz("gathernd_clamp.reference.npz",
                     {"in.a": a, "in.at": at, "out.y": a[clamped[:, 0], clamped[:, 1]]})


def make_topk():
    """topk.onnx: TopK as rankers and gates use it — the 3 largest of rows
    with ties and -inf, the 2 smallest along axis 0, every element of rows
    holding NaN and inf both ways, K=1 — and topk.reference.npz, onnxruntime's
    outputs (ties to the lower index, NaN above every number, as onnx.ai and
    PyTorch order them)."""
    import onnxruntime
    from onnx import TensorProto, helper
    from make_onnx_fixtures import ints, model, value

    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    cases = (("a", "three", 1, -1, [3, 3]), ("b", "two", 0, 0, [2, 3]),
             ("c", "five", 1, 1, [2, 5]), ("c", "five", 0, 1, [2, 5]),
             ("a", "one", 1, -1, [3, 1]))
    nodes, outputs = [], []
    for n, (data, k, largest, axis, shape) in enumerate(cases):
        nodes.append(helper.make_node("TopK", [data, k], ["v%d" % n, "i%d" % n],
                                      name="top%d" % n, largest=largest, axis=axis))
        outputs += [value("v%d" % n, f, shape), value("i%d" % n, i64, shape)]
    m = model("topk", nodes, [value("a", f, [3, 7]), value("b", f, [5, 3]),
                              value("c", f, [2, 5])], outputs,
              [ints("three", [3]), ints("two", [2]), ints("five", [5]), ints("one", [1])],
              opset=17)
    write("topk.onnx", m.SerializeToString(deterministic=True))
    inf, nan = np.inf, np.nan
    feeds = {"a": np.array([[1, 5, 5, 2, 5, 0, -1], [-inf, -inf, 2, -inf, 1, 2, 0],
                            [0.5, -2, 7, 7, -inf, 3, 7]], np.float32),
             "b": np.array([[3, 1, 2], [1, 1, -inf], [0, 4, 2], [3, 0, 2], [1, 9, 8]],
                           np.float32),
             "c": np.array([[1, nan, 3, inf, nan], [-inf, 2, nan, 2, 0]], np.float32)}
    session = onnxruntime.InferenceSession(m.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    names = [o.name for o in m.graph.output]
    reference = {"in." + name: array for name, array in feeds.items()}
    reference.update({"out." + name: array
                      for name, array in zip(names, session.run(names, feeds))})
    layers.write_npz("topk.reference.npz", reference)


def write(filename, data):
    layers.OUT = OUT
    layers.write_file(filename, data)


def main():
    if os.environ.get("PYTHONHASHSEED") != "0":
        # The dynamo exporter orders an If's outputs by a set's iteration.
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    warnings.filterwarnings("ignore")
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(OUT, exist_ok=True)
    layers.OUT = OUT
    noise = []
    for name, (_, _, exporters) in MODELS.items():
        module = make_module(name)
        feed, train = make_data(name)
        inputs = batch_inputs(name, feed, name in ("last", "padding_last"))
        with torch.no_grad():
            output = module(*inputs).numpy()
        assert output.shape == (BATCH, CLASSES), output.shape
        assert inputs[0].shape == (IDS,), inputs[0].shape
        reference = {"in." + n: t.numpy() for n, t in zip(module.inputs, inputs)}
        reference["out.logits"] = output
        layers.write_npz(name + ".reference.npz", reference)
        layers.write_npz(name + ".npz", training_arrays(name, train))
        for optimizer in ("sgd", "adam"):
            layers.write_losses(name, optimizer,
                                torch_losses(name, module, train, optimizer, torch.float64),
                                torch_losses(name, module, train, optimizer, torch.float32),
                                noise)
        # Exported from a batch of the training layout: 5 ids per example.
        example = {key: values[:BATCH] for key, values in train.items()}
        for key in example:
            if key.startswith("ids") or key == "w":
                example[key] = [np.resize(v, LIST) if len(v) else np.ones(LIST, v.dtype)
                                for v in example[key]]
        export_inputs = batch_inputs(name, example, name in ("last", "padding_last"))
        for suffix in exporters:
            m = layers.export_tidy(module, export_inputs, module.inputs, EXPORTS[suffix])
            write("%s_%s.onnx" % (name, suffix), m.SerializeToString(deterministic=True))
            ops = sorted({n.op_type for n in m.graph.node})
            print("%s_%s.onnx: %s" % (name, suffix, ", ".join(ops)))
    make_bad_files()
    make_if_names()
    make_gathernd()
    make_gathernd_clamp()
    make_topk()
    layers.print_noise(noise)
    return 0


if __name__ == "__main__":
    sys.exit(main())
