//! Format detection from content, the extension only breaking ties.

use std::path::Path;

use tensorcast_core::DataType;
use tensorcast_io::{detect_format, read_file_contents, write_file, Format, NamedTensor};

use crate::common::pattern;

#[test]
fn content_wins_over_a_misleading_extension() {
    let dir = tempfile::tempdir().unwrap();
    let one = vec![NamedTensor::new("x", pattern(DataType::FLOAT, &[2]))];
    let two = vec![
        NamedTensor::new("x", pattern(DataType::FLOAT, &[2])),
        NamedTensor::new("y", pattern(DataType::INT8, &[3])),
    ];
    for format in Format::ALL {
        let ts = if format.is_single_tensor() {
            &one
        } else {
            &two
        };
        // Named with the wrong extension, and with none.
        for name in ["data.safetensors", "data.npy", "data"] {
            let p = dir.path().join(name);
            write_file(&p, format, ts).unwrap();
            let c = read_file_contents(&p).unwrap();
            assert_eq!(c.format, format, "{format} written to {name}");
            assert_eq!(c.tensors.len(), ts.len());
        }
    }
}

#[test]
fn extension_is_used_when_content_matches_nothing() {
    assert_eq!(
        detect_format(b"", Some(Path::new("a.npz"))),
        Some(Format::Npz)
    );
    assert_eq!(
        detect_format(b"\xff\xff", Some(Path::new("a.pb"))),
        Some(Format::TensorProto)
    );
    assert_eq!(detect_format(b"\xff\xff", Some(Path::new("a.txt"))), None);
}
