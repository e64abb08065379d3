#!/usr/bin/env python3
"""Writes the fixtures of TensorFlow's multi-hot features: SparseTensor
inputs looked up by tf.nn.embedding_lookup_sparse and
tf.nn.safe_embedding_lookup_sparse, frozen as TensorFlow users freeze
them, and what TensorFlow computes with them. A development script, never
run by the tests (they read the committed files).

Files (test/Inputs/tf_sparse/):
  lookups.pb            a tf.function of one SparseTensor `ids` ([4, None],
                        int64) returning eight lookups of two frozen tables
                        (20 x 4 and 30 x 3): embedding_lookup_sparse with
                        each combiner (Unique and a gather; so too with
                        allow_fast_lookup for a variable), safe_embedding_
                        lookup_sparse with each combiner (sqrtn over the
                        second table), and one of each over a table
                        computed in the graph (twice a table), where
                        TensorFlow's fast path has the reduction read the
                        table and the ids themselves.
  lookups.reference.npz `in.ids`: four lists of 0 to 4 ids (an empty one in
                        the middle, where embedding_lookup_sparse gives
                        zeros too) padded with -1 to [4, 4]; `out.Identity`
                        ... `out.Identity_7`: TensorFlow's results for them
                        (the frozen graph run by TensorFlow).
  recommender.pb        a Keras 3 functional model: `genres` (a sparse
                        Input, safe_embedding_lookup_sparse mean, 0 to 4 ids
                        per example), `tags` (sparse, embedding_lookup_sparse
                        sqrtn, 1 to 3 ids), `item` (an id, Embedding) and
                        `features` ([3] floats) concatenated, Dense(16, relu),
                        Dense(2): the logits (`Identity`).
  recommender.reference.npz
                        the first 4 rows (`in.genres`, `in.tags` padded with
                        -1 to [4, 4], `in.item`, `in.features`) and the
                        logits.
  recommender.data.npz  24 rows, the lists as a tf.RaggedTensor's parts
                        (`genres.values`, `genres.row_splits`, ...), `item`,
                        `features`, `label`: kiln run --data trains on rows
                        [4(k-1), 4k) modulo 24 at step k.
  recommender_sgd.jsonl, recommender_momentum.jsonl
                        12 steps from the frozen weights on those rows:
                        {"step", "loss" (the model rebuilt in float64),
                        "loss_f32"}, the mean softmax cross-entropy, each
                        step's batch given to TensorFlow as SparseTensors.
                        SGD rate 0.1; momentum rate 0.05, 0.9 (v = 0.9 v + g,
                        w -= lr v); the tables' IndexedSlices applied densely.
  weighted.pb, misread.pb, crossed.pb, huge_const.pb
                        refused graphs: a lookup with sp_weights; a
                        SparseTensor whose values the model also sums; two
                        lookups, one edited to read one SparseTensor's
                        values at the other's indices; a lookup edited to
                        slice the indices at a Const of 2 x 10^9 zeros.

Run from the repository root with TensorFlow's Python (Keras 3):

    /work/venv-tf/bin/python scripts/make_tf_sparse_fixtures.py

Deterministic: fixed seeds, one thread, no oneDNN, nodes in a canonical
order (make_keras_app_fixtures.canonical).
"""

import json
import os
import sys

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["KERAS_BACKEND"] = "tensorflow"

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_keras_app_fixtures import canonical, losses, write_file, write_npz  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "test", "Inputs", "tf_sparse")
BATCH, LIST, ROWS, STEPS, CLASSES = 4, 4, 24, 12, 2
OPTIMIZERS = {"sgd": 0.1, "momentum": 0.05}


def save(name, data):
    write_file(name, data, OUT)


def save_npz(name, arrays):
    write_npz(name, arrays, OUT)


def freeze(tf, function, specs):
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)

    concrete = tf.function(function).get_concrete_function(*specs)
    return canonical(convert_variables_to_constants_v2(concrete).graph.as_graph_def())


def run_frozen(tf, graph_def, feeds, outputs):
    """The frozen graph run by TensorFlow: `feeds` maps Placeholder names to
    arrays."""
    def imported():
        return tf.compat.v1.import_graph_def(
            graph_def, input_map={k + ":0": tf.constant(v) for k, v in feeds.items()},
            return_elements=[name + ":0" for name in outputs])

    return [r.numpy() for r in tf.compat.v1.wrap_function(imported, [])()]


def sparse_feeds(tf, name, lists):
    """The three Placeholders of SparseTensor `name` for `lists`."""
    sparse = tf.ragged.constant(lists, dtype=tf.int64, row_splits_dtype=tf.int64).to_sparse()
    return {name: sparse.indices.numpy(), name + "_1": sparse.values.numpy(),
            name + "_2": sparse.dense_shape.numpy()}


def padded(tf, lists):
    return tf.ragged.constant(lists, dtype=tf.int64).to_tensor(-1, shape=[len(lists), LIST]).numpy()


