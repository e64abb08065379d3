#!/usr/bin/env python3
"""Training step time of the examples: Kiln against PyTorch and JAX (XLA) on
the CPU, measured in the same run (docs/performance.md, "Training steps
against PyTorch and JAX").

A development script, not a test. It needs the built kilnc and kiln, protoc,
and a Python with torch, jax, numpy and protobuf (/work/venv/bin/python
on the development machine):

    python3 bench/train_bench.py                    # all three examples
    python3 bench/train_bench.py --model mlp --steps 20 --repeats 2 -v
    python3 bench/train_bench.py --json train_bench.json

Every framework trains the same graph file (examples/NAME.pbtxt): Kiln from
its artifact; PyTorch, eager and under torch.compile, through
scripts/train_reference.py's GraphModel; JAX through the small interpreter
below, one jitted step. All start from Kiln's initial weights and train on
the same batches (random, the right dtypes and id ranges, written once as an
.npz that `kiln run --data` reads), with the example's optimizer, schedule
and clipping, so their losses agree (each prints its first and last loss
and its parameter count).

A repeat runs each framework in turn (kiln, torch, torch.compile, jax, kiln,
...; --frameworks picks and orders them), each training --warmup + --steps
steps from the initial weights, so machine noise hits all alike. A
framework's step time in a repeat is the median of its steps after the
warm-up, its time in the table the median over the repeats, and the ratios
are Kiln's time over each other's and over the fastest other's. A step is
what a training loop does per batch: take the batch, forward, backward,
clipping, the optimizer update, and the loss back on the host.
  kiln   `kiln run --metrics-out`: the time between consecutive steps' ends
         (batch / examples_per_second), which includes the runtime's batch
         reader, binding the feeds and writing the metrics line.
  torch  zero_grad, forward, backward, clipping, optimizer.step(), .item().
         Tables read only by gathers get sparse gradients and lazy updates
         (SparseAdam under Adam), as in Kiln.
  torch.compile  the same, with the loss traced by make_fx into one aten
         graph and that compiled by Inductor (forward and backward); the
         optimizer stays eager. Tables get dense gradients (no sparse
         embedding gradients under torch.compile).
  jax    one jitted call (value_and_grad, clipping, the update; parameters
         and slots donated), then float(loss). Embedding tables get dense
         gradients and dense updates: what jax.grad gives a JAX user.
Compile times (kilnc, XLA's lower+compile, torch.compile's first step) are
reported on their own, never in the step time (torch.compile's may come
from Inductor's on-disk cache). PyTorch runs with --threads threads (2) and
OMP_WAIT_POLICY=passive, as kiln does (see below); XLA with its default pool.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

# kiln sets this for itself (docs/training.md): OpenMP threads that spin
# after each parallel region take the cores from everything else, and on a
# loaded machine PyTorch's steps then run many times slower. PyTorch gets the
# same policy unless the environment sets one (OMP_WAIT_POLICY=active spins,
# an empty value is libgomp's default); kiln always picks its own.
KILN_ENV = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import train_reference as ref  # noqa: E402  (GraphModel, optimizers, ...)

import torch  # noqa: E402

MODELS = ["mlp", "wide_deep", "transformer"]
FRAMEWORKS = ["kiln", "torch", "torch.compile", "jax"]
NUMPY_DTYPES = {"DT_FLOAT32": np.float32, "DT_INT32": np.int32, "DT_INT64": np.int64}
# First losses further apart than this (relative to PyTorch's) are flagged.
LOSS_RTOL = 1e-4


# --- The example: graph, optimizer, weights, data ----------------------------


class Example:
    """One graph file with everything the frameworks share: its optimizer
    as train_reference's dict, Kiln's initial weights and the batches."""

    def __init__(self, name, tools, tmp, batches, seed):
        self.name = name
        self.path = ref.example(name)
        self.graph = ref.read_graph(self.path)
        self.spec = optimizer_spec(self.graph.train.optimizer)
        self.batch = self.graph.train.batch_size or self.graph.inputs[0].shape[0]
        self.weights = ref.kiln_initial_weights(tools, self.graph, tmp)
        # The tables Kiln and eager PyTorch update lazily (sparse gradients).
        self.sparse = ref.GraphModel(self.graph, self.weights, torch.float32).sparse
        self.batches = random_batches(self.graph, self.weights, batches, seed)
        self.data = os.path.join(tmp, name + ".npz")
        np.savez(self.data, **{key: np.concatenate([b[key] for b in self.batches])
                               for key in self.batches[0]})


def enum_name(message, field):
    value = getattr(message, field)
    return message.DESCRIPTOR.fields_by_name[field].enum_type.values_by_number[value].name


def optimizer_spec(optimizer):
    """A graph's Optimizer message as train_reference's dict (kind,
    learning_rate, ...); unset fields take PyTorch's defaults there."""
    kind = enum_name(optimizer, "kind").lower()
    spec = {"kind": kind,
            "learning_rate": optimizer.learning_rate
            if optimizer.HasField("learning_rate")
            else (1e-3 if kind in ("adam", "adamw") else 1e-2)}
    for field in ("momentum", "beta1", "beta2", "epsilon", "weight_decay",
                  "initial_accumulator"):
        if optimizer.HasField(field):
            spec[field] = getattr(optimizer, field)
    if optimizer.nesterov:
        spec["nesterov"] = True
    if optimizer.clip_global_norm > 0:
        spec["clip_global_norm"] = optimizer.clip_global_norm
    schedule = optimizer.schedule
    if optimizer.HasField("schedule") and enum_name(schedule, "kind") != "CONSTANT":
        spec["schedule"] = {"kind": enum_name(schedule, "kind").lower(),
                            "warmup_steps": schedule.warmup_steps,
                            "decay_steps": schedule.decay_steps,
                            "min_lr": schedule.min_lr}
    return spec


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
    model = ref.GraphModel(graph, weights, torch.float32)
    values = {feed.name: torch.from_numpy(np.zeros(
        tuple(feed.shape), NUMPY_DTYPES[enum_name(feed, "dtype")])) for feed in graph.inputs}
    values.update(model.params)
    with torch.no_grad():
        for node in graph.nodes:
            values[node.name] = model.evaluate(node, [values[i] for i in node.inputs])
    return {name: tuple(value.shape) for name, value in values.items()}


