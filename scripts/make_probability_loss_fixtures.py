#!/usr/bin/env python3
"""Writes models that end in their activation, as PyTorch's and Keras'
examples write them, with the losses their frameworks train them with, to
test/Inputs/probability_losses/: the fixtures of
test/Tools/kiln-probability-losses.test (kilnc --loss=nll,
sparse_categorical_crossentropy, binary_crossentropy) and of
test/Tools/kiln-class-weights.test (kilnc --class-weights).

A development script, never run by the tests (they read the committed
files). Run from the repository root, once with PyTorch's Python and once
with TensorFlow's (Keras 3):

    /work/venv/bin/python scripts/make_probability_loss_fixtures.py --framework torch
    /work/venv-tf/bin/python scripts/make_probability_loss_fixtures.py --framework keras

PyTorch (batch 4, 80 rows; torch.onnx.export with dynamo=False, opset 17,
no constant folding, as MODEL_opset17.onnx, and with dynamo=True,
optimize=False, as MODEL_dynamo.onnx; 20 steps of SGD at 0.1 and Adam at
1e-3 from the exported weights, as scripts/make_torch_layer_fixtures.py
writes them: MODEL_sgd.jsonl, MODEL_adam.jsonl with the float64 "loss" and
PyTorch's float32 "loss_f32"):
  mnist_net  pytorch/examples' MNIST Net (mnist/main.py), narrowed for
             14x14 images: Conv2d(1, 8, 3), ReLU, Conv2d(8, 16, 3), ReLU,
             max_pool2d(2), Dropout, flatten, Linear(400, 32), ReLU,
             Dropout, Linear(32, 10), F.log_softmax(dim=1): x [4, 1, 14, 14],
             output log_probs [4, 10], trained with F.nll_loss as the
             example does. mnist_net_eval.jsonl: after one SGD step, the
             mean F.nll_loss over the 80 rows and the fraction whose
             largest log-probability is the label (float64).
             mnist_net_loss_MODE.onnx: the Net and its F.nll_loss in one
             module (inputs x and label, int64; output loss), for kilnc
             --loss=model: the dynamo exporter writes LogSoftmax and
             NegativeLogLikelihoodLoss, the TorchScript one fuses them into
             SoftmaxCrossEntropyLoss; mnist_net_loss.npz holds mnist_net's
             rows with int64 labels, on which its curves are mnist_net's.
  mixture    two softmax heads over a shared layer, averaged (a mixture of
             experts' probabilities) and logged: x [4, 8], log_probs
             [4, 5] = log((softmax(a) + softmax(b)) / 2), trained with
             F.nll_loss: log-probabilities no log_softmax makes.
  log_of_softmax
             Linear(8, 16), ReLU, Linear(16, 5), torch.log(F.softmax(dim=1)):
             x [4, 8], log_probs [4, 5], trained with F.nll_loss: a log_softmax
             written as two ops.
  clicks     Linear(8, 16), ReLU, Linear(16, 1), torch.sigmoid: x [4, 8],
             probability [4, 1], trained with nn.BCELoss against float
             labels [4, 1].
  mixup      Linear(8, 16), ReLU, Linear(16, 5): x [4, 8], logits [4, 5],
             trained with F.cross_entropy against class probabilities
             [4, 5] (kilnc --class-probabilities): torchvision's RandomMixup
             of each batch with itself rolled by one, lam drawn from
             Beta(0.2, 0.2) per batch (inputs and one-hot labels mixed
             alike); mixup_smooth_sgd.jsonl and mixup_smooth_adam.jsonl are
             its curves with label_smoothing=0.1 too, torchvision's recipe.
  segments_weighted
             Linear(8, 16), ReLU, Linear(16, 15) reshaped to scores [4, 5, 3]
             (F.cross_entropy's class axis 1, a token or pixel classifier's),
             trained with F.cross_entropy(weight=CLASS_WEIGHTS,
             ignore_index=-100, label_smoothing=0.1) against int32 labels
             [4, 3] (-100 at some positions); segments_weighted_plain_*.jsonl
             without the smoothing, and segments_weighted_plain_loss_MODE.onnx
             the module with that loss inside (SoftmaxCrossEntropyLoss with
             class weights) with segments_weighted_plain_loss.npz (int64
             labels); segments_weighted_bad_label.npz a class id of 7.
  tags_weighted
             Linear(8, 16), ReLU, Linear(16, 3): x [4, 8], logits [4, 3] of
             three labels, trained with BCEWithLogitsLoss(pos_weight=
             TAG_POS_WEIGHTS) against float labels [4, 3] (kilnc --pos-weight);
             tags_weighted_scalar_*.jsonl with pos_weight=3 for every column;
             tags_zero_weighted the same with its head zeroed (logits exactly 0
             at the first step: softplus's gradient at its tie).
  log_of_softmax_weighted, mixture_weighted, mixup_weighted
             curves of those models' modules and data under F.nll_loss(weight=)
             and F.cross_entropy(weight=) (kilnc --class-weights).
MODEL.npz holds x and label (the image's largest of ten pixels taken
evenly; the class of x's largest of its first 5 values; a click where the
first two features sum above 0, as float32; mixup's mixed rows and class
probabilities).

Keras (batch 4, 48 rows, frozen by convert_variables_to_constants_v2 as
docs/tensorflow.md says: NAME.pb, output Identity; NAME.reference.npz: the
first batch and TensorFlow's output; 12 steps of Keras' own SGD at 0.05 and
SGD with momentum 0.9 at 0.01 applied by a tf.function step as model.fit's
is, the loss Keras' own loss object from_logits=False, the model rebuilt in
float64 for "loss" and float32 for "loss_f32": NAME_sgd.jsonl,
NAME_momentum.jsonl):
  keras_mnist     Keras' "Simple MNIST convnet" example, narrowed for 14x14
                  images: Conv2D(8, 3, relu), MaxPooling2D(2), Conv2D(16, 3,
                  relu), MaxPooling2D(2), Flatten, Dropout(0.5),
                  Dense(10, softmax); SparseCategoricalCrossentropy (which
                  reads the softmax's logits in a traced step).
  keras_ensemble  Dense(16, relu), two Dense(5, softmax) heads, Average():
                  probabilities no softmax makes; SparseCategoricalCrossentropy
                  (clip to [1e-7, 1 - 1e-7], log).
  keras_clicks    Dense(16, relu), Dense(1, sigmoid); BinaryCrossentropy.
  keras_clicks_average
                  Dense(16, relu), two Dense(1, sigmoid) heads, Average();
                  BinaryCrossentropy (clipped probabilities).
  keras_mnist_onehot
                  keras_mnist with one-hot labels and CategoricalCrossentropy,
                  as the Keras example trains it (keras.utils.to_categorical).
  keras_ensemble_smooth
                  keras_ensemble with one-hot labels and
                  CategoricalCrossentropy(label_smoothing=0.1) (each row
                  divided by its sum, clipped, logged).
  keras_*_weighted
                  curves of keras_mnist, keras_ensemble, keras_mnist_onehot and
                  keras_ensemble_smooth trained with class weights as
                  model.fit(class_weight=) trains them (KERAS_WEIGHTED), and
                  of keras_ensemble with ignore_class=2 besides; of keras_clicks
                  and keras_clicks_average with class_weight={0: 1, 1: 3}.
Their data as PyTorch's models' of the same kind: x [48, 14, 14, 1]
(NHWC) or [48, 8], label int32 [48], float32 [48, 1] or one-hot float32
[48, C].

Deterministic: fixed seeds, one thread (and for TensorFlow no oneDNN).
"""

