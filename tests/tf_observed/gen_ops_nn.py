"""Records TensorFlow 2.21's convolution, pooling and normalisation ops (eager tf.raw_ops on
CPU, NHWC, and graph-mode shape inference): BiasAdd (NHWC, NCHW), Conv2D (SAME / VALID /
EXPLICIT padding, strides, dilations), DepthwiseConv2dNative, MaxPool, AvgPool (SAME / VALID,
ksize, strides), FusedBatchNormV3 with is_training=false (all six outputs), over the dtypes the
CPU kernels register and ones they refuse, with NaN and infinities, empty batches and bad
arguments.

Each line as gen_ops_linalg.py's; attrs are the op's attrs as passed to tf.raw_ops.

    .venv/bin/python tests/tf_observed/gen_ops_nn.py > tests/tf_observed/ops_nn.jsonl
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from ops_common import Recorder, values

rng = np.random.default_rng(int(os.environ.get("SEED", "20261125")))
R = Recorder("ops-nn")

# ---- BiasAdd --------------------------------------------------------------------------------
for d in ["float", "double", "half", "bfloat16", "int32", "int64", "int8", "uint8", "int16", "uint16", "uint32", "uint64", "complex64", "complex128"]:
    for shape in [[2, 3], [2, 4, 5, 3], [3], [0, 3], [1, 2, 2, 2, 4]]:
        R.eager("BiasAdd", [("value", d, values(rng, d, shape)), ("bias", d, values(rng, d, shape[-1:]))])
for d in ["bool", "string"]:
    R.eager("BiasAdd", [("value", d, values(rng, d, [2, 3])), ("bias", d, values(rng, d, [3]))])
R.eager("BiasAdd", [("value", "float", values(rng, "float", [2, 3], special=True)), ("bias", "float", values(rng, "float", [3], special=True))])
R.eager("BiasAdd", [("value", "float", values(rng, "float", [2, 3, 4, 5])), ("bias", "float", values(rng, "float", [3]))], {"data_format": "NCHW"})
R.eager("BiasAdd", [("value", "float", values(rng, "float", [2, 3, 4])), ("bias", "float", values(rng, "float", [3]))], {"data_format": "NCHW"})
R.eager("BiasAdd", [("value", "float", values(rng, "float", [2, 3])), ("bias", "float", values(rng, "float", [4]))])
R.eager("BiasAdd", [("value", "float", values(rng, "float", [])), ("bias", "float", values(rng, "float", [1]))])
R.eager("BiasAdd", [("value", "float", values(rng, "float", [2, 3])), ("bias", "float", values(rng, "float", [1, 3]))])
R.eager("BiasAdd", [("value", "float", values(rng, "float", [2, 3])), ("bias", "double", values(rng, "double", [3]))])

# ---- Conv2D ---------------------------------------------------------------------------------
CONV = [  # input NHWC, filter HWIO, strides, padding, dilations, explicit
    ([1, 5, 5, 1], [3, 3, 1, 1], [1, 1, 1, 1], "VALID", [1, 1, 1, 1], None),
    ([2, 6, 7, 3], [3, 3, 3, 4], [1, 1, 1, 1], "SAME", [1, 1, 1, 1], None),
    ([2, 7, 6, 3], [3, 2, 3, 5], [1, 2, 2, 1], "SAME", [1, 1, 1, 1], None),
    ([1, 8, 8, 2], [3, 3, 2, 2], [1, 2, 1, 1], "VALID", [1, 1, 1, 1], None),
    ([1, 9, 9, 2], [3, 3, 2, 3], [1, 1, 1, 1], "SAME", [1, 2, 2, 1], None),
    ([1, 9, 8, 2], [2, 3, 2, 3], [1, 1, 1, 1], "VALID", [1, 2, 3, 1], None),
    ([2, 5, 5, 2], [3, 3, 2, 2], [1, 1, 1, 1], "EXPLICIT", [1, 1, 1, 1], [0, 0, 1, 2, 0, 1, 0, 0]),
    ([1, 4, 4, 3], [1, 1, 3, 8], [1, 1, 1, 1], "VALID", [1, 1, 1, 1], None),
    ([1, 10, 10, 4], [5, 5, 4, 2], [1, 3, 3, 1], "SAME", [1, 1, 1, 1], None),
    ([0, 5, 5, 2], [3, 3, 2, 2], [1, 1, 1, 1], "SAME", [1, 1, 1, 1], None),
    ([1, 2, 2, 2], [3, 3, 2, 2], [1, 1, 1, 1], "VALID", [1, 1, 1, 1], None),
    ([1, 3, 3, 1], [3, 3, 1, 1], [1, 1, 1, 1], "SAME", [1, 1, 1, 1], None),
    ([2, 12, 12, 16], [3, 3, 16, 24], [1, 1, 1, 1], "SAME", [1, 1, 1, 1], None),
    ([1, 6, 6, 4], [3, 3, 2, 6], [1, 1, 1, 1], "SAME", [1, 1, 1, 1], None),  # grouped: in 4 / filter in 2
]
def conv_attrs(strides, padding, dilations, explicit):
    a = {"strides": strides, "padding": padding, "dilations": dilations}
    if explicit is not None:
        a["explicit_paddings"] = explicit
    return a
for d in ["float", "double", "half", "bfloat16", "int32"]:
    for x, f, s, p, dil, ex in CONV:
        if d in ("half", "bfloat16", "int32") and x[-1] == 16:
            continue
        R.eager("Conv2D", [("input", d, values(rng, d, x)), ("filter", d, values(rng, d, f))], conv_attrs(s, p, dil, ex))
R.eager("Conv2D", [("input", "float", values(rng, "float", [1, 4, 4, 2], special=True)), ("filter", "float", values(rng, "float", [2, 2, 2, 2]))], conv_attrs([1, 1, 1, 1], "VALID", [1, 1, 1, 1], None))
for d in ["int64", "int8", "complex64", "string"]:
    R.eager("Conv2D", [("input", d, values(rng, d, [1, 3, 3, 1])), ("filter", d, values(rng, d, [1, 1, 1, 1]))], conv_attrs([1, 1, 1, 1], "VALID", [1, 1, 1, 1], None))
# A rank-3 input makes TensorFlow 2.21's eager Conv2D abort (a CHECK in tensor_format.h): shape
# inference only.
RANK3 = [([1, 5, 5], [3, 3, 1, 1], [1, 1, 1, 1], "VALID", [1, 1, 1, 1], None)]
BAD_CONV = [
    ([1, 5, 5, 1], [3, 3, 2, 1], [1, 1, 1, 1], "VALID", [1, 1, 1, 1], None),
    ([1, 5, 5, 1], [3, 3, 1], [1, 1, 1, 1], "VALID", [1, 1, 1, 1], None),
    ([1, 5, 5, 1], [3, 3, 1, 1], [2, 1, 1, 1], "VALID", [1, 1, 1, 1], None),
    ([1, 5, 5, 1], [3, 3, 1, 1], [1, 1, 1], "VALID", [1, 1, 1, 1], None),
    ([1, 5, 5, 1], [3, 3, 1, 1], [1, 0, 1, 1], "VALID", [1, 1, 1, 1], None),
    ([1, 5, 5, 1], [3, 3, 1, 1], [1, 1, 1, 1], "VALID", [1, 1, 1, 2], None),
    ([1, 5, 5, 1], [3, 3, 1, 1], [1, 1, 1, 1], "VALID", [1, 0, 1, 1], None),
    ([1, 5, 5, 1], [3, 3, 1, 1], [1, 2, 1, 1], "VALID", [1, 2, 1, 1], None),
    ([1, 2, 2, 1], [3, 3, 1, 1], [1, 1, 1, 1], "VALID", [1, 1, 1, 1], None),
    ([1, 5, 5, 1], [3, 3, 1, 1], [1, 1, 1, 1], "EXPLICIT", [1, 1, 1, 1], [0, 0, 1, 1, 1, 1]),
    ([1, 5, 5, 1], [3, 3, 1, 1], [1, 1, 1, 1], "EXPLICIT", [1, 1, 1, 1], [1, 0, 1, 1, 1, 1, 0, 0]),
    ([1, 5, 5, 1], [3, 3, 1, 1], [1, 1, 1, 1], "EXPLICIT", [1, 1, 1, 1], [0, 0, -1, 1, 1, 1, 0, 0]),
    ([1, 5, 5, 1], [3, 3, 1, 1], [1, 1, 1, 1], "SAME", [1, 1, 1, 1], [0, 0, 1, 1, 1, 1, 0, 0]),
    ([1, 5, 5, 3], [3, 3, 2, 4], [1, 1, 1, 1], "SAME", [1, 1, 1, 1], None),
    ([1, 5, 5, 4], [3, 3, 2, 3], [1, 1, 1, 1], "SAME", [1, 1, 1, 1], None),
    ([1, 5, 5, 1], [0, 3, 1, 1], [1, 1, 1, 1], "SAME", [1, 1, 1, 1], None),
]
for x, f, s, p, dil, ex in BAD_CONV:
    R.eager("Conv2D", [("input", "float", values(rng, "float", x)), ("filter", "float", values(rng, "float", f))], conv_attrs(s, p, dil, ex))
    R.eager("Conv2D", [("input", "double", values(rng, "double", x)), ("filter", "double", values(rng, "double", f))], conv_attrs(s, p, dil, ex))
R.eager("Conv2D", [("input", "float", values(rng, "float", [1, 3, 3, 1])), ("filter", "double", values(rng, "double", [1, 1, 1, 1]))], conv_attrs([1, 1, 1, 1], "VALID", [1, 1, 1, 1], None))

# ---- DepthwiseConv2dNative -------------------------------------------------------------------------
DW = [
    ([1, 5, 5, 2], [3, 3, 2, 1], [1, 1, 1, 1], "VALID", [1, 1, 1, 1], None),
    ([2, 6, 7, 3], [3, 3, 3, 2], [1, 1, 1, 1], "SAME", [1, 1, 1, 1], None),
    ([2, 7, 6, 4], [3, 2, 4, 1], [1, 2, 2, 1], "SAME", [1, 1, 1, 1], None),
    ([1, 9, 9, 2], [3, 3, 2, 1], [1, 1, 1, 1], "SAME", [1, 2, 2, 1], None),
    ([1, 8, 8, 3], [5, 5, 3, 1], [1, 2, 2, 1], "VALID", [1, 1, 1, 1], None),
    ([2, 5, 5, 2], [3, 3, 2, 2], [1, 1, 1, 1], "EXPLICIT", [1, 1, 1, 1], [0, 0, 1, 2, 0, 1, 0, 0]),
    ([0, 4, 4, 2], [3, 3, 2, 1], [1, 1, 1, 1], "SAME", [1, 1, 1, 1], None),
    ([1, 12, 12, 16], [3, 3, 16, 1], [1, 1, 1, 1], "SAME", [1, 1, 1, 1], None),
]
for d in ["float", "double", "half", "bfloat16"]:
    for x, f, s, p, dil, ex in DW:
        R.eager("DepthwiseConv2dNative", [("input", d, values(rng, d, x)), ("filter", d, values(rng, d, f))], conv_attrs(s, p, dil, ex))
for d in ["int32", "complex64"]:
    R.eager("DepthwiseConv2dNative", [("input", d, values(rng, d, [1, 3, 3, 1])), ("filter", d, values(rng, d, [1, 1, 1, 1]))], conv_attrs([1, 1, 1, 1], "VALID", [1, 1, 1, 1], None))
for x, f, s, p, dil, ex in BAD_CONV[:13] + [([1, 5, 5, 3], [3, 3, 2, 1], [1, 1, 1, 1], "SAME", [1, 1, 1, 1], None)]:
    R.eager("DepthwiseConv2dNative", [("input", "float", values(rng, "float", x)), ("filter", "float", values(rng, "float", f))], conv_attrs(s, p, dil, ex))

# ---- MaxPool / AvgPool (a zero stride, or a window larger than a VALID input, makes TensorFlow 2.21 die of a division by zero: not recorded) ---------------------------------------------------------------------------
POOL = [
    ([1, 4, 4, 1], [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
    ([2, 5, 5, 3], [1, 2, 2, 1], [1, 2, 2, 1], "SAME"),
    ([2, 5, 6, 3], [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
    ([1, 7, 7, 2], [1, 3, 2, 1], [1, 1, 2, 1], "VALID"),
    ([1, 3, 3, 2], [1, 3, 3, 1], [1, 1, 1, 1], "SAME"),
    ([1, 3, 3, 2], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"),
    ([0, 4, 4, 2], [1, 2, 2, 1], [1, 2, 2, 1], "SAME"),
    ([1, 2, 2, 1], [1, 3, 3, 1], [1, 1, 1, 1], "SAME"),
    ([1, 10, 10, 8], [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
]
for op, dts in [("MaxPool", ["float", "double", "half", "bfloat16", "int32", "int64", "int8", "uint8", "int16", "uint16", "uint32", "uint64"]),
                ("AvgPool", ["float", "double", "half", "bfloat16"])]:
    arg = "input" if op == "MaxPool" else "value"
    for d in dts:
        for x, k, s, p in POOL:
            R.eager(op, [(arg, d, values(rng, d, x))], {"ksize": k, "strides": s, "padding": p})
    R.eager(op, [(arg, "float", values(rng, "float", [1, 4, 4, 2], special=True))], {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"})
    for d in ["complex64", "bool", "string"] + (["int32"] if op == "AvgPool" else []):
        R.eager(op, [(arg, d, values(rng, d, [1, 2, 2, 1]))], {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"})
    for x, k, s, p in [([1, 4, 4], [1, 2, 2, 1], [1, 1, 1, 1], "VALID"), ([1, 4, 4, 1], [1, 2, 2], [1, 1, 1, 1], "VALID"),
                       ([1, 4, 4, 1], [1, 2, 2, 1], [1, 1, 1], "VALID"), ([1, 4, 4, 1], [2, 2, 2, 1], [1, 1, 1, 1], "VALID"),
                       ([1, 4, 4, 1], [1, 2, 2, 1], [2, 1, 1, 1], "VALID"), ([1, 4, 4, 1], [1, 0, 2, 1], [1, 1, 1, 1], "VALID"),
                       ([1, 4, 4, 2], [1, 2, 2, 2], [1, 1, 1, 1], "VALID"), ([1, 4, 4, 2], [1, 2, 2, 1], [1, 1, 1, 2], "VALID")]:
        R.eager(op, [(arg, "float", values(rng, "float", x))], {"ksize": k, "strides": s, "padding": p})

# ---- FusedBatchNormV3 (inference) ------------------------------------------------------------------
for d in ["float", "half", "bfloat16"]:
    for shape in [[2, 3, 3, 4], [1, 1, 1, 1], [0, 2, 2, 3], [3, 5, 5, 8]]:
        c = shape[-1]
        mean = values(rng, "float", [c]); var = np.abs(values(rng, "float", [c]))
        R.eager("FusedBatchNormV3", [("x", d, values(rng, d, shape)), ("scale", "float", values(rng, "float", [c])),
                                     ("offset", "float", values(rng, "float", [c])), ("mean", "float", mean), ("variance", "float", var)],
                {"epsilon": 0.001, "is_training": False})
x = values(rng, "float", [1, 2, 2, 3], special=True)
R.eager("FusedBatchNormV3", [("x", "float", x), ("scale", "float", values(rng, "float", [3])), ("offset", "float", values(rng, "float", [3])),
                             ("mean", "float", values(rng, "float", [3])), ("variance", "float", np.array([0.0, 1.0, 4.0], np.float32))],
        {"epsilon": 1e-5, "is_training": False})
for bad in [dict(x=[2, 3, 4], c=4), dict(x=[2, 3, 3, 4], c=3), dict(x=[2, 3, 3, 4], c=4, sc=[4, 1])]:
    c = bad["c"]
    R.eager("FusedBatchNormV3", [("x", "float", values(rng, "float", bad["x"])), ("scale", "float", values(rng, "float", bad.get("sc", [c]))),
                                 ("offset", "float", values(rng, "float", [c])), ("mean", "float", values(rng, "float", [c])),
                                 ("variance", "float", np.abs(values(rng, "float", [c])))], {"epsilon": 0.001, "is_training": False})
R.eager("FusedBatchNormV3", [("x", "double", values(rng, "double", [1, 2, 2, 3])), ("scale", "float", values(rng, "float", [3])),
                             ("offset", "float", values(rng, "float", [3])), ("mean", "float", values(rng, "float", [3])),
                             ("variance", "float", np.abs(values(rng, "float", [3])))], {"epsilon": 0.001, "is_training": False})

# ---- graph-mode shapes -----------------------------------------------------------------------------
for x, f, s, p, dil, ex in CONV[:9] + [([-1, 7, -1, 3], [3, 3, 3, 4], [1, 2, 2, 1], "SAME", [1, 1, 1, 1], None),
                                        ([-1, 7, 7, 3], [3, 3, -1, -1], [1, 1, 1, 1], "VALID", [1, 1, 1, 1], None),
                                        (None, [3, 3, 3, 4], [1, 1, 1, 1], "VALID", [1, 1, 1, 1], None)] + BAD_CONV + RANK3:
    R.shape("Conv2D", [("input", "float", x), ("filter", "float", f)], conv_attrs(s, p, dil, ex))
for x, f, s, p, dil, ex in DW[:6] + [(None, [3, 3, 2, 1], [1, 1, 1, 1], "SAME", [1, 1, 1, 1], None)]:
    R.shape("DepthwiseConv2dNative", [("input", "float", x), ("filter", "float", f)], conv_attrs(s, p, dil, ex))
for x, k, s, p in POOL + [([-1, 5, -1, 3], [1, 2, 2, 1], [1, 2, 2, 1], "SAME"), (None, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), ([1, 2, 2, 1], [1, 3, 3, 1], [1, 1, 1, 1], "VALID")]:
    for op in ["MaxPool", "AvgPool"]:
        R.shape(op, [("input" if op == "MaxPool" else "value", "float", x)], {"ksize": k, "strides": s, "padding": p})
for x, b in [([2, 3], [3]), ([-1, 4, 5, 3], [3]), (None, [3]), ([2, 3], [4]), ([3], [3]), ([2, 3], None)]:
    R.shape("BiasAdd", [("value", "float", x), ("bias", "float", b)])
for x in [[2, 3, 3, 4], [-1, 3, 3, 4], None, [2, 3, 4]]:
    for out in range(6):
        R.shape("FusedBatchNormV3", [("x", "float", x), ("scale", "float", [4]), ("offset", "float", [4]), ("mean", "float", [4]), ("variance", "float", [4])],
                {"epsilon": 0.001, "is_training": False}, output=out)
