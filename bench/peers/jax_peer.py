#!/usr/bin/env python3
"""The JAX peer of bench/train_bench.py (bench/peers/PROTOCOL.md).

    PYTHON bench/peers/jax_peer.py --workload W --variant jit-rows --threads N

The graph file is interpreted op by op in jax.numpy (graph-format.md's
semantics, as scripts/train_reference.py's GraphModel in PyTorch) inside one
jax.jit training step, traced once and compiled ahead of time
(`.lower().compile()`, compile_seconds) before `ready`: value_and_grad of the
loss, Kiln's global-norm clipping (every gradient times clip / max(norm,
clip)), the optimizer's update (docs/training.md's formulas, written out:
this venv has no optax), with parameters and optimizer slots donated so that
XLA updates them in place. The step's rate and Adam's bias corrections
1 - beta^t are arguments of the step, computed on the host in float64
(Workload.learning_rate, Workload.bias_corrections): computed inside the
jitted step from a float32 t they were 1-2e-5 off, and the losses drifted
(Kiln issue 12).

Variants:
  jit-rows   the tables of the workload's row_tables (those Kiln updates by
             touched rows) are updated by rows, as Kiln, PyTorch's sparse
             embeddings and TensorFlow's IndexedSlices do: the step takes the
             batch's unique ids of each table (jnp.unique with a static size,
             filled with an id past the table), differentiates with respect
             to the gathered rows instead of the table, sums the rows of
             duplicate ids (segment_sum), updates those rows of the table and
             of its slots and scatters them back (.at[].set; the fill rows
             are dropped). Lazy Adam is PyTorch's SparseAdam, as Kiln's: eps
             added to the raw sqrt(v), the rate scaled by
             sqrt(1 - b2^t) / (1 - b1^t); lazy AdamW first scales the rows by
             1 - lr wd; SGD, momentum and Adagrad rows take the dense formula.
  jit-dense  what jax.grad gives: a dense gradient for every table (zeros but
             at the looked-up rows) and a dense update of every element.
             Under SGD and Adagrad that is the same update as by rows; under
             Adam and momentum it is not Kiln's lazy one (untouched rows'
             slots decay and move them).
Without row tables the two are the same computation.

Clipping's norm counts a table's gradient as Kiln does (docs/training.md):
the gathered rows as they come, duplicate ids not merged. With clipping on,
the step therefore differentiates with respect to the gathered rows of every
table read only by gathers (in jit-dense too, whose table gradient is then
those rows scattered with .at[].add, the same operation jax.grad's transpose
of the gather is).

Threads: --threads 1 sets XLA_FLAGS="--xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1" before jax is imported, as JAX's issues
advise, and pins the process to one CPU, since jax 0.10's XLA ignores those
flags; more leaves XLA's default CPU thread pool (one thread per core: JAX
has no setting for N threads). Integer feeds are int32 unless
jax_enable_x64 is on (JAX's default; the tables fit).
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (CannotRun, OptimizerSettings, Workload, attr,  # noqa: E402
                    constant_array, parse_args, serve, timed)

VARIANTS = ["jit-rows", "jit-dense"]
SINGLE_THREAD_FLAGS = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
OPS = {"constant", "matmul", "add", "sub", "mul", "div", "maximum", "minimum", "neg",
       "relu", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "gelu", "compare",
       "select", "reshape", "transpose", "concat", "softmax", "log_softmax",
       "layer_norm", "gather", "softmax_cross_entropy", "sigmoid_cross_entropy",
       "mean_squared_error"}


def set_threads(threads):
    """The thread settings for --threads, made before jax is imported;
    what was set. For one thread, JAX's documented XLA_FLAGS, and the
    process pinned to one CPU: the XLA of jax 0.10 ignores those flags (a
    jitted matmul still kept two cores busy), while its CPU thread pool
    is sized by, and runs on, the CPUs the process may use."""
    if threads != 1:
        return "XLA's default CPU thread pool (one thread per core)"
    flags = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = (flags + " " + SINGLE_THREAD_FLAGS).strip()
    note = 'XLA_FLAGS="%s"' % SINGLE_THREAD_FLAGS
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        note += " and the process pinned to CPU %d (sched_setaffinity)" % cpu
    return note


# --- The graph in jax.numpy ---------------------------------------------------


class GraphFunction:
    """The graph's forward pass in jax.numpy, one op per node."""

    def __init__(self, graph, jax, jnp, int_dtype):
        for node in graph.nodes:
            if node.op not in OPS:
                raise CannotRun("cannot express op '%s' (node '%s')" % (node.op, node.name))
            if node.op == "gather" and attr(node, "axis", 0) != 0:
                raise CannotRun("cannot express gather on axis %d (node '%s')"
                                % (attr(node, "axis", 0), node.name))
        self.graph, self.jax, self.jnp, self.int_dtype = graph, jax, jnp, int_dtype
        self.nodes = {node.name: node for node in graph.nodes}
        self.constants = {}
        for node in graph.nodes:
            if node.op == "constant":
                value = constant_array(attr(node, "value"))
                if np.issubdtype(value.dtype, np.integer):
                    value = value.astype(int_dtype)
                self.constants[node.name] = value

    def ancestors(self, names):
        """The nodes that `names` are computed from (themselves included),
        in graph order, and the graph inputs or variables they read."""
        needed, leaves, pending = set(), set(), list(names)
        while pending:
            name = pending.pop()
            if name in needed or name in leaves:
                continue
            if name in self.nodes:
                needed.add(name)
                pending.extend(self.nodes[name].inputs)
            else:
                leaves.add(name)
        return [n for n in self.graph.nodes if n.name in needed], leaves

    def run(self, values, nodes, output=None):
        """Evaluates `nodes` (those not yet in values) into values; returns
        values[output] when asked."""
        for node in nodes:
            if node.name not in values:
                values[node.name] = self.evaluate(node, [values[i] for i in node.inputs])
        return values[output] if output else None

    def evaluate(self, node, args):
        jax, jnp = self.jax, self.jnp
        op = node.op
        if op == "constant":
            return jnp.asarray(self.constants[node.name])
        if op == "matmul":
            a, b = args
            if attr(node, "transpose_a", False):
                a = jnp.swapaxes(a, -1, -2)
            if attr(node, "transpose_b", False):
                b = jnp.swapaxes(b, -1, -2)
            return jnp.matmul(a, b)
        binary = {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply,
                  "div": jnp.divide, "maximum": jnp.maximum, "minimum": jnp.minimum}
        if op in binary:
            return binary[op](*args)
        unary = {"neg": jnp.negative, "relu": jax.nn.relu, "exp": jnp.exp,
                 "log": jnp.log, "sqrt": jnp.sqrt, "rsqrt": jax.lax.rsqrt,
                 "tanh": jnp.tanh, "sigmoid": jax.nn.sigmoid}
        if op in unary:
            return unary[op](*args)
        if op == "gelu":
            approximate = attr(node, "approximate", "none") == "tanh"
            return jax.nn.gelu(args[0], approximate=approximate)
        if op == "compare":
            predicate = {"eq": jnp.equal, "ne": jnp.not_equal, "lt": jnp.less,
                         "le": jnp.less_equal, "gt": jnp.greater, "ge": jnp.greater_equal}
            return predicate[attr(node, "predicate")](*args)
        if op == "select":
            return jnp.where(*args)
        if op == "reshape":
            return jnp.reshape(args[0], attr(node, "shape"))
        if op == "transpose":
            reversed_dims = list(range(args[0].ndim))[::-1]
            return jnp.transpose(args[0], attr(node, "perm", reversed_dims))
        if op == "concat":
            return jnp.concatenate(args, axis=attr(node, "axis"))
        if op == "softmax":
            return jax.nn.softmax(args[0], axis=attr(node, "axis", -1))
        if op == "log_softmax":
            return jax.nn.log_softmax(args[0], axis=attr(node, "axis", -1))
        if op == "layer_norm":
            x = args[0]
            axes = tuple(range(attr(node, "axis", -1) % x.ndim, x.ndim))
            mean = jnp.mean(x, axes, keepdims=True)
            variance = jnp.mean(jnp.square(x - mean), axes, keepdims=True)
            y = (x - mean) * jax.lax.rsqrt(variance + attr(node, "epsilon", 1e-5))
            if len(args) > 1:
                y = y * args[1]
            if len(args) > 2:
                y = y + args[2]
            return y
        if op == "gather":  # ids computed in the graph are clamped, as Kiln's lookup
            return jnp.take(args[0], args[1], axis=0, mode="clip")
        if op == "softmax_cross_entropy":
            logits, labels = args
            picked = jnp.take_along_axis(jax.nn.log_softmax(logits, axis=-1),
                                         labels[..., None].astype(jnp.int32), axis=-1)
            return -jnp.mean(picked)
        if op == "sigmoid_cross_entropy":
            x, z = args
            return jnp.mean(jnp.maximum(x, 0) - x * z + jnp.log1p(jnp.exp(-jnp.abs(x))))
        if op == "mean_squared_error":
            return jnp.mean(jnp.square(args[0] - args[1]))
        raise CannotRun("cannot express op '%s' (node '%s')" % (op, node.name))


