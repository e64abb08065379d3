#!/usr/bin/env python3
"""Writes the training data of the agreement cases (docs/training.md,
"Agreement with PyTorch") as .npz archives, one per model.

    python3 scripts/make_agreement_data.py OUT_DIR

writes OUT_DIR/mlp.npz, wide_deep.npz, transformer.npz and onnx_mlp.npz, and
the data of the framework models in test/Inputs/frameworks/ (ff_head.npz,
encoder.npz, cnn.npz, cnn_bn.npz, keras_dense.npz, keras_conv.npz,
tf_cnn.npz, tf_embed.npz), each
holding four batches of its model (kiln run wraps over them: step k trains on
rows [(k-1)B, kB) modulo the rows). Standard library only: test/Tools/
kiln-agreement.test runs it, and scripts/train_reference.py and
scripts/make_framework_fixtures.py read the same files, so both sides train
on the same bytes. The output depends on nothing but this file (its own
SplitMix64 generator, fixed zip timestamps).
"""

import argparse
import os
import struct
import sys
import zipfile

BATCHES = 4


class SplitMix64:
    """Steele et al.'s SplitMix64: a fixed sequence for a seed on any Python."""

    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFFFFFFFFFF

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def uniform(self, low=0.0, high=1.0):
        """A float in [low, high); [0, 1) has 24 bits, so it is an exact f32."""
        return low + (high - low) * ((self.next() >> 40) / float(1 << 24))

    def below(self, n):
        return self.next() % n


class Array:
    """A row-major array: a .npy dtype, a shape and flat values."""

    FORMATS = {"<f4": "f", "<i4": "i", "<i8": "q"}

    def __init__(self, dtype, shape, values):
        count = 1
        for dim in shape:
            count *= dim
        assert len(values) == count, (shape, len(values))
        self.dtype, self.shape, self.values = dtype, tuple(shape), values

    def npy(self):
        """The .npy (format 1.0) bytes of the array."""
        shape = "(%s%s)" % (", ".join(map(str, self.shape)),
                            "," if len(self.shape) == 1 else "")
        header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
            self.dtype, shape)
        # Magic (6) + version (2) + length (2) + header + '\n', to 64 bytes.
        padding = -(10 + len(header) + 1) % 64
        header = (header + " " * padding + "\n").encode("latin1")
        data = struct.pack("<%d%s" % (len(self.values), self.FORMATS[self.dtype]),
                           *self.values)
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + data


def mlp_data():
    """MNIST-shaped: 784 pixels in [0, 1); the class is the brightest of the
    first ten pixels, which the MLP can learn."""
    rng = SplitMix64(1)
    rows = 64 * BATCHES
    image = [rng.uniform() for _ in range(rows * 784)]
    label = []
    for r in range(rows):
        first = image[r * 784:r * 784 + 10]
        label.append(first.index(max(first)))
    return {"image": Array("<f4", [rows, 784], image),
            "label": Array("<i4", [rows], label)}


def wide_deep_data():
    """Criteo-shaped: 13 dense features in [-1, 1), four ids drawn from a few
    hundred values per table so a batch repeats ids (summed sparse rows) and
    most rows of each table are never touched (lazy updates)."""
    rng = SplitMix64(2)
    rows = 256 * BATCHES
    dense = [rng.uniform(-1.0, 1.0) for _ in range(rows * 13)]
    tables = {"site": (100000, 300), "app": (50000, 200),
              "device": (20000, 100), "category": (10000, 50)}
    data = {"dense": Array("<f4", [rows, 13], dense)}
    for name, (size, distinct) in tables.items():
        stride = size // distinct
        data[name] = Array("<i8", [rows],
                           [rng.below(distinct) * stride + 7 for _ in range(rows)])
    # Clicks follow the dense features and the site id, so the model learns.
    click = []
    for r in range(rows):
        score = dense[r * 13] + 0.5 * dense[r * 13 + 1]
        score += 0.5 if data["site"].values[r] % 3 == 0 else -0.25
        click.append(1.0 if score > 0 else 0.0)
    data["click"] = Array("<f4", [rows, 1], click)
    return data


def transformer_data():
    """Token sequences of 64, each an arithmetic progression modulo the
    vocabulary with its own start and step; the targets are the next
    tokens."""
    rng = SplitMix64(3)
    rows, length, vocab = 8 * BATCHES, 64, 1000
    tokens, targets = [], []
    for _ in range(rows):
        start, step = rng.below(vocab), 1 + rng.below(9)
        sequence = [(start + i * step) % vocab for i in range(length + 1)]
        tokens += sequence[:-1]
        targets += sequence[1:]
    return {"tokens": Array("<i8", [rows, length], tokens),
            "targets": Array("<i8", [rows, length], targets)}


