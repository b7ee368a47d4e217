"""Times TensorFlow's own kernels on the bench report's workloads, on this machine, so that
tensorcast's numbers can be compared with TensorFlow's measured in the same session.

    python3 scripts/tf_bench.py            # prints one JSON object like the bench report
    python3 scripts/tf_bench.py --math     # only the reductions and unary functions

The element-wise workloads also time numpy (`np_*`) on the same shapes, and numpy's own copy
of the same bytes (`np_memcpy_*`), so that every figure can be read as a ratio.

Each workload runs 7 times after a warm-up; the median is reported (eager ops, CPU).
"""
import json, os, statistics, sys, time
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
if "--math" in sys.argv:
    # Reductions and unary functions (benches/src/math.rs): a 64 MiB f32 tensor [4096, 4096],
    # Sum/Mean over all axes, along rows (axis 1) and along columns (axis 0); Exp, Tanh,
    # Sigmoid element by element. numpy's copy of the same bytes is the baseline.
    m = np.random.default_rng(5).standard_normal((4096, 4096)).astype(np.float32)
    tm = tf.constant(m)
    MiB64 = 64 << 20
    res["np_memcpy_64MiB"] = {"seconds": median_time(lambda: m.copy()), "bytes": MiB64}
    for op, fn in [("sum", tf.raw_ops.Sum), ("mean", tf.raw_ops.Mean)]:
        for where, axes in [("all", [0, 1]), ("rows", [1]), ("cols", [0])]:
            ax = tf.constant(axes, tf.int32)
            res[f"tf_{op}_{where}_64MiB"] = {"seconds": median_time(lambda: fn(input=tm, axis=ax, keep_dims=False)), "bytes": MiB64}
    for op, fn in [("exp", tf.raw_ops.Exp), ("tanh", tf.raw_ops.Tanh), ("sigmoid", tf.raw_ops.Sigmoid)]:
        res[f"tf_{op}_64MiB"] = {"seconds": median_time(lambda: fn(x=tm)), "bytes": MiB64}
    print(json.dumps(res))
    sys.exit(0)