def make_lookups(tf, rng):
    first = tf.Variable(rng.normal(0, 1, (20, 4)).astype(np.float32))
    second = tf.Variable(rng.normal(0, 1, (30, 3)).astype(np.float32))

    def lookups(ids):
        plain = tf.nn.embedding_lookup_sparse
        safe = tf.nn.safe_embedding_lookup_sparse
        return (plain(first, ids, None, combiner="sum"),
                plain(first, ids, None, combiner="mean"),
                plain(first, ids, None, combiner="sqrtn", allow_fast_lookup=True),
                safe(first, ids, combiner="sum"),
                safe(first, ids, combiner="mean"),
                safe(second, ids, combiner="sqrtn"),
                # A table computed in the graph: TensorFlow's fast path, the
                # reduction reading the table and the ids themselves.
                plain(first * 2.0, ids, None, combiner="sum"),
                safe(second * 2.0, ids, combiner="mean"))

    graph = freeze(tf, lookups, [tf.SparseTensorSpec([BATCH, None], tf.int64)])
    ops = {node.op for node in graph.node}
    assert {"Unique", "SparseSegmentSqrtN", "SparseFillEmptyRows"} <= ops, sorted(ops)
    fast = [node for node in graph.node
            if node.op.startswith("SparseSegment") and node.input[1] in ("ids_1", "ids")]
    assert len(fast) == 1, "one plain lookup of the fast path"
    lists = [[3, 17, 3], [], [19, 0, 5, 11], [8]]
    names = ["Identity"] + ["Identity_%d" % k for k in range(1, 8)]
    results = run_frozen(tf, graph, sparse_feeds(tf, "ids", lists), names)
    direct = lookups(tf.ragged.constant(lists, dtype=tf.int64).to_sparse())
    for a, b in zip(results, direct):
        assert np.array_equal(a, b.numpy())
    save("lookups.pb", graph.SerializeToString(deterministic=True))
    arrays = {"in.ids": padded(tf, lists)}
    arrays.update({"out." + name: r for name, r in zip(names, results)})
    save_npz("lookups.reference.npz", arrays)


def recommender(tf, keras):
    class SparseBag(keras.layers.Layer):
        """A table looked up by a TensorFlow sparse lookup."""

        def __init__(self, rows, dim, combiner, safe, **kwargs):
            super().__init__(**kwargs)
            self.rows, self.dim, self.combiner, self.safe = rows, dim, combiner, safe

        def build(self, shape):
            self.table = self.add_weight(shape=(self.rows, self.dim), name="table",
                                         initializer=keras.initializers.RandomNormal(0, 0.5))

        def call(self, ids):
            if self.safe:
                return tf.nn.safe_embedding_lookup_sparse(self.table.value, ids,
                                                          combiner=self.combiner)
            return tf.nn.embedding_lookup_sparse(self.table.value, ids, None,
                                                 combiner=self.combiner)

        def compute_output_shape(self, shape):
            return (shape[0], self.dim)

    genres = keras.Input(shape=(None,), sparse=True, dtype="int64", name="genres")
    tags = keras.Input(shape=(None,), sparse=True, dtype="int64", name="tags")
    item = keras.Input(shape=(), dtype="int32", name="item")
    features = keras.Input(shape=(3,), name="features")
    parts = [SparseBag(12, 4, "mean", True, name="genre_bag")(genres),
             SparseBag(40, 5, "sqrtn", False, name="tag_bag")(tags),
             keras.layers.Embedding(10, 3, name="items")(item), features]
    hidden = keras.layers.Dense(16, activation="relu", name="hidden")(
        keras.layers.Concatenate()(parts))
    logits = keras.layers.Dense(CLASSES, name="logits")(hidden)
    return keras.Model([genres, tags, item, features], logits)


def recommender_rows(rng):
    genres = [list(rng.integers(0, 12, rng.integers(0, LIST + 1))) for _ in range(ROWS)]
    tags = [list(rng.integers(0, 40, rng.integers(1, 4))) for _ in range(ROWS)]
    return {"genres": genres, "tags": tags,
            "item": rng.integers(0, 10, ROWS).astype(np.int32),
            "features": rng.normal(0, 1, (ROWS, 3)).astype(np.float32),
            "label": rng.integers(0, CLASSES, ROWS).astype(np.int32)}


def batch_inputs(tf, rows, start, count, dtype):
    """The model's inputs for rows [start, start + count)."""
    def sparse(lists):
        return tf.ragged.constant(lists, dtype=tf.int64).to_sparse()

    end = start + count
    return [sparse(rows["genres"][start:end]), sparse(rows["tags"][start:end]),
            tf.constant(rows["item"][start:end]),
            tf.constant(rows["features"][start:end].astype(dtype))]


