#!/usr/bin/env python3
"""Writes models exported by PyTorch and TensorFlow, and what those frameworks
compute with them, to test/Inputs/frameworks/: the fixtures of the tests that
compile real exports with Kiln, run them and train them.

A development script, never run by the tests (they read the committed files).
Run from the repository root with the venv that has torch, onnx, onnxscript,
onnxruntime, tensorflow (Keras 3) and numpy:

    /work/venv/bin/python scripts/make_framework_fixtures.py

Models (test/Inputs/frameworks/README.md lists the files):
  PyTorch, torch.onnx.export with a static batch, input `x` or `ids`, output
  `logits`: ff_head (TorchScript exporter at opsets 13 and 17, and the
  torch.export-based "dynamo" exporter), encoder (TorchScript, dynamo, and
  dynamo with its graph optimizer, which merges equal initializers and drops
  zero biases, so only its forward pass is a reference), cnn, cnn_bn.
  Keras 3, frozen to a GraphDef with convert_variables_to_constants_v2 (the
  form TensorFlow users hand to other engines): keras_dense (binary and text),
  keras_conv, and keras_unfrozen.pb, keras_dense's graph left unfrozen (its
  weights are resource captures read by ReadVariableOp: Kiln must refuse it).
  tf.function graphs over tf.Variables, frozen the same way, for the raw ops
  Keras layers do not write: tf_cnn (Conv2D SAME stride 2, FusedBatchNormV3,
  Relu6, DepthwiseConv2dNative, AvgPool SAME, Shape -> StridedSlice -> Pack
  -> Reshape, MatMul, Softmax as a second output) and tf_embed (GatherV2 of
  an embedding table, BatchMatMulV2, Softmax, Erf, Mean/Max/Min, ConcatV2).

For each model:
  MODEL.input.npy, MODEL.output.npy  a fixed random input of the training
      batch shape and the framework's f32 eval-mode output. Every ONNX file is
      also run by onnxruntime and every GraphDef by TensorFlow, and must give
      the same output within 1e-5 (relative to the output's largest value).
  MODEL_sgd.jsonl, MODEL_adam.jsonl  20 training steps from exactly the
      exported weights, on the rows of scripts/make_agreement_data.py (step k
      trains on rows [(k-1)B, kB) modulo the rows): {"step", "loss" (the loss
      before the step's update, training in float64), "loss_f32" (the same
      run in float32: the framework's own noise)}. The loss is the mean
      softmax cross-entropy of `logits` against `label` over every position.
      Training keeps eval-mode semantics: no dropout, BatchNorm normalizes
      with its moving statistics and only its scale and offset train. SGD
      has rate 0.1; Adam rate 1e-3, betas (0.9, 0.999), epsilon 1e-8 in
      PyTorch's form, m̂ / (sqrt(v̂) + eps) (torch.optim.Adam itself; done by
      hand in TensorFlow, where Keras' Adam places epsilon differently). An
      embedding table's gradient (IndexedSlices) is applied densely, as
      Keras' optimizers and torch.optim.Adam do (Kiln's default,
      --sparse-updates=dense).
  manifest.json  per file: framework, exporter, opset, input, output, label,
      batch, op types, training fixtures, and how each PyTorch parameter
      appears in the file (exporters rename, transpose and share them).

Deterministic: fixed seeds, one thread, producer versions and node metadata
(stack traces) cleared, so a second run writes the same bytes with the same
library versions. It ends by printing the f32-vs-f64 noise of every curve.
"""

import contextlib
import copy
import io
import json
import logging
import os
import subprocess
import sys
import tempfile
import warnings
from collections import Counter

# Before TensorFlow loads: no oneDNN (its kernels vary with the CPU), quiet.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["KERAS_BACKEND"] = "tensorflow"

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from onnx import numpy_helper  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "test", "Inputs", "frameworks")
STEPS = 20
SGD_LR = 0.1
ADAM = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
# Rows per step; the ONNX exports and frozen graphs have this static batch.
BATCH = {"ff_head": 8, "encoder": 4, "cnn": 4, "cnn_bn": 4, "keras_dense": 8,
         "keras_conv": 4, "tf_cnn": 4, "tf_embed": 4}
SEQUENCE, VOCAB = 8, 50
FORWARD_RTOL = 1e-5
MAX_BYTES = 150 * 1024


# --- Files --------------------------------------------------------------------


def write_file(filename, data):
    """Writes bytes or text to OUT/filename, checking the size limit."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    assert len(data) < MAX_BYTES, "%s is %d bytes" % (filename, len(data))
    with open(os.path.join(OUT, filename), "wb") as f:
        f.write(data)


def write_npy(filename, array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    write_file(filename, buffer.getvalue())


def load_datasets():
    """{model: {name: array}} as scripts/make_agreement_data.py writes them,
    so the fixtures train on the same bytes Kiln's tests feed."""
    datasets = {}
    with tempfile.TemporaryDirectory() as tmp:
        for model in BATCH:
            subprocess.run([sys.executable,
                            os.path.join(ROOT, "scripts", "make_agreement_data.py"),
                            tmp, "--only", model], check=True)
            with np.load(os.path.join(tmp, model + ".npz")) as arrays:
                datasets[model] = {name: arrays[name] for name in arrays.files}
    return datasets


def batches(data, batch):
    """The feeds of steps 1..STEPS: rows [(k-1)B, kB) modulo the rows."""
    rows = len(data["label"])
    assert rows % batch == 0, (rows, batch)
    for step in range(STEPS):
        start = (step * batch) % rows
        yield {name: array[start:start + batch] for name, array in data.items()}


