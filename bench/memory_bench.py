#!/usr/bin/env python3
"""Memory of the train step under recomputation (issue 16): for each model,
kilnc's planned arena (`peak_bytes`) and recomputed work (`recompute_flops`)
with --remat=none, sqrt and all, and under --memory-budget at half the peak
without recomputation (or, where that cannot be reached, the error's
smallest peak). Ratios are against the same model without recomputation.

Models: the examples, two models PyTorch exported (test/Inputs/frameworks),
and compile_bench.py's generated residual stack (a deep net whose
activations dominate its memory). Standard library only; compiles with
--no-cache, so it never touches ~/.cache/kiln.

    python3 bench/memory_bench.py [--kilnc build/bin/kilnc] [--ops 500] [--markdown F]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from compile_bench import generated_graph  # noqa: E402

ONNX_TRAIN = ["--train", "--loss=softmax_cross_entropy", "--output=logits", "--label=label",
              "--batch=4", "--optimizer=adam", "--lr=0.001"]


def models(work, ops):
    frameworks = os.path.join(ROOT, "test", "Inputs", "frameworks")
    yield "mlp", os.path.join(ROOT, "examples", "mlp.pbtxt"), ["--train"]
    yield "wide_deep", os.path.join(ROOT, "examples", "wide_deep.pbtxt"), ["--train"]
    yield "transformer", os.path.join(ROOT, "examples", "transformer.pbtxt"), ["--train"]
    yield "encoder (PyTorch)", os.path.join(frameworks, "encoder_opset17.onnx"), ONNX_TRAIN
    yield "cnn_bn (PyTorch)", os.path.join(frameworks, "cnn_bn_opset17.onnx"), ONNX_TRAIN
    path = os.path.join(work, "generated.pbtxt")
    with open(path, "w") as f:
        f.write(generated_graph(ops)[0])
    yield f"generated {ops} ops", path, ["--train"]


def compile_report(kilnc, path, flags, extra, work):
    """The JSON report, or the error line when kilnc fails."""
    out = os.path.join(work, "model.kiln")
    run = subprocess.run([kilnc, path, *flags, *extra, "--no-cache", "-o", out,
                          "--report=json"], capture_output=True, text=True)
    if run.returncode != 0:
        return None, run.stderr.strip().splitlines()[-1]
    return json.loads(run.stdout), None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kilnc", default=os.path.join(ROOT, "build", "bin", "kilnc"))
    parser.add_argument("--ops", type=int, default=500)
    parser.add_argument("--markdown")
    args = parser.parse_args()
    rows = ["| model | none: peak bytes | sqrt | all | auto at half the peak |",
            "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as work:
        for name, path, flags in models(work, args.ops):
            base, error = compile_report(args.kilnc, path, flags, ["--remat=none"], work)
            if error:
                sys.exit(f"{name}: {error}")
            peak = base["peak_bytes"]

            def cell(report):
                return (f"{report['peak_bytes'] / peak:.2f}× peak, "
                        f"+{100 * report['recompute_flops'] / report['flops_per_step']:.1f}% flops")

            cells = [f"{peak:,} (naive {base['naive_bytes']:,})"]
            for policy in ("sqrt", "all"):
                report, error = compile_report(args.kilnc, path, flags, [f"--remat={policy}"], work)
                cells.append(cell(report) if report else error)
            report, error = compile_report(args.kilnc, path, flags,
                                           [f"--memory-budget={peak // 2}"], work)
            if report:
                cells.append(cell(report))
            else:
                smallest = re.search(r"reaches is (\d+) bytes", error)
                cells.append("unreachable: smallest " +
                             (f"{int(smallest.group(1)) / peak:.2f}× peak" if smallest else error))
            rows.append(f"| {name} | " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
