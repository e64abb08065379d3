#!/usr/bin/env python3
"""Checks which Keras 3 layers, activations and keras.ops kiln imports from a
frozen TensorFlow graph, and that those it imports compute as TensorFlow.

    /work/venv-tf/bin/python scripts/check_keras_layers.py [--bin build/bin] [NAME ...]

Each case is a small model (a layer, an activation after a Dense, or a
keras.ops function) frozen for a batch of 2 with
convert_variables_to_constants_v2 as docs/tensorflow.md says; kilnc compiles
it and kiln run's outputs on random inputs (floats in [-2, 2), ints in
[0, 5)) are compared with TensorFlow's (scripts/compare_outputs.py, 1e-5 of
the output's scale). One line per case: `agree`, kilnc's one-line error, or
the disagreement. A development script, not a test: the layers kiln imports
are tested on committed fixtures (test/Import/TensorFlow/).
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_keras_app_fixtures as fixtures  # noqa: E402  (sets up TensorFlow's env)

import numpy as np  # noqa: E402


def build_cases(keras):
    from keras import layers as L

    acts = ["softsign","hard_sigmoid","hard_swish","mish","celu","glu","hard_tanh","hard_shrink","soft_shrink","tanh_shrink","squareplus","sparse_plus","log_sigmoid","relu6","silu","gelu","elu","selu","softplus","exponential","linear","leaky_relu","sparsemax"]
    def seq(shape, *ls, dtype="float32"):
        return keras.Sequential([keras.Input(shape, dtype=dtype)] + list(ls))
    cases = {}
    for a in acts:
        cases["act_"+a] = lambda a=a: seq((8,), L.Dense(8), L.Activation(a))
    cases.update({
     "Conv3D": lambda: seq((4,4,4,2), L.Conv3D(3, 2)),
     "MaxPooling3D": lambda: seq((4,4,4,2), L.MaxPooling3D(2)),
     "AveragePooling3D": lambda: seq((4,4,4,2), L.AveragePooling3D(2)),
     "GlobalMaxPooling3D": lambda: seq((4,4,4,2), L.GlobalMaxPooling3D()),
     "Conv1D": lambda: seq((8,2), L.Conv1D(3, 2, padding="causal", dilation_rate=2)),
     "Conv1DTranspose": lambda: seq((8,2), L.Conv1DTranspose(3, 3, strides=2)),
     "Conv3DTranspose": lambda: seq((4,4,4,2), L.Conv3DTranspose(3, 2, strides=2)),
     "SeparableConv1D": lambda: seq((8,2), L.SeparableConv1D(3, 3)),
     "Conv2D_dilated": lambda: seq((9,9,2), L.Conv2D(3, 3, dilation_rate=(2, 3), padding="same")),
     "DepthwiseConv2D_dilated": lambda: seq((9,9,2), L.DepthwiseConv2D(3, dilation_rate=2, padding="same")),
     "SeparableConv2D_dilated": lambda: seq((9,9,2), L.SeparableConv2D(3, 3, dilation_rate=2)),
     "SeparableConv2D": lambda: seq((8,8,2), L.SeparableConv2D(3, 3)),
     "DepthwiseConv1D": lambda: seq((8,2), L.DepthwiseConv1D(3)),
     "UpSampling1D": lambda: seq((8,2), L.UpSampling1D(2)),
     "UpSampling3D": lambda: seq((4,4,4,2), L.UpSampling3D(2)),
     "Cropping2D": lambda: seq((8,8,2), L.Cropping2D(1)),
     "GroupNormalization": lambda: seq((8,8,4), L.GroupNormalization(2)),
     "LayerNormalization": lambda: seq((8,), L.LayerNormalization()),
     "UnitNormalization": lambda: seq((8,), L.UnitNormalization()),
     "SpectralNormalization": lambda: seq((8,), L.SpectralNormalization(L.Dense(4))),
     "RMSNormalization": lambda: seq((8,), L.RMSNormalization()),
     "Normalization": lambda: seq((8,), L.Normalization(mean=0.5, variance=2.0)),
     "Discretization": lambda: seq((8,), L.Discretization(bin_boundaries=[0.0, 1.0])),
     "CategoryEncoding_onehot": lambda: seq((1,), L.CategoryEncoding(5, output_mode="one_hot"), dtype="int32"),
     "CategoryEncoding_multi": lambda: seq((3,), L.CategoryEncoding(5, output_mode="multi_hot"), dtype="int32"),
     "CategoryEncoding_count": lambda: seq((3,), L.CategoryEncoding(5, output_mode="count"), dtype="int32"),
     "Hashing": lambda: seq((3,), L.Hashing(7), dtype="int32"),
     "IntegerLookup": lambda: seq((3,), L.IntegerLookup(vocabulary=[1,2,3]), dtype="int32"),
     "Attention": lambda: (lambda i: keras.Model(i, L.Attention()([i, i])))(keras.Input((4,8))),
     "AdditiveAttention": lambda: (lambda i: keras.Model(i, L.AdditiveAttention()([i, i])))(keras.Input((4,8))),
     "GroupQueryAttention": lambda: (lambda i: keras.Model(i, L.GroupQueryAttention(4, 4, 2)(i, i)))(keras.Input((4,8))),
     "MultiHeadAttention_causal": lambda: (lambda i: keras.Model(i, L.MultiHeadAttention(2, 4)(i, i, use_causal_mask=True)))(keras.Input((4,8))),
     "Softmax_axis": lambda: seq((4,8), L.Softmax(axis=1)),
     "PReLU": lambda: seq((8,), L.PReLU()),
     "ReLU_max": lambda: seq((8,), L.ReLU(max_value=3.0, negative_slope=0.1, threshold=0.5)),
     "RepeatVector": lambda: seq((8,), L.RepeatVector(3)),
     "Permute": lambda: seq((4,8), L.Permute((2,1))),
     "TimeDistributed": lambda: seq((4,8), L.TimeDistributed(L.Dense(3))),
     "ConvLSTM1D": lambda: seq((3,8,2), L.ConvLSTM1D(2, 3)),
     "GRU_unroll": lambda: seq((4,8), L.GRU(4)),
     "Bidirectional_LSTM_seq": lambda: seq((4,8), L.Bidirectional(L.LSTM(4, return_sequences=True))),
     "GlobalAveragePooling1D_mask": lambda: seq((5,), L.Embedding(10, 4, mask_zero=True), L.GlobalAveragePooling1D()),
     "Dot": lambda: (lambda a, b: keras.Model([a,b], L.Dot(axes=1, normalize=True)([a, b])))(keras.Input((8,)), keras.Input((8,))),
     "Minimum_Maximum": lambda: (lambda a, b: keras.Model([a,b], L.Maximum()([a, b]) - L.Minimum()([a,b])))(keras.Input((8,)), keras.Input((8,))),
     "ops_argmax": lambda: (lambda i: keras.Model(i, keras.ops.argmax(i, axis=-1)))(keras.Input((8,))),
     "ops_top_k": lambda: (lambda i: keras.Model(i, keras.ops.top_k(i, 3)[0]))(keras.Input((8,))),
     "ops_cumsum": lambda: (lambda i: keras.Model(i, keras.ops.cumsum(i, axis=-1)))(keras.Input((8,))),
     "ops_prod": lambda: (lambda i: keras.Model(i, keras.ops.prod(i, axis=-1)))(keras.Input((8,))),
     "ops_one_hot": lambda: (lambda i: keras.Model(i, keras.ops.one_hot(i, 5)))(keras.Input((3,), dtype="int32")),
     "ops_sort": lambda: (lambda i: keras.Model(i, keras.ops.sort(i, axis=-1)))(keras.Input((8,))),
     "ops_sin_cos": lambda: (lambda i: keras.Model(i, keras.ops.sin(i) + keras.ops.cos(i)))(keras.Input((8,))),
     "ops_floor_round": lambda: (lambda i: keras.Model(i, keras.ops.floor(i) + keras.ops.round(i) + keras.ops.ceil(i)))(keras.Input((8,))),
     "ops_clip_sign": lambda: (lambda i: keras.Model(i, keras.ops.clip(i, -1, 1) * keras.ops.sign(i)))(keras.Input((8,))),
     "ops_mod": lambda: (lambda i: keras.Model(i, keras.ops.mod(i, 3.0) + keras.ops.floor_divide(i, 2.0)))(keras.Input((8,))),
     "ops_logsumexp": lambda: (lambda i: keras.Model(i, keras.ops.logsumexp(i, axis=-1)))(keras.Input((8,))),
     "ops_norm": lambda: (lambda i: keras.Model(i, keras.ops.norm(i, axis=-1)))(keras.Input((8,))),
     "ops_var_std": lambda: (lambda i: keras.Model(i, keras.ops.var(i, axis=-1) + keras.ops.std(i, axis=-1)))(keras.Input((8,))),
     "ops_square_abs": lambda: (lambda i: keras.Model(i, keras.ops.square(i) + keras.ops.abs(i) + keras.ops.log1p(keras.ops.abs(i)) + keras.ops.expm1(i)))(keras.Input((8,))),
     "ops_tanh_atan": lambda: (lambda i: keras.Model(i, keras.ops.arctan(i) + keras.ops.sinh(i)))(keras.Input((8,))),
     "ops_where": lambda: (lambda i: keras.Model(i, keras.ops.where(i > 0, i, 0.0)))(keras.Input((8,))),
     "ops_triu": lambda: (lambda i: keras.Model(i, keras.ops.triu(i)))(keras.Input((4,4))),
     "ops_tril_k": lambda: (lambda i: keras.Model(i, keras.ops.tril(i, -1)))(keras.Input((4,4))),
     "ops_matmul_bcast": lambda: (lambda i: keras.Model(i, keras.ops.matmul(i, keras.ops.transpose(i, (0,2,1)))))(keras.Input((4,4))),
     "ops_erfinv": lambda: (lambda i: keras.Model(i, keras.ops.erfinv(keras.ops.tanh(i))))(keras.Input((8,))),
    })
    return cases


def check(tf, name, model, bin_dir, folder):
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)

    specs = [tf.TensorSpec([2] + list(x.shape[1:]), x.dtype, name="x%d" % k)
             for k, x in enumerate(model.inputs)]
    function = tf.function(lambda *xs: model(list(xs) if len(xs) > 1 else xs[0],
                                             training=False))
    graph = convert_variables_to_constants_v2(
        function.get_concrete_function(*specs)).graph.as_graph_def()
    path = os.path.join(folder, name + ".pb")
    with open(path, "wb") as f:
        f.write(graph.SerializeToString())
    rng = np.random.default_rng(0)
    feeds = [rng.uniform(-2, 2, s.shape).astype(np.float32) if s.dtype.is_floating
             else rng.integers(0, 5, s.shape).astype(s.dtype.as_numpy_dtype)
             for s in specs]
    expected = function(*[tf.constant(f) for f in feeds]).numpy()
    artifact = os.path.join(folder, name + ".kiln")
    compiled = subprocess.run([os.path.join(bin_dir, "kilnc"), path, "-o", artifact],
                              capture_output=True, text=True)
    if compiled.returncode != 0:
        return compiled.stderr.strip().split("error: ", 1)[-1]
    reference = os.path.join(folder, name + ".reference.npz")
    arrays = {"in.x%d" % k: f for k, f in enumerate(feeds)}
    arrays["out.Identity"] = expected
    np.savez(reference, **arrays)
    compared = subprocess.run(
        [sys.executable, os.path.join(fixtures.ROOT, "scripts", "compare_outputs.py"),
         os.path.join(bin_dir, "kiln"), artifact, reference],
        capture_output=True, text=True)
    return (compared.stdout + compared.stderr).strip().replace("\n", "; ")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=os.path.join(fixtures.ROOT, "build", "bin"))
    parser.add_argument("only", nargs="*")
    args = parser.parse_args()
    import tensorflow as tf
    import keras

    cases = build_cases(keras)
    failed = checked = 0
    with tempfile.TemporaryDirectory() as folder:
        for name, build in cases.items():
            if args.only and name not in args.only:
                continue
            keras.utils.set_random_seed(0)
            try:
                result = check(tf, name, build(), args.bin, folder)
            except Exception as error:  # noqa: BLE001  (TensorFlow's own refusal)
                result = "TensorFlow fails: " + str(error).strip().splitlines()[0][:100]
            checked += 1
            failed += "agree" not in result or "FAILED" in result
            print("%-28s %s" % (name, result), flush=True)
    print("%d of %d cases do not import or differ" % (failed, checked))


if __name__ == "__main__":
    main()
