"""The tensorcast Python package's benchmarks, each next to the baseline the issue names,
measured in the same run. Every workload that imports TensorFlow or the `tfrecord` PyPI reader
runs in a process of its own (the two cannot share one), timed inside that process after its
imports (import times are printed apart).

    python python/benchmarks/bench.py                  # everything (writes ~2.2 GiB to --dir)
    python python/benchmarks/bench.py --only numpy,examples --ckpt-mib 256
    python python/benchmarks/bench.py --only ckpt,examples --rounds 3   # ranges over 3 rounds

Prints one line per measurement (with the 1-minute load average at that moment) and a JSON
summary at the end.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = {}


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def best_cpu(fn, repeat):
    """The least CPU time (every thread of this process, user + system) of `repeat` runs: on
    a machine shared with other jobs it moves less than the wall-clock time."""
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def child(mode, *args):
    """Runs `bench.py --child mode args...` in a fresh process; returns its JSON line."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", JAX_PLATFORMS="cpu")
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, *map(str, args)], capture_output=True, text=True, env=env
    )
    if out.returncode != 0:
        raise RuntimeError(f"{mode} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def span(ratios):
    """The range of a comparison's ratios over the rounds."""
    return f"{min(ratios):.1f}x - {max(ratios):.1f}x"


def report(name, value, unit="s", **extra):
    # The machine's 1-minute load average when the figure was taken (the machine is shared).
    extra["load"] = round(os.getloadavg()[0], 1)
    RESULTS[name] = dict(value=value, unit=unit, **extra)
    shown = f"{value * 1e6:.2f} us" if unit == "s" and value < 1e-3 else (f"{value * 1e3:.1f} ms" if unit == "s" else f"{value} {unit}")
    more = "  ".join(f"{k}={v}" for k, v in extra.items())
    print(f"{name:60s} {shown:>14s}  {more}", flush=True)


# --- children ----------------------------------------------------------------------------


def child_main(mode, args):
    t0 = time.perf_counter()
    if mode == "import_tensorcast":
        import tensorcast  # noqa: F401

        return {"seconds": time.perf_counter() - t0}
    if mode == "ckpt_tc":
        import glob

        import numpy as np
        import tensorcast as tc

        imp = time.perf_counter() - t0
        prefix = args[0]

        def run(mmap=True):
            r = tc.train.load_checkpoint(prefix, mmap=mmap)
            total = 0
            for k in r.keys():
                x = r.get_tensor(k)
                total += 0 if k == "_CHECKPOINTABLE_OBJECT_GRAPH" else np.asarray(x).nbytes
            return total

        # Baselines in the same process: reading the shard's bytes into new memory (numpy's
        # fromfile: the copy out of the page cache and the fresh pages' faults, what any
        # reader that hands out arrays of their own pays), and copying that memory (memcpy).
        (data,) = glob.glob(prefix + ".data-*")
        held = np.fromfile(data, np.uint8)
        return {
            "seconds": best(run, 3),
            "cpu": best_cpu(run, 3),
            "unmapped": best(lambda: run(False), 3),
            "fromfile": best(lambda: np.fromfile(data, np.uint8), 3),
            "memcpy": best(lambda: held.copy(), 3),
            "import": imp,
            "bytes": run(),
        }
    if mode == "ckpt_tf":
        import tensorflow as tf

        imp = time.perf_counter() - t0
        prefix = args[0]

        def run():
            r = tf.train.load_checkpoint(prefix)
            total = 0
            for k in r.get_variable_to_shape_map():
                x = r.get_tensor(k)
                total += 0 if k == "_CHECKPOINTABLE_OBJECT_GRAPH" else x.nbytes
            return total

        return {"seconds": best(run, 3), "cpu": best_cpu(run, 3), "import": imp, "bytes": run()}
    if mode == "ckpt_write_tf":
        import numpy as np
        import tensorflow as tf

        prefix, mib = args[0], int(args[1])
        n = 64
        per = mib * (1 << 20) // n // 4
        m = tf.Module()
        m.vars = [tf.Variable(np.full(per, i, np.float32)) for i in range(n)]
        tf.train.Checkpoint(model=m).write(prefix)
        return {"seconds": time.perf_counter() - t0}
    if mode == "ex_tc":
        import tensorcast as tc

        imp = time.perf_counter() - t0
        path, width, batch = args[0], int(args[1]), int(args[2])
        spec = {
            "x": tc.io.FixedLenFeature([width], "float32"),
            "label": tc.io.FixedLenFeature([], "int64"),
            "tags": tc.io.VarLenFeature("string"),
        }

        def run():
            records = tc.io.read_records(path)
            n = 0
            for s in range(0, len(records), batch):
                # One call per batch, as tf.data's batched map: the batch is a list of bytes.
                out = tc.io.parse_example(records.slice(s, s + batch), spec)
                n += len(out["label"])
            return n

        def whole():
            out = tc.io.parse_example(tc.io.read_records(path), spec)
            return len(out["label"])

        def arrow():
            return tc.io.parse_example(tc.io.read_records(path), spec, output="arrow").num_rows

        def cat():
            subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)

        def stream():
            # parse_example_batches: the file read and parsed ahead of the loop on every core.
            n = 0
            for out in tc.io.parse_example_batches(path, spec, batch):
                n += len(out["label"])
            return n

        def stream_arrow():
            return sum(t.num_rows for t in tc.io.parse_example_batches(path, spec, batch, output="arrow"))

        return {
            "seconds": best(whole, 3),
            "batched": best(run, 3),
            "stream": best(stream, 5),
            "stream_arrow": best(stream_arrow, 5),
            "arrow": best(arrow, 3),
            "cat": best(cat, 3),
            "import": imp,
            "n": whole(),
        }
    if mode == "ex_tf":
        import tensorflow as tf

        imp = time.perf_counter() - t0
        path, width, batch = args[0], int(args[1]), int(args[2])
        spec = {
            "x": tf.io.FixedLenFeature([width], tf.float32),
            "label": tf.io.FixedLenFeature([], tf.int64),
            "tags": tf.io.VarLenFeature(tf.string),
        }

        def run():
            ds = tf.data.TFRecordDataset(path).batch(batch).map(lambda s: tf.io.parse_example(s, spec))
            n = 0
            for out in ds:
                x = out["x"].numpy()
                n += len(x)
            return n

        def tuned():
            # tf.data at its best on this machine: parallel parsing and prefetching.
            auto = tf.data.AUTOTUNE
            ds = (
                tf.data.TFRecordDataset(path, num_parallel_reads=auto)
                .batch(batch)
                .map(lambda s: tf.io.parse_example(s, spec), num_parallel_calls=auto)
                .prefetch(auto)
            )
            n = 0
            for out in ds:
                n += len(out["x"].numpy())
            return n

        return {"seconds": best(run, 3), "tuned": best(tuned, 3), "import": imp, "n": run()}
    if mode == "ex_pypi":
        from tfrecord.reader import tfrecord_loader

        imp = time.perf_counter() - t0
        path, width = args[0], int(args[1])

        def run():
            n = 0
            for ex in tfrecord_loader(path, None, {"x": "float", "label": "int", "tags": "byte"}):
                n += 1
            return n

        return {"seconds": best(run, 1), "import": imp, "n": run()}
    if mode in ("ray_tc", "ray_ray"):
        import ray

        paths = args[0].split(",")
        width = int(args[1])
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        imp = time.perf_counter() - t0
        if mode == "ray_tc":
            import tensorcast as tc
            import tensorcast.ray  # noqa: F401

            spec = {
                "x": tc.io.FixedLenFeature([width], "float32"),
                "label": tc.io.FixedLenFeature([], "int64"),
                "tags": tc.io.VarLenFeature("string"),
            }

            def run():
                return tc.ray.read_tfrecords(paths, spec=spec).materialize().count()
        else:

            def run():
                return ray.data.read_tfrecords(paths).materialize().count()

        n = run()  # warm the workers
        return {"seconds": best(run, 3), "import": imp, "n": n}
    raise SystemExit(f"unknown mode {mode}")


