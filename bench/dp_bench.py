#!/usr/bin/env python3
"""Data-parallel training throughput: `kiln launch` against PyTorch DDP
(gloo backend) and TensorFlow's MultiWorkerMirroredStrategy on the same
model, cluster shape and machine, in the same run, repeats interleaved
(docs/performance.md, "Data-parallel").

    /work/venv/bin/python bench/dp_bench.py [--model mlp,transformer] [--workers 2]
        [--steps 30] [--warmup 5] [--repeats 3] [--bucket-bytes N,...]
        [--tf-python /work/venv-tf/bin/python] [--peers ddp,mwms]

Each model is an example graph file at its own batch B per replica (global
batch N*B), every framework starting from Kiln's initial weights; each
process gets cores / N threads (threads x processes <= cores, DESIGN.md).
For Kiln it also reports the all-reduce: bytes a step, seconds in the
collective, and the share of them hidden behind compute (1 - the seconds a
wait blocked / the seconds in the collective), for each --bucket-bytes, with
its default collectives (shared memory: every worker runs on this host) and,
at the first --bucket-bytes, with --collectives gloo (TCP, as DDP's gloo
backend).
TensorFlow runs in its own venv (--tf-python, with tensorflow and tf_keras;
bench/peers/tf_mwms.py): MWMS with RING collectives, a TF_CONFIG per worker,
the same batches and initial weights.
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import train_reference as ref  # noqa: E402
from workloads import make_workload  # noqa: E402

SUMMARY = re.compile(r"trained steps \d+\.\.(\d+): final loss (\S+), (\d+) examples/s \((\d+) "
                     r"replicas; all-reduce (\d+) bytes a step, (\S+) s in the collective, "
                     r"the steps waited (\S+) s for it\)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_kiln(args, tools, artifact, data, threads, transport="auto"):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    steps = args.warmup + args.steps
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        out = subprocess.run([tools.kiln, "launch", artifact, "--workers", str(args.workers),
                              "--data", data, "--steps", str(steps), "--metrics-out", metrics,
                              "--collectives", transport],
                             capture_output=True, text=True, env=env, timeout=900)
        if out.returncode != 0:
            sys.exit("kiln launch failed:\n" + out.stdout + out.stderr)
        rates = [json.loads(line)["examples_per_second"] for line in open(metrics)
                 if '"loss"' in line][args.warmup:]
    match = SUMMARY.search(out.stdout)
    if not match:
        sys.exit("kiln launch printed no replicas' summary line:\n" + out.stdout)
    comm, blocked = float(match.group(6)), float(match.group(7))
    # The steps' wait may exceed the collective's own time (a bucket queued
    # behind another, the communication thread waiting for a core): none of
    # it hidden then.
    return {"examples_per_second": statistics.median(rates),
            "bytes_per_step": int(match.group(5)), "comm_seconds": comm / steps,
            "hidden": max(0.0, 1 - blocked / comm) if comm > 0 else 0.0}


def run_workers(commands, what):
    """Starts one process per command, waits for all; rank 0's JSON line."""
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for command in commands]
    outputs = [p.communicate(timeout=900) for p in processes]
    for p, (out, err) in zip(processes, outputs):
        if p.returncode != 0:
            sys.exit("%s failed:\n%s%s" % (what, out, err[-4000:]))
    return json.loads(outputs[0][0].strip().splitlines()[-1])


def peer_command(python, peer, args, folder, threads, rank, cluster):
    return [python, os.path.join(ROOT, "bench", "peers", peer), "--workload", folder,
            "--rank", str(rank), "--world", str(args.workers), "--threads", str(threads),
            "--steps", str(args.steps), "--warmup", str(args.warmup)] + cluster


def run_ddp(args, folder, threads):
    port = ["--port", str(free_port())]
    return run_workers([peer_command(sys.executable, "torch_ddp.py", args, folder, threads, r,
                                     port) for r in range(args.workers)], "torch DDP")


def run_mwms(args, folder, threads):
    ports = ["--ports", ",".join(str(free_port()) for _ in range(args.workers))]
    return run_workers([peer_command(args.tf_python, "tf_mwms.py", args, folder, threads, r,
                                     ports) for r in range(args.workers)],
                       "TensorFlow MWMS")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="mlp,transformer")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batches", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bucket-bytes", default="26214400,1048576,262144")
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--tf-python", default="/work/venv-tf/bin/python")
    parser.add_argument("--peers", default="ddp,mwms")
    args = parser.parse_args()
    tools = ref.Tools(args.bin)
    threads = max(1, (os.cpu_count() or 1) // args.workers)
    work = args.workdir or tempfile.mkdtemp(prefix="kiln-dp-bench-")
    print("# %d workers x %d threads; %d + %d steps, median of %d repeats; %s" % (
        args.workers, threads, args.warmup, args.steps, args.repeats, work))
    for name in args.model.split(","):
        folder = os.path.join(work, name)
        workload = make_workload(name, tools, folder, args)
        artifacts = {}
        for size in args.bucket_bytes.split(","):
            artifact = os.path.join(folder, "dp-%s.kiln" % size)
            ref.Tools.run([tools.kilnc, workload.path, "--train", "--strategy=data-parallel",
                           "--bucket-bytes=" + size, "-o", artifact])
            artifacts[size] = artifact
        peers = {"ddp": run_ddp, "mwms": run_mwms}
        chosen = [p for p in args.peers.split(",") if p]
        rows = {peer: [] for peer in chosen}
        runs = [(size, "auto") for size in artifacts]
        runs.insert(1, (next(iter(artifacts)), "gloo"))
        rows.update({run: [] for run in runs})
        for _ in range(args.repeats):
            for peer in chosen:
                rows[peer].append(peers[peer](args, folder, threads))
            for size, transport in runs:
                rows[(size, transport)].append(
                    run_kiln(args, tools, artifacts[size], workload.data, threads, transport))
        rates = {peer: statistics.median(r["examples_per_second"] for r in rows[peer])
                 for peer in chosen}
        best = max(rates.values()) if rates else None
        print("\n## %s: batch %d per replica, global %d" % (name, workload.batch,
                                                           workload.batch * args.workers))
        print("| run | examples/s | vs the faster peer | all-reduce bytes/step "
              "| ms in collective/step | hidden behind compute |")
        print("|---|---|---|---|---|---|")
        titles = {"ddp": "PyTorch DDP (gloo, 25 MB buckets)",
                  "mwms": "TensorFlow MultiWorkerMirroredStrategy (RING)"}
        for peer in chosen:
            print("| %s | %.0f | %.2f | | | |" % (titles[peer], rates[peer], rates[peer] / best))
        for run in runs:
            rate = statistics.median(r["examples_per_second"] for r in rows[run])
            comm = statistics.median(r["comm_seconds"] for r in rows[run])
            hidden = statistics.median(r["hidden"] for r in rows[run])
            print("| kiln launch, --bucket-bytes=%s%s | %.0f | %s | %d | %.2f | %.0f%% |" % (
                run[0], ", --collectives gloo" if run[1] == "gloo" else "", rate,
                "%.2f" % (rate / best) if best else "", rows[run][0]["bytes_per_step"],
                comm * 1e3, hidden * 100))


if __name__ == "__main__":
    main()