class Result:
    """One framework on one example: its step times per repeat and what it
    reports once (parameters, first loss, compile seconds)."""

    def __init__(self):
        self.repeats = []  # [[seconds per step after the warm-up]]
        self.params = None
        self.first_loss = self.last_loss = None
        self.compile_s = None
        self.note = ""
        self.skipped = None  # the reason, when the framework did not run

    def median_ms(self):
        return 1e3 * statistics.median(statistics.median(r) for r in self.repeats)


# --- Kiln ---------------------------------------------------------------------


class KilnRunner:
    """kilnc once, then `kiln run` per repeat; step times from its metrics."""

    name = "kiln"

    def __init__(self, example, tools, tmp, result):
        self.example, self.tools = example, tools
        self.artifact = os.path.join(tmp, example.name + ".kiln")
        self.metrics = os.path.join(tmp, example.name + ".jsonl")
        start = time.perf_counter()
        run_tool([tools.kilnc, example.path, "-o", self.artifact])
        result.compile_s = time.perf_counter() - start
        inspect = json.loads(run_tool([tools.kiln, "inspect", self.artifact, "--json"]))
        result.params = sum(int(np.prod(v["shape"])) for v in inspect["variables"]
                            if v["trainable"])

    def run(self, steps):
        """(seconds per step, losses) of steps 1..steps."""
        if os.path.exists(self.metrics):
            os.remove(self.metrics)  # --metrics-out appends
        run_tool([self.tools.kiln, "run", self.artifact, "--data", self.example.data,
                  "--steps", str(steps), "--metrics-out", self.metrics])
        records = [json.loads(line) for line in open(self.metrics)]
        records = [r for r in records if "examples_per_second" in r]
        batch = self.example.batch
        return ([batch / r["examples_per_second"] for r in records
                 if r["examples_per_second"] > 0], [r["loss"] for r in records])