# --- the parent --------------------------------------------------------------------------


def bench_numpy():
    import numpy as np

    import tensorcast as tc

    a = np.ones(256 << 20, np.uint8)
    per = []
    for _ in range(2000):
        t = time.perf_counter()
        b = np.asarray(tc.Tensor(a))
        per.append(time.perf_counter() - t)
    assert b is a
    per.sort()
    report("numpy 256 MiB -> Tensor -> numpy (adopted array back)", per[len(per) // 2], note="median of 2000")
    t = tc.Tensor(a)
    v = tc.Tensor(a).reshape([256, 1 << 20])
    per = []
    for _ in range(2000):
        s = time.perf_counter()
        x = np.asarray(v)
        per.append(time.perf_counter() - s)
    per.sort()
    assert np.shares_memory(x, a)
    report("Tensor (made in Rust, 256 MiB) -> numpy view", per[len(per) // 2], note="median of 2000")
    copy = best(lambda: a.copy(), 3)
    report("baseline: numpy copy of 256 MiB", copy)
    del t


def bench_import():
    times = [child("import_tensorcast")["seconds"] for _ in range(5)]
    report("import tensorcast (fresh process)", min(times), note="best of 5")


def bench_ckpt(d, mib, rounds):
    prefix = os.path.join(d, "ckpt-1")
    if not os.path.exists(prefix + ".index"):
        child("ckpt_write_tf", prefix, mib)
    ratios, cpu_ratios = [], []
    for r in range(rounds):
        ours = child("ckpt_tc", prefix)
        theirs = child("ckpt_tf", prefix)
        assert ours["bytes"] == theirs["bytes"]
        tag = f"[{r + 1}/{rounds}] " if rounds > 1 else ""
        report(
            f"{tag}checkpoint {mib} MiB: tensorcast load_checkpoint + get_tensor (all)",
            ours["seconds"],
            cpu_s=round(ours["cpu"], 3),
            import_s=round(ours["import"], 3),
        )
        report(f"{tag}  the same with mmap=False (writable arrays of their own)", ours["unmapped"], ratio=round(theirs["seconds"] / ours["unmapped"], 1))
        report(f"{tag}  baseline: numpy.fromfile of the shard (read into new memory)", ours["fromfile"])
        report(f"{tag}  baseline: memcpy of the shard's bytes (numpy copy)", ours["memcpy"])
        report(
            f"{tag}checkpoint {mib} MiB: tf.train.load_checkpoint + get_tensor (all)",
            theirs["seconds"],
            cpu_s=round(theirs["cpu"], 3),
            import_s=round(theirs["import"], 2),
            ratio=round(theirs["seconds"] / ours["seconds"], 1),
            cpu_ratio=round(theirs["cpu"] / ours["cpu"], 1),
        )
        ratios.append(theirs["seconds"] / ours["seconds"])
        cpu_ratios.append(theirs["cpu"] / ours["cpu"])
    if rounds > 1:
        print(f"checkpoint, TensorFlow / tensorcast over {rounds} rounds: {span(ratios)} (CPU time {span(cpu_ratios)})", flush=True)


def write_examples(path, n, width, tags=None):
    import tensorcast as tc
    from tensorcast._testing import example_bytes

    with tc.io.TFRecordWriter(path) as w:
        for i in range(n):
            w.write(example_bytes(i, width=width, tags=tags))


def bench_examples(d, n, width, batch, rounds):
    path = os.path.join(d, f"examples-{n}-{width}.tfrecord")
    if not os.path.exists(path):
        write_examples(path, n, width)
    mb = os.path.getsize(path) / 1e6
    tf_ratios, pypi_ratios = [], []
    for r in range(rounds):
        tag = f"[{r + 1}/{rounds}] " if rounds > 1 else ""
        ours = child("ex_tc", path, width, batch)
        theirs = child("ex_tf", path, width, batch)
        pypi = child("ex_pypi", path, width)
        assert ours["n"] == theirs["n"] == pypi["n"] == n
        report(f"{tag}{n} Examples ({mb:.0f} MB): tensorcast read + parse_example (one batch)", ours["seconds"])
        report(f"{tag}{n} Examples: tensorcast read_records + parse_example, batches of {batch}", ours["batched"])
        report(f"{tag}{n} Examples: tensorcast parse_example_batches (numpy), batches of {batch}", ours["stream"])
        report(f"{tag}{n} Examples: tensorcast parse_example_batches (pyarrow.Table), batches of {batch}", ours["stream_arrow"])
        report(f"{tag}{n} Examples: tensorcast -> pyarrow.Table", ours["arrow"])
        report(f"{tag}  baseline: cat of the file to /dev/null", ours["cat"])
        tf_best = min(theirs["seconds"], theirs["tuned"])
        report(f"{tag}{n} Examples: tf.data.TFRecordDataset + parse_example (batch {batch})", theirs["seconds"], ratio=round(theirs["seconds"] / ours["stream"], 1))
        report(f"{tag}{n} Examples: tf.data, parallel reads and parse, prefetch (AUTOTUNE)", theirs["tuned"], ratio=round(theirs["tuned"] / ours["stream"], 1))
        report(f"{tag}{n} Examples: tfrecord (PyPI) reader", pypi["seconds"], ratio=round(pypi["seconds"] / ours["stream"], 1))
        tf_ratios.append(tf_best / ours["stream"])
        pypi_ratios.append(pypi["seconds"] / ours["stream"])
    if rounds > 1:
        print(f"examples over {rounds} rounds, tf.data (the faster of its two pipelines) / parse_example_batches: {span(tf_ratios)}; PyPI reader / parse_example_batches: {span(pypi_ratios)}", flush=True)


def bench_ray(d, n, width, rounds):
    shards = []
    per = n // 4
    for s in range(4):
        p = os.path.join(d, f"ray-{s}.tfrecord")
        if not os.path.exists(p):
            # Two tags in every example: ray.data.read_tfrecords infers a column's type per
            # block, and a list of 0, 1 or 2 values gives blocks whose types disagree.
            write_examples(p, per, width, tags=[b"t0", b"t1"])
        shards.append(p)
    ratios = []
    for r in range(rounds):
        tag = f"[{r + 1}/{rounds}] " if rounds > 1 else ""
        ours = child("ray_tc", ",".join(shards), width)
        theirs = child("ray_ray", ",".join(shards), width)
        assert ours["n"] == theirs["n"] == per * 4
        report(f"{tag}Ray 2-CPU local cluster, {per * 4} Examples in 4 files: tensorcast.ray.read_tfrecords", ours["seconds"])
        report(f"{tag}  ray.data.read_tfrecords, same files", theirs["seconds"], ratio=round(theirs["seconds"] / ours["seconds"], 1))
        ratios.append(theirs["seconds"] / ours["seconds"])
    if rounds > 1:
        print(f"ray over {rounds} rounds, ray.data / tensorcast.ray: {span(ratios)}", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--child")
    p.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "tensorcast-pybench"))
    p.add_argument("--only", default="numpy,import,ckpt,examples,ray")
    p.add_argument("--ckpt-mib", type=int, default=1024)
    p.add_argument("--examples", type=int, default=100_000)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--rounds", type=int, default=1, help="repeat each comparison (fresh processes each time)")
    args, rest = p.parse_known_args()
    if args.child:
        print(json.dumps(child_main(args.child, rest)))
        return
    os.makedirs(args.dir, exist_ok=True)
    only = set(args.only.split(","))
    if "numpy" in only:
        bench_numpy()
    if "import" in only:
        bench_import()
    if "ckpt" in only:
        bench_ckpt(args.dir, args.ckpt_mib, args.rounds)
    if "examples" in only:
        bench_examples(args.dir, args.examples, args.width, args.batch, args.rounds)
    if "ray" in only:
        bench_ray(args.dir, args.examples, args.width, args.rounds)
    print(json.dumps(RESULTS))


if __name__ == "__main__":
    main()
