"""Records TensorFlow 2.21 running graphs with control flow: TF1 loops and conditionals
(`Enter`/`Exit`/`Merge`/`Switch`/`NextIteration`/`LoopCond`, built with control flow v2 off),
TF2 functional control flow (`While`/`StatelessWhile`, `If`/`StatelessIf` calling functions of
the graph's library, from `tf.function(...).get_concrete_function().graph.as_graph_def()`),
TensorList loops (`tf.TensorArray` in a `tf.function` loop), and run-time errors of control flow
(fetching a dead tensor, a tensor of a loop frame, a non-scalar `Switch` predicate, inputs from
different frames).

    .venv/bin/python tests/tf_observed/gen_graph_control_flow.py > tests/tf_observed/graph_control_flow.jsonl

Records use the formats of `gen_graph_functions.py` (`op`: `graph_roundtrip`: the GraphDef,
TensorFlow's re-export after `import_graph_def(name="")`, feeds, fetches, TensorFlow's outputs)
and `gen_graph_run_errors.py` (`op`: `graph_run_error`: the runtime's message as the C API's
`TF_SessionRun` returns it, the failing node when the message names one).
"""
import json, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

tf.compat.v1.disable_eager_execution()


def tensor_json(v):
    v = np.asarray(v)
    return {"dtype": tf.as_dtype(v.dtype).name, "shape": list(v.shape), "hex": np.ascontiguousarray(v).tobytes().hex()}


def imported(gd):
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    return g


def record(cid, gd, feeds, fetches, targets=(), needs_kernels=False):
    g = imported(gd)
    reexport = g.as_graph_def().SerializeToString(deterministic=True)
    with tf.compat.v1.Session(graph=g) as s:
        vals = s.run(list(fetches), feed_dict=dict(feeds))
    print(json.dumps({
        "op": "graph_roundtrip", "id": cid,
        "graphdef_hex": gd.SerializeToString(deterministic=True).hex(),
        "reexport_hex": reexport.hex(),
        "feeds": {k: tensor_json(v) for k, v in feeds.items()},
        "fetches": list(fetches), "targets": list(targets),
        "expect": {f: tensor_json(v) for f, v in zip(fetches, vals)},
        "needs_kernels": needs_kernels,
    }, sort_keys=True))


def error(cid, gd, feeds, fetches):
    g = imported(gd)
    with tf.compat.v1.Session(graph=g) as s:
        outs = [g.get_tensor_by_name(f)._as_tf_output() for f in fetches]
        ins = {g.get_tensor_by_name(k)._as_tf_output(): np.asarray(v) for k, v in feeds.items()}
        try:
            s._call_tf_sessionrun(None, ins, outs, [], None)
            raise SystemExit(f"{cid}: ran")
        except tf.errors.OpError as e:
            raw, code = e.message, type(e).__name__
    cut = raw.find("\n\t [[")
    node = None
    if cut >= 0 and raw[cut:].startswith("\n\t [[{{node "):
        node = raw[cut + len("\n\t [[{{node "):].split("}}")[0]
    print(json.dumps({
        "op": "graph_run_error", "id": cid,
        "graphdef_hex": gd.SerializeToString(deterministic=True).hex(),
        "feeds": {k: tensor_json(v) for k, v in feeds.items()},
        "fetches": list(fetches), "node": node, "code": code,
        "message": raw[:cut] if cut >= 0 else raw, "full_message": raw,
    }, sort_keys=True))


def v1_graph(build):
    """A graph built with TF1 control flow (control flow v2 off)."""
    tf.compat.v1.disable_control_flow_v2()
    try:
        g = tf.Graph()
        with g.as_default():
            build()
        return g.as_graph_def()
    finally:
        tf.compat.v1.enable_control_flow_v2()


# --- TF1 while loops -------------------------------------------------------------------------

def counter():
    i = tf.constant(0, name="i")
    tf.compat.v1.while_loop(lambda i: i < 10, lambda i: i + 1, [i], name="while")
counter_gd = v1_graph(counter)
record("tf1-while-counter", counter_gd, {}, ["while/Exit:0"])


def counter_fed():
    n = tf.compat.v1.placeholder(tf.int32, [], name="n")
    i = tf.constant(0, name="i")
    s = tf.constant(0.0, name="s")
    tf.compat.v1.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + tf.cast(i, tf.float32) * 0.5),
                            [i, s], name="loop")
