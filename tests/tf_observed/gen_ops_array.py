"""Records TensorFlow 2.21's data-movement and shape ops (eager tf.raw_ops on CPU, and graph-mode
shape inference): Transpose, ConcatV2, Pack, Unpack, Split, SplitV, Squeeze, ExpandDims, Slice,
StridedSlice, GatherV2, Pad, PadV2, MirrorPad, Tile, Fill, Range, ZerosLike, OnesLike, Size, Rank,
ShapeN, OneHot, Cumsum, TopKV2.

Two kinds of record, both with "op": "array", "name" (TensorFlow's op) and "attrs":
- eager: "inputs" (argument name -> tensor, or list of tensors), then "expect" (the list of
  outputs) or "error" {code, message} (the kernel's text: the `{{function_node ...}}` prefix
  and the ` [Op:X]` suffix stripped);
- "shape": true: "inputs" (argument name -> {"dtype", "shape"} with shape null for an unknown
  rank and -1 for an unknown dim, plus "value" when the input is a constant the shape function
  may read; a list for list arguments), then "expect" (the outputs' shapes, null for an unknown
  rank) or "error" {message} (the shape function's text without the ` for '{{node ...}}' with
  input shapes: ...` tail).

Values are random bit patterns (NaN payloads, subnormals, signed zeros included), so that data
movement is checked bit for bit.

    TF_CPP_MIN_LOG_LEVEL=3 .venv/bin/python tests/tf_observed/gen_ops_array.py > tests/tf_observed/ops_array.jsonl
"""
import json, os, random
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import ml_dtypes
import tensorflow as tf

tf.config.set_visible_devices([], "GPU")

SEED = int(os.environ.get("SEED", "20261125"))
rng = random.Random(SEED)
nrng = np.random.default_rng(SEED)

NP = {"float": np.float32, "double": np.float64, "half": np.float16, "bfloat16": ml_dtypes.bfloat16,
      "complex64": np.complex64, "complex128": np.complex128, "bool": np.bool_,
      "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
      "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
      "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2,
      "int4": ml_dtypes.int4, "uint4": ml_dtypes.uint4,
      "qint8": np.int8, "quint8": np.uint8, "qint16": np.int16, "quint16": np.uint16, "qint32": np.int32}
QUANTIZED = {"qint8": tf.qint8, "quint8": tf.quint8, "qint16": tf.qint16, "quint16": tf.quint16,
             "qint32": tf.qint32}
MAIN = ["float", "double", "half", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16",
        "uint32", "uint64", "complex64", "complex128", "bool", "string"]
ODD = ["qint8", "quint8", "qint16", "quint16", "qint32", "float8_e4m3fn", "float8_e5m2", "int4", "uint4"]
ALL = MAIN + ODD


def values(name, shape):
    size = int(np.prod(shape)) if len(shape) else 1
    if name == "string":
        pool = [b"", b"a", b"bc", b"\x00\xff", b"longer than the inline part of a tstring!"]
        return np.array([rng.choice(pool) + str(i).encode() for i in range(size)], dtype=object).reshape(shape)
    if name == "bool":
        return (nrng.integers(0, 2, size) == 1).reshape(shape)
    if name == "int4":
        return nrng.integers(-8, 8, size).astype(np.int8).astype(ml_dtypes.int4).reshape(shape)
    if name == "uint4":
        return nrng.integers(0, 16, size).astype(np.uint8).astype(ml_dtypes.uint4).reshape(shape)
    item = np.dtype(NP[name]).itemsize
    raw = nrng.integers(0, 256, size * item, dtype=np.uint8)
    return raw.view(NP[name]).reshape(shape)


def make(name, arr):
    if name == "string":
        return tf.constant(arr.reshape(-1).tolist(), dtype=tf.string, shape=arr.shape)
    if name in QUANTIZED:
        base = tf.constant(arr)
        return tf.bitcast(base, QUANTIZED[name]) if arr.size else tf.zeros(arr.shape, QUANTIZED[name])
    return tf.constant(arr)


def enc(name, arr):
    if name == "string":
        a = np.asarray(arr, dtype=object)
        return {"dtype": "string", "shape": list(a.shape), "strings": [bytes(s).hex() for s in a.reshape(-1)]}
    a = np.asarray(arr)
    return {"dtype": name, "shape": list(a.shape), "hex": a.tobytes(order="C").hex()}


def name_of(t):
    n = t.dtype.name
    return {"float32": "float", "float64": "double", "float16": "half"}.get(n, n)


def enc_out(t):
    name = name_of(t)
    if name in QUANTIZED:
        base = {"qint8": tf.int8, "quint8": tf.uint8, "qint16": tf.int16, "quint16": tf.uint16, "qint32": tf.int32}[name]
        arr = tf.bitcast(t, base).numpy() if t.shape.num_elements() else np.zeros(t.shape, NP[name])
        return {"dtype": name, "shape": list(arr.shape), "hex": arr.tobytes().hex()}
    return enc(name, t.numpy())


n = 0


def err_text(e):
    msg = e.message.split(" [Op:")[0]
    if msg.startswith("{{function_node "):
        msg = msg.split("}} ", 1)[1]
    return msg


def emit(rec):
    global n
    rec["id"] = f"ops-array-{n:05d}"
    rec["op"] = "array"
    print(json.dumps(rec, sort_keys=True))
    n += 1


def T(name, arr):
    """A tensor argument: (dtype name, numpy array)."""
    return (name, np.asarray(arr, dtype=object) if name == "string" else np.asarray(arr).astype(NP[name]) if name not in ("int4", "uint4") else np.asarray(arr))


def rnd(name, shape):
    return (name, values(name, shape))