def run_tool(command, retries=30):
    """The stdout of kilnc or kiln; waits for a binary being relinked."""
    for _ in range(retries):
        if os.path.exists(command[0]):
            break
        time.sleep(2)
    result = subprocess.run(command, capture_output=True, text=True, env=KILN_ENV)
    if result.returncode != 0:
        sys.exit("%s failed:\n%s%s" % (" ".join(command), result.stdout, result.stderr))
    return result.stdout


# --- PyTorch ------------------------------------------------------------------


class CachedGraphModel(ref.GraphModel):
    """GraphModel with its constants built once, as a PyTorch module holds
    them in buffers (GraphModel rebuilds them from the proto every call)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.constants = {}

    def evaluate(self, node, args):
        if node.op != "constant":
            return super().evaluate(node, args)
        if node.name not in self.constants:
            self.constants[node.name] = super().evaluate(node, args)
        return self.constants[node.name]


class TorchRunner:
    """Eager PyTorch: train_reference's GraphModel and optimizers; with
    `compiled`, the loss function under torch.compile and every table
    dense (torch.compile does not trace sparse embedding gradients)."""

    def __init__(self, example, result, compiled=False):
        self.example, self.compiled = example, compiled
        self.name = "torch.compile" if compiled else "torch"
        self.batches = [{key: torch.from_numpy(value) for key, value in b.items()}
                        for b in example.batches]
        model = CachedGraphModel(example.graph, example.weights, torch.float32)
        result.params = sum(p.numel() for p in model.params.values())
        if compiled:
            self.loss_graph = compiled_loss_graph(model, self.batches[0])
            if example.sparse:
                result.note = "dense table gradients"
        elif example.sparse:
            result.note = "sparse tables: " + ", ".join(sorted(example.sparse))

    def model(self):
        """A fresh model at the initial weights."""
        model = CachedGraphModel(self.example.graph, self.example.weights, torch.float32)
        if self.compiled:
            model.sparse = set()
            params = list(model.params.values())
            model.loss = lambda feeds: self.loss_graph(params, feeds)
        return model

    def run(self, steps):
        model = self.model()
        spec = self.example.spec
        opts = ref.optimizers(spec, model.params, model.sparse)
        params = list(model.params.values())
        times, losses = [], []
        for t in range(1, steps + 1):
            feeds = self.batches[(t - 1) % len(self.batches)]
            start = time.perf_counter()
            for opt in opts:
                opt.zero_grad(set_to_none=True)
            loss = model.loss(feeds)
            loss.backward()
            if spec.get("clip_global_norm", 0) > 0:
                ref.clip_global_norm(params, spec["clip_global_norm"])
            lr = ref.learning_rate(spec, t)
            for opt in opts:
                for group in opt.param_groups:
                    group["lr"] = lr
                opt.step()
            losses.append(loss.item())
            times.append(time.perf_counter() - start)
        return times, losses


def compiled_loss_graph(model, feeds):
    """loss(params, feeds) of the model under torch.compile, its tables
    dense. Dynamo would break the graph at every node (the interpreter
    reads protobuf messages), so the loss is first traced into one FX graph
    of aten ops (make_fx runs the interpreter once) and that graph is
    compiled, lazily on its first call; AOTAutograd makes its backward."""
    from torch.fx.experimental.proxy_tensor import make_fx
    model.sparse = set()
    names, feed_names = list(model.params), list(feeds)

    def loss(*tensors):
        values = dict(zip(feed_names, tensors[len(names):]))
        values.update(zip(names, tensors[:len(names)]))
        for node in model.graph.nodes:
            values[node.name] = model.evaluate(node, [values[i] for i in node.inputs])
        return values[model.graph.train.loss]

    example = [p.detach() for p in model.params.values()] + [feeds[n] for n in feed_names]
    graph = torch.compile(make_fx(loss)(*example))
    return lambda params, batch: graph(*params, *[batch[n] for n in feed_names])


# --- JAX ----------------------------------------------------------------------


def jax_loss_function(graph, jnp, jax):
    """loss(params, feeds) of the graph in jax.numpy: GraphModel's ops with
    the same semantics (docs/graph-format.md)."""
    binary = {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply,
              "div": jnp.divide, "maximum": jnp.maximum, "minimum": jnp.minimum}
    unary = {"neg": jnp.negative, "relu": jax.nn.relu, "exp": jnp.exp,
             "log": jnp.log, "sqrt": jnp.sqrt, "rsqrt": jax.lax.rsqrt,
             "tanh": jnp.tanh, "sigmoid": jax.nn.sigmoid}
    predicates = {"eq": jnp.equal, "ne": jnp.not_equal, "lt": jnp.less,
                  "le": jnp.less_equal, "gt": jnp.greater, "ge": jnp.greater_equal}

    def evaluate(node, args):
        op = node.op
        if op == "constant":
            return jnp.asarray(ref.tensor_value(ref.attr(node, "value"), torch.float32).numpy())
        if op == "matmul":
            a, b = args
            if ref.attr(node, "transpose_a", False):
                a = jnp.swapaxes(a, -1, -2)
            if ref.attr(node, "transpose_b", False):
                b = jnp.swapaxes(b, -1, -2)
            return jnp.matmul(a, b)
        if op in binary:
            return binary[op](*args)
        if op in unary:
            return unary[op](*args)
        if op == "gelu":
            approximate = ref.attr(node, "approximate", "none") == "tanh"
            return jax.nn.gelu(args[0], approximate=approximate)
        if op == "compare":
            return predicates[ref.attr(node, "predicate")](*args)
        if op == "select":
            return jnp.where(*args)
        if op == "reshape":
            return jnp.reshape(args[0], ref.attr(node, "shape"))
        if op == "transpose":
            reversed_dims = list(range(args[0].ndim))[::-1]
            return jnp.transpose(args[0], ref.attr(node, "perm", reversed_dims))
        if op == "concat":
            return jnp.concatenate(args, axis=ref.attr(node, "axis"))
        if op == "softmax":
            return jax.nn.softmax(args[0], axis=ref.attr(node, "axis", -1))
        if op == "log_softmax":
            return jax.nn.log_softmax(args[0], axis=ref.attr(node, "axis", -1))
        if op == "layer_norm":
            x = args[0]
            axes = tuple(range(ref.attr(node, "axis", -1) % x.ndim, x.ndim))
            mean = jnp.mean(x, axes, keepdims=True)
            variance = jnp.mean(jnp.square(x - mean), axes, keepdims=True)
            y = (x - mean) * jax.lax.rsqrt(variance + ref.attr(node, "epsilon", 1e-5))
            if len(args) > 1:
                y = y * args[1]
            if len(args) > 2:
                y = y + args[2]
            return y
        if op == "gather":
            assert ref.attr(node, "axis", 0) == 0, node
            return jnp.take(args[0], args[1], axis=0)
        if op == "softmax_cross_entropy":
            logits, labels = args
            picked = jnp.take_along_axis(jax.nn.log_softmax(logits, axis=-1),
                                         labels[:, None].astype(jnp.int32), axis=-1)
            return -jnp.mean(picked)
        if op == "sigmoid_cross_entropy":
            x, z = args
            return jnp.mean(jnp.maximum(x, 0) - x * z + jnp.log1p(jnp.exp(-jnp.abs(x))))
        if op == "mean_squared_error":
            return jnp.mean(jnp.square(args[0] - args[1]))
        raise NotImplementedError("op '%s' (node '%s')" % (op, node.name))

    def loss(params, feeds):
        values = dict(feeds)
        values.update(params)
        for node in graph.nodes:
            values[node.name] = evaluate(node, [values[i] for i in node.inputs])
        return values[graph.train.loss]

    return loss


def jax_optimizer(spec, jnp):
    """(init(params) -> slots, update(params, grads, slots, lr, t)) with
    docs/training.md's formulas, applied densely to every parameter."""
    s = dict(ref.DEFAULTS, **spec)
    kind = s["kind"]
    eps = s.get("epsilon", ref.EPSILON.get(kind))
    b1, b2 = s["beta1"], s["beta2"]

    def init(params):
        zeros = {k: jnp.zeros_like(p) for k, p in params.items()}
        if kind in ("adam", "adamw"):
            return {"m": zeros, "v": {k: jnp.zeros_like(p) for k, p in params.items()}}
        if kind == "adagrad":
            return {"acc": {k: jnp.full_like(p, s["initial_accumulator"])
                            for k, p in params.items()}}
        if kind == "momentum":
            return {"velocity": zeros}
        return {}

    def update(params, grads, slots, lr, t):
        new_params, new_slots = {}, {key: {} for key in slots}
        for k, p in params.items():
            g = grads[k]
            if kind == "sgd":
                p = p - lr * g
            elif kind == "momentum":
                v = s["momentum"] * slots["velocity"][k] + g
                new_slots["velocity"][k] = v
                p = p - lr * (g + s["momentum"] * v if s.get("nesterov") else v)
            elif kind == "adagrad":
                acc = slots["acc"][k] + g * g
                new_slots["acc"][k] = acc
                p = p - lr * g / (jnp.sqrt(acc) + eps)
            else:  # adam, adamw
                if kind == "adamw":
                    p = p * (1 - lr * s["weight_decay"])
                m = b1 * slots["m"][k] + (1 - b1) * g
                v = b2 * slots["v"][k] + (1 - b2) * g * g
                new_slots["m"][k], new_slots["v"][k] = m, v
                m_hat = m / (1 - b1 ** t)
                v_hat = v / (1 - b2 ** t)
                p = p - lr * m_hat / (jnp.sqrt(v_hat) + eps)
            new_params[k] = p
        return new_params, new_slots

    return init, update


