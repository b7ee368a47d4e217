"""Checkpoint speed, tensorcast next to `cp`, memcpy and TensorFlow, measured in one run
(issue 20 part 6). Run from the source tree's root with a Python that has tensorflow and
safetensors (the project's venv), after `cargo build --release -p tensorcast-cli` and
`cargo build --release -p tensorcast-io --example checkpoint_bench`:

    python scripts/ckpt_bench.py [--dir /tmp] [--mib 1024] [--runs 3]

1. TensorFlow writes a checkpoint of 64 float32 variables (1 GiB in all) with
   `tf.train.Checkpoint.write` (timed; best of runs).
2. tensorcast reads every tensor of a checkpoint of the same shape, CRC verified, next to
   memcpy of the same bytes, and writes one (`checkpoint_bench`, in-process).
3. Whole processes on TensorFlow's checkpoint: `tensorcast convert CKPT out.safetensors`;
   `cp` of the data file; TensorFlow's own path (`tf.train.load_checkpoint` + `get_tensor` +
   `safetensors.numpy.save_file`, its import time reported apart); `tensorcast convert
   out.safetensors -o P --format checkpoint` (reads 1 GiB and writes a checkpoint).
4. Listing: `tensorcast inspect --tf-debug-string` (whole process) of a 10,000-variable
   checkpoint (written by TensorFlow's SaveV2) and of the 1 GiB one; `tf.train.list_variables`.
Prints one JSON object (seconds, best of runs) and a table.
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

ap = argparse.ArgumentParser()
ap.add_argument("--dir", default="/tmp")
ap.add_argument("--mib", type=int, default=1024)
ap.add_argument("--runs", type=int, default=3)
args = ap.parse_args()
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tc = os.path.join(root, "target/release/tensorcast")
cb = os.path.join(root, "target/release/examples/checkpoint_bench")
work = tempfile.mkdtemp(prefix="ckpt_bench_", dir=args.dir)
res = {}


def best(fn, runs=args.runs, before=None):
    times = []
    for _ in range(runs):
        if before:
            before()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def run(cmd, **kw):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)


def rm(*paths):
    def f():
        for p in paths:
            if os.path.exists(p):
                os.remove(p)
    return f


try:
    import numpy as np
    import tensorflow as tf

    n = args.mib * (1 << 20) // 64 // 4
    vs = {f"layer_{i:02d}": tf.Variable(np.full(n, i, np.float32)) for i in range(64)}
    ckpt = tf.train.Checkpoint(**vs)
    prefix = os.path.join(work, "tf-ckpt")
    ckpt.write(prefix)
    res["tf_checkpoint_write"] = best(lambda: ckpt.write(prefix))
    data = prefix + ".data-00000-of-00001"
    data_bytes = os.path.getsize(data)
    res["data_bytes"] = data_bytes

    # In-process read / write next to memcpy (tensorcast's example).
    env = dict(os.environ, CKPT_BENCH_MIB=str(args.mib), CKPT_BENCH_DIR=work)
    res["checkpoint_bench"] = subprocess.run(
        [cb], check=True, capture_output=True, text=True, env=env).stdout

    # Whole processes on TensorFlow's checkpoint.
    copy = os.path.join(work, "copy")
    run(["cp", data, copy])  # warm
    res["cp_data_file"] = best(lambda: run(["cp", data, copy]), before=rm(copy))
    out = os.path.join(work, "out.safetensors")
    run([tc, "convert", prefix, out])  # warm
    res["tensorcast_convert_to_safetensors"] = best(
        lambda: run([tc, "convert", prefix, out]), before=rm(out))
    res["tensorcast_convert_to_safetensors_mmap"] = best(
        lambda: run([tc, "--mmap", "convert", prefix, out]), before=rm(out))
    tf_out = os.path.join(work, "tf.safetensors")
    tf_path = f"""
import os, time, json
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
t0 = time.perf_counter()
import tensorflow as tf
from safetensors.numpy import save_file
t1 = time.perf_counter()
r = tf.train.load_checkpoint({prefix!r})
d = {{k: r.get_tensor(k) for k in r.get_variable_to_shape_map() if k != "_CHECKPOINTABLE_OBJECT_GRAPH"}}
save_file(d, {tf_out!r})
t2 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "work": t2 - t1}}))
"""
    whole, inner = [], []
    for _ in range(args.runs):
        rm(tf_out)()
        t = time.perf_counter()
        p = subprocess.run([sys.executable, "-c", tf_path], check=True, capture_output=True, text=True)
        whole.append(time.perf_counter() - t)
        inner.append(json.loads(p.stdout.strip().splitlines()[-1]))
    res["tf_path_whole_process"] = min(whole)
    res["tf_path_after_import"] = min(i["work"] for i in inner)
    res["tf_path_import"] = min(i["import"] for i in inner)
    back = os.path.join(work, "back")
    back_files = [back + ".index", back + ".data-00000-of-00001"]
    res["tensorcast_convert_safetensors_to_checkpoint"] = best(
        lambda: run([tc, "convert", out, "-o", back, "--format", "checkpoint"]), before=rm(*back_files))
    res["cp_safetensors_file"] = best(lambda: run(["cp", out, copy]), before=rm(copy))

    # Listing.
    many = os.path.join(work, "many")
    names = [f"model/layer_{i // 4:04d}/sublayer_{i % 4}/kernel/.ATTRIBUTES/VARIABLE_VALUE" for i in range(10000)]
    tensors = [tf.fill([16], float(i)) for i in range(10000)]
    tf.raw_ops.SaveV2(prefix=many, tensor_names=names, shape_and_slices=[""] * 10000, tensors=tensors)
    res["tensorcast_list_10000_whole_process"] = best(
        lambda: run([tc, "inspect", many, "--tf-debug-string"]), runs=5)
    res["tensorcast_list_1GiB_64_whole_process"] = best(
        lambda: run([tc, "inspect", prefix, "--tf-debug-string"]), runs=5)
    res["true_whole_process"] = best(lambda: run(["true"]), runs=5)
    res["tensorcast_version_whole_process"] = best(lambda: run([tc, "--version"]), runs=5)
    res["tf_list_variables_10000"] = best(lambda: tf.train.list_variables(many), runs=5)
finally:
    shutil.rmtree(work, ignore_errors=True)

print(json.dumps(res, indent=1))
