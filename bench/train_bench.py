#!/usr/bin/env python3
"""Training step time of the examples: Kiln against every peer framework on
the CPU, each at its best, in the same run (docs/performance.md, "Training
steps against every peer"; the protocol is bench/peers/PROTOCOL.md).

A development script, not a test. It needs the built kilnc and kiln, protoc,
and a Python with torch, numpy and protobuf (/work/venv/bin/python on the
development machine); each peer runs under the Python that has its framework
(--python-torch, --python-jax, --python-tf):

    python3 bench/train_bench.py --quick --model mlp      # a few rows, short
    python3 bench/train_bench.py --json train.json --plot train.png
    python3 bench/train_bench.py --model transformer --frameworks kiln,jax \\
        --threads 1,2 --repeats 7 -v
    python3 bench/train_bench.py --model cnn --frameworks kiln \\
        --kiln-variant generated-conv=--conv=generated    # an ablation row

Models: the examples' graph files (mlp, wide_deep, transformer), trained by
every framework, and the user's own models (cnn, encoder: PyTorch modules;
keras_cnn: a Keras model; bench/peers/user_models.py), trained by their
author's framework from the module itself and by Kiln from the framework's
export (bench/workloads.py).

Rows are (framework, variant, threads, wait policy): kiln (one `kiln run` per
repeat; --kiln-variant adds rows of artifacts compiled with more kilnc
flags, shown but never Kiln's best), torch (eager, compile, compile-max-autotune, compile-foreach), jax (jit-dense,
jit-rows) and tf (xla, graph), each peer variant a long-lived process of
bench/peers/FRAMEWORK_peer.py answering {"run": STEPS}. Threads (--threads,
default 1, 2 and the machine's CPUs) reach every row as OMP_NUM_THREADS
and every peer as --threads (JAX and TensorFlow set their pools from it).
Wait policies (--policies, default "default,passive") apply to the OpenMP
users: torch gets a row with OMP_WAIT_POLICY unset and one with it passive;
kiln picks passive itself when it is unset, so it has one row; XLA's and
TensorFlow's thread pools are not OpenMP, so jax and tf have one.

Every row does the same work, written once per model into a workload folder
(PROTOCOL.md): Kiln's initial weights, --batches random batches, the rates
and Adam bias corrections of every step computed here in float64, the
tables Kiln updates by rows. Kiln trains it once first as the reference:
every run of every row must give Kiln's loss within --loss-rtol (1e-5)
relative at every step (a --kiln-variant with --precision=bf16 or fp16:
within --low-precision-rtol, 2e-2), else the row is INVALID (shown with the
first step that differs, never with a time).

Each repeat runs every row once, in an order rotated per repeat, each
training --warmup + --steps steps from the initial weights. A row's time in
a repeat is the median of its steps after the warm-up; its time is the
median over the repeats, with their min and max. Each framework's best is
its fastest valid row; every row is reported, with its peak resident memory
and what its step includes. The CPU's model and vector features and the
CPU steal over the repeats (from /proc/stat) are printed with the tables.
"""

import argparse
import json
import os
import platform
import queue
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import train_reference as ref  # noqa: E402  (Tools)
from workloads import EXPORTED_MODELS, GRAPH_MODELS, make_workload  # noqa: E402

MODELS = GRAPH_MODELS + EXPORTED_MODELS
# Each framework's variants and whether OMP_WAIT_POLICY matters to it.
VARIANTS = {"kiln": ["run"],
            "torch": ["eager", "compile", "compile-max-autotune", "compile-foreach"],
            "jax": ["jit-dense", "jit-rows"],
            "tf": ["xla", "graph"]}
OPENMP = {"kiln", "torch"}
QUICK_SKIPS = {("torch", "compile-max-autotune")}  # minutes of autotuning per model
KILN_INCLUDES = ("`kiln run --data --metrics-out`, batch / examples_per_second of each "
                 "step: reading the batch from the .npz data set, binding the feeds, "
                 "train_step (forward, backward, clipping, the update with the step's "
                 "rate), the loss to the host and writing the metrics line")


# --- Processes: every one started here is killed and reaped on the way out ---

LIVE = set()  # the Popen of every process not yet reaped

# Every row's process is forked by this small launcher rather than by the
# harness: a process's peak RSS (ru_maxrss, what peers report and wait4
# gives) never falls below that of the process it was forked from, and the
# harness holds torch (~500 MB). The launcher (~6 MB) forks the command,
# waits for it and writes its rusage's ru_maxrss (KiB) to the file argv[1];
# it exits with the command's code. Killing the launcher's process group
# kills both.
LAUNCHER = """
import json, os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    json.dump({"maxrss_kib": usage.ru_maxrss}, f)
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def launched(command, rusage_file):
    """`command` run through LAUNCHER, its ru_maxrss written to rusage_file."""
    return [sys.executable, "-I", "-S", "-c", LAUNCHER, rusage_file] + command


def kill_group(proc):
    """SIGKILL to the process and everything it started (its own session),
    then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if proc.returncode is None:
        try:
            proc.wait()
        except ChildProcessError:
            pass
    LIVE.discard(proc)


