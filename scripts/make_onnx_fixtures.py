#!/usr/bin/env python3
"""Writes the ONNX fixtures of the importer's lit tests to test/Inputs/onnx/.

Run from the repository root with a Python that has onnx, onnxruntime (for
the reference outputs), numpy, torch and onnxscript (for torch's default
exporter):

    /work/venv/bin/python scripts/make_onnx_fixtures.py

Every model is small, built with onnx.helper at an explicit low opset and
IR version 8 (Debian's libonnx 1.12 reads them), and deterministic: random
values come from fixed seeds. This file holds the helpers, the op families'
models and the files kiln must refuse; scripts/make_onnx_torch_fixtures.py
the models exported from PyTorch modules, scripts/make_onnx_layer_fixtures.py
the recurrent, normalization, resize, pad, transposed-convolution and other
layer models. Running this script writes all of them. The lit tests read the
committed files; they never run Python.
"""

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
    nodes = [helper.make_node("ReduceMax", ["x"], ["mx"], name="rmax", axes=[0, -1],
                              keepdims=0),
             helper.make_node("ReduceMax", ["x"], ["mx_all"], name="rmax_all"),
             helper.make_node("ReduceMin", ["x"], ["mn"], name="rmin", axes=[1])]
    save(model("reduce_minmax", nodes, [value("x", FLOAT, [2, 3, 4])],
               [value("mx", FLOAT, [3]), value("mx_all", FLOAT, [1, 1, 1]),
                value("mn", FLOAT, [2, 1, 4])]),
         "reduce_minmax.onnx")
    nodes = [helper.make_node("ReduceMax", ["x", "axes"], ["mx"], name="rmax", keepdims=0),
             helper.make_node("ReduceMin", ["x", "empty"], ["same"], name="rmin_noop",
                              noop_with_empty_axes=1),
             helper.make_node("ReduceMin", ["x", "axes"], ["mn"], name="rmin")]
    save(model("reduce_minmax18", nodes, [value("x", FLOAT, [2, 3, 4])],
               [value("mx", FLOAT, [2, 4]), value("same", FLOAT, [2, 3, 4]),
                value("mn", FLOAT, [2, 1, 4])],
               [ints("axes", [-2]), ints("empty", [])], opset=18),
         "reduce_minmax_opset18.onnx")


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


