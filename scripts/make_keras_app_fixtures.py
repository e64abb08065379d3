#!/usr/bin/env python3
"""Writes image classifiers built by keras.applications' own code, frozen as
TensorFlow users freeze them, to test/Inputs/keras_apps/:

- resnet: keras.applications' ResNet (v1 residual blocks, ZeroPadding2D ->
  Pad before the 7x7 stem and the max pool) with two stacks of one
  bottleneck block (8 and 16 filters) instead of ResNet50's sixteen.
- mobilenet_v3: MobileNetV3 "small"'s blocks (ZeroPadding2D before each
  strided depthwise convolution, hard-swish, squeeze-and-excitation, the
  Rescaling that takes 0..255 pixels) with three inverted residual blocks.
- efficientnet: EfficientNet (Rescaling and Normalization of 0..255 pixels,
  swish as IdentityN for its custom gradient, squeeze-and-excitation, Pad)
  with two MBConv blocks.
- convnext: ConvNeXt (ImageNet Normalization, LayerNormalization, GELU,
  LayerScale) with one block per stage; Keras compiles its depthwise
  convolution (a grouped Conv2D) with XLA, so freezing leaves each in a
  function of the graph's library, called by a StatefulPartitionedCall.

And resizes.pb: tf.image.resize of x [2, 14, 4, 3] to [9, 5] by nearest
and to [3, 7] bilinear (half_pixel_centers, as Keras' layers), and
tf.compat.v1's resize_nearest_neighbor and resize_bilinear with and without
align_corners; resizes.reference.npz as pads'.

And pads.pb, a tf.function of the pads Keras' layers do not write: tf.pad
with zeros (Pad), with 7.5 (PadV2), REFLECT and SYMMETRIC (MirrorPad) of
x [2, 3, 4], frozen; pads.reference.npz holds x (`in.x`) and TensorFlow's
four results (`out.Identity` ... `out.Identity_3`) for
scripts/compare_outputs.py.

And recurrent: LSTM(12, return_sequences=True) -> Bidirectional(GRU(8,
return_sequences=True)) -> SimpleRNN(6, go_backwards=True) -> Dense(5) of
x [2, 6, 8] in -1..1, as Keras users build them: without unroll=True, so
each layer is a while loop over the steps that freezing lowers to TF1
control flow (Enter, Merge, Switch, LoopCond, NextIteration, Exit) reading
and writing TensorLists; go_backwards and the backward GRU reverse with
ReverseV2.

And attention: ids [2, 6] (0 pads a row after its length) ->
Embedding(30, 8, mask_zero=True) -> MultiHeadAttention(2, 4) of itself (Einsum;
the mask from the ids) -> LSTM(6) (masked: past a row's length a step keeps
the state) -> Dense(5).

And decoder: x [2, 8, 8, 3] -> Conv2D(6, 3, strides 2, same) ->
Conv2DTranspose(4, 3, strides 2, same) -> UpSampling2D(2, bilinear) ->
Conv2DTranspose(3, 2, strides 2, valid) -> Resizing(12, 12, nearest) ->
Flatten -> Dense(5).

And causal: x [2, 6, 8] -> Conv1D(8, 3, causal, dilation_rate 2) ->
MultiHeadAttention(2, 4) of itself with use_causal_mask -> mean over the
steps -> Dense(5); dilated: x [2, 8, 8, 3] -> Conv2D(6, 3, dilation_rate 2,
same) -> Conv2D(4, 3, dilation_rate (1, 2), valid) -> Flatten -> Dense(5).
TensorFlow writes each dilated convolution as SpaceToBatchND, Conv2D and
BatchToSpaceND, and the causal mask with MatrixBandPart.

And volume: x [2, 4, 6, 6, 2] -> Conv3D(4, 3, same) -> BatchNormalization
-> relu -> MaxPooling3D(2) -> Conv3DTranspose(3, 2, strides 2) ->
AveragePooling3D(3, strides 2, same) -> Flatten -> Dense(5); its "loss"
curve is TensorFlow's float32 one (TensorFlow has no float64 MaxPool3D).

And elementwise.pb, a tf.function of x [2, 8] (values from 1e-8 to 20,
0, infinities and NaN): softsign, sign, is_finite, expm1 and log1p (each
also of the first row divided by it, so that near 0 every digit shows),
Bucketize (NaN counted at or above every boundary), min(max(x, 3), 2)
(NaN stays NaN) and broadcast_to;
elementwise.reference.npz as pads'.

And norm3d.pb, a tf.function of x [2, 2, 3, 4, 3]: FusedBatchNormV3 in
inference form over NDHWC and over NCDHW (x transposed);
norm3d.reference.npz as pads'.

And positions.pb, a tf.function of x [2, 5, 6] (ties in a row): argmax,
argmin (int32), top_k(3) values and indices, cumsum exclusive and reversed
and plain, band_part (1, 2) and (-1, 0), one_hot (on 2.5, off -1; int32
along axis 1) of ids from -3 to 3, space_to_batch_nd and batch_to_space
with paddings and crops, Bucketize at [-0.5, 0, 0.25] (Keras'
Discretization), bincount of ids 1 to 4 per row, counts and binary
(CategoryEncoding's count and multi_hot: DenseBincount);
positions.reference.npz as pads'.

Each image model is the function keras.applications' ResNet50, MobileNetV3Small,
EfficientNetB0 and ConvNeXtTiny call, given fewer and narrower blocks so that
the files stay small; the ops, layers and layouts are those of the full
models. BatchNormalization's moving statistics and every scale and offset are
drawn at random (a fresh model's are 0, 1, 1, 0: an identity no test could
miss), 5 classes, classifier_activation=None (the logits).

For each NAME:
  NAME.pb             model(x, training=False) for x [2, 32, 32, 3] ([2, 6, 8]
                      for recurrent), frozen by convert_variables_to_constants_v2.
  NAME.data.npz       x of 6 rows (pixels 0..255 for the models that take
                      them, else -1..1) and label [6] int32, as numpy
                      writes them: kiln run --data trains on rows
                      [(k-1)2, 2k) modulo 6 at step k.
  NAME.reference.npz  the first two rows (`in.x`) and TensorFlow's logits for
                      them (`out.Identity`: the frozen graph run by
                      TensorFlow, equal to the Keras model's), for
                      scripts/compare_outputs.py.
  NAME_sgd.jsonl, NAME_momentum.jsonl
                      12 steps from the frozen weights on those rows:
                      {"step", "loss" (before the step's update, the model
                      rebuilt in float64), "loss_f32"}; the mean softmax
                      cross-entropy of the logits, BatchNormalization in
                      inference form (its moving statistics fixed, its scale
                      and offset trained). SGD rate 0.02; momentum rate 0.01,
                      0.9, PyTorch's form (v = 0.9 v + g, w -= lr v); a tenth
                      of those for ConvNeXt.

Run from the repository root with TensorFlow's Python (Keras 3):

    /work/venv-tf/bin/python scripts/make_keras_app_fixtures.py

Deterministic: fixed seeds, one thread, no oneDNN, PYTHONHASHSEED=0 (the
script runs itself again with it); a second run writes the same bytes with
the same library versions.
"""

