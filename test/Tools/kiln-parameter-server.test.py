"""The multi-process cases of kiln-parameter-server.test.

    python3 kiln-parameter-server.test.py KILN WORKDIR HASH_ARTIFACT FIXED_ARTIFACT CASE...

HASH_ARTIFACT and FIXED_ARTIFACT are wide&deep at batch 64 compiled for
parameter servers, with and without hash tables. Each case starts kiln
processes on 127.0.0.1, bounds every wait, kills whatever it started (pass
or fail) and prints "CASE: ok" or "CASE: FAILED: why". Standard library only.
"""

import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time

KILN, WORK, HASHED, FIXED = sys.argv[1:5]
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")
started = []


def expect(condition, why):
    if not condition:
        raise AssertionError(why)


def start(args, env=None):
    process = subprocess.Popen([KILN] + args, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    started.append(process)
    return process


def finish(process, seconds):
    """(exit code, stdout + stderr) within SECONDS, else kills it: (None, ...)."""
    try:
        out, err = process.communicate(timeout=seconds)
        return process.returncode, out + err
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        return None, out + err


def launch(artifact, *flags, seconds=120):
    """kiln launch with 2 workers; (exit code, everything it printed)."""
    code, text = finish(start(["launch", artifact, "--workers", "2"] + list(flags)), seconds)
    expect(code == 0, "kiln launch %s exited %s: %s" % (" ".join(flags), code, text))
    return text


def auc_of(text):
    found = re.findall(r"eval at step \d+: loss [0-9.e-]+, auc ([0-9.]+)", text)
    expect(found, "no AUC in: %s" % text)
    return float(found[-1])


def async_auc():
    """Async wide&deep reaches the AUC of sync within 0.01 (a generated click
    data set with a planted model; 200 steps of 2 x 64)."""
    train, held_out = os.path.join(WORK, "ctr_train.tsv"), os.path.join(WORK, "ctr_eval.tsv")
    make = os.path.join(SCRIPTS, "make_ctr_data.py")
    for args in (["--rows", "25600", "--seed", "1", "--out", train],
                 ["--rows", "4096", "--seed", "2", "--model-seed", "1", "--out", held_out]):
        subprocess.run([sys.executable, make, "--dense", "13", "--categorical", "4"] + args,
                       check=True, timeout=120)
    common = ["--ps", "2", "--data", train, "--steps", "200", "--eval-data", held_out]
    sync = auc_of(launch(HASHED, "--sync", *common))
    asynchronous = auc_of(launch(HASHED, "--async", *common))
    expect(sync > 0.8, "sync AUC %.4f: the model did not learn" % sync)
    expect(abs(sync - asynchronous) <= 0.01, "sync AUC %.4f, async %.4f" % (sync, asynchronous))


def rows_held(text):
    """{ps index: rows} from the servers' last lines."""
    return {int(i): int(rows) for i, rows in
            re.findall(r"\[ps:(\d+)\] ps:\d+: done after \d+ updates; held (\d+) rows", text)}


def hash_growth():
    """Hash tables grow as new ids arrive; fixed tables hold every row from
    the start."""
    def held(artifact, steps):
        rows = rows_held(launch(artifact, "--ps", "2", "--data", "synthetic:4096",
                                "--steps", str(steps)))
        expect(sorted(rows) == [0, 1], "no report from both servers: %s" % rows)
        return sum(rows.values())
    short, long = held(HASHED, 2), held(HASHED, 30)
    expect(long > short, "hash tables held %d rows after 2 steps and %d after 30" % (short, long))
    short, long = held(FIXED, 2), held(FIXED, 30)
    expect(long == short, "fixed tables held %d rows after 2 steps and %d after 30" % (short, long))


def task_of(pid):
    with open("/proc/%d/environ" % pid, "rb") as f:
        for entry in f.read().split(b"\0"):
            if entry.startswith(b"TF_CONFIG="):
                task = json.loads(entry[10:])["task"]
                return "%s:%d" % (task["type"], task["index"])
    return None


def children_of(pid):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append(int(entry))
        except OSError:
            pass
    return found


def running(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_ps():
    """Killing ps:1 mid-run: the workers fail within the call deadline
    (--collective-timeout) naming it, kiln launch exits 1 naming it, no
    process is left."""
    metrics = os.path.join(WORK, "kill.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    process = start(["launch", HASHED, "--workers", "2", "--ps", "2", "--data",
                     "synthetic:1024", "--steps", "1000000", "--collective-timeout", "4",
                     "--metrics-out", metrics])
    deadline = time.time() + 60
    while time.time() < deadline:
        if os.path.exists(metrics) and sum(1 for _ in open(metrics)) >= 5:
            break
        if process.poll() is not None:
            raise AssertionError("the launch ended early: %s" % process.communicate())
        time.sleep(0.1)
    else:
        raise AssertionError("no 5 steps within 60 s")
    tasks = {task_of(pid): pid for pid in children_of(process.pid)}
    expect(sorted(tasks) == ["ps:0", "ps:1", "worker:0", "worker:1"], "tasks %s" % sorted(tasks))
    begin = time.time()
    os.kill(tasks["ps:1"], signal.SIGKILL)
    code, text = finish(process, 30)
    took = time.time() - begin
    errors = " | ".join(line for line in text.splitlines() if "error" in line)
    expect(code == 1, "kiln launch exited %s: %s" % (code, errors))
    expect("kiln launch: error: ps:1 was killed by signal 9" in text, errors)
    for worker in ("worker:0", "worker:1"):
        expect(re.search(r"\[%s\] .*error: .*ps:1 at 127\.0\.0\.1:\d+: (pull|push) " % worker,
                         text), errors)
    expect(took < 4 + 10, "took %.1f s" % took)
    alive = [task for task, pid in tasks.items() if running(pid)]
    expect(not alive, "left running: %s" % alive)


def free_ports(count):
    """COUNT ports free now, below the kernel's ephemeral range."""
    ports = []
    while len(ports) < count:
        port = random.randrange(20000, 32000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        if port not in ports:
            ports.append(port)
    return ports


def other_artifact():
    """A worker running another artifact than its servers is refused with one
    line naming the server."""
    worker_port, ps_port = free_ports(2)
    spec = {"cluster": {"worker": ["127.0.0.1:%d" % worker_port],
                        "ps": ["127.0.0.1:%d" % ps_port]}}

    def serve(artifact, task):
        env = dict(os.environ, KILN_CLUSTER_TOKEN="t", OMP_NUM_THREADS="1",
                   TF_CONFIG=json.dumps(dict(spec, task=task)))
        return start(["serve", artifact, "--data", "synthetic:1024", "--steps", "5",
                      "--connect-timeout", "10"], env=env)
    server = serve(HASHED, {"type": "ps", "index": 0})
    worker = serve(FIXED, {"type": "worker", "index": 0})
    code, text = finish(worker, 30)
    expect(code == 1, "worker:0 exited %s: %s" % (code, text))
    expect(re.search(r"error: ps:0 at 127\.0\.0\.1:%d refused worker 0: another artifact "
                     r"\(checksum [0-9a-f]{16}, the server's [0-9a-f]{16}\)" % ps_port, text), text)
    expect(text.count("\n") == 1, "not one line: %r" % text)
    code, text = finish(server, 30)
    expect(code is not None, "ps:0 did not stop when its cluster ended: %s" % text)


CASES = {
    "async-auc": async_auc,
    "hash-growth": hash_growth,
    "kill-ps": kill_ps,
    "other-artifact": other_artifact,
}

status = 0
for name in sys.argv[5:]:
    try:
        CASES[name]()
        print("%s: ok" % name)
    except (AssertionError, subprocess.SubprocessError) as e:
        print("%s: FAILED: %s" % (name, e))
        status = 1
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.communicate()
        started.clear()
sys.exit(status)