def gather_only_tables(graph, variables):
    """{table: [its gather nodes]} of the variables read only by axis-0
    gathers (as the table): those Kiln gives sparse gradients."""
    readers = {}
    for node in graph.nodes:
        for i, name in enumerate(node.inputs):
            readers.setdefault(name, []).append((node, i))
    return {name: [node for node, _ in readers[name]] for name in variables
            if readers.get(name) and all(node.op == "gather" and i == 0
                                         for node, i in readers[name])}


# --- The optimizer --------------------------------------------------------------


class Optimizer(OptimizerSettings):
    """docs/training.md's updates in Kiln's float32 operations
    (runtime/cpu/SparseApply.cpp's updateRow / denseRow). The step's
    scalars come in as one float32 vector: [lr, 1 - b1^t, 1 - b2^t, lazy
    Adam's step size lr sqrt(1 - b2^t) / (1 - b1^t)], all from float64 on
    the host."""

    def __init__(self, spec):
        super().__init__(spec)

    def init(self, jnp, params):
        def initial(name, p):
            if name == "accumulator":
                return jnp.full_like(p, self.s["initial_accumulator"])
            return jnp.zeros_like(p)
        return {slot: {k: initial(slot, p) for k, p in params.items()} for slot in self.slots}

    def update(self, jnp, p, slots, g, scalars, lazy):
        """(new p, [new slots]) of one variable, or of rows of a table
        (`lazy`: Adam's SparseAdam form)."""
        s, lr = self.s, scalars[0]
        if self.kind == "sgd":
            return p - lr * g, []
        if self.kind == "momentum":
            v = s["momentum"] * slots[0] + g
            step = g + s["momentum"] * v if s["nesterov"] else v
            return p - lr * step, [v]
        if self.kind == "adagrad":
            acc = slots[0] + g * g
            return p - lr * g / (jnp.sqrt(acc) + self.eps), [acc]
        if self.kind == "adamw":
            p = p * (1.0 - lr * s["weight_decay"])
        b1, b2 = s["beta1"], s["beta2"]
        m = b1 * slots[0] + (1.0 - b1) * g
        v = b2 * slots[1] + (1.0 - b2) * (g * g)
        if lazy:
            return p - scalars[3] * (m / (jnp.sqrt(v) + self.eps)), [m, v]
        c1, c2 = scalars[1], scalars[2]
        return p - (lr * (m / c1)) / (jnp.sqrt(v / c2) + self.eps), [m, v]

    def describe(self):
        s = self.s
        words = {"sgd": "SGD", "adagrad": "Adagrad",
                 "momentum": "Nesterov momentum" if s["nesterov"] else "momentum",
                 "adam": "Adam", "adamw": "AdamW"}[self.kind]
        if self.kind in ("adam", "adamw"):
            words += " (host float64 bias corrections as arguments)"
        return words


