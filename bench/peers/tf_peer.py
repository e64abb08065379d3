#!/usr/bin/env python3
"""The TensorFlow peer of bench/train_bench.py (bench/peers/PROTOCOL.md).

    PYTHON bench/peers/tf_peer.py --workload W --variant xla --threads N

TensorFlow is what most of Kiln's users come from, so the model is built as a
TensorFlow user builds a static-graph training step: a tf.Variable per graph
variable (Kiln's initial weights), the forward pass of the graph file written
in TensorFlow ops (the interpreter below walks the GraphDef only while
tf.function traces; graph-format.md's semantics, as scripts/train_reference.py's
GraphModel in PyTorch), and one tf.function per step: tf.GradientTape,
tf.clip_by_global_norm (Kiln's clipping: scale clip / max(norm, clip), a
table's IndexedSlices counted as its gathered rows, duplicates not merged, as
Kiln counts them), then the optimizer's update. The step's rate and Adam's
bias corrections 1 - beta^t (float64 on the host: Workload.learning_rate,
Workload.bias_corrections) come in as one float32 tensor argument, made with
the batches before `ready`, so nothing retraces. Traced (and compiled) by
its first call before `ready`; compile_seconds is that call.

Variants:
  xla    tf.function(jit_compile=True): the whole step is one XLA cluster.
  graph  tf.function without XLA: Grappler's rewrites, TensorFlow's graph
         executor and CPU kernels, and the fused training kernels where they compute
         Kiln's formula exactly: ResourceApplyGradientDescent,
         ResourceApplyMomentum, ResourceApplyAdagradV2 and, for row tables,
         ResourceSparseApplyMomentum and ResourceSparseApplyAdagradV2 (XLA
         compiles none of the sparse ones; under xla everything is written
         out and XLA fuses it).
Adam and AdamW are written out in both (Keras' Adam and TensorFlow's
ResourceApplyAdam add epsilon to the raw sqrt(v) and take 1 - beta^t in
float32; Kiln adds it to the bias-corrected sqrt(v / (1 - b2^t)), in Kiln's
float32 operation order, runtime/cpu/SparseApply.cpp's denseRow).

Tables in the workload's row_tables (Kiln updates only the rows a step looked
up) are updated by rows in both variants, as TensorFlow's sparse optimizers
and TF Addons' LazyAdam do: the gather's gradient is an IndexedSlices;
tf.unique of its ids and tf.math.unsorted_segment_sum of its rows (duplicate
ids summed in order of appearance, as Kiln's SparseApply) give one gradient
row per looked-up id, and the update gathers those rows of the table and its
slots and scatters the new ones back (XLA accepts tf.unique's bounded dynamic
shape). Lazy Adam is LazyAdam / SparseAdam / Kiln's: eps added to the raw
sqrt(v), the rate scaled by sqrt(1 - b2^t) / (1 - b1^t); lazy AdamW first
scales the looked-up rows by 1 - lr wd. Other tables get the IndexedSlices
made dense (every row updated, as Keras does).

Ops: those of GraphModel (and bench/peers/jax_peer.py), and abs, erf, pow,
mod, cast, broadcast, slice, reduce_sum/mean/max, gather on any axis and
gather_elements; conv, max_pool and avg_pool are refused (CannotRun). Nodes
the loss does not depend on are not built.

Threads: --threads N sets tf.config.threading's intra-op and inter-op pools
both to N threads before anything runs (TensorFlow's own default is both =
cores). The CPU performance guides (Intel's for TensorFlow) recommend intra-op
= physical cores and inter-op = sockets (1 here); measured on 2 cores with
N = 2, inter-op 1 made the graph variant slower (transformer about 43 against
35 ms a step, mlp 4.6 against 3.8 ms: the executor runs independent ops,
such as the updates of different variables, one at a time) and the xla
variant no faster (its step is one XLA launch). TF_PEER_INTER_OP=K overrides
the inter-op count (for such experiments).
TF_ENABLE_ONEDNN_OPTS is left at TensorFlow's default (on for x86 CPUs).

The user's own Keras models (a workload with a `source`, PROTOCOL.md): the
author's keras.Model itself (bench/peers/user_models.py), its variables set
to the weights Kiln's frozen GraphDef holds, the loss Keras'
SparseCategoricalCrossentropy(from_logits=True); the same variants, step
and optimizer (Keras' own Adam adds epsilon to the raw sqrt(v), not to Kiln's
bias-corrected one: another update, so it is not used).
"""