import io
import json
import os
import sys

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["KERAS_BACKEND"] = "tensorflow"

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "test", "Inputs", "keras_apps")
BATCH, ROWS, STEPS, CLASSES = 2, 6, 12, 5
SHAPE = (32, 32, 3)
OPTIMIZERS = {"sgd": 0.02, "momentum": 0.01}
MOMENTUM = 0.9
MAX_BYTES = 200 * 1024


def resnet(keras):
    from keras.src.applications import resnet as app

    def stack_fn(x):
        x = app.stack_residual_blocks_v1(x, 8, 1, stride1=1, name="conv2")
        return app.stack_residual_blocks_v1(x, 16, 1, name="conv3")

    return app.ResNet(stack_fn, preact=False, use_bias=True, weights=None,
                      input_shape=SHAPE, classes=CLASSES, classifier_activation=None,
                      name="resnet")


def mobilenet_v3(keras):
    from keras.src.applications import mobilenet_v3 as app

    def stack_fn(x, kernel, activation, se_ratio):
        x = app._inverted_res_block(x, 1, 8, 3, 2, se_ratio, app.relu, 0)
        x = app._inverted_res_block(x, 3, 16, 3, 2, None, app.relu, 1)
        return app._inverted_res_block(x, 3, 16, kernel, 1, se_ratio, activation, 2)

    return app.MobileNetV3(stack_fn, 64, input_shape=SHAPE, alpha=0.25, model_type="small",
                           weights=None, classes=CLASSES, classifier_activation=None,
                           dropout_rate=0.2, name="mobilenet_v3")


