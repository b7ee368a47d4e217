"""Records whole GraphDefs as TensorFlow 2.21 writes them where they go beyond single ops:
TensorFlow 2 frozen graphs (`convert_variables_to_constants_v2`, whose outputs are
`Identity(x, ^NoOp)`-style nodes), graphs whose function library is not empty (a `tf.function`
called from a graph: `StatefulPartitionedCall` / `PartitionedCall` and `library { function ... }`),
and graphs with control-only targets.

    .venv/bin/python tests/tf_observed/gen_graph_functions.py > tests/tf_observed/graph_functions.jsonl

Each record (`op`: `graph_roundtrip`): `id`, `graphdef_hex` (the GraphDef as TensorFlow wrote
it), `reexport_hex` (what TensorFlow's `import_graph_def(name="")` + `as_graph_def()` gives back,
deterministically serialized: tensorcast's import + export must give these bytes, library
included), `feeds` (name -> dtype/shape/hex), `fetches`, `targets`, and `expect` (TensorFlow's
fetched outputs; empty when the graph needs ops tensorcast has no kernel for, marked
`needs_kernels`).
"""
import json, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2


def tensor_json(v):
    v = np.asarray(v)
    return {"dtype": tf.as_dtype(v.dtype).name, "shape": list(v.shape), "hex": np.ascontiguousarray(v).tobytes().hex()}


def record(cid, gd, feeds, fetches, targets=(), needs_kernels=False):
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    reexport = g.as_graph_def().SerializeToString(deterministic=True)
    expect = {}
    with tf.compat.v1.Session(graph=g) as s:
        vals = s.run(list(fetches) + list(targets), feed_dict={k: v for k, v in feeds.items()})
    for f, v in zip(fetches, vals):
        expect[f] = tensor_json(v)
    print(json.dumps({
        "op": "graph_roundtrip", "id": cid,
        "graphdef_hex": gd.SerializeToString(deterministic=True).hex(),
        "reexport_hex": reexport.hex(),
        "feeds": {k: tensor_json(v) for k, v in feeds.items()},
        "fetches": list(fetches), "targets": list(targets),
        "expect": expect, "needs_kernels": needs_kernels,
    }, sort_keys=True))


# 1. A TF2 frozen graph of element-wise ops (all with kernels here).
@tf.function(input_signature=[tf.TensorSpec([2, 3], tf.float32)])
def f1(x):
    y = tf.maximum(x * 2.0, tf.broadcast_to(tf.constant([1.0, 0.0, -1.0]), [2, 3]))
    return {"out": y - 1.0, "eq": tf.equal(y, 1.0)}

frozen = convert_variables_to_constants_v2(f1.get_concrete_function())
gd = frozen.graph.as_graph_def()
x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
ins = [t.name for t in frozen.inputs]
outs = [t.name for t in frozen.outputs]
record("frozen-elementwise", gd, {ins[0]: x}, outs)

# 2. The same computation with the control-only NoOp as a target, and Identity(x, ^NoOp).
g = tf.Graph()
with g.as_default():
    xp = tf.compat.v1.placeholder(tf.float32, [2, 3], name="x")
    with tf.control_dependencies([tf.no_op(name="init")]):
        y = tf.identity(xp * 3.0, name="y")
    tf.no_op(name="done")
record("noop-control-and-target", g.as_graph_def(), {"x:0": x}, ["y:0"], ["done", "init"])

# 3. A graph whose function library is not empty: a tf.function called from a graph.
@tf.function
def inner(a):
    return a * 2.0 + 1.0

g = tf.Graph()
with g.as_default():
    xp = tf.compat.v1.placeholder(tf.float32, [2, 3], name="x")
    y = tf.identity(inner(xp), name="y")
record("function-library-call", g.as_graph_def(), {"x:0": x}, ["y:0"], needs_kernels=True)

# 4. A nested call: a function calling a function.
@tf.function
def outer(a):
    return inner(a) - inner(a * 0.5)

g = tf.Graph()
with g.as_default():
    xp = tf.compat.v1.placeholder(tf.float32, [2, 3], name="x")
    y = tf.identity(outer(xp), name="y")
record("function-library-nested", g.as_graph_def(), {"x:0": x}, ["y:0"], needs_kernels=True)
