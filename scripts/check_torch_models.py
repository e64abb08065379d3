#!/usr/bin/env python3
"""Checks that torchvision's classifiers, at full size, and Hugging Face
transformers' models, in small configurations, exported by both of
torch.onnx.export's exporters, import into kiln and compute and train as
PyTorch does.

    /work/venv/bin/python scripts/check_torch_models.py [--bin build/bin]
        [--only NAME ...] [--exporters torchscript dynamo] [--keep DIR]

Each torchvision model is built with weights=None and 10 classes, its
BatchNorm statistics, scales and offsets drawn at random and its last
layer's weights scaled by 0.01 (logits near 0 at first); each transformers
model from a small configuration (vocabulary 100, width 32, 2 layers, 4
heads) with its weights as the library initializes them, returning its
logits: a sequence classifier's [batch, 3], a causal language model's
[batch, 16, 100] (trained as PyTorch's loss over every position). The model
is put in eval mode and exported for a batch of 2 with
torch.onnx.export(dynamo=False, opset_version=17, do_constant_folding=False)
(the TorchScript exporter) and with torch.onnx.export(dynamo=True,
optimize=False): the forms docs/onnx.md says to train. kilnc compiles each
file for inference and for training (softmax cross-entropy, SGD at rate
1e-4); kiln run's logits are compared with PyTorch's, and 3 training steps' losses with the same steps in
PyTorch in float64, within 1e-4 or ten times PyTorch's own float32 run's
distance from them, whichever is larger (a run that diverges in float32
moves far). One line per model and exporter: parameters, ONNX nodes,
kilnc's seconds (inference, training), and the largest relative
differences, or the step that failed (a failed export is PyTorch's, and
reported as such). Where PyTorch's float32 run diverges (a NaN or an
infinity at step k), the steps before k are compared and kiln may stop
with a NaN loss after them. Exits 1 when kiln fails to compile or run a
file PyTorch exported otherwise, when PyTorch fails to export a model it is
not known to refuse (PYTORCH_REFUSES), or when kiln differs by more than
the tolerance.

A development script (it needs torch, torchvision, transformers and several
minutes), not a test: test/Tools/kiln-torch-models.test checks small models
built by the same libraries against committed fixtures
(scripts/make_torch_model_fixtures.py).
"""

import argparse
import contextlib
import copy
import io
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_torch_model_fixtures import Logits  # noqa: E402

BATCH, ROWS, STEPS, RATE, RTOL = 2, 6, 3, 1e-4, 1e-4
SEQUENCE, VOCABULARY = 16, 100

EXPORTERS = {"torchscript": {"dynamo": False, "opset_version": 17, "do_constant_folding": False},
             "dynamo": {"dynamo": True, "optimize": False}}

# torchvision classifier: input size (the smallest each takes, or 64).
VISION = {
    "resnet18": 64, "resnet50": 64, "resnext50_32x4d": 64, "wide_resnet50_2": 64,
    "mobilenet_v2": 64, "mobilenet_v3_small": 64, "mobilenet_v3_large": 64,
    "efficientnet_b0": 64, "efficientnet_v2_s": 64, "densenet121": 64,
    "squeezenet1_1": 64, "shufflenet_v2_x1_0": 64, "mnasnet1_0": 64,
    "regnet_y_400mf": 64, "regnet_x_400mf": 64, "convnext_tiny": 64,
    "googlenet": 64, "inception_v3": 75, "vgg11_bn": 64, "alexnet": 64,
    "vit_b_16": 224, "swin_t": 64, "maxvit_t": 224,
}


def transformer(kind):
    """(module, input name, input rows) of a small transformers model."""
    import transformers as T

    width = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=64)
    if kind == "bert":
        model = T.BertForSequenceClassification(T.BertConfig(
            vocab_size=VOCABULARY, max_position_embeddings=32, num_labels=3, **width))
    elif kind == "distilbert":
        model = T.DistilBertForSequenceClassification(T.DistilBertConfig(
            vocab_size=VOCABULARY, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
            max_position_embeddings=32, num_labels=3))
    elif kind == "roberta":
        model = T.RobertaForSequenceClassification(T.RobertaConfig(
            vocab_size=VOCABULARY, max_position_embeddings=40, num_labels=3, **width))
    elif kind == "albert":
        model = T.AlbertForSequenceClassification(T.AlbertConfig(
            vocab_size=VOCABULARY, embedding_size=16, max_position_embeddings=32,
            num_labels=3, **width))
    elif kind == "gpt2":
        model = T.GPT2LMHeadModel(T.GPT2Config(
            vocab_size=VOCABULARY, n_embd=32, n_layer=2, n_head=4, n_positions=32))
    elif kind == "llama":
        model = T.LlamaForCausalLM(T.LlamaConfig(
            vocab_size=VOCABULARY, num_key_value_heads=2, max_position_embeddings=32,
            **width))
    elif kind == "qwen2":
        model = T.Qwen2ForCausalLM(T.Qwen2Config(
            vocab_size=VOCABULARY, num_key_value_heads=2, max_position_embeddings=32,
            **width))
    elif kind == "vit":
        model = T.ViTForImageClassification(T.ViTConfig(
            image_size=32, patch_size=8, num_labels=3, **width))
        return Logits(model), "pixel_values", \
            lambda rng: rng.standard_normal((ROWS, 3, 32, 32)).astype(np.float32)
    else:
        raise ValueError(kind)
    return Logits(model), "input_ids", \
        lambda rng: rng.integers(0, VOCABULARY, (ROWS, SEQUENCE)).astype(np.int64)


