#!/usr/bin/env python3
"""Writes PyTorch models built on recurrent, normalization, resize, activation,
pad, transposed-convolution and einsum layers,
exported to ONNX by both of torch.onnx.export's exporters, and what PyTorch
computes and trains with them, to test/Inputs/torch_layers/: the fixtures of
the tests that import LSTM, GRU, RNN, InstanceNormalization (GroupNorm),
Resize (linear, cubic, nearest) and the activations exported as one op each
(LeakyRelu, Elu, Selu, Celu, Softplus, Mish, HardSigmoid, HardSwish, PRelu)
from real exports.

A development script, never run by the tests (they read the committed files).
Run from the repository root with the venv that has torch, onnx, onnxscript
and numpy (onnxruntime, when present, only checks the files):

    /work/venv/bin/python scripts/make_torch_layer_fixtures.py [--only MODEL ...]

Models, each seeded, in eval mode, with a static batch of 4, input `x` and
output `logits` [4, 5]:
  lstm    nn.LSTM(8, 16, num_layers=2, batch_first=True), Linear(16, 5) on the
          last time step; x [4, 6, 8].
  gru     nn.GRU(8, 12, bidirectional=True, batch_first=True), Linear(24, 5)
          on the mean over time; x [4, 6, 8].
  rnn     x [4, 6, 8] transposed to sequence-first, nn.RNN(8, 12, relu) with
          an initial state from a learned [1, 1, 12] parameter expanded over
          the batch (not zeros), Linear(12, 5) on the last step.
  norms   Conv2d(3, 8, 3), GroupNorm(2, 8), ReLU, InstanceNorm2d(8,
          affine=True), mean over H and W, Linear(8, 5); x [4, 3, 8, 8]. The
          norms' scales and offsets are set away from 1 and 0.
  resize  Conv2d(3, 4, 3, padding=1), then F.interpolate: scale 2 bilinear,
          size (11, 13) bilinear align_corners, size (7, 9) bicubic, size
          (10, 10) nearest; mean over H and W, Linear(4, 5); x [4, 3, 6, 6].
  activations  nine Linear layers, each output scaled by 4 into LeakyReLU(0.1),
          ELU(0.7), SELU, CELU(1.5), Softplus, Mish, Hardsigmoid, Hardswish
          and PReLU(16) in turn, Linear(16, 5); x [4, 8].
  decoder  reflect pad, Conv2d(3, 4, 3), replicate pad, ConvTranspose2d(4, 6, 3,
          stride 2, padding 1, output_padding 1), ReLU, constant pad (0.25),
          ConvTranspose2d(6, 4, 3, groups 2, dilation 2), ConvTranspose2d(4, 4,
          3, dilation 2, output_padding 1), mean over H and W, Linear(4, 5);
          x [4, 3, 6, 6].
  ties    Linear(8, 16) of zero weights and biases into the sum of nine
          activations (each at exactly 0 at first), Linear(16, 5); x [4, 8].
  einsum  attention written with torch.einsum: 'bsd,hd->bsh' by a [12, 8]
          parameter, 'bqd,bkd->bqk', softmax, 'bqk,bkd->bqd', 'bsd->bd',
          Linear(12, 5); x [4, 6, 8].
  topk    a mixture of experts' top-2 gating: torch.topk of Linear(8, 6)'s
          gate logits, a softmax over the two, the chosen experts' outputs
          (Linear(8, 30) viewed [6, 5]) gathered and mixed; plus the sum of
          the 3 smallest of Linear(8, 10); x [4, 8].

For each model:
  MODEL_opset17.onnx  torch.onnx.export(dynamo=False, opset_version=17), with
      its default constant folding: what TorchScript-exporter users get.
  MODEL_dynamo.onnx   torch.onnx.export(dynamo=True, optimize=False).
  MODEL.input.npy, MODEL.output.npy  a fixed random input and PyTorch's f32
      eval-mode output on it.
  MODEL.npz  training data: `x` float32 [80, ...] in [-1, 1) and `label`
      int32 [80] in [0, 5) (int32 as scripts/make_agreement_data.py writes
      labels): the largest of five values taken evenly across the row.
  MODEL_sgd.jsonl, MODEL_adam.jsonl  20 training steps from exactly the
      exported weights, step k on rows [(k-1)4, 4k): {"step", "loss" (before
      the step's update, training in float64), "loss_f32" (the same run in
      float32: PyTorch's own noise)}; mean cross-entropy of `logits` against
      `label`; SGD rate 0.1, Adam rate 1e-3, betas (0.9, 0.999), epsilon 1e-8
      (scripts/make_framework_fixtures.py's settings).

Deterministic: fixed seeds, one thread, producer versions and node metadata
(stack traces) cleared, zip members with a fixed timestamp, so a second run
writes the same bytes with the same library versions. It prints each file's
op types, initializers and the attributes of its recurrent, normalization and
resize nodes, then the f32-vs-f64 noise of every curve.
"""

