#!/usr/bin/env python3
"""Checks with TensorBoard itself that kiln's event files read back.

usage: check_tensorboard_events.py LOGDIR TAG STEPS

Loads LOGDIR with TensorBoard's EventAccumulator and checks that TAG has the
scalars test/unit/MetricsTensorBoardWriter.cpp writes: steps 0..STEPS-1, the
value at step s being 1 / (s + 1) as a float32, and that the file announces
file_version "brain.Event:2". Exits 0 when they do, 1 when they do not, and
77 (ctest's skip code) when python3 has no tensorboard.
"""

import struct
import sys


def float32(value):
    return struct.unpack("<f", struct.pack("<f", value))[0]


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    logdir, tag, steps = argv[1], argv[2], int(argv[3])
    try:
        from tensorboard.backend.event_processing.event_accumulator import (
            EventAccumulator,
        )
    except ImportError:
        print("tensorboard is not installed for python3")
        return 77

    accumulator = EventAccumulator(logdir, size_guidance={"scalars": 0})
    accumulator.Reload()
    problems = []
    if accumulator.file_version != 2.0:
        problems.append("file_version %r, expected 2.0" % accumulator.file_version)
    tags = accumulator.Tags()["scalars"]
    if tag not in tags:
        problems.append("no scalars tagged %r (tags: %r)" % (tag, tags))
    else:
        events = accumulator.Scalars(tag)
        got_steps = [event.step for event in events]
        if got_steps != list(range(steps)):
            problems.append("steps %r, expected 0..%d" % (got_steps, steps - 1))
        for event in events:
            expected = float32(1.0 / (event.step + 1))
            if event.value != expected:
                problems.append(
                    "step %d: value %r, expected %r" % (event.step, event.value, expected)
                )
            if not 1.6e9 < event.wall_time < 1e11:
                problems.append("step %d: wall_time %r" % (event.step, event.wall_time))
    for problem in problems:
        print("%s: error: %s" % (logdir, problem), file=sys.stderr)
    if not problems:
        print("%s: %d scalars tagged %r read back by TensorBoard" % (logdir, steps, tag))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
