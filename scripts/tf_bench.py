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

# Graph workloads: TensorFlow runs the GraphDefs tensorcast wrote (samples/, written by
# `cargo run -p tensorcast-graph --example write_samples`) in a tf.compat.v1.Session, which
# runs Grappler and its default executor (the broadcast is materialised).
here = os.path.dirname(os.path.abspath(__file__))
def load_graph(name):
    gd = tf.compat.v1.GraphDef.FromString(open(os.path.join(here, "..", "samples", name), "rb").read())
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    return g
g = load_graph("graph_equal_broadcast_256MiB.pb")
a = np.asarray(row.numpy(), dtype=np.float32)
b = np.random.default_rng(1).standard_normal((4096, 16384)).astype(np.float32)
with tf.compat.v1.Session(graph=g) as s:
    res["tf_graph_equal_broadcast_256MiB"] = {"seconds": median_time(lambda: s.run("eq:0", {"a:0": a, "b:0": b})), "bytes": 256 << 20}
ta, tb = tf.constant(a), tf.constant(b)
res["tf_eager_equal_row_256MiB"] = {"seconds": median_time(lambda: tf.raw_ops.Equal(x=ta, y=tb)), "bytes": 256 << 20}
g = load_graph("graph_chain_100.pb")
with tf.compat.v1.Session(graph=g) as s:
    xv = np.array([1, 2, 3, 4], dtype=np.float32)
    def chain():
        t = time.perf_counter()
        for _ in range(200):
            s.run("chain_99:0", {"x:0": xv})
        return None
    samples = []
    chain()
    for _ in range(7):
        t = time.perf_counter(); chain(); samples.append((time.perf_counter() - t) / 200)
    res["tf_graph_chain_100_small"] = {"seconds": statistics.median(samples), "bytes": 16}
print(json.dumps(res))