def make_zero_dim():
    """An input of an empty dimension (legal ONNX; kiln's tensors are never empty)."""
    x = helper.make_tensor_value_info("x", FLOAT, [0, 3])
    y = helper.make_tensor_value_info("y", FLOAT, [0, 2])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")]
    save(model("zero_dim", nodes, [x], [y], [weights("w", [3, 2], 8)]),
         "zero_dim.onnx")


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
    save(add_model(nodes=[helper.make_node("Softsign", ["x"], ["y"], name="softsign")]),
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


# ---------------------------------------------------------------------------
# The ops the exporters emit beyond the basic families (issue: real exported
# models): math, logic, slicing, shape arithmetic, convolution, pooling
# ---------------------------------------------------------------------------

def scalar(name, v, dtype=np.float32):
    return numpy_helper.from_array(np.array(v, dtype=dtype), name)


def make_math_ops():
    """Erf, Abs, Reciprocal, Pow (special and general exponents), Clip (both
    forms), Mod (fmod) and CastLike."""
    nodes = [
        helper.make_node("Erf", ["x"], ["erf"], name="erf"),
        helper.make_node("Abs", ["x"], ["abs"], name="abs"),
        helper.make_node("Add", ["abs", "half"], ["pos"], name="positive"),
        helper.make_node("Reciprocal", ["pos"], ["recip"], name="recip"),
        helper.make_node("Pow", ["x", "two"], ["sq"], name="square"),
        helper.make_node("Pow", ["x", "three_i"], ["cube"], name="cube"),
        helper.make_node("Pow", ["pos", "root"], ["sqrt"], name="root"),
        helper.make_node("Pow", ["pos", "odd"], ["pw"], name="general_pow"),
        helper.make_node("Clip", ["x", "lo", "hi"], ["clip"], name="clip"),
        helper.make_node("Clip", ["x", "", "hi"], ["clip_hi"], name="clip_max_only"),
        helper.make_node("Mod", ["x", "modulus"], ["fmod"], name="fmod", fmod=1),
        helper.make_node("CastLike", ["n", "x"], ["n_f"], name="cast_like"),
    ]
    outs = [value(n, FLOAT, [3, 4]) for n in
            ("erf", "abs", "recip", "sq", "cube", "sqrt", "pw", "clip", "clip_hi",
             "fmod")] + [value("n_f", FLOAT, [4])]
    save(model("math_ops", nodes,
               [value("x", FLOAT, [3, 4]), value("n", INT64, [4])], outs,
               [scalar("half", 0.5), scalar("two", 2.0), scalar("three_i", 3, np.int64),
                scalar("root", 0.5), scalar("odd", 1.7), scalar("lo", -1.0),
                scalar("hi", 1.5), scalar("modulus", 1.3)], opset=15),
         "math_ops.onnx")
    nodes = [helper.make_node("Clip", ["x"], ["c"], name="clip6", min=-0.5, max=0.5)]
    save(model("clip6", nodes, [value("x", FLOAT, [3, 4])], [value("c", FLOAT, [3, 4])],
               opset=6 + 1),
         "clip_opset7.onnx")
    nodes = [
        helper.make_node("Abs", ["x"], ["abs"], name="abs"),
        helper.make_node("Constant", [], ["half"], name="half", value_float=0.5),
        helper.make_node("Add", ["abs", "half"], ["pos"], name="positive"),
        helper.make_node("Pow", ["x", "one"], ["same"], name="pow_one"),
        helper.make_node("Pow", ["pos", "minus_half"], ["rsqrt"], name="pow_rsqrt"),
        helper.make_node("Pow", ["pos", "minus_one_i"], ["recip"], name="pow_recip"),
        helper.make_node("Pow", ["pos", "per_column"], ["cols"], name="pow_columns"),
        helper.make_node("Pow", ["v", "two_2d"], ["sq_2d"], name="pow_widen"),
        helper.make_node("Pow", ["pos", "e"], ["fed"], name="pow_fed"),
    ]
    save(model("pow_exponents", nodes,
               [value("x", FLOAT, [3, 4]), value("v", FLOAT, [4]), value("e", FLOAT, [])],
               [value(n, FLOAT, [3, 4]) for n in ("same", "rsqrt", "recip", "cols")] +
               [value("sq_2d", FLOAT, [1, 4]), value("fed", FLOAT, [3, 4])],
               [scalar("one", 1.0), scalar("minus_half", -0.5),
                scalar("minus_one_i", -1, np.int64),
                numpy_helper.from_array(np.array([1.5, 2.0, -1.0, 0.25], np.float32),
                                        "per_column"),
                numpy_helper.from_array(np.array([[2.0]], np.float32), "two_2d")]),
         "pow_exponents.onnx")


def make_logic_ops():
    nodes = [
        helper.make_node("Greater", ["a", "b"], ["gt"], name="gt"),
        helper.make_node("Less", ["a", "zero"], ["neg"], name="negative"),
        helper.make_node("Not", ["gt"], ["not"], name="not"),
        helper.make_node("And", ["gt", "neg"], ["and"], name="and"),
        helper.make_node("Or", ["gt", "neg"], ["or"], name="or"),
        helper.make_node("Xor", ["gt", "neg"], ["xor"], name="xor"),
        helper.make_node("Where", ["xor", "a", "b"], ["sel"], name="where"),
        helper.make_node("Mod", ["i", "divisors"], ["imod"], name="int_mod"),
        helper.make_node("Mod", ["i", "divisors"], ["ifmod"], name="int_fmod", fmod=1),
    ]
    b1 = TensorProto.BOOL
    outs = [value("not", b1, [2, 3]), value("and", b1, [2, 3]), value("or", b1, [2, 3]),
            value("sel", FLOAT, [2, 3]), value("imod", INT64, [2, 3]),
            value("ifmod", INT64, [2, 3])]
    save(model("logic_ops", nodes,
               [value("a", FLOAT, [2, 3]), value("b", FLOAT, [3]), value("i", INT64, [2, 3])],
               outs, [scalar("zero", 0.0), ints("divisors", [2, -3, 5])]),
         "logic_ops.onnx")


def make_slicing():
    """Slice (negative axes and steps, clamped ends), Split (sizes input),
    Tile, GatherElements (constant and fed indices), Gather on axis 1,
    ReduceMin, Dropout in inference form."""
    big = np.iinfo(np.int64).max
    nodes = [
        helper.make_node("Slice", ["x", "s_starts", "s_ends", "s_axes", "s_steps"],
                         ["sl"], name="slice"),
        helper.make_node("Slice", ["x", "r_starts", "r_ends", "r_axes", "r_steps"],
                         ["rev"], name="reverse"),
        helper.make_node("Split", ["x", "sizes"], ["p0", "p1", "p2"], name="split",
                         axis=1),
        helper.make_node("Tile", ["p0", "repeats"], ["tile"], name="tile"),
        helper.make_node("GatherElements", ["x", "picks"], ["ge"], name="gather_elements",
                         axis=2),
        helper.make_node("GatherElements", ["x", "idx"], ["gef"], name="gather_fed",
                         axis=0),
        helper.make_node("Gather", ["x", "cols"], ["g1"], name="gather_axis1", axis=1),
        helper.make_node("ReduceMin", ["x"], ["rmin"], name="reduce_min", axes=[1],
                         keepdims=0),
        helper.make_node("Dropout", ["x", "ratio", "training"], ["drop"], name="dropout"),
    ]
    picks = numpy_helper.from_array(
        rng(20).integers(-5, 5, size=(2, 6, 3)).astype(np.int64), "picks")
    outs = [value("sl", FLOAT, [2, 3, 2]), value("rev", FLOAT, [2, 6, 5]),
            value("p1", FLOAT, [2, 2, 5]), value("p2", FLOAT, [2, 3, 5]),
            value("tile", FLOAT, [4, 3, 5]), value("ge", FLOAT, [2, 6, 3]),
            value("gef", FLOAT, [2, 6, 5]), value("g1", FLOAT, [2, 2, 3, 5]),
            value("rmin", FLOAT, [2, 5]), value("drop", FLOAT, [2, 6, 5])]
    save(model("slicing", nodes,
               [value("x", FLOAT, [2, 6, 5]), value("idx", INT64, [2, 6, 5])], outs,
               [ints("s_starts", [-5, 1]), ints("s_ends", [big, -1]),
                ints("s_axes", [1, -1]), ints("s_steps", [2, 2]),
                ints("r_starts", [-1]), ints("r_ends", [-big]), ints("r_axes", [2]),
                ints("r_steps", [-1]), ints("sizes", [1, 2, 3]),
                ints("repeats", [2, 3, 1]), picks,
                numpy_helper.from_array(np.array([[0, 5, 1], [2, 2, 3]], np.int64), "cols"),
                scalar("ratio", 0.25), scalar("training", False, np.bool_)]),
         "slicing.onnx")
    nodes = [helper.make_node("Split", ["x"], ["a", "b", "c"], name="split18", axis=0,
                              num_outputs=3),
             helper.make_node("ReduceMin", ["x", "axes"], ["m"], name="rmin18")]
    save(model("split18", nodes, [value("x", FLOAT, [7, 2])],
               [value("a", FLOAT, [3, 2]), value("b", FLOAT, [3, 2]),
                value("c", FLOAT, [1, 2]), value("m", FLOAT, [7, 1])],
               [ints("axes", [1])], opset=18),
         "split_opset18.onnx")
    nodes = [helper.make_node("Slice", ["x"], ["sl"], name="slice_attr", starts=[1, -4],
                              ends=[100, -1], axes=[-1, 1]),
             helper.make_node("Slice", ["x"], ["head"], name="slice_no_axes", starts=[1],
                              ends=[2])]
    save(model("slice9", nodes, [value("x", FLOAT, [2, 6, 5])],
               [value("sl", FLOAT, [2, 3, 4]), value("head", FLOAT, [1, 6, 5])], opset=9),
         "slice_opset9.onnx")
    nodes = [helper.make_node("Split", ["x"], ["a", "b"], name="split_attr", axis=-1,
                              split=[1, 4]),
             helper.make_node("Split", ["x"], ["h0", "h1"], name="split_halves", axis=1),
             helper.make_node("Dropout", ["x"], ["drop"], name="dropout_attr", ratio=0.3)]
    save(model("split11", nodes, [value("x", FLOAT, [2, 6, 5])],
               [value("a", FLOAT, [2, 6, 1]), value("b", FLOAT, [2, 6, 4]),
                value("h0", FLOAT, [2, 3, 5]), value("h1", FLOAT, [2, 3, 5]),
                value("drop", FLOAT, [2, 6, 5])], opset=11),
         "split_opset11.onnx")


def make_slice_extreme_steps():
    """Steps of INT64_MAX and INT64_MIN: one element each (kilnc once
    overflowed computing the count)."""
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    nodes = [
        helper.make_node("Slice", ["x", "s1", "e1", "a", "max"], ["forward"], name="max_step"),
        helper.make_node("Slice", ["x", "s2", "e2", "a", "min"], ["backward"], name="min_step"),
    ]
    save(model("slice_extreme_steps", nodes, [value("x", FLOAT, [2, 5, 3])],
               [value("forward", FLOAT, [2, 1, 3]), value("backward", FLOAT, [2, 1, 3])],
               [ints("s1", [1]), ints("e1", [big]), ints("a", [1]), ints("max", [big]),
                ints("s2", [-1]), ints("e2", [small]), ints("min", [small])]),
         "slice_extreme_steps.onnx")


def make_shape_arithmetic():
    """Shapes computed at run time, as exporters write them: Shape, Gather,
    Unsqueeze, Concat, Size, Mul, Div, Mod, Cast, Range, ConstantOfShape,
    Equal/Where feeding Reshape and Expand; kiln folds them all."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], name="batch"),
        helper.make_node("Size", ["x"], ["size"], name="size"),
        helper.make_node("Div", ["size", "batch"], ["per_row"], name="per_row"),
        helper.make_node("Mod", ["per_row", "seven"], ["rem"], name="mod"),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["b1"], name="unsq_b"),
        helper.make_node("Unsqueeze", ["per_row", "axes0"], ["r1"], name="unsq_r"),
        helper.make_node("Concat", ["b1", "r1"], ["flat_shape"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "flat_shape"], ["flat"], name="flatten"),
        helper.make_node("Cast", ["per_row"], ["per_row_f"], name="cast", to=FLOAT),
        helper.make_node("Sqrt", ["per_row_f"], ["scale"], name="sqrt"),
        helper.make_node("Div", ["flat", "scale"], ["scaled"], name="scale"),
        helper.make_node("Range", ["zero_s", "batch", "one_s"], ["rows"], name="range"),
        helper.make_node("Equal", ["rows", "zero_s"], ["first"], name="first"),
        helper.make_node("ConstantOfShape", ["flat_shape"], ["ones"], name="ones",
                         value=numpy_helper.from_array(np.array([1.0], np.float32))),
        helper.make_node("Unsqueeze", ["first", "axes1"], ["first_col"], name="unsq_first"),
        helper.make_node("Where", ["first_col", "ones", "scaled"], ["out"], name="where"),
        helper.make_node("Expand", ["bias", "flat_shape"], ["wide"], name="expand"),
        helper.make_node("Add", ["out", "wide"], ["y"], name="add"),
        helper.make_node("Cast", ["rem"], ["rem_out"], name="rem_out", to=INT64),
    ]
    save(model("shape_arithmetic", nodes, [value("x", FLOAT, [4, 3, 5])],
               [value("y", FLOAT, [4, 15]), value("rem_out", INT64, [])],
               [scalar("zero", 0, np.int64), scalar("seven", 7, np.int64), ints("axes0", [0]), ints("axes1", [1]),
                scalar("zero_s", 0, np.int64), scalar("one_s", 1, np.int64),
                weights("bias", [15], 21)], opset=13),
         "shape_arithmetic.onnx")
    nodes = [
        helper.make_node("Shape", ["x"], ["head"], name="shape_head", end=1),
        helper.make_node("Shape", ["x"], ["tail"], name="shape_tail", start=-2),
        helper.make_node("Shape", ["x"], ["mid"], name="shape_mid", start=1, end=-1),
        helper.make_node("Constant", [], ["rest"], name="rest", value_ints=[-1]),
        helper.make_node("Concat", ["head", "rest"], ["flat_shape"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "flat_shape"], ["flat"], name="flatten"),
        helper.make_node("Constant", [], ["f_start"], name="f_start", value_float=0.5),
        helper.make_node("Constant", [], ["f_limit"], name="f_limit", value_float=2.5),
        helper.make_node("Constant", [], ["f_delta"], name="f_delta", value_float=0.5),
        helper.make_node("Range", ["f_start", "f_limit", "f_delta"], ["steps"], name="range_f"),
        helper.make_node("Add", ["x", "steps"], ["shifted"], name="shift"),
        helper.make_node("ConstantOfShape", ["tail"], ["threes"], name="threes",
                         value=numpy_helper.from_array(np.array([3], np.int64))),
        helper.make_node("CastLike", ["threes", "x"], ["threes_f"], name="cast_like"),
        helper.make_node("Mul", ["shifted", "threes_f"], ["scaled"], name="scale"),
        helper.make_node("Size", ["x"], ["size"], name="size"),
        helper.make_node("Squeeze", ["mid"], ["mid_s"], name="squeeze_mid"),
        helper.make_node("Neg", ["mid_s"], ["neg_mid"], name="neg_mid"),
        helper.make_node("Range", ["size", "zero", "neg_mid"], ["countdown"], name="range_i"),
        helper.make_node("Add", ["n", "countdown"], ["counted"], name="count"),
    ]
    save(model("shape_range", nodes,
               [value("x", FLOAT, [2, 3, 4]), value("n", INT64, [8])],
               [value("flat", FLOAT, [2, 12]), value("scaled", FLOAT, [2, 3, 4]),
                value("counted", INT64, [8])],
               [scalar("zero", 0, np.int64)], opset=15),
         "shape_range.onnx")


def make_conv():
    """Conv in 1-D and 2-D: strides, explicit pads, each auto_pad, dilations,
    groups, with and without bias."""
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["plain"], name="plain", pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "w"], ["strided"], name="strided", strides=[2, 2],
                         pads=[0, 1, 2, 0]),
        helper.make_node("Conv", ["x", "w"], ["upper"], name="same_upper", strides=[2, 3],
                         auto_pad="SAME_UPPER"),
        helper.make_node("Conv", ["x", "w"], ["lower"], name="same_lower", strides=[2, 2],
                         auto_pad="SAME_LOWER"),
        helper.make_node("Conv", ["x", "w"], ["valid"], name="valid", auto_pad="VALID",
                         dilations=[2, 1]),
        helper.make_node("Conv", ["x", "wg", "bg"], ["grouped"], name="grouped", group=2,
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["s", "w1"], ["conv1d"], name="conv1d", strides=[2],
                         pads=[2, 1], dilations=[2]),
    ]
    outs = [value("plain", FLOAT, [2, 6, 7, 9]), value("strided", FLOAT, [2, 6, 4, 4]),
            value("upper", FLOAT, [2, 6, 4, 3]), value("lower", FLOAT, [2, 6, 4, 5]),
            value("valid", FLOAT, [2, 6, 3, 7]), value("grouped", FLOAT, [2, 6, 7, 9]),
            value("conv1d", FLOAT, [2, 5, 6])]
    save(model("conv", nodes, [value("x", FLOAT, [2, 4, 7, 9]), value("s", FLOAT, [2, 3, 13])],
               outs,
               [weights("w", [6, 4, 3, 3], 22), weights("b", [6], 23),
                weights("wg", [6, 2, 3, 3], 24), weights("bg", [6], 25),
                weights("w1", [5, 3, 3], 26)]),
         "conv.onnx")
    nodes = [
        helper.make_node("Conv", ["v", "w3"], ["conv3d"], name="conv3d", strides=[1, 2, 1],
                         pads=[1, 0, 1, 1, 0, 1]),
        helper.make_node("MaxPool", ["v"], ["max3d"], name="max3d", kernel_shape=[2, 2, 2]),
        helper.make_node("AveragePool", ["v"], ["avg3d"], name="avg3d", kernel_shape=[2, 2, 2],
                         pads=[1, 1, 1, 1, 1, 1], ceil_mode=1),
    ]
    save(model("conv3d", nodes, [value("v", FLOAT, [1, 2, 4, 5, 6])],
               [value("conv3d", FLOAT, [1, 3, 4, 2, 6]), value("max3d", FLOAT, [1, 2, 3, 4, 5]),
                value("avg3d", FLOAT, [1, 2, 5, 6, 7])],
               [weights("w3", [3, 2, 3, 3, 3], 34)]),
         "conv3d.onnx")


def make_pooling():
    nodes = [
        helper.make_node("MaxPool", ["x"], ["max2"], name="max2", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("MaxPool", ["x"], ["max3"], name="max3_ceil", kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
        helper.make_node("MaxPool", ["x"], ["maxd"], name="max_dilated", kernel_shape=[2, 2],
                         dilations=[2, 2]),
        helper.make_node("AveragePool", ["x"], ["avg_in"], name="avg_include",
                         kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                         count_include_pad=1),
        helper.make_node("AveragePool", ["x"], ["avg_ex"], name="avg_exclude",
                         kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1]),
        helper.make_node("AveragePool", ["x"], ["avg_ceil"], name="avg_ceil",
                         kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1,
                         count_include_pad=1),
        helper.make_node("AveragePool", ["x"], ["avg_same"], name="avg_same",
                         kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
        helper.make_node("GlobalAveragePool", ["x"], ["gap"], name="gap"),
        helper.make_node("GlobalMaxPool", ["x"], ["gmp"], name="gmp"),
        helper.make_node("MaxPool", ["s"], ["max1d"], name="max1d", kernel_shape=[3],
                         strides=[2], pads=[1, 1]),
    ]
    outs = [value("max2", FLOAT, [2, 3, 3, 4]), value("max3", FLOAT, [2, 3, 4, 5]),
            value("maxd", FLOAT, [2, 3, 5, 7]), value("avg_in", FLOAT, [2, 3, 4, 5]),
            value("avg_ex", FLOAT, [2, 3, 4, 9]), value("avg_ceil", FLOAT, [2, 3, 4, 5]),
            value("avg_same", FLOAT, [2, 3, 4, 5]), value("gap", FLOAT, [2, 3, 1, 1]),
            value("gmp", FLOAT, [2, 3, 1, 1]), value("max1d", FLOAT, [2, 3, 6])]
    save(model("pooling", nodes, [value("x", FLOAT, [2, 3, 7, 9]),
                                  value("s", FLOAT, [2, 3, 11])], outs, opset=19),
         "pooling.onnx")
    nodes = [
        helper.make_node("MaxPool", ["x"], ["upper"], name="max_upper", kernel_shape=[3, 3],
                         strides=[2, 2], auto_pad="SAME_UPPER"),
        helper.make_node("MaxPool", ["x"], ["lower"], name="max_lower", kernel_shape=[2, 2],
                         strides=[2, 2], auto_pad="SAME_LOWER"),
        helper.make_node("MaxPool", ["x"], ["valid"], name="max_valid", kernel_shape=[3, 2],
                         auto_pad="VALID"),
        helper.make_node("AveragePool", ["x"], ["avg_lower"], name="avg_lower",
                         kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_LOWER"),
    ]
    outs = [value("upper", FLOAT, [2, 3, 4, 5]), value("lower", FLOAT, [2, 3, 4, 5]),
            value("valid", FLOAT, [2, 3, 5, 8]), value("avg_lower", FLOAT, [2, 3, 4, 5])]
    save(model("maxpool_autopad", nodes, [value("x", FLOAT, [2, 3, 7, 9])], outs, opset=18),
         "maxpool_autopad.onnx")


def make_batchnorm():
    g = rng(27)
    def vec(name, values):
        return numpy_helper.from_array(values.astype(np.float32), name)
    nodes = [helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"],
                              ["y"], name="bn", epsilon=1e-3)]
    save(model("batchnorm", nodes, [value("x", FLOAT, [2, 4, 3, 3])],
               [value("y", FLOAT, [2, 4, 3, 3])],
               [vec("scale", g.uniform(0.5, 1.5, 4)), vec("bias", g.normal(size=4)),
                vec("mean", g.normal(size=4)), vec("var", g.uniform(0.5, 2.0, 4))],
               opset=15),
         "batchnorm.onnx")


def make_bad_new_ops():
    save(add_model(opset=24), "opset_too_new.onnx")
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])
    save(model("bad_conv", [conv], [value("x", FLOAT, [1, 3, 5, 5])],
               [value("y", FLOAT, [1, 2, 5, 5])], [weights("w", [2, 4, 3, 3], 28)],
               check=False),
         "conv_mismatch.onnx")
    drop = helper.make_node("Dropout", ["x", "ratio", "training"], ["y"], name="drop")
    save(model("bad_dropout", [drop], [value("x", FLOAT, [2, 3])],
               [value("y", FLOAT, [2, 3])],
               [scalar("ratio", 0.5), scalar("training", True, np.bool_)], check=False),
         "dropout_training.onnx")
    bn = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
                          name="bn_train", training_mode=1)
    save(model("bad_bn", [bn], [value("x", FLOAT, [2, 3, 4])],
               [value("y", FLOAT, [2, 3, 4]), value("rm", FLOAT, [3])],
               [weights(n, [3], 29 + i) for i, n in enumerate("sbmv")], opset=15,
               check=False),
         "batchnorm_training.onnx")
    x = [value("x", FLOAT, [1, 2, 5, 5])]
    y = [value("y", FLOAT, [1, 2, 5, 5])]
    w = weights("w", [2, 2, 3, 3], 33)

    def one_node(node, filename, inputs=x, outputs=y, initializers=(), opset=13):
        save(model("bad_" + node.name, [node], inputs, outputs, initializers,
                   opset=opset, check=False),
             filename)

    one_node(helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], storage_order=1),
             "maxpool_storage_order.onnx")
    one_node(helper.make_node("MaxPool", ["x"], ["y", "indices"], name="pool",
                              kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             "maxpool_indices_used.onnx",
             outputs=y + [value("indices", INT64, [1, 2, 5, 5])])
    one_node(helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1]),
             "conv_pads_length.onnx", initializers=[w])
    one_node(helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1],
                              auto_pad="SAME_UPPER"),
             "conv_autopad_with_pads.onnx", initializers=[w])
    # A zero stride with SAME padding (kilnc once divided by it).
    one_node(helper.make_node("Conv", ["x", "w"], ["y"], name="conv", strides=[0, 1],
                              auto_pad="SAME_UPPER"),
             "conv_zero_stride_same.onnx", initializers=[w])
    one_node(helper.make_node("AveragePool", ["x"], ["y"], name="pool", kernel_shape=[2, 2],
                              dilations=[2, 2]),
             "avgpool_dilations.onnx", outputs=[value("y", FLOAT, [1, 2, 3, 3])], opset=19)
    one_node(helper.make_node("Pow", ["x", "e"], ["y"], name="pow"), "pow_bool_exponent.onnx",
             initializers=[scalar("e", True, np.bool_)])
    one_node(helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"],
                              name="slice"),
             "slice_zero_step.onnx",
             initializers=[ints("starts", [0]), ints("ends", [5]), ints("axes", [2]),
                           ints("steps", [0])])
    one_node(helper.make_node("Split", ["x", "sizes"], ["a", "b"], name="split", axis=2),
             "split_sizes.onnx", outputs=[value("a", FLOAT, None), value("b", FLOAT, None)],
             initializers=[ints("sizes", [2, 2])])
    one_node(helper.make_node("Tile", ["x", "repeats"], ["y"], name="tile"),
             "tile_negative.onnx", initializers=[ints("repeats", [1, 1, -1, 1])])
    one_node(helper.make_node("Mod", ["x", "x"], ["y"], name="mod", fmod=1), "mod_opset9.onnx",
             opset=9)
    # Inputs an older opset does not define, which were once ignored.
    one_node(helper.make_node("Clip", ["x", "lo"], ["y"], name="clip"), "clip_opset7_inputs.onnx",
             initializers=[scalar("lo", 0.0)], opset=7)
    one_node(helper.make_node("Split", ["x", "sizes"], ["a", "b"], name="split", axis=2),
             "split_opset11_input.onnx",
             outputs=[value("a", FLOAT, None), value("b", FLOAT, None)],
             initializers=[ints("sizes", [2, 3])], opset=11)
    one_node(helper.make_node("Slice", ["x", "starts"], ["y"], name="slice", starts=[0],
                              ends=[2]),
             "slice_opset9_inputs.onnx", initializers=[ints("starts", [1])], opset=9)
    # Values out of range at import time.
    one_node(helper.make_node("GatherElements", ["x", "idx"], ["y"], name="gather", axis=3),
             "gather_elements_range.onnx",
             initializers=[numpy_helper.from_array(np.full((1, 2, 5, 5), 7, np.int64), "idx")])
    one_node(helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="range"),
             "range_nan.onnx", inputs=[], outputs=[value("y", FLOAT, None)],
             initializers=[scalar("start", 0.0), scalar("limit", float("nan")),
                           scalar("delta", 1.0)])
    one_node(helper.make_node("Mod", ["x", "x"], ["y"], name="mod"), "mod_float_fmod0.onnx")


# Models whose outputs onnxruntime computes for the reference archives.
ONNXRUNTIME_REFERENCES = [
    "gemm", "matmul", "elementwise", "compare_where", "softmax", "opset11", "reduce",
    "shape_ops", "layernorm", "math_ops", "clip_opset7", "logic_ops", "slicing",
    "split_opset18", "shape_arithmetic", "conv", "pooling", "batchnorm",
    "pow_exponents", "slice_opset9", "split_opset11", "shape_range", "maxpool_autopad",
    "reduce_minmax", "reduce_minmax_opset18", "conv3d", "slice_extreme_steps",
]


def save_onnxruntime_references(names=ONNXRUNTIME_REFERENCES):
    """<name>.reference.npz: seeded inputs (floats in [-3, 3), integers in
    [-2, 2): valid indices for every gather here) and onnxruntime's outputs,
    which test/Import/Onnx/onnxruntime-agreement.test compares Kiln with."""
    import onnxruntime
    for name in names:
        path = os.path.join(OUT, name + ".onnx")
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        g = rng(100)
        feeds = {}
        for i in session.get_inputs():
            if i.type == "tensor(int64)":
                feeds[i.name] = g.integers(-2, 2, i.shape).astype(np.int64)
            else:
                feeds[i.name] = g.uniform(-3, 3, i.shape).astype(np.float32)
        outputs = session.run(None, feeds)
        arrays = {"in." + k: v for k, v in feeds.items()}
        for o, v in zip(session.get_outputs(), outputs):
            arrays["out." + o.name] = v
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        write_bytes(name + ".reference.npz", buffer.getvalue())


def main():
    # The exporters warn about deprecations and missing torchvision.
    warnings.filterwarnings("ignore")
    if not os.path.isdir(OUT):
        sys.exit(f"run from the repository root ({OUT} not found)")
    # The PyTorch exports and the layer models live in their own scripts,
    # which import this one's helpers (imported here, not at the top, so
    # that they can).
    import make_onnx_layer_fixtures as layers
    import make_onnx_torch_fixtures as exports
    for make in (make_gemm, make_matmul, make_elementwise, make_compare_where,
                 make_softmax, make_opset11, make_reduce, make_shape_ops,
                 make_gather, make_layernorm, make_constants, make_dynamic_dim, make_zero_dim,
                 make_external_data, make_math_ops, make_logic_ops, make_slicing,
                 make_slice_extreme_steps, make_shape_arithmetic, make_conv, make_pooling,
                 make_batchnorm, make_bad_new_ops, make_bad_files, make_bad_graphs,
                 make_bad_external, *exports.MAKERS, *layers.MAKERS):
        make()
    save_onnxruntime_references(ONNXRUNTIME_REFERENCES + layers.ONNXRUNTIME_REFERENCES)
    layers.save_layout1_reference()


if __name__ == "__main__":
    main()