def write_losses(model, optimizer, losses, losses_f32, noise):
    """MODEL_OPTIMIZER.jsonl; notes the worst f32-vs-f64 relative difference."""
    lines = []
    for step, (loss, loss_f32) in enumerate(zip(losses, losses_f32), 1):
        lines.append(json.dumps({"step": step, "loss": loss, "loss_f32": loss_f32}))
    name = "%s_%s.jsonl" % (model, optimizer)
    write_file(name, "\n".join(lines) + "\n")
    worst = max((abs(b - a) / abs(a), step)
                for step, (a, b) in enumerate(zip(losses, losses_f32), 1))
    noise.append((model, optimizer, losses[0], losses[-1]) + worst)
    return name


def relative_difference(actual, expected):
    """max |actual - expected| over max |expected|: one number per output."""
    return float(np.max(np.abs(actual.astype(np.float64) - expected)) /
                 np.max(np.abs(expected)))


def spec(name, array):
    return {"name": name, "dtype": str(array.dtype), "shape": list(array.shape)}


# --- PyTorch models -----------------------------------------------------------


class FfHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.norm = torch.nn.LayerNorm(32)
        self.act = torch.nn.GELU()
        self.drop = torch.nn.Dropout(0.1)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(self.drop(self.act(self.norm(self.fc1(x)))))


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, 32)
        self.layer = torch.nn.TransformerEncoderLayer(
            d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True)
        self.head = torch.nn.Linear(32, VOCAB)

    def forward(self, ids):
        return self.head(self.layer(self.emb(ids)))


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 8, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        h = self.pool(torch.relu(self.conv1(x)))
        return self.fc(torch.relu(self.conv2(h)).mean((2, 3)))


class CnnBn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.AvgPool2d(2)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
        self.bn2 = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8 * 3 * 3, 10)

    def forward(self, x):
        h = self.pool(torch.relu(self.bn1(self.conv1(x))))
        h = torch.relu(self.bn2(self.conv2(h)))
        return self.fc(torch.flatten(h, 1))


def set_batch_norm_state(module, seed):
    """Moving statistics, scale and offset away from 0 and 1, so the
    inference form (x - mean) / sqrt(var + eps) * scale + offset shows."""
    generator = torch.Generator().manual_seed(seed)

    def uniform(shape, low, high):
        return low + (high - low) * torch.rand(shape, generator=generator)

    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, torch.nn.BatchNorm2d):
                n = layer.num_features
                layer.running_mean.copy_(uniform(n, -0.5, 0.5))
                layer.running_var.copy_(uniform(n, 0.5, 2.0))
                layer.weight.copy_(uniform(n, 0.5, 1.5))
                layer.bias.copy_(uniform(n, -0.5, 0.5))


class TorchModel:
    """A seeded module in eval mode, its input name and reference input, and
    the exports written from it (file name, torch.onnx.export options)."""

    def __init__(self, name, module, feed_name, feed, exports):
        self.name, self.module = name, module.eval()
        self.feed_name, self.feed, self.exports = feed_name, feed, exports


def torch_models():
    rng = np.random.default_rng(2024)

    def floats(*shape):
        return rng.uniform(-1.0, 1.0, shape).astype(np.float32)

    torch.manual_seed(1)
    ff_head = FfHead()
    torch.manual_seed(2)
    encoder = Encoder()
    torch.manual_seed(3)
    cnn = Cnn()
    torch.manual_seed(4)
    cnn_bn = CnnBn()
    set_batch_norm_state(cnn_bn, 5)
    torchscript = {"dynamo": False}
    return [
        TorchModel("ff_head", ff_head, "x", floats(BATCH["ff_head"], 16), [
            ("ff_head_opset13.onnx", dict(torchscript, opset_version=13)),
            ("ff_head_opset17.onnx", dict(torchscript, opset_version=17)),
            ("ff_head_dynamo.onnx", {"dynamo": True, "optimize": False})]),
        TorchModel("encoder", encoder, "ids",
                   rng.integers(0, VOCAB, (BATCH["encoder"], SEQUENCE)), [
            ("encoder_opset17.onnx", dict(torchscript, opset_version=17)),
            ("encoder_dynamo.onnx", {"dynamo": True, "optimize": False}),
            ("encoder_dynamo_optimized.onnx", {"dynamo": True})]),
        TorchModel("cnn", cnn, "x", floats(BATCH["cnn"], 1, 12, 12), [
            ("cnn_opset17.onnx", dict(torchscript, opset_version=17)),
            ("cnn_dynamo.onnx", {"dynamo": True, "optimize": False})]),
        TorchModel("cnn_bn", cnn_bn, "x", floats(BATCH["cnn_bn"], 1, 12, 12), [
            ("cnn_bn_opset17.onnx", dict(torchscript, opset_version=17,
                                         do_constant_folding=False))]),
    ]


# --- ONNX export and checks ----------------------------------------------------


