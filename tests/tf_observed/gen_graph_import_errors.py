"""Records TensorFlow 2.21's refusal of hostile or careless GraphDefs at import
(`tf.compat.v1.import_graph_def(gd, name="")`, which goes through the C API's
`TF_GraphImportGraphDef`): negative producer versions, empty op types, dtype enums that do not
exist, reference dtypes in attrs, shapes of too many dims, too many elements or dims below -1,
input names whose index does not parse, unknown control inputs, and the import checks around
them. A GraphDef that TensorFlow imports is recorded with `message: null`.

    .venv/bin/python tests/tf_observed/gen_graph_import_errors.py > tests/tf_observed/graph_import_errors.jsonl

Each record (`op`: `graph_import_error`): `id`, `graphdef_hex`, `message` (TensorFlow's text, or
null). Shape-function messages end with TensorFlow's node context (` for '{{node x}} = ...' with
input shapes: .`); the runner compares the part before it.
"""
import json, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
from tensorflow.core.framework import graph_pb2, node_def_pb2, tensor_shape_pb2


def imp(gd):
    g = tf.Graph()
    try:
        with g.as_default():
            tf.compat.v1.import_graph_def(gd, name="")
        return None
    except (ValueError, tf.errors.OpError) as e:
        return e.message if isinstance(e, tf.errors.OpError) else str(e)


def ph(name, dtype=1, dims=None):
    n = node_def_pb2.NodeDef(name=name, op="Placeholder")
    n.attr["dtype"].type = dtype
    if dims is not None:
        s = tensor_shape_pb2.TensorShapeProto()
        for d in dims:
            s.dim.add(size=d)
        n.attr["shape"].shape.CopyFrom(s)
    return n


def ident(name, inputs, t=1):
    n = node_def_pb2.NodeDef(name=name, op="Identity", input=inputs)
    n.attr["T"].type = t
    return n


def gd_of(*nodes, producer=2474, min_consumer=0):
    gd = graph_pb2.GraphDef()
    gd.node.extend(nodes)
    gd.versions.producer = producer
    gd.versions.min_consumer = min_consumer
    return gd


cases = [
    ("producer-negative", gd_of(ph("x"), producer=-1)),
    ("producer-minus-2474", gd_of(ph("x"), producer=-2474)),
    ("producer-zero", gd_of(ph("x"), producer=0)),
    ("empty-op", gd_of(node_def_pb2.NodeDef(name="y", op=""))),
    ("empty-op-after-placeholder", gd_of(ph("x"), node_def_pb2.NodeDef(name="y", op="", input=["x"]))),
    ("dtype-1000", gd_of(ph("x", dtype=1000))),
    ("dtype-34", gd_of(ph("x", dtype=34))),
    ("dtype-zero", gd_of(ph("x", dtype=0))),
    ("dtype-negative", gd_of(ph("x", dtype=-3))),
    ("dtype-float-ref", gd_of(ph("x", dtype=101))),
    ("dtype-int32-ref", gd_of(ph("x", dtype=103))),
    ("dtype-100", gd_of(ph("x", dtype=100))),
    ("dtype-ref-of-unknown", gd_of(ph("x", dtype=150))),
    ("identity-T-ref", gd_of(ph("x"), ident("y", ["x"], t=101))),
    ("rank-254", gd_of(ph("x", dims=[1] * 254))),
    ("rank-255", gd_of(ph("x", dims=[1] * 255))),
    ("rank-300-unknown-dims", gd_of(ph("x", dims=[-1] * 300))),
    ("elements-2^62x4", gd_of(ph("x", dims=[2**62, 4]))),
    ("elements-2^62x2", gd_of(ph("x", dims=[2**62, 2]))),
    ("elements-2^31x2^31", gd_of(ph("x", dims=[2**31, 2**31]))),
    ("elements-zero-times-huge", gd_of(ph("x", dims=[0, 2**62, 4]))),
    ("elements-unknown-and-huge", gd_of(ph("x", dims=[-1, 2**62, 4]))),
    ("elements-huge-then-unknown", gd_of(ph("x", dims=[2**62, 4, -1]))),
    ("elements-huge-unknown-huge", gd_of(ph("x", dims=[2**62, -1, 4]))),
    ("dim-minus-5", gd_of(ph("x", dims=[-5]))),
    ("dim-minus-2-after-unknown", gd_of(ph("x", dims=[-1, -2]))),
    ("index-overflows", gd_of(ph("x"), ident("y", ["x:99999999999999999999999"]))),
    ("index-2^31-1", gd_of(ph("x"), ident("y", ["x:2147483647"]))),
    # "x:2147483648" (2^31) is left out: TensorFlow 2.21's import crashes (SIGSEGV) on it.
    ("index-99", gd_of(ph("x"), ident("y", ["x:99"]))),
    ("index-negative", gd_of(ph("x"), ident("y", ["x:-1"]))),
    ("index-empty", gd_of(ph("x"), ident("y", ["x:"]))),
    # TensorFlow's ParseTensorName: the index is the digits after the last colon, read as an
    # unsigned 64-bit number and kept in an int (2^32 is output 0, 2^32 + 1 output 1); a name
    # without such digits is a node name (so it fails as an unknown node, named in full).
    ("index-2^32", gd_of(ph("x"), ident("y", ["x:4294967296"]))),
    ("index-2^32+1", gd_of(ph("x"), ident("y", ["x:4294967297"]))),
    ("index-leading-zeros", gd_of(ph("x"), ident("y", ["x:00"]))),
    ("index-not-digits", gd_of(ph("x"), ident("y", ["x:0x"]))),
    ("index-after-two-colons", gd_of(ph("x"), ident("y", ["x:y:0"]))),
    ("caret-with-index", gd_of(ph("x"), ident("y", ["^x:1"]))),
    ("unknown-node-with-index", gd_of(ph("x"), ident("y", ["zz:1"]))),
    ("control-unknown", gd_of(ph("x"), ident("y", ["x", "^z"]))),
    ("control-before-data", gd_of(ph("x"), ph("w"), ident("y", ["^w", "x"]))),
    ("name-with-quote", gd_of(ph('a"b'))),
    ("name-with-newline", gd_of(ph("a\nb"))),
    ("name-with-colon", gd_of(ph("a:0"))),
    ("name-with-caret", gd_of(ph("^a"))),
    ("name-empty", gd_of(ph(""))),
    ("name-dots-slashes", gd_of(ph(".././../tmp/evil"))),
    ("duplicate-name", gd_of(ph("x"), ph("x"))),
    ("min-consumer-future", gd_of(ph("x"), min_consumer=999999)),
]
for cid, gd in cases:
    rec = {
        "op": "graph_import_error",
        "id": cid,
        "graphdef_hex": gd.SerializeToString(deterministic=True).hex(),
        "message": imp(gd),
    }
    print(json.dumps(rec, sort_keys=True))
