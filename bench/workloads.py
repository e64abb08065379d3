"""The workloads of bench/train_bench.py: what every row trains, written as
bench/peers/PROTOCOL.md's folder, and Kiln's artifact of it.

Two kinds:
  GraphWorkload     an example graph file (examples/NAME.pbtxt): Kiln
                    compiles it; every peer rebuilds it from the file.
  ExportedWorkload  the user's own model (bench/peers/user_models.py): its
                    author's PyTorch nn.Module or Keras model, trained in that
                    framework from the module itself, while Kiln compiles what
                    the framework exports (torch.onnx.export; a Keras model
                    frozen to a GraphDef by TensorFlow's Python).
Both write W/workload.json, W/weights.npz and W/batches.npz, the batches as
one .npz for `kiln run --data`, and compile W/model.kiln (timed).
"""

import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
import train_reference as ref  # noqa: E402  (GraphModel, kiln_initial_weights, ...)
import user_models  # noqa: E402

import torch  # noqa: E402

GRAPH_MODELS = ["mlp", "wide_deep", "transformer"]
EXPORTED_MODELS = list(user_models.MODELS)
NUMPY_DTYPES = {"DT_FLOAT32": np.float32, "DT_INT32": np.int32, "DT_INT64": np.int64}


def make_workload(name, tools, folder, args):
    if name in EXPORTED_MODELS:
        return ExportedWorkload(name, tools, folder, args)
    return GraphWorkload(name, tools, folder, args)


def enum_name(message, field):
    value = getattr(message, field)
    return message.DESCRIPTOR.fields_by_name[field].enum_type.values_by_number[value].name


class Workload:
    """What GraphWorkload and ExportedWorkload share: the folder's files,
    the artifact and its parameter count. `framework` is the one framework
    besides kiln that runs the workload (None: every peer)."""

    framework = None

    def __init__(self, name, tools, folder, args):
        self.name, self.folder, self.tools = name, folder, tools
        os.makedirs(folder, exist_ok=True)
        self.steps, self.warmup = args.warmup + args.steps, args.warmup
        self.artifact = os.path.join(folder, "model.kiln")
        self.data = os.path.join(folder, "kiln-data.npz")
        # Kiln's rows: "run" and each --kiln-variant NAME=FLAGS, an artifact
        # compiled with more kilnc flags (an ablation: --conv=generated, ...).
        self.kiln_variants = dict(getattr(args, "kiln_variants", {}))
        self.artifacts, self.compile_times = {}, {}
        self.reference = None  # Kiln's losses, set by train_bench's reference run

    def runs(self, framework):
        """Whether `framework`'s peer trains this workload."""
        return framework == "kiln" or self.framework in (None, framework)

    def write_folder(self, spec, weights, batches):
        """PROTOCOL.md's files, with the schedule and Adam's bias corrections
        of every step computed here in float64, and kiln's data set."""
        b1, b2 = self.spec["beta1"], self.spec["beta2"]
        spec = dict(spec, model=self.name, batch=self.batch, steps=self.steps,
                    warmup=self.warmup, optimizer=self.spec,
                    learning_rates=[ref.learning_rate(self.spec, t)
                                    for t in range(1, self.steps + 1)],
                    bias_corrections=[[1.0 - b1 ** t, 1.0 - b2 ** t]
                                      for t in range(1, self.steps + 1)],
                    row_tables=self.row_tables)
        self.batch_count = len(batches)
        with open(os.path.join(self.folder, "workload.json"), "w") as f:
            json.dump(spec, f, indent=1)
        np.savez(os.path.join(self.folder, "weights.npz"), **weights)
        np.savez(os.path.join(self.folder, "batches.npz"),
                 **{"%d/%s" % (k, key): value for k, b in enumerate(batches)
                    for key, value in b.items()})
        # kiln reads rows: batch k is rows [kB, (k+1)B), wrapping, so step t
        # takes batch (t - 1) % count as the peers do.
        np.savez(self.data, **{key: np.concatenate([b[key] for b in batches])
                               for key in batches[0]})

    def compile(self, source, flags):
        """kilnc SOURCE FLAGS -o model.kiln, timed (--no-cache: the compile
        time is LLVM's too, not a lookup of kernels compiled before), and
        each Kiln variant's artifact with its own flags added; the
        trainable parameter count from `kiln inspect`."""
        for variant, extra in [("run", [])] + list(self.kiln_variants.items()):
            artifact = (self.artifact if variant == "run"
                        else os.path.join(self.folder, "model-%s.kiln" % variant))
            start = time.perf_counter()
            ref.Tools.run([self.tools.kilnc, source] + flags + extra +
                          ["--no-cache", "-o", artifact])
            self.compile_times[variant] = time.perf_counter() - start
            self.artifacts[variant] = artifact
        self.compile_seconds = self.compile_times["run"]
        inspect = json.loads(subprocess.run(
            [self.tools.kiln, "inspect", self.artifact, "--json"], capture_output=True,
            text=True, check=True).stdout)
        self.params = sum(int(np.prod(v["shape"])) for v in inspect["variables"]
                          if v["trainable"])

    def describe(self):
        return "%s: batch %d, %s; %d random batches, %d + %d steps a run" % (
            self.name, self.batch, ref.describe(self.spec), self.batch_count, self.warmup,
            self.steps - self.warmup)