def vision(name):
    import torchvision

    size = VISION[name]
    options = {"aux_logits": False, "init_weights": True} \
        if name in ("googlenet", "inception_v3") else {}
    model = getattr(torchvision.models, name)(weights=None, num_classes=10, **options)
    randomize_batch_norms(model, np.random.default_rng(2))
    shrink_classifier(model)
    return model, "x", lambda rng: rng.standard_normal((ROWS, 3, size, size)).astype(np.float32)


def shrink_classifier(model):
    """The last layer's weights scaled by 0.01, so that the logits start near
    0: with random BatchNorm statistics a deep ResNet's start in the
    hundreds (a loss of 144), and its first steps diverge in float32
    whatever computes them."""
    last = [m for m in model.modules() if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d))][-1]
    with torch.no_grad():
        last.weight.mul_(0.01)


def randomize_batch_norms(model, rng):
    """Running statistics, scales and offsets away from 0 and 1, so that the
    eval-mode normalization is not nearly the identity. (Statistics measured
    on the rows instead, as training leaves them, make the deep ResNets
    ill-conditioned: PyTorch's own float32 gradients then differ from its
    float64 ones by up to 35%.)"""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            n = module.num_features
            with torch.no_grad():
                module.running_mean.copy_(torch.from_numpy(rng.uniform(-0.2, 0.2, n)))
                module.running_var.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, n)))
                if module.affine:
                    module.weight.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, n)))
                    module.bias.copy_(torch.from_numpy(rng.uniform(-0.2, 0.2, n)))


# What PyTorch's exporters refuse: TorchScript's adaptive pool of a size
# that does not divide (VGG, AlexNet at 64x64) and transformers' causal
# masks (aten::diff). Any other failed export fails the check.
PYTORCH_REFUSES = {("vgg11_bn", "torchscript"), ("alexnet", "torchscript"),
                   ("hf_gpt2", "torchscript"), ("hf_llama", "torchscript"),
                   ("hf_qwen2", "torchscript")}

TRANSFORMERS = ("bert", "distilbert", "roberta", "albert", "gpt2", "llama", "qwen2", "vit")
MODELS = dict({name: (lambda n=name: vision(n)) for name in VISION},
              **{"hf_" + kind: (lambda k=kind: transformer(k)) for kind in TRANSFORMERS})


def run(command):
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(os.path.basename(command[0]) + " " + command[1] + ": " +
                           result.stderr.strip()[-300:])
    return time.perf_counter() - start


def torch_losses(model, data, input_name, classes, dtype):
    """STEPS steps of SGD from the model's weights in `dtype`, batch k on
    rows [(k-1)BATCH, k BATCH), and the loss before each."""
    model = copy.deepcopy(model).to(dtype)
    optimizer = torch.optim.SGD(model.parameters(), lr=RATE)
    losses = []
    for step in range(STEPS):
        rows = slice(step * BATCH, (step + 1) * BATCH)
        feed = torch.from_numpy(data[input_name][rows])
        logits = model(feed.to(dtype) if feed.is_floating_point() else feed)
        loss = F.cross_entropy(logits.reshape(-1, classes),
                               torch.from_numpy(data["label"][rows]).long().reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    return losses


def relative(got, want):
    """The largest relative difference; infinite where either holds a NaN or
    an infinity (Python's max skips NaNs it compares)."""
    if not np.all(np.isfinite(got + want)):
        return float("inf")
    return max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(got, want))


def export(model, feed, input_name, options, path):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        torch.onnx.export(model, (torch.from_numpy(feed),), path, input_names=[input_name],
                          output_names=["logits"], external_data=False, **options)


