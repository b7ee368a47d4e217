"""Builds small Keras models of the architectures real TensorFlow users run, freezes each
(tf.function -> convert_variables_to_constants_v2 -> GraphDef, as TensorFlow 2 exports frozen
graphs), saves each as a SavedModel too, and records inputs and TensorFlow 2.21's outputs, for
tests/real_models.rs (tensorcast runs each and must match within the per-op bounds).

    TF_CPP_MIN_LOG_LEVEL=3 .venv/bin/python tests/models/gen_models.py OUT_DIR

Weights are random with a fixed seed (no downloads); OUT_DIR gets, per model: NAME.pb,
NAME_saved_model/, NAME.npz (inputs `in.<name>` and TensorFlow's outputs `out.<name>`) and a
line in manifest.json. scripts/test.sh runs this into target/tf_models before the tests.
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

keras = tf.keras
layers = keras.layers


def mlp():
    inp = keras.Input([32], name="x")
    h = layers.Dense(64, activation="relu")(inp)
    h = layers.Dense(64, activation="tanh")(h)
    out = layers.Dense(10, activation="softmax")(h)
    return keras.Model(inp, out), [("x", [4, 32])]


def cnn_bn():
    inp = keras.Input([28, 28, 3], name="x")
    h = layers.Conv2D(16, 3, padding="same")(inp)
    h = layers.BatchNormalization()(h)
    h = layers.ReLU()(h)
    h = layers.MaxPooling2D(2)(h)
    h = layers.Conv2D(32, 3, strides=2, padding="valid", activation="relu")(h)
    h = layers.AveragePooling2D(2)(h)
    h = layers.Flatten()(h)
    out = layers.Dense(5)(h)
    return keras.Model(inp, out), [("x", [2, 28, 28, 3])]


def separable():
    inp = keras.Input([32, 32, 8], name="x")
    h = layers.DepthwiseConv2D(3, padding="same", activation="relu6")(inp)
    h = layers.Conv2D(16, 1, activation="relu")(h)
    h = layers.DepthwiseConv2D(3, strides=2, padding="same")(h)
    h = layers.GlobalAveragePooling2D()(h)
    out = layers.Dense(4, activation="sigmoid")(h)
    return keras.Model(inp, out), [("x", [2, 32, 32, 8])]


def transformer(tokens=16):
    inp = keras.Input([tokens, 32], name="x")
    a = layers.MultiHeadAttention(num_heads=4, key_dim=8)(inp, inp)
    h = layers.LayerNormalization()(inp + a)
    f = layers.Dense(64, activation="gelu")(h)
    f = layers.Dense(32)(f)
    out = layers.LayerNormalization()(h + f)
    return keras.Model(inp, out), [("x", [2, tokens, 32])]


def mobilenet():
    m = keras.applications.MobileNetV3Small(
        input_shape=(96, 96, 3), weights=None, classes=10, include_preprocessing=True)
    return m, [("x", [1, 96, 96, 3])]


def lstm():
    # Token ids -> Embedding -> LSTM -> Dense. The frozen graph's freezing lowers the LSTM's
    # `While` into TF1 control flow (Enter/Merge/Switch/NextIteration/Exit/LoopCond); the
    # SavedModel keeps the `While`, its functions and TensorLists.
    inp = keras.Input([7], dtype="int32", name="x")
    h = layers.Embedding(50, 8)(inp)
    h = layers.LSTM(6)(h)
    out = layers.Dense(3)(h)
    return keras.Model(inp, out), [("x", [2, 7], "int32")]


MODELS = {"mlp": mlp, "cnn_bn": cnn_bn, "separable": separable, "transformer": transformer,
          "mobilenet_v3_small": mobilenet, "embedding_lstm": lstm}


def freeze(model, specs):
    """The model's inference function on `specs`, frozen as TensorFlow 2 freezes it: the
    concrete function with its variables turned into constants, and its GraphDef."""
    fn = tf.function(lambda *xs: model(list(xs) if len(xs) > 1 else xs[0], training=False))
    frozen = convert_variables_to_constants_v2(fn.get_concrete_function(*specs))
    return frozen, frozen.graph.as_graph_def()


def main():
    out_dir = sys.argv[1]
    only = sys.argv[2:]
    os.makedirs(out_dir, exist_ok=True)
    manifest = []
    for name, build in MODELS.items():
        if only and name not in only:
            continue
        keras.utils.set_random_seed(7)
        model, inputs = build()
        # BatchNormalization's moving statistics: move them off 0/1 so inference uses them.
        for v in model.weights:
            if "moving_mean" in v.name:
                v.assign(np.random.uniform(-0.5, 0.5, v.shape).astype(np.float32))
            if "moving_variance" in v.name:
                v.assign(np.random.uniform(0.5, 2.0, v.shape).astype(np.float32))
        # Inputs: (name, shape) float32, or (name, shape, dtype).
        inputs = [(i[0], i[1], i[2] if len(i) > 2 else "float32") for i in inputs]
        specs = [tf.TensorSpec([None] + shape[1:], dt, name=n) for n, shape, dt in inputs]
        frozen, gd = freeze(model, specs)
        with open(os.path.join(out_dir, name + ".pb"), "wb") as f:
            f.write(gd.SerializeToString())
        rng = np.random.default_rng(11)
        feeds = {n: (rng.standard_normal(shape).astype(np.float32) if dt == "float32"
                     else rng.integers(0, 50, shape).astype(dt)) for n, shape, dt in inputs}
        outs = frozen(*[tf.constant(feeds[n]) for n, _, _ in inputs])
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        arrays = {f"in.{n}": v for n, v in feeds.items()}
        out_names = [t.name for t in frozen.outputs]
        for t, v in zip(out_names, outs):
            arrays["out." + t.replace(":", "_")] = v.numpy()
        np.savez(os.path.join(out_dir, name + ".npz"), **arrays)
        sm_dir = os.path.join(out_dir, name + "_saved_model")
        # Keras 3's serving export (what TF Serving loads): `tf.saved_model.save` of a Keras 3
        # model captures its variables through handles the restore op does not assign, so
        # TensorFlow's own session loader cannot run it either.
        model.export(sm_dir, format="tf_saved_model", input_signature=specs, verbose=False)
        ops = sorted({n.op for n in gd.node})
        manifest.append({
            "name": name,
            "inputs": [{"name": f"{n}:0", "member": f"in.{n}"} for n, _, _ in inputs],
            "outputs": [{"name": t, "member": "out." + t.replace(":", "_")} for t in out_names],
            "saved_model_inputs": [n for n, _, _ in inputs],
            "ops": ops,
            "nodes": len(gd.node),
        })
        print(f"{name}: {len(gd.node)} nodes, ops {ops}")
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
