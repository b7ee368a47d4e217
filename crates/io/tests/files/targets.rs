//! Write targets that are not plain files, permissions, and what a write refuses.

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use tensorcast_core::{DataType, Tensor, TensorShape};
use tensorcast_io::{
    read_file, read_file_contents_with, write_file, ErrorKind, Format, NamedTensor, ReadMode,
    ReadOptions,
};

use tensorcast_testkit::files::dir_entries;

use crate::common::pattern;

fn one() -> Vec<NamedTensor> {
    vec![NamedTensor::new("x", pattern(DataType::INT32, &[5]))]
}

fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
    assert!(ok, "mkfifo {}", p.display());
}

/// The process's umask, from /proc (Linux).
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
    u32::from_str_radix(line.split_whitespace().nth(1).unwrap(), 8).unwrap()
}

#[test]
fn write_through_a_symlink_replaces_its_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.npy");
    let link = dir.path().join("link.npy");
    write_file(
        &real,
        Format::Npy,
        &[NamedTensor::new("o", pattern(DataType::INT8, &[2]))],
    )
    .unwrap();
    std::os::unix::fs::symlink("real.npy", &link).unwrap();
    write_file(&link, Format::Npy, &one()).unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(read_file(&real).unwrap()[0].tensor, one()[0].tensor);
    assert_eq!(dir_entries(dir.path()), ["link.npy", "real.npy"]);
    // A dangling link creates the file it names (as `cp` does).
    let dangling = dir.path().join("dangling.npy");
    std::os::unix::fs::symlink("made.npy", &dangling).unwrap();
    write_file(&dangling, Format::Npy, &one()).unwrap();
    assert!(dir.path().join("made.npy").is_file());
    assert!(std::fs::symlink_metadata(&dangling)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn write_to_a_fifo_streams_into_it_and_leaves_the_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.npy");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    write_file(&fifo, Format::Npy, &one()).unwrap();
    let got = reader.join().unwrap();
    assert_eq!(got, tensorcast_io::npy::write(&one()[0].tensor).unwrap());
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(dir_entries(dir.path()), ["pipe.npy"]);
}

#[test]
fn write_to_a_character_device_streams_and_never_replaces_it() {
    let null = Path::new("/dev/null");
    write_file(null, Format::Npz, &one()).unwrap();
    assert!(std::fs::metadata(null)
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn write_to_a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("d.npy");
    std::fs::create_dir(&sub).unwrap();
    let err = write_file(&sub, Format::Npy, &one()).unwrap_err();
    assert!(err.to_string().contains("is a directory"), "{err}");
    assert!(sub.is_dir());
}

#[test]
fn a_new_file_gets_0666_minus_the_umask_and_a_replaced_one_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("n.safetensors");
    write_file(&p, Format::Safetensors, &one()).unwrap();
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666 & !umask());
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    write_file(&p, Format::Safetensors, &one()).unwrap();
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

#[test]
fn an_uninitialized_tensor_is_refused_and_the_old_file_kept() {
    let dir = tempfile::tempdir().unwrap();
    for format in [
        Format::Npy,
        Format::Npz,
        Format::Safetensors,
        Format::TensorProto,
    ] {
        let p = dir.path().join(format!("u.{}", format.extension()));
        write_file(&p, format, &one()).unwrap();
        let before = std::fs::read(&p).unwrap();
        let t = Tensor::unallocated(DataType::FLOAT, &TensorShape::new(&[3]).unwrap());
        let err = write_file(&p, format, &[NamedTensor::new("u", t)]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unsupported, "{format}: {err}");
        assert!(err.to_string().contains("not initialized"), "{err}");
        assert_eq!(std::fs::read(&p).unwrap(), before, "{format}");
    }
}

#[test]
fn a_fifo_is_read_as_a_stream_and_its_limit_is_enforced() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("in.npy");
    mkfifo(&fifo);
    let bytes = tensorcast_io::npy::write(&one()[0].tensor).unwrap();
    let feed = |bytes: Vec<u8>| {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let _ = std::fs::write(fifo, bytes);
        })
    };
    let w = feed(bytes.clone());
    let got = read_file_contents_with(&fifo, &ReadOptions::default()).unwrap();
    w.join().unwrap();
    assert_eq!(got.tensors[0].tensor, one()[0].tensor);
    assert_eq!(got.tensors[0].name, "in");
    let w = feed(bytes);
    let small = ReadOptions {
        max_stream_bytes: 16,
        ..ReadOptions::default()
    };
    let err = read_file_contents_with(&fifo, &small).unwrap_err();
    drop(w);
    assert_eq!(err.kind(), ErrorKind::TooLarge);
    assert!(err.to_string().contains("limit of 16 bytes"), "{err}");
}

#[test]
fn read_mode_copies_into_an_aligned_buffer_not_a_map() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.npy");
    write_file(&p, Format::Npy, &one()).unwrap();
    let opts = ReadOptions {
        mode: ReadMode::Read,
        ..ReadOptions::default()
    };
    let got = read_file_contents_with(&p, &opts).unwrap();
    assert_eq!(got.tensors[0].tensor, one()[0].tensor);
    assert_ne!(got.tensors[0].tensor.buffer().unwrap().owner_name(), "mmap");
    assert!(got.tensors[0].tensor.is_aligned());
}