def check(name, exporter, bin_dir, work):
    torch.manual_seed(1)
    model, input_name, make_rows = MODELS[name]()
    model.eval()
    rng = np.random.default_rng(1)
    rows = make_rows(rng)
    with torch.no_grad():
        expected = model(torch.from_numpy(rows[:BATCH])).numpy()
    classes = expected.shape[-1]
    labels_shape = (ROWS,) + expected.shape[1:-1]
    data = {input_name: rows, "label": rng.integers(0, classes, labels_shape).astype(np.int32)}
    stem = os.path.join(work, "%s_%s" % (name, exporter))
    path = stem + ".onnx"
    try:
        export(model, rows[:BATCH], input_name, EXPORTERS[exporter], path)
    except Exception as e:  # PyTorch's failure, not kiln's
        known = (name, exporter) in PYTORCH_REFUSES
        print("%-20s %-11s %s by PyTorch: %s"
              % (name, exporter, "not exported" if known else "FAILED: not exported",
                 str(e).strip().splitlines()[0][:160]), flush=True)
        return known
    import onnx
    nodes = len(onnx.load(path, load_external_data=False).graph.node)
    data_file, feed = stem + ".npz", stem + ".feed.npy"
    np.savez(data_file, **data)
    np.save(feed, rows[:BATCH])
    kilnc, kiln = os.path.join(bin_dir, "kilnc"), os.path.join(bin_dir, "kiln")
    compile_forward = run([kilnc, path, "-o", stem + ".kiln"])
    logits = stem + ".logits.npy"
    run([kiln, "run", stem + ".kiln", "--feed", "%s=%s" % (input_name, feed),
         "--fetch", "logits=" + logits])
    actual = np.load(logits)
    if actual.shape != expected.shape:
        raise RuntimeError("kiln's logits have shape %s, PyTorch's %s"
                           % (list(actual.shape), list(expected.shape)))
    # ViT's head starts at zero: its logits are all 0, compared absolutely.
    logits_difference = float(np.abs(actual - expected).max() /
                              max(np.abs(expected).max(), 1e-6))
    compile_train = run([kilnc, path, "--train", "--loss=softmax_cross_entropy",
                         "--output=logits", "--label=label", "--batch=%d" % BATCH,
                         "--optimizer=sgd", "--lr=%g" % RATE, "-o", stem + ".train.kiln"])
    metrics = stem + ".jsonl"
    if os.path.exists(metrics):  # kiln run appends
        os.remove(metrics)
    want = torch_losses(model, data, input_name, classes, torch.float64)
    want32 = torch_losses(model, data, input_name, classes, torch.float32)
    # The steps before PyTorch's own float32 run diverges (a NaN or an
    # infinity) are compared; kiln may stop on a NaN loss only after them.
    finite = next((i for i, v in enumerate(want32) if not np.isfinite(v)), STEPS)
    # How far float32 rounding alone moves these steps (far, where they
    # diverge): the tolerance is ten times that, at least RTOL.
    noise = relative(want32[:finite], want[:finite]) if finite else 0.0
    tolerance = max(RTOL, 10 * noise)
    try:
        run([kiln, "run", stem + ".train.kiln", "--data", data_file, "--steps", str(STEPS),
             "--metrics-out", metrics])
    except RuntimeError as e:
        if finite == STEPS or "loss is NaN" not in str(e):
            raise
        print("%-20s %-11s stops after step %d, where PyTorch's float32 run diverges: %s"
              % (name, exporter, finite, str(e)[-80:]), flush=True)
    with open(metrics) as f:
        got = [json.loads(line)["loss"] for line in f if '"loss"' in line][:STEPS]
    loss_difference = (float("inf") if len(got) < finite else
                       relative(got[:finite], want[:finite]) if finite else 0.0)
    ok = logits_difference <= RTOL and loss_difference <= tolerance
    parameters = sum(p.numel() for p in model.parameters())
    print("%-20s %-11s %s: %9d parameters, %5d nodes; kilnc %.1f s, training %.1f s; "
          "logits %.1e, losses %.1e over %d steps (PyTorch float32 %.1e; %.4f -> %.4f)"
          % (name, exporter, "agree" if ok else "FAILED", parameters, nodes, compile_forward,
             compile_train, logits_difference, loss_difference, finite, noise, want[0],
             want[-1]),
          flush=True)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.path.join("build", "bin"))
    parser.add_argument("--only", nargs="+", choices=sorted(MODELS))
    parser.add_argument("--exporters", nargs="+", choices=sorted(EXPORTERS),
                        default=sorted(EXPORTERS, reverse=True))
    parser.add_argument("--keep", help="write the files here and keep them")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    torch.set_num_threads(1)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or tmp
        os.makedirs(work, exist_ok=True)
        for name in args.only or MODELS:
            for exporter in args.exporters:
                try:
                    failures += not check(name, exporter, os.path.abspath(args.bin), work)
                except RuntimeError as e:
                    failures += 1
                    print("%-20s %-11s FAILED: %s" % (name, exporter, e), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
