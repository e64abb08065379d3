#!/usr/bin/env python3
"""Writes Keras 3 models as users write them, frozen as GraphDefs
(convert_variables_to_constants_v2, as docs/tensorflow.md says), with
TensorFlow's outputs, to test/Inputs/frameworks/:

- keras_embedding.pb: ids [4, 8] int32 -> Embedding(50, 16) ->
  GlobalAveragePooling1D -> Dense(32, activation="gelu") -> Dense(4).
  Keras 3's Embedding wraps negative ids (Less, AddV2, SelectV2 before its
  GatherV2) and its default gelu is the exact one, written with Erfc.
- keras_upsample.pb: x [2, 6, 6, 3] -> Conv2D(4, 3, same) ->
  UpSampling2D(2) (Tile, Pack, Reshape) -> GlobalAveragePooling2D ->
  Dense(3).
- keras_recurrent.pb: x [4, 6, 8] -> LSTM(16, return_sequences=True) ->
  GRU(12, return_sequences=True) -> SimpleRNN(8) -> Dense(5), each with
  unroll=True (without it Keras writes a while loop, which kiln refuses):
  Unpack per step, Split of the gates, MatMul, Sigmoid, Tanh, Pack.
- keras_activations.pb: x [4, 8] -> Dense(16, elu) -> Dense(16, selu) ->
  Dense(16, softplus) -> Dense(16) -> LeakyReLU(0.2) -> Dense(3), inputs
  spread over [-3, 3).

Each NAME.reference.npz holds the input (`in.NAME`) and TensorFlow's output
(`out.Identity`) for scripts/compare_outputs.py (the same on every run; the
GraphDef's bytes may differ in what TensorFlow numbers, not in what it
computes). Run from the repository root with TensorFlow's Python:

    /work/venv-tf/bin/python scripts/make_keras_fixtures.py
"""

import io
import os
import sys

import numpy as np

OUT = os.path.join("test", "Inputs", "frameworks")


def freeze(model, spec, name, needed_ops, x):
    """Writes NAME.pb and NAME.reference.npz for `model` called on `spec`."""
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)

    function = tf.function(lambda inputs: model(inputs, training=False))
    frozen = convert_variables_to_constants_v2(function.get_concrete_function(spec))
    graph = frozen.graph.as_graph_def()
    ops = {node.op for node in graph.node}
    for op in needed_ops:
        assert op in ops, "Keras no longer writes %s: %s" % (op, sorted(ops))
    with open(os.path.join(OUT, name + ".pb"), "wb") as f:
        f.write(graph.SerializeToString())
    (fetch,) = frozen.outputs
    result = frozen(tf.constant(x))
    y = (result[0] if isinstance(result, (list, tuple)) else result).numpy()
    buffer = io.BytesIO()
    np.savez(buffer, **{"in." + spec.name: x, "out.%s" % fetch.name.split(":")[0]: y})
    with open(os.path.join(OUT, name + ".reference.npz"), "wb") as f:
        f.write(buffer.getvalue())


def make_embedding(keras, tf):
    keras.utils.set_random_seed(5)
    ids = keras.Input((8,), batch_size=4, dtype="int32", name="ids")
    h = keras.layers.Embedding(50, 16, name="embed")(ids)
    h = keras.layers.GlobalAveragePooling1D(name="pool")(h)
    h = keras.layers.Dense(32, activation="gelu", name="hidden")(h)
    model = keras.Model(ids, keras.layers.Dense(4, name="logits")(h))
    x = np.random.default_rng(6).integers(0, 50, (4, 8)).astype(np.int32)
    x[0, :2] = [-1, -50]  # Wrapped as Python indexes are: 49 and 0.
    freeze(model, tf.TensorSpec([4, 8], tf.int32, name="ids"), "keras_embedding",
           ("Less", "SelectV2", "GatherV2", "Erfc"), x)


def make_upsample(keras, tf):
    keras.utils.set_random_seed(7)
    image = keras.Input((6, 6, 3), batch_size=2, name="x")
    h = keras.layers.Conv2D(4, 3, padding="same", name="conv")(image)
    h = keras.layers.UpSampling2D(2, name="up")(h)
    h = keras.layers.GlobalAveragePooling2D(name="pool")(h)
    model = keras.Model(image, keras.layers.Dense(3, name="logits")(h))
    x = np.random.default_rng(8).uniform(-1, 1, (2, 6, 6, 3)).astype(np.float32)
    freeze(model, tf.TensorSpec([2, 6, 6, 3], tf.float32, name="x"), "keras_upsample",
           ("Tile",), x)


def make_recurrent(keras, tf):
    keras.utils.set_random_seed(9)
    x = keras.Input((6, 8), batch_size=4, name="x")
    h = keras.layers.LSTM(16, return_sequences=True, unroll=True, name="lstm")(x)
    h = keras.layers.GRU(12, return_sequences=True, unroll=True, name="gru")(h)
    h = keras.layers.SimpleRNN(8, unroll=True, name="rnn")(h)
    model = keras.Model(x, keras.layers.Dense(5, name="logits")(h))
    xs = np.random.default_rng(10).uniform(-1, 1, (4, 6, 8)).astype(np.float32)
    freeze(model, tf.TensorSpec([4, 6, 8], tf.float32, name="x"), "keras_recurrent",
           ("Unpack", "Split"), xs)


def make_activations(keras, tf):
    keras.utils.set_random_seed(11)
    x = keras.Input((8,), batch_size=4, name="x")
    h = keras.layers.Dense(16, activation="elu", name="elu")(x)
    h = keras.layers.Dense(16, activation="selu", name="selu")(h)
    h = keras.layers.Dense(16, activation="softplus", name="softplus")(h)
    h = keras.layers.LeakyReLU(0.2, name="leaky")(keras.layers.Dense(16, name="pre")(h))
    model = keras.Model(x, keras.layers.Dense(3, name="logits")(h))
    xs = np.random.default_rng(12).uniform(-3, 3, (4, 8)).astype(np.float32)
    freeze(model, tf.TensorSpec([4, 8], tf.float32, name="x"), "keras_activations",
           ("Elu", "Selu", "Softplus", "LeakyRelu"), xs)


def main():
    if not os.path.isdir(OUT):
        sys.exit(f"run from the repository root ({OUT} not found)")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ["KERAS_BACKEND"] = "tensorflow"
    import keras
    import tensorflow as tf

    for make in (make_embedding, make_upsample, make_recurrent, make_activations):
        make(keras, tf)
    return 0


if __name__ == "__main__":
    sys.exit(main())
