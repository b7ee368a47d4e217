"""Records SavedModels that TensorFlow 2.21 writes and what their signatures return, for the
conformance runner (tests/ops/saved_model_run.rs): each model is written under
saved_models/<name>/ (committed: a few KB each) and each record gives a signature's inputs and
TensorFlow's outputs.

    TF_CPP_MIN_LOG_LEVEL=3 .venv/bin/python tests/tf_observed/gen_saved_model_run.py

The models use only ops tensorcast runs (variables, Mul, AddV2, Maximum, Equal, Cast,
Identity, nested function calls); Keras models with the inference op set are recorded by the
real-model generator.
"""
import json
import os
import shutil

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "saved_models")


def tensor_record(a):
    a = np.asarray(a)
    return {"dtype": tf.as_dtype(a.dtype).name, "shape": list(a.shape), "hex": a.tobytes().hex()}


class Affine(tf.Module):
    def __init__(self):
        self.w = tf.Variable([2.0, -3.0], name="w")
        self.b = tf.Variable([0.5, 0.25], name="b")

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32, name="x")])
    def __call__(self, x):
        return {"y": x * self.w + self.b}


class TwoOutputs(tf.Module):
    def __init__(self):
        self.v = tf.Variable([[1, 5, -2]], dtype=tf.int32, name="v")

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.int32, name="a"),
                                  tf.TensorSpec([], tf.int32, name="s")])
    def __call__(self, a, s):
        m = tf.maximum(a, self.v)
        return {"max": m, "eq": tf.equal(m, a), "scaled": tf.cast(m * s, tf.float32)}


class Nested(tf.Module):
    def __init__(self):
        self.k = tf.Variable(3.0, name="k")

    @tf.function
    def inner(self, x):
        return x * self.k

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="x")])
    def __call__(self, x):
        return {"out": self.inner(self.inner(x)) + 1.0}


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    records = []
    cases = [
        ("affine", Affine(), [{"x": np.array([[1, 2], [3, 4], [-1, 0.5]], np.float32)}]),
        ("two_outputs", TwoOutputs(), [{"a": np.array([[0, 9, -3], [1, 1, 1]], np.int32),
                                        "s": np.array(2, np.int32)}]),
        ("nested", Nested(), [{"x": np.array([1.0, -2.0, 0.5], np.float32)},
                              {"x": np.zeros([0], np.float32)}]),
    ]
    for name, module, inputs_list in cases:
        path = os.path.join(OUT, name)
        tf.saved_model.save(module, path, signatures=module.__call__)
        loaded = tf.saved_model.load(path)
        fn = loaded.signatures["serving_default"]
        for inputs in inputs_list:
            out = fn(**{k: tf.constant(v) for k, v in inputs.items()})
            records.append({
                "model": name,
                "signature": "serving_default",
                "inputs": {k: tensor_record(v) for k, v in inputs.items()},
                "outputs": {k: tensor_record(v.numpy()) for k, v in sorted(out.items())},
            })
    with open(os.path.join(HERE, "saved_model_run.jsonl"), "w") as f:
        for r in records:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    print(f"wrote {len(records)} records")


if __name__ == "__main__":
    main()
