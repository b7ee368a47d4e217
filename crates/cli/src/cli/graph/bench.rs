//! `tensorcast graph bench GRAPH_OR_SAVED_MODEL --feed NAME=FILE ... --fetch NAME ... [--runs N]
//! [--json]`: the latency of `Session::run` (or of a SavedModel signature), as TensorFlow's
//! `benchmark_model` and `tract ... bench` report it for a user's own model.
//!
//! The graph is loaded and the session made once; `--warmup` runs (default 3) are not timed;
//! then each of `--runs` runs (default 100) is timed alone with a monotonic clock, feeds
//! included as `Session::run` takes them (shared, not copied). Printed: runs, min, median,
//! max (and mean); `--json` prints one object
//! `{"runs": N, "min_s": .., "median_s": .., "max_s": .., "mean_s": ..}`.
//!
//! `--profile` (GraphDefs) then runs `--runs` more times with each node timed, one node at a
//! time (`Session::run_profiled`), and prints the time per op type (mean per run, nodes,
//! share) and the ten slowest nodes, as `benchmark_model --show_summary` does; with `--json`
//! the object gains `"profile": [{"op", "nodes", "mean_s", "share"}, ...]` and
//! `"slowest": [{"node", "op", "mean_s"}, ...]`.

use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use tensorcast::Tensor;

use crate::cli::EXIT_OK;

/// Arguments of `graph bench`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub model: super::run::ModelArgs,
    /// Timed runs.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    pub runs: u32,
    /// Untimed runs first.
    #[arg(long, default_value_t = 3)]
    pub warmup: u32,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Run without the optimization pass.
    #[arg(long)]
    pub no_optimize: bool,
    /// Run without element-wise fusion (constant folding stays on).
    #[arg(long)]
    pub no_fuse: bool,
    /// Also time each node (GraphDefs only): time per op type and the slowest nodes.
    #[arg(long)]
    pub profile: bool,
}

/// Per-op and per-node means of profiled runs.
struct Profile {
    /// (op, nodes per run, mean seconds per run), slowest first.
    ops: Vec<(String, usize, f64)>,
    /// (node, op, mean seconds per run), the ten slowest.
    slowest: Vec<(String, String, f64)>,
    /// Mean seconds per run, summed over nodes.
    total: f64,
}

fn profile(runs: &[Vec<tensorcast::graph::NodeTime>]) -> Profile {
    use std::collections::HashMap;
    let n = runs.len().max(1) as f64;
    let mut ops: HashMap<&str, (usize, f64)> = HashMap::new();
    let mut nodes: HashMap<(&str, &str), f64> = HashMap::new();
    for run in runs {
        for t in run {
            let e = ops.entry(t.op.as_str()).or_default();
            e.0 += 1;
            e.1 += t.seconds;
            *nodes.entry((t.node.as_str(), t.op.as_str())).or_default() += t.seconds;
        }
    }
    let mut ops: Vec<(String, usize, f64)> = ops
        .into_iter()
        .map(|(op, (count, s))| (op.to_string(), (count as f64 / n).round() as usize, s / n))
        .collect();
    ops.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    let mut slowest: Vec<(String, String, f64)> = nodes
        .into_iter()
        .map(|((node, op), s)| (node.to_string(), op.to_string(), s / n))
        .collect();
    slowest.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    slowest.truncate(10);
    let total = ops.iter().map(|o| o.2).sum();
    Profile {
        ops,
        slowest,
        total,
    }
}

