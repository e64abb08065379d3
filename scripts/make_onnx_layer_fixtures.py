#!/usr/bin/env python3
"""The ONNX fixtures of the layers kiln imports beyond the basic op families:
LSTM, GRU and RNN in the forms the exporters do not write, GroupNormalization
and InstanceNormalization, Resize in every mode, the activations built from
elementwise ops, Pad and ConvTranspose, ArgMax/CumSum/OneHot/DepthToSpace and
the reductions beside them, Einsum, special values, trigonometry, rounding,
ScatterND, SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss (with class weights too),
and the nodes of those ops kiln refuses. onnxruntime computes their references.

Part of scripts/make_onnx_fixtures.py (its helpers, its main): run that
script, from the repository root.
"""

import io
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from make_onnx_fixtures import (FLOAT, INT64, OUT, ints, model, rng, save, scalar, value,
                                weights, write_bytes)


def make_recurrent():
    """LSTM, GRU and RNN in the forms the exporters do not write: peepholes,
    clip, reverse and bidirectional directions, given initial states,
    activations named per direction, GRU without linear_before_reset,
    sequence_lens equal to the length, and every output used (onnxruntime
    computes the reference); and the same LSTM with layout 1 (batch first),
    which onnxruntime does not run: its reference is the first's outputs
    transposed (save_layout1_reference)."""
    t, batch, size, hidden = 5, 3, 4, 6
    gen = rng(60)

    def init(name, shape):  # halved: keeps the states from saturating
        return numpy_helper.from_array(
            (gen.standard_normal(shape) * 0.5).astype(np.float32), name)

    lstm_attrs = {"hidden_size": hidden, "direction": "bidirectional", "clip": 2.5,
                  "activations": ["Sigmoid", "Tanh", "Tanh", "Sigmoid", "Relu", "Tanh"]}
    lstm_inits = [init("lw", [2, 4 * hidden, size]), init("lr", [2, 4 * hidden, hidden]),
                  init("lb", [2, 8 * hidden]), init("lh0", [2, batch, hidden]),
                  init("lc0", [2, batch, hidden]), init("lp", [2, 3 * hidden])]
    lstm = helper.make_node("LSTM", ["x", "lw", "lr", "lb", "", "lh0", "lc0", "lp"],
                            ["ly", "lyh", "lyc"], name="lstm", **lstm_attrs)
    gru = helper.make_node(
        "GRU", ["x", "gw", "gr", "gb", "lens", "gh0"], ["gy", "gyh"], name="gru",
        hidden_size=hidden, direction="reverse", linear_before_reset=0)
    rnn = helper.make_node("RNN", ["x", "rw", "rr"], ["ry"], name="rnn", hidden_size=hidden,
                           direction="bidirectional", activations=["Relu", "Tanh"])
    inits = lstm_inits + [
        init("gw", [1, 3 * hidden, size]), init("gr", [1, 3 * hidden, hidden]),
        init("gb", [1, 6 * hidden]), init("gh0", [1, batch, hidden]),
        numpy_helper.from_array(np.full([batch], t, np.int32), "lens"),
        init("rw", [2, hidden, size]), init("rr", [2, hidden, hidden])]
    outputs = [value("ly", FLOAT, [t, 2, batch, hidden]), value("lyh", FLOAT, [2, batch, hidden]),
               value("lyc", FLOAT, [2, batch, hidden]), value("gy", FLOAT, [t, 1, batch, hidden]),
               value("gyh", FLOAT, [1, batch, hidden]), value("ry", FLOAT, [t, 2, batch, hidden])]
    x = [value("x", FLOAT, [t, batch, size])]
    save(model("recurrent", [lstm, gru, rnn], x, outputs, inits, opset=14), "recurrent.onnx")
    batch_major = {i.name: numpy_helper.from_array(
        numpy_helper.to_array(i).transpose(1, 0, 2).copy(), i.name)
        for i in lstm_inits if i.name in ("lh0", "lc0")}
    lstm1 = helper.make_node("LSTM", ["x_bt", "lw", "lr", "lb", "", "lh0", "lc0", "lp"],
                             ["ly", "lyh", "lyc"], name="lstm", layout=1, **lstm_attrs)
    to_batch = helper.make_node("Transpose", ["x"], ["x_bt"], name="to_batch", perm=[1, 0, 2])
    save(model("recurrent_layout1", [to_batch, lstm1], x,
               [value("ly", FLOAT, [batch, t, 2, hidden]),
                value("lyh", FLOAT, [batch, 2, hidden]), value("lyc", FLOAT, [batch, 2, hidden])],
               [batch_major.get(i.name, i) for i in lstm_inits], opset=14),
         "recurrent_layout1.onnx")


