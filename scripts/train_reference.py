#!/usr/bin/env python3
"""Trains the agreement cases in PyTorch and writes their per-step losses as
the fixtures test/Tools/kiln-agreement.test compares Kiln's losses against
(docs/training.md, "Agreement with PyTorch").

A development script, never run by the tests: it needs PyTorch, numpy and
onnx (pip install torch numpy onnx) and the built kilnc and kiln, which give
the initial weights of the graph-file models (their seeded initializers run
in Kiln's init program; PyTorch starts from exactly those values). The ONNX
model's initial weights are its initializers. Each case trains 50 steps on
the rows of scripts/make_agreement_data.py, batch k = rows [(k-1)B, kB)
wrapping, with the optimizer Kiln's artifact is compiled with: the graph
file's train spec with the case's kilnc flags applied (optimizer_spec).

Each fixture line is {"step", "loss", "loss_f32"}: "loss" is the loss before
that step's update with PyTorch training in float64 (from Kiln's f32 initial
weights, exact in f64), the reference Kiln's f32 losses are held to;
"loss_f32" is the same training in float32, PyTorch's own rounding noise.

    /work/venv/bin/python scripts/train_reference.py                  # every case's fixture
    /work/venv/bin/python scripts/train_reference.py --case mlp_adam  # one case
    /work/venv/bin/python scripts/train_reference.py --check          # also run Kiln, compare
    /work/venv/bin/python scripts/train_reference.py --noise 4        # conditioning of each case
    /work/venv/bin/python scripts/train_reference.py --export-onnx    # re-export onnx_mlp.onnx

Every case prints the worst and mean relative difference of PyTorch's own
f32 losses from its f64 ones (and how many steps clipping was active);
--noise N adds N f64 runs with rounding-sized noise. The script exits 1 when
a case is ill-conditioned (CONDITIONING). --check also trains each case with
Kiln and prints the difference of its losses from the f64 curve; it exits 1
when that is beyond the test's tolerances (RTOL at any step, MEAN_RTOL on
average). --export-onnx re-creates test/Inputs/agreement/onnx_mlp.onnx with
torch.onnx.export from a seeded torch.nn.Module (new initial weights: rerun
every onnx_mlp case then).
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from graph_file import attr, constant_array, graph_module, read_graph  # noqa: E402,F401

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "test", "Inputs", "agreement")
ONNX_MODEL = os.path.join(FIXTURES, "onnx_mlp.onnx")
STEPS = 50
# Rows per step of each model (its train spec's batch_size, ONNX_FLAGS').
BATCH = {"mlp": 64, "wide_deep": 256, "transformer": 8, "onnx_mlp": 16}
# test/Tools/kiln-agreement.test's tolerances: every step, and the mean over
# the steps, of |kiln - torch_f64| / |torch_f64|.
RTOL = 1e-4
MEAN_RTOL = 2e-5
# A case is well-conditioned when f32 rounding moves PyTorch's own curve by
# at most this fraction of the tolerances: PyTorch's f32 training, and f64
# training with NOISE (2^-24, f32's unit roundoff) relative noise put into
# every parameter after every step (--noise). Otherwise agreement hinges on
# luck: a ReLU input within rounding of 0 at some step, or training at the
# edge of stability, turns 1e-7 differences into 1e-2 (docs/training.md).
CONDITIONING = 0.1
NOISE = 2.0 ** -24


class Case:
    """A model trained with one optimizer: `flags` are kilnc's (beyond the
    model and -o); the optimizer is the model's train spec with these flags
    applied (optimizer_spec)."""

    def __init__(self, name, model, data, flags):
        self.name, self.model, self.data, self.flags = name, model, data, flags


def example(name):
    return os.path.join(ROOT, "examples", name + ".pbtxt")


ONNX_FLAGS = ["--train", "--loss=softmax_cross_entropy", "--output=logits",
              "--label=label", "--batch=16"]

# The kilnc flags of each case must match test/Tools/kiln-agreement.test.
CASES = [
    Case("mlp_sgd", example("mlp"), "mlp",
         ["--train", "--optimizer=sgd", "--lr=0.1"]),
    Case("mlp_adam", example("mlp"), "mlp", []),
    Case("mlp_momentum", example("mlp"), "mlp",
         ["--train", "--optimizer=momentum", "--lr=0.01", "--momentum=0.9"]),
    Case("mlp_nesterov", example("mlp"), "mlp",
         ["--train", "--optimizer=momentum", "--lr=0.01", "--momentum=0.9",
          "--nesterov"]),
    Case("mlp_adagrad", example("mlp"), "mlp",
         ["--train", "--optimizer=adagrad", "--lr=0.002"]),
    Case("mlp_adamw", example("mlp"), "mlp",
         ["--train", "--optimizer=adamw", "--lr=0.001", "--weight-decay=0.1"]),
    Case("mlp_cosine", example("mlp"), "mlp",
         ["--train", "--optimizer=adam", "--lr=0.001",
          "--lr-schedule=cosine_decay", "--warmup-steps=5", "--decay-steps=30",
          "--min-lr=0.0001"]),
    Case("mlp_warmup", example("mlp"), "mlp",
         ["--train", "--optimizer=sgd", "--lr=0.05", "--lr-schedule=linear_warmup",
          "--warmup-steps=10"]),
    Case("mlp_clip", example("mlp"), "mlp",
         ["--train", "--optimizer=sgd", "--lr=0.5", "--clip-norm=0.2"]),
    Case("wide_deep_adagrad", example("wide_deep"), "wide_deep", []),
    Case("wide_deep_sgd", example("wide_deep"), "wide_deep",
         ["--train", "--optimizer=sgd", "--lr=0.1"]),
    Case("wide_deep_adam", example("wide_deep"), "wide_deep",
         ["--train", "--optimizer=adam", "--lr=0.001"]),
    Case("wide_deep_momentum_dense", example("wide_deep"), "wide_deep",
         ["--train", "--optimizer=momentum", "--lr=0.05", "--momentum=0.9",
          "--sparse-updates=dense"]),
    Case("transformer_adamw", example("transformer"), "transformer", []),
    Case("onnx_mlp_sgd", ONNX_MODEL, "onnx_mlp",
         ONNX_FLAGS + ["--optimizer=sgd", "--lr=0.1"]),
    Case("onnx_mlp_adam", ONNX_MODEL, "onnx_mlp",
         ONNX_FLAGS + ["--optimizer=adam", "--lr=0.001"]),
]

# graph-format.md's Optimizer defaults (PyTorch's).
DEFAULTS = {"kind": "sgd", "momentum": 0.9, "nesterov": False, "beta1": 0.9,
            "beta2": 0.999, "weight_decay": 0.01, "initial_accumulator": 0.0,
            "clip_global_norm": 0.0, "sparse_updates": "dense"}
EPSILON = {"adam": 1e-8, "adamw": 1e-8, "adagrad": 1e-10}
DEFAULT_LR = {"adam": 1e-3, "adamw": 1e-3}  # 1e-2 for the others


def proto_fields(message):
    """The fields set in a message as a dict; enums as lowercase names."""
    fields = {}
    for field, value in message.ListFields():
        if field.message_type:
            value = proto_fields(value)
        elif field.enum_type:
            value = field.enum_type.values_by_number[value].name.lower()
        fields[field.name] = value
    return fields


# kilnc's optimizer flags: the Optimizer (or LearningRateSchedule) field each
# sets and its type.
OPTIMIZER_FLAGS = {"--lr": ("learning_rate", float),
                   "--momentum": ("momentum", float),
                   "--weight-decay": ("weight_decay", float),
                   "--clip-norm": ("clip_global_norm", float),
                   "--sparse-updates": ("sparse_updates", str)}
SCHEDULE_FLAGS = {"--lr-schedule": ("kind", str),
                  "--warmup-steps": ("warmup_steps", int),
                  "--decay-steps": ("decay_steps", int),
                  "--min-lr": ("min_lr", float)}


def optimizer_spec(graph, flags):
    """The optimizer a case's artifact is compiled with, as graph-format.md's
    Optimizer fields (kind, learning_rate, ..., schedule: {...}): the graph
    file's train spec (none for ONNX) with kilnc's flags applied as
    compiler/Import/Graph/TrainFlags.cpp does (--optimizer first; another
    kind drops the file's rate for the kind's default), then the defaults."""
    spec = {}
    if graph is not None and graph.HasField("train"):
        spec = proto_fields(graph.train.optimizer)
    spec.setdefault("kind", DEFAULTS["kind"])
    parsed = [flag.partition("=")[::2] for flag in flags]
    for key, value in parsed:
        if key == "--optimizer":
            if value != spec["kind"]:
                spec.pop("learning_rate", None)
            spec["kind"] = value
    for key, value in parsed:
        if key == "--nesterov":
            spec["nesterov"] = True
        elif key in OPTIMIZER_FLAGS:
            field, kind = OPTIMIZER_FLAGS[key]
            spec[field] = kind(value)
        elif key in SCHEDULE_FLAGS:
            field, kind = SCHEDULE_FLAGS[key]
            spec.setdefault("schedule", {})[field] = kind(value)
    spec.setdefault("learning_rate", DEFAULT_LR.get(spec["kind"], 1e-2))
    return dict(DEFAULTS, **spec)


# --- Tools --------------------------------------------------------------------


class Tools:
    """kilnc and kiln from the build directory."""

    def __init__(self, bin_dir):
        self.kilnc = os.path.join(bin_dir, "kilnc")
        self.kiln = os.path.join(bin_dir, "kiln")

    @staticmethod
    def run(command):
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit("%s failed:\n%s%s" % (" ".join(command), result.stdout,
                                          result.stderr))


def kiln_initial_weights(tools, graph, tmp):
    """Every variable's value after Kiln's init program: the graph without
    its train spec, returning the variables, run once with --fetch."""
    from google.protobuf import text_format
    probe = type(graph)()
    probe.CopyFrom(graph)
    probe.ClearField("train")
    del probe.outputs[:]
    probe.outputs.extend(v.name for v in graph.variables)
    path = os.path.join(tmp, "initial.pbtxt")
    with open(path, "w") as f:
        f.write(text_format.MessageToString(probe))
    artifact = os.path.join(tmp, "initial.kiln")
    tools.run([tools.kilnc, path, "--inference-only", "-o", artifact])
    command = [tools.kiln, "run", artifact, "--synthetic-feeds"]
    files = {}
    for i, variable in enumerate(graph.variables):
        files[variable.name] = os.path.join(tmp, "initial%d.npy" % i)
        command.append("--fetch=%s=%s" % (variable.name, files[variable.name]))
    tools.run(command)
    return {name: np.load(file) for name, file in files.items()}


def read_losses(path):
    """{step: loss} of a kiln --metrics-out file or a fixture."""
    losses = {}
    for line in open(path):
        record = json.loads(line)
        if "loss" in record:
            losses[record["step"]] = record["loss"]
    return losses


# --- Graph-file models in PyTorch ---------------------------------------------


class GraphModel:
    """The forward pass of a graph file as PyTorch ops, one per node: the
    ops the examples use, with graph-format.md's semantics."""

    def __init__(self, graph, weights, dtype, lazy):
        self.graph = graph
        self.nodes = {node.name: node for node in graph.nodes}
        self.params = {name: torch.nn.Parameter(torch.tensor(value, dtype=dtype))
                       for name, value in weights.items()
                       if value.dtype == np.float32}
        self.dtype = dtype
        # A table read only by axis-0 gathers gets a sparse gradient in Kiln.
        # With lazy updates (sparse_updates: LAZY) only its looked-up rows
        # change, as with PyTorch's sparse embedding gradient (SparseAdam for
        # Adam); with dense ones every row is updated, as torch.optim does
        # with nn.Embedding's dense gradient.
        readers = {}
        for node in graph.nodes:
            for i, name in enumerate(node.inputs):
                readers.setdefault(name, []).append((node, i))
        tables = {name for name in self.params
                  if readers.get(name) and all(
                      n.op == "gather" and i == 0 and attr(n, "axis", 0) == 0
                      for n, i in readers[name])}
        self.sparse = tables if lazy else set()

    def loss(self, feeds):
        values = dict(feeds)
        values.update(self.params)
        for node in self.graph.nodes:
            values[node.name] = self.evaluate(node, [values[i] for i in node.inputs])
        return values[self.graph.train.loss]

    def evaluate(self, node, args):
        op = node.op
        if op == "constant":
            return tensor_value(attr(node, "value"), self.dtype)
        if op == "matmul":
            a, b = args
            if attr(node, "transpose_a", False):
                a = a.transpose(-1, -2)
            if attr(node, "transpose_b", False):
                b = b.transpose(-1, -2)
            return torch.matmul(a, b)
        binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
                  "div": torch.div, "maximum": torch.maximum,
                  "minimum": torch.minimum}
        if op in binary:
            return binary[op](*args)
        unary = {"neg": torch.neg, "relu": torch.relu, "exp": torch.exp,
                 "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
                 "tanh": torch.tanh, "sigmoid": torch.sigmoid}
        if op in unary:
            return unary[op](*args)
        if op == "gelu":
            return F.gelu(args[0], approximate=attr(node, "approximate", "none"))
        if op == "compare":
            predicate = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt,
                         "le": torch.le, "gt": torch.gt, "ge": torch.ge}
            return predicate[attr(node, "predicate")](*args)
        if op == "select":
            return torch.where(*args)
        if op == "reshape":
            return args[0].reshape(attr(node, "shape"))
        if op == "transpose":
            reversed_dims = list(range(args[0].dim()))[::-1]
            return args[0].permute(attr(node, "perm", reversed_dims))
        if op == "concat":
            return torch.cat(args, dim=attr(node, "axis"))
        if op in ("softmax", "log_softmax"):
            function = torch.softmax if op == "softmax" else torch.log_softmax
            return function(args[0], dim=attr(node, "axis", -1))
        if op == "layer_norm":
            x = args[0]
            axis = attr(node, "axis", -1) % x.dim()
            return F.layer_norm(x, x.shape[axis:], *args[1:],
                                eps=attr(node, "epsilon", 1e-5))
        if op == "gather":
            table, ids = args
            assert attr(node, "axis", 0) == 0, node
            if node.inputs[0] in self.sparse:
                return F.embedding(ids, table, sparse=True)
            return table[ids]
        if op == "softmax_cross_entropy":
            return F.cross_entropy(args[0], args[1].long())
        if op == "sigmoid_cross_entropy":
            return F.binary_cross_entropy_with_logits(*args)
        if op == "mean_squared_error":
            return F.mse_loss(*args)
        raise NotImplementedError("op '%s' (node '%s')" % (op, node.name))