def kill_all():
    for proc in list(LIVE):
        kill_group(proc)


def stop_on_signal(signum, frame):
    raise KeyboardInterrupt("signal %d" % signum)


class RowFailed(Exception):
    """A row's process hung, died or broke the protocol (killed by then)."""


def tail(path, lines=3):
    """The last non-empty lines of a log, joined with ' | '."""
    try:
        with open(path, errors="replace") as f:
            text = [line.strip() for line in f.read()[-8000:].splitlines() if line.strip()]
    except OSError:
        return ""
    return " | ".join(text[-lines:])


class Peer:
    """A peer process speaking PROTOCOL.md: JSON lines on stdin and stdout,
    stderr to a log. Lines are read on a thread so every wait is bounded."""

    def __init__(self, command, env, log):
        self.log = log
        self.stderr = open(log, "wb")
        self.proc = subprocess.Popen(launched(command, log + ".rusage"),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env, cwd=ROOT,
                                     start_new_session=True)
        LIVE.add(self.proc)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def receive(self, timeout, what):
        """The next JSON object the peer writes within `timeout` seconds;
        other stdout lines are copied to the log and skipped."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.kill()
                raise RowFailed("no %s within %g s (killed)" % (what, timeout))
            if line is None:
                try:
                    code = self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    code = "?"
                self.kill()
                raise RowFailed("exited (code %s) before its %s: %s" % (
                    code, what, tail(self.log) or "no stderr"))
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            if isinstance(message, dict):
                return message
            self.stderr.write(b"[stdout] " + line)
            self.stderr.flush()

    def send(self, message):
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.kill()
            raise RowFailed("exited before the request: %s" % (tail(self.log) or "no stderr"))

    def kill(self):
        kill_group(self.proc)
        self.stderr.close()

    def close(self, timeout=10):
        """{"quit": true}, a bounded wait, then the whole group killed."""
        if self.proc.returncode is None:
            try:
                self.proc.stdin.write(b'{"quit": true}\n')
                self.proc.stdin.close()
                self.proc.wait(timeout=timeout)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()


def run_reaped(command, env, log, timeout):
    """(exit code, peak RSS bytes, timed out) of a process run to its end
    through LAUNCHER (os.wait4's ru_maxrss of the command); killed after
    `timeout` s."""
    rusage_file = log + ".rusage"
    if os.path.exists(rusage_file):
        os.remove(rusage_file)
    with open(log, "ab") as out:
        proc = subprocess.Popen(launched(command, rusage_file), stdin=subprocess.DEVNULL,
                                stdout=out, stderr=out, env=env, cwd=ROOT,
                                start_new_session=True)
    LIVE.add(proc)
    expired = threading.Event()

    def expire():
        expired.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, expire)
    timer.start()
    try:
        _, status, _ = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    LIVE.discard(proc)
    try:  # anything it left behind in its group
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        with open(rusage_file) as f:
            peak = json.load(f)["maxrss_kib"] * 1024
    except (OSError, ValueError, KeyError):
        peak = 0
    return proc.returncode, peak, expired.is_set()


# --- Rows -------------------------------------------------------------------------


class Row:
    """One (framework, variant, threads, policy): its process and results."""

    def __init__(self, framework, variant, threads, policy):
        self.framework, self.variant, self.threads, self.policy = (
            framework, variant, threads, policy)
        self.status = "ok"     # ok, invalid, failed, unavailable
        self.reason = ""
        self.ready = {}        # the peer's ready line (kiln: the same fields)
        self.start_seconds = None
        self.repeats = []      # per repeat: {"seconds": [...], "median": s, "order": i}
        self.losses = None     # the first repeat's
        self.worst = (0.0, None)  # (relative difference from Kiln, step)
        self.bad = None        # {"repeat", "step", "loss", "kiln"} when invalid
        self.peak_rss = 0
        self.peer = None

    @property
    def label(self):
        return "%s %s %dt %s" % (self.framework, self.variant, self.threads, self.policy_label)

    @property
    def policy_label(self):
        if self.framework == "kiln" and self.policy == "default":
            return "default (passive)"
        return self.policy

    def env(self):
        env = dict(os.environ)
        env.pop("OMP_WAIT_POLICY", None)
        if self.policy != "default":
            env["OMP_WAIT_POLICY"] = self.policy
        env["OMP_NUM_THREADS"] = str(self.threads)
        return env

    @property
    def valid(self):
        return self.status == "ok" and bool(self.repeats)

    def time(self):
        """(median, min, max) over the repeats of each repeat's median step."""
        medians = [r["median"] for r in self.repeats]
        return statistics.median(medians), min(medians), max(medians)

    def fail(self, status, reason):
        self.status, self.reason = status, reason
        if self.peer is not None:
            self.peer.close(timeout=2)
            self.peer = None


def make_rows(args, workload):
    """The rows of the frameworks that train the workload (a user's own
    model: kiln and its author's framework)."""
    rows = []
    for framework in args.frameworks:
        if not workload.runs(framework):
            continue
        policies = ["default"]
        if framework in OPENMP:
            policies = list(args.policies)
            if framework == "kiln" and "default" in policies and "passive" in policies:
                policies.remove("passive")  # kiln's default is passive
        for variant in args.variants.get(framework, VARIANTS[framework]):
            for threads in args.threads:
                for policy in policies:
                    rows.append(Row(framework, variant, threads, policy))
    return rows


def start_peer(row, workload, args, logs):
    """Starts the row's peer and waits for its ready line (rows that cannot
    run say why)."""
    if row.framework == "kiln":
        includes = KILN_INCLUDES
        if row.variant != "run":
            includes += "; compiled with kilnc %s" % " ".join(workload.kiln_variants[row.variant])
        row.ready = {"ready": True, "framework": "kiln", "variant": row.variant,
                     "params": workload.params,
                     "compile_seconds": workload.compile_times[row.variant],
                     "versions": {"kiln": kiln_version()}, "includes": includes}
        return
    script = os.path.join(args.peer_dir, "%s_peer.py" % row.framework)
    python = args.python[row.framework]
    if not os.path.exists(script):
        return row.fail("unavailable", "no peer script %s" % script)
    if not os.path.exists(python):
        return row.fail("unavailable", "no Python %s (--python-%s)" % (python, row.framework))
    log = os.path.join(logs, "%s-%s-%dt-%s.log" % (row.framework, row.variant, row.threads,
                                                   row.policy))
    command = [python, script, "--workload", workload.folder, "--variant", row.variant,
               "--threads", str(row.threads)]
    start = time.perf_counter()
    try:
        row.peer = Peer(command, row.env(), log)
        ready = row.peer.receive(args.ready_timeout, "ready line")
    except (RowFailed, OSError) as error:
        return row.fail("failed", "start: %s" % error)
    row.start_seconds = time.perf_counter() - start
    if not ready.get("ready"):
        return row.fail("unavailable", ready.get("reason") or "not ready: %s" % ready)
    row.ready = ready


_KILN_VERSION = []


def kiln_version():
    if not _KILN_VERSION:
        result = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                                capture_output=True, text=True)
        _KILN_VERSION.append(result.stdout.strip() or "unknown")
    return _KILN_VERSION[0]


