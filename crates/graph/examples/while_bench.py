"""Writes the TF1 while-loop benchmark graph and times TensorFlow's Session.run of it.

    .venv/bin/python crates/graph/examples/while_bench.py /tmp/while.pb
    cargo run --release -p tensorcast-graph --example while_bench -- /tmp/while.pb

The graph: `n` (int32 placeholder); `while i < n: i, s = i + 1, s * 0.5 + 1.0` with control flow
v1 (Enter/Merge/Switch/NextIteration/Exit/LoopCond); fetches `w/Exit:0`, `w/Exit_1:0`. Prints the
median time of a run with n = 0 and n = 1000 and the per-iteration difference.
"""
import os, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

tf.compat.v1.disable_eager_execution()
tf.compat.v1.disable_control_flow_v2()
g = tf.Graph()
with g.as_default():
    n = tf.compat.v1.placeholder(tf.int32, [], name="n")
    tf.compat.v1.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * 0.5 + 1.0),
                            [tf.constant(0, name="i"), tf.constant(0.0, name="s")], name="w")
gd = g.as_graph_def()
with open(sys.argv[1], "wb") as f:
    f.write(gd.SerializeToString(deterministic=True))
with tf.compat.v1.Session(graph=g) as s:
    fetch = ["w/Exit:0", "w/Exit_1:0"]
    def median(k, reps=50):
        s.run(fetch, {"n:0": k})
        t = []
        for _ in range(reps):
            a = time.perf_counter()
            s.run(fetch, {"n:0": k})
            t.append(time.perf_counter() - a)
        return sorted(t)[len(t) // 2]
    t0, t1 = median(0), median(1000)
    print(f"tensorflow {tf.__version__}: run n=0 {t0*1e6:.1f} us, n=1000 {t1*1e3:.3f} ms, "
          f"per iteration {(t1 - t0) / 1000 * 1e6:.2f} us")