import contextlib
import copy
import io
import json
import logging
import os
import sys
import tempfile
import textwrap
import warnings
import zipfile
from collections import Counter

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
from make_onnx_fixtures import IR_VERSION  # noqa: E402
from make_onnx_torch_fixtures import tidy_torch_export  # noqa: E402

ROOT = os.path.dirname(SCRIPTS)
OUT = os.path.join(ROOT, "test", "Inputs", "torch_layers")
BATCH, ROWS, STEPS, CLASSES = 4, 80, 20, 5
SGD_LR = 0.1
ADAM = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
FORWARD_RTOL = 1e-5
MAX_BYTES = 150 * 1024
# The nodes whose inputs and attributes the script prints.
LAYER_OPS = ("LSTM", "GRU", "RNN", "InstanceNormalization", "GroupNormalization",
             "Resize", "LeakyRelu", "Elu", "Selu", "Celu", "Softplus", "Mish", "HardSigmoid",
             "HardSwish", "PRelu", "ConvTranspose", "Pad", "Einsum")


# --- Models -------------------------------------------------------------------


class Lstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.fc = torch.nn.Linear(16, 5)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


class Gru(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(8, 12, bidirectional=True, batch_first=True)
        self.fc = torch.nn.Linear(24, 5)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.fc(y.mean(1))


class Rnn(torch.nn.Module):
    """Batch-first x (the data's rows are the batch), a sequence-first RNN."""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.RNN(8, 12, nonlinearity="relu", batch_first=False)
        self.h0 = torch.nn.Parameter(0.5 * torch.randn(1, 1, 12))
        self.fc = torch.nn.Linear(12, 5)

    def forward(self, x):
        sequence = x.transpose(0, 1)
        h0 = self.h0.expand(1, sequence.shape[1], 12).contiguous()
        y, _ = self.rnn(sequence, h0)
        return self.fc(y[-1])


class Norms(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.gn = torch.nn.GroupNorm(2, 8)
        self.inorm = torch.nn.InstanceNorm2d(8, affine=True)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        h = torch.relu(self.gn(self.conv(x)))
        return self.fc(self.inorm(h).mean((2, 3)))


class Resize(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4, 5)

    def forward(self, x):
        h = self.conv(x)
        h = F.interpolate(h, scale_factor=2, mode="bilinear", align_corners=False)
        h = F.interpolate(h, size=(11, 13), mode="bilinear", align_corners=True)
        h = F.interpolate(h, size=(7, 9), mode="bicubic", align_corners=False)
        h = F.interpolate(h, size=(10, 10), mode="nearest")
        return self.fc(h.mean((2, 3)))


class Activations(torch.nn.Module):
    """Linear layers between the activations PyTorch exports as one ONNX op
    each (the inputs spread over [-4, 4], where every branch shows)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.ModuleList([torch.nn.Linear(8, 16)] +
                                      [torch.nn.Linear(16, 16) for _ in range(8)])
        self.acts = torch.nn.ModuleList([
            torch.nn.LeakyReLU(0.1), torch.nn.ELU(0.7), torch.nn.SELU(), torch.nn.CELU(1.5),
            torch.nn.Softplus(), torch.nn.Mish(), torch.nn.Hardsigmoid(), torch.nn.Hardswish(),
            torch.nn.PReLU(16, init=0.2)])
        self.head = torch.nn.Linear(16, 5)

    def forward(self, x):
        h = x
        for fc, act in zip(self.fc, self.acts):
            h = act(4 * fc(h))
        return self.head(h)


class Ties(torch.nn.Module):
    """Activations whose inputs are all exactly 0 at the start (a layer of
    zero weights and biases), where a gradient depends on how a tie or a
    branch at 0 is taken."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 16)
        self.head = torch.nn.Linear(16, 5)
        with torch.no_grad():
            self.fc.weight.zero_()
            self.fc.bias.zero_()

    def forward(self, x):
        z = self.fc(x)
        h = (F.softplus(z) + F.elu(z) + F.leaky_relu(z, 0.1) + F.hardswish(z) + F.mish(z) +
             F.selu(z) + F.celu(z, 1.5) + F.hardsigmoid(z) + torch.relu(z))
        return self.head(h)


class Decoder(torch.nn.Module):
    """What a U-Net's decoder or a super-resolution head exports: pads in
    three modes and transposed convolutions (strided with output_padding;
    grouped and dilated)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.up = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)
        self.grouped = torch.nn.ConvTranspose2d(6, 4, 3, groups=2, dilation=2)
        # output_padding past the stride, below the dilation (onnxruntime
        # refuses it; PyTorch computes it).
        self.dilated = torch.nn.ConvTranspose2d(4, 4, 3, dilation=2, output_padding=1)
        self.fc = torch.nn.Linear(4, 5)

    def forward(self, x):
        h = self.conv(F.pad(x, (1, 1, 2, 0), mode="reflect"))
        h = torch.relu(self.up(F.pad(h, (1, 0, 0, 1), mode="replicate")))
        h = self.grouped(F.pad(h, (1, 2, 0, 1), value=0.25))
        return self.fc(self.dilated(h).mean((2, 3)))


class Einsum(torch.nn.Module):
    """Attention written with torch.einsum: a projection by a weight
    ('bsd,hd->bsh'), scores ('bqd,bkd->bqk'), their softmax applied
    ('bqk,bkd->bqd') and a sum over the sequence ('bsd->bd')."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Parameter(0.3 * torch.randn(12, 8))
        self.fc = torch.nn.Linear(12, 5)

    def forward(self, x):
        h = torch.einsum("bsd,hd->bsh", x, self.proj)
        scores = torch.einsum("bqd,bkd->bqk", h, h).softmax(-1)
        mixed = torch.einsum("bqk,bkd->bqd", scores, h)
        return self.fc(torch.einsum("bsd->bd", mixed))


class TopK(torch.nn.Module):
    """A mixture of experts' top-2 gating (Switch/GShard style): gate logits
    by Linear(8, 6), torch.topk(k=2), a softmax over the two, and the chosen
    experts' outputs (Linear(8, 6 x 5) viewed [6, 5], gathered by the
    indices) mixed by those weights; plus the top-3 of a second projection
    summed, whose values train the projection."""

    def __init__(self):
        super().__init__()
        self.gate = torch.nn.Linear(8, 6)
        self.experts = torch.nn.Linear(8, 30)
        self.pool = torch.nn.Linear(8, 10)

    def forward(self, x):
        weights, chosen = torch.topk(self.gate(x), 2, dim=-1)
        outputs = self.experts(x).view(-1, 6, 5)
        picked = torch.gather(outputs, 1, chosen.unsqueeze(-1).expand(-1, -1, 5))
        mixed = (weights.softmax(-1).unsqueeze(-1) * picked).sum(1)
        pooled = torch.topk(self.pool(x), 3, dim=-1, largest=False).values.sum(-1, keepdim=True)
        return mixed + pooled


def set_norm_affine(module, seed):
    """Scales in [0.5, 1.5) and offsets in [-0.5, 0.5), so the affine part of
    GroupNorm and InstanceNorm shows (their defaults are 1 and 0)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, (torch.nn.GroupNorm, torch.nn.InstanceNorm2d)):
                n = layer.weight.shape[0]
                layer.weight.copy_(0.5 + torch.rand(n, generator=generator))
                layer.bias.copy_(torch.rand(n, generator=generator) - 0.5)


# name: (module class, torch seed, shape of one row of x, op types the exports
# should hold).
MODELS = {
    "lstm": (Lstm, 1, [6, 8], {"LSTM"}),
    "gru": (Gru, 2, [6, 8], {"GRU"}),
    "rnn": (Rnn, 3, [6, 8], {"RNN"}),
    "norms": (Norms, 4, [3, 8, 8], {"InstanceNormalization"}),
    "resize": (Resize, 5, [3, 6, 6], {"Resize"}),
    "activations": (Activations, 6, [8], {"LeakyRelu", "Elu", "Selu", "Softplus",
                                          "HardSigmoid", "PRelu"}),
    "decoder": (Decoder, 7, [3, 6, 6], {"ConvTranspose", "Pad"}),
    "einsum": (Einsum, 8, [6, 8], {"Einsum"}),
    "ties": (Ties, 9, [8], {"Softplus", "Elu"}),
    "topk": (TopK, 10, [8], {"TopK"}),
}


def make_module(name):
    cls, seed, _, _ = MODELS[name]
    torch.manual_seed(seed)
    module = cls()
    if name == "norms":
        set_norm_affine(module, seed + 100)
    return module.eval()


def make_data(name):
    """(input [4, ...], training data {x [80, ...], label [80]})."""
    _, seed, row, _ = MODELS[name]
    rng = np.random.default_rng(1000 + seed)
    feed = rng.uniform(-1.0, 1.0, [BATCH] + row).astype(np.float32)
    x = rng.uniform(-1.0, 1.0, [ROWS] + row).astype(np.float32)
    flat = x.reshape(ROWS, -1)
    stride = flat.shape[1] // CLASSES
    label = flat[:, 0:stride * CLASSES:stride].argmax(axis=1).astype(np.int32)
    return feed, {"x": x, "label": label}


# --- Files --------------------------------------------------------------------


def write_file(filename, data, folder=OUT, limit=MAX_BYTES):
    """Writes bytes or text to folder/filename, checking the size limit."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    assert len(data) < limit, "%s is %d bytes" % (filename, len(data))
    with open(os.path.join(folder, filename), "wb") as f:
        f.write(data)


def npy_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def write_npz(filename, arrays, folder=OUT):
    """An uncompressed zip of NAME.npy members with a fixed timestamp (as
    scripts/make_agreement_data.py writes them; np.savez stamps the time)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            archive.writestr(info, npy_bytes(array))
    write_file(filename, buffer.getvalue(), folder)


def write_losses(name, optimizer, losses, losses_f32, noise, folder=OUT):
    """MODEL_OPTIMIZER.jsonl; notes the worst f32-vs-f64 relative difference."""
    lines = [json.dumps({"step": step, "loss": loss, "loss_f32": loss_f32})
             for step, (loss, loss_f32) in enumerate(zip(losses, losses_f32), 1)]
    write_file("%s_%s.jsonl" % (name, optimizer), "\n".join(lines) + "\n", folder)
    worst = max((abs(b - a) / abs(a), step)
                for step, (a, b) in enumerate(zip(losses, losses_f32), 1))
    noise.append((name, optimizer, losses[0], losses[-1]) + worst)


# --- Training -------------------------------------------------------------------


def make_optimizer(module, optimizer):
    """torch.optim.SGD at SGD_LR or Adam with ADAM's settings."""
    params = list(module.parameters())
    if optimizer == "sgd":
        return torch.optim.SGD(params, lr=SGD_LR)
    return torch.optim.Adam(params, lr=ADAM["lr"], betas=(ADAM["beta1"], ADAM["beta2"]),
                            eps=ADAM["eps"], foreach=False)


def torch_losses(module, data, optimizer, dtype, input_name="x", class_axis=-1,
                 ignore_index=-100, label_smoothing=0.0):
    """The losses of STEPS steps of the module cast to `dtype`, each computed
    before its update, in eval mode; step k on rows [(k-1)B, kB). Logits
    [..., C] with several leading dimensions are flattened with their
    labels (a language model's loss over every position); classes on
    another axis (class_axis 1: F.cross_entropy over [N, C, H, W]) are
    moved last first. Labels equal to `ignore_index` (F.cross_entropy's,
    -100 by default) are left out of the mean; `label_smoothing` is
    F.cross_entropy's."""
    module = copy.deepcopy(module).to(dtype).eval()
    opt = make_optimizer(module, optimizer)
    assert len(data["label"]) >= STEPS * BATCH
    losses = []
    for step in range(STEPS):
        rows = slice(step * BATCH, (step + 1) * BATCH)
        feed = torch.from_numpy(data[input_name][rows])
        logits = module(feed.to(dtype) if feed.is_floating_point() else feed)
        logits = logits.movedim(class_axis, -1)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               torch.from_numpy(data["label"][rows]).long().reshape(-1),
                               ignore_index=ignore_index, label_smoothing=label_smoothing)
        losses.append(loss.item())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return losses


# --- Export ---------------------------------------------------------------------


EXPORTS = (("opset17", {"dynamo": False, "opset_version": 17}),
           ("dynamo", {"dynamo": True, "optimize": False}))


def export_onnx(module, feed, options):
    """torch.onnx.export of the module on input `x`, tidied."""
    return export_tidy(module, (torch.from_numpy(feed),), ["x"], options)


def export_tidy(module, inputs, input_names, options, keep_fx_nodes=False,
                output_name="logits"):
    """torch.onnx.export to a temp file (one output, `logits` unless named),
    tidied: the same bytes for the same library versions (no version
    string, no stack traces; with `keep_fx_nodes`, each node's torch.fx
    node)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        with contextlib.redirect_stdout(io.StringIO()):  # dynamo's progress lines
            torch.onnx.export(module, tuple(inputs), path, input_names=list(input_names),
                              output_names=[output_name], external_data=False, **options)
        m = onnx.load(path)
    tidy_torch_export(m, keep_fx_nodes)
    assert m.ir_version <= IR_VERSION
    m.ClearField("metadata_props")
    m.graph.ClearField("doc_string")
    for init in m.graph.initializer:
        init.ClearField("metadata_props")
    return m


def relative_difference(actual, expected):
    """max |actual - expected| over max |expected|."""
    return float(np.max(np.abs(actual.astype(np.float64) - expected)) /
                 np.max(np.abs(expected)))


def onnxruntime_check(m, feed, expected, data, first_loss):
    """onnxruntime's output relative difference and step-1 loss difference,
    or a string saying why there are none."""
    try:
        import onnxruntime
    except ImportError:
        return "onnxruntime not installed"
    try:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        session = onnxruntime.InferenceSession(m.SerializeToString(), options,
                                               providers=["CPUExecutionProvider"])
        actual = session.run(["logits"], {"x": feed})[0]
        logits = session.run(["logits"], {"x": data["x"][:BATCH]})[0].astype(np.float64)
    except Exception as error:  # noqa: BLE001 - reported, not fatal
        return "onnxruntime failed: %s" % str(error).splitlines()[0]
    top = logits.max(axis=1)
    log_sum = top + np.log(np.exp(logits - top[:, None]).sum(axis=1))
    loss = np.mean(log_sum - logits[np.arange(BATCH), data["label"][:BATCH]])
    return (relative_difference(actual, expected), abs(loss - first_loss) / first_loss)


def describe_input(m, name, depth=2):
    """Where a node input comes from: '-' (absent), an initializer, a
    Constant's value or the op that computes it (with its inputs, `depth`
    levels up)."""
    if not name:
        return "-"
    for init in m.graph.initializer:
        if init.name == name:
            value = numpy_helper.to_array(init)
            return "%s=init%s" % (name, value.tolist() if value.size <= 4 else
                                  list(value.shape))
    for node in m.graph.node:
        if name in node.output:
            if node.op_type == "Constant":
                value = np.asarray(onnx.helper.get_attribute_value(node.attribute[0]))
                if isinstance(onnx.helper.get_attribute_value(node.attribute[0]),
                              onnx.TensorProto):
                    value = numpy_helper.to_array(node.attribute[0].t)
                return "Constant%s" % (value.tolist() if value.size <= 4 else
                                       list(value.shape))
            if depth == 0 or node.op_type not in ("Concat", "Expand", "Slice", "Cast"):
                return "%s(...)" % node.op_type
            return "%s(%s)" % (node.op_type, ", ".join(
                describe_input(m, i, depth - 1) for i in node.input))
    return name


def describe(m, filename):
    """Prints op types, initializers and the layer nodes of an exported file."""
    print("%s: opset %d, IR %d" % (filename, next(o.version for o in m.opset_import
                                                  if o.domain in ("", "ai.onnx")),
                                   m.ir_version))
    print("  ops: %s" % dict(sorted(Counter(n.op_type for n in m.graph.node).items())))
    print("  initializers: %s" % ", ".join(
        "%s%s" % (t.name, list(t.dims)) for t in m.graph.initializer))
    for node in m.graph.node:
        if node.op_type in LAYER_OPS:
            attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            attributes = {k: v.decode() if isinstance(v, bytes) else
                          [s.decode() for s in v] if isinstance(v, list) and v and
                          isinstance(v[0], bytes) else v for k, v in sorted(attributes.items())}
            print("  %s %s inputs: %s; outputs %d" % (
                node.op_type, attributes,
                ", ".join(describe_input(m, i) for i in node.input), len(node.output)))


# --- Main -----------------------------------------------------------------------


README = """\
# PyTorch recurrent, normalization, resize and activation layers, exported to ONNX

