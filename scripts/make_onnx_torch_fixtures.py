#!/usr/bin/env python3
"""The ONNX fixtures exported from PyTorch modules by torch.onnx.export (both
exporters), with PyTorch's outputs: an MLP, an embedding classifier, external
data, a merged and a tied parameter, torch.chunk, folded attention,
torch.split with sizes, causal attention, nearest upsampling (with the
Resize files kiln refuses beside it). torch's exports differ between its
versions: rerun one function at a time when adding a model, e.g.

    /work/venv/bin/python -c "import sys; sys.path.insert(0, 'scripts'); \\
        import make_onnx_torch_fixtures as m; m.make_torch_upsample()"

Part of scripts/make_onnx_fixtures.py (its helpers, its main).
"""

import contextlib
import io
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from make_onnx_fixtures import (FLOAT, IR_VERSION, OUT, ints, model, rng, save, scalar, value,
                                write_bytes)


def tidy_torch_export(m, keep_fx_nodes=False):
    """What torch.onnx.export wrote, made the same across versions and
    machines: IR version 8 at most (Debian's libonnx reads it), no version
    string, no node or value metadata (stack traces hold this script's path
    and lines) but, with `keep_fx_nodes`, each node's torch.fx node (which
    parameters its op reads), and no node doc strings."""
    m.ir_version = min(m.ir_version, IR_VERSION)
    m.producer_version = "torch"
    tidy_graph(m.graph, keep_fx_nodes)


def tidy_graph(graph, keep_fx_nodes):
    """tidy_torch_export for one graph and the subgraphs of its nodes (a
    Loop's body, an If's branches)."""
    for node in graph.node:
        kept = [(p.key, p.value) for p in node.metadata_props
                if keep_fx_nodes and p.key == "pkg.torch.onnx.fx_node"]
        node.ClearField("metadata_props")
        node.ClearField("doc_string")
        for key, text in kept:
            node.metadata_props.add(key=key, value=text)
        for attribute in node.attribute:
            if attribute.HasField("g"):
                tidy_graph(attribute.g, keep_fx_nodes)
            for subgraph in attribute.graphs:
                tidy_graph(subgraph, keep_fx_nodes)
    for info in list(graph.input) + list(graph.output) + list(graph.value_info):
        info.ClearField("metadata_props")


def save_framework_run(model, name, feed_name, feed, fetch_name):
    """Writes what PyTorch computes for `feed`, as <name>.<feed_name>.npy and
    <name>.<fetch_name>.npy: the numerics tests run the exported model on the
    same input and compare."""
    import torch

    with torch.no_grad():
        out = model(feed)
    np.save(os.path.join(OUT, f"{name}.{feed_name}.npy"), feed.numpy())
    np.save(os.path.join(OUT, f"{name}.{fetch_name}.npy"), out.numpy())


def make_torch_mlp():
    """An MLP exported by torch.onnx.export (the TorchScript exporter)."""
    import torch

    torch.manual_seed(0)

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(8, 16)
            self.norm = torch.nn.LayerNorm(16)
            self.fc2 = torch.nn.Linear(16, 4)

        def forward(self, x):
            h = torch.relu(self.fc1(x))
            return torch.softmax(self.fc2(self.norm(h)), dim=-1)

    model = MLP().eval()
    save_framework_run(model, "torch_mlp", "features", torch.randn(5, 8), "probs")
    path = os.path.join(OUT, "torch_mlp.onnx")
    torch.onnx.export(model, (torch.randn(2, 8),), path,
                      input_names=["features"], output_names=["probs"],
                      dynamic_axes={"features": {0: "batch"},
                                    "probs": {0: "batch"}},
                      opset_version=17, dynamo=False)
    m = onnx.load(path)
    m.ir_version = min(m.ir_version, IR_VERSION)
    m.producer_version = "torch"  # keep the file identical across versions
    onnx.checker.check_model(m, full_check=True)
    save(m, "torch_mlp.onnx")