class GraphWorkload(Workload):
    """An example graph file: Kiln's initial weights (from its init
    program), random batches of the file's inputs."""

    def __init__(self, name, tools, folder, args):
        super().__init__(name, tools, folder, args)
        self.path = ref.example(name)
        graph = ref.read_graph(self.path)
        self.graph = graph
        self.spec = ref.optimizer_spec(graph, [])  # the file's spec, defaults applied
        self.spec.setdefault("epsilon", ref.EPSILON.get(self.spec["kind"], 0.0))
        self.batch = graph.train.batch_size or graph.inputs[0].shape[0]
        scratch = os.path.join(folder, "scratch")
        os.makedirs(scratch, exist_ok=True)
        weights = ref.kiln_initial_weights(tools, graph, scratch)
        lazy = self.spec["sparse_updates"] == "lazy"
        self.row_tables = sorted(ref.GraphModel(graph, weights, torch.float32, lazy).sparse)
        self.write_folder({
            "graph": self.path, "loss": graph.train.loss,
            "variables": [v.name for v in graph.variables
                          if not v.HasField("trainable") or v.trainable],
            "feeds": {feed.name: {"dtype": np.dtype(NUMPY_DTYPES[enum_name(feed, "dtype")]).name,
                                  "shape": list(feed.shape)} for feed in graph.inputs}},
            weights, random_batches(graph, weights, args.batches, args.seed))
        self.compile(self.path, [])


