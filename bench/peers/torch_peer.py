#!/usr/bin/env python3
"""The PyTorch peer of bench/train_bench.py (bench/peers/PROTOCOL.md): the
workload's graph file as an nn.Module, trained with torch.optim in PyTorch's
recommended configuration.

    PYTHON bench/peers/torch_peer.py --workload W --variant VARIANT --threads N

The model is built once, before anything is timed: the graph file's nodes,
evaluated once by the op table below, are traced by make_fx into one
aten-level torch.fx.GraphModule (generated Python code: no per-step
interpretation), held by an nn.Module whose nn.Parameters are the graph's
variables at Kiln's initial weights (W/weights.npz). A step is
zero_grad(set_to_none=True), forward, backward, clip_grad_norm_(foreach=True)
when the workload clips, the update at the step's rate, loss.item().

Variants:
  eager     the module run eagerly under autograd. torch.optim with
            fused=True (Adam, AdamW, SGD, Adagrad all have fused CPU
            kernels). The workload's row tables (Kiln updates only their
            looked-up rows) get sparse gradients (F.embedding(sparse=True))
            and an optimizer of their own, as PyTorch recommends for large
            embeddings: SparseAdam under Adam, Adagrad / SGD (foreach) with
            the sparse gradients; under momentum and AdamW, which have no
            lazy form in torch, they are dense.
  compile   torch.compile of the whole step function (zero_grad, forward,
            backward, clip_grad_norm_, optimizer.step), default mode;
            Dynamo splits it where PyTorch means it to (the backward call,
            the optimizer step in a graph of its own). The optimizers are
            fused=True with a tensor rate (set in place each step: nothing
            recompiles); Dynamo calls the fused kernel as it is. Tables are
            dense (no sparse gradients under torch.compile). Compiled before
            `ready`, with a warm-up from the reset state: compile_seconds.
  compile-max-autotune  the same with mode="max-autotune".
  compile-foreach  compile with the optimizer traced and compiled by
            Inductor (foreach implementation, Adam's capturable): PyTorch's
            "compiled optimizer". On the CPU its kernels are slower than
            the fused ones for Adam (they recompute 1 - beta^t per vector),
            so it is a variant of its own rather than compile's optimizer.

The user's own models (a workload with a `source`, PROTOCOL.md): the
author's nn.Module itself (bench/peers/user_models.py) at the weights it was
exported with, the loss F.cross_entropy over every position; the same
variants, optimizers and step.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CannotRun, Workload, attr, constant_array, parse_args, serve, timed  # noqa: E402

VARIANTS = ["eager", "compile", "compile-max-autotune", "compile-foreach"]


# --- The graph as PyTorch ops (docs/graph-format.md's semantics) -------------


def make_op_table(torch, F):
    """evaluate(node, args, sparse_tables) -> the node's value in torch."""
    binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
              "maximum": torch.maximum, "minimum": torch.minimum}
    unary = {"neg": torch.neg, "relu": torch.relu, "abs": torch.abs, "exp": torch.exp,
             "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
             "tanh": torch.tanh, "sigmoid": torch.sigmoid, "erf": torch.erf}
    predicates = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le,
                  "gt": torch.gt, "ge": torch.ge}
    dtypes = {"DT_FLOAT32": torch.float32, "DT_FLOAT16": torch.float16,
              "DT_BFLOAT16": torch.bfloat16, "DT_INT32": torch.int32,
              "DT_INT64": torch.int64, "DT_BOOL": torch.bool}

    def cannot(node, why=""):
        return CannotRun("cannot express op '%s' (node '%s')%s" % (
            node.op, node.name, ": " + why if why else ""))

    def spatial_padding(node, dims):
        low = attr(node, "pad_low", [0] * dims)
        high = attr(node, "pad_high", [0] * dims)
        return list(low), list(high)

    def evaluate(node, args, sparse_tables):
        op = node.op
        if op == "matmul":
            a, b = args
            if attr(node, "transpose_a", False):
                a = a.transpose(-1, -2)
            if attr(node, "transpose_b", False):
                b = b.transpose(-1, -2)
            return torch.matmul(a, b)
        if op in binary:
            return binary[op](*args)
        if op == "div":
            a, b = args
            if a.is_floating_point():
                return torch.div(a, b)
            zero = b == 0  # integers: truncating, by 0 gives 0
            return torch.where(zero, torch.zeros_like(a),
                               torch.div(a, torch.where(zero, torch.ones_like(b), b),
                                         rounding_mode="trunc"))
        if op in unary:
            return unary[op](*args)
        if op == "pow":
            return torch.pow(*args)
        if op == "mod":
            a, b = args
            function = torch.fmod if attr(node, "fmod", False) else torch.remainder
            if a.is_floating_point():
                return function(a, b)
            zero = b == 0  # an integer remainder by 0 is 0
            return torch.where(zero, torch.zeros_like(a),
                               function(a, torch.where(zero, torch.ones_like(b), b)))
        if op == "gelu":
            approximate = attr(node, "approximate", "none")
            return F.gelu(args[0], approximate="none" if approximate == "exact" else approximate)
        if op == "compare":
            return predicates[attr(node, "predicate")](*args)
        if op == "select":
            return torch.where(*args)
        if op == "cast":
            value = node.attrs["dtype"]
            name = value.DESCRIPTOR.fields_by_name["type"].enum_type.values_by_number[
                value.type].name
            if name not in dtypes:
                raise cannot(node, "dtype " + name)
            return args[0].to(dtypes[name])
        if op == "reshape":
            return args[0].reshape(attr(node, "shape"))
        if op == "broadcast":
            return args[0].broadcast_to(attr(node, "shape"))
        if op == "transpose":
            return args[0].permute(attr(node, "perm", list(range(args[0].dim()))[::-1]))
        if op == "concat":
            return torch.cat(args, dim=attr(node, "axis"))
        if op == "slice":
            x = args[0]
            start, limit = attr(node, "start"), attr(node, "limit")
            axes = attr(node, "axes", list(range(len(start))))
            steps = attr(node, "step", [1] * len(start))
            index = [slice(None)] * x.dim()
            for axis, a, b, s in zip(axes, start, limit, steps):
                if s <= 0:
                    raise cannot(node, "step %d" % s)
                index[axis] = slice(a, b, s)
            return x[tuple(index)]
        if op in ("reduce_sum", "reduce_mean", "reduce_max"):
            x = args[0]
            axes = attr(node, "axes", list(range(x.dim())))
            keep = attr(node, "keep_dims", False)
            if op == "reduce_max":
                return torch.amax(x, dim=axes, keepdim=keep)
            function = torch.sum if op == "reduce_sum" else torch.mean
            return function(x, dim=axes, keepdim=keep)
        if op in ("softmax", "log_softmax"):
            function = torch.softmax if op == "softmax" else torch.log_softmax
            return function(args[0], dim=attr(node, "axis", -1))
        if op == "layer_norm":
            x = args[0]
            axis = attr(node, "axis", -1) % x.dim()
            return F.layer_norm(x, x.shape[axis:], *args[1:], eps=attr(node, "epsilon", 1e-5))
        if op == "gather":
            table, ids = args
            axis = attr(node, "axis", 0) % table.dim()
            if axis == 0:
                # An embedding lookup: nn.Embedding's function, with a sparse
                # gradient for the tables updated by rows.
                return F.embedding(ids, table, sparse=node.inputs[0] in sparse_tables)
            rows = torch.index_select(table, axis, ids.reshape(-1))
            return rows.reshape(table.shape[:axis] + ids.shape + table.shape[axis + 1:])
        if op == "gather_elements":
            x, ids = args
            axis = attr(node, "axis", 0) % x.dim()
            ids = torch.where(ids < 0, ids + x.shape[axis], ids)
            return torch.gather(x, axis, ids.long())
        if op == "conv":
            x, w = args
            dims = x.dim() - 2
            low, high = spatial_padding(node, dims)
            strides = attr(node, "strides", [1] * dims)
            dilations = attr(node, "dilations", [1] * dims)
            conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}.get(dims)
            if conv is None:
                raise cannot(node, "%d spatial dims" % dims)
            if low != high:
                pad = []
                for lo, hi in reversed(list(zip(low, high))):
                    pad += [lo, hi]
                x, low = F.pad(x, pad), [0] * dims
            return conv(x, w, None, strides, low, dilations, attr(node, "groups", 1))
        if op in ("max_pool", "avg_pool"):
            x = args[0]
            dims = x.dim() - 2
            low, high = spatial_padding(node, dims)
            if low != high or dims not in (1, 2, 3):
                raise cannot(node, "asymmetric padding")
            kernel = attr(node, "kernel")
            strides = attr(node, "strides", [1] * dims)
            ceil = attr(node, "ceil_mode", False)
            if op == "max_pool":
                pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[dims]
                return pool(x, kernel, strides, low, attr(node, "dilations", [1] * dims), ceil)
            pool = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[dims]
            return pool(x, kernel, strides, low, ceil, not attr(node, "exclude_pad", False))
        if op == "softmax_cross_entropy":
            logits, labels = args
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1).long())
        if op == "sigmoid_cross_entropy":
            return F.binary_cross_entropy_with_logits(*args)
        if op == "mean_squared_error":
            return F.mse_loss(*args)
        raise cannot(node)

    return evaluate