def make_torch_dynamo():
    """An embedding bag and a classifier exported by the torch.export-based
    exporter (torch's default; needs onnxscript): opset 18, axes and shapes
    as initializers."""
    import torch

    torch.manual_seed(0)

    class Classifier(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(10, 8)
            self.fc = torch.nn.Linear(8, 4)

        def forward(self, ids):
            return torch.softmax(self.fc(self.emb(ids).mean(dim=1)), dim=-1)

    model = Classifier().eval()
    save_framework_run(model, "torch_dynamo", "ids", torch.randint(0, 10, (2, 3)), "probs")
    path = os.path.join(OUT, "torch_dynamo.onnx")
    with contextlib.redirect_stdout(io.StringIO()):  # progress lines
        torch.onnx.export(model, (torch.randint(0, 10, (2, 3)),),
                          path, input_names=["ids"], output_names=["probs"],
                          opset_version=18, dynamo=True, external_data=False)
    m = onnx.load(path)
    m.ir_version = min(m.ir_version, IR_VERSION)
    m.producer_version = "torch"
    # Node metadata holds stack traces with this script's path and lines.
    for node in m.graph.node:
        node.ClearField("metadata_props")
        node.ClearField("doc_string")
    for info in list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info):
        info.ClearField("metadata_props")
    onnx.checker.check_model(m, full_check=True)
    save(m, "torch_dynamo.onnx")


def make_torch_chunk():
    """A GLU (torch.chunk, then a * sigmoid(b)) exported by the TorchScript
    exporter, whose chunk bounds are shape arithmetic ending in a multiply
    by 1 (Shape, Gather, Add, Div, Mul, Slice), with PyTorch's output."""
    import torch

    torch.manual_seed(3)

    class Glu(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 8)

        def forward(self, x):
            a, b = torch.chunk(self.fc(x), 2, dim=-1)
            return a * torch.sigmoid(b)

    model = Glu().eval()
    save_framework_run(model, "torch_chunk", "x", torch.randn(4, 8), "y")
    path = os.path.join(OUT, "torch_chunk.onnx")
    torch.onnx.export(model, (torch.randn(4, 8),), path, input_names=["x"],
                      output_names=["y"], opset_version=17, dynamo=False)
    m = onnx.load(path)
    m.ir_version = min(m.ir_version, IR_VERSION)
    m.producer_version = "torch"
    for node in m.graph.node:
        node.ClearField("doc_string")
    assert any(n.op_type == "Mul" for n in m.graph.node), "the bounds no longer multiply"
    onnx.checker.check_model(m, full_check=True)
    save(m, "torch_chunk.onnx")


def make_torch_folded_attention():
    """A causal nn.MultiheadAttention exported by the TorchScript exporter
    with its default constant folding: the bool mask buffer becomes a float
    initializer of 0 and -inf ('onnx::Add_N'), and the input projection's
    weight a folded, transposed 'onnx::MatMul_N'."""
    import torch

    torch.manual_seed(4)

    class CausalAttention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = torch.nn.MultiheadAttention(16, 2, batch_first=True)
            self.fc = torch.nn.Linear(16, 3)
            self.register_buffer("mask", torch.triu(torch.ones(4, 4, dtype=torch.bool), 1))

        def forward(self, x):
            y = self.attn(x, x, x, attn_mask=self.mask, need_weights=False)[0]
            return self.fc(y[:, -1])

    path = os.path.join(OUT, "torch_folded_attention.onnx")
    torch.onnx.export(CausalAttention().eval(), (torch.zeros(2, 4, 16),), path,
                      input_names=["x"], output_names=["logits"], opset_version=17,
                      dynamo=False)
    m = onnx.load(path)
    m.ir_version = min(m.ir_version, IR_VERSION)
    m.producer_version = "torch"
    for node in m.graph.node:
        node.ClearField("doc_string")
    names = [i.name for i in m.graph.initializer]
    assert any(n.startswith("onnx::MatMul") for n in names), names
    assert any(n.startswith("onnx::Add") for n in names), names
    onnx.checker.check_model(m, full_check=True)
    save(m, "torch_folded_attention.onnx")


