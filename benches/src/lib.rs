//! tensorcast's benchmark workloads and their one runner, [`Runner`], which prints the report
//! (`cargo bench -p tensorcast-bench [-- --json --filter NAME --runs N]`, the same binary as
//! `cargo run --release --example bench -- --json`, and the CLI's `bench`): each workload runs
//! 7 times on fresh outputs from the default allocator, as a user's call would, and reports the
//! median next to memcpy and fill of the same bytes measured in the same run. The 256 MiB
//! baselines (`memcpy_256MiB`, `fill_256MiB`, ...) run when the filter names them; the smaller,
//! in-cache workloads record their own memcpy of the same bytes (`memcpy_128KiB`, ...) whenever
//! they run.

use std::time::Instant;

mod array;
mod baseline;
mod bitcast;
mod broadcast;
mod cast;
mod elementwise;
pub mod graph;
mod linalg;
mod math;
mod proto;

/// One workload's result.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// The workload's name (`memcpy_256MiB`...).
    pub name: String,
    /// Median seconds per run.
    pub seconds: f64,
    /// Bytes of output one run produces.
    pub bytes: u64,
    /// Every run's seconds.
    pub samples: Vec<f64>,
    /// Peak heap bytes of one run above the level before it, where a peak counter measured it.
    pub peak_bytes: Option<u64>,
}

/// Measures peak heap use: `reset` starts a measurement and returns the live level, `peak`
/// returns the highest level since. A binary that installs a counting global allocator (the
/// `bench` example) provides one.
#[derive(Debug, Clone, Copy)]
pub struct PeakCounter {
    /// Starts a measurement; returns the live bytes now.
    pub reset: fn() -> usize,
    /// The peak live bytes since the last reset.
    pub peak: fn() -> usize,
}

/// Collects measurements, skipping workloads the filter excludes.
pub struct Runner {
    filter: Option<String>,
    runs: usize,
    peak_counter: Option<PeakCounter>,
    /// Results so far.
    pub results: Vec<Measurement>,
}

impl Runner {
    /// A runner taking `runs` samples per workload, keeping workloads whose name contains
    /// `filter`.
    pub fn new(filter: Option<String>, runs: usize) -> Self {
        Self {
            filter,
            runs: runs.max(1),
            peak_counter: None,
            results: Vec::new(),
        }
    }

    /// Installs a peak counter: workloads that report `peak_bytes` use it.
    pub fn with_peak_counter(mut self, counter: PeakCounter) -> Self {
        self.peak_counter = Some(counter);
        self
    }

    /// Peak bytes of one call of `f` above the level before it, if a counter is installed.
    pub fn peak_of<T>(&self, f: impl FnOnce() -> T) -> Option<u64> {
        let c = self.peak_counter?;
        tensorcast_core::buffer::cpu_allocator().release_cached_memory();
        let start = (c.reset)();
        let out = f();
        let peak = (c.peak)().saturating_sub(start);
        drop(out);
        Some(peak as u64)
    }

    /// Attaches `peak` to the measurement `name`.
    pub fn set_peak(&mut self, name: &str, peak: Option<u64>) {
        if let Some(m) = self.results.iter_mut().find(|m| m.name == name) {
            m.peak_bytes = peak;
        }
    }

    /// True if `name` is to be run (the filter may list several parts, comma-separated).
    pub fn wants(&self, name: &str) -> bool {
        self.filter
            .as_deref()
            .is_none_or(|f| f.split(',').any(|part| name.contains(part)))
    }

    /// Times `f` `runs` times (each output is dropped outside the timed region) and records
    /// the median under `name` with `bytes` of output per run.
    pub fn measure<T>(&mut self, name: &str, bytes: u64, f: impl FnMut() -> T) {
        if self.wants(name) {
            self.time_calls(name, bytes, f);
        }
    }

    /// [`Runner::measure`] without the filter.
    fn time_calls<T>(&mut self, name: &str, bytes: u64, mut f: impl FnMut() -> T) {
        // One untimed warm-up run, so that the allocator cache and page tables are as a
        // repeated caller would find them.
        drop(std::hint::black_box(f()));
        let mut samples = Vec::with_capacity(self.runs);
        for _ in 0..self.runs {
            let start = Instant::now();
            let out = std::hint::black_box(f());
            samples.push(start.elapsed().as_secs_f64());
            drop(out);
        }
        self.record(name, bytes, samples);
    }

    /// Times a constant-time operation: the median over `runs` batches of `iters` calls,
    /// divided by `iters`.
    pub fn measure_tiny<T>(&mut self, name: &str, bytes: u64, iters: u32, f: impl FnMut() -> T) {
        if self.wants(name) {
            self.time_batches(name, bytes, iters, f);
        }
    }

    /// Times a baseline (memcpy of the bytes a workload writes) as [`Runner::measure_tiny`]
    /// does (as [`Runner::measure`] does when `iters` is 1), whether or not the filter names
    /// it, once per run: a workload that runs always has its baseline in the same run.
    pub fn measure_baseline<T>(
        &mut self,
        name: &str,
        bytes: u64,
        iters: u32,
        f: impl FnMut() -> T,
    ) {
        if self.get(name).is_some() {
            return;
        }
        if iters <= 1 {
            self.time_calls(name, bytes, f);
        } else {
            self.time_batches(name, bytes, iters, f);
        }
    }

