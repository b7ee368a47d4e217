"""The peers' side of records_bench, on the files it leaves in RECORDS_BENCH_DIR (records_bench
runs this script itself; by hand:

    RECORDS_BENCH_DIR=/tmp/rb cargo run --release -p tensorcast-records --example records_bench
    RECORDS_BENCH_DIR=/tmp/rb python3 crates/records/examples/tf_records_bench.py tf
    RECORDS_BENCH_DIR=/tmp/rb python3 crates/records/examples/tf_records_bench.py pypi

`tf` times (best of 3) tf.data.TFRecordDataset over bench.tfrecord (batched by 1024) and over
bench.tfrecord.gz; tf.io.parse_example of the 100k Examples in examples.tfrecord batched by
1024 (from memory); tf.data + parse_example from the file; and pyarrow building the same
table as tensorcast's Parquet output from tf.io.parse_example's output, written with
pyarrow.parquet (Snappy, its default). `pypi` times the `tfrecord` PyPI reader (a process of
its own: it and TensorFlow both register tensorflow.BytesList): raw records of bench.tfrecord
and bench.tfrecord.gz (it checks no checksum), and its loader parsing examples.tfrecord.
Each figure is also printed as `RESULT key seconds` for records_bench's table.
"""
import os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

d = os.environ["RECORDS_BENCH_DIR"]
mode = sys.argv[1] if len(sys.argv) > 1 else "tf"


def best(f, runs=3):
    b = float("inf")
    for _ in range(runs):
        t = time.perf_counter(); f(); b = min(b, time.perf_counter() - t)
    return b


def result(key, seconds, line):
    print(line)
    print(f"RESULT {key} {seconds:.6f}")


files = [("bench.tfrecord", "", "read"), ("bench.tfrecord.gz", "GZIP", "gzip")]
examples_path = os.path.join(d, "examples.tfrecord")

if mode == "pypi":
    from tfrecord.reader import tfrecord_iterator, tfrecord_loader

    for name, comp, key in files:
        p = os.path.join(d, name)
        if not os.path.exists(p):
            continue
        size = os.path.getsize(p)

        def raw():
            n = 0
            for r in tfrecord_iterator(p, compression_type="gzip" if comp else None):
                n += len(r)
            return n
        t = best(raw)
        result(f"pypi_{key}", t, f"tfrecord (PyPI) records of {name}: {t*1e3:8.1f} ms  {size/t/1e9:6.2f} GB/s of file")
    desc = {"x": "float", "label": "int", "tags": "byte"}

    def load():
        n = 0
        for _ in tfrecord_loader(examples_path, None, desc):
            n += 1
        assert n == 100_000, n
    t = best(load)
    result("pypi_parse", t, f"tfrecord (PyPI) loader, 100k Examples read + parsed: {t*1e3:8.1f} ms  {1e5/t/1e6:6.3f} M examples/s")
    sys.exit(0)

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import tensorflow as tf


def read(path, comp):
    n = 0
    for batch in tf.data.TFRecordDataset(path, compression_type=comp).batch(1024):
        n += int(batch.shape[0])
    return n


for name, comp, key in files:
    p = os.path.join(d, name)
    if not os.path.exists(p):
        continue
    size = os.path.getsize(p)
    t = best(lambda: read(p, comp))
    result(f"tfdata_{key}", t, f"tf.data.TFRecordDataset {name} batched by 1024: {t*1e3:8.1f} ms  {size/t/1e9:6.2f} GB/s of file")

ex = [r.numpy() for r in tf.data.TFRecordDataset(examples_path)]
spec = {"x": tf.io.FixedLenFeature([128], tf.float32), "label": tf.io.FixedLenFeature([], tf.int64),
        "tags": tf.io.VarLenFeature(tf.string)}
batches = [tf.constant(ex[i:i + 1024]) for i in range(0, len(ex), 1024)]


def parse():
    for b in batches:
        tf.io.parse_example(b, spec)
t = best(parse)
result("tf_parse", t, f"tf.io.parse_example {len(ex)} Examples batched by 1024: {t*1e3:8.1f} ms  {len(ex)/t/1e6:6.2f} M examples/s")


def read_parse():
    n = 0
    ds = tf.data.TFRecordDataset(examples_path).batch(1024).map(lambda b: tf.io.parse_example(b, spec))
    for out in ds:
        n += int(out["label"].shape[0])
    assert n == len(ex), n
t = best(read_parse)
result("tfdata_read_parse", t, f"tf.data + parse_example from the file, batched by 1024: {t*1e3:8.1f} ms  {len(ex)/t/1e6:6.2f} M examples/s")

out_path = os.path.join(d, "examples_pyarrow.parquet")


def to_parquet():
    tables = []
    for b in batches:
        o = tf.io.parse_example(b, spec)
        x = o["x"].numpy()
        label = o["label"].numpy()
        tags = o["tags"]
        rows = tags.indices.numpy()[:, 0]
        counts = np.bincount(rows, minlength=x.shape[0])
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        values = pa.array(tags.values.numpy().tolist(), pa.binary())
        tables.append(pa.table({
            "x": pa.FixedShapeTensorArray.from_numpy_ndarray(x),
            "label": pa.array(label),
            "tags": pa.ListArray.from_arrays(pa.array(offsets), values),
        }))
    pq.write_table(pa.concat_tables(tables), out_path)
t = best(to_parquet)
result("pyarrow_parquet", t, f"tf.io.parse_example + pyarrow table + pyarrow.parquet: {t*1e3:8.1f} ms  {len(ex)/t/1e6:6.2f} M examples/s")