class JaxRunner:
    """One jax.jit step (forward, backward, clipping, update), compiled
    ahead of time; parameters and slots donated so XLA updates in place."""

    name = "jax"

    def __init__(self, example, result):
        import jax
        import jax.numpy as jnp
        self.jax, self.jnp, self.example = jax, jnp, example
        spec = example.spec
        loss_fn = jax_loss_function(example.graph, jnp, jax)
        self.init, update = jax_optimizer(spec, jnp)
        clip = spec.get("clip_global_norm", 0)

        def step(params, slots, feeds, lr, t):
            loss, grads = jax.value_and_grad(loss_fn)(params, feeds)
            if clip > 0:
                norm = jnp.sqrt(sum(jnp.sum(g * g) for g in grads.values()))
                scale = clip / jnp.maximum(norm, clip)
                grads = {k: g * scale for k, g in grads.items()}
            params, slots = update(params, grads, slots, lr, t)
            return params, slots, loss

        # int64 ids become int32 (JAX's default without x64; the tables fit).
        self.batches = [jax.device_put({k: v.astype(np.int32) if v.dtype == np.int64 else v
                                        for k, v in b.items()})
                        for b in example.batches]
        params, slots = self.fresh()
        result.params = sum(int(p.size) for p in params.values())
        start = time.perf_counter()
        self.step = jax.jit(step, donate_argnums=(0, 1)).lower(
            params, slots, self.batches[0], np.float32(0), np.float32(1)).compile()
        result.compile_s = time.perf_counter() - start
        if example.sparse:
            result.note = "dense table gradients"

    def fresh(self):
        params = {k: self.jax.device_put(v.copy()) for k, v in self.example.weights.items()
                  if v.dtype == np.float32}
        return params, self.init(params)

    def run(self, steps):
        params, slots = self.fresh()
        times, losses = [], []
        for t in range(1, steps + 1):
            feeds = self.batches[(t - 1) % len(self.batches)]
            start = time.perf_counter()
            lr = np.float32(ref.learning_rate(self.example.spec, t))
            params, slots, loss = self.step(params, slots, feeds, lr, np.float32(t))
            losses.append(float(loss))
            times.append(time.perf_counter() - start)
        return times, losses


