#!/usr/bin/env python3
"""Writes the ONNX fixtures of the importer's lit tests to test/Inputs/onnx/.

Run from the repository root with a Python that has onnx, numpy, torch and
onnxscript (for torch's default exporter):

    /work/venv/bin/python scripts/make_onnx_fixtures.py

Every model is small, built with onnx.helper at an explicit low opset and
IR version 8 (Debian's libonnx 1.12 reads them), and deterministic: random
values come from fixed seeds. One model is exported from a PyTorch module.
The lit tests read the committed files; they never run Python.
"""

import contextlib
import io
import os
import sys
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join("test", "Inputs", "onnx")
IR_VERSION = 8
FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64


def rng(seed):
    return np.random.default_rng(seed)


def weights(name, shape, seed):
    data = rng(seed).standard_normal(shape).astype(np.float32)
    return numpy_helper.from_array(data, name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def value(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def model(name, nodes, inputs, outputs, initializers=(), opset=13, check=True):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          ir_version=IR_VERSION, producer_name="make_onnx_fixtures")
    if check:
        onnx.checker.check_model(m, full_check=True)
    return m


def save(m, filename):
    write_bytes(filename, m.SerializeToString())


def write_bytes(filename, data):
    path = os.path.join(OUT, filename)
    with open(path, "wb") as f:
        f.write(data)
    assert len(data) < 100 * 1024, f"{filename} is {len(data)} bytes"


# ---------------------------------------------------------------------------
# Models the importer accepts, one per op family
# ---------------------------------------------------------------------------

def make_gemm():
    nodes = [
        helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="fc",
                         alpha=0.5, beta=2.0, transB=1),
        helper.make_node("Gemm", ["y", "w2"], ["z"], name="plain"),
    ]
    save(model("gemm", nodes, [value("x", FLOAT, [4, 3])],
               [value("y", FLOAT, [4, 5]), value("z", FLOAT, [4, 2])],
               [weights("w", [5, 3], 1), weights("c", [5], 2),
                weights("w2", [5, 2], 3)]),
         "gemm.onnx")


def make_matmul():
    nodes = [
        helper.make_node("MatMul", ["a2", "b2"], ["mm"], name="mm"),
        helper.make_node("MatMul", ["v", "b2"], ["vm"], name="vec_mat"),
        helper.make_node("MatMul", ["a2", "u"], ["mv"], name="mat_vec"),
        helper.make_node("MatMul", ["a4", "b3"], ["bb"], name="batch_bcast"),
        helper.make_node("MatMul", ["a3", "b2"], ["sm"], name="shared_rhs"),
        helper.make_node("MatMul", ["a2", "b3"], ["ml"], name="matrix_lhs"),
    ]
    inputs = [value("a2", FLOAT, [2, 3]), value("b2", FLOAT, [3, 4]),
              value("v", FLOAT, [3]), value("u", FLOAT, [3]),
              value("a4", FLOAT, [2, 1, 2, 3]), value("b3", FLOAT, [5, 3, 4]),
              value("a3", FLOAT, [6, 2, 3])]
    outputs = [value("mm", FLOAT, [2, 4]), value("vm", FLOAT, [4]),
               value("mv", FLOAT, [2]), value("bb", FLOAT, [2, 5, 2, 4]),
               value("sm", FLOAT, [6, 2, 4]), value("ml", FLOAT, [5, 2, 4])]
    save(model("matmul", nodes, inputs, outputs), "matmul.onnx")


def make_elementwise():
    unary = ["Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg"]
    nodes = [
        helper.make_node("Add", ["x", "bias"], ["add"], name="add"),
        helper.make_node("Sub", ["add", "row"], ["sub"], name="sub"),
        helper.make_node("Mul", ["sub", "x"], ["mul"], name="mul"),
        helper.make_node("Div", ["mul", "scalar"], ["div"], name="div"),
        helper.make_node("Max", ["div", "x"], ["max"], name="max"),
        helper.make_node("Min", ["max", "bias"], ["min"], name="min"),
    ]
    prev = "min"
    for op in unary:
        nodes.append(helper.make_node(op, [prev], [op.lower()], name=op.lower()))
        prev = op.lower()
    save(model("elementwise", nodes,
               [value("x", FLOAT, [4, 3]), value("row", FLOAT, [4, 1])],
               [value(prev, FLOAT, [4, 3])],
               [weights("bias", [3], 4),
                numpy_helper.from_array(np.array(2.0, dtype=np.float32), "scalar")]),
         "elementwise.onnx")