def loss_function(torch, F, graph, variables, feeds, sparse_tables):
    """loss(*variables, *feeds) interpreting the graph: run once, by make_fx,
    to trace it (an op it cannot express raises CannotRun there). Constants
    are made here, once; make_fx keeps them in the traced module."""
    evaluate = make_op_table(torch, F)
    constants = {node.name: torch.from_numpy(constant_array(attr(node, "value")))
                 for node in graph.nodes if node.op == "constant"}
    loss_name = graph.train.loss

    def loss(*tensors):
        values = dict(zip(variables, tensors[:len(variables)]))
        values.update(zip(feeds, tensors[len(variables):]))
        values.update(constants)
        for node in graph.nodes:
            if node.op != "constant":
                values[node.name] = evaluate(node, [values[i] for i in node.inputs],
                                             sparse_tables)
        return values[loss_name]

    return loss


def build_module(torch, workload, sparse_tables):
    """The graph as an nn.Module: an aten fx.GraphModule traced by make_fx
    (its code is the whole forward, no per-step interpretation), its
    parameters the graph's trainable variables at Kiln's initial weights,
    its other variables buffers. forward(*feeds) -> loss. Returns the
    module, the trainable variables' names and the feeds' names."""
    import torch.nn.functional as F
    from torch.fx.experimental.proxy_tensor import make_fx
    graph = workload.graph
    variables = [v.name for v in graph.variables]
    feeds = [i.name for i in graph.inputs]
    loss = loss_function(torch, F, graph, variables, feeds, sparse_tables)
    weights = [torch.from_numpy(workload.weights[name].copy()) for name in variables]
    traced = make_fx(loss)(*weights, *[torch.from_numpy(workload.batch(1)[name])
                                       for name in feeds])
    trainable = [not v.HasField("trainable") or v.trainable for v in graph.variables]

    class GraphFileModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.graph_module = traced
            self.params = torch.nn.ParameterList(
                torch.nn.Parameter(w.clone()) for w, t in zip(weights, trainable) if t)
            self.frozen = [w.clone() for w, t in zip(weights, trainable) if not t]
            for i, w in enumerate(self.frozen):
                self.register_buffer("frozen%d" % i, w)
            self.trainable = trainable

        def forward(self, *feed_values):
            params, frozen = iter(self.params), iter(self.frozen)
            tensors = [next(params) if t else next(frozen) for t in self.trainable]
            return self.graph_module(*tensors, *feed_values)

    names = [name for name, t in zip(variables, trainable) if t]
    return GraphFileModel(), names, feeds


