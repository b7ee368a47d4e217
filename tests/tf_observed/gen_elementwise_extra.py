"""Records TensorFlow 2.21's eleven binary element-wise ops (eager tf.raw_ops on CPU) on a second,
independently drawn set of inputs: the shared elementwise.jsonl's kinds of case, with other
values and shapes, and the dtypes it leaves out (uint16/32/64, int16 and complex128 in depth,
the quantized types, float8 and 4-bit integers).

- every pair of a dtype's edge values, through broadcasting ([K,1] against [1,K]);
- random values (edges, random bit patterns, subnormals, NaNs with payloads) on random
  broadcasting shapes of rank 0 to 4, size-0 dims included;
- lengths that end in each lane remainder of the vector loops, and a single element on either
  side of a long vector;
- incompatible shapes, mismatched dtypes, dtypes an op does not take (with TensorFlow's error
  code and text), and Equal/NotEqual with incompatible_shape_error=False.

Each line: op, x, y (and "incompatible_shape_error" when false), then expect or
error {code, message}.

    .venv/bin/python tests/tf_observed/gen_elementwise_extra.py > tests/tf_observed/elementwise_extra.jsonl
"""
import json, os, random
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import ml_dtypes
import tensorflow as tf

tf.config.set_visible_devices([], "GPU")

OPS = ["Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
       "AddV2", "Sub", "Mul", "Maximum", "Minimum"]
NUMBERS = {"float8_e4m3fn": 25, "float8_e5m2": 24, "int4": 29, "uint4": 30}
NP = {"float": np.float32, "double": np.float64, "half": np.float16, "bfloat16": ml_dtypes.bfloat16,
      "complex64": np.complex64, "complex128": np.complex128, "bool": np.bool_,
      "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
      "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
      "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2,
      "int4": ml_dtypes.int4, "uint4": ml_dtypes.uint4,
      "qint8": np.int8, "quint8": np.uint8, "qint16": np.int16, "quint16": np.uint16, "qint32": np.int32}
QUANTIZED = {"qint8": tf.qint8, "quint8": tf.quint8, "qint16": tf.qint16, "quint16": tf.quint16,
             "qint32": tf.qint32}
FLOATS = {"half": (np.float16, np.uint16), "bfloat16": (ml_dtypes.bfloat16, np.uint16),
          "float": (np.float32, np.uint32), "double": (np.float64, np.uint64)}
MAIN = ["float", "double", "half", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16",
        "uint32", "uint64", "complex64", "complex128", "bool", "string"]
ODD = ["qint8", "quint8", "qint16", "quint16", "qint32", "float8_e4m3fn", "float8_e5m2", "int4", "uint4"]

SEED = int(os.environ.get("SEED", "20261124"))
rng = random.Random(SEED)



def float_edges(name):
    ft, it = FLOATS[name]
    bits = {"half": 16, "bfloat16": 16, "float": 32, "double": 64}[name]
    mant = {"half": 10, "bfloat16": 7, "float": 23, "double": 52}[name]
    sign = 1 << (bits - 1)
    exp_all = ((1 << (bits - 1 - mant)) - 1) << mant
    one = ((1 << (bits - 2 - mant)) - 1) << mant
    raw = [0, sign, 1, sign | 1, (1 << mant) - 1, (1 << mant), sign | (1 << mant), one, sign | one,
           one + 1, one | (1 << (mant - 1)), exp_all - 1, sign | (exp_all - 1), exp_all, sign | exp_all,
           exp_all | (1 << (mant - 1)), exp_all | 3, sign | exp_all | (1 << (mant - 1)) | 5]
    return np.array(raw, dtype=it).view(ft)


def edges(name):
    if name in FLOATS:
        return float_edges(name)
    if name in ("complex64", "complex128"):
        part = float_edges("float" if name == "complex64" else "double")
        idx = [0, 1, 2, 5, 7, 8, 11, 13, 15, 17]
        re = part[idx]
        im = part[idx[3:] + idx[:3]]
        return np.array([complex(r, i) for r, i in zip(re.tolist(), im.tolist())], NP[name])
    if name == "bool":
        return np.array([False, True])
    if name == "string":
        return [b"", b"a", b"b", b"ab", b"\x00", b"\xff", b"a\x00", b"abc", b"B"]
    if name in ("float8_e4m3fn", "float8_e5m2"):
        return np.array([0.0, -0.0, 1.0, -1.5, 0.015625, 448.0, float("nan"), 2.0], np.float32).astype(NP[name])
    if name == "int4":
        return np.array([-8, -7, -1, 0, 1, 7], np.int8).astype(ml_dtypes.int4)
    if name == "uint4":
        return np.array([0, 1, 8, 15], np.uint8).astype(ml_dtypes.uint4)
    info = np.iinfo(NP[name])
    v = [info.min, info.min + 1, info.max - 1, info.max, 0, 1, 2, 3, 100 % (info.max + 1)]
    if info.min < 0:
        v += [-1, -2]
    return np.array(sorted(set(v)), NP[name])


