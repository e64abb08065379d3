#!/usr/bin/env python3
"""Writes small models built by torchvision and Hugging Face transformers,
exported to ONNX by torch.onnx.export, and what PyTorch computes and trains
with them, to test/Inputs/torch_models/: the fixtures of
test/Tools/kiln-torch-models.test. The libraries' own model code, in small
configurations (scripts/check_torch_models.py checks the full-size
torchvision classifiers the same way).

A development script, never run by the tests (they read the committed files).
Run from the repository root with the venv that has torch, torchvision,
transformers, onnx, onnxscript and numpy:

    /work/venv/bin/python scripts/make_torch_model_fixtures.py [--only MODEL ...]

Models, each seeded, in eval mode, with a static batch of 4:
  bert      transformers' BertForSequenceClassification (vocabulary 100, width
            32, 2 layers, 4 heads, 3 labels): input_ids int64 [4, 16] (pad
            id 0 among them), logits [4, 3]. Exported by both exporters: the
            TorchScript one without constant folding writes the attention
            scale as a DOUBLE constant, and nothing of the word embedding's
            padding_idx; the dynamo one writes softmax's masked rows with
            IsNaN, and each node's torch.fx node (its padding_idx).
  llama     transformers' LlamaForCausalLM (vocabulary 100, width 32, 2 layers,
            4 heads sharing 2 key/value heads, rotary embeddings, RMSNorm,
            SiLU gating): input_ids [4, 16], logits [4, 16, 100], trained on
            every position. The dynamo exporter only: the TorchScript exporter
            refuses transformers' masks (aten::diff). Its rotary embedding is
            Cos and Sin of the positions times a buffer.
  swin      torchvision's SwinTransformer (patch 2, width 8, one stage of 2
            blocks, 2 heads, window 3, 5 classes): x [4, 3, 12, 12], logits
            [4, 5]. Both exporters: the shifted windows' attention mask is a
            ScatterND of each region's number into zeros.
  adaptive  Conv2d(3, 4, 3), ReLU, AdaptiveAvgPool2d(3) of its 5x5 planes
            (windows that overlap: 5 is not a multiple of 3), Linear(36, 5):
            x [4, 3, 7, 7]. The dynamo exporter only (the TorchScript exporter
            refuses such a pool): it writes the windows' bounds with Floor
            and Sign, and their means as GatherND and ReduceMean.
  segmenter two convolutions (the second strided), torchvision's FCNHead
            (3x3 convolution, BatchNorm, ReLU, dropout, 1x1 convolution to
            5 classes) and a bilinear resize back to the input: x [4, 3, 8, 6],
            logits [4, 5, 8, 6] with the classes on axis 1, trained as
            F.cross_entropy against labels [4, 8, 6] (kilnc --class-axis=1).
            Both exporters. No two of its dimensions are equal, so a
            transposition that mixes them up changes a shape.

For each model: MODEL_opset17.onnx (torch.onnx.export(dynamo=False,
opset_version=17, do_constant_folding=False), where exported) and
MODEL_dynamo.onnx (torch.onnx.export(dynamo=True, optimize=False)): the forms
docs/onnx.md says to train; MODEL.input.npy and MODEL.output.npy (a fixed
input, PyTorch's f32 logits); MODEL.npz (80 training rows of the input and
`label` int32: bert the first id mod 3, llama the next id of every
position, the image models the largest of five pixels taken evenly, the
segmenter per pixel the largest of its channels, their negated sum and the
product of the first two); and
MODEL_sgd.jsonl, MODEL_adam.jsonl: 20 steps from the exported weights, as
scripts/make_torch_layer_fixtures.py writes them (SGD at 0.1, Adam at 1e-3;
float64 losses and PyTorch's own float32 run beside them);
bert_unpadded_sgd.jsonl and bert_unpadded_adam.jsonl are bert's curves with
its padding row trained like any other (what the TorchScript export, which
does not record padding_idx, trains).

Labels that F.cross_entropy ignores (kilnc --ignore-index), as PyTorch's
users write them: llama_ignore.npz holds llama's rows with the labels of a
causal language model's padded batches, -100 (F.cross_entropy's default
ignore_index) after each row's length (drawn from 4 to 16) and at the last
position (no next token); segmenter_void.npz holds the segmenter's rows
with 255 (torchvision's segmentation recipes' ignore_index, Pascal VOC's
void) on every pixel of the border. Their curves, MODEL_sgd.jsonl and
MODEL_adam.jsonl, are those of the model trained on them, and MODEL_eval.jsonl
holds the evaluation over all 80 rows after the first SGD step (kiln run
--steps 1 --eval-data): the mean loss over every kept label and, for llama,
the fraction of kept positions whose largest logit is the label, in
float64 (the script checks that float32 gives the same fraction).
llama_ignore_empty.npz: its first 8 rows, the second batch's labels all
-100 (a loss with no kept label: NaN, as in PyTorch).

A model that computes its own loss (kilnc --loss=model): llama_loss_dynamo.onnx
is llama's LlamaForCausalLM called with labels, returning its `.loss` (inputs
input_ids and labels int64 [4, 16], output loss; transformers shifts the
labels and calls F.cross_entropy(ignore_index=-100), which the exporter writes
as SoftmaxCrossEntropyLoss); llama_hf.npz holds llama_ignore's rows with
labels as transformers takes them (the input ids, -100 after each row's
length), on which that loss is llama_ignore's (the script checks PyTorch's
curves agree within 1e-6: transformers computes its loss in float32 even
in a float64 model), so llama_ignore_*.jsonl are its curves too;
llama_hf_bad.npz its first 4 rows with one label past the vocabulary.

Label smoothing (kilnc --label-smoothing): swin_smooth_sgd.jsonl and
swin_smooth_adam.jsonl are swin's curves under F.cross_entropy(...,
label_smoothing=0.1), torchvision's classification recipes' value;
llama_ignore_smooth_*.jsonl llama's on llama_ignore.npz with both.

The dynamo exports keep each node's `pkg.torch.onnx.fx_node` metadata (kiln
reads an embedding's padding_idx there); the other metadata and the
producer version are cleared, so a second run writes the same bytes with
the same library versions.
"""

