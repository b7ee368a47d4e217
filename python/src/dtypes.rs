//! The dtype table of the binding: TensorFlow's dtypes with the numpy (or `ml_dtypes`) dtype that
//! holds each one bit-exactly, and TensorFlow's Python names.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString};
use tensorcast_core::DataType;

use crate::errors::invalid;

/// Where numpy keeps a dtype: numpy itself or the `ml_dtypes` package.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Home {
    /// A numpy dtype name (`"float32"`).
    Numpy,
    /// An `ml_dtypes` attribute (`"bfloat16"`).
    MlDtypes,
}

/// `(dtype, TensorFlow's Python name, numpy's name, home, array-interface typestr of the
/// storage)`. Quantized types are their integers in numpy (TensorFlow's `.numpy()` does the
/// same); `ml_dtypes` types travel as unsigned integers of their width and are viewed as
/// themselves afterwards (the array interface cannot name them).
const TABLE: &[(DataType, &str, &str, Home, &str)] = &[
    (DataType::FLOAT, "float32", "float32", Home::Numpy, "<f4"),
    (DataType::DOUBLE, "float64", "float64", Home::Numpy, "<f8"),
    (DataType::HALF, "float16", "float16", Home::Numpy, "<f2"),
    (DataType::INT8, "int8", "int8", Home::Numpy, "|i1"),
    (DataType::INT16, "int16", "int16", Home::Numpy, "<i2"),
    (DataType::INT32, "int32", "int32", Home::Numpy, "<i4"),
    (DataType::INT64, "int64", "int64", Home::Numpy, "<i8"),
    (DataType::UINT8, "uint8", "uint8", Home::Numpy, "|u1"),
    (DataType::UINT16, "uint16", "uint16", Home::Numpy, "<u2"),
    (DataType::UINT32, "uint32", "uint32", Home::Numpy, "<u4"),
    (DataType::UINT64, "uint64", "uint64", Home::Numpy, "<u8"),
    (DataType::BOOL, "bool", "bool", Home::Numpy, "|b1"),
    (
        DataType::COMPLEX64,
        "complex64",
        "complex64",
        Home::Numpy,
        "<c8",
    ),
    (
        DataType::COMPLEX128,
        "complex128",
        "complex128",
        Home::Numpy,
        "<c16",
    ),
    (DataType::QINT8, "qint8", "int8", Home::Numpy, "|i1"),
    (DataType::QUINT8, "quint8", "uint8", Home::Numpy, "|u1"),
    (DataType::QINT16, "qint16", "int16", Home::Numpy, "<i2"),
    (DataType::QUINT16, "quint16", "uint16", Home::Numpy, "<u2"),
    (DataType::QINT32, "qint32", "int32", Home::Numpy, "<i4"),
    (
        DataType::BFLOAT16,
        "bfloat16",
        "bfloat16",
        Home::MlDtypes,
        "<u2",
    ),
    (
        DataType::FLOAT8_E5M2,
        "float8_e5m2",
        "float8_e5m2",
        Home::MlDtypes,
        "|u1",
    ),
    (
        DataType::FLOAT8_E4M3FN,
        "float8_e4m3fn",
        "float8_e4m3fn",
        Home::MlDtypes,
        "|u1",
    ),
    (
        DataType::FLOAT8_E4M3FNUZ,
        "float8_e4m3fnuz",
        "float8_e4m3fnuz",
        Home::MlDtypes,
        "|u1",
    ),
    (
        DataType::FLOAT8_E4M3B11FNUZ,
        "float8_e4m3b11fnuz",
        "float8_e4m3b11fnuz",
        Home::MlDtypes,
        "|u1",
    ),
    (
        DataType::FLOAT8_E5M2FNUZ,
        "float8_e5m2fnuz",
        "float8_e5m2fnuz",
        Home::MlDtypes,
        "|u1",
    ),
    (
        DataType::FLOAT4_E2M1FN,
        "float4_e2m1fn",
        "float4_e2m1fn",
        Home::MlDtypes,
        "|u1",
    ),
    (DataType::INT4, "int4", "int4", Home::MlDtypes, "|u1"),
    (DataType::UINT4, "uint4", "uint4", Home::MlDtypes, "|u1"),
    (DataType::INT2, "int2", "int2", Home::MlDtypes, "|u1"),
    (DataType::UINT2, "uint2", "uint2", Home::MlDtypes, "|u1"),
    (DataType::STRING, "string", "object", Home::Numpy, "|O"),
];