def efficientnet(keras):
    from keras.src.applications import efficientnet as app

    blocks = [
        {"kernel_size": 3, "repeats": 1, "filters_in": 32, "filters_out": 16,
         "expand_ratio": 1, "id_skip": True, "strides": 1, "se_ratio": 0.25},
        {"kernel_size": 5, "repeats": 1, "filters_in": 16, "filters_out": 24,
         "expand_ratio": 6, "id_skip": True, "strides": 2, "se_ratio": 0.25},
    ]
    return app.EfficientNet(0.25, 1.0, 32, blocks_args=blocks, weights=None,
                            input_shape=SHAPE, classes=CLASSES, classifier_activation=None,
                            name="efficientnet")


SEQUENCE = (6, 8)
TOKENS, VOCAB = 6, 30
IMAGE = (8, 8, 3)
VOLUME = (4, 6, 6, 2)


def recurrent(keras):
    """Keras' recurrent layers as users build them (unroll=False): each a
    while loop over the steps, frozen to TF1 control flow with TensorLists."""
    x = keras.Input(SEQUENCE, name="x")
    h = keras.layers.LSTM(12, return_sequences=True, name="lstm")(x)
    h = keras.layers.Bidirectional(keras.layers.GRU(8, return_sequences=True),
                                   name="bigru")(h)
    h = keras.layers.SimpleRNN(6, go_backwards=True, name="rnn")(h)
    return keras.Model(x, keras.layers.Dense(CLASSES, name="logits")(h), name="recurrent")


def attention(keras):
    """Token ids with padding: Embedding(mask_zero=True), self-attention
    (MultiHeadAttention: Einsum, the mask from the ids) and a masked LSTM
    (its steps past a row's length keep the state: SelectV2 in the loop)."""
    ids = keras.Input((TOKENS,), dtype="int32", name="x")
    h = keras.layers.Embedding(VOCAB, 8, mask_zero=True, name="embed")(ids)
    h = keras.layers.MultiHeadAttention(2, 4, name="attention")(h, h)
    h = keras.layers.LSTM(6, name="lstm")(h)
    return keras.Model(ids, keras.layers.Dense(CLASSES, name="logits")(h), name="attention")


def decoder(keras):
    """An encoder-decoder's upsampling half: Conv2DTranspose (TensorFlow's
    Conv2DBackpropInput) with SAME and VALID padding, bilinear UpSampling2D
    and a nearest Resizing (ResizeBilinear, ResizeNearestNeighbor)."""
    layers = keras.layers
    x = keras.Input(IMAGE, name="x")
    h = layers.Conv2D(6, 3, strides=2, padding="same", activation="relu", name="down")(x)
    h = layers.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu",
                               name="up_same")(h)
    h = layers.UpSampling2D(2, interpolation="bilinear", name="up_bilinear")(h)
    h = layers.Conv2DTranspose(3, 2, strides=2, padding="valid", name="up_valid")(h)
    h = layers.Resizing(12, 12, interpolation="nearest", name="resize")(h)
    h = layers.Flatten(name="flatten")(h)
    return keras.Model(x, layers.Dense(CLASSES, name="logits")(h), name="decoder")


