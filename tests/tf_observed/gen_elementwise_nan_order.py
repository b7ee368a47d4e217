"""Records TensorFlow 2.21's complex64/complex128 AddV2, Sub and Mul (eager tf.raw_ops, on CPU) where
both operands have NaN parts with different payloads (quiet and signalling, both signs), next to
infinities, zeros and ordinary parts: which NaN comes out of each part is the point, and for Mul
also C99's rule for infinities, which TensorFlow's scalar code follows. Each value pair goes
through TensorFlow's kernel paths: same shapes, broadcasting ([K,1] vs [1,K]), a scalar on either
side, and short inputs whose elements all fall in the scalar remainder after the vector packets
(4 complex64 or 2 complex128 per AVX packet).

The same for float and double: with a single-element operand, TensorFlow's vector loop puts
that element first in AddV2/Mul, its scalar remainder (the last n % 8 floats, n % 4 doubles)
the other operand.

    python3 tests/tf_observed/gen_elementwise_nan_order.py > tests/tf_observed/elementwise_nan_order.jsonl
"""
import json, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

tf.config.set_visible_devices([], "GPU")

# Part values by bit pattern: NaNs with distinct payloads, then others.
BITS = {
    "complex64": (np.float32, np.uint32, dict(
        n1=0x7fc00001, n2=0x7fc00002, n3=0xffc00003, s5=0x7f800005, n4=0x7fc12345,
        one5=0x3fc00000, zero=0x00000000, mzero=0x80000000, inf=0x7f800000, minf=0xff800000, one=0x3f800000)),
    "complex128": (np.float64, np.uint64, dict(
        n1=0x7ff8000000000001, n2=0x7ff8000000000002, n3=0xfff8000000000003, s5=0x7ff0000000000005,
        n4=0x7ff8123456789abc, one5=0x3ff8000000000000, zero=0x0, mzero=0x8000000000000000,
        inf=0x7ff0000000000000, minf=0xfff0000000000000, one=0x3ff0000000000000)),
}
# Twelve complex values (real part, imaginary part).
VALUES = [("n1", "n2"), ("n3", "n1"), ("n2", "one5"), ("one5", "n3"), ("s5", "n4"), ("inf", "n1"),
          ("n2", "minf"), ("zero", "s5"), ("one5", "mzero"), ("inf", "inf"), ("inf", "one"), ("zero", "zero")]

def values(dtype, names):
    ft, it, b = BITS[dtype]
    raw = np.array([b[p] for pair in names for p in pair], dtype=it)
    return raw.view(ft).view(np.complex64 if dtype == "complex64" else np.complex128)

def run(op, x, y, dtype):
    global n
    with tf.device("/CPU:0"):
        z = getattr(tf.raw_ops, op)(x=tf.constant(x), y=tf.constant(y)).numpy()
    rec = {"id": f"elementwise-nan-order-{n:04d}", "op": op, "x": enc(x, dtype), "y": enc(y, dtype),
           "expect": enc(z, dtype)}
    print(json.dumps(rec, sort_keys=True))
    n += 1

def enc(a, dtype):
    return {"dtype": dtype, "shape": list(a.shape), "hex": a.tobytes().hex()}

n = 0
for dtype in ["complex64", "complex128"]:
    v = values(dtype, VALUES)
    k = len(v)
    cases = [
        (np.repeat(v, k), np.tile(v, k)),              # same shapes, every pair (vector packets)
        (v.reshape(k, 1), v.reshape(1, k)),            # broadcasting, every pair
    ]
    # A scalar on either side, against vectors whose last elements (the scalar remainder) are
    # NaN-carrying values too.
    for s in values(dtype, [("n3", "n4"), ("s5", "one5"), ("inf", "n2")]):
        s = np.array(s, dtype=v.dtype)
        for w in (np.concatenate([v, v[:3]]), np.concatenate([v[3:], v[:6]])):
            cases.append((s, w))
            cases.append((w, s))
    # Every pair of the first six values in the scalar remainder: inputs of 3 (complex64) or 1
    # (complex128) elements.
    small = 3 if dtype == "complex64" else 1
    sx, sy = np.repeat(v[:6], 6), np.tile(v[:6], 6)
    for i in range(0, len(sx), small):
        cases.append((sx[i:i + small], sy[i:i + small]))
    for op in ["AddV2", "Sub", "Mul"]:
        for x, y in cases:
            run(op, x, y, dtype)

# float and double: NaNs of distinct payloads against each other and ordinary values, through
# the same paths; the scalar cases have 13 elements (8 + 5 floats, 12 + 1 doubles).
for dtype in ["float", "double"]:
    ft, it, b = BITS["complex64" if dtype == "float" else "complex128"]
    parts = ["n1", "n2", "n3", "s5", "n4", "one5", "zero", "inf"]
    v = np.array([b[p] for p in parts], dtype=it).view(ft)
    k = len(v)
    cases = [(np.repeat(v, k), np.tile(v, k)), (v.reshape(k, 1), v.reshape(1, k))]
    for s in v[:5]:
        w = np.concatenate([v, v[:5]])
        cases += [(np.array(s, dtype=ft), w), (w, np.array(s, dtype=ft))]
    for op in ["AddV2", "Sub", "Mul"]:
        for x, y in cases:
            run(op, x, y, dtype)
