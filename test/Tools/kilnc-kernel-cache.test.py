"""Flips byte 100 of every entry of a kernel cache folder (standard library
only): kilnc-kernel-cache.test's damaged entries, and with SUFFIX `kiln`
kilnc-artifact-cache.test's.

    kilnc-kernel-cache.test.py CACHE_DIR [SUFFIX]
"""

import glob
import os
import sys

suffix = sys.argv[2] if len(sys.argv) > 2 else "so"
for path in glob.glob(os.path.join(sys.argv[1], "*." + suffix)):
    data = bytearray(open(path, "rb").read())
    data[100] ^= 0xFF
    with open(path, "wb") as f:
        f.write(data)
