"""Records TensorFlow 2.21's unary math ops and activations (eager tf.raw_ops on CPU): Relu,
Relu6, Elu, Selu, LeakyRelu, Sigmoid, Tanh, Softplus, Softmax, LogSoftmax, Exp, Log, Log1p,
Sqrt, Rsqrt, Square, Neg, Abs, Sign, Erf, Erfc, Floor, Ceil, Round, Reciprocal, LogicalNot,
over every dtype (the ones TensorFlow's CPU kernels register give results, the others its
error), on special values (NaN, +-inf, +-0, subnormals, the largest finite values, values near
the ops' overflow and cancellation points) and random ones, scalars and empty tensors.

Each line as gen_ops_nn.py's.

    .venv/bin/python tests/tf_observed/gen_ops_math.py > tests/tf_observed/ops_math.jsonl
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from ops_common import Recorder, values, NP, FLOATS

rng = np.random.default_rng(int(os.environ.get("SEED", "20261125")))
R = Recorder("ops-math")

UNARY = ["Relu", "Relu6", "Elu", "Selu", "Sigmoid", "Tanh", "Softplus", "Exp", "Log", "Log1p",
         "Sqrt", "Rsqrt", "Square", "Neg", "Abs", "Sign", "Erf", "Erfc", "Floor", "Ceil", "Round",
         "Reciprocal"]
ARG = {"Relu": "features", "Relu6": "features", "Elu": "features", "Selu": "features",
       "Softplus": "features", "LeakyRelu": "features", "Softmax": "logits", "LogSoftmax": "logits",
       "LogicalNot": "x"}
DTYPES = ["float", "double", "half", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "uint32", "uint64", "complex64", "complex128", "bool"]


def special(name):
    """Edge values of a floating dtype: NaN, infinities, signed zeros, the smallest subnormal
    and normal, the largest finite, halves (Round), and points where the ops overflow."""
    info = np.finfo(NP[name]) if name != "bfloat16" else None
    tiny = float(info.tiny) if info is not None else 1.1754943508222875e-38
    big = float(info.max) if info is not None else 3.3895313892515355e+38
    sub = float(info.smallest_subnormal) if info is not None else 9.183549615799121e-41
    v = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, sub, -sub, tiny, -tiny, big, -big, 0.5, -0.5,
         1.5, 2.5, -2.5, 1.0, -1.0, 6.0, 6.5, 1e-8, -1e-8, 1e-4, 20.0, -20.0, 88.0, 89.0, -87.0,
         -104.0, 709.0, 710.0, -745.0, 3.0, -3.0, 5.9, 0.1, -0.1, 1e4, -1e4, 2.0 ** 24 + 1,
         -7.5, 100.0, 0.999, -0.999]
    return np.array(v, dtype=np.float64).astype(NP[name])


def int_values(name):
    info = np.iinfo(NP[name])
    v = [0, 1, 2, 5, 6, 7, 100, info.max, info.min, info.max - 1, info.min + 1]
    if info.min < 0:
        v += [-1, -2, -6, -7, -100]
    return np.array(v, dtype=NP[name])


def inputs_for(name):
    if name in FLOATS:
        return [special(name), values(rng, name, [3, 5]), (values(rng, name, [64]) * 4),
                np.abs(values(rng, name, [2, 8])) * 3, values(rng, name, []), values(rng, name, [0, 3])]
    if name == "bool":
        return [np.array([True, False, True])]
    if name.startswith("complex"):
        return [values(rng, name, [4])]
    return [int_values(name), values(rng, name, [2, 3])]


for op in UNARY:
    arg = ARG.get(op, "x")
    for d in DTYPES:
        for x in inputs_for(d)[: (None if d in ("float", "double", "half", "bfloat16", "int32", "int64") else 1)]:
            R.eager(op, [(arg, d, np.asarray(x).astype(NP[d]))])
for d in DTYPES:
    for x in inputs_for(d)[:3]:
        R.eager("LeakyRelu", [("features", d, np.asarray(x).astype(NP[d]))])
for alpha in [0.0, 0.01, 0.3, 1.0, 2.0, -0.5]:
    R.eager("LeakyRelu", [("features", "float", special("float"))], {"alpha": alpha})
    R.eager("LeakyRelu", [("features", "double", special("double"))], {"alpha": alpha})
for op in ["Softmax", "LogSoftmax"]:
    for d in DTYPES:
        shapes = [[3, 5], [2, 3, 7], [4], [1, 1], [0, 3], [3, 0], [2, 100]] if d in FLOATS else [[2, 3]]
        for s in shapes:
            R.eager(op, [("logits", d, values(rng, d, s) * (3 if d in FLOATS else 1))])
        if d in FLOATS:
            R.eager(op, [("logits", d, values(rng, d, [4, 6], special=True))])
            R.eager(op, [("logits", d, np.array([[1e4, 0.0, -1e4], [-np.inf, 0.0, 1.0], [np.inf, 1.0, 2.0], [-np.inf, -np.inf, -np.inf]], dtype=np.float64).astype(NP[d]))])
            R.eager(op, [("logits", d, values(rng, d, []))])
for d in DTYPES:
    R.eager("LogicalNot", [("x", d, inputs_for(d)[0])])
R.eager("LogicalNot", [("x", "bool", np.array([[True, False], [False, False]]))])
R.eager("LogicalNot", [("x", "bool", np.zeros([0, 2], dtype=bool))])