def run_kiln(workload, threads, policy, args, log, variant="run"):
    """(seconds per step, losses, peak RSS bytes) of one `kiln run` of the
    variant's artifact."""
    steps = workload.steps
    metrics = os.path.join(workload.folder, "metrics.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)  # --metrics-out appends
    row = Row("kiln", "run", threads, policy)
    code, peak, timed_out = run_reaped(
        [workload.tools.kiln, "run", workload.artifacts[variant], "--data", workload.data,
         "--steps", str(steps), "--metrics-out", metrics], row.env(), log, args.run_timeout)
    if timed_out:
        raise RowFailed("kiln run did not finish within %g s (killed)" % args.run_timeout)
    if code != 0:
        raise RowFailed("kiln run exited with code %d: %s" % (code, tail(log)))
    records = [json.loads(line) for line in open(metrics)]
    records = [r for r in records if "examples_per_second" in r]
    seconds = [workload.batch / r["examples_per_second"] if r["examples_per_second"] > 0
               else float("nan") for r in records]
    return seconds, [r["loss"] for r in records], peak


def run_row(row, workload, args, logs):
    """One repeat of a row: (seconds per step, losses, peak RSS bytes)."""
    if row.framework == "kiln":
        log = os.path.join(logs, "kiln-%s-%dt-%s.log" % (row.variant, row.threads, row.policy))
        return run_kiln(workload, row.threads, row.policy, args, log, row.variant)
    row.peer.send({"run": workload.steps})
    answer = row.peer.receive(args.run_timeout, "answer to {\"run\": %d}" % workload.steps)
    if "error" in answer:
        row.peer.close(timeout=2)
        raise RowFailed("error: %s" % answer["error"])
    try:
        return ([float(s) for s in answer["step_seconds"]],
                [float(x) for x in answer["losses"]], int(answer.get("peak_rss_bytes", 0)))
    except (KeyError, TypeError, ValueError) as error:
        row.peer.kill()
        raise RowFailed("malformed answer (%s): %.200s" % (error, json.dumps(answer)))


def first_difference(losses, reference, rtol):
    """(worst relative difference, its step, first step beyond rtol or None);
    steps from 1, every step of the run, a NaN always beyond."""
    worst, worst_step, first = 0.0, None, None
    for t, (loss, expected) in enumerate(zip(losses, reference), 1):
        difference = abs(loss - expected) / abs(expected) if expected else abs(loss)
        if not difference <= rtol and first is None:
            first = t
        if not difference <= worst:
            worst, worst_step = difference, t
    return worst, worst_step, first


# --- The machine ------------------------------------------------------------------


def cpu_info():
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model == (platform.processor() or platform.machine()):
                    model = value.strip()
                elif key == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    features = {name: name in flags for name in ("avx2", "avx512f", "avx512_bf16")}
    features["amx"] = sorted(f for f in flags if f.startswith("amx"))
    return {"model": model, "cpus": os.cpu_count(),
            "cpus_usable": len(os.sched_getaffinity(0)), "features": features}


def describe_cpu(cpu):
    words = ["%s: %s" % (name, "yes" if value else "no")
             for name, value in cpu["features"].items() if name != "amx"]
    words.append("amx: %s" % (" ".join(cpu["features"]["amx"]) or "no"))
    return "%s, %d CPUs (%d usable); %s" % (cpu["model"], cpu["cpus"], cpu["cpus_usable"],
                                            ", ".join(words))


def cpu_ticks():
    """(steal, total) jiffies of all CPUs so far, from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    # user nice system idle iowait irq softirq steal (guest is inside user)
    return fields[7] if len(fields) > 7 else 0, sum(fields[:8])


def steal_between(before, after):
    if not before or not after or after[1] <= before[1]:
        return None
    steal, total = after[0] - before[0], after[1] - before[1]
    return {"steal_ticks": steal, "total_ticks": total, "fraction": steal / total}


def describe_steal(steal):
    if steal is None:
        return "CPU steal unknown (no /proc/stat)"
    return "CPU steal %.2f%% (%d of %d ticks)%s" % (
        100 * steal["fraction"], steal["steal_ticks"], steal["total_ticks"],
        " -- high: the hypervisor took the CPUs, times are noisy"
        if steal["fraction"] > 0.02 else "")


# --- One model --------------------------------------------------------------------


def bench_model(name, tools, args, work):
    folder = os.path.join(work, name)
    logs = os.path.join(folder, "logs")
    os.makedirs(logs, exist_ok=True)
    print("\n== %s: writing the workload (Kiln's initial weights, batches) and compiling" % name,
          flush=True)
    workload = make_workload(name, tools, folder, args)
    print(workload.describe(), flush=True)
    # Kiln's reference losses: one run with the machine's defaults.
    try:
        _, reference, _ = run_kiln(workload, os.cpu_count(), "default", args,
                                   os.path.join(logs, "kiln-reference.log"))
    except RowFailed as error:
        sys.exit("Kiln's reference run failed: %s" % error)
    if len(reference) != workload.steps:
        sys.exit("kiln run wrote %d losses for %d steps" % (len(reference), workload.steps))
    workload.reference = reference
    with open(os.path.join(folder, "kiln_losses.json"), "w") as f:
        json.dump(reference, f)
    print("kiln reference: loss %.6f -> %.6f over %d steps" % (
        reference[0], reference[-1], len(reference)), flush=True)

    rows = make_rows(args, workload)
    for row in rows:
        print("starting %-40s" % row.label, end=" ", flush=True)
        start_peer(row, workload, args, logs)
        if row.status == "ok":
            print("ready (%s)" % ("compile %.1f s" % row.ready["compile_seconds"]
                                  if row.ready.get("compile_seconds") is not None else "ready"),
                  flush=True)
        else:
            print("%s: %s" % (row.status, row.reason), flush=True)

    before = cpu_ticks()
    steal_per_repeat = []
    try:
        for repeat in range(args.repeats):
            active = [row for row in rows if row.status == "ok"]
            if not active:
                break
            shift = (repeat * len(active)) // args.repeats
            order = active[shift:] + active[:shift]
            repeat_ticks, repeat_start = cpu_ticks(), time.perf_counter()
            for position, row in enumerate(order):
                run_one(row, workload, args, logs, repeat, position)
            steal = steal_between(repeat_ticks, cpu_ticks())
            steal_per_repeat.append(steal)
            print("repeat %d/%d: %d rows in %.1f s, %s" % (
                repeat + 1, args.repeats, len(order), time.perf_counter() - repeat_start,
                describe_steal(steal)), flush=True)
    except BaseException:  # Ctrl-C, SIGTERM: no goodbyes
        kill_all()
        raise
    finally:
        for row in rows:
            if row.peer is not None:
                row.peer.close()
                row.peer = None
    steal = steal_between(before, cpu_ticks())
    return workload, rows, steal, steal_per_repeat


def low_precision(row, workload):
    """Whether the row is a Kiln variant compiled with 16-bit products."""
    flags = workload.kiln_variants.get(row.variant, []) if row.framework == "kiln" else []
    return any(f in ("--precision=bf16", "--precision=fp16") for f in flags)


def row_loss_rtol(row, workload, args):
    """A row's largest relative difference from Kiln's f32 loss."""
    return args.low_precision_rtol if low_precision(row, workload) else args.loss_rtol


def run_one(row, workload, args, logs, repeat, position):
    start = time.perf_counter()
    try:
        seconds, losses, rss = run_row(row, workload, args, logs)
        if len(seconds) != workload.steps or len(losses) != workload.steps:
            raise RowFailed("answered %d times and %d losses for %d steps" % (
                len(seconds), len(losses), workload.steps))
    except RowFailed as error:
        row.fail("failed", "repeat %d: %s" % (repeat + 1, error))
        print("  %-40s FAILED: %s" % (row.label, row.reason), flush=True)
        return
    row.peak_rss = max(row.peak_rss, rss)
    worst, worst_step, first = first_difference(losses, workload.reference,
                                                row_loss_rtol(row, workload, args))
    if row.losses is None:
        row.losses = losses
    if worst_step is not None and worst >= row.worst[0]:
        row.worst = (worst, worst_step)
    if first is not None:
        row.bad = {"repeat": repeat + 1, "step": first, "loss": losses[first - 1],
                   "kiln": workload.reference[first - 1],
                   "relative": abs(losses[first - 1] - workload.reference[first - 1])
                   / abs(workload.reference[first - 1] or 1.0)}
        row.fail("invalid", "step %d differs from Kiln's loss: %.7g vs %.7g (%.1e relative, "
                 "repeat %d)" % (first, row.bad["loss"], row.bad["kiln"], row.bad["relative"],
                                 repeat + 1))
        print("  %-40s INVALID: %s" % (row.label, row.reason), flush=True)
        return
    measured = seconds[workload.warmup:]
    row.repeats.append({"median": statistics.median(measured), "seconds": seconds,
                        "position": position})
    if args.verbose:
        print("  repeat %d %-40s %9.3f ms/step  (%.1f s)" % (
            repeat + 1, row.label, 1e3 * row.repeats[-1]["median"],
            time.perf_counter() - start), flush=True)


# --- Results ----------------------------------------------------------------------


def best_rows(rows):
    """{framework: its fastest valid row}, in the order of the rows. Kiln's
    --kiln-variant rows are ablations: shown, never Kiln's best."""
    best = {}
    for row in rows:
        if row.framework == "kiln" and row.variant != "run":
            continue
        if row.valid and (row.framework not in best
                          or row.time()[0] < best[row.framework].time()[0]):
            best[row.framework] = row
    return {f: best[f] for f in dict.fromkeys(r.framework for r in rows) if f in best}


def ms(seconds):
    return "%.3f" % (1e3 * seconds) if seconds < 0.1 else "%.1f" % (1e3 * seconds)


def mib(size):
    return "%.0f" % (size / 2 ** 20) if size else "-"


def status_text(row):
    if row.status == "ok":
        if not row.repeats:
            return "not run"
        return "ok (losses within %.1e)" % row.worst[0]
    if row.status == "invalid":
        return "**INVALID**: %s" % row.reason
    return "%s: %s" % ("FAILED" if row.status == "failed" else "cannot run", row.reason)


def model_markdown(workload, rows, steal, args):
    best = best_rows(rows)
    kiln = best.get("kiln")
    lines = ["### %s" % workload.name, "",
             "%s; %d repeat(s), rows interleaved; %s over the repeats." % (
                 workload.describe(), args.repeats, describe_steal(steal)), "",
             "Best of each framework (median ms per step over the repeats, min–max):", "",
             "| framework | variant | threads | policy | ms/step | min–max | peak RSS MiB "
             "| kiln / this |",
             "|---|---|---|---|---|---|---|---|"]
    for framework, row in best.items():
        median, low, high = row.time()
        ratio = "%.2f" % (kiln.time()[0] / median) if kiln else "-"
        lines.append("| %s | %s | %d | %s | **%s** | %s–%s | %s | %s |" % (
            framework, row.variant, row.threads, row.policy_label, ms(median), ms(low),
            ms(high), mib(row.peak_rss), ratio))
    for framework in dict.fromkeys(r.framework for r in rows):
        if framework not in best:
            lines.append("| %s | - | - | - | no valid row | | | |" % framework)
    for row in rows:
        if row.framework == "kiln" and row.variant != "run" and row.valid and kiln:
            lines += ["", "kiln %s (%s): %.2fx the speed of kiln run (%s ms against %s)." % (
                row.variant, " ".join(workload.kiln_variants[row.variant]),
                kiln.time()[0] / row.time()[0], ms(row.time()[0]), ms(kiln.time()[0]))]
    lines += ["", "All rows:", "",
              "| framework | variant | threads | policy | ms/step | min–max | peak RSS MiB "
              "| compile s | params | status |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if row.valid:
            median, low, high = row.time()
            time_text, spread = ms(median), "%s–%s" % (ms(low), ms(high))
        else:
            time_text, spread = "-", ""
        compile_seconds = row.ready.get("compile_seconds")
        lines.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
            row.framework, row.variant, row.threads, row.policy_label, time_text, spread,
            mib(row.peak_rss), "%.1f" % compile_seconds if compile_seconds is not None else "-",
            row.ready.get("params", "-"), status_text(row).replace("|", "/")))
    lines += ["", "What a row's step includes (the peer's own words):", ""]
    groups = {}  # (framework, variant) -> {includes: [rows]}
    for row in rows:
        if row.ready.get("includes"):
            groups.setdefault((row.framework, row.variant), {}).setdefault(
                row.ready["includes"], []).append(row)
    for (framework, variant), texts in groups.items():
        for text, same in texts.items():
            versions = ", ".join("%s %s" % kv for kv in sorted(
                same[0].ready.get("versions", {}).items()))
            which = "" if len(texts) == 1 else ", rows %s" % ", ".join(
                "%dt %s" % (r.threads, r.policy_label) for r in same)
            lines.append("- %s %s%s (%s): %s" % (framework, variant, which, versions, text))
    return "\n".join(lines)


