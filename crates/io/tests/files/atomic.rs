//! Writes are atomic: a failed write leaves the old file byte-identical and no temporary file.

use tensorcast_core::DataType;
use tensorcast_io::{write_file, ErrorKind, Format, NamedTensor};

use tensorcast_testkit::files::dir_entries;

use crate::common::pattern;

fn old_file(dir: &std::path::Path, name: &str) -> (std::path::PathBuf, Vec<u8>) {
    let p = dir.join(name);
    let old = vec![NamedTensor::new("old", pattern(DataType::INT16, &[10]))];
    let format = Format::from_path(&p).unwrap();
    write_file(&p, format, &old).unwrap();
    (p.clone(), std::fs::read(&p).unwrap())
}

#[test]
fn a_refused_dtype_midway_leaves_the_old_file_and_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.npz", "a.safetensors", "a.npy"] {
        let (p, before) = old_file(dir.path(), name);
        let entries = dir_entries(dir.path());
        // The first tensor is fine and gets written; the second has no numpy dtype / no
        // safetensors name (complex128 for safetensors, bfloat16 for numpy).
        let bad = if name.ends_with(".safetensors") {
            DataType::COMPLEX128
        } else {
            DataType::BFLOAT16
        };
        let tensors: Vec<NamedTensor> = if name.ends_with(".npy") {
            vec![NamedTensor::new("x", pattern(bad, &[1000]))]
        } else {
            vec![
                NamedTensor::new("good", pattern(DataType::FLOAT, &[100_000])),
                NamedTensor::new("bad", pattern(bad, &[4])),
            ]
        };
        let format = Format::from_path(&p).unwrap();
        let err = write_file(&p, format, &tensors).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unsupported, "{name}: {err}");
        assert_eq!(std::fs::read(&p).unwrap(), before, "{name}");
        assert_eq!(dir_entries(dir.path()), entries, "{name}");
    }
}

#[test]
fn a_successful_overwrite_replaces_the_file_and_keeps_its_permissions() {
    let dir = tempfile::tempdir().unwrap();
    let (p, before) = old_file(dir.path(), "w.safetensors");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let new = vec![NamedTensor::new("new", pattern(DataType::FLOAT, &[3]))];
    write_file(&p, Format::Safetensors, &new).unwrap();
    assert_ne!(std::fs::read(&p).unwrap(), before);
    assert_eq!(tensorcast_io::read_file(&p).unwrap(), new);
    assert_eq!(dir_entries(dir.path()), vec!["w.safetensors".to_string()]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    // A new file is rw-r--r--.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let q = dir.path().join("fresh.npy");
        write_file(&q, Format::Npy, &new).unwrap();
        let mode = std::fs::metadata(&q).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
    }
}

#[test]
fn a_missing_directory_is_an_error_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("no/such/dir/x.npy");
    let t = vec![NamedTensor::new("x", pattern(DataType::FLOAT, &[3]))];
    let err = write_file(&p, Format::Npy, &t).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
    assert!(
        err.to_string()
            .starts_with("cannot create a temporary file in"),
        "{err}"
    );
    assert!(dir_entries(dir.path()).is_empty());
}

#[cfg(unix)]
#[test]
fn a_read_only_directory_leaves_the_old_file_and_no_temp_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (p, before) = old_file(dir.path(), "ro.npz");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    // Root ignores directory permissions: then there is nothing to test.
    let probe = dir.path().join("probe");
    if std::fs::write(&probe, b"x").is_ok() {
        std::fs::remove_file(&probe).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        eprintln!("SKIPPED: running as root, a read-only directory is still writable");
        return;
    }
    let t = vec![NamedTensor::new("x", pattern(DataType::FLOAT, &[3]))];
    let err = write_file(&p, Format::Npz, &t).unwrap_err();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(err.kind(), ErrorKind::Io);
    assert_eq!(std::fs::read(&p).unwrap(), before);
    assert_eq!(dir_entries(dir.path()), vec!["ro.npz".to_string()]);
}