def make_bad_recurrent():
    """Recurrent and normalization nodes kiln refuses, one defect each."""
    t, batch, size, hidden = 5, 3, 4, 6
    x = [value("x", FLOAT, [t, batch, size])]
    y = [value("y", FLOAT, None)]

    def lstm_inits(gates=4, directions=1):
        return [weights("w", [directions, gates * hidden, size], 80),
                weights("r", [directions, gates * hidden, hidden], 81)]

    def one_node(filename, op, inputs, inits, inputs_info=x, opset=14, **attrs):
        node = helper.make_node(op, inputs, ["y"], name=op.lower(), **attrs)
        save(model("bad_" + filename, [node], inputs_info, y, inits, opset=opset, check=False),
             filename + ".onnx")

    lens = numpy_helper.from_array(np.array([5, 3, 5], np.int32), "lens")
    one_node("lstm_sequence_lens", "LSTM", ["x", "w", "r", "", "lens"], lstm_inits() + [lens],
             hidden_size=hidden)
    one_node("lstm_input_forget", "LSTM", ["x", "w", "r"], lstm_inits(), hidden_size=hidden,
             input_forget=1)
    one_node("lstm_no_hidden_size", "LSTM", ["x", "w", "r"], lstm_inits())
    one_node("lstm_direction", "LSTM", ["x", "w", "r"], lstm_inits(), hidden_size=hidden,
             direction="sideways")
    one_node("lstm_clip", "LSTM", ["x", "w", "r"], lstm_inits(), hidden_size=hidden, clip=-1.0)
    one_node("lstm_too_long", "LSTM", ["x", "w", "r"], lstm_inits(),
             inputs_info=[value("x", FLOAT, [3000, 1, size])], hidden_size=hidden)
    one_node("lstm_peephole_shape", "LSTM", ["x", "w", "r", "", "", "", "", "p"],
             lstm_inits() + [weights("p", [1, 2 * hidden], 82)], hidden_size=hidden)
    one_node("gru_w_shape", "GRU", ["x", "w", "r"], lstm_inits(gates=2), hidden_size=hidden)
    one_node("gru_activation_count", "GRU", ["x", "w", "r"], lstm_inits(gates=3),
             hidden_size=hidden, activations=["Sigmoid", "Tanh", "Tanh"])
    one_node("lstm_bidirectional_activations", "LSTM", ["x", "w", "r"],
             lstm_inits(directions=2), hidden_size=hidden, direction="bidirectional",
             activations=["Sigmoid", "Tanh", "Tanh"])
    one_node("rnn_activation", "RNN", ["x", "w", "r"], lstm_inits(gates=1), hidden_size=hidden,
             activations=["Softsign"])
    one_node("rnn_initial_h", "RNN", ["x", "w", "r", "", "", "h0"],
             lstm_inits(gates=1) + [weights("h0", [1, batch + 1, hidden], 83)],
             hidden_size=hidden)
    one_node("group_norm_groups", "GroupNormalization", ["x", "s", "b"],
             [weights("s", [6], 84), weights("b", [6], 85)],
             inputs_info=[value("x", FLOAT, [2, 6, 4])], opset=21, num_groups=4)
    one_node("instance_norm_rank2", "InstanceNormalization", ["x", "s", "b"],
             [weights("s", [6], 84), weights("b", [6], 85)],
             inputs_info=[value("x", FLOAT, [3, 6])])
    one_node("instance_norm_scale", "InstanceNormalization", ["x", "s", "b"],
             [weights("s", [5], 84), weights("b", [6], 85)],
             inputs_info=[value("x", FLOAT, [3, 6, 4])])