def make_torch_split_sequence():
    """torch.split with sizes, exported by the dynamo exporter with
    optimize=False (the form a model to be trained is exported in):
    SplitToSequence and SequenceAt, with PyTorch's output. Also two models
    that misuse a sequence: read by another op, and an out-of-range
    position."""
    import torch

    torch.manual_seed(5)

    class SplitHeads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(6, 4)

        def forward(self, x):
            a, b = torch.split(x, [2, 4], dim=1)
            return self.fc(torch.cat([b, a], dim=1))

    module = SplitHeads().eval()
    save_framework_run(module, "torch_split_sequence", "x", torch.randn(3, 6), "y")
    path = os.path.join(OUT, "torch_split_sequence.onnx")
    with contextlib.redirect_stdout(io.StringIO()):  # progress lines
        torch.onnx.export(module, (torch.randn(3, 6),), path, input_names=["x"],
                          output_names=["y"], dynamo=True, optimize=False, external_data=False)
    m = onnx.load(path)
    tidy_torch_export(m)
    assert any(n.op_type == "SplitToSequence" for n in m.graph.node), "no SplitToSequence"
    save(m, "torch_split_sequence.onnx")

    split = helper.make_node("SplitToSequence", ["x"], ["parts"], name="split", axis=1)
    relu = helper.make_node("Relu", ["parts"], ["y"], name="relu")
    save(model("sequence_misread", [split, relu], [value("x", FLOAT, [2, 3])],
               [value("y", FLOAT, [2, 1])], opset=13, check=False),
         "sequence_misread.onnx")
    save(model("sequence_output", [split], [value("x", FLOAT, [2, 3])],
               [value("parts", FLOAT, None)], opset=13, check=False),
         "sequence_output.onnx")
    zero = helper.make_node("Split", ["x", "sizes"], ["a", "b"], name="split", axis=1)
    save(model("split_zero", [zero], [value("x", FLOAT, [2, 3])],
               [value("a", FLOAT, None), value("b", FLOAT, None)], [ints("sizes", [0, 3])],
               opset=13, check=False),
         "split_zero.onnx")
    at = helper.make_node("SequenceAt", ["parts", "five"], ["y"], name="at")
    save(model("sequence_position", [split, at], [value("x", FLOAT, [2, 3])],
               [value("y", FLOAT, [2, 1])], [scalar("five", 5, np.int64)], opset=13,
               check=False),
         "sequence_position.onnx")