import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's info lines off

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (CannotRun, OptimizerSettings, Workload, attr,  # noqa: E402
                    parse_args, serve, timed)

VARIANTS = ["xla", "graph"]
OPS = {"constant", "matmul", "add", "sub", "mul", "div", "maximum", "minimum", "neg",
       "relu", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "pow",
       "mod", "gelu", "compare", "select", "cast", "reshape", "broadcast", "transpose",
       "concat", "slice", "reduce_sum", "reduce_mean", "reduce_max", "softmax",
       "log_softmax", "layer_norm", "gather", "gather_elements",
       "softmax_cross_entropy", "sigmoid_cross_entropy", "mean_squared_error"}
NUMPY_TYPES = {"DT_FLOAT32": np.float32, "DT_FLOAT16": np.float16, "DT_INT32": np.int32,
               "DT_INT64": np.int64, "DT_BOOL": np.bool_}


def data_type_name(message, field):
    """The DataType enum name of message.field (DT_FLOAT32, ...)."""
    value = getattr(message, field)
    return message.DESCRIPTOR.fields_by_name[field].enum_type.values_by_number[value].name


def tensor_array(tensor, node):
    """A TensorValue as numpy: float_values, int_values or raw_data, a
    single value broadcast to the shape (a splat)."""
    name = data_type_name(tensor, "dtype")
    if name not in NUMPY_TYPES:
        raise CannotRun("cannot express a %s constant (node '%s')" % (name, node.name))
    dtype, shape = NUMPY_TYPES[name], tuple(tensor.shape)
    if tensor.raw_data:
        raw = np.frombuffer(tensor.raw_data, np.uint8 if dtype == np.bool_ else dtype)
        return raw.astype(dtype).reshape(shape)
    values = np.array(list(tensor.float_values) if tensor.float_values
                      else list(tensor.int_values)).astype(dtype)
    if values.size == 1:
        return np.full(shape, values.reshape(-1)[0], dtype)
    return values.reshape(shape)


# --- The graph in TensorFlow ops ----------------------------------------------