def make_bad_layer_ops():
    """Pad, ConvTranspose, CumSum, OneHot, DepthToSpace, Einsum, ScatterND
    and SoftmaxCrossEntropyLoss nodes kiln refuses, one defect each."""
    x = [value("x", FLOAT, [1, 2, 3, 3])]
    y = [value("y", FLOAT, None)]

    def one_node(filename, op, inputs, inits, inputs_info=x, opset=13, **attrs):
        node = helper.make_node(op, inputs, ["y"], name=op.lower(), **attrs)
        save(model("bad_" + filename, [node], inputs_info, y, inits, opset=opset, check=False),
             filename + ".onnx")

    one_node("pad_mode", "Pad", ["x", "pads"], [ints("pads", [0, 0, 1, 1, 0, 0, 1, 1])],
             mode="mirror")
    one_node("pad_reflect_far", "Pad", ["x", "pads"], [ints("pads", [0, 0, 3, 0, 0, 0, 0, 0])],
             mode="reflect")
    one_node("pad_count", "Pad", ["x", "pads"], [ints("pads", [1, 1, 1])])
    one_node("pad_runtime", "Pad", ["x", "pads"], [],
             inputs_info=x + [value("pads", INT64, [8])])
    one_node("pad_value_type", "Pad", ["x", "pads", "v"],
             [ints("pads", [0, 0, 1, 1, 0, 0, 1, 1]), ints("v", [1])])
    one_node("convtranspose_filter", "ConvTranspose", ["x", "w"], [weights("w", [3, 2, 3, 3], 90)])
    one_node("convtranspose_output_padding", "ConvTranspose", ["x", "w"],
             [weights("w", [2, 2, 3, 3], 91)], strides=[2, 2], output_padding=[2, 0])
    one_node("convtranspose_output_shape", "ConvTranspose", ["x", "w"],
             [weights("w", [2, 2, 3, 3], 92)], output_shape=[9, 9])
    one_node("onehot_float_indices", "OneHot", ["x", "depth", "values"],
             [ints("depth", [4]), numpy_helper.from_array(np.array([0, 1], np.float32), "values")])
    one_node("depth_to_space_block", "DepthToSpace", ["x"], [], blocksize=2)
    one_node("depth_to_space_huge", "DepthToSpace", ["x"], [], blocksize=1 << 32)
    one_node("pad_table", "Pad", ["x", "pads"], [ints("pads", [0, 0, 0, 1 << 21, 0, 0, 0, 0])],
             mode="wrap", opset=19)
    one_node("pad_huge", "Pad", ["x", "pads"], [ints("pads", [1 << 24] * 8)])
    one_node("convtranspose_huge", "ConvTranspose", ["x", "w"], [weights("w", [2, 2, 3, 3], 95)],
             strides=[1 << 40, 1])
    one_node("einsum_ellipsis", "Einsum", ["x", "x"], [], equation="...ij,...jk->...ik")
    one_node("einsum_diagonal", "Einsum", ["x"], [], equation="abii->ab")
    one_node("einsum_sizes", "Einsum", ["x", "x"], [], equation="abij,bajk->abik")
    updates = numpy_helper.from_array(np.zeros([1, 3, 3], np.float32), "u")
    one_node("scatter_nd_runtime", "ScatterND", ["x", "i", "u"], [updates],
             inputs_info=x + [value("i", INT64, [1, 2])])
    one_node("scatter_nd_reduction", "ScatterND", ["x", "i", "u"],
             [ints("i", [[0, 1]]), updates], opset=16, reduction="add")
    one_node("scatter_nd_tuple", "ScatterND", ["x", "i", "u"], [ints("i", [[0, 1, 2, 0, 1]]),
                                                                 updates])
    one_node("scatter_nd_updates", "ScatterND", ["x", "i", "u"], [ints("i", [[0, 1]]),
             numpy_helper.from_array(np.zeros([1, 3], np.float32), "u")])
    one_node("scatter_nd_range", "ScatterND", ["x", "i", "u"], [ints("i", [[0, 2]]), updates])
    scores = [value("x", FLOAT, [4, 3]), value("t", INT64, [4])]
    one_node("cross_entropy_weights_shape", "SoftmaxCrossEntropyLoss", ["x", "t", "w"],
             [weights("w", [4], 96)], inputs_info=scores)
    one_node("cross_entropy_sum", "SoftmaxCrossEntropyLoss", ["x", "t"], [],
             inputs_info=scores, reduction="sum")
    one_node("cross_entropy_float_labels", "SoftmaxCrossEntropyLoss", ["x", "t"], [],
             inputs_info=[value("x", FLOAT, [4, 3]), value("t", FLOAT, [4])])


def save_layout1_reference():
    """recurrent_layout1.reference.npz from recurrent.reference.npz: the same
    input, and the LSTM's outputs in layout 1's order."""
    order = {"ly": (2, 0, 1, 3), "lyh": (1, 0, 2), "lyc": (1, 0, 2)}
    with np.load(os.path.join(OUT, "recurrent.reference.npz")) as ref:
        arrays = {"in.x": ref["in.x"]}
        for name, axes in order.items():
            arrays["out." + name] = ref["out." + name].transpose(axes)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    write_bytes("recurrent_layout1.reference.npz", buffer.getvalue())