def onnx_mlp_data():
    """Inputs of test/Inputs/agreement/onnx_mlp.onnx (x: [16, 32]) and a
    class label in [0, 10): the sign pattern of three features."""
    rng = SplitMix64(4)
    rows = 16 * BATCHES
    x = [rng.uniform(-1.0, 1.0) for _ in range(rows * 32)]
    label = []
    for r in range(rows):
        row = x[r * 32:r * 32 + 3]
        label.append((row[0] > 0) * 4 + (row[1] > 0) * 2 + (row[2] > 0))
    return {"x": Array("<f4", [rows, 32], x), "label": Array("<i4", [rows], label)}


def uniform_inputs(rng, shape):
    """Values in [-1, 1) filling `shape` row-major, each an exact f32."""
    count = 1
    for dim in shape:
        count *= dim
    return Array("<f4", shape, [rng.uniform(-1.0, 1.0) for _ in range(count)])


def argmax_labels(x, row_size, classes):
    """Per row of x: the index of the largest of `classes` values taken
    evenly across the row, so the label depends on the whole input."""
    stride = row_size // classes
    label = []
    for start in range(0, len(x.values), row_size):
        picked = x.values[start:start + stride * classes:stride]
        label.append(picked.index(max(picked)))
    return Array("<i4", [len(label)], label)


def features_data(seed, batch, features, classes):
    """x: [4B, features] and the label of each row (see argmax_labels)."""
    rng = SplitMix64(seed)
    x = uniform_inputs(rng, [batch * BATCHES, features])
    return {"x": x, "label": argmax_labels(x, features, classes)}


def image_data(seed, batch, shape, classes):
    """x: [4B, *shape] images (NCHW or NHWC, one channel) and a label."""
    rng = SplitMix64(seed)
    x = uniform_inputs(rng, [batch * BATCHES] + shape)
    size = 1
    for dim in shape:
        size *= dim
    return {"x": x, "label": argmax_labels(x, size, classes)}


def ff_head_data():
    """Inputs of test/Inputs/frameworks/ff_head_*.onnx (x: [8, 16])."""
    return features_data(5, 8, 16, 4)


def encoder_data():
    """Ids of test/Inputs/frameworks/encoder_*.onnx (ids: [4, 8] below 50):
    arithmetic progressions modulo 50; the label of each position is the
    next token."""
    rng = SplitMix64(6)
    rows, length, vocab = 4 * BATCHES, 8, 50
    ids, label = [], []
    for _ in range(rows):
        start, step = rng.below(vocab), 1 + rng.below(7)
        sequence = [(start + i * step) % vocab for i in range(length + 1)]
        ids += sequence[:-1]
        label += sequence[1:]
    return {"ids": Array("<i8", [rows, length], ids),
            "label": Array("<i4", [rows, length], label)}


def cnn_data():
    """Images of test/Inputs/frameworks/cnn_opset17.onnx (x: [4, 1, 12, 12])."""
    return image_data(7, 4, [1, 12, 12], 10)


def cnn_bn_data():
    """Images of test/Inputs/frameworks/cnn_bn_opset17.onnx (x: [4, 1, 12, 12])."""
    return image_data(8, 4, [1, 12, 12], 10)


def keras_dense_data():
    """Inputs of test/Inputs/frameworks/keras_dense.pb (x: [8, 16])."""
    return features_data(9, 8, 16, 4)


def keras_conv_data():
    """Images of test/Inputs/frameworks/keras_conv.pb (x: [4, 12, 12, 1], NHWC)."""
    return image_data(10, 4, [12, 12, 1], 10)


def tf_cnn_data():
    """Images of test/Inputs/frameworks/tf_cnn.pb (x: [4, 12, 12, 3], NHWC)."""
    return image_data(11, 4, [12, 12, 3], 10)


def tf_embed_data():
    """Ids of test/Inputs/frameworks/tf_embed.pb (ids: [4, 8] int32 below 50);
    the label of a row is its first id modulo 10."""
    rng = SplitMix64(12)
    rows, length = 4 * BATCHES, 8
    ids = [rng.below(50) for _ in range(rows * length)]
    label = [ids[r * length] % 10 for r in range(rows)]
    return {"ids": Array("<i4", [rows, length], ids),
            "label": Array("<i4", [rows], label)}


DATASETS = {"mlp": mlp_data, "wide_deep": wide_deep_data,
            "transformer": transformer_data, "onnx_mlp": onnx_mlp_data,
            "ff_head": ff_head_data, "encoder": encoder_data, "cnn": cnn_data,
            "cnn_bn": cnn_bn_data, "keras_dense": keras_dense_data,
            "keras_conv": keras_conv_data, "tf_cnn": tf_cnn_data,
            "tf_embed": tf_embed_data}


def write_npz(path, arrays):
    """An uncompressed zip of NAME.npy members with fixed timestamps."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            archive.writestr(info, array.npy())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", help="directory for MODEL.npz")
    parser.add_argument("--only", choices=sorted(DATASETS),
                        help="write only this model's data")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name, make in DATASETS.items():
        if args.only in (None, name):
            write_npz(os.path.join(args.out_dir, name + ".npz"), make())
    return 0


if __name__ == "__main__":
    sys.exit(main())
