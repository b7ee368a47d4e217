//! Times a TF1 while loop (the dataflow executor): `cargo run --release -p tensorcast-graph
//! --example while_bench -- FILE.pb`, FILE written by `while_bench.py` beside this file (which
//! also times TensorFlow's `Session.run` of the same graph). Prints the median time of a run with
//! `n = 0` and `n = 1000` and the per-iteration difference.

use std::time::Instant;

use tensorcast_core::Tensor;
use tensorcast_graph::{import_graph_def_bytes, Graph, Session};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: while_bench FILE.pb (written by while_bench.py)");
        std::process::exit(2);
    };
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let g = Graph::new();
    if let Err(e) = import_graph_def_bytes(&g, &bytes) {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    }
    let session = Session::new(&g);
    let fetch = ["w/Exit:0", "w/Exit_1:0"];
    let median = |n: i32, reps: usize| -> f64 {
        let feeds = [("n:0", Tensor::scalar_of(n))];
        let out = session.run(&feeds, &fetch, &[]).expect("run");
        assert_eq!(out[0].as_slice::<i32>().expect("i32"), &[n]);
        let mut t = Vec::with_capacity(reps);
        for _ in 0..reps {
            let start = Instant::now();
            let _ = session.run(&feeds, &fetch, &[]).expect("run");
            t.push(start.elapsed().as_secs_f64());
        }
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let (t0, t1) = (median(0, 200), median(1000, 50));
    println!(
        "tensorcast: run n=0 {:.1} us, n=1000 {:.3} ms, per iteration {:.2} us",
        t0 * 1e6,
        t1 * 1e3,
        (t1 - t0) / 1000.0 * 1e6
    );
}
