//! The library's tensor functions: bitcast, reinterpret_cast_to, broadcast_to, cast, the eleven
//! element-wise ops, and `serialize_tensor` / `parse_tensor`. Each releases the GIL while it
//! runs.

use bytes::Bytes;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tensorcast_core::{DataType, Tensor};
use tensorcast_kernels::elementwise::{binary, BinaryOp};

use crate::dtypes::dtype_arg;
use crate::errors::ResultExt;
use crate::tensor::{shape_arg, tensor_arg, PyTensor};

/// `tf.bitcast(input, type)`: the same bytes as `type`, without copying. A wider type takes
/// the last dimension (which must be the size ratio); a narrower one adds one.
///
/// >>> import numpy as np, tensorcast as tc
/// >>> tc.bitcast(np.array([1.0], np.float32), "uint8").numpy()
/// array([[  0,   0, 128,  63]], dtype=uint8)
#[pyfunction]
pub(crate) fn bitcast(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    r#type: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    run_with_dtype(py, input, r#type, tensorcast_kernels::bitcast::bitcast)
}

/// Ascend TIK's `reinterpret_cast_to(dtype)`: the same bytes as `dtype`, the last dimension
/// scaled by the size ratio, without copying.
///
/// >>> import numpy as np, tensorcast as tc
/// >>> tc.reinterpret_cast_to(np.zeros(4, np.float16), "uint32").shape
/// (2,)
#[pyfunction]
pub(crate) fn reinterpret_cast_to(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    dtype: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    let kernel = tensorcast_kernels::bitcast::reinterpret::reinterpret_cast_to;
    run_with_dtype(py, input, dtype, kernel)
}

/// `tf.broadcast_to(input, shape)`.
///
/// >>> import numpy as np, tensorcast as tc
/// >>> tc.broadcast_to(np.array([1, 2, 3], np.int32), [2, 3]).numpy()
/// array([[1, 2, 3],
///        [1, 2, 3]], dtype=int32)
#[pyfunction]
pub(crate) fn broadcast_to(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    let t = tensor_arg(input)?;
    let s = shape_arg(shape)?;
    let out = py.detach(move || tensorcast_kernels::broadcast::broadcast_to(&t, &s));
    Ok(PyTensor::new(out.py()?))
}

/// `tf.cast(x, dtype)`, with TensorFlow's results (its rounding, saturation and NaN rules).
///
/// >>> import numpy as np, tensorcast as tc
/// >>> tc.cast(np.array([1.7, -2.5], np.float32), "int32").numpy()
/// array([ 1, -2], dtype=int32)
#[pyfunction]
pub(crate) fn cast(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    dtype: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    run_with_dtype(py, x, dtype, tensorcast_kernels::cast::cast)
}

/// Runs a kernel of a tensor and a dtype (`Bitcast`, `Cast`, ...) with the GIL released.
fn run_with_dtype(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    dtype: &Bound<'_, PyAny>,
    kernel: fn(&Tensor, DataType) -> tensorcast_core::Result<Tensor>,
) -> PyResult<PyTensor> {
    let t = tensor_arg(input)?;
    let d = dtype_arg(dtype)?;
    let out = py.detach(move || kernel(&t, d));
    Ok(PyTensor::new(out.py()?))
}

/// Runs one element-wise op with the GIL released.
fn run_binary(
    py: Python<'_>,
    op: BinaryOp,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    let (a, b): (Tensor, Tensor) = (tensor_arg(x)?, tensor_arg(y)?);
    let out = py.detach(move || binary(op, &a, &b, true));
    Ok(PyTensor::new(out.py()?))
}

macro_rules! binary_fn {
    ($($name:ident => $op:ident, $doc:literal;)*) => {
        $(
            #[doc = $doc]
            #[pyfunction]
            pub(crate) fn $name(
                py: Python<'_>,
                x: &Bound<'_, PyAny>,
                y: &Bound<'_, PyAny>,
            ) -> PyResult<PyTensor> {
                run_binary(py, BinaryOp::$op, x, y)
            }
        )*
        /// Registers the element-wise functions.
        pub(crate) fn add_binary(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $( m.add_function(wrap_pyfunction!($name, m)?)?; )*
            Ok(())
        }
    };
}

binary_fn! {
    add => AddV2, "`tf.add(x, y)` (`AddV2`), broadcasting.\n\n>>> import numpy as np, tensorcast as tc\n>>> tc.add(np.array([1, 2], np.int32), np.array([10], np.int32)).numpy()\narray([11, 12], dtype=int32)";
    subtract => Sub, "`tf.subtract(x, y)` (`Sub`), broadcasting.";
    multiply => Mul, "`tf.multiply(x, y)` (`Mul`), broadcasting.";
    maximum => Maximum, "`tf.maximum(x, y)`, broadcasting (NaN if either is NaN).";
    minimum => Minimum, "`tf.minimum(x, y)`, broadcasting (NaN if either is NaN).";
    equal => Equal, "`tf.equal(x, y)`: a bool tensor, broadcasting.";
    not_equal => NotEqual, "`tf.not_equal(x, y)`: a bool tensor, broadcasting.";
    less => Less, "`tf.less(x, y)`: a bool tensor, broadcasting.";
    less_equal => LessEqual, "`tf.less_equal(x, y)`: a bool tensor, broadcasting.";
    greater => Greater, "`tf.greater(x, y)`: a bool tensor, broadcasting.";
    greater_equal => GreaterEqual, "`tf.greater_equal(x, y)`: a bool tensor, broadcasting.";
}

/// `tf.io.serialize_tensor(tensor)`: the `TensorProto` bytes TensorFlow writes.
///
/// >>> import numpy as np, tensorcast as tc
/// >>> tc.io.parse_tensor(tc.io.serialize_tensor(np.array([1, 2], np.int64)), "int64").numpy()
/// array([1, 2])
#[pyfunction]
pub(crate) fn serialize_tensor<'py>(
    py: Python<'py>,
    tensor: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let t = tensor_arg(tensor)?;
    let bytes = py
        .detach(move || tensorcast_proto::serialize_tensor(&t))
        .py()?;
    Ok(PyBytes::new(py, &bytes))
}

/// `tf.io.parse_tensor(serialized, out_type)`: a serialized `TensorProto` back to a tensor.
#[pyfunction]
pub(crate) fn parse_tensor(
    py: Python<'_>,
    serialized: &[u8],
    out_type: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    let d = dtype_arg(out_type)?;
    let bytes = Bytes::copy_from_slice(serialized);
    let t = py
        .detach(move || tensorcast_proto::parse_tensor(bytes, d))
        .py()?;
    Ok(PyTensor::new(t))
}

/// `tensorcast.from_dlpack(x)`: a tensor over the memory of any DLPack producer (numpy 2,
/// JAX, PyTorch on the CPU), without copying.
///
/// >>> import numpy as np, tensorcast as tc
/// >>> a = np.arange(3, dtype=np.int32)
/// >>> t = tc.from_dlpack(a)
/// >>> t.data_ptr == a.ctypes.data
/// True
#[pyfunction]
pub(crate) fn from_dlpack(x: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    let (t, _read_only) = crate::dlpack::import(x)?;
    Ok(PyTensor::new(t))
}