def tensor_value(tensor, dtype):
    value = torch.from_numpy(constant_array(tensor))
    return value.to(dtype) if value.is_floating_point() else value


# --- The ONNX model -----------------------------------------------------------


class OnnxMlp(torch.nn.Module):
    """The module test/Inputs/agreement/onnx_mlp.onnx was exported from."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def export_onnx():
    torch.manual_seed(20240601)
    model = OnnxMlp()
    torch.onnx.export(model, (torch.zeros(16, 32),), ONNX_MODEL,
                      input_names=["x"], output_names=["logits"], dynamo=False)
    print("wrote", ONNX_MODEL)


class OnnxModel:
    """OnnxMlp with the initializers of the exported file as its weights."""

    def __init__(self, dtype):
        import onnx
        from onnx import numpy_helper
        weights = {t.name: numpy_helper.to_array(t)
                   for t in onnx.load(ONNX_MODEL).graph.initializer}
        self.module = OnnxMlp().to(dtype)
        self.module.load_state_dict(
            {name: torch.tensor(value, dtype=dtype) for name, value in weights.items()})
        self.params = dict(self.module.named_parameters())
        self.sparse = set()

    def loss(self, feeds):
        return F.cross_entropy(self.module(feeds["x"]), feeds["label"].long())


# --- Training -----------------------------------------------------------------


def learning_rate(spec, t):
    """The rate of step t (from 1): docs/training.md's schedules."""
    lr = spec["learning_rate"]
    schedule = spec.get("schedule")
    if not schedule or schedule.get("kind", "constant") == "constant":
        return lr
    warmup = schedule.get("warmup_steps", 0)
    if t <= warmup:
        return lr * min(1.0, t / warmup)
    if schedule["kind"] == "linear_warmup":
        return lr
    p = (t - warmup) / (schedule["decay_steps"] - warmup)
    p = min(max(p, 0.0), 1.0)
    return schedule["min_lr"] + (lr - schedule["min_lr"]) * (1 + math.cos(math.pi * p)) / 2


