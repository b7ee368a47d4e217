//! Write then read, per format, for every dtype the format holds; refusals for the rest.

use tensorcast_buffer::Buffer;
use tensorcast_core::DataType;
use tensorcast_io::{
    npy, npz, read_file, safetensors, tensorproto, write_file, ErrorKind, Format, NamedTensor,
};

use crate::common::{pattern, NUMPY_DTYPES};

const SHAPES: &[&[i64]] = &[&[], &[0], &[5], &[2, 3], &[2, 0, 3], &[3, 1, 2]];

#[test]
fn npy_every_numpy_dtype_and_shape_round_trips() {
    for &(dtype, _) in NUMPY_DTYPES {
        for dims in SHAPES {
            let t = pattern(dtype, dims);
            let bytes = npy::write(&t).unwrap();
            assert_eq!(bytes.len() % 64, t.total_bytes() % 64, "{dtype:?}");
            let back = npy::read(Buffer::from_vec(bytes)).unwrap();
            assert_eq!(back, t, "{} {dims:?}", dtype.name());
        }
    }
}

#[test]
fn npy_write_refuses_dtypes_numpy_has_no_code_for() {
    for dtype in DataType::all() {
        if NUMPY_DTYPES.iter().any(|(d, _)| *d == dtype)
            || dtype == DataType::RESOURCE
            || dtype == DataType::VARIANT
            || dtype == DataType::STRING
        {
            continue;
        }
        let t = pattern(dtype, &[2]);
        let err = npy::write(&t).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unsupported, "{}", dtype.name());
        assert!(
            err.to_string()
                .starts_with(&format!("unsupported dtype {} for .npy", dtype.name())),
            "{err}"
        );
    }
}

#[test]
fn npz_every_numpy_dtype_round_trips_stored_and_deflated_in_order() {
    let tensors: Vec<NamedTensor> = NUMPY_DTYPES
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &(d, name))| NamedTensor::new(name, pattern(d, SHAPES[i % SHAPES.len()])))
        .collect();
    for c in [npz::Compression::Stored, npz::Compression::Deflated] {
        let bytes = npz::write(&tensors, c).unwrap();
        let back = npz::read(Buffer::from_vec(bytes)).unwrap();
        assert_eq!(back, tensors, "{c:?}");
    }
}

#[test]
fn npz_duplicate_names_are_refused() {
    let t = NamedTensor::new("a", pattern(DataType::FLOAT, &[1]));
    let err = npz::write(&[t.clone(), t], npz::Compression::Stored).unwrap_err();
    assert_eq!(err.to_string(), "duplicate tensor name 'a'");
}

#[test]
fn safetensors_every_format_dtype_round_trips_with_metadata() {
    let mut tensors = Vec::new();
    for (i, (name, dtype)) in safetensors::DTYPES.iter().enumerate() {
        let Some(dtype) = dtype else { continue };
        // F4 packs two per byte: keep element counts even.
        let dims: &[i64] = if *dtype == DataType::FLOAT4_E2M1FN {
            &[2, 3, 2]
        } else {
            SHAPES[i % SHAPES.len()]
        };
        tensors.push(NamedTensor::new(format!("t.{name}"), pattern(*dtype, dims)));
    }
    let mut meta = std::collections::BTreeMap::new();
    meta.insert("format".to_string(), "pt".to_string());
    meta.insert("quote\"d".to_string(), "ü\n".to_string());
    let bytes = safetensors::write(&tensors, Some(&meta)).unwrap();
    let (back, back_meta) = safetensors::read_with_metadata(Buffer::from_vec(bytes)).unwrap();
    assert_eq!(back_meta, meta);
    assert_eq!(back.len(), tensors.len());
    for t in &tensors {
        let b = back.iter().find(|b| b.name == t.name).unwrap();
        assert_eq!(b, t, "{}", t.name);
    }
    // File order: decreasing element size (packed F4 last), stable.
    let aligns: Vec<usize> = back
        .iter()
        .map(|t| match t.tensor.dtype() {
            DataType::FLOAT4_E2M1FN => 0,
            d => d.size(),
        })
        .collect();
    assert!(aligns.windows(2).all(|w| w[0] >= w[1]), "{aligns:?}");
}

#[test]
fn safetensors_write_refuses_dtypes_without_a_name() {
    for dtype in [
        DataType::COMPLEX128,
        DataType::QINT8,
        DataType::INT4,
        DataType::UINT2,
        DataType::FLOAT8_E4M3B11FNUZ,
        DataType::STRING,
    ] {
        let t = NamedTensor::new("x", pattern(dtype, &[2]));
        let err = safetensors::write(&[t], None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unsupported, "{}", dtype.name());
        assert!(
            err.to_string().starts_with("tensor 'x': unsupported dtype"),
            "{err}"
        );
    }
    let odd = NamedTensor::new("f4", pattern(DataType::FLOAT4_E2M1FN, &[3]));
    assert!(safetensors::write(&[odd], None).is_err());
}

#[test]
fn tensorproto_every_dtype_round_trips() {
    for dtype in DataType::all() {
        if dtype == DataType::RESOURCE || dtype == DataType::VARIANT {
            continue;
        }
        for dims in [&[][..], &[4], &[2, 3]] {
            let t = pattern(dtype, dims);
            let bytes = tensorproto::write(&t).unwrap();
            let back = tensorproto::read(Buffer::from_vec(bytes)).unwrap();
            assert_eq!(back, t, "{} {dims:?}", dtype.name());
        }
    }
}

#[test]
fn files_round_trip_through_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let one = vec![NamedTensor::new("x", pattern(DataType::FLOAT, &[3, 4]))];
    let many = vec![
        NamedTensor::new("a", pattern(DataType::INT64, &[2])),
        NamedTensor::new("b", pattern(DataType::HALF, &[3, 3])),
        NamedTensor::new("c", pattern(DataType::BOOL, &[7])),
    ];
    for format in Format::ALL {
        let path = dir.path().join(format!("x.{}", format.extension()));
        let tensors = if format.is_single_tensor() {
            &one
        } else {
            &many
        };
        write_file(&path, format, tensors).unwrap();
        let back = read_file(&path).unwrap();
        assert_eq!(&back, tensors, "{format}");
        // A single-tensor format refuses several tensors.
        if format.is_single_tensor() {
            let err = write_file(&path, format, &many).unwrap_err();
            assert!(err.to_string().contains("exactly one tensor"), "{err}");
        }
    }
}
