//! The `tensorcast` command-line tool: inspect, convert, bitcast, broadcast and compare tensor
//! files (npy, npz, safetensors, serialized TensorProto) and TensorFlow checkpoints, and run
//! the benchmark report.
//!
//! Exit codes: 0 success, 1 `diff` found a difference, 2 an error. Every error is one line on
//! stderr, `tensorcast: <file>: <problem>`; a panic (a bug) is caught by a hook that prints
//! one line and exits 2, never a backtrace. `SIGINT`, `SIGTERM`, `SIGHUP` and `SIGXFSZ` remove
//! the temporary file of a write in progress, then end the process by the same signal.
//! `-` names standard input (any command that reads a file) or output (`convert`'s output,
//! with `--format`).
#![forbid(unsafe_code)]
#![warn(unreachable_pub, missing_debug_implementations)]

mod cli;

use clap::{Parser, Subcommand};

/// TensorFlow's tensor core in pure Rust: look into, convert and compare tensor files.
#[derive(Parser, Debug)]
#[command(name = "tensorcast", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The most memory the files a command reads may make it spend beyond their own size, all
    /// together (one budget per command, not per tensor): decompressed npz members and
    /// compressed TFRecord records that are kept, values a TensorProto declares but does not
    /// carry, string, resource and variant elements, the metadata files of a SavedModel. K,
    /// M, G, T are powers of 1024.
    #[arg(long, global = true, value_name = "SIZE", default_value = "256M",
          value_parser = cli::source::parse_size)]
    max_memory: u64,
    /// The most read from standard input (`-`), a pipe, a FIFO, a character device or a file
    /// that reports a size of 0 (procfs, sysfs).
    #[arg(long, global = true, value_name = "SIZE", default_value = "4G",
          value_parser = cli::source::parse_size)]
    max_stream: u64,
    /// Memory-map regular files instead of reading them: no copy, but a file another process
    /// truncates meanwhile kills tensorcast with SIGBUS. Use only on files nothing else writes.
    #[arg(long, global = true)]
    mmap: bool,
    /// The longest .npy header read (in .npy files and .npz members), in bytes: numpy's
    /// `max_header_size`, 10000 by default. Raise it only for files you trust.
    #[arg(long, global = true, value_name = "SIZE", default_value = "10000",
          value_parser = cli::source::parse_size)]
    max_npy_header: u64,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show the tensors in files and TensorFlow checkpoints: dtype, shape, bytes, alignment,
    /// statistics, DebugString (a checkpoint's object paths, keys and slots).
    Inspect(cli::inspect::Args),
    /// Rewrite a tensor file or TensorFlow checkpoint in another format (a checkpoint too),
    /// optionally casting every tensor.
    Convert(cli::convert::Args),
    /// View every tensor's bytes as another dtype (TensorFlow Bitcast, or TIK reinterpret).
    Bitcast(cli::bitcast::Args),
    /// Broadcast every tensor to a shape (TensorFlow BroadcastTo).
    Broadcast(cli::broadcast::Args),
    /// Compare the tensors of two files; exit 1 if they differ beyond tolerance.
    Diff(cli::diff::Args),
    /// Run the benchmark report (each kernel next to memcpy/fill of the same bytes).
    Bench(cli::bench::Args),
    /// Inspect, run, optimize or draw a TensorFlow GraphDef.
    #[command(subcommand)]
    Graph(cli::graph::Command),
    /// Show a TensorFlow SavedModel folder as `saved_model_cli show` does, with its variables.
    #[command(subcommand)]
    SavedModel(cli::saved_model::Command),
}

/// True when `e` comes from writing to a closed pipe (`tensorcast inspect | head`).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The threads rayon's global pool gets: `RAYON_NUM_THREADS` when it is a positive number,
/// else one per CPU (rayon's own rule).
fn pool_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn main() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "tensorcast: internal error: {}{at} (please report this)",
            msg.replace(['\r', '\n'], " ")
        );
        std::process::exit(cli::EXIT_ERROR);
    }));
    // clap prints usage errors and exits 2 (0 for --help and --version).
    let cli = Cli::parse();
    cli::source::set_read_options(tensorcast::io::ReadOptions {
        max_memory: cli.max_memory,
        max_stream_bytes: cli.max_stream,
        max_npy_header_bytes: usize::try_from(cli.max_npy_header).unwrap_or(usize::MAX),
        mode: if cli.mmap {
            tensorcast::io::ReadMode::Map
        } else {
            tensorcast::io::ReadMode::Read
        },
        budget: None,
    });
    // For the graph commands, the main thread is one of the pool's threads (rayon's
    // `use_current_thread`): a kernel's parallel loop starts on it and the other threads join
    // in by stealing. Otherwise every parallel kernel hands its work to the pool and sleeps
    // until it is done, a wake-up and a sleep per op (tens of microseconds each on a virtual
    // machine, more than a small op's work). Only with two threads or more: a pool whose one
    // thread is the main thread would never run a job another thread queues while the main
    // thread waits for it (the record pipelines of the other commands do that).
    let threads = pool_threads();
    if matches!(cli.command, Command::Graph(_)) && threads >= 2 {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .use_current_thread()
            .build_global();
    }
    cli::signals::install();
    let result = match &cli.command {
        Command::Inspect(a) => cli::inspect::run(a),
        Command::Convert(a) => cli::convert::run(a),
        Command::Bitcast(a) => cli::bitcast::run(a),
        Command::Broadcast(a) => cli::broadcast::run(a),
        Command::Diff(a) => cli::diff::run(a),
        Command::Bench(a) => cli::bench::run(a),
        Command::Graph(a) => cli::graph::run(a),
        Command::SavedModel(a) => cli::saved_model::run(a),
    };
    let code = match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => cli::EXIT_OK,
        Err(e) => {
            // Error lines quote names from files (GraphDef node names, op types, tensor
            // names): control characters never reach the terminal raw.
            eprintln!(
                "tensorcast: {}",
                cli::source::terminal_safe(&cli::one_line(&e))
            );
            cli::EXIT_ERROR
        }
    };
    std::process::exit(code);
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
