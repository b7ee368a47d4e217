"""Records TensorFlow 2.21's linear-algebra ops (eager tf.raw_ops on CPU, and graph-mode shape
inference): MatMul (transpose_a/b) and BatchMatMulV2 (adj_x/adj_y, broadcast batch dims) over
every dtype the CPU kernels register, one the op's type list refuses (int16 for MatMul, whose
CPU kernel exists but whose OpDef refuses it), one without a kernel, mismatched dtypes, ranks
and inner dims; empty and single-element shapes; NaN and infinities; integer wrap-around.

Each line: op, kind ("eager": inputs [[arg, tensor]], attrs, expect or error {code, message};
"shape": inputs [[arg, dtype, dims or null]] with -1 for unknown dims, expect_shape or error).

    .venv/bin/python tests/tf_observed/gen_ops_linalg.py > tests/tf_observed/ops_linalg.jsonl
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from ops_common import Recorder, values

rng = np.random.default_rng(int(os.environ.get("SEED", "20261125")))
R = Recorder("ops-linalg")
DTYPES = ["float", "double", "half", "bfloat16", "int32", "int64", "complex64", "complex128"]

# ---- MatMul -------------------------------------------------------------------------------
for d in DTYPES:
    for (m, k, n) in [(2, 3, 4), (1, 1, 1), (5, 7, 3), (17, 33, 9), (0, 3, 4), (2, 0, 4), (2, 3, 0), (1, 64, 1), (40, 70, 50)]:
        for ta in (False, True):
            for tb in (False, True):
                if (m, k, n) in [(40, 70, 50), (17, 33, 9)] and (ta or tb) and d not in ("float", "double"):
                    continue
                a = values(rng, d, [k, m] if ta else [m, k])
                b = values(rng, d, [n, k] if tb else [k, n])
                R.eager("MatMul", [("a", d, a), ("b", d, b)], {"transpose_a": ta, "transpose_b": tb})
    # NaN, infinities, signed zeros; integer overflow
    a = values(rng, d, [6, 8], special=True)
    b = values(rng, d, [8, 5], special=True)
    R.eager("MatMul", [("a", d, a), ("b", d, b)])
    # errors per dtype (the oneDNN kernels of float/bfloat16 and Eigen's of the rest word them)
    R.eager("MatMul", [("a", d, values(rng, d, [2, 3])), ("b", d, values(rng, d, [4, 5]))])
    R.eager("MatMul", [("a", d, values(rng, d, [2, 3])), ("b", d, values(rng, d, [2, 5]))], {"transpose_a": True})
    R.eager("MatMul", [("a", d, values(rng, d, [2, 3])), ("b", d, values(rng, d, [5, 2]))], {"transpose_b": True})
    R.eager("MatMul", [("a", d, values(rng, d, [2, 3, 1])), ("b", d, values(rng, d, [4, 5]))])
    R.eager("MatMul", [("a", d, values(rng, d, [2, 3])), ("b", d, values(rng, d, [3]))])
    R.eager("MatMul", [("a", d, values(rng, d, [])), ("b", d, values(rng, d, [3, 3]))])
    R.eager("MatMul", [("a", d, values(rng, d, [2, 3, 1])), ("b", d, values(rng, d, [2, 1, 3]))])
    R.eager("MatMul", [("a", d, values(rng, d, [3])), ("b", d, values(rng, d, [3]))])
    R.eager("MatMul", [("a", d, values(rng, d, [3, 3])), ("b", d, values(rng, d, [3, 3, 1]))])
for d in ["int16", "int8", "uint8", "uint32", "bool", "string"]:
    R.eager("MatMul", [("a", d, values(rng, d, [2, 3])), ("b", d, values(rng, d, [3, 2]))])
R.eager("MatMul", [("a", "uint16", values(rng, "uint16", [2, 3])), ("b", "uint16", values(rng, "uint16", [2, 3]))], {"transpose_b": True})
R.eager("BatchMatMulV2", [("x", "uint64", values(rng, "uint64", [3, 2])), ("y", "uint64", values(rng, "uint64", [3, 2]))], {"adj_x": True})
R.eager("MatMul", [("a", "float", values(rng, "float", [2, 3])), ("b", "int32", values(rng, "int32", [3, 2]))])
R.eager("MatMul", [("a", "double", values(rng, "double", [2, 3])), ("b", "float", values(rng, "float", [3, 2]))])

# ---- BatchMatMulV2 --------------------------------------------------------------------------
BSHAPES = [([2, 3], [3, 4]), ([3, 2, 3], [3, 4]), ([2, 3], [5, 3, 4]), ([2, 1, 2, 3], [3, 3, 4]),
           ([4, 2, 3], [4, 3, 4]), ([1, 2, 3], [6, 3, 2]), ([0, 2, 3], [3, 1]), ([2, 0, 3], [2, 3, 4]),
           ([2, 2, 0], [2, 0, 4]), ([3, 1, 5, 6], [1, 2, 6, 7]), ([2, 3, 1, 1, 2], [2, 2, 1])]
for d in DTYPES:
    for xs, ys in BSHAPES:
        for ax in (False, True):
            for ay in (False, True):
                if d not in ("float", "complex64") and ax and ay:
                    continue
                x = values(rng, d, xs[:-2] + [xs[-1], xs[-2]] if ax else xs)
                y = values(rng, d, ys[:-2] + [ys[-1], ys[-2]] if ay else ys)
                R.eager("BatchMatMulV2", [("x", d, x), ("y", d, y)], {"adj_x": ax, "adj_y": ay})
    R.eager("BatchMatMulV2", [("x", d, values(rng, d, [3, 4, 8], special=True)), ("y", d, values(rng, d, [8, 2], special=True))])
    R.eager("BatchMatMulV2", [("x", d, values(rng, d, [2, 2, 3])), ("y", d, values(rng, d, [3, 3, 5]))])
    R.eager("BatchMatMulV2", [("x", d, values(rng, d, [2, 2, 3])), ("y", d, values(rng, d, [2, 4, 5]))])
    R.eager("BatchMatMulV2", [("x", d, values(rng, d, [2, 2, 3])), ("y", d, values(rng, d, [2, 4, 5]))], {"adj_x": True, "adj_y": True})
    R.eager("BatchMatMulV2", [("x", d, values(rng, d, [3])), ("y", d, values(rng, d, [3, 5]))])
    R.eager("BatchMatMulV2", [("x", d, values(rng, d, [2, 3])), ("y", d, values(rng, d, [3]))])
    R.eager("BatchMatMulV2", [("x", d, values(rng, d, [])), ("y", d, values(rng, d, []))])
for d in ["int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool", "string"]:
    R.eager("BatchMatMulV2", [("x", d, values(rng, d, [2, 3])), ("y", d, values(rng, d, [3, 2]))])
R.eager("BatchMatMulV2", [("x", "float", values(rng, "float", [2, 3])), ("y", "half", values(rng, "half", [3, 2]))])

# ---- graph-mode shapes --------------------------------------------------------------------------
for sa, sb, attrs in [([2, 3], [3, 4], {}), ([-1, 3], [3, -1], {}), ([2, -1], [-1, 4], {}), (None, [3, 4], {}),
                      (None, None, {}), ([3, 2], [4, 3], {"transpose_a": True, "transpose_b": True}),
                      ([2, 3], [4, 5], {}), ([2, 3, 1], [3, 4], {}), ([2, 3], [3], {}), ([3, 2], [3, 4], {"transpose_a": True}),
                      ([2, 3], [2, 4], {"transpose_a": True}), ([-1, -1], None, {"transpose_b": True})]:
    R.shape("MatMul", [("a", "float", sa), ("b", "float", sb)], attrs)
for sa, sb, attrs in [([2, 3], [3, 4], {}), ([5, 2, 3], [3, 4], {}), ([5, 1, 2, 3], [7, 3, 4], {}),
                      ([-1, 2, 3], [4, 3, 5], {}), ([2, 2, 3], [3, 3, 5], {}), ([2, 3], [4, 5], {}),
                      (None, [3, 4], {}), ([2, 3], None, {}), (None, None, {}), ([3], [3, 4], {}),
                      ([2, -1, 3], [-1, 3, -1], {}), ([1, 2, 3], [-1, 3, 4], {}), ([3, 2], [4, 3], {"adj_x": True, "adj_y": True}),
                      ([6, 2, 3], [3, -1, 3, 4], {}), ([2, 2, 3], [2, 4, 5], {"adj_y": True})]:
    R.shape("BatchMatMulV2", [("x", "float", sa), ("y", "float", sb)], attrs)
