#!/usr/bin/env python3
"""Runs a command in a cgroup of its own with a CPU quota, then removes it.

    run_in_cpu_quota.py --cores N -- COMMAND [ARG]...   # exit status: the command's
    run_in_cpu_quota.py --probe                          # 0 where a cgroup can be made

For kiln's tests of thread choice under a container's CPU limit
(test/Tools/kiln-cpu-quota.test). Needs a writable cpu controller: cgroup v1's
/sys/fs/cgroup/cpu (or cpu,cpuacct), or cgroup v2 with "cpu" in the root's
cgroup.subtree_control. The cgroup is removed whatever the command does
with whatever still runs in it (the command and anything it started) killed
first; killed with SIGKILL itself (lit's timeout), the next run removes it.
"""
import argparse
import os
import signal
import subprocess
import sys
import time

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


def empty_and_remove(folder):
    """Kills whatever runs in the cgroup `folder` (the command and anything
    it started), waits for it to be empty (5 s at most), then removes it."""
    procs = os.path.join(folder, "cgroup.procs")
    deadline = time.monotonic() + 5
    while True:
        if not os.path.isdir(folder):
            return  # Removed (by a concurrent sweep).
        try:
            with open(procs) as f:
                # 0: a process outside this PID namespace, never signalled.
                pids = [int(line) for line in f if line.strip() and int(line) > 0]
        except OSError:
            pids = []
        if not pids:
            try:
                os.rmdir(folder)
                return
            except FileNotFoundError:
                return
            except OSError:
                pass  # Busy for a moment after its last process ends.
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if time.monotonic() > deadline:
            print("run_in_cpu_quota.py: could not remove %s" % folder, file=sys.stderr)
            return
        time.sleep(0.05)


def namespace():
    """This PID namespace's identity: the sweep only touches cgroups made
    in it (a cgroup tree may be shared with other containers)."""
    return os.stat("/proc/self/ns/pid").st_ino


def sweep(parent):
    """Removes the test cgroups an earlier run in this PID namespace left
    (killed with SIGKILL, as lit's timeout does, it could not): those whose
    process is gone."""
    prefix = "kiln-test-%d-" % namespace()
    for name in os.listdir(parent):
        if not name.startswith(prefix):
            continue
        try:
            owner = int(name[len(prefix):].split("-")[0])
        except ValueError:
            continue
        if not os.path.exists("/proc/%d" % owner):
            empty_and_remove(os.path.join(parent, name))


def make(cores):
    """Creates the cgroup with a quota of `cores` cores; returns its folder."""
    found = hierarchy()
    if not found:
        raise OSError("no writable cpu cgroup controller")
    parent, version = found
    sweep(parent)
    folder = os.path.join(parent, "kiln-test-%d-%d-%s" % (namespace(), os.getpid(),
                                                          os.urandom(4).hex()))
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

    # Killed (a test's timeout), the cgroup and what runs in it go first.
    def stop(signum, frame):
        raise SystemExit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stop)
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

        try:
            child = subprocess.Popen(args.command, preexec_fn=join)
        except OSError as e:
            print("run_in_cpu_quota.py: cannot run %s: %s" % (args.command[:1], e),
                  file=sys.stderr)
            return 127
        try:
            return child.wait(timeout=600)
        except subprocess.TimeoutExpired:
            print("run_in_cpu_quota.py: the command ran past 600 s", file=sys.stderr)
            return 1
    finally:
        empty_and_remove(folder)


if __name__ == "__main__":
    sys.exit(main())