def export_onnx(model, filename, options):
    """torch.onnx.export to a temp file, then the bytes to write: the same
    for the same library versions (no version string, no stack traces)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, filename)
        with contextlib.redirect_stdout(io.StringIO()):  # dynamo's progress lines
            torch.onnx.export(model.module, (torch.from_numpy(model.feed),), path,
                              input_names=[model.feed_name],
                              output_names=["logits"], external_data=False,
                              **options)
        m = onnx.load(path)
    m.producer_version = "torch"
    m.ClearField("metadata_props")
    m.graph.ClearField("doc_string")
    for node in m.graph.node:
        node.ClearField("metadata_props")
        node.ClearField("doc_string")
    for info in (list(m.graph.input) + list(m.graph.output) +
                 list(m.graph.value_info) + list(m.graph.initializer)):
        info.ClearField("metadata_props")
    return m


def onnx_op_types(m):
    return dict(sorted(Counter(node.op_type for node in m.graph.node).items()))


def onnx_parameters(m, module):
    """How each float entry of the module's state_dict appears in the file:
    {"initializer": name} plus "transposed" when the exporter folded a
    transpose into it, "identity": the Identity output that renames a
    shared initializer, or {"initializer": null, "equal_to": [...]} when the
    exporter dropped it (merged into an equal initializer or removed); and
    "trainable": false for buffers (BatchNorm's running statistics)."""
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    identities = {node.output[0]: node.input[0] for node in m.graph.node
                  if node.op_type == "Identity" and node.input[0] in inits}
    state = {name: value.detach().numpy() for name, value in
             module.state_dict().items() if value.dtype == torch.float32}
    trainable = dict(module.named_parameters())
    unnamed = [name for name in inits if name not in state]
    result = {}
    for name, value in state.items():
        if name in inits and np.array_equal(inits[name], value):
            result[name] = {"initializer": name}
        elif name in identities and np.array_equal(inits[identities[name]], value):
            result[name] = {"initializer": identities[name], "identity": name}
        else:
            same = [i for i in unnamed if inits[i].shape == value.shape and
                    np.array_equal(inits[i], value)]
            flipped = [i for i in unnamed if value.ndim == 2 and
                       inits[i].shape == value.T.shape and
                       np.array_equal(inits[i], value.T)]
            if len(same) + len(flipped) == 1:
                result[name] = {"initializer": (same + flipped)[0]}
                if flipped:
                    result[name]["transposed"] = True
            else:
                equal = [i for i, v in inits.items()
                         if v.shape == value.shape and np.array_equal(v, value)]
                result[name] = {"initializer": None, "equal_to": equal}
        result[name]["trainable"] = name in trainable
    return result


def onnx_notes(m, parameters):
    """What a trainer of the file has to know about its initializers."""
    notes = []
    renamed = ["%s is %s%s" % (name, p["initializer"],
                               " (transposed)" if p.get("transposed") else "")
               for name, p in parameters.items()
               if p["initializer"] not in (None, name) and "identity" not in p]
    if renamed:
        notes.append("initializers renamed by the exporter: " + "; ".join(renamed))
    shared = {}
    for name, p in parameters.items():
        if "identity" in p:
            shared.setdefault(p["initializer"], []).append(name)
    for init, aliases in sorted(shared.items()):
        notes.append("equal-valued parameters deduplicated by the exporter: %s "
                     "read initializer %s through Identity nodes; they are "
                     "separate parameters and train apart" % (
                         ", ".join(aliases), init))
    dropped = [name for name, p in parameters.items() if p["initializer"] is None]
    if dropped:
        notes.append("parameters missing from the file (merged into an equal "
                     "initializer or their op removed): " + ", ".join(dropped))
    return notes


def check_onnx(m, filename, model, expected, first_batch, first_loss):
    """onnx.checker and onnxruntime on the exported file: the reference
    output on the reference input, and the fixtures' step-1 loss (training
    starts from the weights in the file, on the same data)."""
    import onnxruntime

    result = {}
    try:
        onnx.checker.check_model(m, full_check=True)
        result["onnx_checker"] = "ok"
    except Exception as error:  # noqa: BLE001 - reported, not fatal
        result["onnx_checker"] = "failed: %s" % str(error).splitlines()[0]
    try:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        session = onnxruntime.InferenceSession(
            m.SerializeToString(), options, providers=["CPUExecutionProvider"])
        actual = session.run(["logits"], {model.feed_name: model.feed})[0]
        logits = session.run(["logits"],
                             {model.feed_name: first_batch[model.feed_name]})[0]
    except Exception as error:  # noqa: BLE001 - reported, not fatal
        result["onnxruntime"] = "failed: %s" % str(error).splitlines()[0]
        return result
    result["onnxruntime"] = "ok"
    result["onnxruntime_relative_difference"] = relative_difference(actual, expected)
    result["onnxruntime_step1_loss_difference"] = loss_difference(
        logits, first_batch["label"], first_loss)
    for key in ("onnxruntime_relative_difference",
                "onnxruntime_step1_loss_difference"):
        assert result[key] <= FORWARD_RTOL, (filename, result)
    return result


def loss_difference(logits, labels, expected):
    """|mean cross-entropy(logits, labels) - expected| / expected."""
    logits = logits.astype(np.float64).reshape(-1, logits.shape[-1])
    top = logits.max(axis=1)
    log_sum = top + np.log(np.exp(logits - top[:, None]).sum(axis=1))
    picked = logits[np.arange(len(logits)), labels.reshape(-1)]
    return float(abs(np.mean(log_sum - picked) - expected) / expected)


# --- PyTorch training ---------------------------------------------------------


def torch_losses(model, data, optimizer, dtype):
    """The losses of STEPS steps of `model`'s module cast to `dtype`, each
    computed before its update, in eval mode."""
    module = copy.deepcopy(model.module).to(dtype).eval()
    params = list(module.parameters())
    if optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=SGD_LR)
    else:
        opt = torch.optim.Adam(params, lr=ADAM["lr"],
                               betas=(ADAM["beta1"], ADAM["beta2"]),
                               eps=ADAM["eps"], foreach=False)
    losses = []
    for feeds in batches(data, BATCH[model.name]):
        inputs = torch.from_numpy(feeds[model.feed_name])
        if inputs.is_floating_point():
            inputs = inputs.to(dtype)
        logits = module(inputs)
        labels = torch.from_numpy(feeds["label"]).long()
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               labels.reshape(-1))
        losses.append(loss.item())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return losses


