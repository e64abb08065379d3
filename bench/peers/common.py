"""What every peer of bench/train_bench.py shares (bench/peers/PROTOCOL.md):
reading the workload and serving the harness's requests. numpy and protobuf
only, so that every framework's venv can import it.
"""

import argparse
import json
import math
import os
import resource
import sys
import time
import traceback

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from graph_file import attr, constant_array, read_graph  # noqa: E402,F401


class Workload:
    """W/workload.json, W/weights.npz and W/batches.npz, in memory."""

    def __init__(self, folder):
        self.folder = folder
        with open(os.path.join(folder, "workload.json")) as f:
            self.spec = json.load(f)
        # A graph file, or the user's own model (PROTOCOL.md, "The user's
        # own models"): {"framework": "torch" or "tf", "model": NAME}.
        self.source = self.spec.get("source")
        self.graph = read_graph(self.spec["graph"]) if self.spec.get("graph") else None
        with np.load(os.path.join(folder, "weights.npz")) as weights:
            self.weights = {name: weights[name] for name in weights.files}
        with np.load(os.path.join(folder, "batches.npz")) as batches:
            count = 1 + max(int(key.split("/", 1)[0]) for key in batches.files)
            self.batches = [{} for _ in range(count)]
            for key in batches.files:
                index, name = key.split("/", 1)
                self.batches[int(index)][name] = batches[key]

    def user_model(self, framework):
        """The name of the user's own model this framework's peer trains
        from its module; None for a graph file. CannotRun for another
        framework's model."""
        if self.source is None:
            return None
        if self.source["framework"] != framework:
            raise CannotRun("the workload is the user's own %s model '%s', trained only "
                            "by its own framework" % (self.source["framework"],
                                                      self.source["model"]))
        return self.source["model"]

    @property
    def optimizer(self):
        return self.spec["optimizer"]

    def learning_rate(self, t):
        """The rate of step t (from 1), schedule applied by the harness."""
        return self.spec["learning_rates"][t - 1]

    def bias_corrections(self, t):
        """Adam's (1 - beta1^t, 1 - beta2^t) of step t, computed in float64."""
        return tuple(self.spec["bias_corrections"][t - 1])

    def batch(self, t):
        """The feeds of step t (from 1)."""
        return self.batches[(t - 1) % len(self.batches)]

    @property
    def loss_node(self):
        return self.spec["loss"]

    @property
    def row_tables(self):
        return set(self.spec["row_tables"])


# graph-format.md's Optimizer defaults (PyTorch's), for keys a workload lacks.
OPTIMIZER_DEFAULTS = {"momentum": 0.9, "nesterov": False, "beta1": 0.9, "beta2": 0.999,
                      "weight_decay": 0.01, "initial_accumulator": 0.0,
                      "clip_global_norm": 0.0}
EPSILON = {"adam": 1e-8, "adamw": 1e-8, "adagrad": 1e-10}
# The slots each optimizer keeps per variable.
SLOTS = {"sgd": [], "momentum": ["velocity"], "adam": ["m", "v"], "adamw": ["m", "v"],
         "adagrad": ["accumulator"]}


class OptimizerSettings:
    """The workload's optimizer with its defaults filled in: kind, the
    settings `s`, eps, the slot names and the clip norm (0: none)."""

    def __init__(self, spec):
        s = dict(OPTIMIZER_DEFAULTS, **{k: v for k, v in spec.items() if v is not None})
        self.kind = s["kind"]
        if self.kind not in SLOTS:
            raise CannotRun("optimizer '%s'" % self.kind)
        self.s = s
        self.eps = s.get("epsilon", EPSILON.get(self.kind, 1e-8))
        self.slots = SLOTS[self.kind]
        self.clip = s["clip_global_norm"] or 0.0

    def scalars(self, workload, t):
        """Step t's [rate, 1 - b1^t, 1 - b2^t, lazy Adam's step size
        rate sqrt(1 - b2^t) / (1 - b1^t)] as float32, from float64."""
        lr = float(np.float32(workload.learning_rate(t)))  # the f32 rate, as Kiln's
        if self.kind in ("adam", "adamw"):
            c1, c2 = workload.bias_corrections(t)
        else:
            c1 = c2 = 1.0
        return np.array([lr, c1, c2, lr * math.sqrt(c2) / c1], np.float32)


class CannotRun(Exception):
    """The peer cannot run this workload: its framework is missing, or the
    model has an op it cannot express. The message says which."""


def peak_rss_bytes():
    """This process's peak resident memory so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def parse_args(variants):
    parser = argparse.ArgumentParser()
    parser.add_argument("--workload", required=True)
    parser.add_argument("--variant", required=True, choices=variants)
    parser.add_argument("--threads", type=int, required=True)
    return parser.parse_args()


def serve(build):
    """Runs the protocol: `build()` returns a peer object (or raises
    CannotRun) with attributes framework, variant, params, compile_seconds,
    versions, includes and a method train(steps) -> (step_seconds, losses)
    that starts from the initial weights each time."""
    # Everything but protocol lines goes to stderr.
    protocol, sys.stdout = sys.stdout, sys.stderr

    def reply(message):
        protocol.write(json.dumps(message) + "\n")
        protocol.flush()

    try:
        peer = build()
    except CannotRun as reason:
        reply({"ready": False, "reason": str(reason)})
        return 0
    except ImportError as error:
        reply({"ready": False, "reason": "not installed: %s" % error})
        return 0
    reply({"ready": True, "framework": peer.framework, "variant": peer.variant,
           "params": peer.params, "compile_seconds": peer.compile_seconds,
           "versions": peer.versions, "includes": peer.includes})
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("quit"):
            break
        try:
            seconds, losses = peer.train(int(request["run"]))
        except Exception:  # a failure after ready: one line, exit 1
            traceback.print_exc()
            reply({"error": traceback.format_exc().strip().splitlines()[-1]})
            return 1
        reply({"step_seconds": seconds, "losses": [float(x) for x in losses],
               "peak_rss_bytes": peak_rss_bytes()})
    return 0


def timed(step):
    """(seconds, result) of step()."""
    start = time.perf_counter()
    result = step()
    return time.perf_counter() - start, result
