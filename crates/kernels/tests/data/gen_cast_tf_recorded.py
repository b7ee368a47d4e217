"""Records TensorFlow's Cast between every pair of the 15 numeric dtypes (tf.raw_ops.Cast,
TensorFlow 2.21 CPU on x86-64), at sizes that put elements in both its vectorised part and its
scalar tail, with special values (NaN, infinities, out-of-range, ties, subnormals) and random bit
patterns. Run: python3 crates/kernels/tests/data/gen_cast_tf_recorded.py 5 crates/kernels/tests/data/cast_tf_recorded.jsonl
"""
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np, tensorflow as tf, ml_dtypes
rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
STD = ["bool","int8","int16","int32","int64","uint8","uint16","uint32","uint64","half","bfloat16","float","double","complex64","complex128"]
NP = {"float": np.float32, "double": np.float64, "half": np.float16, "bfloat16": ml_dtypes.bfloat16,
      "complex64": np.complex64, "complex128": np.complex128, "bool": np.bool_}
def tfdt(n): return tf.as_dtype({"float":"float32","double":"float64","half":"float16"}.get(n, n))
SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 127.5, 128.0, -129.0, 255.9, 256.0, 300.0, -300.0, 32767.5, 40000.0, 65504.0, 65535.9,
   65536.0, 1e5, -1e5, 2147483520.0, 2147483648.0, 3e9, -2147483904.0, 4294967296.0, 5e9, 9.2233715e18, 9.3e18, 1.8e19, 2e19, -1e20, 1e30, -1e30,
   1e-40, -1e-40, 1e-310, 3e-5, 6e-8, float("inf"), float("-inf"), float("nan"), -float("nan"), 1.0+2**-11+2**-40, 3.4e38, 1e300]
def values(name, n):
    if name == "bool":
        return rng.integers(0, 2, n).astype(np.bool_)
    if name in ("half","bfloat16","float","double","complex64","complex128"):
        pick = rng.integers(0, len(SPECIAL), n)
        v = np.array([SPECIAL[i] for i in pick], np.float64)
        mix = rng.random(n) < 0.4
        v[mix] = rng.normal(0, 10.0**rng.integers(-3, 12, mix.sum()))
        if name.startswith("complex"):
            im = np.array([SPECIAL[i] for i in rng.integers(0, len(SPECIAL), n)])
            c = (v + 1j*im).astype(NP[name])
            nb = 4 if name == "complex64" else 8
            ut = np.uint32 if nb == 4 else np.uint64
            cv = c.view(ut).copy()
            rb = rng.integers(0, 256, 2*n*nb, dtype=np.uint8).view(ut)
            m = rng.random(2*n) < 0.2
            cv[m] = rb[m]
            return cv.view(NP[name])
        with np.errstate(all="ignore"):
            a = v.astype(NP[name])
        # a fifth of the elements: random bit patterns (NaN payloads, subnormals...)
        nb = {"half":2,"bfloat16":2,"float":4,"double":8}[name]
        rb = rng.integers(0, 256, n*nb, dtype=np.uint8).view({2:np.uint16,4:np.uint32,8:np.uint64}[nb])
        m = rng.random(n) < 0.2
        av = a.view({2:np.uint16,4:np.uint32,8:np.uint64}[nb]).copy()
        av[m] = rb[m]
        return av.view(NP[name]) if name != "bfloat16" else av.view(ml_dtypes.bfloat16)
    info = np.iinfo(name)
    a = rng.integers(info.min, info.max, n, dtype=name, endpoint=True)
    return a
def enc(name, a):
    a = np.ascontiguousarray(a)
    if name == "bfloat16": h = a.view(np.uint16).tobytes().hex()
    else: h = a.tobytes().hex()
    return {"dtype": name, "shape": list(a.shape), "hex": h}
out = open(sys.argv[2], "w")
k = 0
sizes = [1, 7, 9, 17, 19, 33, 40]
for src in STD:
    for dst in STD:
        if src == dst: continue
        for n in sizes:
            x = values(src, n)
            with np.errstate(all="ignore"):
                t = tf.constant(x, dtype=tfdt(src))
            y = tf.raw_ops.Cast(x=t, DstT=tfdt(dst)).numpy()
            rec = {"id": f"d{k}", "op": "cast", "input": enc(src, x), "type": dst, "expect": enc(dst, np.asarray(y, dtype=NP.get(dst, dst)))}
            out.write(json.dumps(rec) + "\n"); k += 1
print(k)