def make_torch_model(model, data, manifest, noise):
    with torch.no_grad():
        output = model.module(torch.from_numpy(model.feed)).numpy()
    write_npy(model.name + ".input.npy", model.feed)
    write_npy(model.name + ".output.npy", output)

    fixtures, first_loss = [], None
    for optimizer in ("sgd", "adam"):
        losses = torch_losses(model, data, optimizer, torch.float64)
        first_loss = losses[0]
        fixtures.append(write_losses(
            model.name, optimizer, losses,
            torch_losses(model, data, optimizer, torch.float32), noise))
    first_batch = next(batches(data, BATCH[model.name]))

    for filename, options in model.exports:
        m = export_onnx(model, filename, options)
        write_file(filename, m.SerializeToString(deterministic=True))
        checks = check_onnx(m, filename, model, output, first_batch, first_loss)
        parameters = onnx_parameters(m, model.module)
        optimized = options.get("dynamo") and options.get("optimize", True)
        exporter = ("torch.onnx.export(dynamo=True%s)" % (
            "" if optimized else ", optimize=False") if options["dynamo"] else
            "torch.onnx.export(dynamo=False%s)" % (
                ", do_constant_folding=False"
                if options.get("do_constant_folding") is False else ""))
        entry = {
            "model": model.name,
            "framework": "pytorch",
            "exporter": exporter,
            "opset": next(o.version for o in m.opset_import
                          if o.domain in ("", "ai.onnx")),
            "ir_version": m.ir_version,
            "input": dict(spec(model.feed_name, model.feed),
                          file=model.name + ".input.npy"),
            "output": dict(spec("logits", output), file=model.name + ".output.npy"),
            "label": spec("label", data["label"][:BATCH[model.name]]),
            "batch": BATCH[model.name],
            "data": model.name + ".npz",
            "op_types": onnx_op_types(m),
            "identity_over_initializer": sorted(
                "%s -> %s" % (node.input[0], node.output[0]) for node in m.graph.node
                if node.op_type == "Identity" and
                node.input[0] in {t.name for t in m.graph.initializer}),
            "parameters": parameters,
            "trainable": not optimized,
            "training": fixtures if not optimized else [],
            "notes": onnx_notes(m, parameters),
        }
        entry.update(checks)
        if optimized:
            entry["notes"].append(
                "the exporter's optimizer merged equal-valued initializers and "
                "dropped zero biases, so the file cannot be trained as the "
                "module would be: a forward reference only")
        manifest[filename] = entry


# --- Keras models -------------------------------------------------------------


def keras_dense(keras, dtype):
    x = keras.Input((16,), batch_size=BATCH["keras_dense"], name="x", dtype=dtype)
    h = keras.layers.Dense(32, activation="relu", name="dense", dtype=dtype)(x)
    h = keras.layers.LayerNormalization(name="norm", dtype=dtype)(h)
    logits = keras.layers.Dense(4, name="logits", dtype=dtype)(h)
    return keras.Model(x, logits, name="keras_dense")


def keras_conv(keras, dtype):
    layers = keras.layers
    x = keras.Input((12, 12, 1), batch_size=BATCH["keras_conv"], name="x",
                    dtype=dtype)
    h = layers.Conv2D(8, 3, padding="same", activation="relu", name="conv1",
                      dtype=dtype)(x)
    h = layers.MaxPooling2D(2, name="pool", dtype=dtype)(h)
    h = layers.Conv2D(8, 3, padding="valid", name="conv2", dtype=dtype)(h)
    h = layers.BatchNormalization(name="bn", dtype=dtype)(h)
    h = layers.ReLU(name="relu", dtype=dtype)(h)
    h = layers.GlobalAveragePooling2D(name="gap", dtype=dtype)(h)
    logits = layers.Dense(10, name="logits", dtype=dtype)(h)
    return keras.Model(x, logits, name="keras_conv")


def set_keras_batch_norm_state(model, seed):
    """As set_batch_norm_state: statistics, scale and offset away from 0/1."""
    rng = np.random.default_rng(seed)
    for layer in model.layers:
        if layer.__class__.__name__ == "BatchNormalization":
            n = layer.moving_mean.shape[0]
            layer.moving_mean.assign(rng.uniform(-0.5, 0.5, n).astype(np.float32))
            layer.moving_variance.assign(rng.uniform(0.5, 2.0, n).astype(np.float32))
            layer.gamma.assign(rng.uniform(0.5, 1.5, n).astype(np.float32))
            layer.beta.assign(rng.uniform(-0.5, 0.5, n).astype(np.float32))


class FrozenModel:
    """model(x, training=False) traced for a float32 input of `shape`:
    `graph` frozen, `unfrozen` as traced, the input and output node names,
    and `parameters`, each Keras variable's Const node in `graph`."""

    def __init__(self, tf, model, shape):
        from tensorflow.python.framework.convert_to_constants import (
            convert_variables_to_constants_v2)

        function = tf.function(lambda x: model(x, training=False))
        concrete = function.get_concrete_function(
            tf.TensorSpec(shape, tf.float32, name="x"))
        frozen = convert_variables_to_constants_v2(concrete)
        self.graph = frozen.graph.as_graph_def()
        self.unfrozen = concrete.graph.as_graph_def()
        (feed,), (fetch,) = frozen.inputs, frozen.outputs
        self.feed_name = feed.name.split(":")[0]
        self.fetch_name = fetch.name.split(":")[0]
        # Each variable is captured as a resource placeholder, which freezing
        # turns into a Const of the same name read through an Identity.
        nodes = {node.name: node for node in self.graph.node}
        readers = {node.input[0]: node.name for node in self.graph.node
                   if node.op == "Identity" and node.input}
        self.parameters = {}
        for handle, placeholder in concrete.graph.captures:
            (variable,) = [v for v in model.variables if v.value.handle is handle]
            const = nodes[placeholder.op.name]
            assert const.op == "Const", const
            assert np.array_equal(tf.make_ndarray(const.attr["value"].tensor),
                                  variable.numpy()), variable.path
            self.parameters[variable.path] = {
                "const": const.name, "read_by": readers[const.name],
                "shape": list(variable.shape), "trainable": variable.trainable}


def run_graph_def(tf, graph_def, feed_name, fetch_name, feed):
    """What TensorFlow computes with a frozen GraphDef, in a fresh graph."""
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1,
                                      inter_op_parallelism_threads=1)
    with tf.compat.v1.Session(graph=graph, config=config) as session:
        return session.run(fetch_name + ":0", {feed_name + ":0": feed})


