#!/usr/bin/env python3
"""Parameter-server training throughput: `kiln launch --ps` against
TensorFlow's ParameterServerStrategy on the same model, cluster shape,
data and machine, in the same run (docs/performance.md, "Parameter
servers").

    /work/venv-tf/bin/python bench/ps_bench.py [--workers 2] [--ps 2] [--batch 256]
        [--tables 26] [--rows-per-table 40000] [--steps 200] [--warmup 20] [--repeats 2]

The model is wide&deep shaped like Criteo's: 13 dense features, --tables
categorical features each with a 16-wide embedding table and a 1-wide
wide-part table of --rows-per-table rows (26 x 40000 = 1.04 million ids),
a 256-128-1 ReLU tower; sigmoid cross-entropy, Adagrad (lr 0.05, initial
accumulator 0.1, touched rows only). The data is scripts/make_ctr_data.py's
(Zipf-like ids, a planted model), categorical strings hashed to ids by
FNV-1a 64 modulo the table's rows, as Kiln's reader does; both frameworks
read the same rows, --batch per worker.

Kiln: kilnc --strategy=parameter-server (fixed tables, TensorFlow's
MinSizePartitioner default of 256 KiB shards), kiln launch --workers N --ps M
in sync and async mode (async with each step's first pulls prefetched during
the step before, the default, and with --no-prefetch), one thread per worker
(cores / workers). TensorFlow:
N worker and M ps processes (tf.distribute.Server, one intra-op thread per
worker) and the coordinator in this process, ParameterServerStrategy with
MinSizePartitioner(256 KiB, M shards), tf_keras layers and Adagrad, a
tf.function of 10 steps per scheduled call (the fastest we measured);
TensorFlow 2's PSS is asynchronous only. Throughput is the examples/s of the
steps after --warmup, repeats interleaved; the report is the median.
Also reported from Kiln's --ps-report: rows pulled and pushed per second
per server, and bytes on the wire per example.
"""

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUMMARY = re.compile(r"trained steps \d+\.\.\d+: final loss (\S+), (\d+) examples/s")
SERVER = re.compile(r"ps:(\d+): (\d+) updates; (\d+) pulls .*?; (\d+) bytes in \(\S+\), (\d+) out")
VARIABLE = re.compile(r"ps:\d+:   \S+: \d+ rows, \d+ bytes; (\d+) rows pulled, (\d+) pushed")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_graph(path, tables, rows, batch):
    """The Criteo-shaped wide&deep graph file (Kiln's text format)."""
    lines = ['name: "criteo_wide_deep"']
    for t in range(tables):
        lines.append('variables { name: "emb.c%d" dtype: DT_FLOAT32 shape: [%d, 16] '
                     'initializer { kind: NORMAL mean: 0 stddev: 0.01 seed: %d } }' % (t, rows, 100 + t))
        lines.append('variables { name: "wide.c%d" dtype: DT_FLOAT32 shape: [%d, 1] }' % (t, rows))
    width = 13 + 16 * tables
    lines += ['variables { name: "wide.b" dtype: DT_FLOAT32 shape: [1] }',
              'variables { name: "deep1.w" dtype: DT_FLOAT32 shape: [%d, 256] initializer { kind: GLOROT_UNIFORM seed: 21 } }' % width,
              'variables { name: "deep1.b" dtype: DT_FLOAT32 shape: [256] }',
              'variables { name: "deep2.w" dtype: DT_FLOAT32 shape: [256, 128] initializer { kind: GLOROT_UNIFORM seed: 22 } }',
              'variables { name: "deep2.b" dtype: DT_FLOAT32 shape: [128] }',
              'variables { name: "deep3.w" dtype: DT_FLOAT32 shape: [128, 1] initializer { kind: GLOROT_UNIFORM seed: 23 } }',
              'variables { name: "deep3.b" dtype: DT_FLOAT32 shape: [1] }',
              'inputs { name: "dense" dtype: DT_FLOAT32 shape: [%d, 13] }' % batch]
    for t in range(tables):
        lines.append('inputs { name: "c%d" dtype: DT_INT64 shape: [%d] }' % (t, batch))
    lines.append('inputs { name: "click" dtype: DT_FLOAT32 shape: [%d, 1] }' % batch)
    for t in range(tables):
        lines.append('nodes { name: "c%d.emb" op: "gather" inputs: ["emb.c%d", "c%d"] }' % (t, t, t))
        lines.append('nodes { name: "c%d.w" op: "gather" inputs: ["wide.c%d", "c%d"] }' % (t, t, t))
    lines.append('nodes { name: "deep.in" op: "concat" inputs: ["dense", %s] '
                 'attrs { key: "axis" value { i: 1 } } }'
                 % ", ".join('"c%d.emb"' % t for t in range(tables)))
    lines += ['nodes { name: "deep1.mm" op: "matmul" inputs: ["deep.in", "deep1.w"] }',
              'nodes { name: "deep1.z" op: "add" inputs: ["deep1.mm", "deep1.b"] }',
              'nodes { name: "deep1" op: "relu" inputs: ["deep1.z"] }',
              'nodes { name: "deep2.mm" op: "matmul" inputs: ["deep1", "deep2.w"] }',
              'nodes { name: "deep2.z" op: "add" inputs: ["deep2.mm", "deep2.b"] }',
              'nodes { name: "deep2" op: "relu" inputs: ["deep2.z"] }',
              'nodes { name: "deep3.mm" op: "matmul" inputs: ["deep2", "deep3.w"] }',
              'nodes { name: "deep" op: "add" inputs: ["deep3.mm", "deep3.b"] }']
    previous = "c0.w"
    for t in range(1, tables):
        lines.append('nodes { name: "wide.s%d" op: "add" inputs: ["%s", "c%d.w"] }' % (t, previous, t))
        previous = "wide.s%d" % t
    lines += ['nodes { name: "wide" op: "add" inputs: ["%s", "wide.b"] }' % previous,
              'nodes { name: "logits" op: "add" inputs: ["deep", "wide"] }',
              'nodes { name: "loss" op: "sigmoid_cross_entropy" inputs: ["logits", "click"] }',
              'outputs: ["loss"]',
              'train { loss: "loss" label: "click" batch_size: %d '
              'optimizer { kind: ADAGRAD learning_rate: 0.05 initial_accumulator: 0.1 '
              'sparse_updates: LAZY } }' % batch]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def fnv1a64(text):
    value = 0xcbf29ce484222325
    for byte in text.encode():
        value = ((value ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return value


def read_tsv(path, tables, rows):
    """(labels [n, 1], dense [n, 13], ids [tables][n]) as Kiln's reader makes them."""
    import numpy as np
    labels, dense, ids = [], [], [[] for _ in range(tables)]
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            labels.append([float(fields[0])])
            dense.append([float(v) if v else 0.0 for v in fields[1:14]])
            for t in range(tables):
                ids[t].append(fnv1a64(fields[14 + t]) % rows)
    return (np.array(labels, np.float32), np.array(dense, np.float32),
            [np.array(column, np.int64) for column in ids])


def run_kiln(args, tools, artifact, data, mode):
    steps = args.warmup + args.steps
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        command = [tools["kiln"], "launch", artifact, "--workers", str(args.workers), "--ps",
                   str(args.ps), "--data", data, "--steps", str(steps), "--metrics-out", metrics,
                   "--ps-report"] + {"sync": [], "async": ["--async"],
                                     "async no-prefetch": ["--async", "--no-prefetch"]}[mode]
        out = subprocess.run(command, capture_output=True, text=True, timeout=1800)
        if out.returncode != 0:
            raise SystemExit("kiln launch failed: " + out.stderr[-2000:])
        records = [json.loads(line) for line in open(metrics) if '"loss"' in line]
    rates = [r["examples_per_second"] for r in records if r["step"] > args.warmup]
    # The step's rate is the global batch over its time: the harmonic mean
    # is the throughput over the measured steps.
    throughput = len(rates) / sum(1.0 / r for r in rates)
    text = out.stdout + out.stderr
    servers = SERVER.findall(text)
    pulled = sum(int(p) for p, _ in VARIABLE.findall(text))
    pushed = sum(int(q) for _, q in VARIABLE.findall(text))
    wire = sum(int(b_in) + int(b_out) for _, _, _, b_in, b_out in servers)
    examples = steps * args.batch * args.workers
    # Steps (of every worker) per second at the measured throughput.
    per_second = throughput / args.batch
    count = max(1, len(servers))
    return throughput, {"rows_pulled_per_second_per_server": pulled / steps / count * per_second,
                        "rows_pushed_per_second_per_server": pushed / steps / count * per_second,
                        "wire_bytes_per_example": wire / examples}


TF_SERVER = """
import sys, tensorflow as tf
cluster = tf.train.ClusterSpec({"worker": sys.argv[1].split(","), "ps": sys.argv[2].split(",")})
config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=int(sys.argv[5]),
                                  inter_op_parallelism_threads=2)
tf.distribute.Server(cluster, job_name=sys.argv[3], task_index=int(sys.argv[4]),
                     config=config, protocol="grpc").join()
"""


def run_tensorflow(args, arrays, threads, repeats):
    """examples/s of TensorFlow's ParameterServerStrategy, one per repeat."""
    import numpy as np
    import tensorflow as tf
    import tf_keras as keras
    labels, dense, ids = arrays
    workers = ["127.0.0.1:%d" % free_port() for _ in range(args.workers)]
    servers = ["127.0.0.1:%d" % free_port() for _ in range(args.ps)]
    processes = []
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    try:
        for job, addresses, intra in (("worker", workers, threads), ("ps", servers, 1)):
            for index in range(len(addresses)):
                processes.append(subprocess.Popen(
                    [sys.executable, "-c", TF_SERVER, ",".join(workers), ",".join(servers), job,
                     str(index), str(intra)], env=env, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL))
        resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
            tf.train.ClusterSpec({"worker": workers, "ps": servers}), rpc_layer="grpc")
        partitioner = tf.distribute.experimental.partitioners.MinSizePartitioner(
            min_shard_bytes=256 << 10, max_shards=args.ps)
        strategy = tf.distribute.experimental.ParameterServerStrategy(
            resolver, variable_partitioner=partitioner)
        coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
        with strategy.scope():
            inputs_dense = keras.Input((13,), name="dense_features")
            inputs_ids = [keras.Input((), dtype="int64", name="c%d" % t) for t in range(args.tables)]
            embeddings = [keras.layers.Embedding(args.rows_per_table, 16)(x) for x in inputs_ids]
            wides = [keras.layers.Embedding(args.rows_per_table, 1)(x) for x in inputs_ids]
            deep = keras.layers.Concatenate()([inputs_dense] + embeddings)
            deep = keras.layers.Dense(256, activation="relu")(deep)
            deep = keras.layers.Dense(128, activation="relu")(deep)
            deep = keras.layers.Dense(1)(deep)
            logits = keras.layers.Add()([deep] + wides)
            model = keras.Model([inputs_dense] + inputs_ids, logits)
            optimizer = keras.optimizers.Adagrad(0.05, initial_accumulator_value=0.1)

        def dataset_fn():
            features = (dense, tuple(ids))
            data = tf.data.Dataset.from_tensor_slices((features, labels)).repeat()
            return data.batch(args.batch, drop_remainder=True).prefetch(4)

        iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))
        per_call = 10

        @tf.function
        def train(iterator):
            def replica(batch):
                (d, cs), y = batch
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
                        y, model([d] + list(cs), training=True)))
                variables = model.trainable_variables
                optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
                return loss
            loss = tf.constant(0.0)
            for _ in tf.range(per_call):
                loss = strategy.run(replica, args=(next(iterator),))
            return loss

        calls = lambda steps: max(1, steps * args.workers // per_call)
        results = []
        for _ in range(repeats):
            for _ in range(calls(args.warmup)):
                coordinator.schedule(train, args=(iterator,))
            coordinator.join()
            begin = time.perf_counter()
            for _ in range(calls(args.steps)):
                coordinator.schedule(train, args=(iterator,))
            coordinator.join()
            took = time.perf_counter() - begin
            results.append(calls(args.steps) * per_call * args.batch / took)
        return results
    finally:
        for process in processes:
            process.kill()
            process.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ps", type=int, default=2)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--tables", type=int, default=26)
    parser.add_argument("--rows-per-table", type=int, default=40000)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--skip-tensorflow", action="store_true")
    args = parser.parse_args()
    tools = {name: os.path.join(args.build, "bin", name) for name in ("kilnc", "kiln")}
    cores = os.cpu_count() or 1
    threads = max(1, cores // args.workers)
    with tempfile.TemporaryDirectory() as tmp:
        graph, data = os.path.join(tmp, "criteo_wd.pbtxt"), os.path.join(tmp, "train.tsv")
        write_graph(graph, args.tables, args.rows_per_table, args.batch)
        rows = (args.warmup + args.steps) * args.batch * args.workers
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_ctr_data.py"),
                        "--rows", str(rows), "--dense", "13", "--categorical", str(args.tables),
                        "--vocab", "100000", "--seed", "1", "--out", data], check=True)
        artifact = os.path.join(tmp, "criteo_wd.kiln")
        subprocess.run([tools["kilnc"], graph, "--train", "--strategy=parameter-server",
                        "--partitioner=min-shard-bytes:262144", "-o", artifact], check=True)
        arrays = None if args.skip_tensorflow else read_tsv(data, args.tables, args.rows_per_table)
        results = {"kiln sync": [], "kiln async": [], "kiln async no-prefetch": [],
                   "tensorflow pss (async)": []}
        details = {}
        for _ in range(args.repeats):
            for mode in ("sync", "async", "async no-prefetch"):
                rate, detail = run_kiln(args, tools, artifact, data, mode)
                results["kiln " + mode].append(rate)
                details[mode] = detail
            if arrays is not None:
                results["tensorflow pss (async)"] += run_tensorflow(args, arrays, threads, 1)
    print("wide&deep, %d tables x %d ids (%.2f million ids, each with a 16-wide and a 1-wide row), "
          "batch %d per worker, %d workers + %d ps, %d cores" % (
              args.tables, args.rows_per_table, args.tables * args.rows_per_table / 1e6,
              args.batch, args.workers, args.ps, cores))
    medians = {name: statistics.median(values) for name, values in results.items() if values}
    for name, value in medians.items():
        print("  %-24s %9.0f examples/s  (runs: %s)" % (
            name, value, ", ".join("%.0f" % v for v in results[name])))
    tf_rate = medians.get("tensorflow pss (async)")
    if tf_rate:
        for mode in ("sync", "async"):
            print("  kiln %s / tensorflow: %.2fx" % (mode, medians["kiln " + mode] / tf_rate))
    print("  kiln async / kiln sync: %.2fx" % (medians["kiln async"] / medians["kiln sync"]))
    print("  kiln async, pulls prefetched / not: %.2fx" % (
        medians["kiln async"] / medians["kiln async no-prefetch"]))
    for mode, detail in details.items():
        print("  kiln %s: %.0f rows pulled and %.0f pushed per second per server, %.0f bytes on "
              "the wire per example" % (mode, detail["rows_pulled_per_second_per_server"],
                                        detail["rows_pushed_per_second_per_server"],
                                        detail["wire_bytes_per_example"]))


if __name__ == "__main__":
    main()