def causal(keras):
    """A causal sequence model: Conv1D with causal padding and a dilation
    (TensorFlow's SpaceToBatchND, Conv2D, BatchToSpaceND) and causal
    self-attention (MultiHeadAttention's mask from MatrixBandPart)."""
    layers = keras.layers
    x = keras.Input(SEQUENCE, name="x")
    h = layers.Conv1D(8, 3, padding="causal", dilation_rate=2, activation="relu",
                      name="tcn")(x)
    h = layers.MultiHeadAttention(2, 4, name="attention")(h, h, use_causal_mask=True)
    h = layers.GlobalAveragePooling1D(name="pool")(h)
    return keras.Model(x, layers.Dense(CLASSES, name="logits")(h), name="causal")


def dilated(keras):
    """Atrous convolutions (DeepLab's): Conv2D with dilation_rate 2, SAME,
    and (1, 2), VALID, each as TensorFlow writes it (SpaceToBatchND, Conv2D,
    BatchToSpaceND)."""
    layers = keras.layers
    x = keras.Input(IMAGE, name="x")
    h = layers.Conv2D(6, 3, dilation_rate=2, padding="same", activation="relu",
                      name="atrous")(x)
    h = layers.Conv2D(4, 3, dilation_rate=(1, 2), name="atrous_valid")(h)
    h = layers.Flatten(name="flatten")(h)
    return keras.Model(x, layers.Dense(CLASSES, name="logits")(h), name="dilated")


def volume(keras):
    """A volumetric (video, scan) model: Conv3D, BatchNormalization over
    NDHWC, MaxPooling3D, Conv3DTranspose (Conv3DBackpropInputV2) and
    AveragePooling3D with SAME padding."""
    layers = keras.layers
    x = keras.Input(VOLUME, name="x")
    h = layers.Conv3D(4, 3, padding="same", name="conv")(x)
    h = layers.BatchNormalization(name="norm")(h)
    h = layers.Activation("relu", name="relu")(h)
    h = layers.MaxPooling3D(2, name="max_pool")(h)
    h = layers.Conv3DTranspose(3, 2, strides=2, name="up")(h)
    h = layers.AveragePooling3D(3, strides=2, padding="same", name="avg_pool")(h)
    h = layers.Flatten(name="flatten")(h)
    return keras.Model(x, layers.Dense(CLASSES, name="logits")(h), name="volume")


def token_rows(rng):
    """ROWS rows of TOKENS ids in [1, VOCAB), each padded with 0 after a
    length of 2 to TOKENS."""
    x = rng.integers(1, VOCAB, (ROWS, TOKENS)).astype(np.int32)
    for row, length in zip(x, rng.integers(2, TOKENS + 1, ROWS)):
        row[length:] = 0
    return x


def convnext(keras):
    from keras.src.applications import convnext as app

    return app.ConvNeXt(depths=[1, 1, 1, 1], projection_dims=[8, 16, 24, 32],
                        default_size=32, weights=None, input_shape=SHAPE, classes=CLASSES,
                        classifier_activation=None, name="convnext")


def uniform_rows(shape, low, high):
    return lambda rng: rng.uniform(low, high, (ROWS,) + shape).astype(np.float32)


# The models whose reference curve is TensorFlow's float32 one.
FLOAT32_ONLY = ("volume",)