def make_recommender(tf, keras, rng):
    keras.utils.set_random_seed(3)
    model = recommender(tf, keras)
    rows = recommender_rows(rng)
    sparse = tf.SparseTensorSpec([None, None], tf.int64)

    def serve(genres, tags, item, features):
        return model([genres, tags, item, features])

    graph = freeze(tf, serve, [sparse, sparse, tf.TensorSpec([None], tf.int32),
                               tf.TensorSpec([None, 3], tf.float32)])
    feeds = sparse_feeds(tf, "genres", rows["genres"][:BATCH])
    feeds.update(sparse_feeds(tf, "tags", rows["tags"][:BATCH]))
    feeds.update({"item": rows["item"][:BATCH], "features": rows["features"][:BATCH]})
    (logits,) = run_frozen(tf, graph, feeds, ["Identity"])
    expected = model(batch_inputs(tf, rows, 0, BATCH, np.float32)).numpy()
    assert np.abs(logits - expected).max() <= 1e-6 * np.abs(expected).max()
    save("recommender.pb", graph.SerializeToString(deterministic=True))
    save_npz("recommender.reference.npz", {
        "in.genres": padded(tf, rows["genres"][:BATCH]),
        "in.tags": padded(tf, rows["tags"][:BATCH]),
        "in.item": rows["item"][:BATCH], "in.features": rows["features"][:BATCH],
        "out.Identity": logits})
    data = {"item": rows["item"], "features": rows["features"], "label": rows["label"]}
    for name in ("genres", "tags"):
        ragged = tf.ragged.constant(rows[name], dtype=tf.int64)
        data[name + ".values"] = ragged.values.numpy()
        data[name + ".row_splits"] = ragged.row_splits.numpy()
    save_npz("recommender.data.npz", data)
    weights = model.get_weights()
    for optimizer, rate in OPTIMIZERS.items():
        def curve(dtype):
            return losses(tf, keras, lambda keras: recommender(tf, keras), weights, rows,
                          optimizer, rate, dtype, STEPS, BATCH,
                          lambda start, dtype: batch_inputs(tf, rows, start, BATCH, dtype))

        exact, single = curve("float64"), curve("float32")
        lines = [json.dumps({"step": step, "loss": a, "loss_f32": b})
                 for step, (a, b) in enumerate(zip(exact, single), 1)]
        save("recommender_%s.jsonl" % optimizer, ("\n".join(lines) + "\n").encode())
        noise = max(abs(b - a) / abs(a) for a, b in zip(exact, single))
        print("recommender %s: loss %.6f -> %.6f, f32 against f64 %.1e; %d nodes"
              % (optimizer, exact[0], exact[-1], noise, len(graph.node)))


def make_refused(tf, rng):
    table = tf.Variable(rng.normal(0, 1, (20, 4)).astype(np.float32))
    sparse = tf.SparseTensorSpec([None, None], tf.int64)
    weights = tf.SparseTensorSpec([None, None], tf.float32)

    def weighted(ids, w):
        return tf.nn.safe_embedding_lookup_sparse(table, ids, w, combiner="sum")

    def misread(ids):
        count = tf.cast(tf.reduce_sum(ids.values), tf.float32)
        return tf.nn.safe_embedding_lookup_sparse(table, ids, combiner="sum") * count

    save("weighted.pb", freeze(tf, weighted, [sparse, weights])
         .SerializeToString(deterministic=True))
    save("misread.pb", freeze(tf, misread, [sparse]).SerializeToString(deterministic=True))

    # Two lookups, the second's rows reordered by hand to take the first
    # SparseTensor's indices (a graph TensorFlow would not make).
    def two(ids, other):
        return (tf.nn.embedding_lookup_sparse(table, ids, None, combiner="sum"),
                tf.nn.embedding_lookup_sparse(table, other, None, combiner="sum"))

    graph = freeze(tf, two, [sparse, sparse])
    crossed = [node for node in graph.node
               if node.op == "StridedSlice" and list(node.input)[0] == "other"]
    assert len(crossed) == 1
    crossed[0].input[0] = "ids"
    save("crossed.pb", graph.SerializeToString(deterministic=True))

    # A lookup whose column slice starts at a Const declared [2, 10^9] and
    # holding no values (zeros, as TensorFlow reads it): refused at once.
    graph = freeze(tf, lambda ids: tf.nn.embedding_lookup_sparse(table, ids, None), [sparse])
    begin = [node for node in graph.node if node.name.endswith("strided_slice/stack")]
    assert len(begin) == 1
    shape = begin[0].attr["value"].tensor.tensor_shape
    shape.dim[0].size = 2
    shape.dim.add().size = 10 ** 9
    save("huge_const.pb", graph.SerializeToString(deterministic=True))


def main():
    import tensorflow as tf
    import keras

    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(19)
    make_lookups(tf, rng)
    make_recommender(tf, keras, rng)
    make_refused(tf, rng)


if __name__ == "__main__":
    main()