def summary_markdown(results, frameworks):
    others = [f for f in frameworks if f != "kiln"]
    lines = ["### Summary: each framework's best, ms per step", "",
             "| model | batch | " + " | ".join(frameworks) + " | kiln / fastest other |",
             "|---|---|" + "---|" * len(frameworks) + "---|"]
    for workload, rows, _, _ in results:
        best = best_rows(rows)
        cells = []
        for f in frameworks:
            row = best.get(f)
            if row:
                cells.append("%s (%s %dt %s)" % (ms(row.time()[0]), row.variant, row.threads,
                                                 row.policy_label))
            else:
                cells.append("-" if workload.runs(f) else "n/a")
        fastest = min((best[f] for f in others if f in best), key=lambda r: r.time()[0],
                      default=None)
        ratio = "-"
        if fastest and "kiln" in best:
            ratio = "**%.2f** (%s)" % (best["kiln"].time()[0] / fastest.time()[0],
                                       fastest.framework)
        lines.append("| %s | %d | %s | %s |" % (workload.name, workload.batch, " | ".join(cells),
                                                ratio))
    return "\n".join(lines)


def row_record(row, workload):
    record = {"framework": row.framework, "variant": row.variant, "threads": row.threads,
              "policy": row.policy, "status": row.status, "reason": row.reason,
              "ready": row.ready, "start_seconds": row.start_seconds,
              "peak_rss_bytes": row.peak_rss or None,
              "max_relative_loss_difference": row.worst[0], "at_step": row.worst[1],
              "first_differing": row.bad,
              "ms_per_step_per_repeat": [1e3 * r["median"] for r in row.repeats],
              "position_per_repeat": [r["position"] for r in row.repeats],
              "step_seconds_per_repeat": [r["seconds"] for r in row.repeats],
              "losses": row.losses}
    if row.valid:
        median, low, high = row.time()
        record.update(ms_per_step=1e3 * median, ms_min=1e3 * low, ms_max=1e3 * high)
    return record