# --- The benchmark ------------------------------------------------------------


def make_runners(example, tools, tmp, frameworks, results):
    runners = []
    for framework in frameworks:
        result = results[framework] = Result()
        try:
            if framework == "kiln":
                runners.append(KilnRunner(example, tools, tmp, result))
            elif framework == "torch":
                runners.append(TorchRunner(example, result))
            elif framework == "torch.compile":
                runners.append(TorchRunner(example, result, compiled=True))
            elif framework == "jax":
                runners.append(JaxRunner(example, result))
        except Exception as error:  # a framework that cannot run is reported
            result.skipped = "%s: %s" % (type(error).__name__, str(error).split("\n")[0])
            print("  %s skipped: %s" % (framework, result.skipped), flush=True)
    return runners


def bench_example(example, tools, tmp, args):
    results = {}
    runners = make_runners(example, tools, tmp, args.frameworks, results)
    steps = args.warmup + args.steps
    for repeat in range(args.repeats):
        for runner in runners:
            result = results[runner.name]
            if result.skipped:
                continue
            start = time.perf_counter()
            try:
                times, losses = runner.run(steps)
            except Exception as error:
                result.skipped = "%s: %s" % (type(error).__name__,
                                             str(error).split("\n")[0])
                print("  %s skipped: %s" % (runner.name, result.skipped), flush=True)
                continue
            if repeat == 0 and runner.name == "torch.compile":
                # The first step compiles (forward and backward graphs).
                result.compile_s = times[0]
            result.first_loss, result.last_loss = losses[0], losses[-1]
            result.repeats.append(times[args.warmup:])
            if args.verbose:
                print("  repeat %d %-13s %8.3f ms/step (%.1f s)" % (
                    repeat + 1, runner.name, 1e3 * statistics.median(times[args.warmup:]),
                    time.perf_counter() - start), flush=True)
    return results


