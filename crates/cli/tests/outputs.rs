//! `convert`'s outputs in every format go through one atomic output layer and so behave the
//! same: a signal during the write leaves the old output and no temporary file, `/dev/null`
//! stays a device, new files get `0666` minus the umask.

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{ok, run_in, stderr, BIN};
use tensorcast::io::{write_file, Format, NamedTensor};
use tensorcast::{Tensor, TensorShape};
use tensorcast_testkit::files::dir_entries;

fn temp_dir(test: &str) -> std::path::PathBuf {
    crate::common::temp_dir(&format!("outputs-{test}"))
}

fn vector(n: usize) -> Tensor {
    let v: Vec<f32> = (0..n).map(|i| i as f32).collect();
    Tensor::from_vec(v, TensorShape::new(&[n as i64]).unwrap()).unwrap()
}

/// An npy file of `vector(n)` at `dir/file`.
fn write_vector(dir: &Path, file: &str, n: usize) {
    write_file(
        &dir.join(file),
        Format::Npy,
        &[NamedTensor::new("v", vector(n))],
    )
    .unwrap();
}

/// Every output format `convert` writes: the output's name and the flags that ask for it;
/// the files it makes (a checkpoint is two).
const FORMATS: [(&str, &str, &[&str]); 9] = [
    ("npy", "out.npy", &["out.npy"]),
    ("npz", "out.npz", &["out.npz"]),
    ("safetensors", "out.safetensors", &["out.safetensors"]),
    ("pb", "out.pb", &["out.pb"]),
    ("tfrecord", "out.tfrecord", &["out.tfrecord"]),
    (
        "checkpoint",
        "out",
        &["out.data-00000-of-00001", "out.index"],
    ),
    ("parquet", "out.parquet", &["out.parquet"]),
    ("arrow", "out.arrow", &["out.arrow"]),
    ("arrow-stream", "out.arrows", &["out.arrows"]),
];

/// The bytes of each of `files` in `dir`.
fn contents(dir: &Path, files: &[&str]) -> Vec<Vec<u8>> {
    files
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect()
}