def optimizers(spec, params, sparse):
    """torch.optim optimizers with Kiln's update for `spec` (optimizer_spec's
    dict). `sparse` names the tables updated lazily (their gradients are
    sparse): under Adam they get SparseAdam (lazy Adam), as docs/training.md
    says; SGD and Adagrad take sparse gradients as they are."""
    s = spec
    kind, lr = s["kind"], s["learning_rate"]
    eps = s.get("epsilon", EPSILON.get(kind))
    dense = [p for name, p in params.items() if name not in sparse]
    tables = [p for name, p in params.items() if name in sparse]
    betas = (s["beta1"], s["beta2"])
    if kind == "sgd":
        return [torch.optim.SGD(dense + tables, lr=lr)]
    if kind == "momentum":
        assert not tables, "no lazy momentum in PyTorch"
        return [torch.optim.SGD(dense, lr=lr, momentum=s["momentum"],
                                nesterov=s["nesterov"])]
    if kind == "adagrad":
        return [torch.optim.Adagrad(dense + tables, lr=lr, eps=eps,
                                    initial_accumulator_value=s["initial_accumulator"])]
    if kind == "adam":
        result = [torch.optim.Adam(dense, lr=lr, betas=betas, eps=eps)]
        if tables:
            result.append(torch.optim.SparseAdam(tables, lr=lr, betas=betas, eps=eps))
        return result
    if kind == "adamw":
        assert not tables, "no lazy AdamW in PyTorch"
        return [torch.optim.AdamW(dense, lr=lr, betas=betas, eps=eps,
                                  weight_decay=s["weight_decay"])]
    raise NotImplementedError("optimizer '%s'" % kind)


