"""Records graphs that parse `tf.train.Example`s with the `ParseExampleV2` op (what
`tf.io.parse_example` and `tf.io.parse_single_example` build into a graph), run by TensorFlow
2.21 on serialized Examples fed through a placeholder.

    .venv/bin/python tests/tf_observed/gen_graph_parse_example.py > tests/tf_observed/graph_parse_example.jsonl

Records of op `graph_roundtrip` (see gen_graph_functions.py: the GraphDef, its re-export, feeds,
fetches - every output of the op - and TensorFlow's outputs) and `graph_run_error` (see
gen_graph_run_errors.py: a batch TensorFlow refuses, with the kernel's message and the runtime's
full text).
"""
import json
import os

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.get_logger().setLevel("ERROR")


def tensor_json(v):
    v = np.asarray(v)
    if v.dtype == object or v.dtype.kind == "S":
        return {"dtype": "string", "shape": list(v.shape),
                "strings": [bytes(s).hex() for s in v.reshape(-1)]}
    return {"dtype": tf.as_dtype(v.dtype).name, "shape": list(v.shape),
            "hex": np.ascontiguousarray(v).tobytes().hex()}


def example(**features):
    f = {}
    for k, v in features.items():
        if isinstance(v, list) and v and isinstance(v[0], float):
            f[k] = tf.train.Feature(float_list=tf.train.FloatList(value=v))
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            f[k] = tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
        elif isinstance(v, list) and v and isinstance(v[0], int):
            f[k] = tf.train.Feature(int64_list=tf.train.Int64List(value=v))
        else:
            f[k] = tf.train.Feature()
    return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()


def build(features, single):
    g = tf.Graph()
    with g.as_default():
        shape = [] if single else [None]
        s = tf.compat.v1.placeholder(tf.string, shape, name="serialized")
        if single:
            tf.io.parse_single_example(s, features)
        else:
            tf.io.parse_example(s, features)
    gd = g.as_graph_def()
    op = [n for n in gd.node if n.op == "ParseExampleV2"]
    assert len(op) == 1, [n.op for n in gd.node]
    node = op[0]
    outs = []
    for arg in g.get_operation_by_name(node.name).outputs:
        outs.append(arg.name)
    return g, gd, outs


def roundtrip(cid, features, batch, single=False):
    g, gd, fetches = build(features, single)
    g2 = tf.Graph()
    with g2.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    reexport = g2.as_graph_def().SerializeToString(deterministic=True)
    feed = np.array(batch[0] if single else batch, dtype=object)
    with tf.compat.v1.Session(graph=g2) as sess:
        vals = sess.run(fetches, feed_dict={"serialized:0": feed})
    print(json.dumps({
        "op": "graph_roundtrip", "id": cid,
        "graphdef_hex": gd.SerializeToString(deterministic=True).hex(),
        "reexport_hex": reexport.hex(),
        "feeds": {"serialized:0": tensor_json(feed)},
        "fetches": fetches, "targets": [],
        "expect": {f: tensor_json(v) for f, v in zip(fetches, vals)},
        "needs_kernels": False,
    }, sort_keys=True))


def error(cid, features, batch, single=False):
    g, gd, fetches = build(features, single)
    g2 = tf.Graph()
    with g2.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    feed = np.array(batch[0] if single else batch, dtype=object)
    with tf.compat.v1.Session(graph=g2) as sess:
        # The runtime's own text, before Python's rewriting (as gen_graph_run_errors.py).
        outs = [g2.get_tensor_by_name(f)._as_tf_output() for f in fetches]
        ins = {g2.get_tensor_by_name("serialized:0")._as_tf_output(): feed}
        try:
            sess._call_tf_sessionrun(None, ins, outs, [], None)
            raise SystemExit(f"{cid}: TensorFlow ran it")
        except tf.errors.OpError as e:
            raw = e.message
    cut = raw.find("\n\t [[")
    print(json.dumps({
        "op": "graph_run_error", "id": cid,
        "graphdef_hex": gd.SerializeToString(deterministic=True).hex(),
        "feeds": {"serialized:0": tensor_json(feed)},
        "fetches": fetches, "node": fetches[0].split(":")[0],
        "message": raw[:cut] if cut >= 0 else raw, "full_message": raw,
    }, sort_keys=True))


FL = tf.io.FixedLenFeature
VL = tf.io.VarLenFeature
SEQ = tf.io.FixedLenSequenceFeature
RG = tf.io.RaggedFeature

batch = [
    example(x=[1.0, 2.0], label=[3], tags=[b"a", b"bc"], tok=[5, 6, 7]),
    example(x=[4.0, 5.0], label=[9], tags=[], tok=[8]),
    example(x=[-1.5, 0.25], label=[0], tags=[b"zz"], tok=[]),
]
dense = {"x": FL([2], tf.float32), "label": FL([], tf.int64)}
roundtrip("dense_float_int", dense, batch)
roundtrip("dense_with_defaults", {"x": FL([2], tf.float32), "missing": FL([3], tf.int64, default_value=[7, 8, 9]),
                                   "name": FL([], tf.string, default_value=b"none")}, batch)
roundtrip("varlen_string_int", {"tags": VL(tf.string), "tok": VL(tf.int64)}, batch)
roundtrip("sequence_allow_missing", {"tok": SEQ([], tf.int64, allow_missing=True, default_value=-1),
                                      "x": SEQ([2], tf.float32, allow_missing=True)}, batch)
roundtrip("ragged_int64_splits", {"tok": RG(tf.int64, row_splits_dtype=tf.int64),
                                  "tags": RG(tf.string, row_splits_dtype=tf.int32)}, batch)
roundtrip("mixed_all_kinds", {"x": FL([2], tf.float32), "tags": VL(tf.string),
                              "tok": RG(tf.int64), "seq": SEQ([], tf.float32, allow_missing=True)}, batch)
roundtrip("empty_batch", dense, [])
roundtrip("single_example", {"x": FL([2], tf.float32), "tags": VL(tf.string), "tok": RG(tf.int64)},
          batch, single=True)

error("missing_required", {"x": FL([2], tf.float32), "nope": FL([], tf.int64)}, batch)
error("wrong_type", {"x": FL([2], tf.int64)}, batch)
error("wrong_length", {"x": FL([3], tf.float32)}, batch)
error("not_an_example", {"x": FL([2], tf.float32)}, [b"garbage!"])
