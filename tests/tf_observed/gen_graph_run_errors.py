"""Records TensorFlow 2.21's full run-time error text for failing nodes of imported GraphDefs:
the runtime's message (the kernel's message plus the node-context suffix `\\n\\t [[{{node N}}]]`,
or `[[{{function_node F}}{{node N}}]]` from a node's `experimental_debug_info`), as the C API's
`TF_SessionRun` returns it, and beside it the text Python's `Session.run` shows after its own
rewriting (`Graph execution error:` preamble, original node names).

    /work/venv/bin/python tests/tf_observed/gen_graph_run_errors.py > tests/tf_observed/graph_run_errors.jsonl

Each record (`op`: `graph_run_error`): `graphdef_hex` (the GraphDef TensorFlow imported, `name=""`), `feeds` (name ->
dtype/shape/hex), `fetches`, `node` (the failing node), `message` (the kernel's message alone),
`full_message` (the runtime's text), `python_message` (Session.run's text).
"""
import json, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

def f32(name, shape):
    return tf.compat.v1.placeholder(tf.float32, shape, name=name)

def case(cid, build, feeds, fetches, debug=None):
    g = tf.Graph()
    with g.as_default():
        build()
    gd = g.as_graph_def()
    for n in gd.node:
        if debug and n.name in debug:
            names, funcs = debug[n.name]
            n.experimental_debug_info.original_node_names.extend(names)
            n.experimental_debug_info.original_func_names.extend(funcs)
    g2 = tf.Graph()
    with g2.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    feed_np = {k: np.asarray(v, dtype=np.float32) for k, v in feeds.items()}
    with tf.compat.v1.Session(graph=g2) as s:
        outs = [g2.get_tensor_by_name(f)._as_tf_output() for f in fetches]
        ins = {g2.get_tensor_by_name(k)._as_tf_output(): v for k, v in feed_np.items()}
        try:
            s._call_tf_sessionrun(None, ins, outs, [], None)
            raise SystemExit(f"{cid}: ran")
        except tf.errors.OpError as e:
            raw = e.message
        try:
            s.run(fetches, feed_np)
            raise SystemExit(f"{cid}: ran")
        except tf.errors.OpError as e:
            py, node = e.message, (e.op.name if e.op is not None else None)
    cut = raw.find("\n\t [[")
    rec = {
        "op": "graph_run_error",
        "id": cid,
        "graphdef_hex": gd.SerializeToString(deterministic=True).hex(),
        "feeds": {k: {"dtype": "float", "shape": list(v.shape), "hex": v.tobytes().hex()} for k, v in feed_np.items()},
        "fetches": fetches,
        "node": node,
        "message": raw[:cut] if cut >= 0 else raw,
        "full_message": raw,
        "python_message": py,
    }
    print(json.dumps(rec, sort_keys=True))

def reshape():
    x = f32("x", [None]); tf.reshape(x, [-1, 4], name="r")
case("reshape", reshape, {"x:0": np.arange(6)}, ["r:0"])
case("reshape-downstream", lambda: tf.identity(tf.reshape(f32("x", [None]), [-1, 4], name="r"), name="y"),
     {"x:0": np.arange(6)}, ["y:0"])
case("missing-feed", lambda: tf.identity(f32("x", [None]), name="y"), {}, ["y:0"])
case("missing-feed-unknown-rank", lambda: tf.identity(f32("x", None), name="y"), {}, ["y:0"])
def add():
    tf.raw_ops.AddV2(x=f32("a", [None]), y=f32("b", [None]), name="sum")
case("add-incompatible", add, {"a:0": np.arange(2), "b:0": np.arange(3)}, ["sum:0"])
def bcast():
    tf.raw_ops.BroadcastTo(input=f32("a", [None]), shape=tf.constant([2, 3]), name="bt")
case("broadcast-to-incompatible", bcast, {"a:0": np.arange(2)}, ["bt:0"])
def equal():
    tf.raw_ops.Equal(x=f32("a", [None]), y=f32("b", [None]), name="eq")
case("equal-incompatible", equal, {"a:0": np.arange(2), "b:0": np.arange(3)}, ["eq:0"])
case("debug-info-one-name", reshape, {"x:0": np.arange(6)}, ["r:0"], debug={"r": (["orig_r"], [])})
case("debug-info-with-function", reshape, {"x:0": np.arange(6)}, ["r:0"], debug={"r": (["orig_r"], ["fn"])})
case("debug-info-two-names", reshape, {"x:0": np.arange(6)}, ["r:0"],
     debug={"r": (["first", "second"], ["f1", ""])})
# TensorFlow keeps the names and the function names each as a sorted set (observed: the lists
# are sorted and deduplicated independently before they are paired).
case("debug-info-unsorted", reshape, {"x:0": np.arange(6)}, ["r:0"],
     debug={"r": (["b", "a", "b"], ["f2", "f1"])})
