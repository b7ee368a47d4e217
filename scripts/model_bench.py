"""The model speed table of issue 18 (section 4): tensorcast, TensorFlow and tract on the same
frozen graphs, in one run, printed as one table.

    .venv/bin/python scripts/model_bench.py [--models DIR] [--runs N] [--repeat R]
        [--tensorcast PATH] [--compare PATH] [--tract PATH] [--only a,b] [--no-kernels] [--json]

- The graphs are tests/models/gen_bench_models.py's (written into DIR, default
  target/bench_models, when DIR has no bench.json): MobileNetV3Small 96x96 batch 1 and 32,
  the Transformer block with 128 tokens batch 1 and 8, and `chain_100` (100 small ops).
- tensorcast: `tensorcast graph bench FILE --feed x=X.npy --fetch OUT --runs N --json`
  (`Session::run`, the session made once, warm-up runs untimed).
- TensorFlow: `tf.compat.v1.Session.run` of the same GraphDef, imported once, 3 warm-up runs,
  then N runs each timed alone.
- tract: `tract FILE -i SHAPE,f32 --input-node x --output-node OUT bench` (the `tract` CLI,
  `cargo install tract-cli`), when it is on PATH or given; a graph it refuses is reported with
  the first line of its error.
- The kernel rows: `tensorcast bench --filter ...` (MatMul f32 1024^3 next to the `gemm` crate
  called directly; Conv2D 3x3 8x56x56x64 -> 64) and scripts/tf_bench.py --ops (TensorFlow eager).

Every figure is a median of N runs; with --repeat R the whole set runs R times in turn and the
table gives each median's range. The load average is printed before and after: the machine is
shared, so read the ratios, which are measured side by side.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load():
    return "%.2f %.2f %.2f" % os.getloadavg()


def tensorcast_graph(exe, d, g, runs):
    out = subprocess.run(
        [exe, "graph", "bench", os.path.join(d, g["file"]), "--feed",
         f"{g['input']}={os.path.join(d, g['name'] + '.x.npy')}", "--fetch", g["output"],
         "--runs", str(runs), "--warmup", "3", "--json"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)["median_s"]


class TfGraph:
    """One frozen GraphDef in a TF1 session, imported once and warm."""

    def __init__(self, d, g):
        import numpy as np
        import tensorflow as tf
        gd = tf.compat.v1.GraphDef()
        with open(os.path.join(d, g["file"]), "rb") as f:
            gd.ParseFromString(f.read())
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.import_graph_def(gd, name="")
        self.sess = tf.compat.v1.Session(graph=self.graph)
        self.feed = {g["input"] + ":0": np.load(os.path.join(d, g["name"] + ".x.npy"))}
        self.fetch = g["output"]

    def time(self, runs):
        for _ in range(3):
            self.sess.run(self.fetch, self.feed)
        samples = []
        for _ in range(runs):
            t = time.perf_counter()
            self.sess.run(self.fetch, self.feed)
            samples.append(time.perf_counter() - t)
        return statistics.median(samples)


UNITS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9}


def tract_graph(exe, d, g, runs):
    """tract's `bench` of the graph (`-O`: its optimizer on; random input values of the
    graph's shape): its mean time per run, or, for a graph it refuses, why (its error's
    causes, as a string)."""
    shape = ",".join(str(s) for s in g["shape"]) + ",f32"
    cmd = [exe, os.path.join(d, g["file"]), "-i", shape, "--input-node", g["input"],
           "--output-node", g["output"].split(":")[0], "-O", "bench", "-R",
           "--warmup-loops", "3", "--max-loops", str(runs)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    text = re.sub(r"\x1b\[[0-9;]*m", "", p.stdout + p.stderr)
    m = re.search(r"Bench ran (\d+) times, ([0-9.]+) ?(s|ms|µs|us|ns)", text)
    if p.returncode == 0 and m:
        return float(m.group(2)) * UNITS[m.group(3)]
    lines = [l.strip() for l in text.splitlines()]
    causes = []
    for i, l in enumerate(lines):
        if l.startswith("Caused by:"):
            causes = []
            for c in lines[i + 1:]:
                if not c and causes:
                    break
                if re.match(r"\d+: ", c):
                    causes.append(c)
            break
        if "ERROR tract]" in l and not causes:
            causes = [l.split("ERROR tract]", 1)[1].strip()]
    return "refused: " + " / ".join(causes)[:300]


def kernel_rows(exe, runs):
    names = "matmul_f32_1024,gemm_crate_f32_1024,conv2d_f32_8x56x56x64_3x3"
    out = subprocess.run([exe, "bench", "--json", "--filter", names, "--runs", str(runs)],
                         check=True, capture_output=True, text=True).stdout
    ours = {k: v["seconds"] for k, v in json.loads(out).items()}
    out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "tf_bench.py"), "--ops"],
                         check=True, capture_output=True, text=True).stdout
    tf = {k: v["seconds"] for k, v in json.loads(out.strip().splitlines()[-1]).items()}
    return {
        "matmul_f32_1024": ours.get("matmul_f32_1024"),
        "gemm_crate_f32_1024": ours.get("gemm_crate_f32_1024"),
        "tf_matmul_f32_1024": tf.get("tf_matmul_f32_1024"),
        "conv2d_f32_8x56x56x64_3x3": ours.get("conv2d_f32_8x56x56x64_3x3"),
        "tf_conv2d_f32_8x56x56x64_3x3": tf.get("tf_conv2d_f32_8x56x56x64_3x3"),
    }


def fmt(s):
    if isinstance(s, str):
        return s
    if s is None:
        return "-"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} us"


def span(xs, f=fmt):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    if isinstance(xs[0], str):
        return xs[0]
    lo, hi = min(xs), max(xs)
    return f(lo) if f(lo) == f(hi) else f"{f(lo)}-{f(hi)}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.path.join(ROOT, "target", "bench_models"))
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--tensorcast", default=os.path.join(ROOT, "target", "release", "tensorcast"))
    ap.add_argument("--tract", default=shutil.which("tract") or os.path.expanduser("~/.cargo/bin/tract"))
    ap.add_argument("--compare", default="",
                    help="another tensorcast binary (an earlier build) timed beside, same graphs")
    ap.add_argument("--only", default="")
    ap.add_argument("--no-kernels", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    d = a.models
    if not os.path.exists(os.path.join(d, "bench.json")):
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "models", "gen_bench_models.py"), d],
                       check=True, stdout=subprocess.DEVNULL)
    graphs = json.load(open(os.path.join(d, "bench.json")))
    if a.only:
        graphs = [g for g in graphs if g["name"] in a.only.split(",")]
    have_tract = a.tract and os.path.exists(a.tract)
    before = load()
    tfs = {g["name"]: TfGraph(d, g) for g in graphs}
    res = {g["name"]: {"tensorcast": [], "compare": [], "tensorflow": [], "tract": []}
           for g in graphs}
    kernels = []
    for _ in range(a.repeat):
        for g in graphs:
            r = res[g["name"]]
            r["tensorcast"].append(tensorcast_graph(a.tensorcast, d, g, a.runs))
            if a.compare:
                r["compare"].append(tensorcast_graph(a.compare, d, g, a.runs))
            r["tensorflow"].append(tfs[g["name"]].time(a.runs))
            r["tract"].append(tract_graph(a.tract, d, g, a.runs) if have_tract else None)
        if not a.no_kernels:
            kernels.append(kernel_rows(a.tensorcast, 7))
    after = load()
    if a.json:
        print(json.dumps({"load_before": before, "load_after": after, "graphs": res,
                          "kernels": kernels}))
        return
    print(f"load average before: {before}; after: {after}; {a.repeat} run(s) of {a.runs} each\n")
    print("| workload | tensorcast | TensorFlow Session.run | tensorcast / TF | tract | tensorcast / tract |")
    print("|---|---|---|---|---|---|")
    for g in graphs:
        r = res[g["name"]]
        ratio = [c / t for c, t in zip(r["tensorcast"], r["tensorflow"])]
        tr = [c / t for c, t in zip(r["tensorcast"], r["tract"]) if isinstance(t, float)]
        label = f"{g['name']} ({g['nodes']} nodes)"
        print(f"| {label} | {span(r['tensorcast'])} | {span(r['tensorflow'])} | "
              f"{span(ratio, lambda x: f'{x:.2f}')} | {span(r['tract'])} | "
              f"{span(tr, lambda x: f'{x:.2f}')} |")
        if a.compare:
            gain = [c / b for c, b in zip(r["tensorcast"], r["compare"])]
            print(f"| {g['name']}: the --compare build | {span(r['compare'])} | | "
                  f"this build / it: {span(gain, lambda x: f'{x:.2f}')} | | |")
        if g["name"] == "chain_100":
            print(f"| chain_100 per op node | {span([s / 100 for s in r['tensorcast']])} | "
                  f"{span([s / 100 for s in r['tensorflow']])} | | | |")
    if kernels:
        flop = 2 * 1024 ** 3
        gf = lambda s: f"{flop / s / 1e9:.1f} GFLOP/s"
        print()
        print("| kernel | tensorcast | gemm crate direct | op / gemm (FLOP rate) | TensorFlow eager | tensorcast / TF (time) |")
        print("|---|---|---|---|---|---|")
        mm = [k["matmul_f32_1024"] for k in kernels]
        gm = [k["gemm_crate_f32_1024"] for k in kernels]
        tm = [k["tf_matmul_f32_1024"] for k in kernels]
        print(f"| MatMul f32 1024^3 | {span(mm)} ({span(mm, gf)}) | {span(gm)} | "
              f"{span([g / m for g, m in zip(gm, mm)], lambda x: f'{x:.2f}')} | {span(tm)} | "
              f"{span([m / t for m, t in zip(mm, tm)], lambda x: f'{x:.2f}')} |")
        cv = [k["conv2d_f32_8x56x56x64_3x3"] for k in kernels]
        tc = [k["tf_conv2d_f32_8x56x56x64_3x3"] for k in kernels]
        print(f"| Conv2D 3x3 8x56x56x64->64 | {span(cv)} | | | {span(tc)} | "
              f"{span([c / t for c, t in zip(cv, tc)], lambda x: f'{x:.2f}')} |")


if __name__ == "__main__":
    main()
