//! Times GraphDef import: `cargo run --release -p tensorcast-graph --example import_bench -- FILE.pb [RUNS]`
//! reads the file once, then imports it RUNS times (default 20) and prints the minimum and
//! median import time and the bytes of the file.

use std::time::Instant;

use tensorcast_graph::{import_graph_def_bytes, Graph};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: import_bench FILE.pb [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(20);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let mut times = Vec::with_capacity(runs);
    let mut nodes = 0;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let g = Graph::new();
        if let Err(e) = import_graph_def_bytes(&g, &bytes) {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
        times.push(start.elapsed().as_secs_f64());
        nodes = g.num_nodes();
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{path}: {} bytes, {nodes} nodes: import min {:.2} ms, median {:.2} ms over {} runs",
        bytes.len(),
        times[0] * 1e3,
        times[times.len() / 2] * 1e3,
        times.len()
    );
}
