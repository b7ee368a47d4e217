"""Writes the frozen graphs of the model speed table (issue 18, section 4) with a fixed batch,
so that tensorcast, TensorFlow's `Session.run` and tract time the very same GraphDef:

    TF_CPP_MIN_LOG_LEVEL=3 .venv/bin/python tests/models/gen_bench_models.py OUT_DIR

The models are gen_models.py's (same builders, same seed, random weights, no downloads):
MobileNetV3Small 96x96 at batch 1 and 32, the depthwise-separable CNN at batch 1 (a CNN tract
accepts: it refuses MobileNetV3Small's `Pad`), the Transformer encoder block with 128 tokens at
batch 1 and 8; plus `chain_100`, a 100-node graph of small ops (AddV2, Mul, Maximum, Tanh in
turn on a float [4]) for the per-node overhead. OUT_DIR gets NAME.pb, NAME.x.npy (the input)
and bench.json (per graph: file, input name and shape, output name, node count), which
scripts/model_bench.py reads.
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_models  # noqa: E402

BENCH = [
    ("mobilenet_v3_small_b1", gen_models.mobilenet, {}, [1, 96, 96, 3]),
    ("mobilenet_v3_small_b32", gen_models.mobilenet, {}, [32, 96, 96, 3]),
    ("separable_b1", gen_models.separable, {}, [1, 32, 32, 8]),
    ("transformer_t128_b1", gen_models.transformer, {"tokens": 128}, [1, 128, 32]),
    ("transformer_t128_b8", gen_models.transformer, {"tokens": 128}, [8, 128, 32]),
]


def chain_100():
    """100 small element-wise nodes after the placeholder, each on the previous one's output."""
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [4], name="x")
        h = x
        for i in range(100):
            c = tf.constant(np.full([4], 0.5 + i / 1000, np.float32))
            kind = i % 4
            if kind == 0:
                h = tf.raw_ops.AddV2(x=h, y=c)
            elif kind == 1:
                h = tf.raw_ops.Mul(x=h, y=c)
            elif kind == 2:
                h = tf.raw_ops.Maximum(x=h, y=c)
            else:
                h = tf.raw_ops.Tanh(x=h)
        tf.identity(h, name="y")
    return g.as_graph_def(), "x", "y:0"


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(11)
    table = []
    for name, build, kwargs, shape in BENCH:
        tf.keras.utils.set_random_seed(7)
        model, _ = build(**kwargs)
        frozen, gd = gen_models.freeze(model, [tf.TensorSpec(shape, tf.float32, name="x")])
        with open(os.path.join(out_dir, name + ".pb"), "wb") as f:
            f.write(gd.SerializeToString())
        np.save(os.path.join(out_dir, name + ".x.npy"), rng.standard_normal(shape).astype(np.float32))
        table.append({"name": name, "file": name + ".pb", "input": "x", "shape": shape,
                      "output": frozen.outputs[0].name, "nodes": len(gd.node)})
        print(f"{name}: {len(gd.node)} nodes, output {frozen.outputs[0].name}")
    gd, inp, out = chain_100()
    with open(os.path.join(out_dir, "chain_100.pb"), "wb") as f:
        f.write(gd.SerializeToString())
    np.save(os.path.join(out_dir, "chain_100.x.npy"), rng.standard_normal([4]).astype(np.float32))
    table.append({"name": "chain_100", "file": "chain_100.pb", "input": inp, "shape": [4],
                  "output": out, "nodes": len(gd.node)})
    with open(os.path.join(out_dir, "bench.json"), "w") as f:
        json.dump(table, f, indent=1)


if __name__ == "__main__":
    main()
