//! The quick benchmark report: `cargo run --release --example bench -- --json`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(tensorcast_bench::main_with_args(&args));
}