import argparse
import copy
import functools
import json
import logging
import os
import sys
import warnings

import numpy as np

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
OUT = os.path.join(os.path.dirname(SCRIPTS), "test", "Inputs", "probability_losses")
TORCH_ROWS, KERAS_ROWS, BATCH, KERAS_STEPS = 80, 48, 4, 12
KERAS_OPTIMIZERS = {"sgd": (0.05, 0.0), "momentum": (0.01, 0.9)}
FEATURES, CLASSES, IMAGE, SEGMENTS = 8, 5, 14, 3
# Class weights (kilnc --class-weights): PyTorch's weight=, Keras'
# class_weight; ten for the MNIST models.
CLASS_WEIGHTS = [1.0, 3.0, 0.5, 2.0, 1.5]
DIGIT_WEIGHTS = [1.0, 2.0, 0.5, 1.5, 1.0, 3.0, 0.75, 1.0, 2.5, 0.5]
CLICK_WEIGHTS = [1.0, 3.0]  # Keras' class_weight of the labels 0 and 1.
TAG_POS_WEIGHTS = [1.0, 4.0, 2.0]  # BCEWithLogitsLoss(pos_weight=), per column.
TAGS = 3


def largest_of_ten(x):
    flat = x.reshape(len(x), -1)
    stride = flat.shape[1] // 10
    return flat[:, 0:stride * 10:stride].argmax(axis=1).astype(np.int32)


