//! The benchmark report: `cargo run --release --example bench -- --json` (the same binary as
//! `cargo bench -p tensorcast-bench`, whose source it includes).

#[path = "../benches/report.rs"]
mod report;

fn main() {
    report::main();
}