class GraphFunction:
    """The graph's forward pass as TensorFlow ops, one or a few per node;
    runs while tf.function traces, never per step."""

    def __init__(self, tf, graph, loss):
        self.tf, self.graph = tf, graph
        self.nodes = {node.name: node for node in graph.nodes}
        self.order = self.ancestors(loss)
        for node in self.order:
            if node.op not in OPS:
                raise CannotRun("cannot express op '%s' (node '%s')" % (node.op, node.name))
        self.constants = {node.name: tensor_array(attr(node, "value"), node)
                          for node in self.order if node.op == "constant"}
        self.loss = loss

    def ancestors(self, name):
        """The nodes `name` is computed from (itself included), each after its
        inputs, in graph order among independent ones (graph-format.md)."""
        needed, pending = set(), [name]
        while pending:
            current = pending.pop()
            if current in self.nodes and current not in needed:
                needed.add(current)
                pending.extend(self.nodes[current].inputs)
        order, placed, remaining = [], set(), [n for n in self.graph.nodes if n.name in needed]
        while remaining:
            ready = [n for n in remaining
                     if all(i in placed or i not in needed for i in n.inputs)]
            if not ready:
                raise CannotRun("the graph has a cycle through node '%s'" % remaining[0].name)
            order.extend(ready)
            placed.update(n.name for n in ready)
            remaining = [n for n in remaining if n.name not in placed]
        return order

    def __call__(self, values):
        """The loss, from `values`: the feeds and the variables by name."""
        values = dict(values)
        for node in self.order:
            missing = [i for i in node.inputs if i not in values]
            if missing:
                raise CannotRun("node '%s' reads '%s', which is no node, input or variable"
                                % (node.name, missing[0]))
            values[node.name] = self.evaluate(node, [values[i] for i in node.inputs])
        return values[self.loss]

    def evaluate(self, node, args):
        tf, op = self.tf, node.op
        if op == "constant":
            return tf.constant(self.constants[node.name])
        if op == "matmul":
            return self.matmul(node, *args)
        if op in ("add", "sub", "mul", "maximum", "minimum"):
            return {"add": tf.add, "sub": tf.subtract, "mul": tf.multiply,
                    "maximum": tf.maximum, "minimum": tf.minimum}[op](*args)
        if op == "div":
            a, b = args
            if a.dtype.is_floating:
                return tf.math.divide(a, b)
            # Integers truncate; by 0 gives 0, by -1 the wrapping negation.
            special = tf.logical_or(tf.equal(b, 0), tf.equal(b, -1))
            quotient = tf.truncatediv(a, tf.where(special, tf.ones_like(b), b))
            return tf.where(tf.equal(b, 0), tf.zeros_like(quotient),
                            tf.where(tf.equal(b, -1), tf.negative(a), quotient))
        unary = {"neg": tf.negative, "relu": tf.nn.relu, "abs": tf.abs, "exp": tf.exp,
                 "log": tf.math.log, "sqrt": tf.sqrt, "rsqrt": tf.math.rsqrt,
                 "tanh": tf.tanh, "sigmoid": tf.sigmoid, "erf": tf.math.erf}
        if op in unary:
            return unary[op](args[0])
        if op == "pow":
            return tf.pow(*args)
        if op == "mod":
            return self.mod(node, *args)
        if op == "gelu":
            approximate = attr(node, "approximate", "none")
            if approximate not in ("none", "exact", "tanh"):
                raise CannotRun("gelu approximate '%s' (node '%s')" % (approximate, node.name))
            return tf.nn.gelu(args[0], approximate=approximate == "tanh")
        if op == "compare":
            predicate = {"eq": tf.equal, "ne": tf.not_equal, "lt": tf.less,
                         "le": tf.less_equal, "gt": tf.greater, "ge": tf.greater_equal}
            return predicate[attr(node, "predicate")](*args)
        if op == "select":
            return tf.where(*args)
        if op == "cast":
            name = data_type_name(node.attrs["dtype"], "type")
            if name not in NUMPY_TYPES:
                raise CannotRun("cannot express a cast to %s (node '%s')" % (name, node.name))
            return tf.cast(args[0], tf.as_dtype(NUMPY_TYPES[name]))
        if op == "reshape":
            return tf.reshape(args[0], attr(node, "shape"))
        if op == "broadcast":
            return tf.broadcast_to(args[0], attr(node, "shape"))
        if op == "transpose":
            rank = args[0].shape.rank
            return tf.transpose(args[0], attr(node, "perm", list(range(rank))[::-1]))
        if op == "concat":
            return tf.concat(args, axis=attr(node, "axis"))
        if op == "slice":
            return self.slice(node, args[0])
        if op in ("reduce_sum", "reduce_mean", "reduce_max"):
            function = {"reduce_sum": tf.reduce_sum, "reduce_mean": tf.reduce_mean,
                        "reduce_max": tf.reduce_max}[op]
            axes = attr(node, "axes", []) or None
            return function(args[0], axis=axes, keepdims=attr(node, "keep_dims", False))
        if op == "softmax":
            return tf.nn.softmax(args[0], axis=attr(node, "axis", -1))
        if op == "log_softmax":
            return tf.nn.log_softmax(args[0], axis=attr(node, "axis", -1))
        if op == "layer_norm":
            x = tf.convert_to_tensor(args[0])
            axes = list(range(attr(node, "axis", -1) % x.shape.rank, x.shape.rank))
            mean = tf.reduce_mean(x, axes, keepdims=True)
            variance = tf.reduce_mean(tf.square(x - mean), axes, keepdims=True)
            y = (x - mean) * tf.math.rsqrt(variance + attr(node, "epsilon", 1e-5))
            if len(args) > 1:
                y = y * args[1]
            if len(args) > 2:
                y = y + args[2]
            return y
        if op == "gather":
            # On a tf.Variable: ResourceGather, whose gradient is an IndexedSlices.
            return tf.gather(args[0], args[1], axis=attr(node, "axis", 0))
        if op == "gather_elements":
            return self.gather_elements(node, *args)
        if op == "softmax_cross_entropy":
            logits, labels = args
            return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits))
        if op == "sigmoid_cross_entropy":
            return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
                labels=args[1], logits=args[0]))
        if op == "mean_squared_error":
            return tf.reduce_mean(tf.square(args[0] - args[1]))
        raise CannotRun("cannot express op '%s' (node '%s')" % (op, node.name))

    def matmul(self, node, a, b):
        tf = self.tf
        transpose_a = attr(node, "transpose_a", False)
        transpose_b = attr(node, "transpose_b", False)
        if a.shape.rank > 2 and b.shape.rank == 2 and not transpose_a:
            # A matrix shared by every batch: one [rows, K] x [K, N] product,
            # as Keras' Dense does, rather than a broadcasting batch matmul.
            leading = a.shape[:-1]
            product = tf.matmul(tf.reshape(a, [-1, a.shape[-1]]), b, transpose_b=transpose_b)
            return tf.reshape(product, leading.concatenate(product.shape[-1:]))
        return tf.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)

    def mod(self, node, a, b):
        """Python's % (the sign of b), or C's fmod (the sign of a); an integer
        remainder by 0 is 0, a float one NaN (TensorFlow's float kernels)."""
        tf = self.tf
        function = tf.truncatemod if attr(node, "fmod", False) else tf.math.floormod
        if a.dtype.is_floating:
            return function(a, b)
        special = tf.logical_or(tf.equal(b, 0), tf.equal(b, -1))  # x % -1 is 0
        remainder = function(a, tf.where(special, tf.ones_like(b), b))
        return tf.where(special, tf.zeros_like(remainder), remainder)

    def slice(self, node, x):
        rank = x.shape.rank
        starts, limits = attr(node, "start"), attr(node, "limit")
        axes = attr(node, "axes", []) or list(range(rank))
        steps = attr(node, "step", []) or [1] * len(axes)
        index = [slice(None)] * rank
        for axis, start, limit, step in zip(axes, starts, limits, steps):
            index[axis % rank] = slice(start, limit, step)
        return x[tuple(index)]

    def gather_elements(self, node, x, indices):
        """torch.gather: x at each index along axis (negative from the end),
        through gather_nd with the other coordinates spelled out."""
        tf = self.tf
        x = tf.convert_to_tensor(x)
        rank, axis = x.shape.rank, attr(node, "axis", 0) % x.shape.rank
        indices = tf.cast(indices, tf.int64)
        indices = tf.where(indices < 0, indices + x.shape[axis], indices)
        grids = tf.meshgrid(*[tf.range(n, dtype=tf.int64) for n in indices.shape],
                            indexing="ij")
        coordinates = [indices if d == axis else grids[d] for d in range(rank)]
        return tf.gather_nd(x, tf.stack(coordinates, axis=-1))


