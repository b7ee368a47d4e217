//! Helpers shared by the file tests: deterministic tensors of every dtype, Python fixtures.

use std::path::Path;
use std::process::Command;

use tensorcast_buffer::Buffer;
use tensorcast_core::{DataType, TString, Tensor, TensorShape};

/// A deterministic tensor of `dtype` and `dims` whose bytes vary element by element and are
/// valid for the dtype (bools 0/1, sub-byte integers in range).
pub fn pattern(dtype: DataType, dims: &[i64]) -> Tensor {
    let shape = TensorShape::new(dims).unwrap();
    let n = shape.num_elements() as usize;
    if dtype == DataType::STRING {
        let v: Vec<TString> = (0..n)
            .map(|i| TString::from(format!("s{i}-{}", "x".repeat(i % 4))))
            .collect();
        return Tensor::from_vec(v, &shape).unwrap();
    }
    let size = dtype.size();
    let bytes: Vec<u8> = (0..n * size)
        .map(|i| {
            let b = (i as u32).wrapping_mul(37).wrapping_add(11) as u8;
            match dtype {
                DataType::BOOL => (i % 3 == 1) as u8,
                DataType::INT4 => ((b & 0x0f) as i8).wrapping_shl(4).wrapping_shr(4) as u8,
                DataType::UINT4 | DataType::FLOAT4_E2M1FN => b & 0x0f,
                DataType::INT2 => ((b & 0x03) as i8).wrapping_shl(6).wrapping_shr(6) as u8,
                DataType::UINT2 => b & 0x03,
                // Any bit pattern (NaNs included): comparisons are bitwise.
                _ => b,
            }
        })
        .collect();
    Tensor::from_buffer(dtype, &shape, Buffer::copy_from_slice(&bytes).unwrap()).unwrap()
}

/// The numpy dtypes (tensorcast dtype, numpy name).
pub const NUMPY_DTYPES: &[(DataType, &str)] = &[
    (DataType::BOOL, "bool"),
    (DataType::INT8, "int8"),
    (DataType::INT16, "int16"),
    (DataType::INT32, "int32"),
    (DataType::INT64, "int64"),
    (DataType::UINT8, "uint8"),
    (DataType::UINT16, "uint16"),
    (DataType::UINT32, "uint32"),
    (DataType::UINT64, "uint64"),
    (DataType::HALF, "float16"),
    (DataType::FLOAT, "float32"),
    (DataType::DOUBLE, "float64"),
    (DataType::COMPLEX64, "complex64"),
    (DataType::COMPLEX128, "complex128"),
];

/// Runs a Python script with [`python_interpreter`]; `None` (with a message saying why the test
/// is skipped) when the interpreter or one of `modules` is not importable - except with
/// `CI=true`, where a missing peer fails the test. Panics if the script itself fails.
pub fn python(modules: &[&str], script: &str) -> Option<String> {
    let python = tensorcast_testkit::peers::python_with(&modules.join(", "))?;
    Some(tensorcast_testkit::peers::stdout_of(
        Command::new(&python).args(["-c", script]),
    ))
}

/// A path as a python string literal.
pub fn py_path(p: &Path) -> String {
    format!("{:?}", p.to_str().unwrap())
}

/// True if `t`'s data lies inside `file`'s bytes `range` (its buffer is part of the map).
pub fn is_inside(t: &Tensor, range: std::ops::Range<usize>) -> bool {
    let p = t.data_ptr() as usize;
    t.buffer().is_some() && range.contains(&p) && p + t.total_bytes() <= range.end
}
