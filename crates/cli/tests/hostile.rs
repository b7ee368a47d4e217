//! The `tensorcast` binary on inputs and outputs that are not quiet regular files: standard
//! input and output (`-`), FIFOs, files truncated while read, write targets that are links or
//! devices, file-size limits during a write (signals during one: `outputs.rs`), the memory
//! limit, names with escape sequences.

use crate::common::stderr;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::common::BIN;
use tensorcast::io::{npy, read_file, write_file, Format, NamedTensor};
use tensorcast::{DataType, Tensor, TensorShape};
use tensorcast_testkit::files::dir_entries;

fn temp_dir(test: &str) -> PathBuf {
    crate::common::temp_dir(&format!("hostile-{test}"))
}

fn run_with_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    crate::common::run_with_stdin(BIN, dir, args, input)
}

fn vector(n: usize) -> Tensor {
    let v: Vec<f32> = (0..n).map(|i| i as f32).collect();
    Tensor::from_vec(v, TensorShape::new(&[n as i64]).unwrap()).unwrap()
}

fn assert_one_line_exit_2(o: &Output, starts: &str, contains: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(err.starts_with(starts), "{err}");
    assert!(err.contains(contains), "{err}");
}

#[test]
fn inspect_dash_reads_standard_input() {
    let dir = temp_dir("stdin");
    let bytes = npy::write(&vector(5)).unwrap();
    let o = run_with_stdin(&dir, &["inspect", "-"], &bytes);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("float") && out.contains("[5]"), "{out}");
}

#[test]
fn standard_input_past_max_stream_is_one_line_exit_2() {
    let dir = temp_dir("stdin-limit");
    let bytes = npy::write(&vector(1000)).unwrap();
    let o = run_with_stdin(&dir, &["--max-stream", "1K", "inspect", "-"], &bytes);
    assert_one_line_exit_2(&o, "tensorcast: -:", "limit of 1024 bytes");
}

#[test]
fn inspect_reads_a_fifo_as_a_stream() {
    let dir = temp_dir("fifo");
    let fifo = dir.join("in.npy");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let bytes = npy::write(&vector(3)).unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, bytes).unwrap())
    };
    let o = Command::new(BIN)
        .args(["inspect", "in.npy"])
        .current_dir(&dir)
        .output()
        .unwrap();
    writer.join().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("[3]"));
}

#[test]
fn convert_to_dash_writes_standard_output() {
    let dir = temp_dir("stdout");
    write_vector(&dir, "a.npy", "a", 4);
    let o = Command::new(BIN)
        .args(["convert", "a.npy", "-", "--to", "npy"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, npy::write(&vector(4)).unwrap());
    assert_eq!(dir_entries(&dir), ["a.npy"]);
}

#[test]
fn a_file_truncated_while_inspected_is_an_error_never_a_signal() {
    // 32 MiB of float32; another process (this test) truncates it while tensorcast reads it.
    // Read into memory (the default), the worst outcome is a one-line error; mapped, the same
    // race can kill the reader with SIGBUS.
    let dir = temp_dir("truncate");
    let p = dir.join("big.npy");
    let bytes = npy::write(&vector(8 << 20)).unwrap();
    for delay_us in [0u64, 200, 1000, 3000, 10_000] {
        std::fs::write(&p, &bytes).unwrap();
        let child = Command::new(BIN)
            .args(["inspect", "big.npy"])
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(delay_us));
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(1000)
            .unwrap();
        let o = child.wait_with_output().unwrap();
        assert_eq!(
            o.status.signal(),
            None,
            "killed by a signal: {}",
            stderr(&o)
        );
        assert!(matches!(o.status.code(), Some(0 | 2)), "{:?}", o.status);
        if o.status.code() == Some(2) {
            assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
            assert!(
                stderr(&o).starts_with("tensorcast: big.npy:"),
                "{}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn convert_onto_a_symlink_replaces_the_target_and_onto_dev_null_keeps_the_device() {
    let dir = temp_dir("targets");
    write_vector(&dir, "a.npy", "a", 4);
    write_vector(&dir, "real.npy", "r", 1);
    std::os::unix::fs::symlink("real.npy", dir.join("link.npy")).unwrap();
    let o = Command::new(BIN)
        .args(["convert", "a.npy", "link.npy"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(dir.join("link.npy"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        read_file(&dir.join("real.npy")).unwrap()[0].tensor,
        vector(4)
    );
    let o = Command::new(BIN)
        .args(["convert", "a.npy", "/dev/null", "--to", "npy"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    assert_eq!(dir_entries(&dir), ["a.npy", "link.npy", "real.npy"]);
}

/// Writes `file` in `dir`: an npy file of one `vector(n)` named `name`.
fn write_vector(dir: &Path, file: &str, name: &str, n: usize) {
    write_file(
        &dir.join(file),
        Format::Npy,
        &[NamedTensor::new(name, vector(n))],
    )
    .unwrap();
}

#[test]
fn a_file_size_limit_during_a_write_leaves_no_temporary_file() {
    // `ulimit -f 64` (64 blocks of 512 bytes): the write of 4 MiB passes it, the kernel sends
    // SIGXFSZ and fails the write with EFBIG. Either way: the old file, no litter.
    let dir = temp_dir("xfsz");
    write_vector(&dir, "a.npy", "a", 1 << 20);
    write_vector(&dir, "out.npy", "o", 2);
    let old = std::fs::read(dir.join("out.npy")).unwrap();
    let o = Command::new("sh")
        .args([
            "-c",
            &format!("ulimit -f 64; exec {BIN} convert a.npy out.npy"),
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        o.status.signal() == Some(25) || o.status.code() == Some(2),
        "{:?} {}",
        o.status,
        stderr(&o)
    );
    assert_eq!(dir_entries(&dir), ["a.npy", "out.npy"]);
    assert_eq!(std::fs::read(dir.join("out.npy")).unwrap(), old);
}

#[test]
fn max_memory_bounds_a_tensorproto_fill() {
    let dir = temp_dir("max-memory");
    // float [2^24], one value carried: 64 MiB of fill.
    let mut p = vec![
        0x08, 0x01, 0x12, 0x07, 0x12, 0x05, 0x08, 0x80, 0x80, 0x80, 0x08,
    ];
    p.extend_from_slice(&[0x2a, 0x04, 0, 0, 0x80, 0x3f]);
    std::fs::write(dir.join("fill.pb"), &p).unwrap();
    let o = Command::new(BIN)
        .args(["--max-memory", "1M", "inspect", "fill.pb"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_one_line_exit_2(
        &o,
        "tensorcast: fill.pb:",
        "more than the 1048576 bytes left of --max-memory",
    );
    let o = Command::new(BIN)
        .args(["--max-memory", "128M", "inspect", "fill.pb"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn escape_sequences_in_file_names_are_printed_escaped() {
    let dir = temp_dir("escape");
    let name = "evil\x1b[2J.npy";
    std::fs::write(dir.join(name), b"garbage").unwrap();
    let o = Command::new(BIN)
        .args(["inspect", name])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(!err.contains('\x1b'), "{err:?}");
    assert!(err.contains("evil\\x1b[2J.npy"), "{err:?}");
    let _ = DataType::FLOAT;
}