# name: (builder, the rows of x from a generator, seed, rate scale)
MODELS = {
    "resnet": (resnet, uniform_rows(SHAPE, -1.0, 1.0), 11, 1.0),
    "mobilenet_v3": (mobilenet_v3, uniform_rows(SHAPE, 0.0, 255.0), 12, 1.0),
    "efficientnet": (efficientnet, uniform_rows(SHAPE, 0.0, 255.0), 13, 1.0),
    # Rates of 0.02 fit ConvNeXt's six rows in five steps: the loss near 0,
    # where f32's rounding is a large part of it.
    "convnext": (convnext, uniform_rows(SHAPE, 0.0, 255.0), 14, 0.1),
    "recurrent": (recurrent, uniform_rows(SEQUENCE, -1.0, 1.0), 15, 1.0),
    "attention": (attention, token_rows, 16, 1.0),
    "decoder": (decoder, uniform_rows(IMAGE, -1.0, 1.0), 17, 1.0),
    "causal": (causal, uniform_rows(SEQUENCE, -1.0, 1.0), 19, 1.0),
    "dilated": (dilated, uniform_rows(IMAGE, -1.0, 1.0), 20, 1.0),
    "volume": (volume, uniform_rows(VOLUME, -1.0, 1.0), 22, 1.0),
}


def write_file(name, data, folder=OUT):
    if isinstance(data, str):
        data = data.encode("utf-8")
    assert len(data) < MAX_BYTES, "%s is %d bytes" % (name, len(data))
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def write_npz(name, arrays, folder=OUT):
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    write_file(name, buffer.getvalue(), folder)


def randomize_batch_norms(keras, model, rng):
    """Moving statistics and scale/offset of every BatchNormalization drawn
    at random, so that inference-form normalization is no identity."""
    ranges = {"gamma": (0.5, 1.5), "beta": (-0.2, 0.2), "moving_mean": (-0.2, 0.2),
              "moving_variance": (0.5, 2.0)}
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            # gamma and beta are absent with scale=False or center=False.
            for weight in layer.weights:
                low, high = ranges[weight.name]
                weight.assign(rng.uniform(low, high, weight.shape).astype(np.float32))


def freeze(tf, model, shape, dtype=None):
    """model(x, training=False) for an x of `shape` (float32 unless
    `dtype`), frozen."""
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)

    function = tf.function(lambda x: model(x, training=False))
    concrete = function.get_concrete_function(
        tf.TensorSpec(shape, dtype or tf.float32, name="x"))
    return convert_variables_to_constants_v2(concrete).graph.as_graph_def()


def canonical(graph):
    """`graph` with what TensorFlow writes differently from run to run
    removed, so that the fixtures are the same bytes each time: nodes sorted
    by name, control inputs sorted, TensorFlow's internal attributes
    (`_...`) dropped, and the Placeholders freezing adds for a lowered while
    loop's unused inputs (`unused_control_flow_input_N`, read by nothing)
    dropped. kiln ignores all of these (check_keras_applications.py runs the
    graphs as frozen)."""
    read = {name.lstrip("^").split(":")[0] for node in graph.node for name in node.input}
    nodes = []
    for node in sorted(graph.node, key=lambda n: n.name):
        if node.name.startswith("unused_control_flow_input") and node.name not in read:
            continue
        for key in [key for key in node.attr if key.startswith("_")]:
            del node.attr[key]
        data = [name for name in node.input if not name.startswith("^")]
        control = sorted(name for name in node.input if name.startswith("^"))
        del node.input[:]
        node.input.extend(data + control)
        nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    return graph


def run_frozen(tf, graph_def, x):
    def imported():
        return tf.compat.v1.import_graph_def(
            graph_def, input_map={"x:0": tf.constant(x)}, return_elements=["Identity:0"])

    return tf.compat.v1.wrap_function(imported, [])()[0].numpy()