import argparse
import copy
import json
import logging
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
import make_torch_layer_fixtures as layers  # noqa: E402

OUT = os.path.join(os.path.dirname(SCRIPTS), "test", "Inputs", "torch_models")
BATCH, ROWS, SEQUENCE, VOCABULARY = layers.BATCH, layers.ROWS, 16, 100
TORCHSCRIPT = ("opset17", {"dynamo": False, "opset_version": 17, "do_constant_folding": False})
DYNAMO = ("dynamo", {"dynamo": True, "optimize": False})
# The TorchScript exporter writes Swin's two blocks as 1,400 nodes with long
# names: 270 KB.
MAX_ONNX_BYTES = 300 * 1024


class OwnLoss(torch.nn.Module):
    """A transformers model given labels, returning the loss it computes."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, labels):
        return self.model(input_ids, labels=labels, use_cache=False).loss


def own_loss_curve(module, data, optimizer, dtype):
    """torch_losses for OwnLoss: STEPS steps on its own loss."""
    module = copy.deepcopy(module).to(dtype).eval()
    opt = layers.make_optimizer(module, optimizer)
    losses = []
    for step in range(layers.STEPS):
        rows = slice(step * BATCH, (step + 1) * BATCH)
        loss = module(torch.from_numpy(data["input_ids"][rows]),
                      torch.from_numpy(data["labels"][rows]))
        losses.append(loss.item())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return losses


def write_own_loss(module, ignoring):
    """llama_loss_dynamo.onnx and llama_hf.npz (see the module's doc)."""
    # transformers predicts labels[t + 1] at t: the id there, kept where
    # llama_ignore keeps position t.
    ids = ignoring["input_ids"]
    labels = ids.astype(np.int64)
    labels[:, 1:] = np.where(ignoring["label"][:, :-1] == -100, -100, ids[:, 1:])
    data = {"input_ids": ids, "labels": labels}
    layers.write_npz("llama_hf.npz", data, OUT)
    bad = {k: v[:BATCH].copy() for k, v in data.items()}
    bad["labels"][2, 5] = VOCABULARY  # one past the classes
    layers.write_npz("llama_hf_bad.npz", bad, OUT)
    own = OwnLoss(module.model).eval()
    for optimizer in ("sgd", "adam"):
        mine = own_loss_curve(own, data, optimizer, torch.float64)
        theirs = layers.torch_losses(module, ignoring, optimizer, torch.float64, "input_ids")
        # transformers casts the logits to float32 for its loss, even in a
        # float64 model: the curves agree to float32's rounding.
        assert max(abs(a - b) / abs(b) for a, b in zip(mine, theirs)) < 1e-6, (optimizer, mine,
                                                                              theirs)
    feed = (torch.from_numpy(ids[:BATCH]), torch.from_numpy(labels[:BATCH]))
    m = layers.export_tidy(own, feed, ["input_ids", "labels"], DYNAMO[1], keep_fx_nodes=True,
                           output_name="loss")
    layers.write_file("llama_loss_dynamo.onnx", m.SerializeToString(deterministic=True), OUT,
                      MAX_ONNX_BYTES)
    print("llama_loss_dynamo.onnx: %d nodes; %s" % (
        len(m.graph.node), " ".join(sorted({n.op_type for n in m.graph.node}))))


class Logits(torch.nn.Module):
    """A transformers model returning only its logits, without a cache."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        if hasattr(self.model.config, "use_cache"):
            return self.model(input_ids, use_cache=False).logits
        return self.model(input_ids).logits


def bert():
    import transformers
    return Logits(transformers.BertForSequenceClassification(transformers.BertConfig(
        vocab_size=VOCABULARY, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=32, num_labels=3)))


def llama():
    import transformers
    return Logits(transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=VOCABULARY, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=64, max_position_embeddings=32)))


def swin():
    from torchvision.models.swin_transformer import SwinTransformer
    return SwinTransformer(patch_size=[2, 2], embed_dim=8, depths=[2], num_heads=[2],
                           window_size=[3, 3], num_classes=5)


def adaptive():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(3), torch.nn.Flatten(),
                               torch.nn.Linear(36, 5))


def without_padding_index(module):
    """A copy of the module whose embeddings have no padding_idx: what the
    TorchScript exporter's file says of them (it writes a Gather, nothing of
    the padding row PyTorch keeps from training)."""
    unpadded = copy.deepcopy(module)
    for layer in unpadded.modules():
        if isinstance(layer, torch.nn.Embedding):
            layer.padding_idx = None
    return unpadded


class Segmenter(torch.nn.Module):
    """A small FCN as torchvision's segmentation models are built: two
    convolutions (the second strided) as the backbone, torchvision's
    FCNHead, and the logits resized to the input bilinearly."""

    def __init__(self):
        super().__init__()
        from torchvision.models.segmentation.fcn import FCNHead
        self.backbone = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(8, 16, 3, stride=2, padding=1), torch.nn.ReLU())
        self.head = FCNHead(16, 5)

    def forward(self, x):
        out = self.head(self.backbone(x))
        return torch.nn.functional.interpolate(out, size=x.shape[-2:], mode="bilinear",
                                               align_corners=False)


def largest_channel(x):
    """Per pixel, which is largest of x's 3 channels, their negated sum and
    the product of the first two (5 classes)."""
    scores = np.concatenate([x, -x.sum(axis=1, keepdims=True), x[:, :1] * x[:, 1:2]], axis=1)
    return scores.argmax(axis=1).astype(np.int32)


def token_rows(rng, rows):
    return rng.integers(0, VOCABULARY, (rows, SEQUENCE)).astype(np.int64)


def first_id_labels(ids):
    return (ids[:, 0] % 3).astype(np.int32)


def next_id_labels(ids):
    return np.roll(ids, -1, axis=1).astype(np.int32)


def image_rows(shape):
    return lambda rng, rows: rng.uniform(-1.0, 1.0, (rows,) + shape).astype(np.float32)


def largest_of_five(x):
    flat = x.reshape(len(x), -1)
    stride = flat.shape[1] // 5
    return flat[:, 0:stride * 5:stride].argmax(axis=1).astype(np.int32)


# name: (builder, seed, input name, rows(rng, count), labels(rows), exports)
MODELS = {
    "bert": (bert, 11, "input_ids", token_rows, first_id_labels, (TORCHSCRIPT, DYNAMO)),
    "llama": (llama, 12, "input_ids", token_rows, next_id_labels, (DYNAMO,)),
    "swin": (swin, 13, "x", image_rows((3, 12, 12)), largest_of_five, (TORCHSCRIPT, DYNAMO)),
    "adaptive": (adaptive, 14, "x", image_rows((3, 7, 7)), largest_of_five, (DYNAMO,)),
    "segmenter": (Segmenter, 15, "x", image_rows((3, 8, 6)), largest_channel,
                  (TORCHSCRIPT, DYNAMO)),
}
# Models whose logits hold the classes on axis 1 ([N, C, H, W]), trained as
# F.cross_entropy(logits, labels [N, H, W]) (kilnc --class-axis=1).
CLASS_AXIS = {"segmenter": 1}


def padded_next_ids(rng, labels):
    """A causal language model's labels for padded batches: -100 after each
    row's length (4 to 16) and at the last position."""
    labels = labels.copy()
    lengths = rng.integers(4, SEQUENCE + 1, len(labels))
    labels[np.arange(SEQUENCE)[None, :] >= lengths[:, None] - 1] = -100
    return labels


