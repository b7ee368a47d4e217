"""Times TensorFlow's own kernels on the bench report's workloads, on this machine, so that
tensorcast's numbers can be compared with TensorFlow's measured in the same session.

    python3 scripts/tf_bench.py            # prints one JSON object like the bench report

Each workload runs 7 times after a warm-up; the median is reported (eager ops, CPU).
"""
import json, os, statistics, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

def median_time(fn, runs=7):
    fn()
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        # Eager ops run synchronously on CPU; touch the result so nothing is deferred.
        if hasattr(out, "shape"):
            _ = out.shape
        samples.append(time.perf_counter() - t)
        del out
    return statistics.median(samples)

res = {}
n = 64 << 20
x = tf.constant(np.arange(n, dtype=np.float32))
res["tf_identity_copy_256MiB"] = {"seconds": median_time(lambda: tf.identity(x + 0.0)), "bytes": 256 << 20}
row = tf.constant(np.arange(16384, dtype=np.float32).reshape(1, 16384) + 1)
col = tf.constant(np.arange(4096, dtype=np.float32).reshape(4096, 1) + 1)
shape = tf.constant([4096, 16384], tf.int32)
res["tf_broadcast_row_256MiB"] = {"seconds": median_time(lambda: tf.raw_ops.BroadcastTo(input=row, shape=shape)), "bytes": 256 << 20}
res["tf_broadcast_col_256MiB"] = {"seconds": median_time(lambda: tf.raw_ops.BroadcastTo(input=col, shape=shape)), "bytes": 256 << 20}
xs = tf.constant(np.random.default_rng(0).standard_normal(n).astype(np.float32))
for dst, name in [(tf.bfloat16, "bf16"), (tf.float16, "f16"), (tf.int32, "i32")]:
    size = 2 if name != "i32" else 4
    res[f"tf_cast_f32_{name}_64M"] = {"seconds": median_time(lambda: tf.cast(xs, dst)), "bytes": n * size}
ser = tf.io.serialize_tensor(x)
res["tf_serialize_256MiB"] = {"seconds": median_time(lambda: tf.io.serialize_tensor(x)), "bytes": 256 << 20}
res["tf_parse_256MiB"] = {"seconds": median_time(lambda: tf.io.parse_tensor(ser, tf.float32)), "bytes": 256 << 20}
res["tf_bitcast_f32_u8_256MiB"] = {"seconds": median_time(lambda: tf.bitcast(x, tf.uint8)), "bytes": 256 << 20}
print(json.dumps(res))
