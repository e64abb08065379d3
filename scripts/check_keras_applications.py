#!/usr/bin/env python3
"""Checks that keras.applications' models, at full size, and the forms of
Keras' recurrent layers the fixtures leave out import into kiln and compute
and train as TensorFlow does.

    /work/venv-tf/bin/python scripts/check_keras_applications.py [--bin build/bin]
        [--only NAME ...] [--keep DIR]

Each of keras.applications' image classifiers is built with weights=None,
10 classes and classifier_activation=None (the logits); the recurrent forms
(LAYERS: return_state, GRU with reset_after=False, stacked cells, a Masking
layer, ConvLSTM2D) end in Dense(10). Each model's BatchNormalization
statistics, scales and offsets are drawn at random; it is frozen for a batch
of 2 with
convert_variables_to_constants_v2 as docs/tensorflow.md says. kilnc compiles
it for inference and for training (softmax cross-entropy, SGD at rate 0.001);
kiln run's logits are compared with TensorFlow's, and 3 training steps'
losses with the same steps in TensorFlow (float32, by hand). One line per
model: parameters, GraphDef nodes, functions in its library, kilnc's seconds
(inference, training), and the largest relative differences; exits 1 when a
model fails to compile or run, or differs by more than 1e-4.

A development script (it needs TensorFlow and several minutes), not a test:
test/Import/TensorFlow/keras-apps.test checks small models built by the same
keras.applications code against committed fixtures.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_keras_app_fixtures as fixtures  # noqa: E402  (sets up TensorFlow's env)

import numpy as np  # noqa: E402

CLASSES, BATCH, ROWS, STEPS, RATE, RTOL = 10, 2, 6, 3, 0.001, 1e-4

# name: (input size, pixels 0..255 or -1..1)
APPLICATIONS = {
    "ResNet50": (64, False), "ResNet50V2": (64, False), "VGG16": (64, False),
    "MobileNet": (64, False), "MobileNetV2": (64, False),
    "MobileNetV3Small": (64, True), "MobileNetV3Large": (64, True),
    "EfficientNetB0": (64, True), "EfficientNetV2B0": (64, True),
    "DenseNet121": (64, False), "Xception": (71, False), "InceptionV3": (75, False),
    "InceptionResNetV2": (75, False), "NASNetMobile": (224, False),
    "ConvNeXtTiny": (64, True),
}


def application(name):
    """(builder, rows of x) of keras.applications' `name`."""
    size, pixels = APPLICATIONS[name]
    low, high = (0.0, 255.0) if pixels else (-1.0, 1.0)

    def build(keras):
        return getattr(keras.applications, name)(
            weights=None, input_shape=(size, size, 3), classes=CLASSES,
            classifier_activation=None)

    return build, lambda rng: rng.uniform(low, high, (ROWS, size, size, 3)).astype(np.float32)


def layers(body, shape=(6, 8)):
    """(builder, rows of x) of a model of Keras layers over a float x."""
    def build(keras):
        x = keras.Input(shape, name="x")
        return keras.Model(x, keras.layers.Dense(CLASSES)(body(keras.layers, x)))

    return build, lambda rng: rng.uniform(-1, 1, (ROWS,) + shape).astype(np.float32)


def masked_rows(rng):
    """Sequences whose last steps are 0 (what Masking(0.0) skips)."""
    x = rng.uniform(-1, 1, (ROWS, 6, 8)).astype(np.float32)
    for row, length in zip(x, rng.integers(2, 7, ROWS)):
        row[length:] = 0
    return x