/// Times `f` `runs` times after `warmup` untimed calls: the sorted durations in seconds.
fn time_runs(warmup: u32, runs: u32, mut f: impl FnMut() -> Result<()>) -> Result<Vec<f64>> {
    for _ in 0..warmup {
        f()?;
    }
    let mut times = Vec::with_capacity(runs as usize);
    for _ in 0..runs {
        let t0 = Instant::now();
        f()?;
        times.push(t0.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Ok(times)
}

/// Runs `graph bench`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let feeds = super::run::load_feeds(args.model.feed.iter().chain(&args.model.input))?;
    let refs: Vec<(&str, Tensor)> = feeds.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    let mut profiled = None;
    let times = if tensorcast::io::saved_model::is_saved_model(&args.model.file) {
        if args.profile {
            bail!("graph bench --profile times the nodes of a GraphDef; give a frozen graph");
        }
        let (model, name) = super::run::load_saved_model(
            &args.model,
            super::run::session_options(args.no_optimize, args.no_fuse),
        )?;
        time_runs(args.warmup, args.runs, || {
            model
                .run(&args.model.signature, &refs)
                .map(drop)
                .map_err(|e| anyhow!("{}", super::safe(&e.to_string())))
        })
        .with_context(|| name)?
    } else {
        if args.model.fetch.is_empty() {
            bail!("graph bench on a GraphDef needs at least one --fetch NAME");
        }
        let graph = super::load(&args.model.file)?;
        let name = super::shown(&args.model.file);
        let session = super::run::session(&graph, args.no_optimize, args.no_fuse);
        let fetch: Vec<&str> = args.model.fetch.iter().map(String::as_str).collect();
        let times = time_runs(args.warmup, args.runs, || {
            session
                .run(&refs, &fetch, &[])
                .map(drop)
                .map_err(|e| anyhow!("{}", super::safe(&e.to_string())))
        })
        .with_context(|| name.clone())?;
        if args.profile {
            let mut runs = Vec::with_capacity(args.runs as usize);
            for _ in 0..args.runs {
                let (_, t) = session
                    .run_profiled(&refs, &fetch, &[])
                    .map_err(|e| anyhow!("{}", super::safe(&e.to_string())))
                    .with_context(|| name.clone())?;
                runs.push(t);
            }
            profiled = Some(profile(&runs));
        }
        times
    };
    let n = times.len();
    let (min, max) = (times[0], times[n - 1]);
    let median = if n % 2 == 1 {
        times[n / 2]
    } else {
        (times[n / 2 - 1] + times[n / 2]) / 2.0
    };
    let mean = times.iter().sum::<f64>() / n as f64;
    if args.json {
        let mut out = serde_json::json!({"runs": n, "min_s": min, "median_s": median, "max_s": max, "mean_s": mean});
        if let Some(p) = &profiled {
            let share = |s: f64| if p.total > 0.0 { s / p.total } else { 0.0 };
            out["profile"] = p
                .ops
                .iter()
                .map(|(op, nodes, s)| serde_json::json!({"op": op, "nodes": nodes, "mean_s": s, "share": share(*s)}))
                .collect();
            out["slowest"] = p
                .slowest
                .iter()
                .map(|(node, op, s)| serde_json::json!({"node": node, "op": op, "mean_s": s}))
                .collect();
        }
        println!("{out}");
    } else {
        let ms = |s: f64| format!("{:.3} ms", s * 1e3);
        println!(
            "runs: {n}  min: {}  median: {}  max: {}  mean: {}",
            ms(min),
            ms(median),
            ms(max),
            ms(mean)
        );
        if let Some(p) = &profiled {
            let us = |s: f64| format!("{:.1} us", s * 1e6);
            println!(
                "\nprofile ({n} runs, one node at a time; {} of kernels per run):",
                us(p.total)
            );
            println!("{:>12} {:>7} {:>6}  op", "mean/run", "share", "nodes");
            for (op, nodes, s) in &p.ops {
                let share = if p.total > 0.0 {
                    s / p.total * 100.0
                } else {
                    0.0
                };
                println!("{:>12} {:>6.1}% {:>6}  {op}", us(*s), share, nodes);
            }
            println!("\nslowest nodes:");
            for (node, op, s) in &p.slowest {
                println!("{:>12}  {node} ({op})", us(*s));
            }
        }
    }
    Ok(EXIT_OK)
}
