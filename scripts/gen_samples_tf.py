"""Writes the samples/ files that only TensorFlow can make (the others come from
`cargo run --example write_samples -p tensorcast-graph` and the io crate's tests):

    /work/main/.venv/bin/python scripts/gen_samples_tf.py    # any Python with tensorflow 2.21

- samples/tf2_ckpt-1.index + samples/tf2_ckpt-1.data-00000-of-00001: a TF2 object-based
  checkpoint of a small Keras model (Dense 4->3, Dense 3->2) after one Adam step, written by
  `tf.train.Checkpoint(model=..., optimizer=...).write`: variables by object path, Adam's
  slots, `optimizer/iter` (Keras 3: `_iterations`) and `save_counter` - what `tensorcast
  inspect` and `convert` show and leave out. A few KB; deterministic (fixed seeds).
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
