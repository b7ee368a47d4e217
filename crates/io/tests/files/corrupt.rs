//! Truncated, corrupted and hostile inputs give errors, never panics.

use tensorcast_core::DataType;
use tensorcast_io::{
    npy, npz, read_bytes, read_file, safetensors, tensorproto, ErrorKind, Format, NamedTensor,
};

use crate::common::pattern;

fn samples() -> Vec<(&'static str, Vec<u8>)> {
    let many = vec![
        NamedTensor::new("a", pattern(DataType::FLOAT, &[3, 2])),
        NamedTensor::new("b", pattern(DataType::BOOL, &[5])),
        NamedTensor::new("c", pattern(DataType::COMPLEX64, &[2])),
    ];
    let st_many: Vec<NamedTensor> = many
        .iter()
        .cloned()
        .chain([NamedTensor::new("d", pattern(DataType::BFLOAT16, &[3]))])
        .collect();
    vec![
        (
            "x.npy",
            npy::write(&pattern(DataType::INT32, &[2, 3])).unwrap(),
        ),
        ("b.npy", npy::write(&pattern(DataType::BOOL, &[9])).unwrap()),
        (
            "s.npz",
            npz::write(&many, npz::Compression::Stored).unwrap(),
        ),
        (
            "d.npz",
            npz::write(&many, npz::Compression::Deflated).unwrap(),
        ),
        ("w.safetensors", safetensors::write(&st_many, None).unwrap()),
        (
            "t.pb",
            tensorproto::write(&pattern(DataType::DOUBLE, &[4])).unwrap(),
        ),
        (
            "s.pb",
            tensorproto::write(&pattern(DataType::STRING, &[3])).unwrap(),
        ),
    ]
}

#[test]
fn every_truncation_is_an_error_not_a_panic() {
    for (name, bytes) in samples() {
        assert!(read_bytes(bytes.clone().into(), name).is_ok(), "{name}");
        for len in 0..bytes.len() {
            let r = read_bytes(bytes[..len].to_vec().into(), name);
            // A cut-off protobuf can still be a valid (shorter) proto: the TensorProto rules
            // then fill the missing values. Every other format must notice.
            if !name.ends_with(".pb") {
                assert!(r.is_err(), "{name} truncated to {len} bytes read fine");
            }
        }
    }
}

#[test]
fn every_single_byte_corruption_is_handled_without_panics() {
    for (name, bytes) in samples() {
        for pos in 0..bytes.len() {
            for pattern in [0x00u8, 0xff, 0x80, b'9', b'{', b','] {
                let mut b = bytes.clone();
                if b[pos] == pattern {
                    continue;
                }
                b[pos] = pattern;
                let _ = read_bytes(b.into(), name);
            }
        }
    }
}

#[test]
fn random_bytes_are_handled_without_panics() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let prefixes: [&[u8]; 5] = [
        b"\x93NUMPY\x01\x00",
        b"PK\x03\x04",
        b"\x40\0\0\0\0\0\0\0{",
        b"\x08\x01",
        b"",
    ];
    for i in 0..4000 {
        let len = (next() % 200) as usize;
        let mut b = prefixes[i % prefixes.len()].to_vec();
        b.extend((0..len).map(|_| next() as u8));
        for format in Format::ALL {
            let _ =
                tensorcast_io::read_as(tensorcast_buffer::Buffer::from_vec(b.clone()), format, "x");
        }
    }
}

#[test]
fn hostile_headers_name_the_problem() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "x.npy",
            b"\x93NUMPY\x02\x00\xff\xff\xff\x7f".to_vec(),
            "Header info length (2147483647) is large",
        ),
        ("x.npy", b"\x93NUM".to_vec(), "truncated data"),
        (
            "x.npy",
            [
                &b"\x93NUMPY\x01\x00\x3b\x00"[..],
                b"{'descr': '<U10', 'fortran_order': False, 'shape': (1,), }\n",
            ]
            .concat(),
            "unsupported dtype '<U10'",
        ),
        (
            "x.safetensors",
            [&u64::MAX.to_le_bytes()[..], b"{}"].concat(),
            "header too long",
        ),
        ("x.npz", b"PK\x03\x04garbage".to_vec(), "zip"),
        ("x.bin", b"plain text".to_vec(), "unknown format"),
    ];
    for (name, bytes, want) in cases {
        let err = read_bytes(bytes.into(), name).unwrap_err().to_string();
        assert!(err.contains(want), "{name}: {err}");
        assert!(!err.contains('\n'), "one line: {err}");
    }
}

#[test]
fn missing_files_and_directories_are_io_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = read_file(&dir.path().join("nope.npy")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
    assert!(err.to_string().starts_with("cannot open: "), "{err}");
    let err = read_file(dir.path()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
    let empty = dir.path().join("empty.npy");
    std::fs::write(&empty, b"").unwrap();
    assert!(read_file(&empty).is_err());
}

#[test]
fn npz_zip_bomb_declaration_is_refused() {
    // A deflated member whose declared size is far beyond what its compressed bytes can give.
    let t = vec![NamedTensor::new("z", pattern(DataType::UINT8, &[100_000]))];
    let mut bytes = npz::write(&t, npz::Compression::Deflated).unwrap();
    // Patch the uncompressed size in the central directory entry (offset 24 of it).
    let cd = bytes.windows(4).rposition(|w| w == b"PK\x01\x02").unwrap();
    bytes[cd + 24..cd + 28].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = npz::read(tensorcast_buffer::Buffer::from_vec(bytes)).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("member 'z.npy' declares 4294967295 bytes from ")
            && msg.ends_with(" compressed, more than deflate can produce"),
        "{msg}"
    );
}
