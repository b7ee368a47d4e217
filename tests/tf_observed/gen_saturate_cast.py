"""Records what TensorFlow's `tf.dtypes.saturate_cast` does for every pair of dtypes Cast takes.

Run with TensorFlow installed:
    python3 tests/tf_observed/gen_saturate_cast.py > tests/tf_observed/saturate_cast.jsonl
Each line: id, op "saturate_cast", input {dtype, shape, hex}, type, and either expect
{dtype, shape, hex} or error {kind, message} (TensorFlow refuses the pair: no ClipByValue or
Cast kernel for a dtype, or a dtype without min/max such as bool).
Inputs are edge values of the source dtype: zeros of both signs, halves, values at and just
beyond every narrower type's limits, the dtype's own extremes, infinities and NaNs.
"""
import json, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import logging
logging.disable(logging.WARNING)
import numpy as np
import tensorflow as tf
import ml_dtypes

tf.get_logger().setLevel("ERROR")

FLOATS = ["half", "bfloat16", "float", "double", "float8_e4m3fn", "float8_e5m2",
          "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2fnuz"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "int4", "uint4"]
COMPLEX = ["complex64", "complex128"]
ALL = ["bool"] + INTS + FLOATS + COMPLEX
NP = {"float": np.float32, "double": np.float64, "half": np.float16,
      "bfloat16": ml_dtypes.bfloat16, "complex64": np.complex64, "complex128": np.complex128,
      "bool": np.bool_, "int4": ml_dtypes.int4, "uint4": ml_dtypes.uint4}
for f in FLOATS:
    if f.startswith("float8"):
        NP[f] = getattr(ml_dtypes, f)
for i in INTS:
    NP.setdefault(i, getattr(np, i, None))


def dt(name):
    return {"float": tf.float32, "double": tf.float64, "half": tf.float16}.get(name) or tf.as_dtype(NP[name])


EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -1.5, 2.75, 7.5, 8.0, 15.9, 16.0, -8.5, -9.0, 127.5, 128.0,
         -128.5, -129.0, 255.5, 256.0, 448.0, 464.0, 57344.0, 65504.0, 65520.0, 32767.5, 32768.0,
         -32769.0, 65535.9, 65536.0, 2147483520.0, 2147483647.0, 2147483648.0, -2147483904.0,
         4294967040.0, 4294967296.0, 9.2233715e18, 9.223372036854775807e18, 1.8446743e19,
         1.8446744073709552e19, 3.4028235e38, -3.4028235e38, 3.5e38, 1e300, -1e300,
         1e-40, 1e-310, float("inf"), float("-inf"), float("nan"), -float("nan")]
INT_EDGES = [0, 1, -1, 2, 7, 8, 15, 16, -8, -9, 127, 128, -128, -129, 255, 256, 32767, 32768,
             -32768, -32769, 65535, 65536, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32 - 1, 2**32,
             2**63 - 1, 2**63, -2**63, 2**64 - 1]


def values(name):
    if name == "bool":
        return np.array([True, False], np.bool_)
    if name in FLOATS:
        with np.errstate(all="ignore"):
            return np.array(EDGES, np.float64).astype(NP[name])
    if name in COMPLEX:
        re = np.array(EDGES, np.float64)
        im = np.roll(re, 7)
        with np.errstate(all="ignore"):
            return (re.astype(np.complex128) + 1j * im).astype(NP[name])
    lo, hi = (-8, 7) if name == "int4" else (0, 15) if name == "uint4" else (np.iinfo(name).min, np.iinfo(name).max)
    vals = sorted({v for v in INT_EDGES if lo <= v <= hi} | {lo, hi})
    if name in ("int4", "uint4"):
        return np.array(vals, np.int64).astype(NP[name])
    return np.array(vals, dtype=name)


def enc(name, arr):
    a = np.ascontiguousarray(arr)
    return {"dtype": name, "shape": list(a.shape), "hex": a.tobytes().hex()}


n = 0
for src in ALL:
    for dst in ALL:
        x = values(src)
        rec = {"id": f"saturate-cast-{n:04d}", "op": "saturate_cast", "input": enc(src, x), "type": dst}
        try:
            t = tf.constant(x, dtype=dt(src))
            y = tf.dtypes.saturate_cast(t, dt(dst))
            rec["expect"] = enc(dst, y.numpy())
        except Exception as e:  # noqa: BLE001 - every refusal is recorded
            msg = getattr(e, "message", None) or str(e)
            msg = msg.split(" [Op:")[0].split("}} ")[-1]
            rec["error"] = {"kind": type(e).__name__, "message": msg.splitlines()[0]}
        print(json.dumps(rec, sort_keys=True))
        n += 1
