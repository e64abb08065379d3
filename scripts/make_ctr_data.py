#!/usr/bin/env python3
"""Writes a Criteo-layout TSV of synthetic click data with a planted model.

Each line: a 0/1 label, DENSE dense values, CATEGORICAL categorical values
(8 hex digits, as in Criteo's files), tab-separated, no header. The label is
drawn from a logistic model planted in the data, so a model trained on it
(logistic regression, wide & deep) reaches an AUC clearly above 0.5:

    z = BIAS + SCALE * (sum_j w[j] * dense[j] + sum_c effect[c][value_c])
                     / sqrt(DENSE + CATEGORICAL)
    label = 1 with probability sigmoid(z)

Dense values are N(0, 1), rounded to 4 decimals (a fraction --missing of them
left empty: the readers take 0); w[j] are N(0, 1). Column c's values are
indices in [0, --vocab) drawn log-uniformly (a Zipf-like law: few values are
frequent), each with a fixed N(0, 1) effect, written as 8 hex digits of a
hash of (c, index). Standard library only; the same --seed gives the same
file on every Python 3.

    scripts/make_ctr_data.py --rows 100000 --out ctr.tsv
    kiln run ... (docs/runtime.md, "Training data")
"""

import argparse
import hashlib
import math
import random
import sys

BIAS = -1.0
SCALE = 2.5


def value_text(column, index):
    digest = hashlib.blake2b(f"{column}:{index}".encode(), digest_size=4)
    return digest.hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--dense", type=int, default=13)
    parser.add_argument("--categorical", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=1000,
                        help="distinct values per categorical column")
    parser.add_argument("--missing", type=float, default=0.0,
                        help="fraction of dense fields left empty")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model-seed", type=int, default=None,
                        help="seed of the planted model (default: --seed); give a held-out "
                             "set the training set's model seed and another --seed")
    parser.add_argument("--out", required=True, help="output path, - for stdout")
    args = parser.parse_args()
    if args.rows < 0 or args.dense < 0 or args.categorical < 0 or args.vocab < 1:
        parser.error("--rows, --dense, --categorical must be >= 0, --vocab >= 1")

    model_seed = args.seed if args.model_seed is None else args.model_seed
    model = random.Random(f"kiln-ctr-model-{model_seed}")
    weights = [model.gauss(0.0, 1.0) for _ in range(args.dense)]
    effects = [[model.gauss(0.0, 1.0) for _ in range(args.vocab)]
               for _ in range(args.categorical)]
    texts = [[value_text(c, i) for i in range(args.vocab)]
             for c in range(args.categorical)]
    norm = SCALE / math.sqrt(max(1, args.dense + args.categorical))
    log_vocab = math.log(args.vocab + 1)

    rows = random.Random(f"kiln-ctr-rows-{args.seed}")
    out = sys.stdout if args.out == "-" else open(args.out, "w", newline="\n")
    try:
        for _ in range(args.rows):
            fields = []
            total = 0.0
            for j in range(args.dense):
                x = round(rows.gauss(0.0, 1.0), 4)
                if args.missing and rows.random() < args.missing:
                    fields.append("")
                    continue
                total += weights[j] * x
                fields.append(repr(x))
            for c in range(args.categorical):
                index = min(int(math.exp(rows.random() * log_vocab)) - 1,
                            args.vocab - 1)
                total += effects[c][index]
                fields.append(texts[c][index])
            z = BIAS + norm * total
            label = 1 if rows.random() < 1.0 / (1.0 + math.exp(-z)) else 0
            out.write(str(label) + "\t" + "\t".join(fields) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()


if __name__ == "__main__":
    main()