def tf_op_types(graph_def):
    ops = Counter(node.op for node in graph_def.node)
    for function in graph_def.library.function:
        ops.update(node.op for node in function.node_def)
    return dict(sorted(ops.items()))


def tf_losses(tf, keras, build, weights, data, optimizer, dtype):
    """STEPS steps of a fresh `build(dtype)` model holding `weights`, by hand:
    the gradients of model(x, training=False), then SGD or PyTorch's Adam."""
    model = build(keras, dtype)
    model.set_weights([w.astype(dtype) for w in weights])
    variables = model.trainable_variables
    moments = [(tf.Variable(tf.zeros_like(v)), tf.Variable(tf.zeros_like(v)))
               for v in variables]
    beta1, beta2, eps = ADAM["beta1"], ADAM["beta2"], ADAM["eps"]
    losses = []
    for step, feeds in enumerate(batches(data, BATCH[model.name]), 1):
        x = tf.constant(feeds["x"].astype(dtype))
        labels = tf.constant(feeds["label"])
        with tf.GradientTape() as tape:
            logits = model(x, training=False)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits))
        losses.append(float(loss.numpy()))
        grads = tape.gradient(loss, variables)
        # torch.optim.Adam's single-tensor update, step for step: the bias
        # corrections are Python (f64) numbers.
        step_size = ADAM["lr"] / (1 - beta1 ** step)
        correction2_sqrt = (1 - beta2 ** step) ** 0.5
        for variable, grad, (m, v) in zip(variables, grads, moments):
            if optimizer == "sgd":
                variable.assign_sub(SGD_LR * grad)
                continue
            m.assign_add((1 - beta1) * (grad - m))
            v.assign(v * beta2 + (1 - beta2) * grad * grad)
            denom = tf.sqrt(v) / correction2_sqrt + eps
            variable.assign_sub(step_size * (m / denom))
    return losses


def make_keras_models(datasets, manifest, noise):
    import tensorflow as tf
    import keras

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.experimental.enable_op_determinism()
    rng = np.random.default_rng(2025)
    for name, build, seed in (("keras_dense", keras_dense, 6),
                              ("keras_conv", keras_conv, 7)):
        keras.utils.set_random_seed(seed)
        model = build(keras, "float32")
        set_keras_batch_norm_state(model, seed)
        shape = [BATCH[name]] + list(model.input.shape[1:])
        feed = rng.uniform(-1.0, 1.0, shape).astype(np.float32)
        entry, frozen = make_keras_model(tf, keras, model, build, feed,
                                         datasets[name], noise)
        write_file(name + ".pb", frozen.graph.SerializeToString(deterministic=True))
        manifest[name + ".pb"] = entry
        if name == "keras_dense":
            write_keras_dense_variants(frozen, entry, manifest)


def make_keras_model(tf, keras, model, build, feed, data, noise):
    """Freezes `model`, writes its references and training fixtures, and
    returns (its manifest entry, the FrozenModel)."""
    name = model.name
    weights = model.get_weights()
    output = model(feed, training=False).numpy()
    frozen = FrozenModel(tf, model, list(feed.shape))
    difference = relative_difference(
        run_graph_def(tf, frozen.graph, frozen.feed_name, frozen.fetch_name, feed),
        output)
    assert difference <= FORWARD_RTOL, (name, difference)
    write_npy(name + ".input.npy", feed)
    write_npy(name + ".output.npy", output)

    fixtures = []
    for optimizer in ("sgd", "adam"):
        losses = tf_losses(tf, keras, build, weights, data, optimizer, "float64")
        fixtures.append(write_losses(
            name, optimizer, losses,
            tf_losses(tf, keras, build, weights, data, optimizer, "float32"),
            noise))
    first_batch = next(batches(data, BATCH[name]))
    first_loss_difference = loss_difference(
        run_graph_def(tf, frozen.graph, frozen.feed_name, frozen.fetch_name,
                      first_batch["x"]),
        first_batch["label"], losses[0])
    assert first_loss_difference <= FORWARD_RTOL, (name, first_loss_difference)

    entry = {
        "model": name,
        "framework": "tensorflow",
        "exporter": "tf.function(model(x, training=False)) -> "
                    "convert_variables_to_constants_v2 -> GraphDef",
        "input": dict(spec(frozen.feed_name, feed), file=name + ".input.npy"),
        "output": dict(spec(frozen.fetch_name, output), file=name + ".output.npy"),
        "label": spec("label", data["label"][:BATCH[name]]),
        "batch": BATCH[name],
        "data": name + ".npz",
        "op_types": tf_op_types(frozen.graph),
        "parameters": frozen.parameters,
        "trainable": True,
        "training": fixtures,
        "tensorflow_relative_difference": difference,
        "tensorflow_step1_loss_difference": first_loss_difference,
        "notes": ["each Keras variable is a Const node read through an "
                  "Identity (see parameters); the output Identity has a "
                  "control input from a NoOp"],
    }
    statistics = [p["const"] for p in frozen.parameters.values()
                  if not p["trainable"]]
    if statistics:
        entry["notes"].append(
            "not trained (BatchNormalization moving statistics, fixed in "
            "eval mode): " + ", ".join(statistics))
    return entry, frozen


def write_keras_dense_variants(frozen, entry, manifest):
    """keras_dense.pbtxt (the frozen graph as text) and keras_unfrozen.pb."""
    from google.protobuf import text_format

    text = text_format.MessageToString(frozen.graph)
    reparsed = type(frozen.graph)()
    text_format.Parse(text, reparsed)
    assert reparsed == frozen.graph
    write_file("keras_dense.pbtxt", text)
    manifest["keras_dense.pbtxt"] = dict(
        entry, exporter=entry["exporter"] + " (text format)")
    write_file("keras_unfrozen.pb",
               frozen.unfrozen.SerializeToString(deterministic=True))
    manifest["keras_unfrozen.pb"] = dict(
        entry, exporter="tf.function(...).get_concrete_function()"
        ".graph.as_graph_def(), not frozen",
        op_types=tf_op_types(frozen.unfrozen), parameters={},
        trainable=False, training=[],
        tensorflow_relative_difference=None,
        tensorflow_step1_loss_difference=None,
        notes=["unfrozen: each weight is a DT_RESOURCE Placeholder "
               "(a captured variable) read by ReadVariableOp, not a "
               "VarHandleOp; there are no values to import, Kiln must "
               "refuse it"])