def make_compare_where():
    nodes = [
        helper.make_node("Equal", ["a", "b"], ["eq"], name="eq"),
        helper.make_node("Less", ["a", "b"], ["lt"], name="lt"),
        helper.make_node("Greater", ["a", "b"], ["gt"], name="gt"),
        helper.make_node("LessOrEqual", ["a", "b"], ["le"], name="le"),
        helper.make_node("GreaterOrEqual", ["a", "b"], ["ge"], name="ge"),
        helper.make_node("Where", ["lt", "a", "b"], ["sel"], name="where"),
        helper.make_node("Cast", ["gt"], ["gt_f"], name="cast_bool", to=FLOAT),
        helper.make_node("Cast", ["sel"], ["sel_i"], name="cast_int", to=INT64),
        helper.make_node("Cast", ["sel"], ["sel_h"], name="cast_half",
                         to=TensorProto.FLOAT16),
    ]
    save(model("compare_where", nodes,
               [value("a", FLOAT, [2, 3]), value("b", FLOAT, [3])],
               [value("eq", TensorProto.BOOL, [2, 3]),
                value("le", TensorProto.BOOL, [2, 3]),
                value("ge", TensorProto.BOOL, [2, 3]),
                value("gt_f", FLOAT, [2, 3]), value("sel_i", INT64, [2, 3]),
                value("sel_h", TensorProto.FLOAT16, [2, 3])], opset=16),
         "compare_where.onnx")


def make_softmax():
    nodes = [
        helper.make_node("Softmax", ["x"], ["sm"], name="sm_default"),
        helper.make_node("LogSoftmax", ["x"], ["lsm"], name="lsm_axis1", axis=1),
        helper.make_node("Softmax", ["x"], ["smn"], name="sm_neg", axis=-3),
    ]
    outs = [value(n, FLOAT, [2, 3, 4]) for n in ("sm", "lsm", "smn")]
    save(model("softmax", nodes, [value("x", FLOAT, [2, 3, 4])], outs),
         "softmax.onnx")


def make_opset11():
    nodes = [
        helper.make_node("Softmax", ["x"], ["sm"], name="sm_default"),
        helper.make_node("LogSoftmax", ["x"], ["lsm"], name="lsm_last", axis=2),
        helper.make_node("ReduceSum", ["x"], ["rs"], name="rsum",
                         axes=[0, -1], keepdims=0),
        helper.make_node("ReduceMean", ["x"], ["rm"], name="rmean"),
        helper.make_node("Unsqueeze", ["rs"], ["us"], name="unsq", axes=[0, 2]),
        helper.make_node("Squeeze", ["us"], ["sq"], name="sq", axes=[2]),
    ]
    outs = [value("sm", FLOAT, [2, 3, 4]), value("lsm", FLOAT, [2, 3, 4]),
            value("rm", FLOAT, [1, 1, 1]), value("sq", FLOAT, [1, 3])]
    save(model("opset11", nodes, [value("x", FLOAT, [2, 3, 4])], outs, opset=11),
         "opset11.onnx")