g = v1_graph(counter_fed)
for k in [0, 1, 7, 1000]:
    record(f"tf1-while-two-vars-n{k}", g, {"n:0": np.int32(k)}, ["loop/Exit:0", "loop/Exit_1:0"])


def nested():
    i = tf.constant(0, name="i")
    acc = tf.constant(0, name="acc")
    def outer_body(i, acc):
        j = tf.constant(0)
        def inner_body(j, a):
            return j + 1, a + i * 10 + j
        _, acc2 = tf.compat.v1.while_loop(lambda j, a: j < 4, inner_body, [j, acc], name="inner")
        return i + 1, acc2
    tf.compat.v1.while_loop(lambda i, a: i < 3, outer_body, [i, acc], name="outer")
record("tf1-while-nested", v1_graph(nested), {}, ["outer/Exit:0", "outer/Exit_1:0"])


def accumulate():
    x = tf.compat.v1.placeholder(tf.float32, [2, 3], name="x")
    acc = tf.zeros([2, 3], name="zeros")
    i = tf.constant(0, name="i")
    tf.compat.v1.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * 0.5 + x), [i, acc], name="acc")
x23 = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
record("tf1-while-accumulate-tensor", v1_graph(accumulate), {"x:0": x23}, ["acc/Exit_1:0"])


def max_iters():
    x = tf.compat.v1.placeholder(tf.float32, [3], name="x")
    tf.compat.v1.while_loop(lambda v: tf.reduce_sum(v) < 100.0, lambda v: v * 2.0, [x],
                            maximum_iterations=4, name="w")
g = v1_graph(max_iters)
record("tf1-while-maximum-iterations", g, {"x:0": np.array([1, 2, 3], np.float32)}, ["w/Exit_1:0"])
record("tf1-while-zero-iterations", g, {"x:0": np.array([100, 2, 3], np.float32)}, ["w/Exit_1:0"])


# --- TF1 cond --------------------------------------------------------------------------------

def cond():
    p = tf.compat.v1.placeholder(tf.bool, [], name="p")
    x = tf.compat.v1.placeholder(tf.float32, [2, 3], name="x")
    tf.identity(tf.compat.v1.cond(p, lambda: x * 2.0, lambda: x - 1.0, name="cond"), name="y")
g = v1_graph(cond)
for p in [True, False]:
    record(f"tf1-cond-{str(p).lower()}", g, {"p:0": np.bool_(p), "x:0": x23}, ["y:0", "cond/Merge:1"])


def cond_in_loop():
    i = tf.constant(0, name="i")
    s = tf.constant(0, name="s")
    def body(i, s):
        d = tf.compat.v1.cond(tf.equal(tf.math.floormod(i, 2), 0), lambda: tf.constant(1), lambda: tf.constant(10))
        return i + 1, s + d
    tf.compat.v1.while_loop(lambda i, s: i < 7, body, [i, s], name="w")
record("tf1-cond-in-loop", v1_graph(cond_in_loop), {}, ["w/Exit_1:0"])


def loop_in_cond():
    p = tf.compat.v1.placeholder(tf.bool, [], name="p")
    x = tf.compat.v1.placeholder(tf.int32, [], name="x")
    def looped():
        return tf.compat.v1.while_loop(lambda v: v < 100, lambda v: v * 3, [x], name="w")
    tf.identity(tf.compat.v1.cond(p, looped, lambda: x - 1, name="c"), name="y")
g = v1_graph(loop_in_cond)
for p in [True, False]:
    record(f"tf1-loop-in-cond-{str(p).lower()}", g, {"p:0": np.bool_(p), "x:0": np.int32(2)}, ["y:0"])


# --- errors ----------------------------------------------------------------------------------

def switch_only():
    p = tf.compat.v1.placeholder(tf.bool, None, name="p")
    x = tf.constant([1.0, 2.0], name="x")
    tf.raw_ops.Switch(data=x, pred=p, name="sw")
    tf.identity(tf.raw_ops.Switch(data=x, pred=p, name="sw2")[1] * 2.0, name="after_dead")
g = v1_graph(switch_only)
error("fetch-dead-switch-output", g, {"p:0": np.bool_(False)}, ["sw:1"])
error("fetch-dead-downstream", g, {"p:0": np.bool_(False)}, ["sw:0", "after_dead:0"])
error("switch-pred-not-scalar", g, {"p:0": np.array([True, False])}, ["sw:0"])
record("fetch-live-switch-output", g, {"p:0": np.bool_(True)}, ["sw:1", "after_dead:0"])
error("fetch-inside-loop-frame", counter_gd, {}, ["while/Identity:0"])

