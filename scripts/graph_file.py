"""Reading Kiln graph files (.pbtxt) from Python without generated code:
the schema is proto/kiln/graph.proto itself, compiled to a descriptor set by
protoc at run time. Needs protoc on PATH and the protobuf package; no deep-
learning framework, so any venv (torch's, JAX's, TensorFlow's) can use it.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def graph_module():
    """GraphDef's message class, from proto/kiln/graph.proto."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "graph.desc")
        result = subprocess.run(
            ["protoc", "--proto_path=" + os.path.join(ROOT, "proto"),
             "--include_imports", "--descriptor_set_out=" + out, "kiln/graph.proto"],
            capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit("protoc failed:\n" + result.stderr)
        files = descriptor_pb2.FileDescriptorSet.FromString(open(out, "rb").read())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    return message_factory.GetMessageClass(
        pool.FindMessageTypeByName("kiln.graph.GraphDef"))


def read_graph(path):
    """The graph file at `path` (text format) as a GraphDef message."""
    from google.protobuf import text_format
    graph = graph_module()()
    text_format.Parse(open(path).read(), graph)
    return graph


def attr(node, key, default=None):
    """The Python value of a node attribute, or `default`."""
    if key not in node.attrs:
        if default is None:
            raise KeyError("node '%s' has no attribute '%s'" % (node.name, key))
        return default
    value = node.attrs[key]
    which = value.WhichOneof("value")
    if which == "ints":
        return list(value.ints.values)
    return getattr(value, which)


def constant_array(tensor):
    """A constant node's tensor as numpy: float32 or int64."""
    shape = list(tensor.shape)
    if tensor.float_values:
        return np.array(list(tensor.float_values), np.float32).reshape(shape)
    return np.array(list(tensor.int_values), np.int64).reshape(shape)
