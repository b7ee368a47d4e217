"""Writes the samples/ files that only TensorFlow can make (the others come from
`cargo run --example write_samples -p tensorcast-graph` and the io crate's tests):

    /work/main/.venv/bin/python scripts/gen_samples_tf.py    # any Python with tensorflow 2.21

- samples/tf2_ckpt-1.index + samples/tf2_ckpt-1.data-00000-of-00001: a TF2 object-based
  checkpoint of a small Keras model (Dense 4->3, Dense 3->2) after one Adam step, written by
  `tf.train.Checkpoint(model=..., optimizer=...).write`: variables by object path, Adam's
  slots, `optimizer/iter` (Keras 3: `_iterations`) and `save_counter` - what `tensorcast
  inspect` and `convert` show and leave out. A few KB; deterministic (fixed seeds).
- samples/saved_model_affine/: a SavedModel (`tf.saved_model.save`) of a `tf.Module` with
  two variables `w` [3] and `b` [3] and one signature `serving_default(x: float32 [None, 3])
  -> y = x * w + b` (Mul and AddV2 on the variables' values, ops tensorcast's graph runs),
  with its `fingerprint.pb` and `variables/`: what `tensorcast saved-model show` prints and
  what the graph crate's signature runner runs. A few KB.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
import numpy as np
import tensorflow as tf

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples")
out = sys.argv[1] if len(sys.argv) > 1 else root

tf.keras.utils.set_random_seed(7)
model = tf.keras.Sequential(
    [tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(2)]
)
opt = tf.keras.optimizers.Adam(learning_rate=0.01)
x = np.arange(8, dtype=np.float32).reshape(2, 4) / 8
y = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - y))
grads = tape.gradient(loss, model.trainable_variables)
opt.apply_gradients(zip(grads, model.trainable_variables))

prefix = os.path.join(out, "tf2_ckpt-1")
for f in os.listdir(out):
    if f.startswith("tf2_ckpt-1."):
        os.remove(os.path.join(out, f))
ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
ckpt.write(prefix)
for name, shape in tf.train.list_variables(prefix):
    print(name, shape)


class Affine(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([1.5, -2.0, 0.25], dtype=tf.float32, name="w")
        self.b = tf.Variable([0.5, 1.0, -1.0], dtype=tf.float32, name="b")

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def serve(self, x):
        return {"y": tf.raw_ops.AddV2(x=tf.raw_ops.Mul(x=x, y=self.w), y=self.b)}


import shutil

sm_dir = os.path.join(out, "saved_model_affine")
shutil.rmtree(sm_dir, ignore_errors=True)
affine = Affine()
tf.saved_model.save(affine, sm_dir, signatures={"serving_default": affine.serve})
# Only the files tensorcast reads: no empty assets/ folder.
for extra in ["assets"]:
    p = os.path.join(sm_dir, extra)
    if os.path.isdir(p) and not os.listdir(p):
        os.rmdir(p)
loaded = tf.saved_model.load(sm_dir)
y = loaded.signatures["serving_default"](x=tf.constant([[1.0, 2.0, 3.0]]))["y"]
print("saved_model_affine serving_default([[1, 2, 3]]) =", y.numpy().tolist())
