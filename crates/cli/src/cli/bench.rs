//! `tensorcast bench [--json] [--filter NAME] [--runs N]`: the benchmark report
//! (`tensorcast_bench`), each kernel next to memcpy/fill of the same bytes.

use anyhow::Result;

/// Arguments of `bench`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Run only the benchmarks whose name contains this.
    #[arg(long, value_name = "NAME")]
    pub filter: Option<String>,
    /// Timed runs per benchmark (the report takes the median).
    #[arg(long, value_name = "N")]
    pub runs: Option<u32>,
}

/// Runs `bench`: the report's own exit code.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let mut a = Vec::new();
    if args.json {
        a.push("--json".to_string());
    }
    if let Some(f) = &args.filter {
        a.push("--filter".into());
        a.push(f.clone());
    }
    if let Some(r) = args.runs {
        a.push("--runs".into());
        a.push(r.to_string());
    }
    Ok(tensorcast_bench::main_with_args(&a))
}