# A loop constant without its `^Merge` control input is in the root frame. (Feeding a loop body
# op from a root tensor makes TensorFlow 2.21 hang rather than fail, so that case is not here.)
bad = tf.compat.v1.GraphDef()
bad.CopyFrom(counter_gd)
for n in bad.node:
    if n.name == "while/Less/y":
        del n.input[:]
error("inputs-from-different-frames", bad, {}, ["while/Exit:0"])


# --- TF2 functional control flow -------------------------------------------------------------

def concrete(cid, fn, specs, feeds):
    c = fn.get_concrete_function(*specs)
    gd = c.graph.as_graph_def()
    names = [t.name for t in c.inputs]
    record(cid, gd, {n: v for n, v in zip(names, feeds)}, [t.name for t in c.outputs],
           needs_kernels=True)


@tf.function
def tf2_while(x, n):
    def body(i, v):
        return i + 1, v * 2.0 + 1.0
    _, v = tf.while_loop(lambda i, v: i < n, body, [tf.constant(0), x])
    return v
spec_x3 = tf.TensorSpec([3], tf.float32, name="x")
spec_n = tf.TensorSpec([], tf.int32, name="n")
for k in [0, 5]:
    concrete(f"tf2-while-n{k}", tf2_while, [spec_x3, spec_n], [np.array([1, -2, 0.5], np.float32), np.int32(k)])


@tf.function
def tf2_if(p, x):
    return tf.cond(p, lambda: x * 2.0, lambda: x - 1.0)
for p in [True, False]:
    concrete(f"tf2-if-{str(p).lower()}", tf2_if, [tf.TensorSpec([], tf.bool, name="p"), spec_x3],
             [np.bool_(p), np.array([1, -2, 0.5], np.float32)])


@tf.function
def tf2_while_if(n):
    def body(i, s):
        d = tf.cond(tf.equal(tf.math.floormod(i, 3), 0), lambda: s * 2, lambda: s + i)
        return i + 1, d
    return tf.while_loop(lambda i, s: i < n, body, [tf.constant(0), tf.constant(1)])[1]
concrete("tf2-while-with-if", tf2_while_if, [spec_n], [np.int32(8)])


@tf.function
def tf2_nested_while(n):
    def outer(i, s):
        _, t = tf.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + j), [tf.constant(0), s])
        return i + 1, t
    return tf.while_loop(lambda i, s: i < n, outer, [tf.constant(0), tf.constant(0)])[1]
concrete("tf2-while-nested", tf2_nested_while, [spec_n], [np.int32(5)])


@tf.function
def tf2_case(k, x):
    return tf.switch_case(k, [lambda: x + 1.0, lambda: x * 3.0, lambda: -x])
for k in [0, 1, 2, 7, -1]:
    concrete(f"tf2-case-{k}", tf2_case, [tf.TensorSpec([], tf.int32, name="k"), spec_x3],
             [np.int32(k), np.array([1, -2, 0.5], np.float32)])


# --- TensorList loops ------------------------------------------------------------------------

@tf.function
def tensor_list_loop(x):
    xs = tf.TensorArray(tf.float32, size=5).unstack(x)
    out = tf.TensorArray(tf.float32, size=5)
    def body(i, out):
        return i + 1, out.write(i, xs.read(i) * 2.0 + tf.cast(i, tf.float32))
    _, out = tf.while_loop(lambda i, out: i < 5, body, [tf.constant(0), out])
    return out.stack()
x53 = np.arange(15, dtype=np.float32).reshape(5, 3) / 4.0
concrete("tensor-list-loop", tensor_list_loop, [tf.TensorSpec([5, 3], tf.float32, name="x")], [x53])


@tf.function
def tensor_list_dynamic(x, n):
    out = tf.TensorArray(tf.float32, size=n, element_shape=[3])
    def body(i, acc, out):
        acc = acc * 0.5 + x
        return i + 1, acc, out.write(i, acc)
    _, acc, out = tf.while_loop(lambda i, a, o: i < n, body, [tf.constant(0), tf.zeros([3]), out])
    return out.stack(), acc
concrete("tensor-list-dynamic-size", tensor_list_dynamic, [spec_x3, spec_n],
         [np.array([1, -2, 0.5], np.float32), np.int32(4)])