# The linear-algebra and convolution workloads of the report (benches/src/linalg.rs), same
# shapes: MatMul f32 1024^3, Conv2D 3x3 SAME 8x56x56x64 -> 64, depthwise 3x3, MaxPool 3x3/2.
# `--ops`: only these.
if "--elementwise" not in sys.argv:
    rng = np.random.default_rng(4)
    ma = tf.constant(rng.standard_normal((1024, 1024)).astype(np.float32))
    mb = tf.constant(rng.standard_normal((1024, 1024)).astype(np.float32))
    res["tf_matmul_f32_1024"] = {"seconds": median_time(lambda: tf.linalg.matmul(ma, mb)), "bytes": 4 << 20}
    cx = tf.constant(rng.standard_normal((8, 56, 56, 64)).astype(np.float32))
    cw = tf.constant(rng.standard_normal((3, 3, 64, 64)).astype(np.float32))
    dw = tf.constant(rng.standard_normal((3, 3, 64, 1)).astype(np.float32))
    out = 8 * 56 * 56 * 64 * 4
    res["tf_conv2d_f32_8x56x56x64_3x3"] = {"seconds": median_time(lambda: tf.raw_ops.Conv2D(input=cx, filter=cw, strides=[1, 1, 1, 1], padding="SAME")), "bytes": out}
    res["tf_depthwise_f32_8x56x56x64_3x3"] = {"seconds": median_time(lambda: tf.raw_ops.DepthwiseConv2dNative(input=cx, filter=dw, strides=[1, 1, 1, 1], padding="SAME")), "bytes": out}
    res["tf_maxpool_f32_8x56x56x64_3x3s2"] = {"seconds": median_time(lambda: tf.raw_ops.MaxPool(input=cx, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME")), "bytes": out // 4}
    # MobileNetV3Small's first convolution at batch 32 (3 colour channels: few taps) and one
    # of its 1x1 expansions.
    sx = tf.constant(rng.standard_normal((32, 96, 96, 3)).astype(np.float32))
    sw = tf.constant(rng.standard_normal((3, 3, 3, 16)).astype(np.float32))
    res["tf_conv2d_f32_32x96x96x3_3x3s2"] = {"seconds": median_time(lambda: tf.raw_ops.Conv2D(input=sx, filter=sw, strides=[1, 2, 2, 1], padding="SAME")), "bytes": 32 * 48 * 48 * 16 * 4}
    ex = tf.constant(rng.standard_normal((32, 24, 24, 16)).astype(np.float32))
    ew = tf.constant(rng.standard_normal((1, 1, 16, 72)).astype(np.float32))
    res["tf_conv2d_f32_32x24x24x16_1x1"] = {"seconds": median_time(lambda: tf.raw_ops.Conv2D(input=ex, filter=ew, strides=[1, 1, 1, 1], padding="SAME")), "bytes": 32 * 24 * 24 * 72 * 4}
    if "--ops" in sys.argv:
        print(json.dumps(res))
        sys.exit(0)
if "--elementwise" not in sys.argv:  # --elementwise: only the element-wise workloads
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

# Element-wise workloads (the bench report's equal_*/add_*/mul_* ones), TensorFlow's eager
# tf.raw_ops and numpy on the same shapes. "bytes" is the largest operand's, as in the report.
big = np.random.default_rng(1).standard_normal((4096, 16384)).astype(np.float32)
big2 = np.random.default_rng(2).standard_normal((4096, 16384)).astype(np.float32)
rown = big[:1].copy()
coln = np.random.default_rng(3).standard_normal((4096, 1)).astype(np.float32)
tb, tb2, trow, tcol = tf.constant(big), tf.constant(big2), tf.constant(rown), tf.constant(coln)
MiB256, MiB128 = 256 << 20, 128 << 20
res["tf_equal_row_256MiB"] = {"seconds": median_time(lambda: tf.raw_ops.Equal(x=tb, y=trow)), "bytes": MiB256}
res["tf_add_row_256MiB"] = {"seconds": median_time(lambda: tf.raw_ops.AddV2(x=tb, y=trow)), "bytes": MiB256}
res["tf_add_col_256MiB"] = {"seconds": median_time(lambda: tf.raw_ops.AddV2(x=tb, y=tcol)), "bytes": MiB256}
res["tf_add_same_256MiB"] = {"seconds": median_time(lambda: tf.raw_ops.AddV2(x=tb, y=tb2)), "bytes": MiB256}
res["np_equal_row_256MiB"] = {"seconds": median_time(lambda: np.equal(big, rown)), "bytes": MiB256}
res["np_add_row_256MiB"] = {"seconds": median_time(lambda: np.add(big, rown)), "bytes": MiB256}
res["np_add_col_256MiB"] = {"seconds": median_time(lambda: np.add(big, coln)), "bytes": MiB256}
res["np_add_same_256MiB"] = {"seconds": median_time(lambda: np.add(big, big2)), "bytes": MiB256}
res["np_memcpy_256MiB"] = {"seconds": median_time(lambda: big.copy()), "bytes": MiB256}
del tb, tb2, big2
try:
    import ml_dtypes
    bf = (np.arange(64 << 20) % 1000 - 500).astype(np.float32).astype(ml_dtypes.bfloat16)
    s = np.array(1.5, dtype=ml_dtypes.bfloat16)
    res["np_mul_bf16_scalar_128MiB"] = {"seconds": median_time(lambda: np.multiply(bf, s)), "bytes": MiB128}
    tbf = tf.constant(bf)
    res["tf_mul_bf16_scalar_128MiB"] = {"seconds": median_time(lambda: tf.raw_ops.Mul(x=tbf, y=tf.constant(1.5, tf.bfloat16))), "bytes": MiB128}
    res["np_memcpy_128MiB"] = {"seconds": median_time(lambda: bf.copy()), "bytes": MiB128}
except ImportError:
    pass
a3, b3 = np.array([1, 2, 3], np.float32), np.array([0.5, 0.25, 0.125], np.float32)
ta3, tb3 = tf.constant(a3), tf.constant(b3)
def per_call(fn, iters=20000):
    def batch():
        for _ in range(iters):
            fn()
    return median_time(batch) / iters
res["np_add_f32_3"] = {"seconds": per_call(lambda: np.add(a3, b3)), "bytes": 12}
res["tf_add_f32_3"] = {"seconds": per_call(lambda: tf.raw_ops.AddV2(x=ta3, y=tb3), 2000), "bytes": 12}
if "--elementwise" not in sys.argv:
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
    for file, fetch, key in [("graph_chain_100.pb", "chain_99:0", "tf_graph_chain_100_small"),
                             ("graph_chain_100_identity.pb", "id_99:0", "tf_graph_chain_100_identity")]:
        g = load_graph(file)
        with tf.compat.v1.Session(graph=g) as s:
            xv = np.array([1, 2, 3, 4], dtype=np.float32)
            def chain():
                for _ in range(200):
                    s.run(fetch, {"x:0": xv})
            samples = []
            chain()
            for _ in range(7):
                t = time.perf_counter(); chain(); samples.append((time.perf_counter() - t) / 200)
            res[key] = {"seconds": statistics.median(samples), "bytes": 16}
print(json.dumps(res))
