//! What the TensorFlow interop tests share: where the Python peers' interpreter is, whether
//! TensorFlow imports there (`python_with`), and hex for the JSON records exchanged with it.

use std::path::Path;
use std::process::{Command, Stdio};

/// Lowercase hex of `b`, as the Python side writes and reads it.
pub use tensorcast_testkit::records::hex_encode as hex;

/// The interpreter of the Python peers (`$TENSORCAST_PYTHON`, else the repository's `.venv`,
/// else `python3`).
pub use tensorcast_testkit::peers::python_interpreter;

/// The peers' interpreter if it imports the modules named; `None` after saying why the test
/// is skipped (with `CI=true` a missing peer fails the test instead).
pub use tensorcast_testkit::peers::python_with;

/// Writes `script` as `dir/file_name` and runs it with the peers' interpreter (`dir` and `args`
/// as its arguments, TensorFlow's logging off), waiting at most `timeout`. On failure the
/// error holds the exit status and the last 15 lines of the script's standard error.
pub fn run_python_script(
    dir: &Path,
    file_name: &str,
    script: &str,
    args: &[&str],
    timeout: std::time::Duration,
) -> Result<(), String> {
    use std::io::Read;
    use std::time::{Duration, Instant};
    let path = dir.join(file_name);
    std::fs::write(&path, script).map_err(|e| e.to_string())?;
    let mut child = Command::new(python_interpreter())
        .arg(&path)
        .arg(dir)
        .args(args)
        .env("TF_CPP_MIN_LOG_LEVEL", "3")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", python_interpreter().display()))?;
    // Read standard error on a thread, so a chatty script cannot fill the pipe and stall.
    let mut stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut err = String::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.read_to_string(&mut err);
        }
        err
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{file_name} took longer than {timeout:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(e.to_string()),
        }
    };
    let err = reader.join().unwrap_or_default();
    if status.success() {
        return Ok(());
    }
    let tail: Vec<&str> = err.lines().rev().take(15).collect();
    Err(format!(
        "{file_name} failed ({status}):\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    ))
}
