"""Records TensorFlow 2.21's reductions (eager tf.raw_ops on CPU, and graph-mode shape
inference): Sum, Mean, Max, Min, Prod, All, Any with keep_dims, scalar / vector / negative /
repeated / out-of-range / empty axes (int32 and int64), empty inputs and empty reductions,
NaN and infinities; ArgMax and ArgMin (output_type int32 / int64 / int16 / uint16, negative
and out-of-range dimensions, NaN, ties, empty axes, every input dtype); over every dtype
TensorFlow's CPU kernels register and ones they refuse.

Each line as gen_ops_nn.py's.

    .venv/bin/python tests/tf_observed/gen_ops_reduce.py > tests/tf_observed/ops_reduce.jsonl
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from ops_common import Recorder, values, NP, FLOATS

rng = np.random.default_rng(int(os.environ.get("SEED", "20261125")))
R = Recorder("ops-reduce")

DTYPES = ["float", "double", "half", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "uint32", "uint64", "complex64", "complex128", "bool"]
AXES = [  # (input shape, axis value, axis dtype)
    ([3, 4], [1], "int32"), ([3, 4], [0], "int32"), ([3, 4], -1, "int32"), ([3, 4], [0, 1], "int32"),
    ([3, 4], [], "int32"), ([2, 3, 4], [0, 2], "int64"), ([2, 3, 4], [-1, -3], "int32"),
    ([2, 3, 4], [1, 1], "int32"), ([2, 3, 4], [1, -2], "int32"), ([5], 0, "int64"), ([], [], "int32"),
    ([0, 3], [0], "int32"), ([0, 3], [1], "int32"), ([3, 0], [1], "int32"), ([2, 0, 3], [0, 2], "int32"),
    ([4, 600], [1], "int32"), ([1000], [0], "int32"),
]
BAD_AXES = [([3, 4], [2], "int32"), ([3, 4], [-3], "int32"), ([3, 4], [[0]], "int32"),
            ([], [0], "int32"), ([3, 4], [0, 5], "int64")]

for op in ["Sum", "Mean", "Max", "Min", "Prod"]:
    for d in DTYPES:
        for shape, axis, adt in (AXES if d in ("float", "double", "int32", "int64") else AXES[:8] + AXES[11:13]):
            for keep in ([False, True] if len(shape) > 1 else [False]):
                x = values(rng, d, shape)
                if d in FLOATS and op == "Prod" and shape == [1000]:
                    x = (1 + x / 100).astype(NP[d])
                R.eager(op, [("input", d, x), ("axis", adt, np.array(axis, dtype=NP[adt]))], {"keep_dims": keep})
    for d in FLOATS:
        R.eager(op, [("input", d, values(rng, d, [4, 6], special=True)), ("axis", "int32", np.array([1], dtype=np.int32))], {"keep_dims": False})
        R.eager(op, [("input", d, np.array([[np.nan, 1.0], [np.inf, -np.inf], [-0.0, 0.0], [np.inf, np.inf]]).astype(NP[d])), ("axis", "int32", np.array(1, dtype=np.int32))], {"keep_dims": False})
    for d in ["int32", "uint8", "int64"]:
        R.eager(op, [("input", d, values(rng, d, [3, 5], special=True)), ("axis", "int32", np.array([1], dtype=np.int32))], {"keep_dims": False})
    for shape, axis, adt in BAD_AXES:
        R.eager(op, [("input", "float", values(rng, "float", shape)), ("axis", adt, np.array(axis, dtype=NP[adt]))], {"keep_dims": False})
    R.eager(op, [("input", "float", values(rng, "float", [3, 4])), ("axis", "float", np.array([1], dtype=np.float32))], {"keep_dims": False})
for op in ["All", "Any"]:
    for d in ["bool", "float", "int32"]:
        for shape, axis, adt in AXES:
            for keep in ([False, True] if len(shape) > 1 else [False]):
                R.eager(op, [("input", d, values(rng, d, shape)), ("axis", adt, np.array(axis, dtype=NP[adt]))], {"keep_dims": keep})
                if d != "bool":
                    break
            if d != "bool":
                break
    for shape, axis, adt in BAD_AXES:
        R.eager(op, [("input", "bool", values(rng, "bool", shape)), ("axis", adt, np.array(axis, dtype=NP[adt]))], {"keep_dims": False})

# ---- ArgMax / ArgMin ------------------------------------------------------------------------
n = np.nan
for op in ["ArgMax", "ArgMin"]:
    for d in DTYPES:
        for shape, dim in [([3, 4], 1), ([3, 4], 0), ([2, 3, 4], -1), ([2, 3, 4], 1), ([7], 0), ([3, 0], 0), ([3, 1], 1)]:
            R.eager(op, [("input", d, values(rng, d, shape)), ("dimension", "int32", np.array(dim, dtype=np.int32))])
        if d not in FLOATS and d not in ("bool", "complex64", "complex128"):
            R.eager(op, [("input", d, values(rng, d, [4, 9], special=True)), ("dimension", "int32", np.array(1, dtype=np.int32))])
    for d in FLOATS:
        for row in [[1, n, 3], [n, 1, 3], [1, 3, n, n], [n, n], [n, -np.inf], [-np.inf, -np.inf], [np.inf, np.inf],
                    [3, 3, 1], [1, 1, 3], [-0.0, 0.0], [0.0, -0.0], [np.inf, n], [-np.inf, n, 2], [2, 2, 2]]:
            R.eager(op, [("input", d, np.array(row).astype(NP[d])), ("dimension", "int32", np.array(0, dtype=np.int32))])
        R.eager(op, [("input", d, values(rng, d, [5, 6], special=True)), ("dimension", "int64", np.array(-1, dtype=np.int64))])
    for ot in ["int32", "int64", "int16", "uint16"]:
        R.eager(op, [("input", "float", values(rng, "float", [3, 4])), ("dimension", "int32", np.array(1, dtype=np.int32))], {"output_type": ot})
    big = np.zeros([40000], dtype=np.float32); big[33333] = 1.0
    R.eager(op, [("input", "float", big * (1 if op == "ArgMax" else -1)), ("dimension", "int32", np.array(0, dtype=np.int32))], {"output_type": "int16"})
    for shape, dim, ddt in [([3, 4], 2, "int32"), ([3, 4], -3, "int32"), ([3, 4], [1], "int32"), ([], 0, "int32"),
                            ([0, 3], 0, "int32"), ([3, 4], 1, "float"), ([2, 0], 1, "int64")]:
        R.eager(op, [("input", "float", values(rng, "float", shape)), ("dimension", ddt, np.array(dim, dtype=NP[ddt]))])

# ---- shapes ---------------------------------------------------------------------------------
for op in ["Sum", "Max", "ArgMax", "ArgMin"]:
    for shape, axis in [([3, 4], [1]), ([3, -1], [0]), (None, [0]), ([2, 3, 4], [-1, 0]), ([3, 4], [2]), ([3, 4], [-3])]:
        if op.startswith("Arg"):
            R.shape(op, [("input", "float", shape), ("dimension", "int32", [])])
        else:
            for keep in [False, True]:
                R.shape(op, [("input", "float", shape), ("axis", "int32", [len(axis)])], {"keep_dims": keep})
