#!/usr/bin/env python3
"""One training step's gradients of the Keras MNIST convnet (bench/peers/
user_models.py, keras_cnn), from Kiln and from TensorFlow in float32, each
against TensorFlow in float64: where Kiln's float32 curve of that model
leaves TensorFlow's (docs/performance.md, "Why momentum and not Adam"),
is it Kiln's rounding or the model?

Kiln's gradients are read back from one plain SGD step at a learning rate of
1000 (g = (w0 - w1) / 1000: the update dwarfs the weights, so the rounding of
w1 costs the recovered gradient about 1e-7 of itself), written by `kiln run
--save`. Run with TensorFlow's Python from the repository root, after
building:

    /work/venv-tf/bin/python bench/keras_cnn_gradients.py [--seed S] [--workdir W]

Prints, per variable, the relative error ||g - g64|| / ||g64|| of
TensorFlow's float32 gradient and of Kiln's, and the same for the forward's
logits.
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
LR = 1000.0


def read_safetensors(path):
    """The f32 tensors of a safetensors file, by name."""
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    out = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] != "F32":
            continue
        begin, end = entry["data_offsets"]
        raw = data[8 + size + begin:8 + size + end]
        out[name] = np.frombuffer(raw, dtype=np.float32).reshape(entry["shape"])
    return out


def tensorflow_step(tf, weights, x, labels, dtype):
    """The logits and each variable's gradient of the mean softmax
    cross-entropy, in `dtype`."""
    v = {k: tf.Variable(tf.constant(w, dtype=dtype)) for k, w in weights.items()}
    with tf.GradientTape() as tape:
        h = tf.nn.conv2d(tf.constant(x, dtype=dtype), v["conv1/kernel"], 1, "SAME")
        h = tf.nn.max_pool2d(tf.nn.relu(h + v["conv1/bias"]), 2, 2, "VALID")
        h = tf.nn.relu(tf.nn.conv2d(h, v["conv2/kernel"], 1, "SAME") + v["conv2/bias"])
        h = tf.reshape(tf.nn.max_pool2d(h, 2, 2, "VALID"), [x.shape[0], -1])
        h = tf.nn.relu(h @ v["fc1/kernel"] + v["fc1/bias"])
        logits = h @ v["fc2/kernel"] + v["fc2/bias"]
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    grads = tape.gradient(loss, v)
    return logits.numpy(), {k: g.numpy() for k, g in grads.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=2, help="the batch's seed")
    parser.add_argument("--workdir", help="keep the files here (default: a temporary folder)")
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    import user_models

    work = args.workdir or tempfile.mkdtemp(prefix="keras-cnn-gradients-")
    os.makedirs(work, exist_ok=True)
    user_models.export_keras("keras_cnn", work)
    weights = dict(np.load(os.path.join(work, "weights.npz")))
    spec = user_models.MODELS["keras_cnn"]
    rng = np.random.default_rng(args.seed)
    x = rng.random(spec["shape"], dtype=np.float32)
    labels = rng.integers(0, spec["classes"], spec["batch"]).astype(np.int32)
    np.savez(os.path.join(work, "data.npz"), x=x, label=labels)
    np.save(os.path.join(work, "x.npy"), x)

    kilnc, kiln = (os.path.join(ROOT, "build", "bin", b) for b in ("kilnc", "kiln"))
    model = os.path.join(work, "model.pb")
    path = lambda name: os.path.join(work, name)
    subprocess.run([kilnc, model, "-o", path("forward.kiln")], check=True)
    subprocess.run([kiln, "run", path("forward.kiln"), "--feed", "x=" + path("x.npy"),
                    "--fetch", spec["output"] + "=" + path("logits.npy")], check=True)
    subprocess.run([kilnc, model, "--train", "--loss=softmax_cross_entropy",
                    "--output=" + spec["output"], "--label=label",
                    "--batch=%d" % spec["batch"], "--optimizer=sgd", "--lr=%g" % LR,
                    "-o", path("train.kiln")], check=True)
    subprocess.run([kiln, "run", path("train.kiln"), "--data", path("data.npz"), "--steps", "1",
                    "--save", path("checkpoint")], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    stepped = read_safetensors(
        path("checkpoint/ckpt-1/model-00000-of-00001.safetensors"))

    logits64, grads64 = tensorflow_step(tf, weights, x, labels, tf.float64)
    logits32, grads32 = tensorflow_step(tf, weights, x, labels, tf.float32)
    relative = lambda a, b: np.linalg.norm(a - b) / np.linalg.norm(b)
    print("%-14s %12s %12s" % ("", "tensorflow", "kiln"))
    print("%-14s %12.3g %12.3g" % ("logits", relative(logits32, logits64),
                                   relative(np.load(path("logits.npy")), logits64)))
    # Kiln names a frozen GraphDef's weights by the op reading them:
    # conv1/kernel is ".../conv1_1/convolution/ReadVariableOp/resource".
    readers = {"conv1/kernel": "conv1_1/convolution/", "conv1/bias": "conv1_1/Reshape/",
               "conv2/kernel": "conv2_1/convolution/", "conv2/bias": "conv2_1/Reshape/",
               "fc1/kernel": "fc1_1/Cast/", "fc1/bias": "fc1_1/BiasAdd/",
               "fc2/kernel": "fc2_1/Cast/", "fc2/bias": "fc2_1/BiasAdd/"}
    for name, before in weights.items():
        (kiln_name,) = [n for n in stepped if readers[name] in n]
        kiln_grad = (before.astype(np.float64) - stepped[kiln_name]) / LR
        print("%-14s %12.3g %12.3g" % (name, relative(grads32[name], grads64[name]),
                                       relative(kiln_grad, grads64[name])))


if __name__ == "__main__":
    main()