/// TensorFlow's Python name of a dtype (`tf.float32.name`).
pub(crate) fn py_name(dtype: DataType) -> String {
    TABLE
        .iter()
        .find(|e| e.0 == dtype)
        .map_or_else(|| dtype.name(), |e| e.1.to_string())
}

/// The numpy side of a dtype: name, home, storage typestr.
pub(crate) fn numpy_side(dtype: DataType) -> Option<(&'static str, Home, &'static str)> {
    TABLE.iter().find(|e| e.0 == dtype).map(|e| (e.2, e.3, e.4))
}

/// The numpy dtype object of a tensorcast dtype (importing `ml_dtypes` for its types).
pub(crate) fn numpy_dtype<'py>(py: Python<'py>, dtype: DataType) -> PyResult<Bound<'py, PyAny>> {
    let Some((name, home, _)) = numpy_side(dtype) else {
        return Err(invalid(format!("{} has no numpy dtype", py_name(dtype))));
    };
    let np = py.import("numpy")?;
    match home {
        Home::Numpy => np.getattr("dtype")?.call1((name,)),
        Home::MlDtypes => {
            let ml = py.import("ml_dtypes")?;
            np.getattr("dtype")?.call1((ml.getattr(name)?,))
        }
    }
}

/// The tensorcast dtype of a numpy dtype name (`np.dtype(x).name`): numpy's own names and
/// `ml_dtypes`'; byte and text strings become `string`.
pub(crate) fn from_numpy_name(name: &str) -> Option<DataType> {
    if name == "object" || name.starts_with("bytes") || name.starts_with("str") {
        return Some(DataType::STRING);
    }
    TABLE
        .iter()
        .find(|e| {
            e.2 == name && !matches!(e.1, "qint8" | "quint8" | "qint16" | "quint16" | "qint32")
        })
        .map(|e| e.0)
}

/// A dtype argument: a `tensorcast`/TensorFlow name (`"float32"`, `"bfloat16"`, `"half"`,
/// `"qint8"`), a `DataType` enum number, a numpy dtype or scalar type, an `ml_dtypes` type, or
/// anything with a `.name` that is one of those (a `tf.DType`).
pub(crate) fn dtype_arg(obj: &Bound<'_, PyAny>) -> PyResult<DataType> {
    if let Ok(s) = obj.cast::<PyString>() {
        let s: String = s.extract()?;
        let s = s.as_str();
        return TABLE
            .iter()
            .find(|e| e.1 == s)
            .map(|e| e.0)
            .or_else(|| DataType::parse_lenient(s))
            .or_else(|| from_numpy_name(s))
            .filter(|d| d.is_supported())
            .ok_or_else(|| invalid(format!("Unknown dtype: {s}")));
    }
    if let Ok(n) = obj.cast::<PyInt>() {
        // Any int, however large, that is no dtype's number: `tf.as_dtype`'s TypeError.
        return n
            .extract::<i32>()
            .ok()
            .map(DataType::from_number)
            .filter(|d| d.is_supported())
            .ok_or_else(|| {
                PyTypeError::new_err(format!(
                    "Cannot convert the argument `type_value`: {n} to a TensorFlow DType."
                ))
            });
    }
    let py = obj.py();
    // A numpy dtype, a scalar type or an ml_dtypes type: numpy names it.
    if let Ok(d) = py.import("numpy")?.getattr("dtype")?.call1((obj,)) {
        let name: String = d.getattr("name")?.extract()?;
        return from_numpy_name(&name)
            .ok_or_else(|| invalid(format!("numpy dtype {name} has no TensorFlow dtype")));
    }
    // A tf.DType or anything else with a TensorFlow name.
    let name: String = obj.getattr("name")?.extract()?;
    dtype_arg(&PyString::new(py, &name).into_any())
}