def make_reduce():
    nodes = [
        helper.make_node("ReduceSum", ["x", "axes"], ["rs"], name="rsum"),
        helper.make_node("ReduceSum", ["x"], ["all"], name="rsum_all",
                         keepdims=0),
        helper.make_node("ReduceSum", ["x", "empty"], ["noop"], name="rsum_noop",
                         noop_with_empty_axes=1),
        helper.make_node("ReduceMean", ["x"], ["rm"], name="rmean",
                         axes=[-1], keepdims=0),
    ]
    outs = [value("rs", FLOAT, [2, 1, 1]), value("all", FLOAT, []),
            value("noop", FLOAT, [2, 3, 4]), value("rm", FLOAT, [2, 3])]
    save(model("reduce", nodes, [value("x", FLOAT, [2, 3, 4])], outs,
               [ints("axes", [2, 1]), ints("empty", [])]),
         "reduce.onnx")
    nodes = [helper.make_node("ReduceMean", ["x", "axes"], ["rm"], name="rmean")]
    save(model("reduce18", nodes, [value("x", FLOAT, [2, 3, 4])],
               [value("rm", FLOAT, [2, 1, 4])], [ints("axes", [1])], opset=18),
         "reduce_opset18.onnx")


def make_shape_ops():
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape_init"),
        helper.make_node("Constant", [], ["cshape"], name="const_shape",
                         value_ints=[4, -1]),
        helper.make_node("Reshape", ["x", "cshape"], ["rc"], name="reshape_const"),
        helper.make_node("Flatten", ["x"], ["f"], name="flatten", axis=2),
        helper.make_node("Transpose", ["x"], ["t"], name="transpose_default"),
        helper.make_node("Transpose", ["x"], ["tp"], name="transpose_perm",
                         perm=[1, 0, 2]),
        helper.make_node("Concat", ["x", "x"], ["c"], name="concat", axis=-1),
        helper.make_node("Unsqueeze", ["x", "uaxes"], ["u"], name="unsqueeze"),
        helper.make_node("Squeeze", ["u"], ["s"], name="squeeze_all"),
        helper.make_node("Identity", ["s"], ["id"], name="identity"),
        helper.make_node("Expand", ["col", "eshape"], ["e"], name="expand"),
    ]
    outs = [value("r", FLOAT, [4, 3, 2]), value("rc", FLOAT, [4, 6]),
            value("f", FLOAT, [6, 4]), value("t", FLOAT, [4, 3, 2]),
            value("tp", FLOAT, [3, 2, 4]), value("c", FLOAT, [2, 3, 8]),
            value("u", FLOAT, [1, 2, 3, 1, 4]), value("id", FLOAT, [2, 3, 4]),
            value("e", FLOAT, [2, 3, 4])]
    save(model("shape_ops", nodes,
               [value("x", FLOAT, [2, 3, 4]), value("col", FLOAT, [3, 1])], outs,
               [ints("shape", [4, 0, -1]), ints("uaxes", [0, -2]),
                ints("eshape", [2, 1, 4])], opset=14),
         "shape_ops.onnx")


def make_gather():
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["rows"], name="lookup"),
        helper.make_node("Gather", ["x", "picks"], ["cols"], name="pick_cols",
                         axis=-1),
    ]
    save(model("gather", nodes,
               [value("ids", INT64, [2, 3]), value("x", FLOAT, [2, 5])],
               [value("rows", FLOAT, [2, 3, 4]), value("cols", FLOAT, [2, 2])],
               [weights("table", [10, 4], 5), ints("picks", [-1, 0])]),
         "gather.onnx")


def make_layernorm():
    nodes = [helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"],
                              name="ln", epsilon=1e-3)]
    save(model("layernorm", nodes, [value("x", FLOAT, [2, 3, 8])],
               [value("y", FLOAT, [2, 3, 8])],
               [weights("gamma", [8], 6), weights("beta", [8], 7)], opset=17),
         "layernorm.onnx")