def write_plot(path, results):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed in %s: no plot written" % sys.executable)
        return
    colors = {"kiln": "tab:red", "torch": "tab:orange", "jax": "tab:blue", "tf": "tab:green"}
    figure, axes = plt.subplots(len(results), 1, squeeze=False,
                                figsize=(9, 1.5 + 0.35 * sum(
                                    1 + len([r for r in rows if r.valid])
                                    for _, rows, _, _ in results)))
    for axis, (workload, rows, _, _) in zip(axes[:, 0], results):
        valid = sorted((r for r in rows if r.valid), key=lambda r: -r.time()[0])
        best = set(map(id, best_rows(rows).values()))
        times = [1e3 * r.time()[0] for r in valid]
        errors = [[1e3 * (r.time()[0] - r.time()[1]) for r in valid],
                  [1e3 * (r.time()[2] - r.time()[0]) for r in valid]]
        axis.barh(range(len(valid)), times, xerr=errors, capsize=3,
                  color=[matplotlib.colors.to_rgba(colors.get(r.framework, "gray"),
                                                   1.0 if id(r) in best else 0.4)
                         for r in valid])
        axis.set_yticks(range(len(valid)))
        axis.set_yticklabels([("* " if id(r) in best else "") + r.label for r in valid],
                             fontsize=8)
        left_out = len(rows) - len(valid)
        axis.set_title("%s (batch %d)%s" % (
            workload.name, workload.batch, ", %d row%s invalid, failed or not run (see the "
            "table)" % (left_out, "s" if left_out > 1 else "") if left_out else ""),
            fontsize=10)
        axis.set_xlabel("ms per training step (median over repeats, min–max; "
                        "* and full colour: the framework's best)")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    print("plot written to %s" % path)