def clip_global_norm(params, clip):
    """Every gradient times clip / max(norm, clip), the norm over all of them
    (TensorFlow's clip_by_global_norm; torch's clip_grad_norm_ adds 1e-6).
    Returns whether it clipped (norm > clip)."""
    squares = []
    for p in params:
        g = p.grad._values() if p.grad.is_sparse else p.grad
        squares.append(torch.sum(g * g))
    norm = torch.sqrt(torch.stack(squares).sum())
    scale = clip / torch.maximum(norm, torch.tensor(clip, dtype=norm.dtype))
    for p in params:
        p.grad.mul_(scale)
    return bool(norm > clip)


def load_arrays(path):
    arrays = np.load(path)
    return {name: arrays[name] for name in arrays.files}


def train(spec, model, data, batch, dtype, noise=None):
    """The batch losses of STEPS steps, each before its update, and the
    number of steps whose gradients were clipped. With `noise` (a
    torch.Generator) every parameter is multiplied by 1 + NOISE·N(0, 1)
    after every step: rounding-sized perturbations, to see whether the
    case's curve depends on them (main's --noise)."""
    opts = optimizers(spec, model.params, model.sparse)
    rows = len(next(iter(data.values())))
    losses, clipped = [], 0
    for t in range(1, STEPS + 1):
        start = ((t - 1) * batch) % rows
        feeds = {}
        for name, array in data.items():
            chunk = array[start:start + batch]
            feeds[name] = torch.tensor(chunk, dtype=dtype) \
                if array.dtype.kind == "f" else torch.tensor(chunk)
        for opt in opts:
            opt.zero_grad(set_to_none=True)
        loss = model.loss(feeds)
        losses.append(loss.item())
        loss.backward()
        if spec["clip_global_norm"] > 0:
            clipped += clip_global_norm(list(model.params.values()),
                                        spec["clip_global_norm"])
        for opt in opts:
            for group in opt.param_groups:
                group["lr"] = learning_rate(spec, t)
            opt.step()
        if noise is not None:
            with torch.no_grad():
                for p in model.params.values():
                    p.mul_(1 + NOISE * torch.randn(p.shape, generator=noise, dtype=dtype))
    return losses, clipped


