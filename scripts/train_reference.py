#!/usr/bin/env python3
"""Trains the agreement cases in PyTorch and writes their per-step losses as
the fixtures test/Tools/kiln-agreement.test compares Kiln's losses against
(docs/training.md, "Agreement with PyTorch").

A development script, never run by the tests: it needs PyTorch, numpy and
onnx (pip install torch numpy onnx) and the built kilnc and kiln, which give
the initial weights of the graph-file models (their seeded initializers run
in Kiln's init program; PyTorch starts from exactly those values). The ONNX
model's initial weights are its initializers. Each case trains 50 steps in
f32 on the rows of scripts/make_agreement_data.py, batch k = rows
[(k-1)B, kB) wrapping, with the optimizer Kiln's artifact is compiled with.

    python3 scripts/train_reference.py                  # every case's fixture
    python3 scripts/train_reference.py --case mlp_adam  # one case
    python3 scripts/train_reference.py --check          # also run Kiln, compare
    python3 scripts/train_reference.py --dtype float64  # the f32 noise floor
    python3 scripts/train_reference.py --export-onnx    # re-export onnx_mlp.onnx

--dtype float64 trains in f64 and, with --check, reports how far the f32
fixtures and Kiln each are from it (writes no fixture). --export-onnx
re-creates test/Inputs/agreement/onnx_mlp.onnx with torch.onnx.export from a
seeded torch.nn.Module (new initial weights: rerun every onnx_mlp case then).
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "test", "Inputs", "agreement")
ONNX_MODEL = os.path.join(FIXTURES, "onnx_mlp.onnx")
STEPS = 50
# Rows per step of each model (its train spec's batch_size, ONNX_FLAGS').
BATCH = {"mlp": 64, "wide_deep": 256, "transformer": 8, "onnx_mlp": 16}
RTOL = 1e-4


class Case:
    """A model trained with one optimizer: `flags` are kilnc's (beyond the
    model and -o), `optimizer` the same settings as graph-format.md's
    Optimizer fields (kind, learning_rate, ...)."""

    def __init__(self, name, model, data, flags, optimizer):
        self.name, self.model, self.data = name, model, data
        self.flags, self.optimizer = flags, optimizer


def example(name):
    return os.path.join(ROOT, "examples", name + ".pbtxt")


ONNX_FLAGS = ["--train", "--loss=softmax_cross_entropy", "--output=logits",
              "--label=label", "--batch=16"]

# The kilnc flags of each case must match test/Tools/kiln-agreement.test.
CASES = [
    Case("mlp_sgd", example("mlp"), "mlp",
         ["--train", "--optimizer=sgd", "--lr=0.1"],
         {"kind": "sgd", "learning_rate": 0.1}),
    Case("mlp_adam", example("mlp"), "mlp", [],
         {"kind": "adam", "learning_rate": 1e-3}),
    Case("wide_deep_adagrad", example("wide_deep"), "wide_deep", [],
         {"kind": "adagrad", "learning_rate": 0.05, "initial_accumulator": 0.1}),
    Case("wide_deep_sgd", example("wide_deep"), "wide_deep",
         ["--train", "--optimizer=sgd", "--lr=0.1"],
         {"kind": "sgd", "learning_rate": 0.1}),
    Case("wide_deep_adam", example("wide_deep"), "wide_deep",
         ["--train", "--optimizer=adam", "--lr=0.001"],
         {"kind": "adam", "learning_rate": 1e-3}),
    Case("transformer_adamw", example("transformer"), "transformer", [],
         {"kind": "adamw", "learning_rate": 3e-4, "weight_decay": 0.1,
          "clip_global_norm": 1.0,
          "schedule": {"kind": "cosine_decay", "warmup_steps": 100,
                       "decay_steps": 5000, "min_lr": 3e-5}}),
    Case("onnx_mlp_sgd", ONNX_MODEL, "onnx_mlp",
         ONNX_FLAGS + ["--optimizer=sgd", "--lr=0.1"],
         {"kind": "sgd", "learning_rate": 0.1}),
    Case("onnx_mlp_adam", ONNX_MODEL, "onnx_mlp",
         ONNX_FLAGS + ["--optimizer=adam", "--lr=0.001"],
         {"kind": "adam", "learning_rate": 1e-3}),
]

DEFAULTS = {"beta1": 0.9, "beta2": 0.999, "weight_decay": 0.01,
            "initial_accumulator": 0.0, "clip_global_norm": 0.0}
EPSILON = {"adam": 1e-8, "adamw": 1e-8, "adagrad": 1e-10}


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


def graph_module():
    """GraphDef parsed through a descriptor set of proto/kiln/graph.proto:
    the real schema, with no generated code to keep in step."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "graph.desc")
        Tools.run(["protoc", "--proto_path=" + os.path.join(ROOT, "proto"),
                   "--include_imports", "--descriptor_set_out=" + out,
                   "kiln/graph.proto"])
        files = descriptor_pb2.FileDescriptorSet.FromString(open(out, "rb").read())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    return message_factory.GetMessageClass(
        pool.FindMessageTypeByName("kiln.graph.GraphDef"))