    /// Records the median over `runs` batches of `iters` calls of `f`, divided by `iters`.
    fn time_batches<T>(&mut self, name: &str, bytes: u64, iters: u32, mut f: impl FnMut() -> T) {
        let mut samples = Vec::with_capacity(self.runs);
        for _ in 0..self.runs {
            let start = Instant::now();
            for _ in 0..iters {
                drop(std::hint::black_box(f()));
            }
            samples.push(start.elapsed().as_secs_f64() / f64::from(iters.max(1)));
        }
        self.record(name, bytes, samples);
    }

    /// Records the median of `samples` under `name`.
    fn record(&mut self, name: &str, bytes: u64, samples: Vec<f64>) {
        let mut sorted = samples.clone();
        sorted.sort_by(|a, b| a.total_cmp(b));
        let seconds = sorted[sorted.len() / 2];
        let name = name.to_string();
        self.results.push(Measurement {
            name,
            seconds,
            bytes,
            samples,
            peak_bytes: None,
        });
    }

    fn get(&self, name: &str) -> Option<&Measurement> {
        self.results.iter().find(|m| m.name == name)
    }
}

/// Runs every workload (those whose name contains `filter`, if given).
pub fn run_all(filter: Option<String>, runs: usize) -> Vec<Measurement> {
    run_all_with(Runner::new(filter, runs))
}

/// Runs every workload the runner wants.
pub fn run_all_with(mut r: Runner) -> Vec<Measurement> {
    baseline::run(&mut r);
    array::run(&mut r);
    bitcast::run(&mut r);
    broadcast::run(&mut r);
    cast::run(&mut r);
    elementwise::run(&mut r);
    graph::run(&mut r);
    linalg::run(&mut r);
    math::run(&mut r);
    proto::run(&mut r);
    r.results
}

/// The report as one JSON object `{workload: {"seconds": median, "bytes": output bytes}}`.
pub fn to_json(results: &[Measurement]) -> String {
    let mut map = serde_json::Map::new();
    for m in results {
        let mut v = serde_json::json!({ "seconds": m.seconds, "bytes": m.bytes });
        if let Some(p) = m.peak_bytes {
            v["peak_bytes"] = serde_json::json!(p);
        }
        map.insert(m.name.clone(), v);
    }
    serde_json::Value::Object(map).to_string()
}

/// The report as an aligned table, with bandwidth and the ratio to the bandwidth of memcpy
/// (`memcpy_*` of the same bytes where one ran, else `memcpy_256MiB`) and of `fill_256MiB`.
pub fn to_table(results: &[Measurement]) -> String {
    let bandwidth = |m: &Measurement| m.bytes as f64 / m.seconds;
    let find = |name: &str| results.iter().find(|m| m.name == name).map(bandwidth);
    let memcpy_of = |bytes: u64| {
        results
            .iter()
            .find(|m| m.name.starts_with("memcpy_") && m.bytes == bytes)
            .map(bandwidth)
            .or_else(|| find("memcpy_256MiB"))
    };
    let fill = find("fill_256MiB");
    let mut out = format!(
        "{:<40} {:>12} {:>12} {:>10} {:>10}\n",
        "workload", "median", "GB/s", "/memcpy", "/fill"
    );
    for m in results {
        let bw = m.bytes as f64 / m.seconds;
        let time = if m.seconds < 1e-6 {
            format!("{:.1} ns", m.seconds * 1e9)
        } else if m.seconds < 1e-3 {
            format!("{:.2} us", m.seconds * 1e6)
        } else {
            format!("{:.2} ms", m.seconds * 1e3)
        };
        let ratio = |base: Option<f64>| base.map_or("-".to_string(), |b| format!("{:.2}", bw / b));
        out.push_str(&format!(
            "{:<40} {:>12} {:>12.2} {:>10} {:>10}\n",
            m.name,
            time,
            bw / 1e9,
            ratio(memcpy_of(m.bytes)),
            ratio(fill)
        ));
    }
    out
}

/// Entry point shared by the bench target, the example and the CLI: `--json` for JSON,
/// `--filter NAME`, `--runs N` (default 7); `--bench` (from `cargo bench`) is ignored.
pub fn main_with_args(args: &[String]) -> i32 {
    main_with_args_and_peak(args, None)
}

/// [`main_with_args`] with a peak counter for the workloads that report `peak_bytes`.
pub fn main_with_args_and_peak(args: &[String], peak: Option<PeakCounter>) -> i32 {
    let mut json = false;
    let mut filter = None;
    let mut runs = 7;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => json = true,
            // `cargo bench` passes `--bench` to a harness-less bench binary.
            "--bench" => {}
            "--filter" => filter = it.next().cloned(),
            "--runs" => match it.next().and_then(|v| v.parse().ok()) {
                Some(n) => runs = n,
                None => {
                    eprintln!("bench: --runs needs a whole number");
                    return 2;
                }
            },
            other => {
                eprintln!("bench: unknown argument {other} (use --json, --filter NAME, --runs N)");
                return 2;
            }
        }
    }
    let mut runner = Runner::new(filter, runs);
    if let Some(p) = peak {
        runner = runner.with_peak_counter(p);
    }
    let results = run_all_with(runner);
    if json {
        println!("{}", to_json(&results));
    } else {
        print!("{}", to_table(&results));
    }
    0
}