def losses(tf, keras, build, weights, data, optimizer, rate, dtype, steps=STEPS,
           batch=BATCH, inputs=None):
    """`steps` steps of `build` rebuilt in `dtype` from `weights`, by hand,
    on rows [(k-1) batch, k batch) of `data` (modulo its rows) at step k:
    `data["x"]`'s, or what `inputs(start, dtype)` gives for the rows from
    `start`."""
    rows = len(data["label"])

    def rows_of_x(start, dtype):
        x = data["x"][start:start + batch]
        return tf.constant(x.astype(dtype) if x.dtype.kind == "f" else x)

    inputs = inputs or rows_of_x
    keras.config.set_dtype_policy(dtype)
    try:
        model = build(keras)
    finally:
        keras.config.set_dtype_policy("float32")
    model.set_weights([w.astype(dtype) for w in weights])
    variables = model.trainable_variables
    velocities = [tf.Variable(tf.zeros_like(v)) for v in variables]
    curve = []
    for step in range(steps):
        start = (step * batch) % rows
        x = inputs(start, dtype)
        labels = tf.constant(data["label"][start:start + batch])
        with tf.GradientTape() as tape:
            logits = model(x, training=False)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits))
        curve.append(float(loss.numpy()))
        update(tf, variables, tape.gradient(loss, variables), velocities, optimizer, rate)
    return curve


def update(tf, variables, grads, velocities, optimizer, rate):
    """One step of SGD, or of momentum (PyTorch's form: v = MOMENTUM v + g,
    w -= rate v)."""
    for variable, grad, velocity in zip(variables, grads, velocities):
        # An embedding's gradient (IndexedSlices) is applied densely, as
        # kiln does by default.
        grad = tf.convert_to_tensor(grad)
        if optimizer == "momentum":
            velocity.assign(MOMENTUM * velocity + grad)
            grad = velocity
        variable.assign_sub(rate * grad)


def make(tf, keras, name):
    build, make_rows, seed, scale = MODELS[name]
    keras.utils.set_random_seed(seed)
    rng = np.random.default_rng(seed)
    model = build(keras)
    randomize_batch_norms(keras, model, rng)
    data = {"x": make_rows(rng), "label": rng.integers(0, CLASSES, ROWS).astype(np.int32)}
    graph = canonical(freeze(tf, model, (BATCH,) + data["x"].shape[1:],
                             tf.as_dtype(data["x"].dtype)))
    first = data["x"][:BATCH]
    output = run_frozen(tf, graph, first)
    expected = model(first, training=False).numpy()
    difference = np.abs(output - expected).max() / np.abs(expected).max()
    assert difference < 1e-5, (name, difference)
    write_file(name + ".pb", graph.SerializeToString(deterministic=True))
    write_npz(name + ".reference.npz", {"in.x": first, "out.Identity": output})
    write_npz(name + ".data.npz", data)
    weights = model.get_weights()
    for optimizer, rate in OPTIMIZERS.items():
        rate *= scale
        single = losses(tf, keras, build, weights, data, optimizer, rate, "float32")
        # TensorFlow has no float64 MaxPool3D: volume's curve is its float32.
        exact = single if name in FLOAT32_ONLY else losses(
            tf, keras, build, weights, data, optimizer, rate, "float64")
        lines = [json.dumps({"step": step, "loss": a, "loss_f32": b})
                 for step, (a, b) in enumerate(zip(exact, single), 1)]
        write_file("%s_%s.jsonl" % (name, optimizer), "\n".join(lines) + "\n")
        noise = max(abs(b - a) / abs(a) for a, b in zip(exact, single))
        ops = sorted({node.op for node in graph.node})
        print("%s %s (rate %g): loss %.6f -> %.6f, f32 against f64 %.1e; %d nodes, "
              "%d functions: %s"
              % (name, optimizer, rate, exact[0], exact[-1], noise, len(graph.node),
                 len(graph.library.function), " ".join(ops)))


def write_function(tf, name, function, x, needed_ops):
    """NAME.pb, a tf.function of x's shape, and NAME.reference.npz: x
    (`in.x`) and TensorFlow's results (`out.Identity`, `out.Identity_1`,
    ...)."""
    concrete = function.get_concrete_function(tf.TensorSpec(x.shape, tf.float32, name="x"))
    graph = concrete.graph.as_graph_def()
    ops = {node.op for node in graph.node}
    assert set(needed_ops) <= ops, sorted(ops)
    outputs = {"in.x": x}
    for k, result in enumerate(function(tf.constant(x))):
        outputs["out.Identity" + ("_%d" % k if k else "")] = result.numpy()
    write_file(name + ".pb", graph.SerializeToString(deterministic=True))
    write_npz(name + ".reference.npz", outputs)


