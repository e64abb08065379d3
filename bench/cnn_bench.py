#!/usr/bin/env python3
"""Training step time of a convolution network: Kiln against PyTorch eager
and torch.compile on the CPU, measured in the same run (docs/performance.md,
"Convolution networks").

A development script, not a test. It needs the built kilnc and kiln and a
Python with torch, onnx and numpy (/work/venv/bin/python on the development
machine):

    python3 bench/cnn_bench.py                      # batch 32, 3 repeats
    python3 bench/cnn_bench.py --batch 64 --steps 30 --repeats 5 --json cnn.json

The model is PyTorch's MNIST example network: Conv2d(1, 32, 3, padding 1),
ReLU, MaxPool2d(2), Conv2d(32, 64, 3, padding 1), ReLU, MaxPool2d(2),
Linear(3136, 128), ReLU, Linear(128, 10), cross-entropy, Adam (lr 1e-3), on
random 28x28 images. It is built once in PyTorch and exported with
torch.onnx.export; Kiln compiles that file with `kilnc --train`, so all
start from the same weights and train on the same batches (their first
losses are printed and must agree).

A repeat runs each framework in turn (kiln, kiln with `--conv=generated`:
its own generated convolution kernels instead of oneDNN's, torch,
torch.compile), each
training --warmup + --steps steps from the initial weights. A framework's
step time in a repeat is the median of its steps after the warm-up, its time
in the table the median over the repeats; the ratios are Kiln's time over
each other's. A step takes the batch, runs forward and backward and the
optimizer, and brings the loss to the host:
  kiln   `kiln run --metrics-out`: batch / examples_per_second of each step
         (it includes reading the batch and writing the metrics line).
  torch  zero_grad, forward, backward, optimizer.step() (torch.optim.Adam,
         its default foreach implementation), loss.item().
  torch.compile  the same with the model under torch.compile (Inductor);
         the optimizer stays eager. Its compile time is reported apart.
All run with OMP_WAIT_POLICY=passive (what kiln sets for itself) and
--threads threads (default: the machine's cores).
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

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 32, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = torch.nn.Linear(64 * 7 * 7, 128)
        self.fc2 = torch.nn.Linear(128, 10)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
        x = torch.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(x)


def kiln_steps(tools, onnx_path, data, batch, steps, tmp, conv="library"):
    artifact = os.path.join(tmp, "cnn_%s.kiln" % conv)
    start = time.perf_counter()
    subprocess.run([tools["kilnc"], onnx_path, "--train", "--loss=softmax_cross_entropy",
                    "--output=logits", "--label=label", "--batch=%d" % batch,
                    "--optimizer=adam", "--lr=0.001", "--conv=" + conv, "-o", artifact],
                   check=True)
    compile_s = time.perf_counter() - start
    metrics = os.path.join(tmp, "metrics.jsonl")

    def run():
        if os.path.exists(metrics):
            os.remove(metrics)
        subprocess.run([tools["kiln"], "run", artifact, "--data", data, "--steps",
                        str(steps), "--metrics-out", metrics], check=True,
                       stdout=subprocess.DEVNULL)
        records = [json.loads(line) for line in open(metrics)]
        records = [r for r in records if "examples_per_second" in r]
        return ([batch / r["examples_per_second"] for r in records],
                [r["loss"] for r in records])
    return run, compile_s


def torch_steps(initial, images, labels, batch, steps, compiled):
    model = Net()
    model.load_state_dict(initial)
    forward = model
    compile_s = 0.0
    if compiled:
        forward = torch.compile(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    times, losses = [], []
    rows = len(images)
    for t in range(steps):
        start = time.perf_counter()
        s = (t * batch) % rows
        x = torch.from_numpy(images[s:s + batch])
        y = torch.from_numpy(labels[s:s + batch]).long()
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(forward(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        elapsed = time.perf_counter() - start
        if compiled and t == 0:
            compile_s = elapsed
        times.append(elapsed)
    return times, losses, compile_s


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--json")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    tools = {"kilnc": os.path.join(args.bin, "kilnc"), "kiln": os.path.join(args.bin, "kiln")}
    total = args.warmup + args.steps
    rng = np.random.default_rng(0)
    rows = args.batch * 8
    images = rng.uniform(-1, 1, (rows, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, rows).astype(np.int32)
    torch.manual_seed(0)
    initial = {k: v.clone() for k, v in Net().state_dict().items()}
    results = {"kiln": [], "kiln --conv=generated": [], "torch": [], "torch.compile": []}
    first = {}
    compile_times = {}
    with tempfile.TemporaryDirectory() as tmp:
        model = Net()
        model.load_state_dict(initial)
        onnx_path = os.path.join(tmp, "cnn.onnx")
        torch.onnx.export(model, (torch.zeros(args.batch, 1, 28, 28),), onnx_path,
                          input_names=["x"], output_names=["logits"], dynamo=False)
        data = os.path.join(tmp, "data.npz")
        np.savez(data, x=images, label=labels)
        run_kiln, compile_times["kilnc"] = kiln_steps(tools, onnx_path, data, args.batch,
                                                      total, tmp)
        run_generated, _ = kiln_steps(tools, onnx_path, data, args.batch, total, tmp,
                                      conv="generated")
        for _ in range(args.repeats):
            for name, run in (("kiln", run_kiln), ("kiln --conv=generated", run_generated)):
                times, losses = run()
                results[name].append(statistics.median(times[args.warmup:]))
                first[name] = losses[0]
            for name, compiled in (("torch", False), ("torch.compile", True)):
                times, losses, compile_s = torch_steps(initial, images, labels, args.batch,
                                                       total, compiled)
                results[name].append(statistics.median(times[args.warmup:]))
                first[name] = losses[0]
                if compiled:
                    compile_times.setdefault("torch.compile first step", compile_s)
    medians = {name: statistics.median(v) * 1e3 for name, v in results.items()}
    print("cpu: %s, %d threads, batch %d, %d steps after %d warm-up, %d repeats"
          % (platform.processor() or platform.machine(), args.threads, args.batch,
             args.steps, args.warmup, args.repeats))
    for name, ms in medians.items():
        spread = ", ".join("%.2f" % (t * 1e3) for t in results[name])
        print("  %-22s %8.2f ms/step  (repeats: %s)  first loss %.6f"
              % (name, ms, spread, first[name]))
    for name in ("torch", "torch.compile"):
        print("  kiln / %-13s %.2f" % (name, medians["kiln"] / medians[name]))
    for name, seconds in compile_times.items():
        print("  compile: %s %.1f s" % (name, seconds))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"ms_per_step": medians, "repeats": results, "first_loss": first,
                       "compile_s": compile_times, "batch": args.batch}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