def make_constants():
    """Constant nodes, an integer initializer used as data, typed-field and
    16-bit float initializers."""
    # make_tensor stores 16-bit floats as their bits in int32_data.
    half = helper.make_tensor("half", TensorProto.FLOAT16, [2], [1.5, -2.0])
    bf16 = helper.make_tensor("bf16", TensorProto.BFLOAT16, [2], [0.5, 3.0])
    typed_float = helper.make_tensor("typed", FLOAT, [3], [1.0, 2.0, 3.0])
    offsets = helper.make_tensor("offsets", INT64, [3], [10, 20, 30])
    counts = helper.make_tensor("counts", TensorProto.INT32, [3], [7, 8, 9])
    mask = helper.make_tensor("mask", TensorProto.BOOL, [3], [1, 0, 1])
    nodes = [
        helper.make_node("Constant", [], ["k"], name="k", value_float=0.25),
        helper.make_node("Constant", [], ["kt"], name="kt",
                         value=numpy_helper.from_array(
                             np.array([[1, 2, 3]], dtype=np.float32))),
        helper.make_node("Mul", ["x", "k"], ["scaled"], name="scale"),
        helper.make_node("Add", ["scaled", "kt"], ["shifted"], name="shift"),
        helper.make_node("Add", ["shifted", "typed"], ["y"], name="typed_add"),
        helper.make_node("Add", ["ids", "offsets"], ["moved"], name="offset_ids"),
        helper.make_node("Mul", ["n", "counts"], ["nc"], name="count"),
        helper.make_node("Where", ["mask", "x", "y"], ["masked"], name="mask"),
        helper.make_node("Mul", ["h", "half"], ["hh"], name="half_mul"),
        helper.make_node("Mul", ["b", "bf16"], ["bb"], name="bf16_mul"),
    ]
    inputs = [value("x", FLOAT, [2, 3]), value("ids", INT64, [3]),
              value("n", TensorProto.INT32, [3]),
              value("h", TensorProto.FLOAT16, [2]),
              value("b", TensorProto.BFLOAT16, [2])]
    outputs = [value("y", FLOAT, [2, 3]), value("moved", INT64, [3]),
               value("nc", TensorProto.INT32, [3]), value("masked", FLOAT, [2, 3]),
               value("hh", TensorProto.FLOAT16, [2]),
               value("bb", TensorProto.BFLOAT16, [2])]
    save(model("constants", nodes, inputs, outputs,
               [half, bf16, typed_float, offsets, counts, mask]),
         "constants.onnx")


def make_dynamic_dim():
    x = helper.make_tensor_value_info("x", FLOAT, ["batch", 3])
    y = helper.make_tensor_value_info("y", FLOAT, ["batch", 2])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")]
    save(model("dynamic", nodes, [x], [y], [weights("w", [3, 2], 8)]),
         "dynamic_dim.onnx")


def make_external_data():
    """`w` lives in external_data.bin at offset 16; `b` at its end."""
    w = rng(9).standard_normal([3, 2]).astype(np.float32)
    b = np.array([0.5, -0.5], dtype=np.float32)
    blob = b"\x00" * 16 + w.tobytes() + b.tobytes()
    write_bytes("external_data.bin", blob)

    def external(name, dims, offset, length):
        t = TensorProto(name=name, data_type=FLOAT, dims=dims,
                        data_location=TensorProto.EXTERNAL)
        for key, val in (("location", "external_data.bin"),
                         ("offset", str(offset)), ("length", str(length))):
            entry = t.external_data.add()
            entry.key, entry.value = key, val
        return t

    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc")]
    save(model("external", nodes, [value("x", FLOAT, [4, 3])],
               [value("y", FLOAT, [4, 2])],
               [external("w", [3, 2], 16, 24), external("b", [2], 40, 8)],
               check=False),
         "external_data.onnx")


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


# ---------------------------------------------------------------------------
# Models the importer refuses, each with one defect
# ---------------------------------------------------------------------------

