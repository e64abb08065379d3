#!/usr/bin/env python3
"""Compares the per-step losses of a kiln run with a reference's.

    python3 scripts/compare_losses.py EXPECTED.jsonl ACTUAL.jsonl [--steps 50] [--rtol 1e-4]
        [--mean-rtol 2e-5] [--first-step 1] [--key loss]

Both files hold one JSON object per line; lines with a "loss" give the loss
of their "step" (kiln run --metrics-out writes these, and so does
scripts/train_reference.py for the fixtures in test/Inputs/agreement/, whose
"loss" is PyTorch's float64 curve). Steps 1..N must be in both. Prints the
worst step's relative difference |actual - expected| / |expected| and the
mean over the steps; exits 1 when a step is missing, any step differs by more
than --rtol (every such step is listed) or, with --mean-rtol, the mean is
beyond it (a bias every step stays under --rtol with). --key compares
another field of the lines instead ("eval_loss", "eval_accuracy": an
evaluation's). Standard library only: test/Tools/kiln-agreement.test runs it.
"""

import argparse
import json
import os
import sys


def read_losses(path, key="loss"):
    """{step: value} of the lines that carry `key` (the loss)."""
    losses = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as e:
                raise SystemExit("%s:%d: error: not JSON: %s" % (path, number, e))
            if key in record:
                losses[record["step"]] = float(record[key])
    return losses


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("expected")
    parser.add_argument("actual")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--first-step", type=int, default=1,
                        help="the first step compared (a restored run's first)")
    parser.add_argument("--rtol", type=float, default=1e-4,
                        help="bound of every step's relative difference")
    parser.add_argument("--mean-rtol", type=float,
                        help="bound of the mean relative difference over the steps")
    parser.add_argument("--key", default="loss",
                        help="the field compared (default: loss)")
    args = parser.parse_args()

    name = os.path.splitext(os.path.basename(args.expected))[0]
    expected = read_losses(args.expected, args.key)
    actual = read_losses(args.actual, args.key)
    missing = [(path, step) for path, losses in ((args.expected, expected),
                                                 (args.actual, actual))
               for step in range(args.first_step, args.steps + 1) if step not in losses]
    if missing:
        path, step = missing[0]
        print("%s: error: %s has no %s for step %d (%d steps missing)"
              % (name, path, args.key, step, len(missing)))
        return 1

    differences = []
    for step in range(args.first_step, args.steps + 1):
        e, a = expected[step], actual[step]
        relative = abs(a - e) / abs(e) if e != 0 else abs(a)
        if relative != relative:  # NaN
            relative = float("inf")
        differences.append((relative, step, e, a))
    worst = max(differences)
    mean = sum(d[0] for d in differences) / len(differences)
    bad = [d for d in differences if d[0] > args.rtol]
    for relative, step, e, a in bad:
        print("%s: step %d: %s %.9g, expected %.9g: relative difference %.3g "
              "exceeds %g" % (name, step, args.key, a, e, relative, args.rtol))
    mean_bad = args.mean_rtol is not None and not mean <= args.mean_rtol
    if mean_bad:
        print("%s: mean relative difference %.3g exceeds %g"
              % (name, mean, args.mean_rtol))
    failed = bad or mean_bad
    relative, step, e, a = worst
    tolerance = "tolerance %g" % args.rtol
    if args.mean_rtol is not None:
        tolerance += ", mean %g" % args.mean_rtol
    print("%s: %s: %d steps, worst relative difference %.2e at step %d "
          "(%s %.9g, expected %.9g), mean %.2e; %s"
          % (name, "FAILED" if failed else "agree", args.steps, relative, step, args.key, a,
             e, mean, tolerance))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
