#!/usr/bin/env python3
"""Runs a compiled model on the inputs a reference archive holds and compares
every output the archive holds with what Kiln fetches.

    python3 scripts/compare_outputs.py KILN_BINARY ARTIFACT REFERENCE.npz [--rtol 1e-5]
    python3 scripts/compare_outputs.py KILN_BINARY ARTIFACT --feed NAME=IN.npy \
        --expect NAME=OUT.npy [--rtol 1e-5]

REFERENCE.npz (written by a fixture script with the framework that made the
model: onnxruntime, PyTorch or TensorFlow) holds `in.NAME` arrays, fed to the
model's inputs NAME, and `out.NAME` arrays, the framework's outputs NAME;
--feed and --expect name such arrays as .npy files instead.
Float outputs agree when |kiln - reference| <= rtol * max|reference| over the
reference's finite elements (the tensor's scale, as in
test/unit/NumericsTest.cpp) and every infinity and NaN of the reference is
one in kiln's output too; integer and bool outputs
must be equal. Prints one line per output; exits 1 if any differs. Standard
library only: the lit tests run it without numpy.
"""

import argparse
import ast
import math
import os
import struct
import subprocess
import sys
import tempfile
import zipfile

FORMATS = {"<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q", "|b1": "?", "<f2": "e",
           "|u1": "B"}


def parse_npy(data, what):
    """(dtype, shape, values) of .npy bytes."""
    if data[:6] != b"\x93NUMPY":
        raise SystemExit("%s: error: not a .npy array" % what)
    major = data[6]
    if major == 1:
        length, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        length, start = struct.unpack("<I", data[8:12])[0], 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    if header["fortran_order"]:
        raise SystemExit("%s: error: Fortran-order arrays are not supported" % what)
    dtype = header["descr"]
    if dtype not in FORMATS:
        raise SystemExit("%s: error: unsupported dtype %s" % (what, dtype))
    shape = tuple(header["shape"])
    count = 1
    for d in shape:
        count *= d
    body = data[start + length:]
    values = struct.unpack("<%d%s" % (count, FORMATS[dtype]),
                           body[:count * struct.calcsize(FORMATS[dtype])])
    return dtype, shape, values


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kiln")
    parser.add_argument("artifact")
    parser.add_argument("reference", nargs="?")
    parser.add_argument("--feed", action="append", default=[], metavar="NAME=FILE")
    parser.add_argument("--expect", action="append", default=[], metavar="NAME=FILE")
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()

    def read(path):
        with open(path, "rb") as f:
            return f.read()

    if args.reference:
        archive = zipfile.ZipFile(args.reference)
        members = {os.path.splitext(n)[0]: n for n in archive.namelist()}
        inputs = {k[3:]: archive.read(v) for k, v in members.items()
                  if k.startswith("in.")}
        outputs = {k[4:]: archive.read(v) for k, v in members.items()
                   if k.startswith("out.")}
    else:
        inputs = dict((n, read(f)) for n, f in (a.split("=", 1) for a in args.feed))
        outputs = dict((n, read(f)) for n, f in (a.split("=", 1) for a in args.expect))
    if not outputs:
        raise SystemExit("compare_outputs: error: no reference outputs given")
    with tempfile.TemporaryDirectory() as tmp:
        command = [args.kiln, "run", args.artifact]
        for name, data in sorted(inputs.items()):
            path = os.path.join(tmp, "in_%d.npy" % len(command))
            with open(path, "wb") as f:
                f.write(data)
            command.append("--feed=%s=%s" % (name, path))
        fetched = {}
        for name in sorted(outputs):
            fetched[name] = os.path.join(tmp, "out_%d.npy" % len(fetched))
            command.append("--fetch=%s=%s" % (name, fetched[name]))
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            sys.stderr.write(result.stderr)
            raise SystemExit("compare_outputs: error: kiln run failed")
        failed = False
        for name in sorted(outputs):
            _, want_shape, want = parse_npy(outputs[name], name)
            with open(fetched[name], "rb") as f:
                dtype, shape, got = parse_npy(f.read(), fetched[name])
            if shape != want_shape:
                print("%s: FAILED: shape %s, expected %s" % (name, shape, want_shape))
                failed = True
                continue
            if dtype in ("<f4", "<f8", "<f2"):
                # Infinities and NaNs must be where the reference has them;
                # the finite elements agree within rtol of their scale.
                finite = [(a, b) for a, b in zip(got, want) if math.isfinite(b)]
                special = sum(1 for a, b in zip(got, want) if not math.isfinite(b) and
                              not (a == b or (math.isnan(a) and math.isnan(b))))
                scale = max([abs(b) for _, b in finite] + [0.0])
                worst = max([abs(a - b) for a, b in finite] + [0.0])
                ok = special == 0 and worst <= args.rtol * scale
                print("%s: %s: max difference %.3g (scale %.3g)%s"
                      % (name, "agree" if ok else "FAILED", worst, scale,
                         ", %d of the reference's infinities and NaNs missed" % special
                         if special else ""))
            else:
                wrong = sum(1 for a, b in zip(got, want) if a != b)
                ok = wrong == 0
                print("%s: %s: %d of %d elements differ"
                      % (name, "agree" if ok else "FAILED", wrong, len(want)))
            failed |= not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
