#!/usr/bin/env python3
"""Runs a command in a cgroup of its own with a CPU quota, then removes it.

    run_in_cpu_quota.py --cores N -- COMMAND [ARG]...   # exit status: the command's
    run_in_cpu_quota.py --probe                          # 0 where a cgroup can be made

For kiln's tests of thread choice under a container's CPU limit
(test/Tools/kiln-cpu-quota.test). Needs a writable cpu controller: cgroup v1's
/sys/fs/cgroup/cpu (or cpu,cpuacct), or cgroup v2 with "cpu" in the root's
cgroup.subtree_control. The cgroup is removed whatever the command does
(it holds no process once the command has ended; killed, this script kills the
command first).
"""
import argparse
import os
import signal
import subprocess
import sys

V2 = "/sys/fs/cgroup"
PERIOD_US = 100000


def hierarchy():
    """(folder where the cgroup goes, 'v1' or 'v2'), or None."""
    try:
        with open(os.path.join(V2, "cgroup.subtree_control")) as f:
            if "cpu" in f.read().split() and os.access(V2, os.W_OK):
                return V2, "v2"
    except OSError:
        pass
    for name in ("cpu", "cpu,cpuacct"):
        folder = os.path.join(V2, name)
        if os.path.isfile(os.path.join(folder, "cpu.cfs_quota_us")) and os.access(folder, os.W_OK):
            return folder, "v1"
    return None


def make(cores):
    """Creates the cgroup with a quota of `cores` cores; returns its folder."""
    found = hierarchy()
    if not found:
        raise OSError("no writable cpu cgroup controller")
    parent, version = found
    folder = os.path.join(parent, "kiln-test-%d" % os.getpid())
    os.mkdir(folder)
    try:
        if version == "v2":
            with open(os.path.join(folder, "cpu.max"), "w") as f:
                f.write("%d %d" % (cores * PERIOD_US, PERIOD_US))
        else:
            with open(os.path.join(folder, "cpu.cfs_period_us"), "w") as f:
                f.write(str(PERIOD_US))
            with open(os.path.join(folder, "cpu.cfs_quota_us"), "w") as f:
                f.write(str(cores * PERIOD_US))
    except OSError:
        os.rmdir(folder)
        raise
    return folder


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--probe", action="store_true")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    try:
        folder = make(args.cores)
    except OSError as e:
        print("run_in_cpu_quota.py: cannot make a cgroup: %s" % e, file=sys.stderr)
        return 1
    try:
        if args.probe:
            return 0
        procs = os.path.join(folder, "cgroup.procs")

        def join():
            with open(procs, "w") as f:
                f.write(str(os.getpid()))

        child = subprocess.Popen(args.command, preexec_fn=join)

        def stop(signum, frame):
            child.kill()
            raise SystemExit(128 + signum)

        # Killed (a test's timeout), the command goes first, then the cgroup.
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, stop)
        try:
            return child.wait(timeout=600)
        except subprocess.TimeoutExpired:
            print("run_in_cpu_quota.py: the command ran past 600 s", file=sys.stderr)
            child.kill()
            return 1
        finally:
            if child.poll() is None:
                child.kill()
            child.wait()
    finally:
        os.rmdir(folder)


if __name__ == "__main__":
    sys.exit(main())