def build_user_module(torch, workload, name):
    """The user's own nn.Module (bench/peers/user_models.py) at the
    workload's initial weights (its state_dict, as exported for Kiln), with
    the loss: forward(x, label) -> mean cross-entropy. Returns the module,
    its trainable parameters' names and the feeds' names."""
    import user_models
    model = user_models.torch_module(name)
    model.load_state_dict({key: torch.from_numpy(value.copy())
                           for key, value in workload.weights.items()})

    class WithLoss(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, x, labels):
            return user_models.torch_loss(torch, self.model(x), labels)

    names = [key for key, _ in model.named_parameters()]
    return WithLoss(), names, [user_models.MODELS[name]["input"], "label"]


# --- The peer ----------------------------------------------------------------


class TorchPeer:
    framework = "torch"

    def __init__(self, workload, variant, threads):
        import torch
        self.torch, self.workload, self.variant = torch, workload, variant
        torch.set_num_threads(threads)
        torch.sparse.check_sparse_tensor_invariants.disable()
        self.versions = {"torch": torch.__version__}
        self.user_model = workload.user_model("torch")
        self.check_supported()
        opt = workload.optimizer
        self.kind = opt["kind"]
        self.clip = float(opt.get("clip_global_norm") or 0.0)
        self.compiled = variant != "eager"
        # The compiled optimizer (Inductor's kernels from the foreach
        # implementation) only in compile-foreach; elsewhere the fused one.
        self.foreach = variant == "compile-foreach"
        # Row tables (Kiln updates only their looked-up rows): in eager,
        # sparse gradients under the optimizers torch applies to them
        # (SGD, Adagrad, SparseAdam for Adam); dense otherwise.
        tables = set(workload.row_tables)
        self.sparse = tables if not self.compiled and self.kind in ("sgd", "adagrad", "adam") \
            else set()
        self.dense_tables = tables - self.sparse
        if self.user_model:
            self.module, self.names, self.feeds = build_user_module(torch, workload,
                                                                    self.user_model)
            self.params_list = list(self.module.parameters())
        else:
            self.module, self.names, self.feeds = build_module(torch, workload, self.sparse)
            self.params_list = list(self.module.params)
        self.params = sum(p.numel() for p in self.params_list)  # the protocol's count
        self.initial = [p.detach().clone() for p in self.params_list]
        # The batches in torch's memory once, in the feeds' order.
        self.batches = [tuple(torch.from_numpy(batch[name]) for name in self.feeds)
                        for batch in workload.batches]
        self.includes = self.describe()
        self.compile_seconds = 0.0
        if not self.compiled:
            self.optimizers = self.make_optimizers()
            return
        # The rate as a tensor: changed in place each step, nothing recompiles.
        self.lr = torch.tensor(workload.learning_rate(1), dtype=torch.float32)
        self.optimizers = self.make_optimizers()
        self.step = torch.compile(self.compiled_step, mode=(
            "max-autotune" if variant == "compile-max-autotune" else None))
        start = time.perf_counter()
        self.train(3)  # compiles (the optimizer's state is made on the way)
        self.train(2)  # from the reset state: nothing more to compile
        self.compile_seconds = time.perf_counter() - start
        self.frames = self.compiled_frames()

    def check_supported(self):
        kind = self.workload.optimizer["kind"]
        if kind not in ("sgd", "momentum", "adam", "adamw", "adagrad"):
            raise CannotRun("optimizer '%s'" % kind)
        if self.user_model:
            return
        train = self.workload.graph.train
        if train.accumulate_steps > 1:
            raise CannotRun("gradient accumulation (accumulate_steps %d)" %
                            train.accumulate_steps)
        if train.precision != 0:  # FP32
            raise CannotRun("mixed-precision training")
        for v in self.workload.graph.variables:
            if v.dtype != 1 and (not v.HasField("trainable") or v.trainable):  # DT_FLOAT32
                raise CannotRun("trainable variable '%s' is not float32" % v.name)

    # The optimizers ------------------------------------------------------

    def make_optimizers(self):
        """torch.optim optimizers computing Kiln's update: fused=True (every
        one of them has a fused CPU kernel; under torch.compile, Dynamo
        calls that kernel as it is), or in compile-foreach, foreach (the
        implementation the compiled optimizer traces; Adam's needs
        capturable=True for a tensor rate). The row tables' own optimizer
        takes sparse gradients, which fused kernels do not."""
        torch, opt = self.torch, self.workload.optimizer
        lr = self.lr if self.compiled else self.workload.learning_rate(1)
        named = list(zip(self.names, self.params_list))
        dense = [p for name, p in named if name not in self.sparse]
        tables = [p for name, p in named if name in self.sparse]
        impl = {"foreach": True} if self.foreach else {"fused": True}
        adam_impl = dict(impl, capturable=True) if self.foreach else impl
        betas, eps = (opt["beta1"], opt["beta2"]), opt["epsilon"]
        result = []
        if self.kind == "sgd":
            result.append(torch.optim.SGD(dense, lr=lr, **impl))
            if tables:
                result.append(torch.optim.SGD(tables, lr=lr, foreach=True))
        elif self.kind == "momentum":
            result.append(torch.optim.SGD(dense, lr=lr, momentum=opt["momentum"],
                                          nesterov=bool(opt["nesterov"]), **impl))
        elif self.kind == "adagrad":
            accumulator = opt["initial_accumulator"]
            result.append(torch.optim.Adagrad(dense, lr=lr, eps=eps,
                                              initial_accumulator_value=accumulator, **impl))
            if tables:
                result.append(torch.optim.Adagrad(tables, lr=lr, eps=eps, foreach=True,
                                                  initial_accumulator_value=accumulator))
        elif self.kind == "adam":
            result.append(torch.optim.Adam(dense, lr=lr, betas=betas, eps=eps, **adam_impl))
            if tables:
                result.append(torch.optim.SparseAdam(tables, lr=lr, betas=betas, eps=eps))
        else:  # adamw
            result.append(torch.optim.AdamW(dense, lr=lr, betas=betas, eps=eps,
                                            weight_decay=opt["weight_decay"], **adam_impl))
        result = [o for o in result if o.param_groups[0]["params"]]
        if self.foreach:
            for o in result:
                self.foreach_state(o)
        return result

    def foreach_state(self, optimizer):
        """compile-foreach's optimizer state, made before compiling as its
        first step would, except that Adam's step counter is float64: the
        capturable foreach Adam computes 1 - beta^t from it, and with
        torch's float32 counter beta2 = 0.999 is rounded first, 1.3e-5 off
        in 1 - beta2, which moves mlp's curve 1e-2 from Kiln's (and from
        eager PyTorch's, f64 there) by step 60. A momentum buffer of zeros
        is the same as torch's first-step copy of the gradient."""
        torch = self.torch
        for group in optimizer.param_groups:
            for p in group["params"]:
                state = optimizer.state[p]
                if isinstance(optimizer, torch.optim.Adam):  # AdamW too
                    state["step"] = torch.zeros((), dtype=torch.float64)
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                elif isinstance(optimizer, torch.optim.SGD) and group["momentum"]:
                    state["momentum_buffer"] = torch.zeros_like(p)

    def reset(self):
        """Parameters and optimizer state back to the start, in place for
        the compiled step (specialized to its tensors); eager makes new
        optimizers."""
        torch = self.torch
        with torch.no_grad():
            for p, value in zip(self.params_list, self.initial):
                p.copy_(value)
                p.grad = None
        if not self.compiled:
            self.optimizers = self.make_optimizers()
            return
        accumulator = self.workload.optimizer["initial_accumulator"]
        for opt in self.optimizers:
            for state in opt.state.values():
                for key, value in state.items():
                    # Adagrad's sum starts at the initial accumulator; the
                    # step counters, moments and momentum buffers at 0 (a
                    # zero buffer's first update is torch's copy of g).
                    value.fill_(accumulator if key == "sum" else 0)

    # The step ------------------------------------------------------------

    def compiled_step(self, feeds):
        """zero_grad, forward, backward, clipping, update under one
        torch.compile. Dynamo splits it where PyTorch means it to: the
        forward with AOTAutograd's compiled backward, the backward call, and
        the optimizer step (an inference graph of its own, optimizer.py's
        _use_grad). zero_grad(set_to_none=True) is written as the loop it
        is, since Dynamo does not trace Optimizer.zero_grad (one more graph
        break); no loop around the graph breaks, which would make Dynamo
        skip the frame. The compiled variants have one optimizer."""
        optimizer, = self.optimizers
        for p in self.params_list:
            p.grad = None
        loss = self.module(*feeds)
        loss.backward()
        if self.clip > 0:
            self.torch.nn.utils.clip_grad_norm_(self.params_list, self.clip, foreach=True)
        optimizer.step()
        return loss

    def eager_step(self, feeds, lr):
        for opt in self.optimizers:
            opt.zero_grad(set_to_none=True)
        loss = self.module(*feeds)
        loss.backward()
        if self.clip > 0:
            self.torch.nn.utils.clip_grad_norm_(self.params_list, self.clip, foreach=True)
        for opt in self.optimizers:
            for group in opt.param_groups:
                group["lr"] = lr
            opt.step()
        return loss

    def train(self, steps):
        """(seconds, losses) of steps 1..steps from the initial weights."""
        self.reset()
        seconds, losses = [], []
        for t in range(1, steps + 1):
            feeds = self.batches[(t - 1) % len(self.batches)]
            lr = self.workload.learning_rate(t)
            if self.compiled:
                def step():
                    self.lr.fill_(lr)
                    return self.step(feeds).item()
            else:
                def step():
                    return self.eager_step(feeds, lr).item()
            elapsed, loss = timed(step)
            seconds.append(elapsed)
            losses.append(loss)
        if self.compiled and hasattr(self, "frames") and self.compiled_frames() != self.frames:
            print("torch_peer: Dynamo compiled again during a timed run (%d -> %d frames)" % (
                self.frames, self.compiled_frames()), file=sys.stderr)
            self.frames = self.compiled_frames()
        return seconds, losses

    def compiled_frames(self):
        from torch._dynamo.utils import counters
        return sum(counters["frames"].values())

    def describe(self):
        """The `includes` text: what a step does, and where it differs from
        Kiln's."""
        opt = self.workload.optimizer
        update = {"sgd": "SGD", "momentum": "SGD(momentum%s)" % (
            ", nesterov" if opt["nesterov"] else ""),
                  "adam": "Adam", "adamw": "AdamW", "adagrad": "Adagrad"}[self.kind]
        mode = {"eager": "eager", "compile": "torch.compile",
                "compile-max-autotune": "torch.compile(mode='max-autotune')",
                "compile-foreach": "torch.compile"}[self.variant]
        model = ("the user's own nn.Module '%s' and F.cross_entropy" % self.user_model
                 if self.user_model else "nn.Module of a make_fx aten graph")
        parts = ["zero_grad(set_to_none)", "forward (%s, %s)" % (model, mode), "backward"]
        if self.clip > 0:
            parts.append("clip_grad_norm_(foreach) (scales by clip/(norm+1e-6) when norm > "
                         "clip, Kiln by clip/max(norm, clip)%s)" % (
                             "; the norm of the tables' true gradients, where Kiln counts "
                             "the rows of an id repeated in a batch one by one"
                             if self.workload.row_tables else ""))
        if self.foreach:
            parts.append("compiled foreach %s step (Inductor's kernels; tensor lr%s)" % (
                update, ", float64 step counter" if self.kind in ("adam", "adamw") else ""))
        elif self.compiled:
            parts.append("fused %s step (tensor lr; Dynamo calls the fused kernel)" % update)
        else:
            parts.append("fused %s step" % update)
        if self.sparse:
            table_update = {"sgd": "SGD", "adagrad": "Adagrad", "adam": "SparseAdam"}[self.kind]
            parts.append("row tables with sparse gradients, %s (%s)" % (
                table_update, ", ".join(sorted(self.sparse))))
        if self.dense_tables:
            same = self.kind in ("sgd", "adagrad")
            parts.append("row tables dense (%s; %s): %s" % (
                "no sparse gradients under torch.compile" if self.compiled
                else "no lazy %s in torch" % update,
                "the same update as Kiln's by rows" if same
                else "NOT Kiln's lazy update: untouched rows move",
                ", ".join(sorted(self.dense_tables))))
        parts.append("loss.item()")
        return ", ".join(parts)


def main():
    args = parse_args(VARIANTS)
    return serve(lambda: TorchPeer(Workload(args.workload), args.variant, args.threads))


if __name__ == "__main__":
    sys.exit(main())
