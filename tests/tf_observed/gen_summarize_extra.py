"""Records TensorFlow 2.21's SummarizeValue on more dtypes, shapes, values and limits than the
shared vectors: print_v1 through the C++ Assert kernel (graph mode; the outer brackets it adds
are removed) and print_v2 through StringFormat.

    python3 tests/tf_observed/gen_summarize_extra.py > tests/tf_observed/summarize_extra.jsonl
"""
import json, os, random
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import ml_dtypes
import tensorflow as tf

rng = random.Random(2112)
FLOATS = {"float": np.float32, "double": np.float64, "half": np.float16, "bfloat16": ml_dtypes.bfloat16,
          "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
QUANT = {"qint8": "int8", "quint8": "uint8", "qint16": "int16", "quint16": "uint16", "qint32": "int32"}
SPECIAL = [0.0, -0.0, 1.0, -2.5, 0.1, 1 / 3, 1e-5, 123456789.0, 1e10, 3.4e38, 1e-40, float("inf"), float("-inf"), float("nan"), -7.25e-3, 65504.0]
STRINGS = [b"a", b"", b"hello world", b"tab\there", b"quote\"'", b"back\\slash", b"\x00\x01\x7f", b"nl\nx", "Grüße".encode(), b"\xc3\xa9t\xc3\xa9"]

def tf_dtype(name):
    if name in ("float8_e4m3fn",): return tf.as_dtype(25)
    if name in ("float8_e5m2",): return tf.as_dtype(24)
    if name == "float": return tf.float32
    return tf.as_dtype(name)

def make(name, shape):
    n = int(np.prod(shape)) if shape else 1
    if name in FLOATS:
        vals = [rng.choice(SPECIAL) if rng.random() < 0.4 else rng.uniform(-1000, 1000) * 10 ** rng.randint(-6, 6) for _ in range(n)]
        a = np.array(vals, np.float64).astype(FLOATS[name]).reshape(shape)
        return a, tf.constant(a), {"dtype": name, "shape": list(shape), "hex": a.tobytes().hex()}
    if name in INTS or name in QUANT:
        base = QUANT.get(name, name)
        info = np.iinfo(base)
        vals = [rng.choice([0, 1, -1 if info.min < 0 else 2, info.min, info.max]) if rng.random() < 0.3 else rng.randint(int(info.min), int(info.max)) for _ in range(n)]
        a = np.array(vals, base).reshape(shape)
        t = tf.constant(a)
        if name in QUANT:
            t = tf.bitcast(t, tf.as_dtype(name))
        return a, t, {"dtype": name, "shape": list(shape), "hex": a.tobytes().hex()}
    if name == "bool":
        a = np.array([rng.random() < 0.5 for _ in range(n)], dtype=np.bool_).reshape(shape)
        return a, tf.constant(a), {"dtype": name, "shape": list(shape), "hex": a.astype(np.uint8).tobytes().hex()}
    if name == "string":
        vals = [rng.choice(STRINGS) for _ in range(n)]
        a = np.array(vals, dtype=object).reshape(shape)
        return a, tf.constant(a), {"dtype": name, "shape": list(shape), "strings": [v.hex() for v in vals]}
    if name in ("complex64", "complex128"):
        vals = [complex(rng.uniform(-5, 5), rng.uniform(-5, 5)) for _ in range(n)]
        a = np.array(vals, np.complex64 if name == "complex64" else np.complex128).reshape(shape)
        return a, tf.constant(a), {"dtype": name, "shape": list(shape), "hex": a.tobytes().hex()}
    raise ValueError(name)

def v1(t, n):
    @tf.function
    def f(x):
        tf.debugging.Assert(False, [x], summarize=n)
        return x
    try:
        f(t)
    except tf.errors.InvalidArgumentError as e:
        m = e.message
        head = "assertion failed: ["
        if head not in m or "]\n\t [[{{node" not in m:
            return None
        return m[m.index(head) + len(head):m.index("]\n\t [[{{node")]
    except Exception:
        return None
    return None

def v2(t, n):
    return tf.strings.format("{}", t, summarize=n).numpy().decode("utf-8", "backslashreplace")

names = list(FLOATS) + INTS + list(QUANT) + ["bool", "string", "complex64", "complex128"]
count = 0
for name in names:
    for _ in range(6):
        rank = rng.choice([0, 1, 1, 2, 2, 3, 4])
        shape = tuple(rng.choice([0, 1, 1, 2, 3, 4, 5]) for _ in range(rank))
        if rng.random() < 0.2 and rank:
            shape = shape[:-1] + (0,)
        _, t, enc = make(name, shape)
        for m in sorted({rng.choice([-1, 0, 1, 2, 3, 5, 7, 10, 100]) for _ in range(3)}):
            rec = {"id": f"summarize-extra-{count:04d}", "op": "summarize", "input": enc, "max_entries": m,
                   "print_v1": v1(t, m) if m >= 0 else None, "print_v2": v2(t, m)}
            print(json.dumps(rec, sort_keys=True))
            count += 1