def build_model(case, graph, weights, spec, dtype):
    if case.data == "onnx_mlp":
        return OnnxModel(dtype)
    return GraphModel(graph, weights, dtype, spec["sparse_updates"] == "lazy")


def run_kiln(case, tools, data_path, tmp):
    artifact = os.path.join(tmp, case.name + ".kiln")
    metrics = os.path.join(tmp, case.name + ".jsonl")
    tools.run([tools.kilnc, case.model] + case.flags + ["-o", artifact])
    tools.run([tools.kiln, "run", artifact, "--data", data_path,
               "--steps", str(STEPS), "--metrics-out", metrics])
    losses = read_losses(metrics)
    return [losses[t] for t in range(1, STEPS + 1)]


def differences(expected, actual):
    """(worst relative difference, its step, mean relative difference)."""
    relative = [abs(a - e) / abs(e) for e, a in zip(expected, actual)]
    worst = max(range(len(relative)), key=relative.__getitem__)
    return relative[worst], worst + 1, sum(relative) / len(relative)


def describe(spec):
    """The optimizer settings that matter for the spec's kind, one line."""
    keys = {"momentum": ["momentum", "nesterov"], "adam": ["beta1", "beta2"],
            "adamw": ["beta1", "beta2", "weight_decay"],
            "adagrad": ["initial_accumulator"]}.get(spec["kind"], [])
    words = ["%s lr=%g" % (spec["kind"], spec["learning_rate"])]
    words += ["%s=%s" % (k, spec[k]) for k in keys]
    if spec["clip_global_norm"] > 0:
        words.append("clip=%g" % spec["clip_global_norm"])
    if spec.get("schedule", {}).get("kind", "constant") != "constant":
        words.append("schedule=%s" % spec["schedule"])
    words.append("tables=%s" % spec["sparse_updates"])
    return " ".join(words)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", choices=[c.name for c in CASES],
                        help="only these cases (repeatable)")
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                        help="directory of kilnc and kiln")
    parser.add_argument("--check", action="store_true",
                        help="also train with Kiln and report the difference")
    parser.add_argument("--noise", type=int, default=0, metavar="N",
                        help="also train N times in f64 with rounding-sized noise "
                             "and report how far the curve moves")
    parser.add_argument("--export-onnx", action="store_true")
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.sparse.check_sparse_tensor_invariants.disable()
    if args.export_onnx:
        export_onnx()
    tools = Tools(args.bin)
    failed = False
    initial = {}  # Kiln's initial weights per graph file
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts",
                                                     "make_agreement_data.py"), tmp],
                       check=True)
        for case in CASES:
            if args.case and case.name not in args.case:
                continue
            data_path = os.path.join(tmp, case.data + ".npz")
            data = load_arrays(data_path)
            graph = None if case.data == "onnx_mlp" else read_graph(case.model)
            if graph is not None and case.model not in initial:
                initial[case.model] = kiln_initial_weights(tools, graph, tmp)
            spec = optimizer_spec(graph, case.flags)
            curves = {}
            for dtype in (torch.float64, torch.float32):
                model = build_model(case, graph, initial.get(case.model), spec, dtype)
                curves[dtype] = train(spec, model, data, BATCH[case.data], dtype)
            (losses, clipped), (losses_f32, _) = curves[torch.float64], curves[torch.float32]
            with open(os.path.join(FIXTURES, case.name + ".jsonl"), "w") as f:
                for t, (loss, loss_f32) in enumerate(zip(losses, losses_f32), 1):
                    f.write(json.dumps({"step": t, "loss": loss, "loss_f32": loss_f32})
                            + "\n")
            print("%s: %s" % (case.name, describe(spec)))
            line = "    loss %.4f -> %.4f" % (losses[0], losses[-1])
            if spec["clip_global_norm"] > 0:
                line += ", clipped %d/%d steps" % (clipped, STEPS)
            diff, step, mean = differences(losses, losses_f32)
            line += "; torch-f32 vs f64 worst %.2e (step %d) mean %.2e" % (diff, step, mean)
            noisy = []
            for seed in range(1, args.noise + 1):
                model = build_model(case, graph, initial.get(case.model), spec, torch.float64)
                curve, _ = train(spec, model, data, BATCH[case.data], torch.float64,
                                 torch.Generator().manual_seed(seed))
                noisy.append(differences(losses, curve))
            if noisy:
                line += "; f64+noise worst %.2e mean %.2e" % (
                    max(d[0] for d in noisy), max(d[2] for d in noisy))
            if any(d[0] > CONDITIONING * RTOL or d[2] > CONDITIONING * MEAN_RTOL
                   for d in noisy + [(diff, step, mean)]):
                failed = True
                line += " ILL-CONDITIONED"
            if args.check:
                diff, step, mean = differences(losses, run_kiln(case, tools, data_path, tmp))
                bad = diff > RTOL or mean > MEAN_RTOL
                failed |= bad
                line += "; kiln vs torch-f64 worst %.2e (step %d) mean %.2e%s" % (
                    diff, step, mean, " FAILED" if bad else "")
            print(line, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
