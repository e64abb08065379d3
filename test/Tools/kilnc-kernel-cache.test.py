"""Flips byte 100 of every entry of a kernel cache folder (standard library
only): kilnc-kernel-cache.test's damaged entries.

    kilnc-kernel-cache.test.py CACHE_DIR
"""

import glob
import os
import sys

for path in glob.glob(os.path.join(sys.argv[1], "*.so")):
    data = bytearray(open(path, "rb").read())
    data[100] ^= 0xFF
    with open(path, "wb") as f:
        f.write(data)