Written by `scripts/make_torch_layer_fixtures.py`; regenerate with

    /work/venv/bin/python scripts/make_torch_layer_fixtures.py

from the repository root (a second run writes the same bytes with the same
library versions). Every model has a static batch of 4, input `x` and output
`logits` `[4, 5]`; each is exported by the TorchScript exporter
(`MODEL_opset17.onnx`: `torch.onnx.export(dynamo=False, opset_version=17)`,
default constant folding) and by the torch.export-based exporter
(`MODEL_dynamo.onnx`: `torch.onnx.export(dynamo=True, optimize=False)`,
IR version capped at 8).

- `lstm`: `nn.LSTM(8, 16, num_layers=2, batch_first=True)`, `Linear(16, 5)` on
  the last step; x `[4, 6, 8]`.
- `gru`: `nn.GRU(8, 12, bidirectional=True, batch_first=True)`,
  `Linear(24, 5)` on the mean over time; x `[4, 6, 8]`.
- `rnn`: x `[4, 6, 8]` transposed to sequence-first, `nn.RNN(8, 12,
  nonlinearity='relu')` from an initial state that is a learned `[1, 1, 12]`
  parameter `h0` expanded over the batch, `Linear(12, 5)` on the last step.
- `norms`: `Conv2d(3, 8, 3)`, `GroupNorm(2, 8)`, ReLU,
  `InstanceNorm2d(8, affine=True)`, mean over H and W, `Linear(8, 5)`; x
  `[4, 3, 8, 8]`; the norms' scales and offsets are away from 1 and 0.
