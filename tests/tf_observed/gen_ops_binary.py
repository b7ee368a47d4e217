"""Records TensorFlow 2.21's binary math ops that issue 18 adds to the broadcasting engine (eager
tf.raw_ops on CPU): RealDiv, Div, FloorDiv, FloorMod, Pow, SquaredDifference, LogicalAnd,
LogicalOr, and the ternary Select (v1: cond of the same shape, a scalar, or a vector over the first
dim) and SelectV2 (all three broadcast).

- every pair of a dtype's edge values, through broadcasting ([K,1] against [1,K]), for every dtype
  in the op's type list (those without a CPU kernel give TensorFlow's NotFound text) and one it
  refuses;
- random values (edges, random bit patterns, subnormals, NaNs with payloads) on random
  broadcasting shapes, lane-remainder lengths and a single element on either side;
- integer division by zero, integers to negative powers (and the same on empty outputs), the
  INT_MIN / -1 cases;
- incompatible shapes and mismatched dtypes;
- Select/SelectV2 shapes, dtypes and errors, and graph-mode shapes (select_shape records: the
  output shape of the op built in a tf.Graph from placeholders of partially known shapes, or the
  shape function's error without the node tail).

Each line: op, x, y (Select: condition, x, y), then expect or error {code, message}.

    .venv/bin/python tests/tf_observed/gen_ops_binary.py > tests/tf_observed/ops_binary.jsonl
"""
import json, os, random
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import ml_dtypes
import tensorflow as tf

tf.config.set_visible_devices([], "GPU")

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



TYPES = {
    "RealDiv": ["bfloat16", "half", "float", "double", "uint8", "int8", "uint16", "int16", "int32",
                "uint32", "uint64", "int64", "complex64", "complex128"],
    "FloorMod": ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bfloat16",
                 "half", "float", "double"],
    "Pow": ["bfloat16", "float", "half", "double", "int8", "int16", "int32", "int64", "complex64",
            "complex128"],
    "SquaredDifference": ["bfloat16", "half", "float", "double", "int32", "int64", "complex64",
                          "complex128"],
    "LogicalAnd": ["bool"],
    "LogicalOr": ["bool"],
}
TYPES["Div"] = TYPES["RealDiv"]
TYPES["FloorDiv"] = TYPES["RealDiv"]
OPS = ["RealDiv", "Div", "FloorDiv", "FloorMod", "Pow", "SquaredDifference", "LogicalAnd", "LogicalOr"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]

n = 0


def out(rec):
    global n
    rec["id"] = f"ops-binary-{n:05d}"
    n += 1
    print(json.dumps(rec, sort_keys=True))


def error_of(e):
    msg = e.message.split(" [Op:")[0]
    if msg.startswith("{{function_node "):
        msg = msg.split("}} ", 1)[1]
    return {"code": type(e).__name__, "message": msg}


def record(op, xname, x, yname, y):
    if op == "Pow":
        x, y = flush(xname, x), flush(yname, y)
    rec = {"op": op, "x": enc(xname, x), "y": enc(yname, y)}
    try:
        with tf.device("/CPU:0"):
            z = getattr(tf.raw_ops, op)(x=make(xname, x), y=make(yname, y))
        rec["expect"] = enc(xname, z.numpy())
    except tf.errors.OpError as e:
        rec["error"] = error_of(e)
    out(rec)


def select(op, cname, c, xname, x, yname, y):
    rec = {"op": op, "condition": enc(cname, c), "x": enc(xname, x), "y": enc(yname, y)}
    try:
        with tf.device("/CPU:0"):
            args = {"condition": make(cname, c)}
            args.update(zip(("x", "y") if op == "Select" else ("t", "e"), (make(xname, x), make(yname, y))))
            z = getattr(tf.raw_ops, op)(**args)
        rec["expect"] = enc(xname, z.numpy())
    except tf.errors.OpError as e:
        rec["error"] = error_of(e)
    out(rec)


def shaped(name, shape):
    size = int(np.prod(shape)) if shape else 1
    v = random_values(name, size)
    return v.reshape(shape)


def broadcast_pair():
    rank = rng.randrange(0, 5)
    o = [rng.choice([0, 1, 2, 3, 4, 5, 7]) if rng.random() < 0.15 else rng.choice([1, 2, 3, 4, 5, 7])
         for _ in range(rank)]
    def side():
        r = rng.randrange(0, rank + 1)
        dims = o[rank - r:]
        return [1 if (d != 1 and rng.random() < 0.4) else d for d in dims]
    return side(), side()


