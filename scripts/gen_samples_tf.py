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

# --- TFRecord and event-file samples (issue 21) ---------------------------------------------
# - samples/examples.tfrecord: 8 tf.train.Examples (x: 4 floats, label: int64, tags: 0-3
#   strings, tok + tok_lens: a ragged int64 feature and its row lengths), uncompressed; parse
#   it with samples/examples_spec.json.
# - samples/tensors.tfrecord.gz: 3 tf.io.serialize_tensor records (float32 [2,3], int64 [4],
#   string [2]), GZIP.
# - samples/events.out.tfevents.1700000000.sample.v2: what tf.summary writes for scalars, a
#   histogram, text and an image over 3 steps (the file renamed from TensorFlow's
#   events.out.tfevents.<time>.<host>.<pid>.<n>.v2).
import json
import shutil
import tempfile

path = os.path.join(out, "examples.tfrecord")
with tf.io.TFRecordWriter(path) as w:
    for i in range(8):
        tags = [b"cat", b"dog", b"emu"][: i % 4]
        toks = list(range(i, i + 1 + i % 3))
        ex = tf.train.Example(
            features=tf.train.Features(
                feature={
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i + 0.25 * k for k in range(4)])),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2])),
                    "tags": tf.train.Feature(bytes_list=tf.train.BytesList(value=tags)),
                    "tok": tf.train.Feature(int64_list=tf.train.Int64List(value=toks)),
                    "tok_lens": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, len(toks) - 1])),
                }
            )
        )
        w.write(ex.SerializeToString())
spec = {
    "x": {"type": "FixedLenFeature", "shape": [4], "dtype": "float32", "default_value": None},
    "label": {"type": "FixedLenFeature", "shape": [], "dtype": "int64", "default_value": 0},
    "tags": {"type": "VarLenFeature", "dtype": "string"},
    "tok": {"type": "RaggedFeature", "dtype": "int64", "value_key": "tok",
            "partitions": [{"type": "RowLengths", "key": "tok_lens"}], "row_splits_dtype": "int32",
            "validate": False},
}
with open(os.path.join(out, "examples_spec.json"), "w") as f:
    json.dump(spec, f, indent=1)
    f.write("\n")

path = os.path.join(out, "tensors.tfrecord.gz")
with tf.io.TFRecordWriter(path, options=tf.io.TFRecordOptions(compression_type="GZIP")) as w:
    for t in [
        tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) / 4),
        tf.constant([1, -2, 3, 1 << 40], dtype=tf.int64),
        tf.constant([b"hello", b"world"]),
    ]:
        w.write(tf.io.serialize_tensor(t).numpy())

for f in os.listdir(out):
    if f.startswith("events.out.tfevents."):
        os.remove(os.path.join(out, f))
logdir = tempfile.mkdtemp()
writer = tf.summary.create_file_writer(logdir)
with writer.as_default():
    for step in range(3):
        tf.summary.scalar("loss", 1.0 / (step + 1), step=step)
        tf.summary.scalar("accuracy", 0.5 + 0.1 * step, step=step)
        tf.summary.histogram("weights", tf.constant(np.linspace(-1, 1, 16) * (step + 1), tf.float32), step=step)
        tf.summary.text("note", f"step {step}", step=step)
    img = np.zeros((1, 4, 4, 3), np.uint8)
    img[0, :, :, 0] = 255
    tf.summary.image("red", img, step=2)
writer.close()
(event,) = os.listdir(logdir)
shutil.move(os.path.join(logdir, event), os.path.join(out, "events.out.tfevents.1700000000.sample.v2"))
shutil.rmtree(logdir)
print("wrote", sorted(f for f in os.listdir(out) if "tfrecord" in f or "tfevents" in f))