- `resize`: `Conv2d(3, 4, 3, padding=1)`, then `F.interpolate` with
  `scale_factor=2, mode='bilinear'`, `size=(11, 13), mode='bilinear',
  align_corners=True`, `size=(7, 9), mode='bicubic'`, `size=(10, 10),
  mode='nearest'`; mean over H and W, `Linear(4, 5)`; x `[4, 3, 6, 6]`.
- `activations`: nine `Linear` layers, each output times 4 into
  `LeakyReLU(0.1)`, `ELU(0.7)`, `SELU`, `CELU(1.5)`, `Softplus`, `Mish`,
  `Hardsigmoid`, `Hardswish` and `PReLU(16)` in turn, `Linear(16, 5)`; x
  `[4, 8]`.
- `decoder`: reflect pad, `Conv2d(3, 4, 3)`, replicate pad,
  `ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)`, ReLU,
  constant pad (0.25), `ConvTranspose2d(6, 4, 3, groups=2, dilation=2)`,
  `ConvTranspose2d(4, 4, 3, dilation=2, output_padding=1)`, mean over H
  and W, `Linear(4, 5)`; x `[4, 3, 6, 6]`.
- `ties`: `Linear(8, 16)` of zero weights and biases into the sum of nine
  activations (softplus, elu, leaky_relu, hardswish, mish, selu, celu,
  hardsigmoid, relu: each at exactly 0 at first), `Linear(16, 5)`; x `[4, 8]`.
