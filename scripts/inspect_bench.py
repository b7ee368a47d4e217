"""`tensorcast inspect` of a large TFRecord file of `serialize_tensor` records, next to reading
the same bytes (issue 37, finding 22: summarise within 1.25x of reading them). Run from the
source tree's root with the project's venv, after `cargo build --release -p tensorcast-cli`:

    python scripts/inspect_bench.py [--dir /tmp] [--records 262144] [--runs 3]

TensorFlow writes the file once (`tf.io.TFRecordWriter` of `tf.io.serialize_tensor` of float32
vectors of 1,000 values: about 4 KiB a record, 1 GiB for 262,144), kept in --dir between runs.
Then, each best of --runs with the file in the page cache:
- `cat FILE > /dev/null` and `cp FILE` (the machine's limit for reading the bytes);
- `tensorcast inspect FILE` (the summary: records grouped by dtype and shape, statistics over
  all values), its output line count, and `--records -1` (every record listed) for contrast;
- `tf.data.TFRecordDataset` iterating the records (TensorFlow reading the same framing).
Prints one JSON object (seconds) and the ratio of inspect to cat.
"""
import argparse, json, os, shutil, subprocess, sys, time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

ap = argparse.ArgumentParser()
ap.add_argument("--dir", default="/tmp")
ap.add_argument("--records", type=int, default=262144)
ap.add_argument("--runs", type=int, default=3)
args = ap.parse_args()
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tc = os.path.join(root, "target", "release", "tensorcast")
path = os.path.join(args.dir, f"inspect_bench_{args.records}.tfrecord")

import tensorflow as tf  # noqa: E402

if not os.path.exists(path):
    t0 = time.perf_counter()
    tmp = path + ".partial"
    with tf.io.TFRecordWriter(tmp) as w:
        base = tf.range(1000, dtype=tf.float32)
        for i in range(args.records):
            w.write(tf.io.serialize_tensor(base + float(i)).numpy())
    os.replace(tmp, path)
    print(f"wrote {path} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
size = os.path.getsize(path)


def best(fn):
    times = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def run(cmd, stdout=subprocess.DEVNULL):
    subprocess.run(cmd, check=True, stdout=stdout)


out = {"file_bytes": size, "records": args.records}
run(["cat", path])  # into the page cache
out["cat_s"] = best(lambda: run(["cat", path]))
copy = path + ".copy"
out["cp_s"] = best(lambda: run(["cp", path, copy]))
os.remove(copy)
out["inspect_s"] = best(lambda: run([tc, "inspect", path]))
lines = subprocess.run([tc, "inspect", path], check=True, capture_output=True).stdout
out["inspect_lines"] = lines.count(b"\n")
out["inspect_all_records_s"] = best(lambda: run([tc, "inspect", path, "--records", "-1"]))


def tf_read():
    n = 0
    for _ in tf.data.TFRecordDataset(path):
        n += 1
    assert n == args.records


out["tf_record_dataset_s"] = best(tf_read)
out["inspect_over_cat"] = out["inspect_s"] / out["cat_s"]
print(json.dumps(out, indent=1))
print(
    f"inspect {out['inspect_s']:.3f} s ({out['inspect_lines']} lines), cat {out['cat_s']:.3f} s, "
    f"cp {out['cp_s']:.3f} s, TFRecordDataset {out['tf_record_dataset_s']:.3f} s: "
    f"inspect / cat = {out['inspect_over_cat']:.2f}x"
)