# --- Main -------------------------------------------------------------------------


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append",
                        help="only these examples (repeatable or comma-separated; from %s)"
                        % ",".join(MODELS))
    parser.add_argument("--frameworks", default=",".join(VARIANTS),
                        help="comma-separated, from %s" % ",".join(VARIANTS))
    parser.add_argument("--variants",
                        help="comma-separated variants to run (e.g. eager,jit-rows), or "
                        "FRAMEWORK:VARIANT to run a variant the harness does not know; "
                        "frameworks with none named run all theirs")
    parser.add_argument("--threads", help="comma-separated intra-op thread counts "
                        "(default 1,2 and the CPU count; --quick: 2)")
    parser.add_argument("--policies", default=None,
                        help="OMP_WAIT_POLICY values for kiln and torch: 'default' leaves "
                        "it unset (default: default,passive; --quick: default)")
    parser.add_argument("--quick", action="store_true",
                        help="fewer rows and steps: one thread count, the default policy, "
                        "no compile-max-autotune, 2 repeats of 3 + 10 steps (flags given "
                        "explicitly win)")
    parser.add_argument("--kiln-variant", action="append", default=[], metavar="NAME=FLAGS",
                        help="also a kiln row NAME: the artifact compiled with these kilnc "
                        "flags added (repeatable; e.g. 'generated-conv=--conv=generated')")
    parser.add_argument("--steps", type=int, help="timed steps per repeat (50)")
    parser.add_argument("--warmup", type=int, help="untimed steps first (10)")
    parser.add_argument("--repeats", type=int, help="repeats (5)")
    parser.add_argument("--batches", type=int, default=16,
                        help="distinct random batches, cycled through")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--loss-rtol", type=float, default=1e-5,
                        help="largest relative difference from Kiln's loss at any step")
    parser.add_argument("--low-precision-rtol", type=float, default=2e-2,
                        help="the same for a --kiln-variant compiled with --precision=bf16 "
                        "or fp16 (its products round their inputs to 16 bits)")
    parser.add_argument("--ready-timeout", type=float, default=900,
                        help="seconds a peer may take to build and compile")
    parser.add_argument("--run-timeout", type=float, default=300,
                        help="seconds one run of --warmup + --steps steps may take")
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                        help="directory of kilnc and kiln")
    parser.add_argument("--peer-dir", default=os.path.join(ROOT, "bench", "peers"),
                        help="where FRAMEWORK_peer.py are")
    parser.add_argument("--python-torch", default=sys.executable)
    parser.add_argument("--python-jax", default=sys.executable)
    parser.add_argument("--python-tf", default="/work/venv-tf/bin/python"
                        if os.path.exists("/work/venv-tf/bin/python") else sys.executable)
    parser.add_argument("--workdir", help="write the workloads and logs here and keep them "
                        "(default: a temporary folder, removed at the end)")
    parser.add_argument("--json", help="also write every row's results here")
    parser.add_argument("--plot", help="also draw each model's rows as a bar chart (PNG)")
    parser.add_argument("--markdown", help="also write the tables here")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="print every row's time in every repeat")
    args = parser.parse_args()

    models = [m for value in (args.model or [",".join(MODELS)]) for m in value.split(",")]
    unknown = set(models) - set(MODELS)
    if unknown:
        parser.error("unknown models: %s" % ", ".join(sorted(unknown)))
    args.models = models
    args.kiln_variants = {}
    for text in args.kiln_variant:
        name, _, flags = text.partition("=")
        if not name or not flags or name in VARIANTS["kiln"] or name in args.kiln_variants:
            parser.error("--kiln-variant %r: want a new NAME=FLAGS" % text)
        args.kiln_variants[name] = shlex.split(flags)
    args.frameworks = args.frameworks.split(",")
    unknown = set(args.frameworks) - set(VARIANTS)
    if unknown:
        parser.error("unknown frameworks: %s" % ", ".join(sorted(unknown)))
    variants = {}
    for name in (args.variants.split(",") if args.variants else []):
        if ":" in name:
            framework, variant = name.split(":", 1)
        else:
            owners = [f for f, known in VARIANTS.items() if name in known]
            if not owners:
                parser.error("unknown variant %s (FRAMEWORK:VARIANT for a new one)" % name)
            framework, variant = owners[0], name
        if framework not in VARIANTS:
            parser.error("unknown framework %s" % framework)
        variants.setdefault(framework, []).append(variant)
    if args.kiln_variants and "kiln" in variants:
        variants["kiln"] += [v for v in args.kiln_variants if v not in variants["kiln"]]
    elif args.kiln_variants:
        variants["kiln"] = VARIANTS["kiln"] + list(args.kiln_variants)
    if args.quick:
        for framework, known in VARIANTS.items():
            variants.setdefault(framework, [v for v in known
                                            if (framework, v) not in QUICK_SKIPS])
    args.variants = variants
    cpus = os.cpu_count()
    default_threads = [min(2, cpus)] if args.quick else sorted({1, 2, cpus})
    args.threads = ([int(n) for n in args.threads.split(",")] if args.threads
                    else default_threads)
    policies = args.policies or ("default" if args.quick else "default,passive")
    args.policies = policies.split(",")
    for name, quick, full in (("steps", 10, 50), ("warmup", 3, 10), ("repeats", 2, 5)):
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    args.python = {"torch": args.python_torch, "jax": args.python_jax, "tf": args.python_tf}
    return args


