//! `cargo bench -p tensorcast-bench [-- --json --filter NAME --runs N]`: the benchmark report
//! (`tensorcast_bench`'s workloads and runner). The `bench` example is this same file.
//!
//! Installs a counting global allocator so that workloads reporting `peak_bytes` can measure it.

use tensorcast_buffer::testing::CountingGlobalAlloc;

#[global_allocator]
static COUNTING: CountingGlobalAlloc = CountingGlobalAlloc::new();

/// Runs the report with the process's arguments and exits with its code.
pub(crate) fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let peak = tensorcast_bench::PeakCounter {
        reset: || COUNTING.reset_peak(),
        peak: || COUNTING.peak_bytes(),
    };
    std::process::exit(tensorcast_bench::main_with_args_and_peak(&args, Some(peak)));
}