def make_pads(tf):
    @tf.function
    def pads(x):
        return (tf.pad(x, [[0, 0], [1, 2], [2, 1]]),
                tf.pad(x, [[1, 0], [0, 0], [0, 3]], constant_values=7.5),
                tf.pad(x, [[0, 0], [2, 2], [3, 1]], mode="REFLECT"),
                tf.pad(x, [[1, 1], [3, 0], [4, 4]], mode="SYMMETRIC"))

    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 11.5
    write_function(tf, "pads", pads, x, ("Pad", "PadV2", "MirrorPad"))


def make_resizes(tf):
    v1 = tf.compat.v1.image

    @tf.function
    def resizes(x):
        # 14 -> 9 by half-pixel nearest: output row 4 is input row 7 in
        # TensorFlow's float arithmetic (6 in exact arithmetic).
        return (tf.image.resize(x, [9, 5], method="nearest"),
                v1.resize_nearest_neighbor(x, [11, 5], align_corners=True),
                v1.resize_nearest_neighbor(x, [11, 5]),
                tf.image.resize(x, [3, 7], method="bilinear"),
                v1.resize_bilinear(x, [11, 5], align_corners=True),
                v1.resize_bilinear(x, [11, 5]))

    x = np.random.default_rng(18).standard_normal([2, 14, 4, 3]).astype(np.float32)
    write_function(tf, "resizes", resizes, x, ("ResizeBilinear", "ResizeNearestNeighbor"))


def make_positions(tf):
    @tf.function
    def positions(x):
        ids = tf.cast(x[:, :, 0] * 4, tf.int32)
        counted = tf.abs(ids) + 1
        top = tf.math.top_k(x, 3)
        blocks = tf.space_to_batch_nd(x[:, :4, :, None], [2, 2], [[1, 1], [0, 2]])
        return (tf.math.argmax(x, axis=2),
                tf.math.argmin(x, axis=1, output_type=tf.int32),
                top.values, top.indices,
                tf.math.cumsum(x, axis=1, exclusive=True, reverse=True),
                tf.math.cumsum(x, axis=2),
                tf.linalg.band_part(x, 1, 2),
                tf.linalg.band_part(x, -1, 0),
                tf.one_hot(ids, 6, on_value=2.5, off_value=-1.0),
                tf.one_hot(ids, 4, axis=1, dtype=tf.int32),
                blocks,
                tf.batch_to_space(blocks, [2, 2], [[0, 1], [1, 0]]),
                tf.raw_ops.Bucketize(input=x, boundaries=[-0.5, 0.0, 0.25]),
                tf.math.bincount(counted, minlength=5, maxlength=5, axis=-1),
                tf.math.bincount(counted, minlength=5, maxlength=5, axis=-1,
                                 binary_output=True))

    # Ties within a row (the 0.5s) and ids from -3 to 3 (negative: all off).
    x = np.random.default_rng(21).uniform(-1, 1, [2, 5, 6]).astype(np.float32)
    x[0, 1, 2:5] = 0.5
    write_function(tf, "positions", positions, x,
                   ("ArgMax", "ArgMin", "TopKV2", "Cumsum", "MatrixBandPart", "OneHot",
                    "SpaceToBatchND", "BatchToSpaceND", "Bucketize", "DenseBincount"))