# --- The optimizer --------------------------------------------------------------


class Optimizer(OptimizerSettings):
    """docs/training.md's updates in Kiln's float32 operations
    (runtime/cpu/SparseApply.cpp's updateRow / denseRow, the dense
    lowerings' order). The step's scalars are one float32 tensor:
    [lr, 1 - b1^t, 1 - b2^t, lazy Adam's step size lr sqrt(1 - b2^t) / (1 - b1^t)],
    from float64 on the host. `fused`: TensorFlow's training kernels where
    their formula is Kiln's."""

    def __init__(self, tf, spec, fused):
        super().__init__(spec)
        self.tf, self.fused = tf, fused

    def initial_slot(self, slot, value):
        if slot == "accumulator":
            return np.full_like(value, self.s["initial_accumulator"])
        return np.zeros_like(value)

    def constant(self, value):
        return self.tf.constant(value, self.tf.float32)

    def dense(self, var, slots, g, scalars):
        """Updates a variable and its slots with the dense gradient g."""
        tf, s, kind, lr = self.tf, self.s, self.kind, scalars[0]
        if kind == "sgd":
            if self.fused:
                tf.raw_ops.ResourceApplyGradientDescent(var=var.handle, alpha=lr, delta=g)
            else:
                var.assign(var - lr * g)
        elif kind == "momentum" and self.fused:
            tf.raw_ops.ResourceApplyMomentum(
                var=var.handle, accum=slots[0].handle, lr=lr, grad=g,
                momentum=self.constant(s["momentum"]), use_nesterov=bool(s["nesterov"]))
        elif kind == "adagrad" and self.fused:
            tf.raw_ops.ResourceApplyAdagradV2(
                var=var.handle, accum=slots[0].handle, lr=lr,
                epsilon=self.constant(self.eps), grad=g)
        else:
            p, new_slots = self.formula(tf.convert_to_tensor(var),
                                        [tf.convert_to_tensor(v) for v in slots],
                                        g, scalars, lazy=False)
            for slot, value in zip(slots, new_slots):
                slot.assign(value)
            var.assign(p)

    def rows(self, var, slots, g, scalars):
        """Updates the rows of a table (and of its slots) that the
        IndexedSlices g names: duplicate ids summed first."""
        tf, s, kind, lr = self.tf, self.s, self.kind, scalars[0]
        ids, position = tf.unique(g.indices)
        grad = tf.math.unsorted_segment_sum(g.values, position, tf.shape(ids)[0])
        if kind == "sgd":
            var.scatter_sub(tf.IndexedSlices(lr * grad, ids))
        elif kind == "momentum" and self.fused:
            tf.raw_ops.ResourceSparseApplyMomentum(
                var=var.handle, accum=slots[0].handle, lr=lr, grad=grad, indices=ids,
                momentum=self.constant(s["momentum"]), use_nesterov=bool(s["nesterov"]))
        elif kind == "adagrad" and self.fused:
            tf.raw_ops.ResourceSparseApplyAdagradV2(
                var=var.handle, accum=slots[0].handle, lr=lr,
                epsilon=self.constant(self.eps), grad=grad, indices=ids)
        else:
            p, new_slots = self.formula(tf.gather(var, ids),
                                        [tf.gather(v, ids) for v in slots],
                                        grad, scalars, lazy=True)
            for slot, value in zip(slots, new_slots):
                slot.scatter_update(tf.IndexedSlices(value, ids))
            var.scatter_update(tf.IndexedSlices(p, ids))

    def formula(self, p, slots, g, scalars, lazy):
        """(new p, [new slots]) in Kiln's float32 operations; `lazy`: rows
        of a table, Adam in SparseAdam's form."""
        tf, s, kind, lr = self.tf, self.s, self.kind, scalars[0]
        c = self.constant
        if kind == "sgd":
            return p - lr * g, []
        if kind == "momentum":
            v = c(s["momentum"]) * slots[0] + g
            step = g + c(s["momentum"]) * v if s["nesterov"] else v
            return p - lr * step, [v]
        if kind == "adagrad":
            acc = slots[0] + g * g
            return p - lr * g / (tf.sqrt(acc) + c(self.eps)), [acc]
        if kind == "adamw":
            p = p * (c(1.0) - lr * c(s["weight_decay"]))
        b1, b2 = s["beta1"], s["beta2"]
        m = c(b1) * slots[0] + c(1.0 - b1) * g
        v = c(b2) * slots[1] + c(1.0 - b2) * (g * g)
        if lazy:
            return p - scalars[3] * (m / (tf.sqrt(v) + c(self.eps))), [m, v]
        denominator = tf.sqrt(v / scalars[2]) + c(self.eps)
        return p - (lr * (m / scalars[1])) / denominator, [m, v]

    def describe(self):
        s = self.s
        words = {"sgd": "SGD", "adagrad": "Adagrad",
                 "momentum": "Nesterov momentum" if s["nesterov"] else "momentum",
                 "adam": "Adam", "adamw": "AdamW"}[self.kind]
        if self.kind in ("adam", "adamw"):
            return "hand-written %s (host float64 bias corrections as arguments)" % words
        if self.fused:
            kernel = {"sgd": "ResourceApplyGradientDescent", "momentum": "ResourceApplyMomentum",
                      "adagrad": "ResourceApplyAdagradV2"}[self.kind]
            return "%s update (fused %s)" % (words, kernel)
        return "hand-written %s update" % words