# --- The peer -------------------------------------------------------------------


class JaxPeer:
    framework = "jax"

    def __init__(self, workload, variant, thread_note):
        workload.user_model("jax")  # graph files only: another's model is CannotRun
        import jax
        import jax.numpy as jnp
        import jaxlib
        self.jax, self.jnp, self.workload, self.variant = jax, jnp, workload, variant
        self.versions = {"jax": jax.__version__, "jaxlib": jaxlib.__version__}
        x64 = bool(jax.config.jax_enable_x64)
        int_dtype = np.int64 if x64 else np.int32
        graph = workload.graph
        self.function = GraphFunction(graph, jax, jnp, int_dtype)
        self.optimizer = Optimizer(workload.optimizer)
        trainable = list(workload.spec["variables"])
        missing = [name for name in trainable if name not in workload.weights]
        if missing:
            raise CannotRun("no initial weights of %s" % ", ".join(missing))
        self.trainable = trainable
        self.frozen = {k: jax.device_put(v) for k, v in workload.weights.items()
                       if k not in trainable}
        self.params = sum(int(workload.weights[k].size) for k in trainable)

        tables = gather_only_tables(graph, trainable)
        self.rows = {t: tables[t] for t in sorted(workload.row_tables)
                     if variant == "jit-rows" and t in tables}
        if variant == "jit-rows":
            for t in workload.row_tables:
                if t not in tables:
                    raise CannotRun("row table '%s' is not read only by gathers" % t)
        # Tables whose gathered rows are differentiated: the row tables, and
        # with clipping every gather-only table (Kiln's norm counts rows).
        self.lookup = dict(tables if self.optimizer.clip > 0 else self.rows)
        gathers = [node for nodes in self.lookup.values() for node in nodes]
        self.id_nodes, leaves = self.function.ancestors([n.inputs[1] for n in gathers])
        if leaves & set(workload.weights):
            raise CannotRun("gather ids computed from a variable")

        self.batches = [jax.device_put({k: v.astype(int_dtype)
                                        if np.issubdtype(v.dtype, np.integer) else v
                                        for k, v in batch.items()})
                        for batch in workload.batches]
        params, slots = self.fresh()
        start = time.perf_counter()
        self.step = jax.jit(self.train_step, donate_argnums=(0, 1)).lower(
            params, slots, self.frozen, self.batches[0],
            self.optimizer.scalars(workload, 1)).compile()
        self.compile_seconds = time.perf_counter() - start
        del params, slots

        includes = ["one jax.jit call (compiled ahead of time, parameters and slots "
                    "donated): value_and_grad of the graph in jax.numpy"]
        if self.optimizer.clip > 0:
            includes.append("global-norm clipping clip/max(norm, clip), hand-written"
                            + (" (table gradients counted as gathered rows)"
                               if self.lookup else ""))
        includes.append("hand-written %s update with the step's rate as an argument"
                        % self.optimizer.describe())
        if self.rows:
            includes.append("tables %s by touched rows (jnp.unique size=, gradients "
                            "w.r.t. gathered rows, segment_sum, .at[].set%s)"
                            % (", ".join(self.rows), "; lazy Adam = SparseAdam"
                               if self.optimizer.kind in ("adam", "adamw") else ""))
        elif tables:
            includes.append("dense table gradients and updates")
        includes.append("float(loss)")
        includes.append(thread_note)
        if not x64:
            includes.append("integer feeds as int32")
        self.includes = "; ".join(includes)

    def train_step(self, params, slots, frozen, feeds, scalars):
        jax, jnp, optimizer = self.jax, self.jnp, self.optimizer
        function, loss_name = self.function, self.workload.loss_node
        values = dict(feeds)
        values.update(frozen)
        function.run(values, self.id_nodes)  # the gathers' ids, from the feeds
        # The rows every lookup table's gathers read (differentiated instead
        # of the table when it is in self.lookup).
        lookups = {node.name: jnp.take(params[table], values[node.inputs[1]], axis=0,
                                       mode="clip")
                   for table, nodes in self.lookup.items() for node in nodes}
        dense = {k: p for k, p in params.items() if k not in self.lookup}

        def loss_function(dense, lookups):
            local = dict(values)
            local.update(dense)
            local.update(lookups)
            return function.run(local, function.graph.nodes, loss_name)

        loss, (grads, lookup_grads) = jax.value_and_grad(loss_function, argnums=(0, 1))(
            dense, lookups)
        if optimizer.clip > 0:
            squares = [jnp.sum(g * g) for g in grads.values()]
            squares += [jnp.sum(g * g) for g in lookup_grads.values()]
            norm = jnp.sqrt(sum(squares))
            scale = optimizer.clip / jnp.maximum(norm, optimizer.clip)
            grads = {k: g * scale for k, g in grads.items()}
            lookup_grads = {k: g * scale for k, g in lookup_grads.items()}

        new_params, new_slots = {}, {slot: {} for slot in optimizer.slots}
        for name, p in params.items():
            slot_values = [slots[slot][name] for slot in optimizer.slots]
            if name in self.lookup:
                nodes = self.lookup[name]
                ids = jnp.concatenate([values[n.inputs[1]].reshape(-1) for n in nodes])
                rows = jnp.concatenate([lookup_grads[n.name].reshape((-1,) + p.shape[1:])
                                        for n in nodes])
            if name in self.rows:
                count = ids.shape[0]
                unique, inverse = jnp.unique(ids, size=count, fill_value=p.shape[0],
                                             return_inverse=True)
                g = jax.ops.segment_sum(rows, inverse.reshape(-1), num_segments=count)

                def get(a):  # the fill ids' rows read as zeros
                    return a.at[unique].get(mode="fill", fill_value=0)

                def put(a, r):  # the fill ids' rows dropped
                    return a.at[unique].set(r, mode="drop")

                row, row_slots = optimizer.update(
                    jnp, get(p), [get(v) for v in slot_values], g, scalars, lazy=True)
                p, updated = put(p, row), [put(a, r) for a, r in zip(slot_values, row_slots)]
            else:
                g = (jnp.zeros_like(p).at[ids].add(rows, mode="drop")
                     if name in self.lookup else grads[name])
                p, updated = optimizer.update(jnp, p, slot_values, g, scalars, lazy=False)
            new_params[name] = p
            for slot, value in zip(optimizer.slots, updated):
                new_slots[slot][name] = value
        return new_params, new_slots, loss

    def fresh(self):
        """Parameters (copies of the initial weights) and zero slots."""
        jax = self.jax
        params = {k: jax.device_put(np.array(self.workload.weights[k], np.float32, copy=True))
                  for k in self.trainable}
        slots = self.optimizer.init(self.jnp, params)
        jax.block_until_ready((params, slots))
        return params, slots

    def train(self, steps):
        params, slots = self.fresh()
        scalars = [self.optimizer.scalars(self.workload, t) for t in range(1, steps + 1)]
        seconds, losses = [], []
        for t in range(1, steps + 1):
            feeds = self.batches[(t - 1) % len(self.batches)]

            def step():
                nonlocal params, slots
                params, slots, loss = self.step(params, slots, self.frozen, feeds,
                                                scalars[t - 1])
                return float(loss)

            elapsed, loss = timed(step)
            seconds.append(elapsed)
            losses.append(loss)
        return seconds, losses


def main():
    args = parse_args(VARIANTS)
    thread_note = set_threads(args.threads)
    return serve(lambda: JaxPeer(Workload(args.workload), args.variant, thread_note))


if __name__ == "__main__":
    sys.exit(main())
