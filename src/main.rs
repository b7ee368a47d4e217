//! The `tensorcast` command-line tool (in progress).

fn main() {
    eprintln!("tensorcast: the command-line tool is being built; see `cargo run --release --example tour`");
    std::process::exit(2);
}
