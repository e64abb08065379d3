"""Writes the archives of kiln-npz.test into OUT: python3 kiln-npz.test.py SCRIPTS OUT."""

import sys
import zipfile

sys.path.insert(0, sys.argv[1])
from make_agreement_data import Array  # noqa: E402

out = sys.argv[2]
ids = Array("<i8", (4, 8), [7] * 32).npy()
label = Array("<i4", (4, 8), [1] * 32).npy()


def write(path, method, names=("ids.npy", "label.npy")):
    with zipfile.ZipFile(path, "w", method) as archive:
        archive.writestr(names[0], ids)
        archive.writestr(names[1], label)


for kind, method in (("stored", zipfile.ZIP_STORED), ("deflated", zipfile.ZIP_DEFLATED)):
    path = f"{out}/{kind}.npz"
    write(path, method)
    data = open(path, "rb").read()
    open(f"{out}/{kind}_truncated.npz", "wb").write(data[: len(data) // 2])
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("ids.npy")
    # The member's bytes start after its local header (30 bytes, the name
    # and the extra field); change 4 of them, inside the member.
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    at = start + min(8, info.compress_size // 2)
    damaged = bytearray(data)
    for k in range(4):
        damaged[at + k] ^= 0x5A
    open(f"{out}/{kind}_corrupt.npz", "wb").write(bytes(damaged))
write(f"{out}/escape.npz", zipfile.ZIP_STORED, ("../ids.npy", "label.npy"))