def make_activations():
    """Each activation kiln builds from elementwise ops, with attributes
    other than the defaults where it has them (and once with them), PRelu
    with a slope per channel; onnxruntime computes the reference over
    inputs in [-3, 3)."""
    shape = [2, 3, 4]
    cases = [("leaky", "LeakyRelu", {"alpha": 0.3}), ("leaky_default", "LeakyRelu", {}),
             ("elu", "Elu", {"alpha": 0.7}), ("selu", "Selu", {}),
             ("selu_attrs", "Selu", {"alpha": 1.5, "gamma": 0.9}),
             ("celu", "Celu", {"alpha": 1.5}), ("thresholded", "ThresholdedRelu", {"alpha": 0.4}),
             ("hard_sigmoid", "HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
             ("hard_swish", "HardSwish", {}), ("softplus", "Softplus", {}),
             ("mish", "Mish", {})]
    nodes = [helper.make_node(op, ["x"], [name], name=name, **attrs)
             for name, op, attrs in cases]
    nodes.append(helper.make_node("PRelu", ["x", "slope"], ["prelu"], name="prelu"))
    outputs = [value(name, FLOAT, shape) for name, _, _ in cases] + [value("prelu", FLOAT, shape)]
    slope = numpy_helper.from_array(np.array([[0.1], [-0.2], [0.5]], np.float32), "slope")
    save(model("activations", nodes, [value("x", FLOAT, shape)], outputs, [slope], opset=18),
         "activations.onnx")


def make_pad_and_transpose():
    """Pad in every mode (wrap at opset 19, axes as an input, negative pads
    that crop, a constant value) and ConvTranspose with auto_pad SAME_UPPER
    and SAME_LOWER, output_shape, output_padding, groups and dilations;
    onnxruntime computes the reference."""
    x = value("x", FLOAT, [1, 2, 4, 5])
    pad_cases = [("constant", {"mode": "constant"}, [0, 0, 1, -1, 0, 0, 2, 1], "value"),
                 ("reflect", {"mode": "reflect"}, [0, 0, 3, 2, 0, 0, 1, 4], None),
                 ("edge", {"mode": "edge"}, [0, 0, 2, 0, 0, 0, 3, 1], None),
                 ("wrap", {"mode": "wrap"}, [0, 0, 5, 1, 0, 0, 2, 7], None)]
    nodes, outputs, inits = [], [], [scalar("value", 0.75)]
    for name, attrs, pads, constant in pad_cases:
        inputs = ["x", name + "_pads"] + ([constant] if constant else [])
        nodes.append(helper.make_node("Pad", inputs, ["pad_" + name], name="pad_" + name,
                                      **attrs))
        inits.append(ints(name + "_pads", pads))
        outputs.append(value("pad_" + name, FLOAT, None))
    nodes.append(helper.make_node("Pad", ["x", "axes_pads", "", "axes"], ["pad_axes"],
                                  name="pad_axes", mode="edge"))
    inits += [ints("axes_pads", [2, 0, 1, 3]), ints("axes", [3, -2])]
    outputs.append(value("pad_axes", FLOAT, None))
    transpose_cases = [("same_upper", {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, [2, 3, 3, 3]),
                       ("same_lower", {"auto_pad": "SAME_LOWER", "strides": [2, 2]}, [2, 3, 3, 3]),
                       ("output_shape", {"output_shape": [9, 10], "strides": [2, 2]},
                        [2, 1, 3, 3]),
                       ("grouped", {"group": 2, "dilations": [2, 1], "strides": [1, 2],
                                    "output_padding": [0, 1], "pads": [1, 0, 0, 1]},
                        [2, 2, 3, 2])]
    for i, (name, attrs, filter_shape) in enumerate(transpose_cases):
        nodes.append(helper.make_node("ConvTranspose", ["x", name + "_w"], ["ct_" + name],
                                      name="ct_" + name, **attrs))
        inits.append(weights(name + "_w", filter_shape, 93 + i))
        outputs.append(value("ct_" + name, FLOAT, None))
    # Output shapes left to onnxruntime (the checker wants them given).
    save(model("pad_and_transpose", nodes, [x], outputs, inits, opset=19, check=False),
         "pad_and_transpose.onnx")


def make_positions():
    """ArgMax/ArgMin (ties among integers, select_last_index, keepdims 0),
    CumSum (exclusive, reverse), OneHot (negative indices, axis 0, int64
    values), DepthToSpace (DCR, CRD), SpaceToDepth, and ReduceL1,
    ReduceSumSquare and ReduceLogSumExp; onnxruntime computes the reference."""
    nodes = [
        helper.make_node("ArgMax", ["xi"], ["argmax_first"], name="argmax_first", axis=1),
        helper.make_node("ArgMax", ["xi"], ["argmax_last"], name="argmax_last", axis=0,
                         keepdims=0, select_last_index=1),
        helper.make_node("ArgMin", ["xf"], ["argmin"], name="argmin", axis=-1, keepdims=0),
        helper.make_node("CumSum", ["xf", "axis2"], ["cumsum"], name="cumsum"),
        helper.make_node("CumSum", ["xf", "axis1"], ["cumsum_rev"], name="cumsum_rev",
                         exclusive=1, reverse=1),
        helper.make_node("OneHot", ["ids", "depth", "on_off"], ["onehot"], name="onehot",
                         axis=0),
        helper.make_node("DepthToSpace", ["xf"], ["d2s_dcr"], name="d2s_dcr", blocksize=2),
        helper.make_node("DepthToSpace", ["xf"], ["d2s_crd"], name="d2s_crd", blocksize=2,
                         mode="CRD"),
        helper.make_node("SpaceToDepth", ["xf"], ["s2d"], name="s2d", blocksize=2),
        helper.make_node("ReduceL1", ["xf", "axes23"], ["l1"], name="l1"),
        helper.make_node("ReduceSumSquare", ["xf", "axes23"], ["sumsq"], name="sumsq", keepdims=0),
        helper.make_node("ReduceLogSumExp", ["xf", "axes1"], ["lse"], name="lse", keepdims=0),
    ]
    inits = [ints("axis2", [2]), numpy_helper.from_array(np.array(1, np.int32), "axis1"),
             ints("depth", [4]), ints("on_off", [-3, 5]), ints("axes23", [2, 3]),
             ints("axes1", [1])]
    outputs = [value(n.output[0], FLOAT if n.op_type not in ("ArgMax", "ArgMin", "OneHot")
                     else INT64, None) for n in nodes]
    inputs = [value("xf", FLOAT, [2, 8, 4, 4]), value("xi", INT64, [3, 5]),
              value("ids", INT64, [3, 2])]
    # Output shapes left to onnxruntime (the checker wants them given).
    save(model("positions", nodes, inputs, outputs, inits, opset=18, check=False),
         "positions.onnx")


def make_einsum():
    """Einsum: a batched product, implicit output, a contraction over two
    letters with letters summed away first, upper case, an outer product,
    one-operand transpose and sum; onnxruntime computes the reference."""
    cases = [("bmm", "bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]),
             ("implicit", "ij,jk", [[3, 4], [4, 5]]),
             ("two_contracted", "abc,bcd->ad", [[2, 3, 4], [3, 4, 5]]),
             ("summed_first", "ijx,jky->ik", [[2, 3, 4], [3, 5, 2]]),
             ("upper", "Bij,Bkj->Bik", [[2, 3, 4], [2, 5, 4]]),
             ("outer", "i,j->ij", [[3], [4]]),
             ("transpose_sum", "ijk->ki", [[2, 3, 4]])]
    nodes, inputs, outputs = [], [], []
    for name, equation, shapes in cases:
        names = ["%s_%d" % (name, i) for i in range(len(shapes))]
        nodes.append(helper.make_node("Einsum", names, [name], name=name, equation=equation))
        inputs += [value(n, FLOAT, s) for n, s in zip(names, shapes)]
        outputs.append(value(name, FLOAT, None))
    save(model("einsum", nodes, inputs, outputs, [], opset=12, check=False), "einsum.onnx")


def make_special_values():
    """Ops whose answer depends on infinities, NaNs and integer extremes:
    ArgMax and ArgMin over NaN rows, ArgMin of int32 at INT32_MIN,
    ReduceLogSumExp of rows of -inf and with +inf, CumSum past an inf,
    OneHot with large int64 values, ReduceSumSquare with noop_with_empty_axes;
    hand-picked inputs, onnxruntime's outputs (special_values.reference.npz)."""
    nodes = [helper.make_node("ArgMax", ["f"], ["argmax"], name="argmax", axis=1),
             helper.make_node("ArgMin", ["f"], ["argmin"], name="argmin", axis=1),
             helper.make_node("ArgMin", ["i"], ["argmin_int"], name="argmin_int", axis=1),
             helper.make_node("ReduceLogSumExp", ["g", "axes1"], ["lse"], name="lse", keepdims=0),
             helper.make_node("CumSum", ["g", "axis1"], ["cumsum"], name="cumsum"),
             helper.make_node("OneHot", ["ids", "depth", "big"], ["onehot"], name="onehot"),
             helper.make_node("ReduceSumSquare", ["g"], ["noop"], name="noop",
                              noop_with_empty_axes=1)]
    inits = [ints("axes1", [1]), ints("axis1", [1]), ints("depth", [3]),
             ints("big", [-(1 << 40) - 3, (1 << 40) + 1])]
    inf, nan = np.inf, np.nan
    feeds = {"f": np.array([[1, nan, 3, 0], [nan, nan, nan, nan], [-inf, -inf, -inf, -inf]],
                           np.float32),
             "i": np.array([[-(1 << 31), 5, (1 << 31) - 1], [7, 7, -3]], np.int32),
             "g": np.array([[-inf, -inf, -inf], [inf, 1, 2], [-inf, 0, 1], [1, inf, 2]],
                           np.float32),
             "ids": np.array([[0, 2], [-1, 3]], np.int64)}
    inputs = [value(k, {np.float32: FLOAT, np.int32: TensorProto.INT32,
                        np.int64: INT64}[v.dtype.type], list(v.shape)) for k, v in feeds.items()]
    outputs = [value(n.output[0], INT64 if n.op_type in ("ArgMax", "ArgMin", "OneHot")
                     else FLOAT, None) for n in nodes]
    m = model("special_values", nodes, inputs, outputs, inits, opset=18, check=False)
    save_with_reference("special_values", m, feeds)


def save_with_reference(name, m, feeds):
    """NAME.onnx, and NAME.reference.npz of the hand-picked feeds and
    onnxruntime's outputs on them."""
    import onnxruntime
    save(m, name + ".onnx")
    session = onnxruntime.InferenceSession(m.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    results = session.run(None, feeds)
    arrays = {"in." + k: v for k, v in feeds.items()}
    arrays.update({"out." + o.name: r for o, r in zip(m.graph.output, results)})
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    write_bytes(name + ".reference.npz", buffer.getvalue())


def make_trig_rounding():
    """Sin, Cos, Atan, Floor, Ceil, Round (halves to even), Sign (of floats
    with 0, -0 and NaN, and of int64), IsNaN and IsInf (each detection), and
    ScatterND at constant indices (negative ones, a slice per tuple, a tuple
    written twice: the last wins in both) into a run-time tensor:
    what torch's exporters write for rotary embeddings, adaptive pooling,
    softmax's masked rows and Swin's shifted-window mask. Hand-picked
    inputs, onnxruntime's outputs."""
    nodes = [helper.make_node(op, ["f"], [op.lower()], name=op.lower())
             for op in ("Sin", "Cos", "Atan", "Floor", "Ceil", "Round", "Sign")]
    nodes += [helper.make_node("Sign", ["n"], ["sign_int"], name="sign_int"),
              helper.make_node("IsNaN", ["g"], ["isnan"], name="isnan"),
              helper.make_node("IsInf", ["g"], ["isinf"], name="isinf"),
              helper.make_node("IsInf", ["g"], ["isinf_pos"], name="isinf_pos",
                               detect_negative=0),
              helper.make_node("IsInf", ["g"], ["isinf_neg"], name="isinf_neg",
                               detect_positive=0),
              helper.make_node("ScatterND", ["d", "rows", "r"], ["scatter_rows"],
                               name="scatter_rows"),
              helper.make_node("ScatterND", ["d", "cells", "c"], ["scatter_cells"],
                               name="scatter_cells")]
    inits = [numpy_helper.from_array(np.array([[2], [-4], [0]], np.int64), "rows"),
             numpy_helper.from_array(np.array([[[0, 1], [3, -1]], [[1, 2], [0, 1]]], np.int64),
                                     "cells")]
    inf, nan = np.inf, np.nan
    feeds = {"f": np.array([[0.5, -0.5, 1.5, 2.5, -2.5], [-0.0, 0.0, 3.7, -3.7, 1e8],
                            [100.25, -7.5, 0.49999997, 1e-30, -1.0]], np.float32),
             "n": np.array([-(1 << 40), -1, 0, 1, 5], np.int64),
             "g": np.array([[inf, -inf, nan, 0.0], [1e38, -1e38, 3.0, -nan]], np.float32),
             "d": rng(30).uniform(-1, 1, (4, 3)).astype(np.float32),
             "r": rng(31).uniform(-1, 1, (3, 3)).astype(np.float32),
             "c": np.array([[10, 11], [12, 13]], np.float32)}
    inputs = [value(k, FLOAT if v.dtype == np.float32 else INT64, list(v.shape))
              for k, v in feeds.items()]
    outputs = [value(n.output[0], TensorProto.BOOL if n.op_type in ("IsNaN", "IsInf")
                     else INT64 if n.name == "sign_int" else FLOAT, None) for n in nodes]
    save_with_reference("trig_rounding",
                        model("trig_rounding", nodes, inputs, outputs, inits, opset=20,
                              check=False), feeds)


def typed_inputs(feeds):
    """The graph inputs of float32, int64 and int32 feeds, as they are."""
    types = {np.dtype(np.float32): FLOAT, np.dtype(np.int64): INT64,
             np.dtype(np.int32): TensorProto.INT32}
    return [value(k, types[v.dtype], list(v.shape)) for k, v in feeds.items()]


def make_cross_entropy_loss():
    """SoftmaxCrossEntropyLoss with the mean reduction, what torch.onnx
    writes for F.cross_entropy inside a model (transformers' models given
    labels): scores [N, C] against int64 labels; [N, C, d] with int32 labels
    and an ignore_index among the classes; [N, C, d1, d2] with -100 ignored
    (PyTorch's default) on some positions. onnxruntime's outputs."""
    nodes = [helper.make_node("SoftmaxCrossEntropyLoss", ["s2", "l2"], ["plain"], name="plain"),
             helper.make_node("SoftmaxCrossEntropyLoss", ["s3", "l3"], ["inside"],
                              name="inside", ignore_index=2),
             helper.make_node("SoftmaxCrossEntropyLoss", ["s4", "l4"], ["padded"],
                              name="padded", ignore_index=-100, reduction="mean")]
    labels4 = rng(42).integers(0, 5, (2, 3, 4)).astype(np.int64)
    labels4[0, 1, :] = -100
    labels4[1, :, 3] = -100
    feeds = {"s2": rng(40).uniform(-3, 3, (6, 5)).astype(np.float32),
             "l2": rng(41).integers(0, 5, 6).astype(np.int64),
             "s3": rng(43).uniform(-3, 3, (3, 5, 7)).astype(np.float32),
             "l3": rng(44).integers(0, 5, (3, 7)).astype(np.int32),
             "s4": rng(45).uniform(-3, 3, (2, 5, 3, 4)).astype(np.float32),
             "l4": labels4}
    inputs = typed_inputs(feeds)
    outputs = [value(n.output[0], FLOAT, []) for n in nodes]
    save_with_reference("cross_entropy_loss",
                        model("cross_entropy_loss", nodes, inputs, outputs, opset=13), feeds)


def make_nll_loss():
    """NegativeLogLikelihoodLoss of a LogSoftmax over the classes, what the
    dynamo exporter writes for F.nll_loss(F.log_softmax(x, 1), y) inside a
    model: [N, C] against int64 labels, and [N, C, d] against int32 labels
    with -100 ignored on some positions. onnxruntime's outputs."""
    nodes = [helper.make_node("LogSoftmax", ["s2"], ["p2"], name="log_softmax2", axis=1),
             helper.make_node("NegativeLogLikelihoodLoss", ["p2", "l2"], ["plain"],
                              name="plain"),
             helper.make_node("LogSoftmax", ["s3"], ["p3"], name="log_softmax3", axis=1),
             helper.make_node("NegativeLogLikelihoodLoss", ["p3", "l3"], ["padded"],
                              name="padded", ignore_index=-100, reduction="mean")]
    labels3 = rng(48).integers(0, 5, (3, 7)).astype(np.int32)
    labels3[0, 4:] = -100
    labels3[2, 1] = -100
    feeds = {"s2": rng(46).uniform(-3, 3, (6, 5)).astype(np.float32),
             "l2": rng(47).integers(0, 5, 6).astype(np.int64),
             "s3": rng(49).uniform(-3, 3, (3, 5, 7)).astype(np.float32),
             "l3": labels3}
    inputs = typed_inputs(feeds)
    outputs = [value(n.output[0], FLOAT, []) for n in nodes[1::2]]
    save_with_reference("nll_loss", model("nll_loss", nodes, inputs, outputs, opset=13), feeds)


def make_weighted_losses():
    """SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss with class
    weights, as torch.onnx writes F.cross_entropy(weight=) and
    F.nll_loss(weight=): over [N, C] against int64 labels, over [N, C, d]
    against int32 labels with -100 ignored on some positions, and
    NegativeLogLikelihoodLoss of scores no LogSoftmax makes, with weights
    and without (-x[label] averaged); a class ignored (ignore_index inside
    [0, C)) of int64 labels, and of labels cast to int32 first (kilnc marks
    the input behind the cast). onnxruntime's outputs."""
    w = numpy_helper.from_array(np.array([1.0, 3.0, 0.5, 2.0, 1.5], np.float32), "w")
    nodes = [helper.make_node("SoftmaxCrossEntropyLoss", ["s2", "l2", "w"], ["ce"], name="ce"),
             helper.make_node("SoftmaxCrossEntropyLoss", ["s3", "l3", "w"], ["ce_ignoring"],
                              name="ce_ignoring", ignore_index=-100),
             helper.make_node("LogSoftmax", ["s2"], ["p2"], name="log_softmax", axis=1),
             helper.make_node("NegativeLogLikelihoodLoss", ["p2", "l2", "w"], ["nll"],
                              name="nll"),
             helper.make_node("NegativeLogLikelihoodLoss", ["s3", "l3", "w"], ["nll_scores"],
                              name="nll_scores", ignore_index=-100),
             helper.make_node("NegativeLogLikelihoodLoss", ["s2", "l2"], ["nll_unweighted"],
                              name="nll_unweighted"),
             helper.make_node("NegativeLogLikelihoodLoss", ["s2", "l2", "w"],
                              ["nll_ignoring_class"], name="nll_ignoring_class", ignore_index=2),
             helper.make_node("Cast", ["l4"], ["l4_32"], name="cast", to=TensorProto.INT32),
             helper.make_node("SoftmaxCrossEntropyLoss", ["s2", "l4_32", "w"], ["ce_cast"],
                              name="ce_cast", ignore_index=1)]
    labels3 = rng(53).integers(0, 5, (3, 7)).astype(np.int32)
    labels3[0, 4:] = -100
    labels3[2, 1] = -100
    feeds = {"s2": rng(51).uniform(-3, 3, (6, 5)).astype(np.float32),
             "l2": rng(52).integers(0, 5, 6).astype(np.int64),
             "s3": rng(54).uniform(-3, 3, (3, 5, 7)).astype(np.float32),
             "l3": labels3,
             "l4": rng(55).integers(0, 5, 6).astype(np.int64)}
    outputs = [value(n.output[0], FLOAT, []) for n in nodes
               if n.op_type not in ("LogSoftmax", "Cast")]
    save_with_reference("weighted_losses", model("weighted_losses", nodes, typed_inputs(feeds),
                                                 outputs, [w], opset=13), feeds)


def make_group_norm():
    """GroupNormalization at opset 18 (scale and bias per group) and 21 (per
    channel), and InstanceNormalization over 1-D and 3-D inputs."""
    def group_model(opset, per):
        node = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], name="gn",
                                num_groups=3, epsilon=1e-3)
        inst = helper.make_node("InstanceNormalization", ["x3", "is", "ib"], ["y3"],
                                name="in3d", epsilon=1e-4)
        inst1 = helper.make_node("InstanceNormalization", ["x1", "is", "ib"], ["y1"],
                                 name="in1d")
        return model("group_norm_%d" % opset, [node, inst, inst1],
                     [value("x", FLOAT, [2, 6, 4, 5]), value("x3", FLOAT, [2, 6, 2, 3, 4]),
                      value("x1", FLOAT, [3, 6, 7])],
                     [value("y", FLOAT, [2, 6, 4, 5]), value("y3", FLOAT, [2, 6, 2, 3, 4]),
                      value("y1", FLOAT, [3, 6, 7])],
                     [weights("s", [per], 72), weights("b", [per], 73), weights("is", [6], 74),
                      weights("ib", [6], 75)], opset=opset,
                     check=opset >= 21)  # the checker calls GroupNormalization-18 deprecated
    save(group_model(18, 3), "group_norm_opset18.onnx")
    save(group_model(21, 6), "group_norm_opset21.onnx")


def make_resize_modes():
    """Resize by linear and cubic interpolation under each coordinate
    transformation, cubic with another coefficient and exclude_outside,
    shrinking, nearest to fractional sizes by each rounding, and opset 10's
    linear mode; onnxruntime computes the reference."""
    def resize(name, attrs, sizes=None, scales=None, x="x"):
        inputs = [x, "", scales or "", sizes or ""]
        while inputs[-1] == "":
            inputs.pop()
        return helper.make_node("Resize", inputs, [name], name=name, **attrs)
    cases = [("linear_half", {"mode": "linear"}, [1, 2, 9, 5]),
             ("linear_pytorch", {"mode": "linear",
                                 "coordinate_transformation_mode": "pytorch_half_pixel"},
              [1, 2, 1, 11]),
             ("linear_corners", {"mode": "linear",
                                 "coordinate_transformation_mode": "align_corners"},
              [1, 2, 8, 3]),
             ("linear_asym", {"mode": "linear", "coordinate_transformation_mode": "asymmetric"},
              [1, 2, 3, 13]),
             ("linear_sym", {"mode": "linear",
                             "coordinate_transformation_mode": "half_pixel_symmetric"},
              [1, 2, 7, 9]),
             ("cubic_half", {"mode": "cubic"}, [1, 2, 10, 12]),
             ("cubic_exclude", {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1},
              [1, 2, 9, 4]),
             ("cubic_corners", {"mode": "cubic",
                                "coordinate_transformation_mode": "align_corners"},
              [1, 2, 6, 7]),
             ("nearest_ceil", {"mode": "nearest", "nearest_mode": "round_prefer_ceil"},
              [1, 2, 7, 8]),
             ("nearest_floor", {"mode": "nearest", "nearest_mode": "floor",
                                "coordinate_transformation_mode": "asymmetric"},
              [1, 2, 3, 11])]
    nodes, outputs, inits = [], [], []
    for name, attrs, size in cases:
        nodes.append(resize(name, attrs, sizes=name + "_sizes"))
        inits.append(ints(name + "_sizes", size))
        outputs.append(value(name, FLOAT, size))
    nodes.append(resize("linear_scales", {"mode": "linear"}, scales="scales"))
    inits.append(numpy_helper.from_array(np.array([1, 1, 1.5, 0.8], np.float32), "scales"))
    outputs.append(value("linear_scales", FLOAT, [1, 2, 7, 4]))
    save(model("resize_modes", nodes, [value("x", FLOAT, [1, 2, 5, 6])], outputs, inits,
               opset=18),
         "resize_modes.onnx")
    old = helper.make_node("Resize", ["x", "scales"], ["y"], name="resize", mode="linear")
    save(model("resize_linear_opset10", [old], [value("x", FLOAT, [1, 2, 3, 4])],
               [value("y", FLOAT, [1, 2, 6, 10])],
               [numpy_helper.from_array(np.array([1, 1, 2, 2.5], np.float32), "scales")],
               opset=10),
         "resize_linear_opset10.onnx")


# Models whose outputs onnxruntime computes for the reference archives
# (make_onnx_fixtures.save_onnxruntime_references).
ONNXRUNTIME_REFERENCES = [
    "recurrent", "group_norm_opset18", "group_norm_opset21", "resize_modes",
    "resize_linear_opset10", "activations", "pad_and_transpose", "positions", "einsum",
]

# In the order make_onnx_fixtures.main runs them; save_layout1_reference
# reads recurrent.reference.npz, so it runs after the references.
MAKERS = (make_recurrent, make_activations, make_pad_and_transpose, make_positions,
          make_einsum, make_special_values, make_trig_rounding, make_cross_entropy_loss,
          make_nll_loss, make_weighted_losses, make_group_norm, make_resize_modes,
          make_bad_recurrent, make_bad_layer_ops)