def make_elementwise(tf):
    @tf.function
    def elementwise(x):
        finite = tf.where(tf.math.is_finite(x), x, 0.25)
        # Divided by x, the first row (-0.7 to 0.5): near 0 the quotients
        # show each digit expm1 and log1p keep (1 + x / 2 and 1 - x / 2).
        return (tf.nn.softsign(x), tf.math.sign(x), tf.math.is_finite(x),
                tf.math.expm1(x[0]) / x[0], tf.math.log1p(x[0]) / x[0],
                tf.math.expm1(finite), tf.math.log1p(tf.abs(finite)),
                # A NaN is at or above every boundary (upper_bound).
                tf.raw_ops.Bucketize(input=x, boundaries=[-1.0, 0.0, 1.0]),
                # Floats are not folded: NaN stays NaN.
                tf.minimum(tf.maximum(x, 3.0), 2.0),
                tf.broadcast_to(x[0], [3, 8]))

    x = np.array([[1e-8, -3e-7, 2e-4, -0.01, 0.3, -0.45, 0.5, -0.7],
                  [2.0, -3.0, 20.0, -20.0, 0.0, np.inf, -np.inf, np.nan]], np.float32)
    write_function(tf, "elementwise", elementwise, x,
                   ("Softsign", "Sign", "IsFinite", "Expm1", "Log1p", "Bucketize",
                    "BroadcastTo"))


def make_rounding(tf):
    @tf.function
    def rounding(x):
        ints = tf.cast(x * 4, tf.int32)
        return (tf.math.sin(x), tf.math.cos(x), tf.math.atan(x),
                tf.math.floor(x), tf.math.ceil(x), tf.math.round(x), tf.math.rint(x),
                tf.math.floormod(x, 0.75), tf.math.floordiv(x, -0.75),
                tf.raw_ops.TruncateMod(x=x, y=tf.constant(0.75)),
                tf.math.floormod(ints, 3), tf.math.floordiv(ints, -3),
                tf.math.is_nan(x), tf.math.is_inf(x), tf.math.round(ints),
                tf.math.floordiv(ints, 3), tf.math.sinh(x / 4) / (x / 4),
                tf.math.cosh(x / 4))

    # Halves (to even), 1e-7 (sinh(x) / x keeps its digits), 1e3 and 1e6
    # angles, infinities and a NaN.
    x = np.array([[0.5, -0.5, 1.5, 2.5, -2.5, 1e-7, 3.7, -3.7],
                  [1000.25, -1e6, 0.3, -7.0, np.inf, -np.inf, np.nan, 12.0]], np.float32)
    write_function(tf, "rounding", rounding, x,
                   ("Sin", "Cos", "Atan", "Floor", "Ceil", "Round", "Rint", "FloorMod",
                    "FloorDiv", "TruncateMod", "IsNan", "IsInf", "Sinh", "Cosh"))


def make_norm3d(tf):
    rng = np.random.default_rng(23)
    scale, offset = rng.uniform(0.5, 2, 3).astype(np.float32), rng.normal(0, 1, 3).astype(np.float32)
    mean, variance = rng.normal(0, 1, 3).astype(np.float32), rng.uniform(0.5, 2, 3).astype(np.float32)

    @tf.function
    def norm3d(x):
        def batch_norm(x, data_format):
            return tf.raw_ops.FusedBatchNormV3(
                x=x, scale=scale, offset=offset, mean=mean, variance=variance,
                epsilon=0.001, data_format=data_format, is_training=False)[0]

        return (batch_norm(x, "NDHWC"),
                batch_norm(tf.transpose(x, [0, 4, 1, 2, 3]), "NCDHW"))

    x = rng.normal(0, 1, [2, 2, 3, 4, 3]).astype(np.float32)
    write_function(tf, "norm3d", norm3d, x, ("FusedBatchNormV3",))


def main():
    if os.environ.get("PYTHONHASHSEED") != "0":
        # Freezing orders a lowered while loop's nodes by a set's iteration.
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    import tensorflow as tf
    import keras

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.experimental.enable_op_determinism()
    os.makedirs(OUT, exist_ok=True)
    make_pads(tf)
    make_resizes(tf)
    for name in MODELS:
        make(tf, keras, name)
    # After the models: tracing a function advances the counter that names
    # ConvNeXt's library functions.
    make_positions(tf)
    make_elementwise(tf)
    make_rounding(tf)
    make_norm3d(tf)


if __name__ == "__main__":
    main()
