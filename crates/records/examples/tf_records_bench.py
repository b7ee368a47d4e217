"""TensorFlow's side of records_bench, on the files it leaves in RECORDS_BENCH_DIR:

    RECORDS_BENCH_DIR=/tmp/rb cargo run --release -p tensorcast-records --example records_bench
    RECORDS_BENCH_DIR=/tmp/rb python3 crates/records/examples/tf_records_bench.py

Times (best of 3) tf.data.TFRecordDataset over bench.tfrecord (batched by 1024) and over
bench.tfrecord.gz, and tf.io.parse_example of the 100k Examples in examples.tfrecord batched by
1024, as the issue's table describes them.
"""
import os, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf

d = os.environ["RECORDS_BENCH_DIR"]

def best(f, runs=3):
    b = float("inf")
    for _ in range(runs):
        t = time.perf_counter(); f(); b = min(b, time.perf_counter() - t)
    return b

def read(path, comp):
    n = 0
    for batch in tf.data.TFRecordDataset(path, compression_type=comp).batch(1024):
        n += int(batch.shape[0])
    return n

for name, comp in [("bench.tfrecord", ""), ("bench.tfrecord.gz", "GZIP")]:
    p = os.path.join(d, name)
    if not os.path.exists(p):
        continue
    size = os.path.getsize(p)
    t = best(lambda: read(p, comp))
    print(f"tf.data.TFRecordDataset {name} batched by 1024: {t*1e3:8.1f} ms  {size/t/1e9:6.2f} GB/s of file")

ex = [r.numpy() for r in tf.data.TFRecordDataset(os.path.join(d, "examples.tfrecord"))]
spec = {"x": tf.io.FixedLenFeature([128], tf.float32), "label": tf.io.FixedLenFeature([], tf.int64),
        "tags": tf.io.VarLenFeature(tf.string)}
batches = [tf.constant(ex[i:i + 1024]) for i in range(0, len(ex), 1024)]
def parse():
    for b in batches:
        tf.io.parse_example(b, spec)
t = best(parse)
print(f"tf.io.parse_example {len(ex)} Examples batched by 1024: {t*1e3:8.1f} ms  {len(ex)/t/1e6:6.2f} M examples/s")
