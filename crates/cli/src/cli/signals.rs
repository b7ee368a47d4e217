//! `SIGINT`, `SIGTERM`, `SIGHUP` and `SIGXFSZ` during a write: the temporary file of the write
//! in progress is removed, then the process dies of the same signal (the conventional status:
//! a shell reports 128 + the signal number, 130 for `SIGINT`).
//!
//! A thread of its own waits for the signals (`signal-hook`'s iterator: the asynchronous
//! handler only records the signal), so the clean-up runs as ordinary code. `SIGXFSZ` (a
//! file size limit, `ulimit -f`) would otherwise kill the process inside `write`, leaving the
//! temporary file; caught, the `write` fails with `EFBIG` as well.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
use signal_hook::iterator::Signals;

/// Starts the thread that cleans up on the signals above. Failing to install the handlers
/// only loses the clean-up, so it is not an error.
pub(crate) fn install() {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM, SIGHUP, SIGXFSZ]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            tensorcast::io::remove_temporary_files();
            // Restore the default action and raise the signal again: the process ends as if
            // it had not been caught (killed by `sig`).
            let _ = signal_hook::low_level::emulate_default_handler(sig);
            std::process::exit(128 + sig);
        }
    });
}