def summary(example, results):
    """The example's JSON record: times, ratios, parameters, first losses."""
    ran = {name: r for name, r in results.items() if not r.skipped and r.repeats}
    record = {"model": example.name, "batch": example.batch,
              "optimizer": example.spec,
              "ms_per_step": {n: r.median_ms() for n, r in ran.items()},
              "ms_per_step_per_repeat": {n: [1e3 * statistics.median(x) for x in r.repeats]
                                         for n, r in ran.items()},
              "params": {n: r.params for n, r in results.items()},
              "first_loss": {n: r.first_loss for n, r in ran.items()},
              "last_loss": {n: r.last_loss for n, r in ran.items()},
              "compile_s": {n: r.compile_s for n, r in results.items()
                            if r.compile_s is not None},
              "notes": {n: r.note for n, r in results.items() if r.note},
              "skipped": {n: r.skipped for n, r in results.items() if r.skipped}}
    times = record["ms_per_step"]
    others = {n: t for n, t in times.items() if n != "kiln"}
    if "kiln" in times and others:
        fastest = min(others, key=others.get)
        record["fastest_other"] = fastest
        record["kiln_over_fastest"] = times["kiln"] / others[fastest]
        record["kiln_over"] = {n: times["kiln"] / t for n, t in others.items()}
    return record


