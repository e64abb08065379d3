#!/usr/bin/env python3
"""Compile time of kilnc: every example and a generated graph of N ops, each
compiled afresh (--no-cache), again from the kernel cache (kilnc's own
compile_seconds, --report=json), and again without a report (wall clock: the
artifact cache copies the artifact), against issue 16's targets
(docs/performance.md, "Compile time").

The generated graph is a stack of residual blocks, five ops each (layer norm,
matrix product, bias, GELU, residual add), 64 wide at batch 32, then a linear
head and softmax cross-entropy, trained with Adam: `--ops 2000` makes 400
blocks and 1,600 variables. Standard library only; the kernel cache lives in
the work folder, so a run never touches ~/.cache/kiln.

    python3 bench/compile_bench.py [--ops 2000] [--repeats 3] [--markdown F]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = ["mlp", "wide_deep", "multi_hot", "transformer"]
# Issue 16's targets, in seconds: (afresh, from the cache).
TARGETS = {"transformer": (3.0, 0.5), "generated": (10.0, 0.5)}
EXAMPLE_TARGET = (2.0, 0.5)


def generated_graph(ops, width=64, batch=32):
    """The pbtxt of a residual stack of about `ops` ops (five per block)."""
    blocks = max(1, ops // 5)
    lines = ['name: "generated"', ""]
    for i in range(blocks):
        lines += [
            f'variables {{ name: "b{i}.w" dtype: DT_FLOAT32 shape: [{width}, {width}] '
            f'initializer {{ kind: GLOROT_UNIFORM seed: {i + 1} }} }}',
            f'variables {{ name: "b{i}.b" dtype: DT_FLOAT32 shape: [{width}] }}',
            f'variables {{ name: "b{i}.scale" dtype: DT_FLOAT32 shape: [{width}] '
            f'initializer {{ kind: ONES }} }}',
            f'variables {{ name: "b{i}.shift" dtype: DT_FLOAT32 shape: [{width}] }}',
        ]
    lines += [
        f'variables {{ name: "head.w" dtype: DT_FLOAT32 shape: [{width}, 10] '
        f'initializer {{ kind: GLOROT_UNIFORM seed: {blocks + 1} }} }}',
        f'inputs {{ name: "x" dtype: DT_FLOAT32 shape: [{batch}, {width}] }}',
        f'inputs {{ name: "label" dtype: DT_INT32 shape: [{batch}] }}',
    ]
    h = "x"
    for i in range(blocks):
        lines += [
            f'nodes {{ name: "b{i}.ln" op: "layer_norm" inputs: ["{h}", "b{i}.scale", '
            f'"b{i}.shift"] attrs {{ key: "axis" value {{ i: -1 }} }} '
            f'attrs {{ key: "epsilon" value {{ f: 1e-05 }} }} }}',
            f'nodes {{ name: "b{i}.mm" op: "matmul" inputs: ["b{i}.ln", "b{i}.w"] }}',
            f'nodes {{ name: "b{i}.bias" op: "add" inputs: ["b{i}.mm", "b{i}.b"] }}',
            f'nodes {{ name: "b{i}.act" op: "gelu" inputs: ["b{i}.bias"] }}',
            f'nodes {{ name: "b{i}.out" op: "add" inputs: ["{h}", "b{i}.act"] }}',
        ]
        h = f"b{i}.out"
    lines += [
        f'nodes {{ name: "logits" op: "matmul" inputs: ["{h}", "head.w"] }}',
        'nodes { name: "loss" op: "softmax_cross_entropy" inputs: ["logits", "label"] }',
        'outputs: ["loss"]',
        'train { loss: "loss" label: "label" optimizer { kind: ADAM learning_rate: 0.001 } '
        f'batch_size: {batch} }}',
    ]
    return "\n".join(lines) + "\n", blocks * 5 + 2


def compile_seconds(kilnc, graph, out, env, fresh):
    """kilnc's own compile_seconds (--report=json), afresh or from the cache."""
    command = [kilnc, graph, "-o", out, "--report=json"] + (["--no-cache"] if fresh else [])
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        sys.exit(f"compile_bench: {' '.join(command)} failed:\n{done.stderr}")
    report = json.loads(done.stdout)
    return report["compile_seconds"], report["kernels"]


def repeat_seconds(kilnc, graph, out, env):
    """Wall-clock seconds of a compile without a report: the artifact cache
    copies what an earlier identical compile filed."""
    begin = time.perf_counter()
    done = subprocess.run([kilnc, graph, "-o", out], env=env, capture_output=True, text=True,
                          timeout=900)
    if done.returncode != 0:
        sys.exit(f"compile_bench: {kilnc} {graph} failed:\n{done.stderr}")
    return time.perf_counter() - begin


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2000, help="ops of the generated graph")
    parser.add_argument("--repeats", type=int, default=3, help="compiles of each kind (median)")
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args()
    kilnc = os.path.join(args.bin, "kilnc")
    with tempfile.TemporaryDirectory(prefix="compile_bench.") as work:
        env = dict(os.environ, KILN_CACHE_DIR=os.path.join(work, "cache"))
        graphs = [(name, os.path.join(ROOT, "examples", f"{name}.pbtxt"), None)
                  for name in EXAMPLES]
        text, ops = generated_graph(args.ops)
        generated = os.path.join(work, "generated.pbtxt")
        with open(generated, "w") as f:
            f.write(text)
        graphs.append(("generated", generated, ops))
        rows = []
        for name, graph, ops in graphs:
            out = os.path.join(work, f"{name}.kiln")
            fresh = [compile_seconds(kilnc, graph, out, env, True) for _ in range(args.repeats)]
            compile_seconds(kilnc, graph, out, env, False)  # Files the kernels (--no-cache did not).
            cached = [compile_seconds(kilnc, graph, out, env, False)
                      for _ in range(args.repeats)]
            repeat_seconds(kilnc, graph, out, env)  # Files the artifact.
            repeated = [repeat_seconds(kilnc, graph, out, env) for _ in range(args.repeats)]
            target = TARGETS.get(name, EXAMPLE_TARGET)
            rows.append((name, ops, fresh[0][1], statistics.median(s for s, _ in fresh),
                         statistics.median(s for s, _ in cached), statistics.median(repeated),
                         target))
            print(f"{name}: {rows[-1][3]:.2f} s afresh, {rows[-1][4]:.2f} s cached kernels, "
                  f"{rows[-1][5]:.3f} s repeated", file=sys.stderr)
    lines = [
        f"kilnc compile seconds (median of {args.repeats}; kilnc's own compile_seconds):",
        "",
        "| graph | graph ops | kernel steps | afresh s | target | kernels cached s | "
        "repeated s | target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, ops, kernels, fresh, cached, repeated, (fresh_target, cached_target) in rows:
        lines.append(f"| {name} | {ops if ops else 'example'} | {kernels} | {fresh:.2f} | "
                     f"< {fresh_target:g} | {cached:.2f} | {repeated:.3f} | "
                     f"< {cached_target:g} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)


if __name__ == "__main__":
    main()
