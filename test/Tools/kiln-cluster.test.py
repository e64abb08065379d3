"""The multi-process cases of kiln-cluster.test.

    python3 kiln-cluster.test.py KILN WORKDIR ARTIFACT OTHER_ARTIFACT CASE...

Each case starts kiln processes on 127.0.0.1, bounds every wait, kills
whatever it started (pass or fail) and prints "CASE: ok" or "CASE: FAILED:
why". Standard library only.
"""

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time

KILN, WORK, ARTIFACT, OTHER = sys.argv[1:5]
started = []


def free_ports(count):
    """COUNT ports free now, below the kernel's ephemeral range (32768 and
    up), where its picks for other sockets cannot take them first."""
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


def serve(index, ports, token, artifact=ARTIFACT, extra=()):
    """Starts `kiln serve` as worker INDEX of a cluster on PORTS."""
    env = dict(os.environ)
    env["TF_CONFIG"] = json.dumps({
        "cluster": {"worker": ["127.0.0.1:%d" % p for p in ports]},
        "task": {"type": "worker", "index": index}})
    env["KILN_CLUSTER_TOKEN"] = token
    env["OMP_NUM_THREADS"] = "1"
    process = subprocess.Popen(
        [KILN, "serve", artifact, "--data", "synthetic:512", "--steps", "2000",
         "--collective-timeout", "4", "--connect-timeout", "10", *extra],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started.append(process)
    return process


def finish(process, seconds):
    """(exit code, stderr) within SECONDS, else kills it: (None, stderr)."""
    try:
        _, err = process.communicate(timeout=seconds)
        return process.returncode, err
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        return None, err


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


def task_index(pid):
    with open("/proc/%d/environ" % pid, "rb") as f:
        for entry in f.read().split(b"\0"):
            if entry.startswith(b"TF_CONFIG="):
                return json.loads(entry[10:])["task"]["index"]
    return None


def expect(condition, why):
    if not condition:
        raise AssertionError(why)


def kill_worker():
    """Killing worker:1 mid-run: the others exit within the collective
    timeout naming it, kiln launch exits 1 naming it, no process is left."""
    metrics = os.path.join(WORK, "kill.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    launch = subprocess.Popen(
        [KILN, "launch", ARTIFACT, "--workers", "3", "--data", "synthetic:512",
         "--steps", "100000", "--collective-timeout", "5", "--metrics-out", metrics],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started.append(launch)
    deadline = time.time() + 60
    while time.time() < deadline:
        if os.path.exists(metrics) and sum(1 for _ in open(metrics)) >= 5:
            break
        if launch.poll() is not None:
            raise AssertionError("the launch ended early: %s" % launch.communicate()[1])
        time.sleep(0.1)
    else:
        raise AssertionError("no 5 steps within 60 s")
    workers = {task_index(pid): pid for pid in children_of(launch.pid)}
    expect(sorted(workers) == [0, 1, 2], "tasks %s" % sorted(workers))
    begin = time.time()
    os.kill(workers[1], signal.SIGKILL)
    code, err = finish(launch, 30)
    took = time.time() - begin
    expect(code == 1, "kiln launch exited %s" % code)
    expect("kiln launch: error: worker:1 was killed by signal 9" in err, err)
    for other in (0, 2):
        expect("[worker:%d] kiln: error: worker:1 was lost" % other in err, err)
    expect(took < 5 + 10, "took %.1f s" % took)
    alive = [pid for pid in workers.values() if os.path.exists("/proc/%d" % pid)
             and open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] != "Z"]
    expect(not alive, "left running: %s" % alive)


def refused(case, message, **worker1):
    """worker:1 is refused by the chief (worker:0) with MESSAGE."""
    ports = free_ports(2)
    chief = serve(0, ports, "right-token")
    worker = serve(1, ports, worker1.pop("token", "right-token"), **worker1)
    code, err = finish(worker, 30)
    expect(code == 1, "worker:1 exited %s: %s" % (code, err))
    expect(message in err, err)
    expect(err.count("\n") == 1, "not one line: %r" % err)
    chief.kill()
    finish(chief, 10)


def port_in_use():
    """The chief's port is taken: one error line naming it."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        chief = serve(0, [port, free_ports(1)[0]], "t")
        code, err = finish(chief, 30)
        expect(code == 1, "exited %s" % code)
        expect("kiln: error: worker:0: cannot serve the coordinator on 127.0.0.1:%d (the port is "
               "in use, or the address is not this host's)\n" % port == err, err)
    finally:
        holder.close()


def two_hosts():
    """worker:0 and worker:1 on two hosts: network namespaces of this test,
    joined by a veth pair (10.77.0.1 and 10.77.0.2), each task listening
    on its own namespace's address. Their losses follow one process's."""
    if os.geteuid() != 0:
        print("two-hosts: skipped: creating network namespaces needs root")
        return "skipped"
    suffix = str(os.getpid())
    names = ["kiln-a-" + suffix, "kiln-b-" + suffix]
    addresses = ["10.77.0.1", "10.77.0.2"]

    def ip(*args, namespace=None):
        prefix = ["ip", "netns", "exec", namespace] if namespace else []
        return subprocess.run(prefix + ["ip", *args], capture_output=True, text=True)

    made = []
    try:
        for name in names:
            result = ip("netns", "add", name)
            if result.returncode != 0:
                print("two-hosts: skipped: ip netns add failed: %s" % result.stderr.strip())
                return "skipped"
            made.append(name)
        link = "kv" + suffix[-8:]
        for args in (["link", "add", link + "a", "type", "veth", "peer", "name", link + "b"],
                     ["link", "set", link + "a", "netns", names[0]],
                     ["link", "set", link + "b", "netns", names[1]]):
            result = ip(*args)
            expect(result.returncode == 0, "ip %s: %s" % (" ".join(args), result.stderr))
        for name, device, address in zip(names, (link + "a", link + "b"), addresses):
            for args in (["addr", "add", address + "/24", "dev", device],
                         ["link", "set", device, "up"], ["link", "set", "lo", "up"]):
                result = ip(*args, namespace=name)
                expect(result.returncode == 0, "ip %s: %s" % (" ".join(args), result.stderr))
        spec = {"cluster": {"worker": ["%s:2222" % a for a in addresses]}}
        metrics = os.path.join(WORK, "two-hosts.jsonl")
        tasks = []
        for index, name in enumerate(names):
            env = dict(os.environ)
            env["TF_CONFIG"] = json.dumps(dict(spec, task={"type": "worker", "index": index}))
            env["KILN_CLUSTER_TOKEN"] = "two-hosts"
            env["OMP_NUM_THREADS"] = "1"
            process = subprocess.Popen(
                ["ip", "netns", "exec", name, KILN, "serve", ARTIFACT, "--data", "synthetic:512",
                 "--steps", "20", "--collective-timeout", "20", "--metrics-out", metrics],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            started.append(process)
            tasks.append(process)
        for index, process in enumerate(tasks):
            code, err = finish(process, 60)
            expect(code == 0, "worker:%d exited %s: %s" % (index, code, err))
        # WORK/one.jsonl is one process at the global batch (kiln-cluster.test).
        compare = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                               "scripts", "compare_losses.py")
        result = subprocess.run([sys.executable, compare, os.path.join(WORK, "one.jsonl"),
                                 metrics, "--steps", "20", "--rtol", "1e-5"],
                                capture_output=True, text=True)
        expect(result.returncode == 0, result.stdout)
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.communicate()
        for name in made:
            ip("netns", "del", name)
    return "ok"


def make_certificates(folder):
    """A certificate authority and, signed by it, a certificate for
    127.0.0.1 that every task uses (server and client). False when the
    openssl command is missing."""
    if shutil.which("openssl") is None:
        return False
    ext = os.path.join(folder, "san.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    commands = [
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=kiln-ca",
         "-keyout", "ca.key", "-out", "ca.pem"],
        ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout",
         "task.key", "-out", "task.csr"],
        ["x509", "-req", "-in", "task.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
         "-CAcreateserial", "-days", "2", "-extfile", ext, "-out", "task.pem"]]
    for command in commands:
        result = subprocess.run(["openssl"] + command, cwd=folder, capture_output=True, text=True)
        expect(result.returncode == 0, "openssl %s: %s" % (command[0], result.stderr))
    return True


def tls():
    """The coordinator's RPCs over TLS with client certificates: a cluster
    of two whose tasks present certificates trains; a task without them is
    not let in."""
    folder = os.path.join(WORK, "tls")
    os.makedirs(folder, exist_ok=True)
    if not make_certificates(folder):
        print("tls: skipped: no openssl command to make certificates with")
        return "skipped"
    flags = ("--tls-cert", os.path.join(folder, "task.pem"), "--tls-key",
             os.path.join(folder, "task.key"), "--tls-ca", os.path.join(folder, "ca.pem"))
    ports = free_ports(2)
    # TLS handshakes are slow on a loaded machine: a longer rendezvous.
    tasks = [serve(i, ports, "t", extra=flags + ("--steps", "5", "--connect-timeout", "30"))
             for i in range(2)]
    for index, process in enumerate(tasks):
        code, err = finish(process, 60)
        expect(code == 0, "worker:%d over TLS exited %s: %s" % (index, code, err))
    ports = free_ports(2)
    chief = serve(0, ports, "t", extra=flags)
    plain = serve(1, ports, "t", extra=("--connect-timeout", "2"))
    code, err = finish(plain, 30)
    expect(code == 1 and "worker:1: cannot reach the coordinator worker:0" in err,
           "a task without TLS: exit %s: %s" % (code, err))
    chief.kill()
    finish(chief, 10)


CASES = {
    "kill-worker": kill_worker,
    "wrong-token": lambda: refused(
        "wrong-token", "kiln: error: worker:1: worker:0 at 127.0.0.1:", token="wrong-token"),
    "wrong-token-message": lambda: refused(
        "wrong-token", "refused worker:1: wrong cluster token (KILN_CLUSTER_TOKEN)",
        token="wrong-token"),
    "other-artifact": lambda: refused(
        "other-artifact", "refused worker:1: worker:1 runs another artifact (checksum ",
        artifact=OTHER),
    "other-replicas": lambda: refused(
        "other-replicas", "refused worker:1: worker:1 runs 2 replicas, the chief 1",
        extra=("--replicas", "2")),
    "port-in-use": port_in_use,
    "two-hosts": two_hosts,
    "tls": tls,
}

status = 0
for name in sys.argv[5:]:
    try:
        if CASES[name]() != "skipped":
            print("%s: ok" % name)
    except AssertionError as e:
        print("%s: FAILED: %s" % (name, e))
        status = 1
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.communicate()
        started.clear()
sys.exit(status)
