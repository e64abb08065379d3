#!/usr/bin/env python3
"""TensorFlow's MultiWorkerMirroredStrategy as bench/dp_bench.py's peer: one
worker process of a data-parallel job training a bench workload
(bench/peers/PROTOCOL.md's folder), its forward pass bench/peers/tf_peer.py's
GraphFunction (the graph file in TensorFlow ops, from Kiln's initial weights).

    PYTHON bench/peers/tf_mwms.py --workload W --rank R --world N --ports P0,P1,...
        [--threads T] [--steps S] [--warmup K]

The cluster is a TF_CONFIG as a launcher sets it ({"cluster": {"worker":
[...]}, "task": {"type": "worker", "index": R}}), on 127.0.0.1. The step is
the way TensorFlow's distributed training guide writes a custom loop: a
tf.function around strategy.run of GradientTape forward and backward, then a
Keras (tf_keras) optimizer's apply_gradients, which all-reduces the
gradients across the workers (MWMS's collective ops, RING over gRPC, the
CPU's only implementation) and applies the update; global-norm clipping and
the learning rate as the workload's optimizer says. Keras' Adam/AdamW add
epsilon to the raw sqrt(v) (Kiln to the bias-corrected one): the same work,
slightly different numbers, which a throughput comparison does not read.
Graph mode, not XLA: XLA does not compile MWMS's collectives.

Rank r trains batch (N k + r) of the workload's batches at global step k, as
Kiln's replicas and bench/peers/torch_ddp.py do. Rank 0 prints one JSON line:
the seconds of the timed steps, examples/s over the job, its final loss.
"""

import argparse
import json
import os
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workload", required=True)
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--ports", required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    ports = args.ports.split(",")
    os.environ["TF_CONFIG"] = json.dumps({
        "cluster": {"worker": ["127.0.0.1:%s" % p for p in ports]},
        "task": {"type": "worker", "index": args.rank}})
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import tensorflow as tf
    import tf_keras
    from common import Workload
    from tf_peer import GraphFunction

    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    communication = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.RING)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=communication)

    workload = Workload(args.workload)
    trainable = list(workload.spec["variables"])
    opt = workload.optimizer
    clip = float(opt.get("clip_global_norm") or 0.0)
    with strategy.scope():
        variables = {name: tf.Variable(value, trainable=name in trainable, name=name.replace(".", "_"))
                     for name, value in workload.weights.items()}
        rate = tf.Variable(workload.learning_rate(1), trainable=False, dtype=tf.float32)
        extra = {"global_clipnorm": clip} if clip > 0 else {}
        kind = opt["kind"]
        if kind in ("adam", "adamw"):
            cls = tf_keras.optimizers.AdamW if kind == "adamw" else tf_keras.optimizers.Adam
            kwargs = {"weight_decay": opt["weight_decay"]} if kind == "adamw" else {}
            optimizer = cls(learning_rate=lambda: rate, beta_1=opt["beta1"], beta_2=opt["beta2"],
                            epsilon=opt["epsilon"], **kwargs, **extra)
        elif kind == "adagrad":
            optimizer = tf_keras.optimizers.Adagrad(learning_rate=lambda: rate,
                                                    epsilon=opt["epsilon"], **extra)
        else:
            optimizer = tf_keras.optimizers.SGD(learning_rate=lambda: rate,
                                                momentum=opt.get("momentum", 0.0), **extra)
    function = GraphFunction(tf, workload.graph, workload.loss_node)
    weights = [variables[name] for name in trainable]
    feed_names = sorted(workload.batches[0])
    batches = [tuple(tf.constant(b[name]) for name in feed_names) for b in workload.batches]

    def replica_step(*feeds):
        values = dict(zip(feed_names, feeds))
        values.update(variables)
        with tf.GradientTape() as tape:
            loss = function(values)
        grads = tape.gradient(loss, weights)
        optimizer.apply_gradients(zip(grads, weights))
        return loss

    @tf.function(autograph=False)
    def step(*feeds):
        return strategy.run(replica_step, args=feeds)

    def run(t):
        rate.assign(workload.learning_rate(t))
        batch = batches[(args.world * (t - 1) + args.rank) % len(batches)]
        return float(strategy.experimental_local_results(step(*batch))[0].numpy())

    for t in range(1, args.warmup + 1):
        run(t)
    # Every worker done with the warm-up (and tracing) before the clock starts.
    barrier = tf.function(lambda: strategy.reduce(
        tf.distribute.ReduceOp.SUM, strategy.run(lambda: tf.constant(1.0)), axis=None))
    barrier()
    start = time.perf_counter()
    for t in range(args.warmup + 1, args.warmup + args.steps + 1):
        loss = run(t)
    barrier()
    seconds = time.perf_counter() - start
    if args.rank == 0:
        batch = len(batches[0][0])
        print(json.dumps({"seconds": seconds, "steps": args.steps,
                          "examples_per_second": args.steps * batch * args.world / seconds,
                          "loss": loss, "tensorflow": tf.__version__}), flush=True)


if __name__ == "__main__":
    main()
