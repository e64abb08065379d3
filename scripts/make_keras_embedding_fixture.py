#!/usr/bin/env python3
"""Writes test/Inputs/frameworks/keras_embedding.pb and its reference
outputs: a Keras 3 model as users write one for text, frozen as a GraphDef
(convert_variables_to_constants_v2, as docs/tensorflow.md says):

    ids [4, 8] int32 -> Embedding(50, 16) -> GlobalAveragePooling1D
        -> Dense(32, activation="gelu") -> Dense(4)

Keras 3's Embedding wraps negative ids (Less, AddV2, SelectV2 before its
GatherV2) and its default gelu is the exact one, written with Erfc.
keras_embedding.reference.npz holds the ids (`in.ids`) and TensorFlow's
logits (`out.Identity`) for scripts/compare_outputs.py (the same on every
run; the GraphDef's bytes may differ in what TensorFlow numbers, not in
what it computes). Run from the repository root with TensorFlow's Python:

    /work/venv-tf/bin/python scripts/make_keras_embedding_fixture.py
"""

import io
import os
import sys

import numpy as np

OUT = os.path.join("test", "Inputs", "frameworks")


def main():
    if not os.path.isdir(OUT):
        sys.exit(f"run from the repository root ({OUT} not found)")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ["KERAS_BACKEND"] = "tensorflow"
    import keras
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)

    keras.utils.set_random_seed(5)
    ids = keras.Input((8,), batch_size=4, dtype="int32", name="ids")
    h = keras.layers.Embedding(50, 16, name="embed")(ids)
    h = keras.layers.GlobalAveragePooling1D(name="pool")(h)
    h = keras.layers.Dense(32, activation="gelu", name="hidden")(h)
    model = keras.Model(ids, keras.layers.Dense(4, name="logits")(h))

    function = tf.function(lambda x: model(x, training=False))
    concrete = function.get_concrete_function(tf.TensorSpec([4, 8], tf.int32, name="ids"))
    frozen = convert_variables_to_constants_v2(concrete)
    graph = frozen.graph.as_graph_def()
    ops = {node.op for node in graph.node}
    for op in ("Less", "SelectV2", "GatherV2", "Erfc"):
        assert op in ops, "Keras no longer writes %s: %s" % (op, sorted(ops))
    with open(os.path.join(OUT, "keras_embedding.pb"), "wb") as f:
        f.write(graph.SerializeToString())

    x = np.random.default_rng(6).integers(0, 50, (4, 8)).astype(np.int32)
    x[0, :2] = [-1, -50]  # Wrapped as Python indexes are: 49 and 0.
    (fetch,) = frozen.outputs
    result = frozen(tf.constant(x))
    y = (result[0] if isinstance(result, (list, tuple)) else result).numpy()
    buffer = io.BytesIO()
    np.savez(buffer, **{"in.ids": x, "out.%s" % fetch.name.split(":")[0]: y})
    with open(os.path.join(OUT, "keras_embedding.reference.npz"), "wb") as f:
        f.write(buffer.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