def read_graph(path):
    from google.protobuf import text_format
    graph = graph_module()()
    text_format.Parse(open(path).read(), graph)
    return graph


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

    def __init__(self, graph, weights, dtype):
        self.graph = graph
        self.nodes = {node.name: node for node in graph.nodes}
        self.params = {name: torch.nn.Parameter(torch.tensor(value, dtype=dtype))
                       for name, value in weights.items()
                       if value.dtype == np.float32}
        self.dtype = dtype
        # A table read only by axis-0 gathers gets a sparse gradient in Kiln
        # (lazy updates); PyTorch's sparse embedding gradient is the same.
        readers = {}
        for node in graph.nodes:
            for i, name in enumerate(node.inputs):
                readers.setdefault(name, []).append((node, i))
        self.sparse = {name for name in self.params
                       if readers.get(name) and all(
                           n.op == "gather" and i == 0 and attr(n, "axis", 0) == 0
                           for n, i in readers[name])}

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


def attr(node, key, default=None):
    """The Python value of a node attribute, or `default`."""
    if key not in node.attrs:
        if default is None:
            raise KeyError("node '%s' has no attribute '%s'" % (node.name, key))
        return default
    value = node.attrs[key]
    which = value.WhichOneof("value")
    if which == "ints":
        return list(value.ints.values)
    return getattr(value, which)


def tensor_value(tensor, dtype):
    shape = list(tensor.shape)
    if tensor.float_values:
        return torch.tensor(list(tensor.float_values), dtype=dtype).reshape(shape)
    return torch.tensor(list(tensor.int_values)).reshape(shape)


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
    if not schedule:
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
    """torch.optim optimizers with Kiln's update for `spec`: sparse tables
    under Adam get SparseAdam (lazy Adam), as docs/training.md says."""
    s = dict(DEFAULTS, **spec)
    kind, lr = s["kind"], s["learning_rate"]
    eps = s.get("epsilon", EPSILON.get(kind))
    dense = [p for name, p in params.items() if name not in sparse]
    tables = [p for name, p in params.items() if name in sparse]
    betas = (s["beta1"], s["beta2"])
    if kind == "sgd":
        return [torch.optim.SGD(dense + tables, lr=lr)]
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
    (TensorFlow's clip_by_global_norm; torch's clip_grad_norm_ adds 1e-6)."""
    squares = []
    for p in params:
        g = p.grad._values() if p.grad.is_sparse else p.grad
        squares.append(torch.sum(g * g))
    norm = torch.sqrt(torch.stack(squares).sum())
    scale = clip / torch.maximum(norm, torch.tensor(clip, dtype=norm.dtype))
    for p in params:
        p.grad.mul_(scale)


def load_arrays(path):
    arrays = np.load(path)
    return {name: arrays[name] for name in arrays.files}


def train(case, model, data, dtype):
    """The batch losses of STEPS steps, each before its update."""
    spec = case.optimizer
    opts = optimizers(spec, model.params, model.sparse)
    rows = len(next(iter(data.values())))
    batch = BATCH[case.data]
    losses = []
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
        if spec.get("clip_global_norm", 0) > 0:
            clip_global_norm(list(model.params.values()), spec["clip_global_norm"])
        for opt in opts:
            for group in opt.param_groups:
                group["lr"] = learning_rate(spec, t)
            opt.step()
    return losses


def build_model(case, tools, dtype, tmp):
    if case.data == "onnx_mlp":
        return OnnxModel(dtype)
    graph = read_graph(case.model)
    return GraphModel(graph, kiln_initial_weights(tools, graph, tmp), dtype)


def run_kiln(case, tools, data_path, tmp):
    artifact = os.path.join(tmp, case.name + ".kiln")
    metrics = os.path.join(tmp, case.name + ".jsonl")
    tools.run([tools.kilnc, case.model] + case.flags + ["-o", artifact])
    tools.run([tools.kiln, "run", artifact, "--data", data_path,
               "--steps", str(STEPS), "--metrics-out", metrics])
    losses = read_losses(metrics)
    return [losses[t] for t in range(1, STEPS + 1)]


def worst(expected, actual):
    """(relative difference, step) of the step that differs most."""
    return max((abs(a - e) / abs(e), t + 1)
               for t, (e, a) in enumerate(zip(expected, actual)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", choices=[c.name for c in CASES],
                        help="only these cases (repeatable)")
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                        help="directory of kilnc and kiln")
    parser.add_argument("--check", action="store_true",
                        help="also train with Kiln and report the difference")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--export-onnx", action="store_true")
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.sparse.check_sparse_tensor_invariants.disable()
    if args.export_onnx:
        export_onnx()
    dtype = getattr(torch, args.dtype)
    tools = Tools(args.bin)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts",
                                                     "make_agreement_data.py"), tmp],
                       check=True)
        for case in CASES:
            if args.case and case.name not in args.case:
                continue
            data_path = os.path.join(tmp, case.data + ".npz")
            model = build_model(case, tools, dtype, tmp)
            losses = train(case, model, load_arrays(data_path), dtype)
            fixture = os.path.join(FIXTURES, case.name + ".jsonl")
            line = "%-18s first %.6f last %.6f" % (case.name, losses[0], losses[-1])
            if dtype == torch.float32:
                with open(fixture, "w") as f:
                    for t, loss in enumerate(losses, 1):
                        f.write(json.dumps({"step": t, "loss": loss}) + "\n")
            elif os.path.exists(fixture):
                stored = read_losses(fixture)
                diff, step = worst(losses, [stored[t] for t in range(1, STEPS + 1)])
                line += "  torch-f32 vs f64 %.2e (step %d)" % (diff, step)
            if args.check:
                kiln = run_kiln(case, tools, data_path, tmp)
                diff, step = worst(losses, kiln)
                failed |= dtype == torch.float32 and diff > RTOL
                line += "  kiln vs torch-%s %.2e (step %d)" % (
                    args.dtype[5:], diff, step)
            print(line, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
