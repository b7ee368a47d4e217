//! The quick benchmark report: `cargo run --release --example bench -- --json`.
//!
//! Installs a counting global allocator so that workloads reporting `peak_bytes` can measure it.

use tensorcast_buffer::testing::CountingGlobalAlloc;

#[global_allocator]
static COUNTING: CountingGlobalAlloc = CountingGlobalAlloc::new();

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let peak = tensorcast_bench::PeakCounter {
        reset: || COUNTING.reset_peak(),
        peak: || COUNTING.peak_bytes(),
    };
    std::process::exit(tensorcast_bench::main_with_args_and_peak(&args, Some(peak)));
}