# The recurrent layers' other forms (each a while loop kiln unrolls).
LAYERS = {
    "LSTM_return_state": layers(
        lambda L, x: L.Concatenate()(L.LSTM(5, return_state=True)(x))),
    "GRU_reset_before": layers(lambda L, x: L.GRU(5, reset_after=False)(x)),
    "RNN_stacked_cells": layers(lambda L, x: L.RNN([L.LSTMCell(5), L.GRUCell(4)])(x)),
    "Masking_LSTM": (layers(lambda L, x: L.LSTM(5)(L.Masking(0.0)(x)))[0], masked_rows),
    "ConvLSTM2D": layers(lambda L, x: L.Flatten()(L.ConvLSTM2D(2, 3, padding="same")(x)),
                         shape=(3, 5, 5, 2)),
}
MODELS = dict({name: application(name) for name in APPLICATIONS}, **LAYERS)


def run(command):
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(" ".join(command[:2]) + ": " + result.stderr.strip()[-400:])
    return time.perf_counter() - start


def check(tf, keras, name, bin_dir, work):
    build, make_rows = MODELS[name]
    keras.utils.set_random_seed(1)
    rng = np.random.default_rng(1)
    model = build(keras)
    fixtures.randomize_batch_norms(keras, model, rng)
    data = {"x": make_rows(rng), "label": rng.integers(0, CLASSES, ROWS).astype(np.int32)}
    graph = fixtures.freeze(tf, model, (BATCH,) + data["x"].shape[1:])
    pb, data_file = os.path.join(work, name + ".pb"), os.path.join(work, name + ".npz")
    with open(pb, "wb") as f:
        f.write(graph.SerializeToString())
    np.savez(data_file, **data)
    np.save(os.path.join(work, name + ".x.npy"), data["x"][:BATCH])
    expected = fixtures.run_frozen(tf, graph, data["x"][:BATCH])
    kilnc, kiln = os.path.join(bin_dir, "kilnc"), os.path.join(bin_dir, "kiln")
    forward = os.path.join(work, name + ".kiln")
    compile_forward = run([kilnc, pb, "-o", forward])
    logits = os.path.join(work, name + ".logits.npy")
    run([kiln, "run", forward, "--feed", "x=" + os.path.join(work, name + ".x.npy"),
         "--fetch", "Identity=" + logits])
    logits_difference = (np.abs(np.load(logits) - expected).max() /
                         np.abs(expected).max())
    train = os.path.join(work, name + ".train.kiln")
    compile_train = run([kilnc, pb, "--train", "--loss=softmax_cross_entropy",
                         "--output=Identity", "--label=label", "--batch=%d" % BATCH,
                         "--optimizer=sgd", "--lr=%g" % RATE, "-o", train])
    metrics = os.path.join(work, name + ".jsonl")
    run([kiln, "run", train, "--data", data_file, "--steps", str(STEPS),
         "--metrics-out", metrics])
    with open(metrics) as f:
        got = [json.loads(line)["loss"] for line in f if '"loss"' in line][:STEPS]
    want = fixtures.losses(tf, keras, build, model.get_weights(), data, "sgd", RATE,
                           "float32", steps=STEPS, batch=BATCH)
    loss_difference = max(abs(a - b) / abs(b) for a, b in zip(got, want))
    ok = logits_difference <= RTOL and loss_difference <= RTOL and len(got) == STEPS
    print("%-18s %s: %9d parameters, %5d nodes, %d functions; kilnc %.1f s, training "
          "%.1f s; logits %.1e, losses %.1e (%.4f -> %.4f)"
          % (name, "agree" if ok else "FAILED", model.count_params(), len(graph.node),
             len(graph.library.function), compile_forward, compile_train,
             logits_difference, loss_difference, want[0], want[-1]), flush=True)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.path.join("build", "bin"))
    parser.add_argument("--only", nargs="+", choices=sorted(MODELS))
    parser.add_argument("--keep", help="write the files here and keep them")
    args = parser.parse_args()
    import tensorflow as tf
    import keras

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or tmp
        os.makedirs(work, exist_ok=True)
        for name in args.only or MODELS:
            try:
                failures += not check(tf, keras, name, os.path.abspath(args.bin), work)
            except RuntimeError as e:
                failures += 1
                print("%-18s FAILED: %s" % (name, e), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
