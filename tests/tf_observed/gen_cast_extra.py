"""Records what TensorFlow's Cast does for the float8 and 4-bit integer dtypes.

Run with TensorFlow installed: python3 tests/tf_observed/gen_cast_extra.py > tests/tf_observed/cast_extra.jsonl
Each line has the shape of the shared conformance vectors (cast.jsonl): input, type, and
either expect or error (or "unsupported": true when TensorFlow has no kernel for the pair).
"""
import json, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
import ml_dtypes

NEW = {"float8_e4m3fn": 25, "float8_e5m2": 24, "int4": 29, "uint4": 30}
STD = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
       "half", "bfloat16", "float", "double", "complex64", "complex128"]
NP = {"float": np.float32, "double": np.float64, "half": np.float16, "bfloat16": ml_dtypes.bfloat16,
      "complex64": np.complex64, "complex128": np.complex128, "bool": np.bool_,
      "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2,
      "int4": ml_dtypes.int4, "uint4": ml_dtypes.uint4}

def dt(name):
    return tf.as_dtype(NEW[name]) if name in NEW else tf.as_dtype(name if name != "float" else "float32")

def values(name):
    if name in ("float8_e4m3fn", "float8_e5m2", "half", "bfloat16", "float", "double"):
        v = [0.0, -0.0, 1.0, -1.5, 0.3, 2.75, 17.0, -240.0, 448.0, 1e-3, 3e4, 1e6, float("inf"), float("-inf"), float("nan")]
        return np.array(v, np.float64).astype(NP[name])
    if name in ("complex64", "complex128"):
        return np.array([0, 1 + 2j, -3.5 + 0.25j, 100 - 1j], NP[name])
    if name == "bool":
        return np.array([True, False, True])
    if name == "int4":
        return np.array(list(range(-8, 8)), np.int8).astype(ml_dtypes.int4)
    if name == "uint4":
        return np.array(list(range(0, 16)), np.uint8).astype(ml_dtypes.uint4)
    info = np.iinfo(name)
    return np.array([0, 1, 7, 8, 15, 16, -1 if info.min < 0 else 200, info.max, info.min], name)

def enc(name, arr):
    a = np.ascontiguousarray(arr)
    return {"dtype": name, "shape": list(a.shape), "hex": a.tobytes().hex()}

pairs = [(a, b) for a in NEW for b in STD + list(NEW)] + [(a, b) for a in STD for b in NEW]
n = 0
for src, dst in pairs:
    x = values(src)
    t = tf.constant(x, dtype=dt(src)) if src not in NEW else tf.constant(x)
    rec = {"id": f"cast-extra-{n:04d}", "op": "cast", "input": enc(src, x), "type": dst}
    try:
        y = tf.cast(t, dt(dst))
        rec["expect"] = enc(dst, y.numpy())
    except tf.errors.UnimplementedError as e:
        rec["unsupported"] = True
        rec["error"] = {"kind": "UnimplementedError", "message": e.message.split(" [Op:")[0].split("}} ")[-1]}
    print(json.dumps(rec, sort_keys=True))
    n += 1