# --- tf.function graphs -------------------------------------------------------


def tf_cnn_parameters(rng):
    """conv1, a BatchNorm (moving statistics away from 0 and 1), a depthwise
    convolution and a dense layer."""
    def u(*shape, scale=0.3):
        return rng.uniform(-scale, scale, shape).astype(np.float32)
    return {"conv1/kernel": u(3, 3, 3, 8), "conv1/bias": u(8, scale=0.1),
            "bn/gamma": rng.uniform(0.5, 1.5, 8).astype(np.float32),
            "bn/beta": u(8, scale=0.5), "bn/moving_mean": u(8, scale=0.5),
            "bn/moving_variance": rng.uniform(0.5, 2.0, 8).astype(np.float32),
            "depthwise/kernel": u(3, 3, 8, 2), "logits/kernel": u(144, 10, scale=0.2),
            "logits/bias": u(10, scale=0.1)}


def tf_cnn_forward(tf, p, x):
    """x [4, 12, 12, 3] NHWC -> (logits [4, 10], softmax)."""
    h = tf.nn.conv2d(x, p["conv1/kernel"], strides=2, padding="SAME")
    h = tf.nn.bias_add(h, p["conv1/bias"])
    if x.dtype == tf.float32:
        h, _, _ = tf.compat.v1.nn.fused_batch_norm(
            h, p["bn/gamma"], p["bn/beta"], p["bn/moving_mean"],
            p["bn/moving_variance"], epsilon=1e-3, is_training=False)
    else:
        # FusedBatchNormV3 has no float64 kernel: its inference formula.
        h = (h - p["bn/moving_mean"]) * (
            tf.math.rsqrt(p["bn/moving_variance"] + 1e-3) * p["bn/gamma"]) + p["bn/beta"]
    h = tf.nn.relu6(h)
    h = tf.nn.depthwise_conv2d(h, p["depthwise/kernel"], strides=[1, 1, 1, 1],
                               padding="SAME")
    h = tf.nn.avg_pool2d(h, 3, 2, "SAME")
    # tf.shape folds a static shape into a Const; the raw op keeps the
    # Shape -> StridedSlice -> Pack -> Reshape of dynamic-batch code.
    batch = tf.raw_ops.Shape(input=h)[0]
    flat = tf.reshape(h, tf.stack([batch, -1]))
    logits = tf.matmul(flat, p["logits/kernel"]) + p["logits/bias"]
    return logits, tf.nn.softmax(logits)


def tf_embed_parameters(rng):
    def u(*shape, scale=0.3):
        return rng.uniform(-scale, scale, shape).astype(np.float32)
    return {"embedding": u(50, 16, scale=1.0), "dense/kernel": u(16, 16),
            "dense/bias": u(16, scale=0.1), "logits/kernel": u(32, 10),
            "logits/bias": u(10, scale=0.1)}


def tf_embed_forward(tf, p, ids):
    """ids [4, 8] int32 -> logits [4, 10]: an embedding lookup, one
    attention-like mixing, a dense layer with erf GELU, mean and max pooling."""
    e = tf.gather(p["embedding"], ids)
    scores = tf.matmul(e, e, transpose_b=True) / 4.0
    h = tf.matmul(tf.nn.softmax(scores), e)
    h = tf.matmul(h, p["dense/kernel"]) + p["dense/bias"]
    h = 0.5 * h * (1.0 + tf.math.erf(h / np.float32(np.sqrt(2.0))))
    z = tf.concat([tf.reduce_mean(h, 1), tf.reduce_max(h, 1)], -1)
    z = z - tf.reduce_min(z, -1, keepdims=True)
    return tf.matmul(z, p["logits/kernel"]) + p["logits/bias"]


TF_MODELS = {
    # name: (parameters, forward, input name, input dtype, input shape, seed)
    "tf_cnn": (tf_cnn_parameters, tf_cnn_forward, "x", "float32", [4, 12, 12, 3], 11),
    "tf_embed": (tf_embed_parameters, tf_embed_forward, "ids", "int32", [4, 8], 12),
}


def tf_variables(tf, values, dtype):
    """The parameters as tf.Variables of `dtype`; moving statistics do not
    train."""
    return {name: tf.Variable(value.astype(dtype), name=name,
                              trainable="moving" not in name)
            for name, value in values.items()}


def tf_module_losses(tf, forward, values, feed_name, data, batch, optimizer, dtype):
    """STEPS steps from `values`, by hand as tf_losses does; an embedding
    table's IndexedSlices gradient is applied densely, as Keras' optimizers
    do."""
    p = tf_variables(tf, values, dtype)
    variables = [v for v in p.values() if v.trainable]
    moments = [(tf.Variable(tf.zeros_like(v)), tf.Variable(tf.zeros_like(v)))
               for v in variables]
    beta1, beta2, eps = ADAM["beta1"], ADAM["beta2"], ADAM["eps"]
    losses = []
    for step, feeds in enumerate(batches(data, batch), 1):
        x = feeds[feed_name]
        x = tf.constant(x.astype(dtype) if x.dtype.kind == "f" else x)
        with tf.GradientTape() as tape:
            logits = forward(tf, p, x)
            logits = logits[0] if isinstance(logits, tuple) else logits
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=tf.constant(feeds["label"]), logits=logits))
        losses.append(float(loss.numpy()))
        grads = tape.gradient(loss, variables)
        step_size = ADAM["lr"] / (1 - beta1 ** step)
        correction2_sqrt = (1 - beta2 ** step) ** 0.5
        for variable, grad, (m, v) in zip(variables, grads, moments):
            # An embedding table's gradient, rows of the looked-up ids:
            # Keras' Adam updates every row (moments decay where no id is).
            grad = tf.convert_to_tensor(grad)
            if optimizer == "sgd":
                variable.assign_sub(SGD_LR * grad)
                continue
            m.assign_add((1 - beta1) * (grad - m))
            v.assign(v * beta2 + (1 - beta2) * grad * grad)
            denom = tf.sqrt(v) / correction2_sqrt + eps
            variable.assign_sub(step_size * (m / denom))
    return losses


