#!/usr/bin/env python3
"""Writes the .npz fixtures of the data reader's tests (test/unit/DataNpzTest)
to test/Inputs/data/: archives numpy itself wrote, so that the reader is
checked against numpy's own zip layout, not only against archives the tests
build byte by byte.

A development script, never run by the tests (they read the committed files).
Run from the repository root with a Python that has numpy:

    /work/venv/bin/python scripts/make_npz_fixtures.py

Files, each holding the same three arrays of 5 rows (dense <f8 [5, 2],
site <i8 [5], click |b1 [5]) and a text member notes.txt:
  ctr_savez.npz             np.savez: members stored
  ctr_savez_compressed.npz  np.savez_compressed: members deflated
numpy writes every member with a ZIP64 extra field in its local header
(zipfile's force_zip64); the archives themselves are small, not ZIP64.
Deterministic: fixed values, and zip timestamps are pinned (numpy stamps
members with the current time).
"""

import io
import os
import sys
import time
import zipfile

import numpy as np

OUT = os.path.join("test", "Inputs", "data")

ARRAYS = {
    "dense": np.array([[1.5, -2.0], [3.0, 4.0], [5.0, 6.25], [0.0, -0.5],
                       [7.0, 8.0]], dtype=np.float64),
    "site": np.array([7, 0, 9, 3, 1], dtype=np.int64),
    "click": np.array([True, False, True, False, True]),
}


def pinned_time():
    """zipfile stamps members from time.localtime(time.time())."""
    real = time.localtime
    time.localtime = lambda *args: real(315532800)  # 1980-01-01
    return real


def write(filename, save):
    buffer = io.BytesIO()
    real = pinned_time()
    try:
        save(buffer, **ARRAYS)
    finally:
        time.localtime = real
    data = buffer.getvalue()
    # A member that is not an array: np.savez cannot write one, so it is
    # appended with zipfile, as a user adding notes to an archive would.
    buffer = io.BytesIO(data)
    with zipfile.ZipFile(buffer, "a") as archive:
        info = zipfile.ZipInfo("notes.txt", date_time=(1980, 1, 1, 0, 0, 0))
        archive.writestr(info, b"five rows of a click-through data set\n")
    data = buffer.getvalue()
    assert len(data) < 8 * 1024, f"{filename} is {len(data)} bytes"
    with open(os.path.join(OUT, filename), "wb") as f:
        f.write(data)


def main():
    if not os.path.isdir(OUT):
        sys.exit(f"run from the repository root ({OUT} not found)")
    write("ctr_savez.npz", np.savez)
    write("ctr_savez_compressed.npz", np.savez_compressed)


if __name__ == "__main__":
    main()
