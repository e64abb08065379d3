#!/usr/bin/env python3
"""PyTorch DDP (gloo backend) as bench/dp_bench.py's peer: one process of a
data-parallel job training a bench workload (bench/peers/PROTOCOL.md's
folder) the way bench/peers/torch_peer.py's eager variant does, wrapped in
DistributedDataParallel.

    PYTHON bench/peers/torch_ddp.py --workload W --rank R --world N --port P
        [--threads T] [--bucket-mb 25] [--steps S] [--warmup K]

Rank r trains batch (N k + r) of the workload's batches at global step k
(its block of the global batch, as Kiln's replicas do); DDP averages the
gradients (its buckets overlap the backward pass). Rank 0 prints one JSON
line: the seconds of the timed steps, examples/s over the job, the final
loss of its own batch.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Workload  # noqa: E402
import torch_peer  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workload", required=True)
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--bucket-mb", type=float, default=25)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % args.port,
                            rank=args.rank, world_size=args.world)
    workload = Workload(args.workload)
    module, names, feeds = torch_peer.build_module(torch, workload, set())
    model = DistributedDataParallel(module, bucket_cap_mb=args.bucket_mb)
    opt = workload.optimizer
    kind = opt["kind"]
    params = list(model.parameters())
    lr = workload.learning_rate(1)
    betas, eps = (opt["beta1"], opt["beta2"]), opt["epsilon"]
    if kind == "adam":
        optimizer = torch.optim.Adam(params, lr=lr, betas=betas, eps=eps, fused=True)
    elif kind == "adamw":
        optimizer = torch.optim.AdamW(params, lr=lr, betas=betas, eps=eps,
                                      weight_decay=opt["weight_decay"], fused=True)
    elif kind == "momentum":
        optimizer = torch.optim.SGD(params, lr=lr, momentum=opt["momentum"], fused=True)
    elif kind == "adagrad":
        optimizer = torch.optim.Adagrad(params, lr=lr, eps=eps, fused=True)
    else:
        optimizer = torch.optim.SGD(params, lr=lr, fused=True)
    clip = float(opt.get("clip_global_norm") or 0.0)
    batches = [tuple(torch.from_numpy(b[name]) for name in feeds) for b in workload.batches]

    def step(t):
        batch = batches[(args.world * (t - 1) + args.rank) % len(batches)]
        for group in optimizer.param_groups:
            group["lr"] = workload.learning_rate(t)
        optimizer.zero_grad(set_to_none=True)
        loss = model(*batch)
        loss.backward()
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(params, clip, foreach=True)
        optimizer.step()
        return loss.item()

    for t in range(1, args.warmup + 1):
        step(t)
    dist.barrier()
    start = time.perf_counter()
    for t in range(args.warmup + 1, args.warmup + args.steps + 1):
        loss = step(t)
    dist.barrier()
    seconds = time.perf_counter() - start
    if args.rank == 0:
        batch = len(batches[0][0])
        print(json.dumps({"seconds": seconds, "steps": args.steps,
                          "examples_per_second": args.steps * batch * args.world / seconds,
                          "loss": loss, "torch": torch.__version__}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