def traced(tf, forward, p):
    """forward over the variables `p`, a function of the input alone."""
    return lambda x: forward(tf, p, x)


def make_tf_module_models(datasets, manifest, noise):
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)

    for name, (parameters, forward, feed_name, feed_dtype, shape, seed) in \
            TF_MODELS.items():
        rng = np.random.default_rng(seed)
        values = parameters(rng)
        p = tf_variables(tf, values, "float32")
        function = tf.function(traced(tf, forward, p))
        concrete = function.get_concrete_function(
            tf.TensorSpec(shape, feed_dtype, name=feed_name))
        frozen = convert_variables_to_constants_v2(concrete)
        graph = frozen.graph.as_graph_def()
        fetch_names = [t.name.split(":")[0] for t in frozen.outputs]
        if feed_dtype == "float32":
            feed = rng.uniform(-1.0, 1.0, shape).astype(np.float32)
        else:
            feed = rng.integers(0, 50, shape).astype(np.int32)
        output = forward(tf, p, tf.constant(feed))
        output = (output[0] if isinstance(output, tuple) else output).numpy()
        difference = relative_difference(
            run_graph_def(tf, graph, feed_name, fetch_names[0], feed), output)
        assert difference <= FORWARD_RTOL, (name, difference)
        write_file(name + ".pb", graph.SerializeToString(deterministic=True))
        write_npy(name + ".input.npy", feed)
        write_npy(name + ".output.npy", output)

        data, batch = datasets[name], BATCH[name]
        fixtures = []
        for optimizer in ("sgd", "adam"):
            losses = tf_module_losses(tf, forward, values, feed_name, data, batch,
                                      optimizer, "float64")
            fixtures.append(write_losses(
                name, optimizer, losses,
                tf_module_losses(tf, forward, values, feed_name, data, batch,
                                 optimizer, "float32"), noise))
        first_batch = next(batches(data, batch))
        first_loss_difference = loss_difference(
            run_graph_def(tf, graph, feed_name, fetch_names[0],
                          first_batch[feed_name]),
            first_batch["label"], losses[0])
        assert first_loss_difference <= FORWARD_RTOL, (name, first_loss_difference)

        # Each variable is captured as a resource placeholder, which freezing
        # turns into a Const of the same name.
        nodes = {node.name: node for node in graph.node}
        variables = {v.handle.ref(): (key, v) for key, v in p.items()}
        parameter_map = {}
        for handle, placeholder in concrete.graph.captures:
            key, variable = variables[handle.ref()]
            const = nodes[placeholder.op.name]
            assert const.op == "Const", const
            assert np.array_equal(tf.make_ndarray(const.attr["value"].tensor),
                                  variable.numpy()), key
            parameter_map[key] = {"const": const.name, "shape": list(variable.shape),
                                  "trainable": variable.trainable}
        manifest[name + ".pb"] = {
            "model": name,
            "framework": "tensorflow",
            "exporter": "tf.function(forward over tf.Variables) -> "
                        "convert_variables_to_constants_v2 -> GraphDef",
            "input": dict(spec(feed_name, feed), file=name + ".input.npy"),
            "output": dict(spec(fetch_names[0], output), file=name + ".output.npy"),
            "outputs": fetch_names,
            "label": spec("label", data["label"][:batch]),
            "batch": batch,
            "data": name + ".npz",
            "op_types": tf_op_types(graph),
            "parameters": parameter_map,
            "trainable": True,
            "training": fixtures,
            "tensorflow_relative_difference": difference,
            "tensorflow_step1_loss_difference": first_loss_difference,
            "notes": ["not trained (BatchNorm moving statistics): " + ", ".join(
                entry["const"] for entry in parameter_map.values()
                if not entry["trainable"])]
            if any(not entry["trainable"] for entry in parameter_map.values()) else [],
        }


# --- Manifest and README ----------------------------------------------------------


def write_manifest(manifest):
    document = {
        "generator": "scripts/make_framework_fixtures.py",
        "training": {
            "steps": STEPS,
            "loss": "mean softmax cross-entropy of the output against the label "
                    "over every position (PyTorch's cross_entropy on flattened "
                    "tokens for the encoder)",
            "batches": "step k trains on rows [(k-1)B, kB) modulo the rows of "
                       "DATA, written by scripts/make_agreement_data.py",
            "mode": "eval: no dropout; BatchNorm uses its moving statistics, "
                    "which do not train (its scale and offset do)",
            "sgd": {"learning_rate": SGD_LR},
            "adam": {"learning_rate": ADAM["lr"], "beta1": ADAM["beta1"],
                     "beta2": ADAM["beta2"], "epsilon": ADAM["eps"],
                     "form": "m_hat / (sqrt(v_hat) + epsilon)"},
            "fields": {"loss": "float64 training", "loss_f32": "float32 training"},
        },
        "forward_tolerance": FORWARD_RTOL,
        "files": dict(sorted(manifest.items())),
    }
    write_file("manifest.json", to_json(document) + "\n")