def random_values(name, n):
    """n values: edges, random bit patterns and ordinary numbers, mixed."""
    if name == "string":
        pool = edges(name) + [bytes(rng.randrange(97, 100) for _ in range(rng.randrange(0, 4)))
                              for _ in range(8)]
        return np.array([rng.choice(pool) for _ in range(n)], dtype=object)
    e = edges(name)
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.35:
            out.append(e[rng.randrange(len(e))])
        elif name in FLOATS and r < 0.5:
            ft, it = FLOATS[name]
            b = rng.getrandbits(np.dtype(it).itemsize * 8)
            out.append(np.array([b], it).view(ft)[0])
        elif name in FLOATS or name in ("float8_e4m3fn", "float8_e5m2"):
            out.append(NP[name](rng.choice([1, -1]) * rng.uniform(0, 4) * 10 ** rng.randrange(-3, 4)))
        elif name in ("complex64", "complex128"):
            out.append(NP[name](complex(rng.uniform(-9, 9), rng.uniform(-9, 9))))
        elif name == "bool":
            out.append(rng.random() < 0.5)
        elif name in ("int4", "uint4"):
            lo, hi = (-8, 7) if name == "int4" else (0, 15)
            out.append(rng.randint(lo, hi))
        else:
            info = np.iinfo(NP[name])
            out.append(rng.choice([rng.randint(info.min, info.max), rng.randint(-5, 5) % (info.max + 1)
                                   if info.min == 0 else rng.randint(-5, 5)]))
    if name in ("int4", "uint4"):
        return np.array(out, np.int8).astype(NP[name])
    return np.array(out, NP[name]) if name not in FLOATS else np.array(out).astype(NP[name])


def make(name, arr):
    if name == "string":
        return tf.constant(arr.tolist() if isinstance(arr, np.ndarray) else arr, dtype=tf.string,
                           shape=arr.shape if isinstance(arr, np.ndarray) else None)
    if name in QUANTIZED:
        base = tf.constant(arr)
        return tf.bitcast(base, QUANTIZED[name]) if arr.size else tf.zeros(arr.shape, QUANTIZED[name])
    if name in NUMBERS:
        return tf.constant(arr)
    return tf.constant(arr, dtype=tf.as_dtype(name if name != "float" else "float32"))


def enc(name, arr):
    if name == "string":
        a = np.asarray(arr, dtype=object)
        return {"dtype": "string", "shape": list(a.shape), "strings": [bytes(s).hex() for s in a.reshape(-1)]}
    a = np.asarray(arr)  # not ascontiguousarray, which makes a 0-d array 1-d
    return {"dtype": name, "shape": list(a.shape), "hex": a.tobytes(order="C").hex()}


def out_name(op, name):
    if op in OPS[:6]:
        return "bool"
    return name


def enc_result(op, name, t):
    # Quantized inputs are taken by Equal and NotEqual only, whose output is bool.
    return enc(out_name(op, name), t.numpy())


n = 0


def record(op, xname, x, yname, y, shape_error=True):
    global n
    rec = {"id": f"elementwise-extra-{n:05d}", "op": op, "x": enc(xname, x), "y": enc(yname, y)}
    if not shape_error:
        rec["incompatible_shape_error"] = False
    kwargs = {} if shape_error else {"incompatible_shape_error": False}
    try:
        with tf.device("/CPU:0"):
            z = getattr(tf.raw_ops, op)(x=make(xname, x), y=make(yname, y), **kwargs)
        rec["expect"] = enc_result(op, xname, z)
    except tf.errors.OpError as e:
        msg = e.message.split(" [Op:")[0]
        if msg.startswith("{{function_node "):
            # The eager wrapper's function name, not part of the kernel's message.
            msg = msg.split("}} ", 1)[1]
        rec["error"] = {"code": type(e).__name__, "message": msg}
    print(json.dumps(rec, sort_keys=True))
    n += 1


def shaped(name, shape):
    size = int(np.prod(shape)) if shape else 1
    v = random_values(name, size)
    return v.reshape(shape)


def broadcast_pair():
    """Two random shapes that broadcast together."""
    rank = rng.randrange(0, 5)
    out = [rng.choice([0, 1, 2, 3, 4, 5, 7]) if rng.random() < 0.15 else rng.choice([1, 2, 3, 4, 5, 7])
           for _ in range(rank)]
    def side():
        r = rng.randrange(0, rank + 1)
        dims = out[rank - r:]
        return [1 if (d != 1 and rng.random() < 0.4) else d for d in dims]
    return side(), side()


def incompatible_pair():
    while True:
        a, b = broadcast_pair()
        if not a or not b:
            continue
        i = rng.randrange(1, min(len(a), len(b)) + 1)
        cands = [d for d in [2, 3, 4, 5, 6] if d != a[-i]]
        if a[-i] == 1:
            a[-i] = 2
            cands = [3, 4, 5]
        b[-i] = rng.choice(cands)
        return a, b


