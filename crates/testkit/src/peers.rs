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
/// `numpy, pyarrow`); `None` if not, after saying that the test is skipped - except with
/// `CI=true`, where a missing peer fails the test.
pub fn python_with(modules: &str) -> Option<PathBuf> {
    let py = python_interpreter();
    let ok = Command::new(&py)
        .args(["-c", &format!("import {modules}")])
        .env("TF_CPP_MIN_LOG_LEVEL", "3")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{} cannot import {modules} (CI=true: the interop peers must be installed; \
             scripts/test.sh does it)",
            py.display()
        );
        eprintln!("skipped: {} cannot import {modules}", py.display());
        return None;
    }
    Some(py)
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
