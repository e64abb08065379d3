#!/usr/bin/env python3
"""Writes the multi-hot (embedding bag) fixtures from TensorFlow itself, so
that Kiln's kiln.embedding_bag and its ragged data reader are checked
against what TensorFlow computes and writes, not against their own rules.

A development script, never run by the tests (they read the committed files).
Run from the repository root with a Python that has tensorflow and numpy:

    /work/venv-tf/bin/python scripts/make_multi_hot_fixtures.py

Files:
  test/Inputs/frameworks/multi_hot_bags.pbtxt  a Kiln graph: a constant table
      [20, 4] (the values below) and `ids` [6, 4] int64, looked up by three
      embedding_bag nodes, one per combiner (outputs sum, mean, sqrtn).
  test/Inputs/frameworks/multi_hot_bags.npz    in.ids: the ragged lists below
      padded with -1; out.sum/out.mean/out.sqrtn: what
      tf.nn.safe_embedding_lookup_sparse gives for them with that combiner
      (an empty list gives zeros).
  test/Inputs/data/multi_hot_ragged.npz        input for examples/multi_hot.pbtxt,
      512 rows: its list inputs (watched, tags, genres) as a tf.RaggedTensor's
      parts, NAME.values and NAME.row_splits (what ragged.values.numpy() and
      ragged.row_splits.numpy() give); dense, item, click as arrays.
  test/Inputs/data/multi_hot_padded.npz        the same rows, each list input
      padded with -1 to the model's length (ragged.to_tensor(-1)).
Deterministic: numpy's generator with a fixed seed.
"""

import os

import numpy as np
import tensorflow as tf

FRAMEWORKS = os.path.join("test", "Inputs", "frameworks")
DATA = os.path.join("test", "Inputs", "data")
COMBINERS = ("sum", "mean", "sqrtn")


def bag_fixture(rng):
    table = rng.normal(0, 1, size=(20, 4)).astype(np.float32)
    # Lists of 0 to 4 ids, with a repeat within a list.
    lists = [[3, 17, 3], [], [19], [0, 5, 11, 2], [8, 8], [14, 1, 6, 9]]
    ragged = tf.ragged.constant(lists, dtype=tf.int64)
    sparse = ragged.to_sparse()
    arrays = {"in.ids": ragged.to_tensor(default_value=-1, shape=[6, 4]).numpy()}
    for combiner in COMBINERS:
        out = tf.nn.safe_embedding_lookup_sparse(tf.constant(table), sparse, combiner=combiner)
        arrays["out." + combiner] = out.numpy().astype(np.float32)
    np.savez(os.path.join(FRAMEWORKS, "multi_hot_bags.npz"), **arrays)
    values = ", ".join(repr(float(v)) for v in table.reshape(-1))
    lines = [
        "# Written by scripts/make_multi_hot_fixtures.py: embedding bags over a",
        "# constant table, one per combiner, compared with TensorFlow's",
        "# safe_embedding_lookup_sparse in multi_hot_bags.npz.",
        'name: "multi_hot_bags"',
        'inputs { name: "ids" dtype: DT_INT64 shape: [6, 4] }',
        'nodes { name: "table" op: "constant" attrs { key: "value" value { tensor {'
        ' dtype: DT_FLOAT32 shape: [20, 4] float_values: [%s] } } } }' % values,
    ]
    for combiner in COMBINERS:
        lines.append('nodes { name: "%s" op: "embedding_bag" inputs: ["table", "ids"]'
                     ' attrs { key: "combiner" value { s: "%s" } } }' % (combiner, combiner))
    lines.append('outputs: ["sum", "mean", "sqrtn"]')
    with open(os.path.join(FRAMEWORKS, "multi_hot_bags.pbtxt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def ragged_lists(rng, rows, length, bound):
    lengths = rng.integers(0, length + 1, size=rows)
    values = rng.integers(0, bound, size=int(lengths.sum()))
    return tf.RaggedTensor.from_row_lengths(tf.constant(values, tf.int64), lengths)


def example_data(rng):
    rows = 512
    lists = {"watched": ragged_lists(rng, rows, 8, 50000),
             "tags": ragged_lists(rng, rows, 4, 5000),
             "genres": ragged_lists(rng, rows, 3, 40)}
    plain = {"dense": rng.normal(0, 1, size=(rows, 8)).astype(np.float32),
             "item": rng.integers(0, 50000, size=rows).astype(np.int64),
             "click": (rng.random(size=(rows, 1)) < 0.3).astype(np.float32)}
    ragged = dict(plain)
    padded = dict(plain)
    for name, value in lists.items():
        ragged[name + ".values"] = value.values.numpy()
        ragged[name + ".row_splits"] = value.row_splits.numpy()
        padded[name] = value.to_tensor(default_value=-1,
                                       shape=[rows, {"watched": 8, "tags": 4, "genres": 3}[name]]).numpy()
    np.savez(os.path.join(DATA, "multi_hot_ragged.npz"), **ragged)
    np.savez(os.path.join(DATA, "multi_hot_padded.npz"), **padded)


def main():
    rng = np.random.default_rng(20261205)
    bag_fixture(rng)
    example_data(rng)


if __name__ == "__main__":
    main()
