//! What the TensorFlow interop tests share: where the Python peers' interpreter is, whether
//! TensorFlow imports there, and hex for the JSON records exchanged with it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Lowercase hex of `b`, as the Python side writes and reads it.
pub use tensorcast_testkit::records::hex_encode as hex;

/// The interpreter of the Python peers: `$TENSORCAST_PYTHON`, else the repository's `.venv`,
/// else `python3` from `PATH`.
pub fn python_interpreter() -> PathBuf {
    if let Some(p) = std::env::var_os("TENSORCAST_PYTHON").filter(|p| !p.is_empty()) {
        return p.into();
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    if venv.exists() {
        return venv;
    }
    "python3".into()
}

/// Why TensorFlow cannot be used here, if it cannot.
pub fn tensorflow_unavailable() -> Option<String> {
    let out = Command::new(python_interpreter())
        .args(["-c", "import tensorflow"])
        .env("TF_CPP_MIN_LOG_LEVEL", "3")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match out {
        Err(e) => Some(format!(
            "{} cannot be run: {e}",
            python_interpreter().display()
        )),
        Ok(o) if !o.status.success() => Some(format!(
            "{} cannot import tensorflow ({})",
            python_interpreter().display(),
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("no message")
        )),
        Ok(_) => None,
    }
}