def nonzero(name, arr):
    """arr with zeros replaced by ones (integer divisors)."""
    a = np.array(arr)
    a[a == 0] = 1
    return a


def nonneg(name, arr):
    a = np.array(arr)
    if np.issubdtype(a.dtype, np.signedinteger):
        a = np.where(a < 0, -(a + 1), a).astype(a.dtype)
    return a


def flush(name, a):
    """a with subnormal values replaced by zeros (float types; Pow only, whose treatment of
    subnormal operands in Eigen's pow is not modelled by tensorcast)."""
    a = np.array(a)
    if name in FLOATS or name in ("complex64", "complex128"):
        tiny = np.finfo(np.float32 if name in ("float", "complex64", "bfloat16") else
                        np.float16 if name == "half" else np.float64).tiny
        if np.iscomplexobj(a):
            re, im = a.real.copy(), a.imag.copy()
            re[np.abs(re) < tiny] = 0
            im[np.abs(im) < tiny] = 0
            return (re + 1j * im).astype(a.dtype)
        with np.errstate(invalid="ignore"):
            mask = np.abs(a.astype(np.float64)) < tiny
        a[mask] = 0
    return a


def fix_y(op, name, y):
    if name in INTS and op in ("Div", "FloorDiv", "FloorMod", "RealDiv"):
        return nonzero(name, y)
    if name in INTS and op == "Pow":
        return nonneg(name, y) % 9
    return y


for op in OPS:
    for name in TYPES[op] + (["bool"] if op not in ("LogicalAnd", "LogicalOr") else ["float", "int32"]):
        e = edges(name)
        k = len(e)
        perm = list(range(k))
        rng.shuffle(perm)
        x = e.reshape(k, 1)
        y = fix_y(op, name, e[perm]).reshape(1, k)
        record(op, name, x, name, y)
        if name not in TYPES[op]:
            continue
        for _ in range(4):
            sa, sb = broadcast_pair()
            record(op, name, shaped(name, sa), name, fix_y(op, name, shaped(name, sb)))
        for length in rng.sample(range(1, 40), 3) + [67]:
            record(op, name, shaped(name, [length]), name, fix_y(op, name, shaped(name, [length])))
        s, v = shaped(name, []), shaped(name, [rng.randrange(2, 30)])
        record(op, name, s, name, fix_y(op, name, v))
        record(op, name, v, name, fix_y(op, name, s))
    # Mismatched dtypes and incompatible shapes.
    a = TYPES[op][-1]
    b = "int32" if a != "int32" else "float"
    record(op, a, shaped(a, [2]), b, shaped(b, [2]))
    record(op, a, fix_y(op, a, shaped(a, [2, 3])), a, fix_y(op, a, shaped(a, [3, 2])))

# Integer division by zero, negative powers, INT_MIN / -1, and the same on empty outputs.
for name in INTS:
    info = np.iinfo(NP[name])
    for op in ["Div", "FloorDiv", "FloorMod"]:
        record(op, name, np.array([5, 0, 1], NP[name]), name, np.array([1, 0, 2], NP[name]))
        record(op, name, np.array([5, 3], NP[name]), name, np.array(0, NP[name]))
        record(op, name, np.zeros([0, 2], NP[name]), name, np.array([0, 0], NP[name]))
        if info.min < 0:
            record(op, name, np.array([info.min, info.min, -7, 7, info.max], NP[name]), name,
                   np.array([-1, 1, -1, -1, -1], NP[name]))
    if name in TYPES["Pow"]:
        record("Pow", name, np.array([1, 2, 3], NP[name]), name, np.array([1, -1, 2], NP[name]))
        record("Pow", name, np.array([1, -1, 0], NP[name]), name, np.array(-1, NP[name]))
        record("Pow", name, np.zeros([2, 0], NP[name]), name, np.array([-1], NP[name]))
        record("Pow", name, np.array([3, -3, 2, -2, 0, 1, info.max, info.min], NP[name]), name,
               np.array([5, 5, min(info.max, 99), 63 if name == "int64" else info.bits - 1, 0, 100, 2, 2], NP[name]))

