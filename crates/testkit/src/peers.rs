//! The Python peers the interop tests compare with (TensorFlow, numpy, pyarrow, TensorBoard,
//! ...): which interpreter runs them, and whether it imports them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The interpreter of the Python peers: `$TENSORCAST_PYTHON` (set by scripts/test.sh), else the
/// repository's `.venv` (which scripts/test.sh installs), else `python3` from `PATH`.
pub fn python_interpreter() -> PathBuf {
    if let Some(p) = std::env::var_os("TENSORCAST_PYTHON").filter(|p| !p.is_empty()) {
        return p.into();
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    if venv.exists() {
        return venv;
    }
    "python3".into()
}

/// [`python_interpreter`] if it imports `modules` (a Python import list: `tensorflow`,
/// `numpy, pyarrow`); `None` if not, after saying that the test is skipped and why - except
/// with `CI=true`, where a missing peer fails the test. Every test that runs a Python
/// interpreter asks here first: a plain `cargo test` on a machine without the peers' `.venv`
/// (only a system `python3`, or none) skips those tests instead of failing them.
pub fn python_with(modules: &str) -> Option<PathBuf> {
    let py = python_interpreter();
    let why = match Command::new(&py)
        .args(["-c", &format!("import {modules}")])
        .env("TF_CPP_MIN_LOG_LEVEL", "3")
        .output()
    {
        Err(e) => format!("{} cannot be run: {e}", py.display()),
        Ok(o) if !o.status.success() => format!(
            "{} cannot import {modules} ({})",
            py.display(),
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("no message")
        ),
        Ok(_) => return Some(py),
    };
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{why} (CI=true: the interop peers must be installed; scripts/test.sh does it)"
    );
    eprintln!("skipped: {why}");
    None
}

/// Runs a peer script (`command`, with TensorFlow's log lines turned off) and returns its
/// standard output; panics with its standard error when it fails.
pub fn stdout_of(command: &mut Command) -> String {
    let o = command
        .env("TF_CPP_MIN_LOG_LEVEL", "3")
        .output()
        .expect("the python interpreter runs");
    assert!(
        o.status.success(),
        "the peer script failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[cfg(test)]
mod tests {
    use super::python_with;

    #[test]
    fn python_with_missing_module_skips_or_fails_under_ci() {
        let ci = std::env::var("CI").as_deref() == Ok("true");
        let got = std::panic::catch_unwind(|| python_with("tensorcast_no_such_peer_module"));
        if ci {
            assert!(got.is_err(), "CI=true: a missing peer fails the test");
        } else {
            assert!(matches!(got, Ok(None)), "a missing peer skips the test");
        }
    }
}