def void_border(rng, labels):
    """Segmentation labels with 255 on every pixel of the border."""
    labels = labels.copy()
    labels[:, [0, -1], :] = 255
    labels[:, :, [0, -1]] = 255
    return labels


def evaluation_after_a_step(module, data, dtype, input_name, class_axis, ignored):
    """One SGD step on the first batch, then the mean loss over every kept
    label of the data and the fraction of them the largest logit predicts."""
    module = copy.deepcopy(module).to(dtype).eval()
    opt = layers.make_optimizer(module, "sgd")
    total, kept, correct = 0.0, 0, 0
    for step in range(ROWS // BATCH + 1):
        rows = slice(0, BATCH) if step == 0 else slice((step - 1) * BATCH, step * BATCH)
        feed = torch.from_numpy(data[input_name][rows])
        logits = module(feed.to(dtype) if feed.is_floating_point() else feed)
        logits = logits.movedim(class_axis, -1).reshape(-1, logits.shape[class_axis])
        labels = torch.from_numpy(data["label"][rows]).long().reshape(-1)
        if step == 0:
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(logits, labels, ignore_index=ignored).backward()
            opt.step()
            continue
        with torch.no_grad():
            keep = labels != ignored
            total += F.cross_entropy(logits, labels, ignore_index=ignored,
                                     reduction="sum").item()
            kept += int(keep.sum())
            correct += int((logits[keep].argmax(-1) == labels[keep]).sum())
    return total / kept, correct / kept


def write_evaluation(curve, module, data, input_name, class_axis, ignored):
    loss, accuracy = evaluation_after_a_step(module, data, torch.float64, input_name,
                                             class_axis, ignored)
    _, accuracy_f32 = evaluation_after_a_step(module, data, torch.float32, input_name,
                                              class_axis, ignored)
    assert accuracy == accuracy_f32, (curve, accuracy, accuracy_f32)
    record = {"step": 1, "eval_loss": loss}
    if class_axis == -1:  # kiln scores classes on the last axis only
        record["eval_accuracy"] = accuracy
    layers.write_file(curve + "_eval.jsonl", json.dumps(record) + "\n", OUT)


# Curves under F.cross_entropy's options: name: (model, its data, the
# ignore_index, the label_smoothing). The data: labels made from the model's
# (written to NAME.npz, with an evaluation), another variant's, or (None)
# the model's own.
VARIANTS = {
    "llama_ignore": ("llama", padded_next_ids, -100, 0.0),
    "llama_ignore_smooth": ("llama", "llama_ignore", -100, 0.1),
    "segmenter_void": ("segmenter", void_border, 255, 0.0),
    "swin_smooth": ("swin", None, -100, 0.1),
}


def main():
    warnings.filterwarnings("ignore")  # exporter and transformers deprecations
    logging.disable(logging.WARNING)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(OUT, exist_ok=True)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=sorted(MODELS), default=[])
    only = parser.parse_args().only
    noise = []
    for name in only or MODELS:
        build, seed, input_name, make_rows, make_labels, exports = MODELS[name]
        torch.manual_seed(seed)
        module = build().eval()
        rng = np.random.default_rng(1000 + seed)
        feed = make_rows(rng, BATCH)
        rows = make_rows(rng, ROWS)
        data = {input_name: rows, "label": make_labels(rows)}
        with torch.no_grad():
            output = module(torch.from_numpy(feed)).numpy()
        layers.write_file(name + ".input.npy", layers.npy_bytes(feed), OUT)
        layers.write_file(name + ".output.npy", layers.npy_bytes(output), OUT)
        layers.write_npz(name + ".npz", data, OUT)
        curves = {name: (module, data, -100, 0.0)}
        if name == "bert":
            curves["bert_unpadded"] = (without_padding_index(module), data, -100, 0.0)
        for curve, (model, source, ignored, smoothing) in VARIANTS.items():
            if model != name:
                continue
            rows_of = data if source is None else curves[source][1] if isinstance(
                source, str) else dict(data, label=source(rng, data["label"]))
            if callable(source):
                layers.write_npz(curve + ".npz", rows_of, OUT)
                write_evaluation(curve, module, rows_of, input_name, CLASS_AXIS.get(name, -1),
                                 ignored)
            if curve == "llama_ignore":  # a second batch with no kept label
                empty = {k: v[:2 * BATCH].copy() for k, v in rows_of.items()}
                empty["label"][BATCH:] = ignored
                layers.write_npz("llama_ignore_empty.npz", empty, OUT)
                write_own_loss(module, rows_of)
            curves[curve] = (module, rows_of, ignored, smoothing)
        for curve, (trained, rows_of, ignored, smoothing) in curves.items():
            for optimizer in ("sgd", "adam"):
                axis = CLASS_AXIS.get(name, -1)
                layers.write_losses(
                    curve, optimizer,
                    layers.torch_losses(trained, rows_of, optimizer, torch.float64, input_name,
                                        axis, ignored, smoothing),
                    layers.torch_losses(trained, rows_of, optimizer, torch.float32, input_name,
                                        axis, ignored, smoothing),
                    noise, OUT)
        for suffix, options in exports:
            filename = "%s_%s.onnx" % (name, suffix)
            m = layers.export_tidy(module, (torch.from_numpy(feed),), [input_name], options,
                                   keep_fx_nodes=options["dynamo"])
            layers.write_file(filename, m.SerializeToString(deterministic=True), OUT,
                              MAX_ONNX_BYTES)
            ops = sorted({n.op_type for n in m.graph.node})
            print("%s: %d nodes, %d parameters; %s" % (
                filename, len(m.graph.node), sum(p.numel() for p in module.parameters()),
                " ".join(ops)))
    layers.print_noise(noise)
    return 0


if __name__ == "__main__":
    sys.exit(main())
