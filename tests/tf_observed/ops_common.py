"""Shared helpers of the op-family generators (gen_ops_*.py): dtypes, encoding of tensors as
the conformance records spell them, and recording eager results/errors and graph-mode shapes of
tf.raw_ops calls (TensorFlow 2.21, CPU)."""
import json, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import ml_dtypes
import tensorflow as tf

tf.config.set_visible_devices([], "GPU")

NP = {"float": np.float32, "double": np.float64, "half": np.float16, "bfloat16": ml_dtypes.bfloat16,
      "complex64": np.complex64, "complex128": np.complex128, "bool": np.bool_,
      "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
      "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64}
TF = {"float": tf.float32, "double": tf.float64, "half": tf.float16, "bfloat16": tf.bfloat16,
      "complex64": tf.complex64, "complex128": tf.complex128, "bool": tf.bool, "int8": tf.int8,
      "int16": tf.int16, "int32": tf.int32, "int64": tf.int64, "uint8": tf.uint8,
      "uint16": tf.uint16, "uint32": tf.uint32, "uint64": tf.uint64, "string": tf.string}
FLOATS = ["float", "double", "half", "bfloat16"]


def name_of(dtype):
    return {tf.float32: "float", tf.float64: "double", tf.float16: "half"}.get(dtype, dtype.name)


def enc(name, arr):
    if name == "string":
        a = np.asarray(arr, dtype=object)
        return {"dtype": "string", "shape": list(a.shape), "strings": [bytes(s).hex() for s in a.reshape(-1)]}
    a = np.asarray(arr, dtype=NP[name])
    return {"dtype": name, "shape": list(a.shape), "hex": a.tobytes(order="C").hex()}


def values(rng, name, shape, special=False):
    """Random values of dtype `name`: normal floats (a few NaN/inf/-0 when `special`), complex
    with both parts random, integers over a range that overflows products sometimes."""
    size = int(np.prod(shape)) if len(shape) else 1
    if name in FLOATS:
        v = rng.standard_normal(size)
        if special and size:
            idx = rng.choice(size, max(1, size // 6), replace=False)
            v[idx] = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0], len(idx))
        return v.astype(NP[name]).reshape(shape)
    if name.startswith("complex"):
        return (rng.standard_normal(size) + 1j * rng.standard_normal(size)).astype(NP[name]).reshape(shape)
    if name == "string":
        return np.array([b"a"] * size, dtype=object).reshape(shape)
    if name == "bool":
        return (rng.integers(0, 2, size) == 1).reshape(shape)
    info = np.iinfo(NP[name])
    if special:
        v = rng.integers(info.min, info.max, size, dtype=np.int64 if info.min < 0 else np.uint64, endpoint=True)
    else:
        v = rng.integers(max(info.min, -100), min(info.max, 100), size, endpoint=True)
    return v.astype(NP[name]).reshape(shape)


def make(name, arr):
    if name == "string":
        return tf.constant(np.asarray(arr, dtype=object).tolist(), dtype=tf.string, shape=np.shape(arr))
    return tf.constant(np.asarray(arr, dtype=NP[name]), dtype=TF[name])


def strip(msg):
    msg = msg.split(" [Op:")[0]
    if msg.startswith("{{function_node "):
        msg = msg.split("}} ", 1)[1]
    return msg


class Recorder:
    def __init__(self, family):
        self.family = family
        self.n = 0

    def emit(self, rec):
        rec["id"] = f"{self.family}-{self.n:05d}"
        self.n += 1
        print(json.dumps(rec, sort_keys=True))

    def eager(self, op, inputs, attrs=None, outputs=None):
        """inputs: list of (arg name, dtype name, array); records expect (a list when the op
        has several outputs and `outputs` names how many to keep) or error."""
        attrs = dict(attrs or {})
        # dtype attrs are given as names ("int32") and passed to TensorFlow as dtypes.
        tf_attrs = {k: (tf.as_dtype(NP[v]) if k in ("output_type", "out_type") else v) for k, v in attrs.items()}
        rec = {"op": op, "kind": "eager", "inputs": [[k, enc(d, a)] for k, d, a in inputs],
               "attrs": attrs}
        try:
            with tf.device("/CPU:0"):
                r = getattr(tf.raw_ops, op)(**{k: make(d, a) for k, d, a in inputs}, **tf_attrs)
            if isinstance(r, (list, tuple)):
                rec["expect"] = [enc(name_of(t.dtype), t.numpy()) for t in r][: outputs or len(r)]
            else:
                rec["expect"] = enc(name_of(r.dtype), r.numpy())
        except tf.errors.OpError as e:
            rec["error"] = {"code": type(e).__name__, "message": strip(e.message)}
        self.emit(rec)
        return rec

    def shape(self, op, inputs, attrs=None, output=0):
        """inputs: list of (arg name, dtype name, shape or None); a -1 dim is unknown. Records
        the graph-mode output shape (None: unknown rank) or the shape function's error without
        TensorFlow's ` for '{{node ...}}' with input shapes` tail."""
        attrs = dict(attrs or {})
        rec = {"op": op, "kind": "shape",
               "inputs": [[k, d, s] for k, d, s in inputs], "attrs": attrs, "output": output}
        g = tf.Graph()
        with g.as_default():
            try:
                ph = {k: tf.compat.v1.placeholder(TF[d], shape=None if s is None else [None if x == -1 else x for x in s])
                      for k, d, s in inputs}
                r = getattr(tf.raw_ops, op)(**ph, **attrs)
                t = r[output] if isinstance(r, (list, tuple)) else r
                rec["expect_shape"] = None if t.shape.rank is None else [-1 if x is None else x for x in t.shape.as_list()]
            except (ValueError, tf.errors.OpError) as e:
                msg = str(e)
                msg = msg.split(" for '{{node ")[0]
                rec["error"] = {"message": msg}
        self.emit(rec)
        return rec
