"""Writes the bad multi-hot archives of kiln-embedding-bag.test into OUT
from the committed padded and ragged fixtures, with the standard library only:

    kiln-embedding-bag.test.py PADDED.npz RAGGED.npz OUT

  outside.npz    padded; tags of row 3 holds 5000 (the table has 5000 rows)
  minus-two.npz  padded; genres of row 1 starts with -2 (only -1 pads)
  long-row.npz   ragged; genres' row 1 holds 4 ids (the input takes 3)
  bad-splits.npz ragged; genres' last row split is past its 4 values
"""

import ast
import struct
import sys
import zipfile


def read_members(path):
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def data_offset(npy):
    """Where a version 1 .npy's data starts, and its header dictionary."""
    length = struct.unpack("<H", npy[8:10])[0]
    return 10 + length, ast.literal_eval(npy[10:10 + length].decode("latin1"))


def set_int64(npy, index, value):
    start, header = data_offset(npy)
    assert header["descr"] == "<i8", header
    at = start + 8 * index
    return npy[:at] + struct.pack("<q", value) + npy[at + 8:]


def int64_npy(values):
    header = "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") +
            struct.pack("<%dq" % len(values), *values))


def write(path, members):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def main():
    padded, ragged, out = sys.argv[1], sys.argv[2], sys.argv[3]
    members = read_members(padded)
    outside = dict(members)
    outside["tags.npy"] = set_int64(members["tags.npy"], 2 * 4 + 1, 5000)
    write(out + "/outside.npz", outside)
    minus = dict(members)
    minus["genres.npy"] = set_int64(members["genres.npy"], 0, -2)
    write(out + "/minus-two.npz", minus)

    members = read_members(ragged)
    _, header = data_offset(members["genres.row_splits.npy"])
    rows = header["shape"][0] - 1
    long_row = dict(members)
    long_row["genres.values.npy"] = int64_npy([1, 2, 3, 4])
    long_row["genres.row_splits.npy"] = int64_npy([0] + [4] * rows)
    write(out + "/long-row.npz", long_row)
    bad_splits = dict(long_row)
    bad_splits["genres.row_splits.npy"] = int64_npy([0] + [0] * (rows - 1) + [5])
    write(out + "/bad-splits.npz", bad_splits)


if __name__ == "__main__":
    main()