class ExportedWorkload(Workload):
    """The user's own model (user_models.MODELS[name]): its framework's
    initial weights, exported by that framework for Kiln; random inputs
    (floats uniform in [0, 1), ids uniform in the vocabulary) and labels."""

    def __init__(self, name, tools, folder, args):
        super().__init__(name, tools, folder, args)
        model = user_models.MODELS[name]
        self.framework, self.batch = model["framework"], model["batch"]
        if self.steps > model.get("max_steps", self.steps):  # user_models.py says why
            self.steps = model["max_steps"]
            self.warmup = min(self.warmup, self.steps // 2)
        # The model's optimizer flags, applied as kilnc applies them.
        self.spec = ref.optimizer_spec(None, model["optimizer"])
        self.spec.setdefault("epsilon", ref.EPSILON.get(self.spec["kind"], 0.0))
        self.row_tables = []
        if self.framework == "torch":
            weights, variables, source = self.export_torch(name, model)
        else:
            weights, variables, source = self.export_keras(name, model, args)
        batches = self.random_batches(model, args)
        self.write_folder({
            "graph": None, "source": {"framework": self.framework, "model": name},
            "loss": "mean softmax cross-entropy of the logits against `label`",
            "variables": variables,
            "feeds": {key: {"dtype": value.dtype.name, "shape": list(value.shape)}
                      for key, value in batches[0].items()}}, weights, batches)
        self.compile(source, ["--train", "--loss=softmax_cross_entropy",
                              "--output=" + model["output"], "--label=label",
                              "--batch=%d" % self.batch] + model["optimizer"])

    def export_torch(self, name, model):
        """(state_dict as numpy, the parameters' names, model.onnx): the
        module exported by torch.onnx.export's TorchScript exporter at
        opset 17 (the dynamo exporter's default graph optimizer merges
        equal initializers, which kilnc refuses for training), or, for a
        model whose "exporter" is "dynamo", by the dynamo exporter without
        its optimizer."""
        module = user_models.torch_module(name)
        path = os.path.join(self.folder, "model.onnx")
        example = torch.zeros(model["shape"], dtype=getattr(torch, model["dtype"]))
        options = ({"dynamo": True, "optimize": False} if model.get("exporter") == "dynamo"
                   else {"opset_version": 17, "dynamo": False})
        # Traced in eval mode (the TorchScript exporter sets it itself; the
        # dynamo exporter traces the module as it is).
        torch.onnx.export(module.eval(), (example,), path, input_names=[model["input"]],
                          output_names=[model["output"]], external_data=False, **options)
        weights = {key: value.detach().numpy().copy()
                   for key, value in module.state_dict().items()}
        return weights, [key for key, _ in module.named_parameters()], path

    def export_keras(self, name, model, args):
        """(weights by variable path, their names, model.pb) from
        user_models.py run by TensorFlow's Python."""
        script = os.path.join(ROOT, "bench", "peers", "user_models.py")
        result = subprocess.run([args.python["tf"], script, "--export-keras", name,
                                 self.folder], capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit("exporting the Keras model %s with %s failed: %s" % (
                name, args.python["tf"], result.stderr.strip()[-500:]))
        with np.load(os.path.join(self.folder, "weights.npz")) as saved:
            weights = {key: saved[key] for key in saved.files}
        return weights, list(weights), os.path.join(self.folder, "model.pb")

    def random_batches(self, model, args):
        """Inputs uniform (floats in [0, 1), ids below the vocabulary),
        labels uniform below the classes."""
        rng = np.random.default_rng(args.seed)
        label_type = np.int64 if self.framework == "torch" else np.int32
        shape = tuple(model["shape"])
        batches = []
        for _ in range(args.batches):
            if model["dtype"] == "int64":
                x = rng.integers(0, model["vocabulary"], shape).astype(np.int64)
                labels = rng.integers(0, model["classes"], shape).astype(label_type)
            else:
                x = rng.random(shape, dtype=np.float32)
                labels = rng.integers(0, model["classes"], shape[:1]).astype(label_type)
            batches.append({model["input"]: x, "label": labels})
        return batches


def random_batches(graph, weights, count, seed):
    """`count` feed dicts of the graph's inputs: floats uniform in [0, 1)
    (0/1 for a sigmoid cross-entropy label), integers uniform below the
    rows of the table they index or the classes of the loss they label."""
    rng = np.random.default_rng(seed)
    bounds, binary = integer_bounds(graph, weights)
    batches = []
    for _ in range(count):
        feeds = {}
        for feed in graph.inputs:
            dtype = NUMPY_DTYPES[enum_name(feed, "dtype")]
            shape = tuple(feed.shape)
            if feed.name in binary:
                feeds[feed.name] = rng.integers(0, 2, shape).astype(dtype)
            elif np.issubdtype(dtype, np.integer):
                feeds[feed.name] = rng.integers(0, bounds[feed.name], shape).astype(dtype)
            else:
                feeds[feed.name] = rng.random(shape, dtype=np.float32)
        batches.append(feeds)
    return batches


def integer_bounds(graph, weights):
    """({integer input: exclusive bound}, {float inputs that are 0/1
    labels}), found by following each input through reshapes to the gather
    or loss reading it; class counts come from shapes traced in PyTorch."""
    shapes = traced_shapes(graph, weights)
    users = {}
    for node in graph.nodes:
        for i, name in enumerate(node.inputs):
            users.setdefault(name, []).append((node, i))
    bounds, binary = {}, set()
    for feed in graph.inputs:
        pending = [feed.name]
        while pending:
            for node, i in users.get(pending.pop(), []):
                if node.op in ("reshape", "transpose"):
                    pending.append(node.name)
                elif node.op == "gather" and i == 1:
                    rows = weights[node.inputs[0]].shape[0]
                    bounds[feed.name] = min(bounds.get(feed.name, rows), rows)
                elif node.op == "softmax_cross_entropy" and i == 1:
                    bounds[feed.name] = shapes[node.inputs[0]][-1]
                elif node.op == "sigmoid_cross_entropy" and i == 1:
                    binary.add(feed.name)
    return bounds, binary


def traced_shapes(graph, weights):
    """Every node's output shape, from one PyTorch forward on zero feeds."""
    model = ref.GraphModel(graph, weights, torch.float32, False)
    values = {feed.name: torch.from_numpy(np.zeros(
        tuple(feed.shape), NUMPY_DTYPES[enum_name(feed, "dtype")])) for feed in graph.inputs}
    values.update(model.params)
    with torch.no_grad():
        for node in graph.nodes:
            values[node.name] = model.evaluate(node, [values[i] for i in node.inputs])
    return {name: tuple(value.shape) for name, value in values.items()}