- `einsum`: attention written with `torch.einsum`: `'bsd,hd->bsh'` by a
  `[12, 8]` parameter, `'bqd,bkd->bqk'`, softmax, `'bqk,bkd->bqd'`,
  `'bsd->bd'`, `Linear(12, 5)`; x `[4, 6, 8]`.
- `topk`: a mixture of experts' top-2 gating: `torch.topk` of `Linear(8, 6)`'s
  gate logits, a softmax over the two, the chosen experts' outputs
  (`Linear(8, 30)` viewed `[6, 5]`) gathered and mixed; plus the sum of the 3
  smallest of `Linear(8, 10)`; x `[4, 8]`.

What the exporters write for these layers: the dynamo exporter has no ONNX
`RNN` for `nn.RNN`, so `rnn_dynamo.onnx` unrolls it (MatMul, Add, Relu per
step; `h0` through Expand). Neither exporter writes `GroupNormalization`:
GroupNorm is Reshape to `[N, 2, -1]`, `InstanceNormalization` with unit scale
and zero offset, Reshape back, Mul and Add. The TorchScript exporter's
constant folding stores the recurrent weights in ONNX's gate order with both
biases concatenated (initializers `onnx::LSTM_*`, `onnx::GRU_*`,
`onnx::RNN_*`) and GroupNorm's scale and offset as `[8, 1, 1]`
(`onnx::Mul_*`, `onnx::Add_*`); the dynamo exporter keeps PyTorch's
parameters and reorders gates in the graph (Slice, Concat). Every file holds
all of the module's parameters (the same number of float elements).