def add_model(nodes=None, inputs=None, outputs=None, initializers=(), **kwargs):
    """x + w with the given parts replaced."""
    nodes = nodes or [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    inputs = inputs or [value("x", FLOAT, [2, 3])]
    outputs = outputs or [value("y", FLOAT, [2, 3])]
    initializers = initializers or [weights("w", [2, 3], 10)]
    return model("bad", nodes, inputs, outputs, initializers, check=False,
                 **kwargs)


def make_bad_files():
    write_bytes("empty.onnx", b"")
    valid = add_model().SerializeToString()
    write_bytes("truncated.onnx", valid[: len(valid) - 7])
    # 0xff starts a field with an invalid wire type, so no parser takes it.
    write_bytes("random.onnx", b"\xff" + rng(11).bytes(255))
    m = onnx.ModelProto(ir_version=IR_VERSION)
    m.opset_import.add(domain="", version=13)
    save(m, "no_graph.onnx")


def make_bad_graphs():
    save(add_model(nodes=[helper.make_node("Einsum", ["x"], ["y"], name="einsum",
                                           equation="ij->ij")]),
         "unsupported_op.onnx")
    save(add_model(nodes=[helper.make_node("Add", ["x", "w", "x"], ["y"],
                                           name="add3")]),
         "wrong_input_count.onnx")
    save(add_model(nodes=[helper.make_node("MatMul", ["x", "w"], ["y"],
                                           name="mm")],
                   initializers=[weights("w", [4, 5], 12)]),
         "matmul_mismatch.onnx")
    bad = weights("w", [2, 3], 13)
    bad.raw_data = bad.raw_data[:20]
    save(add_model(initializers=[bad]), "bad_raw_data.onnx")
    save(add_model(initializers=[numpy_helper.from_array(
        np.ones([2, 3], dtype=np.float64), "w")]), "unsupported_dtype.onnx")
    save(add_model(outputs=[value("y", FLOAT, [2, 3]), value("z", FLOAT, [2, 3])]),
         "missing_output.onnx")
    save(add_model(nodes=[
        helper.make_node("Add", ["x", "b"], ["a"], name="first"),
        helper.make_node("Relu", ["a"], ["b"], name="second"),
        helper.make_node("Add", ["a", "w"], ["y"], name="out")]),
        "cycle.onnx")
    save(add_model(nodes=[helper.make_node("Add", ["x", "ghost"], ["y"],
                                           name="haunted")]),
         "dangling_input.onnx")
    save(add_model(nodes=[helper.make_node("Add", ["x", "w"], ["y"], name="ms",
                                           domain="com.microsoft")]),
         "custom_domain.onnx")
    save(add_model(nodes=[helper.make_node("Reshape", ["x", "s"], ["y"],
                                           name="reshape")],
                   inputs=[value("x", FLOAT, [2, 3]), value("s", INT64, [2])]),
         "reshape_runtime_shape.onnx")
    ln = helper.make_node("LayerNormalization", ["x", "w"], ["y", "mean"],
                          name="ln", axis=0)
    save(add_model(nodes=[ln], outputs=[value("y", FLOAT, [2, 3]),
                                        value("mean", FLOAT, [1, 1])], opset=17),
         "layernorm_mean_used.onnx")


def make_bad_external():
    def external(location, offset, length):
        t = TensorProto(name="w", data_type=FLOAT, dims=[2, 3],
                        data_location=TensorProto.EXTERNAL)
        for key, val in (("location", location), ("offset", str(offset)),
                         ("length", str(length))):
            entry = t.external_data.add()
            entry.key, entry.value = key, val
        return t

    save(add_model(initializers=[external("../secret.bin", 0, 24)]),
         "external_escape.onnx")
    save(add_model(initializers=[external("/etc/passwd", 0, 24)]),
         "external_absolute.onnx")
    write_bytes("external_short.bin", b"\x00" * 32)
    save(add_model(initializers=[external("external_short.bin", 16, 24)]),
         "external_beyond_end.onnx")


def main():
    # The exporters warn about deprecations and missing torchvision.
    warnings.filterwarnings("ignore")
    if not os.path.isdir(OUT):
        sys.exit(f"run from the repository root ({OUT} not found)")
    for make in (make_gemm, make_matmul, make_elementwise, make_compare_where,
                 make_softmax, make_opset11, make_reduce, make_shape_ops,
                 make_gather, make_layernorm, make_constants, make_dynamic_dim,
                 make_external_data, make_torch_mlp, make_torch_dynamo,
                 make_bad_files,
                 make_bad_graphs, make_bad_external):
        make()


if __name__ == "__main__":
    main()