# Floats: FloorMod / FloorDiv of signed zeros, infinities and subnormals; Pow special cases.
for name in ["float", "double", "half", "bfloat16"]:
    ft = NP[name]
    vals = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, -0.5, 3.0, -3.0, np.inf, -np.inf, np.nan, 1e-3, 7.0]
    x = np.array(vals, np.float64).astype(ft).reshape(-1, 1)
    y = np.array(vals, np.float64).astype(ft).reshape(1, -1)
    for op in ["FloorMod", "FloorDiv", "Pow", "RealDiv"]:
        record(op, name, x, name, y)

# Select (v1) and SelectV2.
for op in ["Select", "SelectV2"]:
    for name in ["float", "double", "half", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
                 "uint16", "uint32", "uint64", "complex64", "complex128", "bool", "string"]:
        for sc, sx in [([3, 2], [3, 2]), ([], [3, 2]), ([3], [3, 2]), ([], []), ([4], [4]),
                       ([0], [0, 2]), ([2, 1], [2, 3]), ([1], [2, 3]), ([3, 1, 2], [3, 4, 2])]:
            select(op, "bool", shaped("bool", sc), name, shaped(name, sx), name, shaped(name, sx))
    for sc, sx, sy in [([3], [3, 2], [3, 2]), ([2], [3, 2], [3, 2]), ([3, 2], [3, 2], [2, 3]),
                       ([3, 2], [3, 2], [3, 1]), ([2], [3, 2], [2]), ([], [2], []), ([1], [1], [1]),
                       ([3, 1, 1], [1, 4, 1], [1, 1, 5]), ([2, 3], [3], [2, 1]), ([4], [3], [3]),
                       ([2, 2], [2, 2, 2], [2, 2, 2]), ([0, 3], [0, 3], [0, 3]), ([2], [2, 0], [2, 0]),
                       ([2, 1, 2, 1, 2, 1], [1, 2, 1, 2, 1, 2], [1]), ([5], [], [])]:
        select(op, "bool", shaped("bool", sc), "int32", shaped("int32", sx), "int32", shaped("int32", sy))
    select(op, "int32", shaped("int32", [2]), "int32", shaped("int32", [2]), "int32", shaped("int32", [2]))
    select(op, "bool", shaped("bool", [2]), "int32", shaped("int32", [2]), "float", shaped("float", [2]))
    select(op, "bool", shaped("bool", [2]), "int4", shaped("int4", [2]), "int4", shaped("int4", [2]))
    select(op, "bool", shaped("bool", [2]), "qint8", shaped("qint8", [2]), "qint8", shaped("qint8", [2]))
    select(op, "bool", shaped("bool", [2]), "float8_e4m3fn", shaped("float8_e4m3fn", [2]),
           "float8_e4m3fn", shaped("float8_e4m3fn", [2]))

# Graph-mode shapes of Select/SelectV2 (None: unknown rank; -1: unknown dim).
def shape_case(op, sc, sx, sy):
    rec = {"op": "select_shape", "select": op, "condition": sc, "x": sx, "y": sy}
    try:
        with tf.Graph().as_default():
            ph = lambda s, dt: tf.compat.v1.placeholder(dt, shape=None if s is None else [None if d == -1 else d for d in s])
            args = {"condition": ph(sc, tf.bool)}
            args.update(zip(("x", "y") if op == "Select" else ("t", "e"), (ph(sx, tf.float32), ph(sy, tf.float32))))
            z = getattr(tf.raw_ops, op)(**args)
            rec["expect"] = None if z.shape.rank is None else [-1 if d is None else d for d in z.shape.as_list()]
    except (ValueError, tf.errors.OpError) as e:
        msg = str(e)
        msg = msg.split(" for '{{node ")[0]
        rec["error"] = msg
    out(rec)


for op in ["Select", "SelectV2"]:
    for sc, sx, sy in [([3], [3, 2], [3, 2]), ([2], [3, 2], [3, 2]), ([3, 2], [3, 2], [2, 3]),
                       ([], [3, 2], [3, 2]), (None, [3, 2], [3, 2]), ([-1], [-1, 2], [3, -1]),
                       ([3, 2], None, [3, 2]), (None, None, None), ([-1, -1], [3, 2], [-1, -1]),
                       ([3, 1], [1, 4], [3, 4]), ([2, 3], [3], [2, 1]), ([4], [3], [3]),
                       ([3], [3, -1], None), ([-1], [3, 2], [3, 2]), ([2, 2], [2, 2], [2, 2, 2])]:
        shape_case(op, sc, sx, sy)
