"""Records TensorFlow 2.21's Einsum (eager tf.raw_ops.Einsum on CPU, and graph-mode shape
inference): the equations Keras layers emit (MultiHeadAttention's projections, scores and
combination, EinsumDense over the last axis), matrix and batch matrix products, transposes,
traces and diagonals, sums, outer products, `...` broadcasting, the odd spellings TensorFlow
accepts (a lone `.` as an ellipsis, output labels no input has, repeated output labels), over
every dtype the CPU kernels register and some they refuse, with NaN/inf and empty dims, and
the parse and validation errors.

Each line: {"op": "Einsum", "kind": "eager", "equation", "inputs": [["inputs", tensor], ...],
"expect" or "error"} or {"op": "Einsum", "kind": "shape", "equation", "inputs": [[name,
dtype, shape or null], ...], "expect_shape" or "error"}.

    .venv/bin/python tests/tf_observed/gen_ops_einsum.py > tests/tf_observed/ops_einsum.jsonl
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import tensorflow as tf
from ops_common import Recorder, values, enc, make, name_of, strip, TF

rng = np.random.default_rng(int(os.environ.get("SEED", "20261125")))
R = Recorder("ops-einsum")


def eager(eq, dtype, shapes, special=False, dtypes=None):
    dts = dtypes or [dtype] * len(shapes)
    arrs = [values(rng, d, s, special=special) for d, s in zip(dts, shapes)]
    rec = {"op": "Einsum", "kind": "eager", "equation": eq,
           "inputs": [["inputs", enc(d, a)] for d, a in zip(dts, arrs)], "attrs": {"equation": eq}}
    try:
        with tf.device("/CPU:0"):
            r = tf.raw_ops.Einsum(inputs=[make(d, a) for d, a in zip(dts, arrs)], equation=eq)
        rec["expect"] = enc(name_of(r.dtype), r.numpy())
    except tf.errors.OpError as e:
        rec["error"] = {"code": type(e).__name__, "message": strip(e.message)}
    R.emit(rec)


def shape(eq, shapes, dtype="float"):
    rec = {"op": "Einsum", "kind": "shape", "equation": eq,
           "inputs": [["inputs", dtype, s] for s in shapes], "attrs": {"equation": eq}}
    g = tf.Graph()
    with g.as_default():
        try:
            ph = [tf.compat.v1.placeholder(TF[dtype], shape=None if s is None else [None if x == -1 else x for x in s])
                  for s in shapes]
            t = tf.raw_ops.Einsum(inputs=ph, equation=eq)
            rec["expect_shape"] = None if t.shape.rank is None else [-1 if x is None else x for x in t.shape.as_list()]
        except (ValueError, tf.errors.OpError) as e:
            rec["error"] = {"message": str(e).split(" for '{{node ")[0]}
    R.emit(rec)


KERAS = [  # MultiHeadAttention (batch 2, 5 and 7 tokens, 3 heads of 4, model 6) and EinsumDense
    ("abc,cde->abde", [[2, 5, 6], [6, 3, 4]]),
    ("aecd,abcd->acbe", [[2, 7, 3, 4], [2, 5, 3, 4]]),
    ("acbe,aecd->abcd", [[2, 3, 5, 7], [2, 7, 3, 4]]),
    ("abcd,cde->abe", [[2, 5, 3, 4], [3, 4, 6]]),
    ("abc,cd->abd", [[2, 5, 6], [6, 8]]),
    ("ab,bc->ac", [[4, 6], [6, 3]]),
    ("...b,bc->...c", [[2, 3, 6], [6, 5]]),
    ("abc,cd->abd", [[1, 128, 32], [32, 32]]),
]
FORMS = [
    ("ij,jk->ik", [[3, 4], [4, 5]]),
    ("ij,kj->ik", [[3, 4], [5, 4]]),
    ("ji,jk->ik", [[4, 3], [4, 5]]),
    ("ji,kj->ik", [[4, 3], [5, 4]]),
    ("ij,jk->ki", [[3, 4], [4, 5]]),
    ("bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]),
    ("bij,bkj->bki", [[2, 3, 4], [2, 5, 4]]),
    ("...ij,...jk->...ik", [[2, 1, 3, 4], [5, 4, 2]]),
    ("...ij,jk->...ik", [[2, 3, 3, 4], [4, 2]]),
    ("ij...,jk...->ik...", [[3, 4, 2], [4, 5, 1]]),
    ("ij->ji", [[3, 4]]),
    ("abc->cab", [[2, 3, 4]]),
    ("ij->i", [[3, 4]]),
    ("ij->", [[3, 4]]),
    ("ii->i", [[4, 4]]),
    ("ii->", [[4, 4]]),
    ("iij->ji", [[3, 3, 2]]),
    ("ijij->ij", [[2, 3, 2, 3]]),
    ("i,i->", [[5], [5]]),
    ("i,j->ij", [[3], [4]]),
    ("i,i->i", [[5], [5]]),
    ("ij,ij->ij", [[3, 4], [3, 4]]),
    ("ij,ij->", [[3, 4], [3, 4]]),
    ("ij,jk->", [[3, 4], [4, 5]]),
    ("ijk,ikl->ijl", [[2, 3, 4], [2, 4, 5]]),
    ("ijk,jl->ikl", [[2, 3, 4], [3, 5]]),
    ("abcd,cd->ab", [[2, 3, 4, 5], [4, 5]]),
    ("abcd,dc->ab", [[2, 3, 4, 5], [5, 4]]),
    ("abc,d->abd", [[2, 3, 4], [5]]),
    ("abc,ab->c", [[2, 3, 4], [2, 3]]),
    ("xyab,yxbc->xyac", [[2, 3, 4, 5], [3, 2, 5, 6]]),
    ("aab,bc->ac", [[3, 3, 4], [4, 2]]),
    ("ab,bb->ab", [[2, 3], [3, 3]]),
    ("...->...", [[2, 3]]),
    ("...a->a...", [[2, 3, 4]]),
    ("a...->...", [[2, 3, 4]]),
    ("...,...->...", [[2, 3], [3]]),
    ("a...,a...->a...", [[2, 3], [2, 1, 3]]),
    ("->", [[]]),
    (",->", [[], []]),
    ("a,->a", [[3], []]),
    ("ij,jk->ik", [[0, 4], [4, 5]]),
    ("ij,jk->ik", [[3, 0], [0, 5]]),
    ("ij->", [[0, 3]]),
    ("ij->j", [[0, 3]]),
    ("ab.,bc->ac", [[2, 3], [3, 4]]),
    ("a.b,bc->a.c", [[2, 5, 3], [3, 4]]),
    ("ab,bc->ad", [[2, 3], [3, 4]]),
    ("ab,bc->aac", [[2, 3], [3, 4]]),
    ("ab->aa", [[2, 3]]),
    ("a b,bc->ac", [[2, 1, 3], [3, 4]]),
]
ERRORS = [
    ("ab,bc", [[2, 3], [3, 4]]),
    ("ab,bc>ac", [[2, 3], [3, 4]]),
    ("ab,bc->ac->", [[2, 3], [3, 4]]),
    ("ab,bc,cd->ad", [[2, 3], [3, 4], [4, 5]]),
    ("ab,bc,cd->ad", [[2, 3], [3, 4]]),
    ("ab->ab", [[2, 3], [3]]),
    ("ab,bc->ac", [[2, 3]]),
    ("ab,bc->ac", [[2, 3], [4, 4]]),
    ("ab,bc->ac", [[2, 3, 1], [3, 4]]),
    ("abc->a", [[2, 3]]),
    ("abc...->a", [[2, 3]]),
    ("aa->a", [[3, 4]]),
    ("a,a->", [[3], [4]]),
    ("ab,bc->ac", [[2, 1], [3, 4]]),
    ("ab,ab->ab", [[2, 1], [2, 4]]),
    ("ab...,bc->ac", [[2, 3, 4], [3, 4]]),
    ("...b,bc->c", [[1, 1, 3], [3, 4]]),
    ("a.b,bc->ac", [[2, 5, 3], [3, 4]]),
    ("...->", [[2, 3]]),
    ("...ab,...bc->...ac", [[5, 2, 2, 3], [4, 3, 4]]),
    ("...ba,...bc->...ac", [[5, 3, 2], [4, 3, 4]]),
    ("...ab,...cb->...ac", [[5, 2, 3], [4, 4, 3]]),
    ("x...ab,x...bc->x...ac", [[5, 6, 2, 3], [5, 7, 3, 4]]),
    ("...abcd,...cde->...abe", [[5, 2, 3, 4, 6], [7, 4, 6, 8]]),
    ("...abcd,...dce->...abe", [[5, 2, 3, 4, 6], [7, 6, 4, 8]]),
    ("...b,...bc->...c", [[5, 3], [4, 3, 4]]),
    ("...ab,...b->...a", [[5, 2, 3], [4, 3]]),
    ("...a,...->...", [[2, 3], [4]]),
]

for eq, shapes in KERAS:
    for d in ["float", "double", "half", "bfloat16"]:
        eager(eq, d, shapes)
for eq, shapes in FORMS:
    for d in ["float", "double"]:
        eager(eq, d, shapes)
for eq, shapes in FORMS[:12] + FORMS[12:40:3]:
    for d in ["half", "bfloat16", "int32", "int64", "complex64", "complex128"]:
        eager(eq, d, shapes)
for eq, shapes in ERRORS:
    for d in ["float", "double"]:
        eager(eq, d, shapes)
for eq, shapes in ERRORS[-9:]:
    for d in ["half", "bfloat16", "complex64", "int32"]:
        eager(eq, d, shapes)
eager("ij,jk->ik", "float", [[3, 4], [4, 5]], special=True)
eager("bij,bjk->bik", "double", [[2, 3, 4], [2, 4, 5]], special=True)
eager("ij->i", "float", [[3, 4]], special=True)
eager("ii->i", "float", [[4, 4]], special=True)
for d in ["int8", "uint8", "int16", "uint64", "bool", "string"]:
    eager("ij,jk->ik", d, [[2, 3], [3, 4]])
    eager("ij->ji", d, [[2, 3]])
eager("ij,jk->ik", "float", [[2, 3], [3, 4]], dtypes=["float", "double"])

for eq, shapes in KERAS + FORMS[:20]:
    shape(eq, shapes)
    shape(eq, [[-1] + s[1:] if s else s for s in shapes])
    shape(eq, [None] + shapes[1:])
for eq, shapes in ERRORS:
    shape(eq, shapes)