def image_rows(rng, rows, channels_last):
    shape = (rows, IMAGE, IMAGE, 1) if channels_last else (rows, 1, IMAGE, IMAGE)
    return rng.uniform(-1.0, 1.0, shape).astype(np.float32)


def feature_rows(rng, rows):
    return rng.uniform(-1.0, 1.0, (rows, FEATURES)).astype(np.float32)


def largest_of_five(x):
    return x[:, :CLASSES].argmax(axis=1).astype(np.int32)


def one_hot(labels_of, classes):
    return lambda x: np.eye(classes, dtype=np.float32)[labels_of(x)]


def mixed_rows(rng, rows):
    """torchvision's RandomMixup per batch of BATCH: each row mixed with the
    next one of its batch (the batch rolled by one), lam from Beta(0.2,
    0.2); `x` and one-hot class probabilities `label`."""
    x = feature_rows(rng, rows)
    targets = np.eye(CLASSES, dtype=np.float32)[largest_of_five(x)]
    for start in range(0, rows, BATCH):
        batch = slice(start, start + BATCH)
        lam = np.float32(rng.beta(0.2, 0.2))
        x[batch] = lam * x[batch] + (1 - lam) * np.roll(x[batch], 1, axis=0)
        targets[batch] = lam * targets[batch] + (1 - lam) * np.roll(targets[batch], 1, axis=0)
    return {"x": x, "label": targets}


def segment_labels(x):
    """segments_weighted's labels [N, SEGMENTS] (int32): at each position
    the class of the largest of CLASSES features from its offset, -100
    (ignored) at the second position where the first feature is below -0.6."""
    labels = np.stack([np.roll(x, -d, axis=1)[:, :CLASSES].argmax(axis=1)
                       for d in range(SEGMENTS)], axis=1).astype(np.int32)
    labels[x[:, 0] < -0.6, 1] = -100
    return labels


def tagged(x):
    """tags_weighted's labels [N, TAGS] (float32): feature k above 0.3 (about
    a third positive)."""
    return (x[:, :TAGS] > 0.3).astype(np.float32)


def clicked(x):
    return (x[:, :1] + x[:, 1:2] > 0).astype(np.float32)


# --- PyTorch ----------------------------------------------------------------------