for op in OPS:
    # Every pair of edge values through broadcasting.
    for name in MAIN + ODD:
        e = edges(name)
        k = len(e)
        if name == "string":
            x = np.array(e, dtype=object).reshape(k, 1)
            y = np.array(list(reversed(e)), dtype=object).reshape(1, k)
        else:
            perm = list(range(k))
            rng.shuffle(perm)
            x = e.reshape(k, 1)
            y = e[perm].reshape(1, k)
        record(op, name, x, name, y)
    # Random values on random broadcasting shapes.
    for name in MAIN:
        for _ in range(6):
            sa, sb = broadcast_pair()
            record(op, name, shaped(name, sa), name, shaped(name, sb))
    # Lengths that end in every lane remainder, and a single element on either side.
    for name in ["float", "double", "half", "bfloat16", "int8", "int32", "int64", "uint16", "complex64", "complex128"]:
        for length in rng.sample(range(1, 80), 5) + [257]:
            a, b = shaped(name, [length]), shaped(name, [length])
            record(op, name, a, name, b)
        for length in rng.sample(range(2, 70), 3):
            s, v = shaped(name, []), shaped(name, [length])
            record(op, name, s, name, v)
            record(op, name, v, name, s)
    # Incompatible shapes.
    for name in ["float", "int32", "string", "bool"]:
        sa, sb = incompatible_pair()
        record(op, name, shaped(name, sa), name, shaped(name, sb))
        if op in ("Equal", "NotEqual"):
            record(op, name, shaped(name, sa), name, shaped(name, sb), shape_error=False)
            sa, sb = broadcast_pair()
            record(op, name, shaped(name, sa), name, shaped(name, sb), shape_error=False)
    # Mismatched dtypes.
    for _ in range(3):
        a, b = rng.sample(MAIN, 2)
        record(op, a, shaped(a, [2]), b, shaped(b, [2]))

# half and bfloat16 where NaNs (both signs, quiet and signalling, with payloads), infinities,
# signed zeros and subnormals meet: which NaN bits come out, and whether a subnormal is flushed,
# depend on whether an element falls in a vector packet (8 elements) or the scalar remainder,
# and on the operand order there.
POOLS = {
    "bfloat16": [0x7fc0, 0xffc0, 0x7fc5, 0xffa1, 0x7f81, 0x7f80, 0xff80, 0x0000, 0x8000, 0x3f80,
                 0xbf80, 0x0001, 0x8003, 0x4040],
    "half": [0x7e00, 0xfe00, 0x7c01, 0xfc05, 0x7e13, 0x7c00, 0xfc00, 0x0000, 0x8000, 0x3c00,
             0xbc00, 0x0001, 0x8003, 0x4200],
}


def pool_values(name, shape):
    size = int(np.prod(shape)) if shape else 1
    bits = np.array([rng.choice(POOLS[name]) for _ in range(size)], np.uint16)
    return bits.view(NP[name]).reshape(shape)


for op in ["AddV2", "Sub", "Mul", "Maximum", "Minimum"]:
    for name in ["bfloat16", "half"]:
        for length in [1, 2, 3, 5, 7, 8, 9, 13, 16, 19, 24, 31]:
            record(op, name, pool_values(name, [length]), name, pool_values(name, [length]))
            record(op, name, pool_values(name, []), name, pool_values(name, [length]))
            record(op, name, pool_values(name, [length]), name, pool_values(name, [1]))
        for sa, sb in [([3, 1], [1, 5]), ([5, 1], [1, 3]), ([2, 9], [9]), ([4, 5], [4, 1])]:
            record(op, name, pool_values(name, sa), name, pool_values(name, sb))

# Single elements of different ranks: TensorFlow picks its loop by shape first (same shapes,
# then a rank-0 x, then a rank-0 y, then single elements by count), and the loop decides which
# of two NaNs AddV2 and Mul return.
NAN_PAIRS = {
    "float": (np.float32, np.uint32, 0x7fc00001, 0xffc00002),
    "double": (np.float64, np.uint64, 0x7ff8000000000001, 0xfff8000000000002),
    "half": (np.float16, np.uint16, 0x7e01, 0xfc02),
    "bfloat16": (ml_dtypes.bfloat16, np.uint16, 0x7fc1, 0xff82),
}
for op in ["AddV2", "Mul", "Sub", "Maximum"]:
    for name, (ft, it, a, b) in NAN_PAIRS.items():
        for sx, sy in [([], []), ([], [1]), ([1], []), ([1], [1]), ([1, 1], [1]), ([1], [1, 1]),
                       ([], [1, 1]), ([1, 1], []), ([1], [3]), ([3], [1]), ([], [9]), ([9], [])]:
            x = np.full(sx, np.array([a], it).view(ft)[0], ft)
            y = np.full(sy, np.array([b], it).view(ft)[0], ft)
            record(op, name, x, name, y)