def to_json(value, indent=""):
    """JSON with one key per line and lists of numbers or strings on one."""
    if isinstance(value, dict) and value:
        inner = indent + "  "
        items = ["%s%s: %s" % (inner, json.dumps(key), to_json(item, inner))
                 for key, item in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        inner = indent + "  "
        return "[\n" + ",\n".join(inner + to_json(v, inner) for v in value) + \
            "\n" + indent + "]"
    return json.dumps(value)


README = """\
# Models exported by PyTorch and TensorFlow

Written by `scripts/make_framework_fixtures.py`; regenerate with

    /work/venv/bin/python scripts/make_framework_fixtures.py

from the repository root. The training data is `MODEL.npz` of
`scripts/make_agreement_data.py` (standard library; the tests run it too).
`manifest.json` describes every model file: exporter, opset, input, output,
label, batch, op types, training fixtures, where each parameter went (exporters
rename, transpose and deduplicate them) and which ones train.

- `ff_head_opset13.onnx`, `ff_head_opset17.onnx`, `ff_head_dynamo.onnx`:
  Linear, LayerNorm, GELU, Dropout, Linear; x `[8, 16]`. TorchScript exporter
  at opset 13 (LayerNorm as primitive ops) and 17, where GELU is an `Erf`
  pattern; the dynamo exporter (`optimize=False`, opset 20: `Gelu`).
- `encoder_opset17.onnx`, `encoder_dynamo.onnx`: Embedding,
  TransformerEncoderLayer, Linear; ids `[4, 8]`, logits `[4, 8, 50]`.
  `encoder_dynamo_optimized.onnx`: the dynamo exporter's optimized graph (equal
  initializers merged, zero biases dropped): a forward reference only.
- `cnn_opset17.onnx`, `cnn_dynamo.onnx`: Conv, ReLU, MaxPool, Conv, ReLU,
  mean over H and W, Linear; NCHW x `[4, 1, 12, 12]`.
- `cnn_bn_opset17.onnx`: Conv, BatchNorm, ReLU, AvgPool, grouped strided Conv,
  BatchNorm, ReLU, Flatten, Linear; `BatchNormalization` nodes kept, with
  non-trivial running statistics.
- `keras_dense.pb`, `keras_dense.pbtxt`: Keras Dense (relu),
  LayerNormalization, Dense, as a frozen GraphDef (binary and text); x `[8, 16]`.
- `keras_conv.pb`: Keras Conv2D, MaxPooling2D, Conv2D, BatchNormalization,
  ReLU, GlobalAveragePooling2D, Dense; NHWC x `[4, 12, 12, 1]`; frozen.
- `keras_unfrozen.pb`: `keras_dense` not frozen (weights are resource
  captures read by `ReadVariableOp`): Kiln must refuse it.
- `tf_cnn.pb`: a tf.function over tf.Variables, frozen: Conv2D (SAME,
  stride 2), BiasAdd, FusedBatchNormV3 (inference), Relu6,
  DepthwiseConv2dNative, AvgPool (SAME), Shape -> StridedSlice -> Pack ->
  Reshape, MatMul; outputs `Identity` (logits) and `Identity_1` (softmax);
  NHWC x `[4, 12, 12, 3]`.
- `tf_embed.pb`: GatherV2 of an embedding table (ids `[4, 8]` int32),
  BatchMatMulV2, Softmax, erf GELU, Mean/Max/Min, ConcatV2, MatMul; frozen.
- `MODEL.input.npy`, `MODEL.output.npy`: a fixed input and the framework's
  f32 eval-mode output. onnxruntime (ONNX) and TensorFlow (GraphDef) give the
  same output from every file within 1e-5.
- `MODEL_sgd.jsonl`, `MODEL_adam.jsonl`: `{step, loss, loss_f32}`, 20 steps
  from exactly the exported weights, in float64 (`loss`) and float32
  (`loss_f32`, the framework's own noise); SGD rate 0.1, Adam rate 1e-3 in
  PyTorch's form (embedding tables densely). Step k trains on rows
  [(k-1)B, kB) of the data.

Sizes in bytes:

"""


def write_readme(versions):
    sizes = ["| file | bytes |", "|---|---:|"]
    for filename in sorted(os.listdir(OUT)):
        if filename != "README.md":
            size = os.path.getsize(os.path.join(OUT, filename))
            sizes.append("| `%s` | %d |" % (filename, size))
    write_file("README.md", README + "\n".join(sizes) +
               "\n\nGenerated with %s.\n" % versions)


# --- Main -----------------------------------------------------------------------


def main():
    warnings.filterwarnings("ignore")  # exporter deprecations
    # The dynamo exporter logs, per export, that torchvision's ops are absent.
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(OUT, exist_ok=True)

    datasets = load_datasets()
    manifest, noise = {}, []
    # All PyTorch work comes before TensorFlow loads: torch's compiler
    # libraries loaded after TensorFlow's abort the process (both register
    # the same LLVM command-line options).
    for model in torch_models():
        make_torch_model(model, datasets[model.name], manifest, noise)
    make_keras_models(datasets, manifest, noise)
    make_tf_module_models(datasets, manifest, noise)
    write_manifest(manifest)

    import onnxruntime
    import tensorflow as tf
    write_readme("torch %s, onnx %s, onnxscript %s, onnxruntime %s, tensorflow %s" % (
        torch.__version__.split("+")[0], onnx.__version__,
        __import__("onnxscript").__version__, onnxruntime.__version__,
        tf.__version__))

    for filename, entry in sorted(manifest.items()):
        problems = [key for key in ("onnx_checker", "onnxruntime")
                    if entry.get(key, "ok") != "ok"]
        for key in problems:
            print("%s: %s %s" % (filename, key, entry[key]))
    print("%-12s %-5s %10s %10s  %s" % ("model", "opt", "first", "last",
                                        "f32 vs f64 (worst step)"))
    for model, optimizer, first, last, worst, step in noise:
        print("%-12s %-5s %10.6f %10.6f  %.2e (step %d)" % (
            model, optimizer, first, last, worst, step))
    return 0


if __name__ == "__main__":
    sys.exit(main())