def print_record(record, frameworks):
    print("%s: batch %d, %s" % (record["model"], record["batch"], record["optimizer"]["kind"]))
    for name in frameworks:
        if name in record["skipped"]:
            print("  %-13s skipped: %s" % (name, record["skipped"][name]))
            continue
        if name not in record["ms_per_step"]:
            continue
        line = "  %-13s %9.3f ms/step  params %-9s loss %.6f -> %.6f" % (
            name, record["ms_per_step"][name], record["params"][name],
            record["first_loss"][name], record["last_loss"][name])
        if name in record["compile_s"]:
            line += "  compile %.1f s" % record["compile_s"][name]
        if name in record["notes"]:
            line += "  (%s)" % record["notes"][name]
        print(line)
    if record["first_loss"]:
        first, last = (spread(record[key]) for key in ("first_loss", "last_loss"))
        params = {v for v in record["params"].values() if v is not None}
        print("  first losses within %.1e%s, last within %.1e; parameter counts %s" % (
            first, "" if first <= LOSS_RTOL else " -- DIFFER", last,
            "equal" if len(params) == 1 else "DIFFER"))


def spread(losses):
    """The largest relative difference between the frameworks' losses."""
    values = list(losses.values())
    return (max(values) - min(values)) / abs(min(values, key=abs))


def print_table(records, frameworks):
    others = [f for f in frameworks if f != "kiln"]
    header = "%-12s %5s" % ("model", "batch") + "".join(
        " %13s" % (f + " ms") for f in frameworks) + " %12s" % "kiln/fastest" + "".join(
        " %13s" % ("kiln/" + f) for f in others)
    print("\n" + header)
    for r in records:
        times = r["ms_per_step"]
        line = "%-12s %5d" % (r["model"], r["batch"])
        line += "".join(" %13s" % ("%.3f" % times[f] if f in times else "-")
                        for f in frameworks)
        line += " %12s" % ("%.2f" % r["kiln_over_fastest"] if "kiln_over_fastest" in r else "-")
        line += "".join(" %13s" % ("%.2f" % r["kiln_over"][f]
                                   if f in r.get("kiln_over", {}) else "-") for f in others)
        print(line)


def environment():
    import jax
    return {"cpus": os.cpu_count(), "machine": platform.processor() or platform.machine(),
            "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "omp_wait_policy": os.environ["OMP_WAIT_POLICY"],
            "jax": jax.__version__, "jax_devices": [str(d) for d in jax.devices()],
            "python": platform.python_version()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", choices=MODELS,
                        help="only this example (repeatable; default all)")
    parser.add_argument("--steps", type=int, default=50, help="timed steps per repeat")
    parser.add_argument("--warmup", type=int, default=10,
                        help="untimed steps at the start of each repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batches", type=int, default=16,
                        help="distinct random batches, cycled through")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2, help="PyTorch's threads")
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS),
                        help="comma-separated, in the order each repeat runs them, "
                        "from %s (torch.compile compiles with g++ on first use: "
                        "5-25 s per model)" % ",".join(FRAMEWORKS))
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                        help="directory of kilnc and kiln")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="print each repeat's time")
    args = parser.parse_args()
    args.frameworks = args.frameworks.split(",")
    unknown = set(args.frameworks) - set(FRAMEWORKS)
    if unknown:
        parser.error("unknown frameworks: " + ", ".join(sorted(unknown)))

    torch.set_num_threads(args.threads)
    torch.sparse.check_sparse_tensor_invariants.disable()
    tools = ref.Tools(args.bin)
    env = environment()
    print("%d CPUs (%s), torch %s with %d threads (OMP_WAIT_POLICY=%s), jax %s on %s; "
          "%d repeats of %d + %d steps" % (
              env["cpus"], env["machine"], env["torch"], env["torch_threads"],
              env["omp_wait_policy"], env["jax"], ", ".join(env["jax_devices"]),
              args.repeats, args.warmup, args.steps), flush=True)
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.model or MODELS:
            example = Example(name, tools, tmp, args.batches, args.seed)
            results = bench_example(example, tools, tmp, args)
            records.append(summary(example, results))
            print_record(records[-1], args.frameworks)
            sys.stdout.flush()
    print_table(records, args.frameworks)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": env, "settings": {
                "steps": args.steps, "warmup": args.warmup, "repeats": args.repeats,
                "batches": args.batches, "seed": args.seed}, "models": records}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
