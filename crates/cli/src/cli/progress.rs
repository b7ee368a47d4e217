//! Progress bars for work on large files, and human-readable byte counts.
//!
//! A bar appears only when the work is at least [`LARGE_BYTES`] and stderr is a terminal, so
//! pipes, logs and tests see nothing of it.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Work of at least this many bytes gets a progress bar (64 MiB).
pub(crate) const LARGE_BYTES: u64 = 64 << 20;

fn visible(total: u64) -> bool {
    total >= LARGE_BYTES && std::io::stderr().is_terminal()
}

/// A byte-counting bar for `total` bytes of work, labelled `msg` (hidden for small work or
/// when stderr is not a terminal).
pub(crate) fn bar(total: u64, msg: &str) -> ProgressBar {
    if !visible(total) {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        // `wide_msg` takes the width left and is cut to it: the line never wraps.
        "[{bar:24}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {wide_msg}",
    )
    .map(|s| s.progress_chars("=> "))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    pb.set_style(style);
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}

/// A spinner for one step of unknown length over `total` bytes (writing a file, say).
pub(crate) fn spinner(total: u64, msg: &str) -> ProgressBar {
    if !visible(total) {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("{spinner} {elapsed} {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    pb.set_style(style);
    pb.set_message(format!("{msg} ({})", human_bytes(total)));
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// `n` bytes as `512 B`, `1.5 KiB`, `256.0 MiB`...
pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_print_in_binary_units() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(256 << 20), "256.0 MiB");
    }

    #[test]
    fn small_work_has_a_hidden_bar() {
        assert!(bar(10, "x").is_hidden());
        assert!(spinner(10, "x").is_hidden());
    }
}