Per model:

- `MODEL.input.npy`, `MODEL.output.npy`: a fixed input and PyTorch's f32
  eval-mode output.
- `MODEL.npz`: training data, `x` float32 `[80, ...]` (batch-first for every
  model) and `label` int32 `[80]` in [0, 5).
- `MODEL_sgd.jsonl`, `MODEL_adam.jsonl`: `{step, loss, loss_f32}`, 20 steps
  from exactly the exported weights, step k on rows [(k-1)4, 4k) of
  `MODEL.npz`, in float64 (`loss`) and float32 (`loss_f32`, PyTorch's own
  noise); mean cross-entropy; SGD rate 0.1; Adam rate 1e-3, betas
  (0.9, 0.999), epsilon 1e-8 (torch.optim.Adam, foreach=False); eval mode.

Op types of the ONNX files:

%s

Sizes in bytes:

%s

Generated with %s.
"""


def write_readme(op_types, versions):
    ops = [textwrap.fill("- `%s`: %s" % (filename, ", ".join(
        "%s %d" % item for item in counts.items())), 79, subsequent_indent="  ")
           for filename, counts in sorted(op_types.items())]
    sizes = ["| file | bytes |", "|---|---:|"]
    for filename in sorted(os.listdir(OUT)):
        if filename != "README.md":
            sizes.append("| `%s` | %d |" % (filename,
                                            os.path.getsize(os.path.join(OUT, filename))))
    write_file("README.md", README % ("\n".join(ops), "\n".join(sizes), versions))


def main():
    warnings.filterwarnings("ignore")  # exporter deprecations
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(OUT, exist_ok=True)

    # --only NAME (repeatable): that model's files alone, the README from
    # every file there (the others as an earlier run wrote them).
    only = [sys.argv[i + 1] for i, arg in enumerate(sys.argv[:-1]) if arg == "--only"]
    noise, checks, op_types, missing = [], [], {}, []
    for filename in sorted(os.listdir(OUT)):
        if filename.endswith(".onnx"):
            op_types[filename] = dict(sorted(Counter(
                n.op_type for n in onnx.load(os.path.join(OUT, filename)).graph.node).items()))
    for name in only or MODELS:
        module = make_module(name)
        feed, data = make_data(name)
        with torch.no_grad():
            output = module(torch.from_numpy(feed)).numpy()
        assert output.shape == (BATCH, CLASSES), output.shape
        write_file(name + ".input.npy", npy_bytes(feed))
        write_file(name + ".output.npy", npy_bytes(output))
        write_npz(name + ".npz", data)

        first_loss = None
        for optimizer in ("sgd", "adam"):
            losses = torch_losses(module, data, optimizer, torch.float64)
            first_loss = losses[0]
            write_losses(name, optimizer, losses,
                         torch_losses(module, data, optimizer, torch.float32), noise)

        for suffix, options in EXPORTS:
            filename = "%s_%s.onnx" % (name, suffix)
            m = export_onnx(module, feed, options)
            write_file(filename, m.SerializeToString(deterministic=True))
            try:
                onnx.checker.check_model(m, full_check=True)
                checker = "ok"
            except Exception as error:  # noqa: BLE001 - reported, not fatal
                checker = "failed: %s" % str(error).splitlines()[0]
            describe(m, filename)
            op_types[filename] = dict(sorted(Counter(n.op_type for n in m.graph.node).items()))
            absent = MODELS[name][3] - set(op_types[filename])
            if absent:
                missing.append("%s has no %s" % (filename, ", ".join(sorted(absent))))
            checks.append((filename, checker,
                           onnxruntime_check(m, feed, output, data, first_loss)))

    write_readme(op_types, "torch %s, onnx %s, onnxscript %s" % (
        torch.__version__.split("+")[0], onnx.__version__,
        __import__("onnxscript").__version__))

    print()
    for filename, checker, runtime in checks:
        if isinstance(runtime, tuple):
            runtime = "onnxruntime output %.1e, step-1 loss %.1e%s" % (
                runtime + (" (beyond %g)" % FORWARD_RTOL
                           if max(runtime) > FORWARD_RTOL else "",))
        print("%-22s checker %s; %s" % (filename, checker, runtime))
    for line in missing:
        print("NOTE: " + line)
    print_noise(noise)
    return 0


def print_noise(noise):
    """The table of each curve's first and last loss and f32-vs-f64 noise."""
    print("%-8s %-5s %10s %10s  %s" % ("model", "opt", "first", "last",
                                       "f32 vs f64 (worst step)"))
    for model, optimizer, first, last, worst, step in noise:
        print("%-8s %-5s %10.6f %10.6f  %.2e (step %d)" % (
            model, optimizer, first, last, worst, step))


if __name__ == "__main__":
    sys.exit(main())