def torch_models():
    import torch
    import torch.nn.functional as F

    class MnistNet(torch.nn.Module):
        """pytorch/examples' mnist/main.py Net, its layers narrowed."""

        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(1, 8, 3, 1)
            self.conv2 = torch.nn.Conv2d(8, 16, 3, 1)
            self.dropout1 = torch.nn.Dropout(0.25)
            self.dropout2 = torch.nn.Dropout(0.5)
            self.fc1 = torch.nn.Linear(400, 32)
            self.fc2 = torch.nn.Linear(32, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = self.dropout1(F.max_pool2d(x, 2))
            x = torch.flatten(x, 1)
            x = self.dropout2(F.relu(self.fc1(x)))
            return F.log_softmax(self.fc2(x), dim=1)

    class Mixture(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.shared = torch.nn.Linear(FEATURES, 16)
            self.a = torch.nn.Linear(16, CLASSES)
            self.b = torch.nn.Linear(16, CLASSES)

        def forward(self, x):
            h = F.relu(self.shared(x))
            return torch.log((F.softmax(self.a(h), dim=1) + F.softmax(self.b(h), dim=1)) / 2)

    class LogOfSoftmax(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden = torch.nn.Linear(FEATURES, 16)
            self.out = torch.nn.Linear(16, CLASSES)

        def forward(self, x):
            return torch.log(F.softmax(self.out(F.relu(self.hidden(x))), dim=1))

    def mixup():
        return torch.nn.Sequential(torch.nn.Linear(FEATURES, 16), torch.nn.ReLU(),
                                   torch.nn.Linear(16, CLASSES))

    class Clicks(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden = torch.nn.Linear(FEATURES, 16)
            self.out = torch.nn.Linear(16, 1)

        def forward(self, x):
            return torch.sigmoid(self.out(F.relu(self.hidden(x))))

    class Segments(torch.nn.Module):
        """A score per class at each of SEGMENTS positions: [N, C, d], as a
        segmentation or token classifier's (F.cross_entropy's class axis 1)."""

        def __init__(self):
            super().__init__()
            self.hidden = torch.nn.Linear(FEATURES, 16)
            self.out = torch.nn.Linear(16, CLASSES * SEGMENTS)

        def forward(self, x):
            return self.out(F.relu(self.hidden(x))).reshape(-1, CLASSES, SEGMENTS)

    def tags():
        return torch.nn.Sequential(torch.nn.Linear(FEATURES, 16), torch.nn.ReLU(),
                                   torch.nn.Linear(16, TAGS))

    def tags_zero():
        """tags with its head zeroed: every logit exactly 0 at the first step,
        where softplus's gradient is sigmoid(0) = 1/2."""
        module = tags()
        with torch.no_grad():
            module[2].weight.zero_()
            module[2].bias.zero_()
        return module

    positive = lambda weights: lambda output, label: F.binary_cross_entropy_with_logits(  # noqa
        output, label, pos_weight=torch.tensor(weights, dtype=output.dtype))
    weights = lambda output: torch.tensor(CLASS_WEIGHTS, dtype=output.dtype)  # noqa: E731
    nll = lambda output, label: F.nll_loss(output, label.long())  # noqa: E731
    weighted_nll = lambda output, label: F.nll_loss(  # noqa: E731
        output, label.long(), weight=weights(output))
    weighted_soft = lambda output, label: F.cross_entropy(  # noqa: E731
        output, label, weight=weights(output))
    weighted_ignoring = lambda output, label: F.cross_entropy(  # noqa: E731
        output, label.long(), weight=weights(output), ignore_index=-100)
    weighted_segments = lambda output, label: F.cross_entropy(  # noqa: E731
        output, label.long(), weight=weights(output), ignore_index=-100, label_smoothing=0.1)
    soft = lambda output, label: F.cross_entropy(output, label)  # noqa: E731
    smooth = lambda output, label: F.cross_entropy(output, label,  # noqa: E731
                                                   label_smoothing=0.1)
    bce = lambda output, label: torch.nn.BCELoss()(output, label)  # noqa: E731
    rows = lambda rng, n: image_rows(rng, n, False)  # noqa: E731
    # name: (module, seed, rows(rng, n), labels(x), loss(output, label), output
    # name); labels None: the rows give them. A name in CURVES_ONLY exports nothing.
    return {
        "mnist_net": (MnistNet, 21, rows, largest_of_ten, nll, "log_probs"),
        "mixture": (Mixture, 22, feature_rows, largest_of_five, nll, "log_probs"),
        "log_of_softmax": (LogOfSoftmax, 24, feature_rows, largest_of_five, nll, "log_probs"),
        "clicks": (Clicks, 23, feature_rows, clicked, bce, "probability"),
        "mixup": (mixup, 25, mixed_rows, None, soft, "logits"),
        "mixup_smooth": (mixup, 25, mixed_rows, None, smooth, "logits"),
        "segments_weighted": (Segments, 26, feature_rows, segment_labels, weighted_segments,
                              "scores"),
        "tags_weighted": (tags, 27, feature_rows, tagged, positive(TAG_POS_WEIGHTS), "logits"),
        "tags_weighted_scalar": (tags, 27, feature_rows, tagged, positive([3.0]), "logits"),
        "tags_zero_weighted": (tags_zero, 28, feature_rows, tagged, positive(TAG_POS_WEIGHTS),
                               "logits"),
        "segments_weighted_plain": (Segments, 26, feature_rows, segment_labels,
                                    weighted_ignoring, "scores"),
        "log_of_softmax_weighted": (LogOfSoftmax, 24, feature_rows, largest_of_five,
                                    weighted_nll, "log_probs"),
        "mixture_weighted": (Mixture, 22, feature_rows, largest_of_five, weighted_nll,
                             "log_probs"),
        "mixup_weighted": (mixup, 25, mixed_rows, None, weighted_soft, "logits"),
    }


# Curves of another model's module and data under another loss.
CURVES_ONLY = ("mixup_smooth", "segments_weighted_plain", "log_of_softmax_weighted",
               "mixture_weighted", "mixup_weighted", "tags_weighted_scalar")


def torch_curve(layers, module, data, optimizer, dtype, loss_of):
    """The losses of layers.STEPS steps, each before its update, eval mode."""
    import torch

    module = copy.deepcopy(module).to(dtype).eval()
    opt = layers.make_optimizer(module, optimizer)
    losses = []
    for step in range(layers.STEPS):
        rows = slice(step * BATCH, (step + 1) * BATCH)
        x = torch.from_numpy(data["x"][rows]).to(dtype)
        label = torch.from_numpy(data["label"][rows])
        loss = loss_of(module(x), label.to(dtype) if label.is_floating_point() else label)
        losses.append(loss.item())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return losses


def torch_evaluation(layers, module, data, loss_of):
    """One SGD step on the first batch (float64), then the mean loss over
    the rows and the fraction whose largest output is the label."""
    import torch

    module = copy.deepcopy(module).to(torch.float64).eval()
    opt = layers.make_optimizer(module, "sgd")
    x, label = torch.from_numpy(data["x"]).double(), torch.from_numpy(data["label"])
    opt.zero_grad(set_to_none=True)
    loss_of(module(x[:BATCH]), label[:BATCH]).backward()
    opt.step()
    with torch.no_grad():
        output = module(x)
        loss = loss_of(output, label).item()
        accuracy = float((output.argmax(1) == label.long()).double().mean())
    return {"step": 1, "eval_loss": loss, "eval_accuracy": accuracy}


def write_own_loss(layers, name, module, data, exports, loss_of):
    """NAME_loss_MODE.onnx, the module and its loss_of(output, label) in one
    (inputs x and label, int64; output loss), and NAME_loss.npz (see the
    module's doc)."""
    import torch

    class WithLoss(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x, label):
            return loss_of(self.net(x), label)

    labels = data["label"].astype(np.int64)
    layers.write_npz(name + "_loss.npz", {"x": data["x"], "label": labels}, OUT)
    feed = (torch.from_numpy(data["x"][:BATCH]), torch.from_numpy(labels[:BATCH]))
    for suffix, options in exports:
        m = layers.export_tidy(WithLoss(module).eval(), feed, ["x", "label"], options,
                               output_name="loss")
        filename = "%s_loss_%s.onnx" % (name, suffix)
        layers.write_file(filename, m.SerializeToString(deterministic=True), OUT)
        print("%s: %d nodes; %s" % (filename, len(m.graph.node),
                                    " ".join(n.op_type for n in m.graph.node[-3:])))


def make_torch():
    import torch
    import make_torch_layer_fixtures as layers

    warnings.filterwarnings("ignore")  # exporter deprecations
    logging.disable(logging.WARNING)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    assert (layers.BATCH, layers.ROWS) == (BATCH, TORCH_ROWS)
    exports = (("opset17", {"dynamo": False, "opset_version": 17, "do_constant_folding": False}),
               ("dynamo", {"dynamo": True, "optimize": False}))
    noise = []
    # The losses exported with their models (labels int64 already: no cast).
    weight = torch.tensor(CLASS_WEIGHTS)
    own_losses = {
        "mnist_net": torch.nn.functional.nll_loss,
        "segments_weighted_plain": lambda output, label: torch.nn.functional.cross_entropy(
            output, label, weight=weight, ignore_index=-100),
    }
    for name, (build, seed, make_rows, make_labels, loss_of, output) in torch_models().items():
        torch.manual_seed(seed)
        module = build().eval()
        rng = np.random.default_rng(seed)
        data = make_rows(rng, TORCH_ROWS)
        if make_labels:
            data = {"x": data, "label": make_labels(data)}
        x = data["x"]
        if name not in CURVES_ONLY:
            layers.write_npz(name + ".npz", data, OUT)
        if name == "segments_weighted":  # A class id out of range, for the runtime to refuse.
            bad = {"x": data["x"], "label": data["label"].copy()}
            bad["label"][1, 0] = CLASSES + 2
            layers.write_npz(name + "_bad_label.npz", bad, OUT)
        for optimizer in ("sgd", "adam"):
            layers.write_losses(name, optimizer,
                                torch_curve(layers, module, data, optimizer, torch.float64,
                                            loss_of),
                                torch_curve(layers, module, data, optimizer, torch.float32,
                                            loss_of), noise, OUT)
        if name == "mnist_net":
            layers.write_file(name + "_eval.jsonl", json.dumps(
                torch_evaluation(layers, module, data, loss_of)) + "\n", OUT)
        if name in own_losses:
            write_own_loss(layers, name, module, data, exports, own_losses[name])
        for suffix, options in exports if name not in CURVES_ONLY else ():
            filename = "%s_%s.onnx" % (name, suffix)
            m = layers.export_tidy(module, (torch.from_numpy(x[:BATCH]),), ["x"], options,
                                   output_name=output)
            layers.write_file(filename, m.SerializeToString(deterministic=True), OUT)
            print("%s: %d nodes; %s" % (filename, len(m.graph.node),
                                        " ".join(n.op_type for n in m.graph.node[-4:])))
    layers.print_noise(noise)


# --- Keras ------------------------------------------------------------------------


def keras_models(keras):
    layers = keras.layers

    def mnist():
        return keras.Sequential([
            keras.Input((IMAGE, IMAGE, 1)), layers.Conv2D(8, 3, activation="relu"),
            layers.MaxPooling2D(2), layers.Conv2D(16, 3, activation="relu"),
            layers.MaxPooling2D(2), layers.Flatten(), layers.Dropout(0.5),
            layers.Dense(10, activation="softmax")])

    def averaged(units, activation):
        def build():
            x = keras.Input((FEATURES,))
            h = layers.Dense(16, activation="relu")(x)
            heads = [layers.Dense(units, activation=activation)(h) for _ in range(2)]
            return keras.Model(x, layers.Average()(heads))
        return build

    def clicks():
        return keras.Sequential([keras.Input((FEATURES,)), layers.Dense(16, activation="relu"),
                                 layers.Dense(1, activation="sigmoid")])

    rows = lambda rng, n: image_rows(rng, n, True)  # noqa: E731
    sparse = keras.losses.SparseCategoricalCrossentropy
    binary = keras.losses.BinaryCrossentropy
    categorical = keras.losses.CategoricalCrossentropy
    smooth = functools.partial(keras.losses.CategoricalCrossentropy, label_smoothing=0.1)
    # name: (builder, seed, rows(rng, n), labels(x), loss class)
    return {
        "keras_mnist": (mnist, 31, rows, largest_of_ten, sparse),
        "keras_ensemble": (averaged(CLASSES, "softmax"), 32, feature_rows, largest_of_five,
                           sparse),
        "keras_clicks": (clicks, 33, feature_rows, clicked, binary),
        "keras_clicks_average": (averaged(1, "sigmoid"), 34, feature_rows, clicked, binary),
        "keras_mnist_onehot": (mnist, 31, rows, one_hot(largest_of_ten, 10), categorical),
        "keras_ensemble_smooth": (averaged(CLASSES, "softmax"), 32, feature_rows,
                                  one_hot(largest_of_five, CLASSES), smooth),
    }


# Curves of a Keras model above trained with class weights: the loss object
# called with sample_weight = class_weight[label] (a one-hot label's argmax),
# what model.fit(class_weight=) passes it (checked against model.fit on
# Keras 3.15: the same loss), each position's loss weighted, the sum divided
# by the positions not ignored. name: (model, class weights, loss class or None for the model's).
KERAS_WEIGHTED = {
    "keras_mnist_weighted": ("keras_mnist", DIGIT_WEIGHTS, None),
    "keras_ensemble_weighted": ("keras_ensemble", CLASS_WEIGHTS, None),
    "keras_mnist_onehot_weighted": ("keras_mnist_onehot", DIGIT_WEIGHTS, None),
    "keras_ensemble_smooth_weighted": ("keras_ensemble_smooth", CLASS_WEIGHTS, None),
    "keras_ensemble_ignoring_weighted": ("keras_ensemble", CLASS_WEIGHTS, "ignore_class=2"),
    "keras_clicks_weighted": ("keras_clicks", CLICK_WEIGHTS, None),
    "keras_clicks_average_weighted": ("keras_clicks_average", CLICK_WEIGHTS, None),
}


def keras_curve(tf, keras, build, weights, data, loss_class, rate, momentum, dtype,
                class_weights=None):
    """KERAS_STEPS steps of Keras' SGD on the model rebuilt in `dtype`, with
    model.fit's sample weights of `class_weights` if given."""
    keras.config.set_dtype_policy(dtype)
    try:
        model = build()
    finally:
        keras.config.set_dtype_policy("float32")
    model.set_weights([w.astype(dtype) for w in weights])
    loss_object = loss_class(dtype=dtype)  # Keras' losses compute in float32 by default
    optimizer = keras.optimizers.SGD(learning_rate=rate, momentum=momentum)

    @tf.function
    def step(x, label):
        with tf.GradientTape() as tape:
            if class_weights is None:
                loss = loss_object(label, model(x, training=False))
            else:
                # Keras' class_weight lookup: a one-hot row's argmax, a 0/1
                # label ([N, 1]) itself.
                if label.dtype.is_floating and label.shape[-1] > 1:
                    ids = tf.argmax(label, axis=-1)
                elif label.dtype.is_floating:
                    ids = tf.cast(tf.reshape(label, [-1]), tf.int32)
                else:
                    ids = label
                sample_weight = tf.gather(tf.constant(class_weights, dtype), ids)
                loss = loss_object(label, model(x, training=False), sample_weight=sample_weight)
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    curve = []
    for k in range(KERAS_STEPS):
        rows = slice(k * BATCH, (k + 1) * BATCH)
        label = data["label"][rows]
        curve.append(float(step(tf.constant(data["x"][rows].astype(dtype)),
                                tf.constant(label.astype(dtype) if label.dtype.kind == "f"
                                            else label)).numpy()))
    return curve


def make_keras():
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ["KERAS_BACKEND"] = "tensorflow"
    import tensorflow as tf
    import keras
    import make_keras_app_fixtures as apps

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.experimental.enable_op_determinism()
    models = keras_models(keras)
    for name, (build, seed, make_rows, make_labels, loss_class) in models.items():
        keras.utils.set_random_seed(seed)
        model = build()
        rng = np.random.default_rng(seed)
        x = make_rows(rng, KERAS_ROWS)
        data = {"x": x, "label": make_labels(x)}
        graph = apps.canonical(apps.freeze(tf, model, (BATCH,) + x.shape[1:]))
        first = x[:BATCH]
        output = apps.run_frozen(tf, graph, first)
        assert np.abs(output - model(first, training=False).numpy()).max() < 1e-6, name
        apps.write_file(name + ".pb", graph.SerializeToString(deterministic=True), OUT)
        apps.write_npz(name + ".reference.npz", {"in.x": first, "out.Identity": output}, OUT)
        apps.write_npz(name + ".npz", data, OUT)
        weights = model.get_weights()
        for optimizer, (rate, momentum) in KERAS_OPTIMIZERS.items():
            exact, single = (keras_curve(tf, keras, build, weights, data, loss_class, rate,
                                         momentum, dtype) for dtype in ("float64", "float32"))
            lines = [json.dumps({"step": k, "loss": a, "loss_f32": b})
                     for k, (a, b) in enumerate(zip(exact, single), 1)]
            apps.write_file("%s_%s.jsonl" % (name, optimizer), "\n".join(lines) + "\n", OUT)
            nodes = {n.name: n for n in graph.node}
            print("%s %s: loss %.6f -> %.6f, f32 against f64 %.1e; output made by %s" % (
                name, optimizer, exact[0], exact[-1],
                max(abs(b - a) / abs(a) for a, b in zip(exact, single)),
                nodes[nodes["Identity"].input[0].split(":")[0]].op))
    for name, (base, class_weights, option) in KERAS_WEIGHTED.items():
        build, seed, make_rows, make_labels, loss_class = models[base]
        if option == "ignore_class=2":
            loss_class = functools.partial(loss_class, ignore_class=2)
        keras.utils.set_random_seed(seed)
        weights = build().get_weights()
        x = make_rows(np.random.default_rng(seed), KERAS_ROWS)
        data = {"x": x, "label": make_labels(x)}
        for optimizer, (rate, momentum) in KERAS_OPTIMIZERS.items():
            exact, single = (keras_curve(tf, keras, build, weights, data, loss_class, rate,
                                         momentum, dtype, class_weights)
                             for dtype in ("float64", "float32"))
            lines = [json.dumps({"step": k, "loss": a, "loss_f32": b})
                     for k, (a, b) in enumerate(zip(exact, single), 1)]
            apps.write_file("%s_%s.jsonl" % (name, optimizer), "\n".join(lines) + "\n", OUT)
            print("%s %s: loss %.6f -> %.6f" % (name, optimizer, exact[0], exact[-1]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=("torch", "keras"), required=True)
    os.makedirs(OUT, exist_ok=True)
    if parser.parse_args().framework == "torch":
        make_torch()
    else:
        make_keras()
    return 0


if __name__ == "__main__":
    sys.exit(main())