class KerasFunction:
    """The user's own Keras model (bench/peers/user_models.py) and its loss,
    keras.losses.SparseCategoricalCrossentropy(from_logits=True), as a
    function of the feeds; `variables` are the model's own tf.Variables by
    Keras path (the names of W/weights.npz)."""

    def __init__(self, tf, name):
        import keras
        import user_models
        self.model = user_models.keras_model(name)
        self.input = user_models.MODELS[name]["input"]
        self.loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        self.variables = {v.path: v.value for v in self.model.variables}
        self.versions = {"keras": keras.__version__}

    def __call__(self, values):
        return self.loss(values["label"], self.model(values[self.input], training=True))


# --- The peer -------------------------------------------------------------------


class TfPeer:
    framework = "tensorflow"

    def __init__(self, tf, workload, variant, thread_note):
        self.tf, self.workload, self.variant = tf, workload, variant
        self.versions = {"tensorflow": tf.__version__, "numpy": np.__version__}
        keras_model = workload.user_model("tf")
        if keras_model:
            self.function = KerasFunction(tf, keras_model)
            self.versions.update(self.function.versions)
        else:
            self.function = GraphFunction(tf, workload.graph, workload.loss_node)
        self.optimizer = Optimizer(tf, workload.optimizer, fused=variant == "graph")
        trainable = list(workload.spec["variables"])
        missing = [name for name in trainable if name not in workload.weights]
        if missing:
            raise CannotRun("no initial weights of %s" % ", ".join(missing))
        self.params = sum(int(workload.weights[k].size) for k in trainable)
        self.row_tables = sorted(workload.row_tables)
        for table in self.row_tables:
            if table not in trainable:
                raise CannotRun("row table '%s' is not a trainable variable" % table)

        # Variables and slots, and their initial values for every run's reset.
        self.initial = []  # (variable, initial value as a tensor)
        self.variables = {}
        for name, value in workload.weights.items():
            if keras_model:
                variable = self.function.variables[name]
            else:
                variable = tf.Variable(value, trainable=name in trainable)
            self.variables[name] = variable
            self.initial.append((variable, tf.constant(value)))
        self.trainable = [self.variables[name] for name in trainable]
        self.slots = []
        for name, variable in zip(trainable, self.trainable):
            slots = []
            for slot in self.optimizer.slots:
                value = self.optimizer.initial_slot(slot, workload.weights[name])
                slots.append(tf.Variable(value, trainable=False))
                self.initial.append((slots[-1], tf.constant(value)))
            self.slots.append(slots)
        self.lazy = [name in workload.row_tables for name in trainable]
        self.densified = []  # gather-only tables updated densely (found while tracing)

        # The batches and every step's scalars, as tensors, before the timing.
        self.feed_names = sorted(workload.batches[0])
        self.batches = [tuple(tf.constant(batch[name]) for name in self.feed_names)
                        for batch in workload.batches]
        self.scalars = [tf.constant(self.optimizer.scalars(workload, t))
                        for t in range(1, len(workload.spec["learning_rates"]) + 1)]
        signature = [tf.TensorSpec(tensor.shape, tensor.dtype) for tensor in self.batches[0]]
        signature.append(tf.TensorSpec([4], tf.float32))
        self.step = tf.function(self.train_step, input_signature=signature,
                                jit_compile=variant == "xla", autograph=False)

        start = time.perf_counter()
        try:
            float(self.step(*self.batches[0], self.scalars[0]).numpy())
        except CannotRun:
            raise
        except (tf.errors.InvalidArgumentError, tf.errors.UnimplementedError) as error:
            what = "XLA" if variant == "xla" else "TensorFlow"
            raise CannotRun("%s cannot compile the step: %s"
                            % (what, str(error).strip().splitlines()[0][:300]))
        self.compile_seconds = time.perf_counter() - start

        model = ("the user's own Keras model '%s' and SparseCategoricalCrossentropy"
                 % keras_model if keras_model else "the graph in TensorFlow ops")
        includes = ["one %s call per step with the batch's tensors and the step's "
                    "scalars: GradientTape forward and backward of %s" % (
                        "tf.function(jit_compile=True)" if variant == "xla"
                        else "tf.function (graph executor, no XLA)", model)]
        if self.optimizer.clip > 0:
            includes.append("tf.clip_by_global_norm")
        includes.append(self.optimizer.describe())
        if self.row_tables:
            sparse = ""
            if variant == "graph" and self.optimizer.kind in ("momentum", "adagrad"):
                sparse = ", ResourceSparseApply%s" % {"momentum": "Momentum",
                                                      "adagrad": "AdagradV2"}[
                                                          self.optimizer.kind]
            elif self.optimizer.kind in ("adam", "adamw"):
                sparse = "; lazy Adam = LazyAdam/SparseAdam"
            includes.append("tables %s by touched rows (IndexedSlices, tf.unique, "
                            "unsorted_segment_sum, gather/scatter%s)"
                            % (", ".join(self.row_tables), sparse))
        if self.densified:
            includes.append("tables %s: IndexedSlices made dense, every row updated"
                            % ", ".join(self.densified))
        includes.append("float(loss.numpy())")
        includes.append(thread_note)
        self.includes = "; ".join(includes)

    def train_step(self, *args):
        tf, optimizer = self.tf, self.optimizer
        feeds, scalars = args[:-1], args[-1]
        values = dict(zip(self.feed_names, feeds))
        values.update(self.variables)
        with tf.GradientTape() as tape:
            loss = self.function(values)
        grads = tape.gradient(loss, self.trainable)
        if optimizer.clip > 0:
            grads, _ = tf.clip_by_global_norm(grads, optimizer.clip)
        scalars = [scalars[i] for i in range(4)]
        for name, variable, slots, g, lazy in zip(self.workload.spec["variables"],
                                                  self.trainable, self.slots, grads,
                                                  self.lazy):
            if g is None:  # the loss does not depend on it
                continue
            if lazy:
                if not isinstance(g, tf.IndexedSlices):
                    raise CannotRun("row table '%s' has a dense gradient (read by more "
                                    "than gathers)" % name)
                optimizer.rows(variable, slots, g, scalars)
            else:
                if isinstance(g, tf.IndexedSlices):
                    self.densified.append(name)
                optimizer.dense(variable, slots, tf.convert_to_tensor(g), scalars)
        return loss

    def train(self, steps):
        if steps > len(self.scalars):
            raise ValueError("the workload has rates for %d steps, not %d"
                             % (len(self.scalars), steps))
        for variable, value in self.initial:
            variable.assign(value)
        seconds, losses = [], []
        count = len(self.batches)
        for t in range(1, steps + 1):
            batch, scalars = self.batches[(t - 1) % count], self.scalars[t - 1]
            elapsed, loss = timed(lambda: float(self.step(*batch, scalars).numpy()))
            seconds.append(elapsed)
            losses.append(loss)
        return seconds, losses


def build(args):
    import tensorflow as tf
    inter = int(os.environ.get("TF_PEER_INTER_OP", args.threads))
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(inter)
    note = "tf.config.threading intra-op %d, inter-op %d threads" % (args.threads, inter)
    workload = Workload(args.workload)
    return TfPeer(tf, workload, args.variant, note)


def main():
    args = parse_args(VARIANTS)
    return serve(lambda: build(args))


if __name__ == "__main__":
    sys.exit(main())