def main():
    args = parse_args()
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop_on_signal)
    tools = ref.Tools(args.bin)
    for tool in (tools.kilnc, tools.kiln):
        if not os.path.exists(tool):
            sys.exit("no %s (build Kiln, or --bin)" % tool)
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("matplotlib is not installed in %s: --plot will write nothing"
                  % sys.executable)
    cpu = cpu_info()
    environment = {"cpu": cpu, "python": platform.python_version(),
                   "kernel": platform.release(), "kiln": kiln_version()}
    header = ["Machine: %s" % describe_cpu(cpu),
              "Rows: frameworks %s, threads %s, policies %s; %d repeat(s) of %d + %d steps; "
              "losses within %g of Kiln's at every step" % (
                  ",".join(args.frameworks), ",".join(map(str, args.threads)),
                  ",".join(args.policies), args.repeats, args.warmup, args.steps,
                  args.loss_rtol)]
    print("\n".join(header), flush=True)

    results = []
    work = args.workdir or tempfile.mkdtemp(prefix="train_bench.")
    started, ticks = time.perf_counter(), cpu_ticks()
    try:
        for name in args.models:
            results.append(bench_model(name, tools, args, work))
    except KeyboardInterrupt:
        kill_all()
        print("\ninterrupted: every peer and kiln process killed", file=sys.stderr)
        return 130
    finally:
        kill_all()
        if not args.workdir:
            subprocess.run(["rm", "-rf", work])
    steal = steal_between(ticks, cpu_ticks())

    parts = ["## Training steps (bench/train_bench.py)", ""] + [h + "  " for h in header] + [
        "Whole run: %.0f s, %s." % (time.perf_counter() - started, describe_steal(steal))]
    for workload, rows, model_steal, _ in results:
        parts += ["", model_markdown(workload, rows, model_steal, args)]
    parts += ["", summary_markdown(results, args.frameworks)]
    text = "\n".join(parts)
    print("\n" + text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": environment, "steal": steal, "settings": {
                "steps": args.steps, "warmup": args.warmup, "repeats": args.repeats,
                "batches": args.batches, "seed": args.seed, "threads": args.threads,
                "policies": args.policies, "loss_rtol": args.loss_rtol,
                "command": sys.argv},
                "models": [{"model": w.name, "batch": w.batch, "optimizer": w.spec,
                            "row_tables": w.row_tables, "kiln_compile_seconds":
                            w.compile_seconds, "kiln_losses": w.reference,
                            "steal": s, "steal_per_repeat": per_repeat,
                            "best": {f: r.label for f, r in best_rows(rows).items()},
                            "rows": [row_record(r, w) for r in rows]}
                           for w, rows, s, per_repeat in results]}, f, indent=1)
    if args.plot:
        write_plot(args.plot, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
