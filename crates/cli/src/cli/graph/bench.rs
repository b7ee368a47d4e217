//! `tensorcast graph bench GRAPH_OR_SAVED_MODEL --feed NAME=FILE ... --fetch NAME ... [--runs N]
//! [--json]`: the latency of `Session::run` (or of a SavedModel signature), as TensorFlow's
//! `benchmark_model` and `tract ... bench` report it for a user's own model.
//!
//! The graph is loaded and the session made once; `--warmup` runs (default 3) are not timed;
//! then each of `--runs` runs (default 100) is timed alone with a monotonic clock, feeds
//! included as `Session::run` takes them (shared, not copied). Printed: runs, min, median,
//! max (and mean); `--json` prints one object
//! `{"runs": N, "min_s": .., "median_s": .., "max_s": .., "mean_s": ..}`.

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
    let times = if tensorcast::io::saved_model::is_saved_model(&args.model.file) {
        let (model, name) = super::run::load_saved_model(&args.model)?;
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
        time_runs(args.warmup, args.runs, || {
            session
                .run(&refs, &fetch, &[])
                .map(drop)
                .map_err(|e| anyhow!("{}", super::safe(&e.to_string())))
        })
        .with_context(|| name)?
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
        println!(
            "{}",
            serde_json::json!({"runs": n, "min_s": min, "median_s": median, "max_s": max, "mean_s": mean})
        );
    } else {
        let ms = |s: f64| format!("{:.3} ms", s * 1e3);
        println!(
            "runs: {n}  min: {}  median: {}  max: {}  mean: {}",
            ms(min),
            ms(median),
            ms(max),
            ms(mean)
        );
    }
    Ok(EXIT_OK)
}