def make_torch_causal_attention():
    """scaled_dot_product_attention(is_causal=True), exported by the dynamo
    exporter with optimize=False: its mask is a Trilu over ones. With
    PyTorch's output; and a Trilu over a rank-1 input, refused."""
    import torch

    torch.manual_seed(6)

    class CausalSdpa(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = torch.nn.Linear(8, 24)

        def forward(self, x):
            q, k, v = self.qkv(x).reshape(2, 5, 3, 2, 4).permute(2, 0, 3, 1, 4).unbind(0)
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    module = CausalSdpa().eval()
    save_framework_run(module, "torch_causal_attention", "x", torch.randn(2, 5, 8), "y")
    path = os.path.join(OUT, "torch_causal_attention.onnx")
    with contextlib.redirect_stdout(io.StringIO()):  # progress lines
        torch.onnx.export(module, (torch.randn(2, 5, 8),), path, input_names=["x"],
                          output_names=["y"], dynamo=True, optimize=False, external_data=False)
    m = onnx.load(path)
    tidy_torch_export(m)
    assert any(n.op_type == "Trilu" for n in m.graph.node), "no Trilu"
    save(m, "torch_causal_attention.onnx")
    trilu = helper.make_node("Trilu", ["x"], ["y"], name="trilu")
    save(model("trilu_rank1", [trilu], [value("x", FLOAT, [4])], [value("y", FLOAT, [4])],
               opset=14, check=False),
         "trilu_rank1.onnx")


def make_torch_upsample():
    """F.interpolate(scale_factor=2, mode="nearest") after a convolution,
    exported by the TorchScript exporter (opset 17) and by the dynamo
    exporter (optimize=False, opset 18 and its Resize attributes), with
    PyTorch's output; and a bilinear Resize, refused."""
    import torch

    torch.manual_seed(7)

    class Upsample(torch.nn.Module):
        def __init__(self, mode):
            super().__init__()
            self.conv = torch.nn.Conv2d(2, 3, 3, padding=1)
            self.mode = mode

        def forward(self, x):
            y = torch.nn.functional.interpolate(self.conv(x), scale_factor=2, mode=self.mode)
            return y.mean(dim=(2, 3))

    module = Upsample("nearest").eval()
    x = torch.randn(2, 2, 4, 5)
    save_framework_run(module, "torch_upsample", "x", x, "y")
    for suffix, options in (("", {"opset_version": 17, "dynamo": False}),
                            ("_dynamo", {"dynamo": True, "optimize": False})):
        path = os.path.join(OUT, "torch_upsample%s.onnx" % suffix)
        with contextlib.redirect_stdout(io.StringIO()):  # progress lines
            torch.onnx.export(module, (x,), path, input_names=["x"], output_names=["y"],
                              external_data=False, **options)
        m = onnx.load(path)
        tidy_torch_export(m)
        assert any(n.op_type == "Resize" for n in m.graph.node), "no Resize"
        save(m, "torch_upsample%s.onnx" % suffix)
    # Opset 10's Resize: (X, scales), nearest reading floor(i / scale); the
    # reference repeats each element as numpy does.
    old = helper.make_node("Resize", ["x", "scales"], ["y"], name="resize", mode="nearest")
    save(model("resize_opset10", [old], [value("x", FLOAT, [1, 2, 2, 3])],
               [value("y", FLOAT, [1, 2, 4, 9])],
               [numpy_helper.from_array(np.array([1, 1, 2, 3], np.float32), "scales")],
               opset=10),
         "resize_opset10.onnx")
    xs = rng(41).uniform(-1, 1, (1, 2, 2, 3)).astype(np.float32)
    buffer = io.BytesIO()
    np.savez(buffer, **{"in.x": xs, "out.y": xs.repeat(2, axis=2).repeat(3, axis=3)})
    write_bytes("resize_opset10.reference.npz", buffer.getvalue())
    def resize_model(filename, attrs, inits, inputs=("x", "", "scales")):
        node = helper.make_node("Resize", list(inputs), ["y"], name="resize", **attrs)
        save(model(filename, [node], [value("x", FLOAT, [1, 1, 4, 4])],
                   [value("y", FLOAT, None)], inits, opset=13, check=False),
             filename + ".onnx")

    scales = lambda v: numpy_helper.from_array(np.array(v, np.float32), "scales")
    resize_model("resize_bogus_mode", {"coordinate_transformation_mode": "bogus"},
                 [scales([1, 1, 2, 2])])
    resize_model("resize_huge", {}, [ints("sizes", [1, 1, 4, 4 << 40])],
                 inputs=("x", "", "", "sizes"))
    resize_model("resize_area", {"mode": "area"}, [scales([1, 1, 2, 2])])
    resize_model("resize_antialias", {"mode": "linear", "antialias": 1},
                 [scales([1, 1, 0.5, 0.5])])
    resize_model("resize_scale_overflow", {"mode": "linear"}, [scales([1, 1, 1e30, 1])])
    resize_model("resize_table", {"mode": "nearest"}, [ints("sizes", [1, 1, 4, (1 << 21) + 1])],
                 inputs=("x", "", "", "sizes"))


def make_torch_tied():
    """An embedding whose weight the output layer shares (head.weight =
    emb.weight), exported with optimize=False: one initializer, which every
    op's torch.fx node reads; the other parameter is a tie, not a loss.
    Only each node's torch.fx node is kept of its metadata."""
    import torch

    torch.manual_seed(8)

    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(10, 8)
            self.head = torch.nn.Linear(8, 10, bias=False)
            self.head.weight = self.emb.weight

        def forward(self, ids):
            return self.head(self.emb(ids).mean(1))

    path = os.path.join(OUT, "torch_tied.onnx")
    with contextlib.redirect_stdout(io.StringIO()):  # progress lines
        torch.onnx.export(Tied().eval(), (torch.zeros(2, 3, dtype=torch.int64),), path,
                          input_names=["ids"], output_names=["logits"], dynamo=True,
                          optimize=False, external_data=False)
    m = onnx.load(path)
    tidy_torch_export(m, keep_fx_nodes=True)
    assert len(m.graph.initializer) == 1, [i.name for i in m.graph.initializer]
    save(m, "torch_tied.onnx")


def make_torch_merged_parameter():
    """What torch's default exporter (dynamo=True, its graph optimizer on)
    writes for a LayerNorm without weight beside one with weight ones: the
    first's constant ones replaced by the second's parameter, which training
    would then update through both. Only each node's torch.fx node is kept
    of its metadata (the rest holds this script's stack traces)."""
    import torch

    torch.manual_seed(2)

    class TwoNorms(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = torch.nn.Linear(16, 32), torch.nn.Linear(32, 4)
            self.ln = torch.nn.LayerNorm(32, elementwise_affine=False)
            self.ln2 = torch.nn.LayerNorm(32, bias=False)

        def forward(self, x):
            return self.fc2(self.ln2(torch.tanh(self.ln(self.fc1(x)))))

    path = os.path.join(OUT, "torch_merged_parameter.onnx")
    with contextlib.redirect_stdout(io.StringIO()):  # progress lines
        torch.onnx.export(TwoNorms().eval(), (torch.zeros(8, 16),), path, input_names=["x"],
                          output_names=["logits"], dynamo=True, external_data=False)
    m = onnx.load(path)
    tidy_torch_export(m, keep_fx_nodes=True)
    norms = [n for n in m.graph.node if n.op_type == "LayerNormalization"]
    assert [n.input[1] for n in norms] == ["ln2.weight"] * 2, "the exporter no longer merges"
    save(m, "torch_merged_parameter.onnx")


def make_torch_external_data():
    """A model the dynamo exporter writes with its weights in an external
    file beside it (external_data=True): torch_external.onnx and
    torch_external.onnx.data, with PyTorch's output on a seeded input in
    torch_external.reference.npz."""
    import tempfile
    import torch

    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 4)).eval()
    x = torch.from_numpy(rng(40).uniform(-1, 1, (3, 16)).astype(np.float32))
    with torch.no_grad():
        y = model(x).numpy()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "torch_external.onnx")
        with contextlib.redirect_stdout(io.StringIO()):
            torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"],
                              dynamo=True, optimize=False, external_data=True)
        m = onnx.load(path, load_external_data=False)
        assert any(t.data_location == TensorProto.EXTERNAL for t in m.graph.initializer)
        m.producer_version = "torch"
        for node in m.graph.node:
            node.ClearField("metadata_props")
        m.graph.ClearField("metadata_props")
        write_bytes("torch_external.onnx", m.SerializeToString())
        with open(path + ".data", "rb") as f:
            write_bytes("torch_external.onnx.data", f.read())
    buffer = io.BytesIO()
    np.savez(buffer, **{"in.x": x.numpy(), "out.y": y})
    write_bytes("torch_external.reference.npz", buffer.getvalue())


MAKERS = (make_torch_mlp, make_torch_dynamo, make_torch_external_data,
          make_torch_merged_parameter, make_torch_chunk, make_torch_folded_attention,
          make_torch_split_sequence, make_torch_causal_attention, make_torch_upsample,
          make_torch_tied)
