//! Helpers the CLI test modules share.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_tensorcast");

/// Runs the binary with `args` in `dir`.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the tensorcast binary runs")
}

/// Runs the binary with `args` in the test's working directory.
pub fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the tensorcast binary runs")
}

/// The repository's `samples/` folder.
pub fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples")
}

/// A finished command's standard output, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The standard output of a command that must have succeeded (its standard error in the
/// message when it did not).
pub fn ok(o: &Output) -> String {
    assert!(o.status.success(), "stderr: {}", stderr(o));
    stdout(o)
}

/// Bytes from hex text (the recorded files of the TensorFlow vectors).
pub fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// The peers' interpreter if it imports TensorFlow; `None` (the test skips, and says so) if
/// not, which CI (`CI=true`) refuses.
pub fn tensorflow_python() -> Option<PathBuf> {
    tensorcast_testkit::peers::python_with("tensorflow")
}

/// A fresh, empty directory for one test, under Cargo's temporary directory for tests.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A finished command's standard error, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `bin` with `args` in `dir`, `input` on its standard input (fed from a thread, so a
/// child that stops reading early cannot block the test).
pub fn run_with_stdin(bin: &str, dir: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}