def record(op, inputs, attrs=None, note=None):
    attrs = attrs or {}
    rec = {"name": op, "attrs": attrs,
           "inputs": {k: ([enc(*t) for t in v] if isinstance(v, list) else enc(*v)) for k, v in inputs.items()}}
    kwargs = {k: ([make(*t) for t in v] if isinstance(v, list) else make(*v)) for k, v in inputs.items()}
    kwargs.update({k: (tf.as_dtype(v) if k in ("out_type", "Tidx", "index_type") else v) for k, v in attrs.items()})
    try:
        with tf.device("/CPU:0"):
            out = getattr(tf.raw_ops, op)(**kwargs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        rec["expect"] = [enc_out(o) for o in outs]
    except tf.errors.OpError as e:
        rec["error"] = {"code": type(e).__name__, "message": err_text(e)}
    emit(rec)


def shape_record(op, inputs, attrs=None):
    """inputs: name -> (dtype, shape or None, value or None) or a list of them."""
    attrs = attrs or {}
    rec = {"shape": True, "name": op, "attrs": attrs, "inputs": {}}

    def desc(d):
        dtype, shape, value = d
        o = {"dtype": dtype, "shape": shape}
        if value is not None:
            o["value"] = enc(dtype, np.asarray(value, NP[dtype]))
        return o

    for k, v in inputs.items():
        rec["inputs"][k] = [desc(d) for d in v] if isinstance(v, list) else desc(v)
    g = tf.Graph()
    with g.as_default():
        def build(d):
            dtype, shape, value = d
            tfd = tf.as_dtype({"float": "float32", "double": "float64"}.get(dtype, dtype))
            if value is not None:
                return tf.constant(np.asarray(value, NP[dtype]), dtype=tfd)
            return tf.compat.v1.placeholder(tfd, shape)
        kwargs = {k: ([build(d) for d in v] if isinstance(v, list) else build(v)) for k, v in inputs.items()}
        kwargs.update({k: (tf.as_dtype(v) if k in ("out_type", "Tidx", "index_type") else v) for k, v in attrs.items()})
        try:
            out = getattr(tf.raw_ops, op)(**kwargs)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            rec["expect"] = [None if o.shape.rank is None else [(-1 if d is None else d) for d in o.shape.as_list()]
                             for o in outs]
        except (ValueError, tf.errors.OpError) as e:
            msg = str(e) if isinstance(e, ValueError) else e.message
            cut = msg.find(" for '{{node ")
            rec["error"] = {"message": msg[:cut] if cut >= 0 else msg}
    emit(rec)


I32 = lambda v: T("int32", v)
I64 = lambda v: T("int64", v)

# ---------------------------------------------------------------- Transpose
for name in ALL:
    record("Transpose", {"x": rnd(name, [2, 3]), "perm": I32([1, 0])})
for shape, perm in [([], []), ([5], [0]), ([2, 3, 4], [2, 0, 1]), ([2, 3, 4], [0, 2, 1]), ([2, 3, 4], [1, 0, 2]),
                    ([3, 1, 4, 2], [3, 1, 0, 2]), ([0, 3], [1, 0]), ([2, 0, 3], [2, 1, 0]), ([17, 33], [1, 0]),
                    ([5, 67, 9], [0, 2, 1]), ([2, 3, 2, 3, 2], [4, 3, 2, 1, 0]), ([40, 70], [1, 0])]:
    for name in ["float", "int8", "complex128", "string"]:
        record("Transpose", {"x": rnd(name, shape), "perm": I32(perm)})
record("Transpose", {"x": rnd("float", [2, 3, 4]), "perm": I64([2, 1, 0])})
for perm in [[0], [0, 0], [1, 2], [0, -1], [0, 1, 2], [[0, 1]], 0]:
    record("Transpose", {"x": rnd("float", [2, 3]), "perm": I32(perm)})
record("Transpose", {"x": rnd("float", [2, 3]), "perm": T("float", [1, 0])})

# ---------------------------------------------------------------- ConcatV2
for name in ALL:
    record("ConcatV2", {"values": [rnd(name, [2, 1]), rnd(name, [2, 2])], "axis": I32(1)})
for shapes, axis in [([[2, 3], [4, 3]], 0), ([[2, 3], [2, 1], [2, 0]], 1), ([[2, 3], [2, 3]], -1),
                     ([[2, 3], [2, 3]], -2), ([[0, 3], [0, 3]], 0), ([[3], [0]], 0),
                     ([[2, 3, 4], [2, 5, 4], [2, 1, 4]], 1), ([[2, 3], [2, 4]], 2), ([[2, 3], [2, 4]], -3),
                     ([[2, 3], [2, 4]], 0), ([[2], [2, 1]], 0), ([[], []], 0), ([[1, 65], [1, 3]], 1)]:
    for name in ["float", "uint8", "string"]:
        record("ConcatV2", {"values": [rnd(name, s) for s in shapes], "axis": I32(axis)})
record("ConcatV2", {"values": [rnd("int32", [2]), rnd("int32", [3])], "axis": I64(0)})
record("ConcatV2", {"values": [rnd("int32", [2]), rnd("int32", [3])], "axis": I32([0])})

# ---------------------------------------------------------------- Pack / Unpack
for name in ALL:
    record("Pack", {"values": [rnd(name, [2]), rnd(name, [2])]}, {"axis": 1})
    record("Unpack", {"value": rnd(name, [2, 3])}, {"num": 3, "axis": 1})
for shapes, axis in [([[2, 3]] * 3, 0), ([[2, 3]] * 2, 1), ([[2, 3]] * 2, 2), ([[2, 3]] * 2, -1), ([[2, 3]] * 2, -3),
                     ([[2, 3]] * 2, 3), ([[2, 3]] * 2, -4), ([[]] * 4, 0), ([[0, 2]] * 2, 1), ([[2, 3], [3, 2]], 0),
                     ([[2]], 0)]:
    for name in ["float", "string"]:
        record("Pack", {"values": [rnd(name, s) for s in shapes]}, {"axis": axis})
for shape, num, axis in [([2, 3], 2, 0), ([2, 3, 4], 4, -1), ([2, 3, 4], 3, 1), ([2, 3], 3, 0), ([2, 3], 2, 2),
                         ([2, 3], 2, -3), ([0, 3], 0, 0), ([3, 0], 3, 0), ([4], 4, 0)]:
    for name in ["float", "string"]:
        record("Unpack", {"value": rnd(name, shape)}, {"num": num, "axis": axis})
record("Unpack", {"value": rnd("float", [])}, {"num": 1, "axis": 0})

# ---------------------------------------------------------------- Split / SplitV
for name in ALL:
    record("Split", {"axis": I32(0), "value": rnd(name, [4, 2])}, {"num_split": 2})
    record("SplitV", {"value": rnd(name, [2, 5]), "size_splits": I32([1, -1, 2]), "axis": I32(1)}, {"num_split": 3})
for shape, axis, num in [([6, 3], 0, 3), ([6, 3], 1, 3), ([6, 3], -1, 1), ([6, 4], -2, 2), ([6, 3], 0, 4),
                         ([6, 3], 2, 2), ([6, 3], -3, 2), ([0, 4], 1, 2), ([2, 0], 1, 2), ([], 0, 1), ([5, 3], 1, 1)]:
    for name in ["float", "string"]:
        record("Split", {"axis": I32(axis), "value": rnd(name, shape)}, {"num_split": num})
record("Split", {"axis": I32([0]), "value": rnd("float", [4])}, {"num_split": 2})
for shape, sizes, axis in [([5, 2], [2, 3], 0), ([5, 2], [-1, 3], 0), ([5, 2], [2, -1, 1], 0), ([5, 2], [2, 2], 0),
                           ([5, 2], [-1, -1], 0), ([5, 2], [6, -1], 0), ([5, 2], [1, 1], -1), ([5, 2], [5], 0),
                           ([5, 2], [2, 3], 2), ([5, 2], [-2, 7], 0), ([5, 0], [0, 0], 1), ([5, 4], [0, 4], 1)]:
    for name in ["float", "string"]:
        record("SplitV", {"value": rnd(name, shape), "size_splits": I32(sizes), "axis": I32(axis)},
               {"num_split": len(sizes)})
record("SplitV", {"value": rnd("float", [5, 2]), "size_splits": I64([2, 3]), "axis": I32(0)}, {"num_split": 2})
record("SplitV", {"value": rnd("float", [5, 2]), "size_splits": I32([2, 3]), "axis": I64(0)}, {"num_split": 2})

# ---------------------------------------------------------------- Squeeze / ExpandDims
for name in ALL:
    record("Squeeze", {"input": rnd(name, [1, 2, 1])}, {"axis": []})
    record("ExpandDims", {"input": rnd(name, [2]), "axis": I32(0)})
for shape, dims in [([1, 2, 1, 3], []), ([1, 2, 1, 3], [0]), ([1, 2, 1, 3], [-2]), ([1, 2, 1, 3], [0, 2]),
                    ([1, 2, 1, 3], [1]), ([1, 2, 1, 3], [4]), ([1, 2, 1, 3], [-5]), ([1, 1], [0, 0]), ([], []),
                    ([0, 1], []), ([1, 0, 1], [2, 0])]:
    record("Squeeze", {"input": rnd("float", shape)}, {"axis": dims})
for shape, axis in [([2, 3], 0), ([2, 3], 2), ([2, 3], -1), ([2, 3], -3), ([2, 3], 3), ([2, 3], -4), ([], 0),
                    ([], -1), ([0], 1)]:
    record("ExpandDims", {"input": rnd("float", shape), "axis": I32(axis)})
record("ExpandDims", {"input": rnd("float", [2]), "axis": I64(1)})
record("ExpandDims", {"input": rnd("float", [2]), "axis": I32([1])})
record("ExpandDims", {"input": rnd("float", [2]), "axis": I32([1, 0])})

# ---------------------------------------------------------------- Slice
for name in ALL:
    record("Slice", {"input": rnd(name, [3, 4]), "begin": I32([1, 1]), "size": I32([2, -1])})
for shape, begin, size in [([5], [1], [3]), ([5], [0], [-1]), ([5], [5], [0]), ([5], [4], [2]), ([5], [-1], [1]),
                           ([5], [1], [-2]), ([3, 4, 5], [1, 0, 2], [2, 4, 2]), ([3, 4, 5], [0, 1, 0], [-1, 2, -1]),
                           ([3, 4], [0], [1]), ([3, 4], [0, 0], [1]), ([], [], []), ([0, 3], [0, 1], [0, 2]),
                           ([3, 4], [1, 2], [0, 0])]:
    for name in ["float", "string"]:
        record("Slice", {"input": rnd(name, shape), "begin": I32(begin), "size": I32(size)})
record("Slice", {"input": rnd("float", [3, 4]), "begin": I64([1, 1]), "size": I64([1, 2])})
record("Slice", {"input": rnd("float", [3, 4]), "begin": I32([1, 1]), "size": I64([1, 2])})

# ---------------------------------------------------------------- StridedSlice
def ss(name, shape, b, e, s, bm=0, em=0, el=0, na=0, sh=0, itype="int32"):
    record("StridedSlice", {"input": rnd(name, shape), "begin": T(itype, b), "end": T(itype, e), "strides": T(itype, s)},
           {"begin_mask": bm, "end_mask": em, "ellipsis_mask": el, "new_axis_mask": na, "shrink_axis_mask": sh})

for name in ALL:
    ss(name, [4, 3], [1, 0], [3, 3], [1, 2])
SS_CASES = [
    ([10], [2], [8], [2]), ([10], [8], [2], [-2]), ([10], [-1], [-11], [-1]), ([10], [0], [0], [1], 1, 1),
    ([10], [0], [0], [-1], 1, 1), ([10], [-100], [100], [1]), ([10], [100], [-100], [-3]), ([10], [3], [3], [1]),
    ([10], [5], [2], [1]), ([4, 5], [1, 1], [3, 4], [1, 1]), ([4, 5], [0, 1], [0, 4], [1, 1], 1, 1),
    ([4, 5], [3, 4], [0, 0], [-1, -2]), ([4, 5, 6], [1], [2], [1]), ([4, 5, 6], [0, 1], [0, 2], [1, 1], 0, 0, 1),
    ([4, 5, 6], [0, 1, 0], [0, 2, 0], [1, 1, 1], 0, 0, 1), ([4, 5, 6], [1, 0, 2], [2, 0, 3], [1, 1, 1], 0, 0, 2),
    ([4, 5, 6], [0, 0], [1, 1], [1, 1], 0, 0, 0, 1), ([4, 5, 6], [0, 0, 0], [1, 1, 1], [1, 1, 1], 0, 0, 0, 2),
    ([4, 5, 6], [1, 2], [2, 3], [1, 1], 0, 0, 0, 0, 3), ([4, 5, 6], [1, 2], [2, 3], [1, 1], 0, 0, 0, 0, 1),
    ([4, 5, 6], [-1], [0], [1], 0, 0, 0, 0, 1), ([4, 5, 6], [4], [5], [1], 0, 0, 0, 0, 1),
    ([4, 5, 6], [-5], [0], [1], 0, 0, 0, 0, 1), ([4, 5, 6], [0, 0, 0], [0, 0, 0], [1, 1, 1], 7, 7, 2, 1),
    ([4, 5, 6], [0, 0, 2], [0, 0, 4], [1, 1, 1], 0, 0, 3), ([4, 5, 6], [0, 0], [0, 0], [1, 1], 0, 0, 3),
    ([4, 5, 6], [0, 0, 0], [1, 1, 1], [1, 1, 1], 0, 0, 0, 1, 2), ([4, 5, 6], [0], [1], [0]),
    ([4, 5, 6], [0, 0], [1], [1, 1]), ([4, 5], [0, 0, 0], [1, 1, 1], [1, 1, 1]),
    ([4, 5], [0, 0, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1], 0, 0, 0, 6), ([], [0], [1], [1], 0, 0, 0, 1),
    ([], [], [], []), ([3, 4], [0, 0], [1, 1], [1, 1], 0, 0, 0, 0, 0xfff),
    ([4, 5, 6], [1, 1, 1], [3, 4, 5], [2, 2, 2]), ([4, 5, 6], [3, 4, 5], [0, 0, 0], [-2, -2, -2]),
    ([0, 3], [0, 0], [1, 3], [1, 1]), ([3], [1], [2], [1], 0, 0, 0, 0, 1),
    ([2, 3], [0, -1], [2, 0], [1, 1], 0, 0, 0, 0, 2), ([4, 3], [1], [2], [-1], 0, 0, 0, 0, 1),
    ([4, 3], [1], [2], [2], 0, 0, 0, 0, 1), ([5], [-2**31], [2**31 - 1], [2**31 - 1]),
    ([5], [2**31 - 1], [-2**31], [-2**31]), ([6, 7], [0, 0, 0], [0, 0, 0], [1, 1, 1], 0, 0, 5),
    ([6, 7], [1, 0], [2, 0], [1, 1], 0, 0, 0, 2, 1), ([2, 3, 4, 5], [1, 0, 1], [2, 0, 3], [1, 1, 1], 0, 0, 2, 0, 1),
]
for c in SS_CASES:
    for name in ["float", "string"]:
        ss(name, *c)
ss("int16", [4, 5], [1, 1], [3, 4], [1, 1], itype="int64")
ss("int16", [10], [2**40], [-2**40], [-2**40], itype="int64")
ss("int16", [10], [0], [10], [2**62], itype="int64")
ss("float", [10], [0], [10], [1], 0xffffffff & ~0x80000000, 0x7fffffff, 0, 0, 0)
ss("float", [4, 5], [0, 0], [1, 1], [1, 1], 0, 0, 0x7fffffff, 0, 0)
ss("float", [4, 5], [0, 0], [1, 1], [1, 1], 0, 0, 0, 0x7fffffff, 0)

# ---------------------------------------------------------------- GatherV2
for name in ALL:
    record("GatherV2", {"params": rnd(name, [4, 2]), "indices": I32([3, 0, 3]), "axis": I32(0)})
for shape, idx, axis, bd in [([5], [[0, 4], [2, 2]], 0, 0), ([3, 4], [1], 1, 0), ([3, 4], [[3, 0, 1]], -1, 0),
                             ([3, 4, 2], [], 1, 0), ([3, 4], 2, 0, 0), ([3, 4], [3], 0, 0), ([3, 4], [-1], 0, 0),
                             ([3, 4], [0], 2, 0), ([3, 4], [0], -3, 0), ([0, 4], [], 0, 0), ([2, 0], [0, 1], 0, 0),
                             ([2, 3, 4], [[0, 2], [1, 1]], 1, 1), ([2, 3, 4], [[0, 3], [1, 1]], 2, 1),
                             ([2, 3, 4], [[0, 2], [1, 1]], 2, -1), ([2, 3, 4], [[0, 2], [1, 1]], 0, 1),
                             ([2, 3, 4], [[0, 2], [1, 1]], 1, 2), ([2, 3, 4], [[0, 2]], 1, 1),
                             ([2, 3, 4], [[[0, 1]], [[2, 1]]], 2, 2), ([2, 3, 4], [[[0, 1]], [[2, 1]]], 2, -2),
                             ([3, 70], [2, 0, 1, 2], 0, 0)]:
    for name in ["float", "string"]:
        record("GatherV2", {"params": rnd(name, shape), "indices": I32(idx), "axis": I32(axis)}, {"batch_dims": bd})
record("GatherV2", {"params": rnd("int8", [4, 2]), "indices": I64([3, 0]), "axis": I64(1)})
record("GatherV2", {"params": rnd("int8", [4, 2]), "indices": I64([2**40]), "axis": I64(0)})
record("GatherV2", {"params": rnd("int8", [4, 2]), "indices": I32([0]), "axis": I32([0])})
record("GatherV2", {"params": rnd("int8", [4, 2]), "indices": T("int16", [0]), "axis": I32(0)})

# ---------------------------------------------------------------- Pad / PadV2 / MirrorPad
for name in ALL:
    record("Pad", {"input": rnd(name, [2, 2]), "paddings": I32([[1, 0], [0, 2]])})
for shape, pads in [([3], [[1, 2]]), ([2, 3], [[0, 0], [1, 1]]), ([2, 3], [[2, 1], [0, 0]]), ([], []),
                    ([0, 2], [[1, 1], [1, 0]]), ([2, 3], [[1, 1]]), ([2, 3], [[-1, 0], [0, 0]]), ([2, 3], [[1, 1, 1], [0, 0, 0]]),
                    ([2, 3, 2], [[1, 0], [0, 1], [2, 2]]), ([2, 3], [1, 1]), ([1, 65], [[0, 1], [3, 2]])]:
    for name in ["float", "string"]:
        record("Pad", {"input": rnd(name, shape), "paddings": I32(pads)})
record("Pad", {"input": rnd("float", [2]), "paddings": I64([[1, 1]])})
for name in ["float", "int32", "string", "bool", "half"]:
    cv = values(name, [])
    record("PadV2", {"input": rnd(name, [2, 3]), "paddings": I32([[1, 0], [2, 1]]), "constant_values": (name, cv)})
record("PadV2", {"input": rnd("float", [2]), "paddings": I32([[1, 1]]), "constant_values": rnd("float", [1])})
for name in ALL:
    record("MirrorPad", {"input": rnd(name, [3, 3]), "paddings": I32([[1, 2], [2, 0]])}, {"mode": "REFLECT"})
for mode in ["REFLECT", "SYMMETRIC"]:
    for shape, pads in [([4], [[3, 3]]), ([4], [[4, 0]]), ([4], [[0, 4]]), ([3, 4], [[2, 1], [1, 3]]),
                        ([3, 4], [[3, 0], [0, 0]]), ([1], [[0, 0]]), ([1], [[1, 0]]), ([], []),
                        ([2, 3, 2], [[1, 1], [2, 0], [1, 1]]), ([3], [[-1, 0]]), ([0, 3], [[0, 0], [1, 1]])]:
        for name in ["float", "string"]:
            record("MirrorPad", {"input": rnd(name, shape), "paddings": I32(pads)}, {"mode": mode})

# ---------------------------------------------------------------- Tile
for name in ALL:
    record("Tile", {"input": rnd(name, [2, 2]), "multiples": I32([2, 3])})
for shape, mult in [([3], [4]), ([2, 3], [1, 1]), ([2, 3], [3, 1]), ([2, 3], [1, 3]), ([2, 1, 3], [2, 5, 2]),
                    ([2, 3], [0, 2]), ([0, 3], [3, 2]), ([], []), ([2, 3], [2]), ([2, 3], [-1, 1]), ([2], [[2]]),
                    ([1, 33], [70, 3])]:
    for name in ["float", "string"]:
        record("Tile", {"input": rnd(name, shape), "multiples": I32(mult)})
record("Tile", {"input": rnd("float", [2]), "multiples": I64([3])})
record("Tile", {"input": rnd("float", [2, 2]), "multiples": I64([2**31, 2**31])})
record("Tile", {"input": rnd("float", [2, 2]), "multiples": I32([2**30, 2**30])})

# ---------------------------------------------------------------- Fill
for name in ALL:
    record("Fill", {"dims": I32([2, 3]), "value": rnd(name, [])})
for dims in [[], [0], [3], [2, 0, 4], [-1, 2], [[2]], [1 << 20, 1 << 20]]:
    record("Fill", {"dims": I32(dims), "value": rnd("float", [])})
record("Fill", {"dims": I64([1 << 40, 1 << 40]), "value": rnd("float", [])})
record("Fill", {"dims": I64([1 << 62, 4]), "value": rnd("float", [])})
record("Fill", {"dims": I64([2]), "value": rnd("string", [])})
record("Fill", {"dims": I32([2]), "value": rnd("float", [1])})

# ---------------------------------------------------------------- Range
for name, cases in [("int32", [(0, 5, 1), (5, 0, -2), (0, 0, 1), (0, 5, 0), (5, 0, 1), (0, 10, 3), (-3, 3, 4),
                               (-2**31, 2**31 - 1, 2**30), (0, 1, 2**31 - 1)]),
                    ("int64", [(0, 5, 2), (2**62, -2**62, -2**61), (0, 2**40, 1)]),
                    ("float", [(0.0, 1.0, 0.1), (1.0, 0.0, -0.3), (0.5, 0.5, 1.0), (0.0, 1.0, 0.0),
                               (0.0, float("inf"), 1.0), (0.0, float("nan"), 1.0), (0.0, 1e12, 1e-3),
                               (-1.5, 2.25, 0.75), (0.0, 1.0, -0.1)]),
                    ("double", [(0.0, 1.0, 0.1), (1e-3, 2.0, 0.37)]),
                    ("half", [(0.0, 1.0, 0.25)]), ("bfloat16", [(0.0, 2.0, 0.5)]), ("int16", [(0, 5, 1)]),
                    ("int8", [(0, 5, 1)]), ("uint16", [(0, 5, 2)]), ("uint32", [(1, 9, 3)]), ("uint64", [(1, 9, 3)]),
                    ("uint8", [(0, 4, 1)]), ("complex64", [(0, 4, 1)])]:
    for s, l, d in cases:
        record("Range", {"start": T(name, s), "limit": T(name, l), "delta": T(name, d)})
record("Range", {"start": I32([0]), "limit": I32(4), "delta": I32(1)})

# ---------------------------------------------------------------- ZerosLike / OnesLike / Size / Rank / ShapeN
for name in ALL:
    record("ZerosLike", {"x": rnd(name, [2, 3])})
    record("OnesLike", {"x": rnd(name, [2, 3])})
    record("Size", {"input": rnd(name, [2, 3])}, {"out_type": "int32"})
    record("Rank", {"input": rnd(name, [2, 3])})
for shape in [[], [0], [4, 0, 2], [3, 1]]:
    record("ZerosLike", {"x": rnd("float", shape)})
    record("OnesLike", {"x": rnd("int64", shape)})
    record("Size", {"input": rnd("float", shape)}, {"out_type": "int64"})
    record("Rank", {"input": rnd("string", shape)})
record("Size", {"input": rnd("float", [2])}, {"out_type": "float32"})
record("ShapeN", {"input": [rnd("float", [2, 3]), rnd("float", []), rnd("float", [0, 5, 1])]}, {"out_type": "int32"})
record("ShapeN", {"input": [rnd("string", [7])]}, {"out_type": "int64"})
record("ShapeN", {"input": [rnd("int8", [7]), rnd("int8", [2, 2])]}, {"out_type": "float32"})

# ---------------------------------------------------------------- OneHot
for name in ["float", "double", "int32", "int64", "int8", "uint8", "bool", "half", "bfloat16", "complex64", "string",
             "int16", "uint16", "uint32", "uint64", "complex128"]:
    on, off = values(name, []), values(name, [])
    record("OneHot", {"indices": I32([0, 2, -1, 5]), "depth": I32(3), "on_value": (name, on), "off_value": (name, off)},
           {"axis": -1})
for idx_name, idx, depth, axis in [("int64", [[0, 1], [2, 3]], 3, 0), ("int64", [[0, 1], [2, 3]], 4, 1),
                                   ("uint8", [0, 1, 255], 3, -1), ("int32", 1, 3, -1), ("int32", [1, 2], 0, -1),
                                   ("int32", [1, 2], -1, -1), ("int32", [1, 2], 3, -2), ("int32", [1, 2], 3, 2),
                                   ("int8", [1, -1], 2, 0), ("int32", [], 3, -1)]:
    record("OneHot", {"indices": T(idx_name, idx), "depth": I32(depth), "on_value": T("float", 1.5),
                      "off_value": T("float", -0.5)}, {"axis": axis})
record("OneHot", {"indices": I32([1]), "depth": I32([3]), "on_value": T("float", 1), "off_value": T("float", 0)}, {"axis": -1})
record("OneHot", {"indices": I32([1]), "depth": I32(3), "on_value": T("float", [1]), "off_value": T("float", 0)}, {"axis": -1})

# ---------------------------------------------------------------- Cumsum
for name in ["float", "double", "half", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
             "uint64", "complex64", "complex128", "bool", "string", "qint8"]:
    if name in ("bool", "string", "qint8"):
        record("Cumsum", {"x": rnd(name, [4]), "axis": I32(0)})
        continue
    if name.startswith("int") or name.startswith("uint"):
        x = T(name, nrng.integers(0, 100, 6).reshape(2, 3))
    elif name.startswith("complex"):
        x = T(name, (nrng.standard_normal(6) + 1j * nrng.standard_normal(6)).reshape(2, 3))
    else:
        x = T(name, nrng.standard_normal(6).reshape(2, 3))
    for ex in [False, True]:
        for rev in [False, True]:
            record("Cumsum", {"x": x, "axis": I32(1)}, {"exclusive": ex, "reverse": rev})
for shape, axis in [([4, 5, 3], 1), ([4, 5, 3], -3), ([4, 5, 3], 2), ([4, 5, 3], 3), ([4, 5, 3], -4), ([0, 3], 1),
                    ([5], 0), ([], 0), ([3, 0], 0)]:
    x = T("int32", nrng.integers(-50, 50, int(np.prod(shape))).reshape(shape))
    for ex, rev in [(False, False), (True, True)]:
        record("Cumsum", {"x": x, "axis": I32(axis)}, {"exclusive": ex, "reverse": rev})
record("Cumsum", {"x": T("float", [1.0, float("nan"), float("inf"), -float("inf"), 2.0]), "axis": I32(0)})
record("Cumsum", {"x": T("int8", [100, 100, 100]), "axis": I32(0)})
record("Cumsum", {"x": T("float", [1.0, 2.0]), "axis": I64(0)})
record("Cumsum", {"x": T("float", [1.0, 2.0]), "axis": I32([0])})

# ---------------------------------------------------------------- TopKV2
for name in ["float", "double", "half", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
             "uint64", "bool", "complex64", "string"]:
    if name in ("bool", "complex64", "string"):
        record("TopKV2", {"input": rnd(name, [4]), "k": I32(2)})
        continue
    if name.startswith("int") or name.startswith("uint"):
        x = T(name, nrng.integers(0, 5, 12).reshape(2, 6))
    else:
        x = T(name, nrng.integers(-3, 3, 12).reshape(2, 6))
    for k in [0, 1, 3, 6]:
        record("TopKV2", {"input": x, "k": I32(k)}, {"sorted": True})
    record("TopKV2", {"input": x, "k": I32(3)}, {"sorted": False})
nanx = T("float", [1.0, float("nan"), 3.0, -float("inf"), float("inf"), -0.0, 0.0, float("nan"), 3.0, -1.0])
for k in [1, 2, 3, 5, 10]:
    record("TopKV2", {"input": nanx, "k": I32(k)})
record("TopKV2", {"input": nanx, "k": I32(4)}, {"sorted": False})
for shape, k in [([5], 6), ([5], -1), ([], 1), ([0, 3], 2), ([3, 0], 0), ([3, 40], 7), ([2, 300], 200)]:
    x = T("float", nrng.integers(-20, 20, int(np.prod(shape))).reshape(shape).astype(np.float32))
    record("TopKV2", {"input": x, "k": I32(k)})
record("TopKV2", {"input": T("float", [1.0, 2.0]), "k": I32([1])})
record("TopKV2", {"input": T("int32", [5, 1, 5, 3]), "k": I64(2)}, {"index_type": "int64"})

# ================================================================ shape functions (graph mode)
F = "float"
sr = shape_record
sr("Transpose", {"x": (F, [2, None, 4], None), "perm": ("int32", [3], [2, 0, 1])})
sr("Transpose", {"x": (F, [2, None, 4], None), "perm": ("int32", [3], None)})
sr("Transpose", {"x": (F, None, None), "perm": ("int32", [3], None)})
sr("Transpose", {"x": (F, None, None), "perm": ("int32", None, None)})
sr("Transpose", {"x": (F, [2, 3], None), "perm": ("int32", [3], [0, 1, 2])})
sr("Transpose", {"x": (F, [2, 3], None), "perm": ("int32", [2], [0, 0])})
sr("Transpose", {"x": (F, [2, 3], None), "perm": ("int32", [2], [0, 2])})
sr("Transpose", {"x": (F, [3, 3], None), "perm": ("int32", [2], None)})
sr("Transpose", {"x": (F, None, None), "perm": ("int32", [2], [1, 0])})
sr("ConcatV2", {"values": [(F, [2, 3], None), (F, [2, None], None)], "axis": ("int32", [], 1)})
sr("ConcatV2", {"values": [(F, [2, 3], None), (F, [None, 4], None)], "axis": ("int32", [], None)})
sr("ConcatV2", {"values": [(F, [2, 3], None), (F, [3, 4], None)], "axis": ("int32", [], 1)})
sr("ConcatV2", {"values": [(F, [2, 3], None), (F, None, None)], "axis": ("int32", [], 0)})
sr("ConcatV2", {"values": [(F, [2, 3], None), (F, [2], None)], "axis": ("int32", [], 0)})
sr("ConcatV2", {"values": [(F, [2, 3], None), (F, [2, 3], None)], "axis": ("int32", [], 2)})
sr("ConcatV2", {"values": [(F, [2, 3], None), (F, [2, 3], None)], "axis": ("int32", [], -1)})
sr("ConcatV2", {"values": [(F, [], None), (F, [], None)], "axis": ("int32", [], 0)})
sr("Pack", {"values": [(F, [2, None], None), (F, [None, 3], None)]}, {"axis": 1})
sr("Pack", {"values": [(F, [2, 3], None), (F, [3, 3], None)]}, {"axis": 0})
sr("Pack", {"values": [(F, [2, 3], None), (F, [2, 3], None)]}, {"axis": 3})
sr("Pack", {"values": [(F, None, None), (F, [2], None)]}, {"axis": -1})
sr("Unpack", {"value": (F, [2, None, 4], None)}, {"num": 2, "axis": 0})
sr("Unpack", {"value": (F, [2, None, 4], None)}, {"num": 3, "axis": 0})
sr("Unpack", {"value": (F, [2, 3], None)}, {"num": 3, "axis": 2})
sr("Unpack", {"value": (F, None, None)}, {"num": 3, "axis": 1})
sr("Split", {"axis": ("int32", [], 1), "value": (F, [2, 6], None)}, {"num_split": 3})
sr("Split", {"axis": ("int32", [], 1), "value": (F, [2, 7], None)}, {"num_split": 3})
sr("Split", {"axis": ("int32", [], None), "value": (F, [2, 6], None)}, {"num_split": 2})
sr("Split", {"axis": ("int32", [], 1), "value": (F, [2, None], None)}, {"num_split": 2})
sr("Split", {"axis": ("int32", [], 2), "value": (F, [2, 6], None)}, {"num_split": 2})
sr("SplitV", {"value": (F, [2, 6], None), "size_splits": ("int32", [3], [1, -1, 2]), "axis": ("int32", [], 1)}, {"num_split": 3})
sr("SplitV", {"value": (F, [2, 6], None), "size_splits": ("int32", [2], [1, 2]), "axis": ("int32", [], 1)}, {"num_split": 2})
sr("SplitV", {"value": (F, [2, 6], None), "size_splits": ("int32", [2], None), "axis": ("int32", [], 1)}, {"num_split": 2})
# Not recorded: SplitV with an unknown axis and known sizes that fit no way (TensorFlow's shape
# function then still reports "can't split axis of size 6 ..."; tensorcast gives unknown dims).
sr("SplitV", {"value": (F, [2, None], None), "size_splits": ("int32", [2], [1, -1]), "axis": ("int32", [], 1)}, {"num_split": 2})
sr("Squeeze", {"input": (F, [1, None, 1, 3], None)}, {"axis": []})
sr("Squeeze", {"input": (F, [1, None, 1, 3], None)}, {"axis": [0, -2]})
sr("Squeeze", {"input": (F, [1, None, 1, 3], None)}, {"axis": [3]})
sr("Squeeze", {"input": (F, [1, None, 1, 3], None)}, {"axis": [4]})
sr("Squeeze", {"input": (F, None, None)}, {"axis": [0]})
sr("ExpandDims", {"input": (F, [2, None], None), "axis": ("int32", [], -1)})
sr("ExpandDims", {"input": (F, [2, None], None), "axis": ("int32", [], None)})
sr("ExpandDims", {"input": (F, [2, None], None), "axis": ("int32", [], 4)})
sr("ExpandDims", {"input": (F, None, None), "axis": ("int32", [], 0)})
sr("Slice", {"input": (F, [5, None, 4], None), "begin": ("int32", [3], [1, 0, 1]), "size": ("int32", [3], [2, -1, -1])})
sr("Slice", {"input": (F, [5, None, 4], None), "begin": ("int32", [3], None), "size": ("int32", [3], [2, -1, 3])})
sr("Slice", {"input": (F, [5, 6, 4], None), "begin": ("int32", [3], [1, 0, 1]), "size": ("int32", [3], None)})
sr("Slice", {"input": (F, [5, 6, 4], None), "begin": ("int32", [3], [4, 0, 1]), "size": ("int32", [3], [2, -1, -1])})
sr("Slice", {"input": (F, [5, 6], None), "begin": ("int32", [3], [0, 0, 0]), "size": ("int32", [3], [1, 1, 1])})
sr("StridedSlice", {"input": (F, [5, None, 4], None), "begin": ("int32", [2], [1, 0]), "end": ("int32", [2], [3, 2]),
                    "strides": ("int32", [2], [1, 1])}, {"shrink_axis_mask": 2})
sr("StridedSlice", {"input": (F, [5, 6, 4], None), "begin": ("int32", [2], None), "end": ("int32", [2], [3, 2]),
                    "strides": ("int32", [2], [1, 1])})
sr("StridedSlice", {"input": (F, [5, 6, 4], None), "begin": ("int32", [3], [0, 0, 0]), "end": ("int32", [3], [0, 0, 0]),
                    "strides": ("int32", [3], [1, 1, 1])}, {"ellipsis_mask": 2, "new_axis_mask": 1})
sr("StridedSlice", {"input": (F, None, None), "begin": ("int32", [2], [1, 0]), "end": ("int32", [2], [3, 2]),
                    "strides": ("int32", [2], [1, 1])})
sr("StridedSlice", {"input": (F, [5, 6], None), "begin": ("int32", [2], [1, 0]), "end": ("int32", [2], [3, 2]),
                    "strides": ("int32", [2], [0, 1])})
sr("GatherV2", {"params": (F, [5, None, 3], None), "indices": ("int32", [2, None], None), "axis": ("int32", [], 1)})
sr("GatherV2", {"params": (F, [5, None, 3], None), "indices": ("int32", [2, None], None), "axis": ("int32", [], None)})
sr("GatherV2", {"params": (F, [5, 4, 3], None), "indices": ("int32", [5, 2], None), "axis": ("int32", [], 2)}, {"batch_dims": 1})
sr("GatherV2", {"params": (F, [5, 4, 3], None), "indices": ("int32", [5, 2], None), "axis": ("int32", [], 3)})
sr("Pad", {"input": (F, [2, None], None), "paddings": ("int32", [2, 2], [[1, 1], [2, 0]])})
sr("Pad", {"input": (F, [2, None], None), "paddings": ("int32", [2, 2], None)})
sr("Pad", {"input": (F, None, None), "paddings": ("int32", [3, 2], None)})
sr("Pad", {"input": (F, [2, 3], None), "paddings": ("int32", [3, 2], None)})
sr("MirrorPad", {"input": (F, [3, None], None), "paddings": ("int32", [2, 2], [[1, 1], [2, 0]])}, {"mode": "REFLECT"})
sr("Tile", {"input": (F, [2, None, 3], None), "multiples": ("int32", [3], [2, 2, 0])})
sr("Tile", {"input": (F, [2, None, 3], None), "multiples": ("int32", [3], None)})
sr("Tile", {"input": (F, [2, 3], None), "multiples": ("int32", [3], None)})
sr("Fill", {"dims": ("int32", [3], [2, 0, 4]), "value": (F, [], None)})
sr("Fill", {"dims": ("int32", [3], None), "value": (F, [], None)})
sr("Fill", {"dims": ("int32", None, None), "value": (F, [], None)})
sr("Fill", {"dims": ("int32", [2], [2, -1]), "value": (F, [], None)})
sr("Range", {"start": ("int32", [], 0), "limit": ("int32", [], 10), "delta": ("int32", [], 3)})
sr("Range", {"start": ("int32", [], 0), "limit": ("int32", [], None), "delta": ("int32", [], 3)})
sr("Range", {"start": ("float", [], 0.0), "limit": ("float", [], 1.0), "delta": ("float", [], 0.1)})
sr("Range", {"start": ("int32", [], 0), "limit": ("int32", [], 10), "delta": ("int32", [], 0)})
sr("ZerosLike", {"x": (F, [2, None], None)})
sr("OnesLike", {"x": (F, None, None)})
sr("Size", {"input": (F, [2, None], None)}, {"out_type": "int64"})
sr("Rank", {"input": (F, None, None)})
sr("ShapeN", {"input": [(F, [2, None], None), (F, None, None)]}, {"out_type": "int32"})
sr("OneHot", {"indices": ("int32", [2, None], None), "depth": ("int32", [], 5), "on_value": (F, [], None),
              "off_value": (F, [], None)}, {"axis": 1})
sr("OneHot", {"indices": ("int32", [2, None], None), "depth": ("int32", [], None), "on_value": (F, [], None),
              "off_value": (F, [], None)}, {"axis": -1})
sr("OneHot", {"indices": ("int32", [2, None], None), "depth": ("int32", [], 5), "on_value": (F, [], None),
              "off_value": (F, [], None)}, {"axis": 3})
sr("Cumsum", {"x": (F, [2, None], None), "axis": ("int32", [], None)})
sr("TopKV2", {"input": (F, [2, None, 7], None), "k": ("int32", [], 3)})
sr("TopKV2", {"input": (F, [2, 7], None), "k": ("int32", [], None)})
sr("TopKV2", {"input": (F, [2, 7], None), "k": ("int32", [], 8)})
sr("TopKV2", {"input": (F, [], None), "k": ("int32", [], 1)})