/// Converts a small file to `out` in `format` (the old output), then starts converting a
/// 256 MiB one over it, waits for the write's temporary file to appear, sends `signal` with
/// kill(1), and checks that the process died of it leaving the old output, byte for byte,
/// and no temporary file.
fn interrupted(format: &str, out: &str, files: &[&str], signal: &str, number: i32) {
    let dir = temp_dir(&format!("signal-{format}-{signal}"));
    write_vector(&dir, "big.npy", 64 << 20);
    write_vector(&dir, "small.npy", 2);
    let old_output = || {
        ok(&run_in(
            &dir,
            &["convert", "small.npy", out, "--format", format],
        ))
    };
    old_output();
    let old = contents(&dir, files);
    let mut expected: Vec<String> = files.iter().map(|f| f.to_string()).collect();
    expected.extend(["big.npy".to_string(), "small.npy".to_string()]);
    expected.sort();
    assert_eq!(dir_entries(&dir), expected);
    for _attempt in 0..5 {
        let mut child = Command::new(BIN)
            .args(["convert", "big.npy", out, "--format", format])
            .current_dir(&dir)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let mut seen = false;
        while start.elapsed() < Duration::from_secs(60) {
            if dir_entries(&dir).iter().any(|e| e.starts_with('.')) {
                seen = true;
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        if !seen {
            // The write was too quick to catch; try again.
            let _ = child.wait();
            old_output();
            continue;
        }
        let pid = child.id().to_string();
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap()
            .success();
        let status = child.wait().unwrap();
        if !sent || status.signal().is_none() {
            // The write finished between seeing its temporary file and the signal (a loaded
            // machine): nothing was interrupted; try again.
            old_output();
            continue;
        }
        assert_eq!(status.signal(), Some(number), "{format}: {status:?}");
        assert_eq!(
            dir_entries(&dir),
            expected,
            "{format}: no temporary file is left"
        );
        assert!(
            contents(&dir, files) == old,
            "{format}: the old output is intact"
        );
        return;
    }
    panic!("{format}: never caught the write in progress");
}

#[test]
fn every_output_format_interrupted_by_sigterm_leaves_no_temp_file() {
    for (format, out, files) in FORMATS {
        interrupted(format, out, files, "TERM", 15);
    }
}

#[test]
fn sigint_during_a_write_removes_the_temporary_file() {
    interrupted("npy", "out.npy", &["out.npy"], "INT", 2);
}

#[test]
fn sighup_during_a_write_removes_the_temporary_file() {
    interrupted("tfrecord", "out.tfrecord", &["out.tfrecord"], "HUP", 1);
}

#[test]
fn tfrecord_output_to_dev_null_keeps_the_device() {
    let dir = temp_dir("dev-null");
    write_vector(&dir, "a.npy", 1000);
    // Tensors to TFRecord, and records copied from TFRecord to TFRecord.
    ok(&run_in(&dir, &["convert", "a.npy", "a.tfrecord"]));
    for args in [
        [
            "convert",
            "a.npy",
            "-o",
            "/dev/null",
            "--format",
            "tfrecord",
        ],
        [
            "convert",
            "a.tfrecord",
            "-o",
            "/dev/null",
            "--format",
            "tfrecord",
        ],
    ] {
        let o = run_in(&dir, &args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let m = std::fs::symlink_metadata("/dev/null").unwrap();
        assert!(m.file_type().is_char_device(), "{args:?}");
    }
    // And every other format that is one file.
    for (format, _, files) in FORMATS {
        if files.len() > 1 {
            continue;
        }
        let o = run_in(
            &dir,
            &["convert", "a.npy", "-o", "/dev/null", "--format", format],
        );
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        let m = std::fs::symlink_metadata("/dev/null").unwrap();
        assert!(m.file_type().is_char_device(), "{format}");
    }
    assert_eq!(dir_entries(&dir), ["a.npy", "a.tfrecord"]);
}

#[test]
fn tfrecord_output_to_fifo_streams_and_keeps_it() {
    let dir = temp_dir("fifo");
    write_vector(&dir, "a.npy", 1000);
    ok(&run_in(&dir, &["convert", "a.npy", "want.tfrecord"]));
    let fifo = dir.join("out.tfrecord");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    ok(&run_in(&dir, &["convert", "a.npy", "out.tfrecord"]));
    let got = reader.join().unwrap();
    assert_eq!(got, std::fs::read(dir.join("want.tfrecord")).unwrap());
    let m = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(m.file_type().is_fifo());
    assert_eq!(
        dir_entries(&dir),
        ["a.npy", "out.tfrecord", "want.tfrecord"]
    );
}

#[test]
fn tfrecord_output_to_symlink_writes_through() {
    let dir = temp_dir("symlink");
    write_vector(&dir, "a.npy", 10);
    ok(&run_in(&dir, &["convert", "a.npy", "want.tfrecord"]));
    std::fs::write(dir.join("real.tfrecord"), b"old").unwrap();
    std::os::unix::fs::symlink("real.tfrecord", dir.join("link.tfrecord")).unwrap();
    ok(&run_in(&dir, &["convert", "a.npy", "link.tfrecord"]));
    let m = std::fs::symlink_metadata(dir.join("link.tfrecord")).unwrap();
    assert!(m.file_type().is_symlink());
    assert_eq!(
        std::fs::read(dir.join("real.tfrecord")).unwrap(),
        std::fs::read(dir.join("want.tfrecord")).unwrap()
    );
    assert_eq!(
        dir_entries(&dir),
        ["a.npy", "link.tfrecord", "real.tfrecord", "want.tfrecord"]
    );
}

/// The permission bits of `dir/file`.
fn mode(dir: &Path, file: &str) -> u32 {
    std::fs::metadata(dir.join(file))
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn tfrecord_output_mode_follows_umask() {
    let dir = temp_dir("umask");
    write_vector(&dir, "a.npy", 10);
    for (umask, want) in [("027", 0o640), ("002", 0o664), ("077", 0o600)] {
        for (format, out, files) in FORMATS {
            for f in files {
                let _ = std::fs::remove_file(dir.join(f));
            }
            let o = Command::new("sh")
                .args([
                    "-c",
                    &format!("umask {umask}; exec {BIN} convert a.npy {out} --format {format}"),
                ])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert!(o.status.success(), "{format}: {}", stderr(&o));
            for f in files {
                assert_eq!(mode(&dir, f), want, "{format} {f} under umask {umask}");
            }
        }
    }
}

#[test]
fn tfrecord_output_replacing_a_file_keeps_its_mode() {
    let dir = temp_dir("keep-mode");
    write_vector(&dir, "a.npy", 10);
    for (format, out, files) in FORMATS {
        ok(&run_in(
            &dir,
            &["convert", "a.npy", out, "--format", format],
        ));
        for f in files {
            std::fs::set_permissions(dir.join(f), std::fs::Permissions::from_mode(0o604)).unwrap();
        }
        ok(&run_in(
            &dir,
            &["convert", "a.npy", out, "--format", format],
        ));
        for f in files {
            assert_eq!(mode(&dir, f), 0o604, "{format} {f}");
        }
    }
}
