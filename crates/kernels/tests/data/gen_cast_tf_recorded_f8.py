"""Records TensorFlow 2.21 Cast (tf.raw_ops.Cast, CPU, x86-64) between float8_e4m3fn, float8_e5m2,
int4, uint4 and the numeric dtypes, for every pair TensorFlow supports, at sizes 1 to 100, with
random bit patterns. Run: python3 crates/kernels/tests/data/gen_cast_tf_recorded_f8.py crates/kernels/tests/data/cast_tf_recorded_f8.jsonl
"""
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np, tensorflow as tf, ml_dtypes
rng = np.random.default_rng(3)
NEW = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2, "int4": ml_dtypes.int4, "uint4": ml_dtypes.uint4}
STD = ["bool","int8","int16","int32","int64","uint8","uint16","uint32","uint64","half","bfloat16","float","double","complex64","complex128"]
NP = {"float": np.float32, "double": np.float64, "half": np.float16, "bfloat16": ml_dtypes.bfloat16, "complex64": np.complex64, "complex128": np.complex128, "bool": np.bool_}
NP.update(NEW)
TFN = {"float8_e4m3fn": tf.as_dtype(25), "float8_e5m2": tf.as_dtype(24), "int4": tf.as_dtype(29), "uint4": tf.as_dtype(30)}
def tfdt(n): return TFN.get(n) or tf.as_dtype({"float":"float32","double":"float64","half":"float16"}.get(n, n))
SPECIAL=[0.0,-0.0,0.5,1.5,2.5,-2.5,300.0,-300.0,448.0,464.0,480.0,57344.0,61440.0,1e5,1e-3,1e-6,2**-10,2**-17,float("inf"),float("-inf"),float("nan"),-float("nan"),3e9,-3e9,5e9]
def values(name, n):
    if name in ("float8_e4m3fn","float8_e5m2"):
        return rng.integers(0,256,n,dtype=np.uint8).view(NP[name])
    if name in ("int4","uint4"):
        return rng.integers(0,16,n,dtype=np.uint8).view(NP[name])
    if name in ("half","bfloat16","float","double"):
        v=np.array([SPECIAL[i] for i in rng.integers(0,len(SPECIAL),n)]); m=rng.random(n)<0.5
        v[m]=rng.normal(0,10.0**rng.integers(-4,6,m.sum()))
        with np.errstate(all="ignore"): return v.astype(NP[name])
    if name=="bool": return rng.integers(0,2,n).astype(np.bool_)
    if name.startswith("complex"): return (rng.normal(0,100,n)+1j*rng.normal(0,100,n)).astype(NP[name])
    info=np.iinfo(name); return rng.integers(info.min, info.max, n, dtype=name, endpoint=True)
def enc(name,a):
    a=np.ascontiguousarray(a)
    if name=="bfloat16": return {"dtype":name,"shape":list(a.shape),"hex":a.view(np.uint16).tobytes().hex()}
    return {"dtype":name,"shape":list(a.shape),"hex":a.tobytes().hex()}
out=open(sys.argv[1],"w"); k=0
pairs=[(a,b) for a in NEW for b in STD+list(NEW)]+[(a,b) for a in STD for b in NEW]
for src,dst in pairs:
    for n in [1,7,9,16,17,33,40,100]:
        x=values(src,n)
        t=tf.constant(x) if src in NEW else tf.constant(x, dtype=tfdt(src))
        try:
            y=tf.raw_ops.Cast(x=t, DstT=tfdt(dst)).numpy()
        except tf.errors.UnimplementedError as e:
            break
        out.write(json.dumps({"id":f"f{k}","op":"cast","input":enc(src,x),"type":dst,"expect":enc(dst,np.asarray(y,dtype=NP.get(dst, dst)))})+"\n"); k+=1
print(k)
