# lit configuration of kiln's IR and tool tests (see test/README.md).
import os
import subprocess
import sys

import lit.formats

config.name = "Kiln"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".pbtxt", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test")
# Fixtures and non-lit suites live beside the lit tests.
config.excludes = ["Inputs", "unit", "fuzz", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py.in", "README.md"]

# kiln's tools first, then FileCheck, not and split-file from Debian's LLVM 19.
path = [config.kiln_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
config.environment["PATH"] = os.pathsep.join(path)
# kilnc's kernel cache: one for the suite, in the build tree, never the
# user's ~/.cache/kiln (kilnc-kernel-cache.test and kilnc-artifact-cache.test use
# folders of their own); it holds kernel objects and artifacts.
config.environment["KILN_CACHE_DIR"] = os.path.join(config.kiln_obj_root, "test", "kernel-cache")
# Tests of what the runtime does with a core its threads leave free pin
# themselves (taskset) to %two-cpus (the first two this process may run on)
# or %one-cpu: they need two (UNSUPPORTED on one core).
allowed_cpus = sorted(os.sched_getaffinity(0))
if len(allowed_cpus) >= 2:
    config.available_features.add("two-cores")
    config.substitutions.append(("%two-cpus", "%d,%d" % tuple(allowed_cpus[:2])))
config.substitutions.append(("%one-cpu", str(allowed_cpus[0])))
# Tests of what the runtime does on a CPU with AMX-BF16 (the products oneDNN
# 2.6 cannot run there): UNSUPPORTED elsewhere.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        if "amx_bf16" in cpuinfo.read().split():
            config.available_features.add("amx-bf16")
except OSError:
    pass
# Tests of thread choice under a container's CPU limit run kiln in a cgroup
# of their own (scripts/run_in_cpu_quota.py): where one can be made (root,
# a writable cpu controller), else UNSUPPORTED.
if subprocess.run([sys.executable, os.path.join(config.kiln_src_root, "scripts",
                                                "run_in_cpu_quota.py"), "--probe"],
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("cpu-quota")
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%FileCheck", "FileCheck --enable-var-scope"))
config.substitutions.append(("%examples", os.path.join(config.kiln_src_root, "examples")))
# The standard-library scripts some tests run: %python %scripts/NAME.py
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%scripts", os.path.join(config.kiln_src_root, "scripts")))
# Encodes a text graph file as binary: %encode-graph < in.pbtxt > out.pb
config.substitutions.append(("%encode-graph",
    "protoc --proto_path=%s --encode=kiln.graph.GraphDef kiln/graph.proto"
    % os.path.join(config.kiln_src_root, "proto")))
# Encodes a text TensorFlow GraphDef as binary: %encode-tf-graph < in.pbtxt > out.pb
config.substitutions.append(("%encode-tf-graph",
    "protoc --proto_path=%s --encode=tensorflow.GraphDef tensorflow/graph.proto"
    % os.path.join(config.kiln_src_root, "proto")))
# Writes sample and broken artifacts and .npy files for the kiln tool's tests.
config.substitutions.append(("%kiln-test-artifact",
    os.path.join(config.kiln_obj_root, "test", "Runtime", "kiln-test-artifact")))
