//! `tensorcast.Tensor` and the hand-off to and from numpy (zero-copy both ways).

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyComplex, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use tensorcast_buffer::Buffer;
use tensorcast_core::{DataType, TString, Tensor, TensorShape};

use crate::dtypes::{self, Home};
use crate::errors::{invalid, ResultExt};
use crate::foreign::{Foreign, Keeper};

/// A TensorFlow tensor: a dtype, a shape and a buffer shared with numpy, JAX and PyTorch
/// without copies.
///
/// `Tensor(value, dtype=None)` adopts a C-contiguous numpy array (or anything `np.asarray`
/// takes) without copying; the array is kept alive by the tensor. String arrays (`object`,
/// `bytes`, `str`) are copied into a `string` tensor.
///
/// >>> import numpy as np, tensorcast as tc
/// >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
/// >>> t = tc.Tensor(a)
/// >>> t.dtype, t.shape
/// ('float32', (2, 3))
/// >>> t
/// Tensor<type: float shape: [2,3] values: [0 1 2]...>
/// >>> np.shares_memory(np.asarray(t), a)
/// True
#[pyclass(module = "tensorcast", name = "Tensor", frozen)]
pub(crate) struct PyTensor {
    pub(crate) inner: Tensor,
    /// The numpy array the tensor adopted, returned as it is by `__array__`.
    pub(crate) source: Option<Py<PyAny>>,
    /// Whether the memory may be written by consumers (an adopted writable numpy array).
    pub(crate) writable: bool,
}

impl PyTensor {
    /// A tensor made in Rust.
    pub(crate) fn new(inner: Tensor) -> Self {
        Self {
            inner,
            source: None,
            writable: false,
        }
    }
}

/// The array interface of a tensor's memory: numpy keeps this object (and so the tensor) alive
/// as the base of the arrays it makes from it.
#[pyclass(module = "tensorcast._native", frozen)]
struct ArrayExport {
    tensor: Tensor,
    typestr: &'static str,
    /// Whether numpy may write through the view: only for memory no one else sees (a buffer
    /// read into for this array alone).
    writable: bool,
}

#[pymethods]
impl ArrayExport {
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let shape = PyTuple::new(py, self.tensor.shape().dim_sizes())?;
        d.set_item("shape", shape)?;
        d.set_item("typestr", self.typestr)?;
        d.set_item("data", (self.tensor.data_ptr() as usize, !self.writable))?;
        d.set_item("version", 3)?;
        Ok(d)
    }
}

/// The tensor as a numpy array: a read-only view of its memory (no copy) for numeric dtypes,
/// an `object` array of `bytes` (a copy) for strings.
/// A 1-D `object` array of one `bytes` per string (TensorFlow's `.numpy()` gives the same),
/// written straight into a fresh array: no list in between, and none of numpy's inspection of
/// each element that building an array from a list costs.
fn string_array<'py>(
    py: Python<'py>,
    np: &Bound<'py, PyModule>,
    strings: &[TString],
) -> PyResult<Bound<'py, PyAny>> {
    let arr = np.getattr("empty")?.call1((strings.len(), "object"))?;
    if strings.is_empty() {
        return Ok(arr);
    }
    let data: usize = arr
        .getattr("__array_interface__")?
        .get_item("data")?
        .get_item(0)?
        .extract()?;
    let slots = data as *mut *mut pyo3::ffi::PyObject;
    for (i, s) in strings.iter().enumerate() {
        let b = PyBytes::new(py, s.as_ref()).into_ptr();
        // SAFETY: `arr` is a C-contiguous 1-D `object` array of `strings.len()` elements that
        // `numpy.empty` just made and only this function references, so `slots` points to that
        // many valid `PyObject*` (each a reference to `None`) and `i` is in range. The GIL is
        // held. Each slot's old reference is released and replaced by the new `bytes`'s own
        // reference, which the array then owns, as numpy's object arrays own their elements.
        unsafe {
            let slot = slots.add(i);
            let old = *slot;
            *slot = b;
            pyo3::ffi::Py_DECREF(old);
        }
    }
    Ok(arr)
}

pub(crate) fn to_numpy<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    numpy_view(py, t.clone(), false)
}

/// The tensor as a numpy array that owns it: a view of its memory, writable when `writable`
/// (the caller's promise that nothing else reads or writes that memory: a buffer just read
/// for this array, as `tf.train.load_checkpoint`'s `get_tensor` returns a fresh writable
/// array); strings as `object` arrays of `bytes`.
pub(crate) fn numpy_view<'py>(
    py: Python<'py>,
    t: Tensor,
    writable: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let t = &t;
    let np = py.import("numpy")?;
    let dtype = t.dtype();
    let shape = PyTuple::new(py, t.shape().dim_sizes())?;
    if dtype == DataType::STRING {
        let strings = t.as_slice::<TString>().py()?;
        return string_array(py, &np, strings)?.call_method1("reshape", (shape,));
    }
    let Some((_, home, typestr)) = dtypes::numpy_side(dtype) else {
        return Err(PyTypeError::new_err(format!(
            "a {} tensor has no numpy form",
            dtypes::py_name(dtype)
        )));
    };
    let np_dtype = dtypes::numpy_dtype(py, dtype)?;
    if t.num_elements() == 0 || t.buffer().is_none() {
        let arr = np.getattr("zeros")?.call1((shape, np_dtype))?;
        if !writable {
            arr.getattr("flags")?.setattr("writeable", false)?;
        }
        return Ok(arr);
    }
    let export = Py::new(
        py,
        ArrayExport {
            tensor: t.clone(),
            typestr,
            writable,
        },
    )?;
    let arr = np.getattr("asarray")?.call1((export,))?;
    if home == Home::MlDtypes {
        arr.call_method1("view", (np_dtype,))
    } else {
        Ok(arr)
    }
}

/// TensorFlow's `ValueError` text for a Python int that does not fit the conversion
/// (`tf.constant(2**63)`, `tf.constant(2**63, tf.int64)`, `tf.cast(2**63, tf.int64)`).
const INT_OUT_OF_RANGE: &str = "Can't convert Python sequence with out-of-range integer to Tensor.";
/// TensorFlow's `ValueError` text for a Python int beyond a double in a sequence of floats
/// (`tf.constant([1.5, 2**2000])`).
const FLOAT_OUT_OF_RANGE: &str =
    "Can't convert Python sequence with a value out of range for a double-precision float.";

/// What a value holds of Python ints (`bool` excluded) and floats, searched through nested
/// lists and tuples: what TensorFlow's conversion of a Python value checks ints against.
#[derive(Default)]
struct PyInts {
    /// A Python int.
    found: bool,
    /// A negative one.
    negative: bool,
    /// One of `[2^63, 2^64)`: beyond int64, within uint64.
    above_i64: bool,
    /// One beyond both int64 and uint64 (below `-2^63`, or `2^64` and up).
    beyond_u64: bool,
    /// One too large for a double (about `2^1024` and up, either sign).
    beyond_f64: bool,
    /// A Python float or complex (TensorFlow then infers a float type).
    floats: bool,
}

impl PyInts {
    /// The ints and floats of `value` (an int, a float, or lists and tuples of them; other
    /// objects, numpy arrays and scalars included, are numpy's to convert).
    fn of(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut out = Self::default();
        out.scan(value, 0)?;
        Ok(out)
    }

    fn scan(&mut self, value: &Bound<'_, PyAny>, depth: usize) -> PyResult<()> {
        if value.is_instance_of::<PyBool>() {
            return Ok(());
        }
        if let Ok(int) = value.cast::<PyInt>() {
            self.found = true;
            if let Ok(v) = int.extract::<i64>() {
                self.negative |= v < 0;
            } else if int.extract::<u64>().is_ok() {
                self.above_i64 = true;
            } else {
                self.beyond_u64 = true;
                self.negative |= int.lt(0)?;
                // `float(int)` raises OverflowError from about 2^1024.
                self.beyond_f64 |= int.extract::<f64>().is_err();
            }
        } else if value.is_instance_of::<PyFloat>() || value.is_instance_of::<PyComplex>() {
            self.floats = true;
        } else if depth <= tensorcast_core::MAX_DIMENSIONS {
            // Deeper nesting (or a list that holds itself) is numpy's to refuse.
            if let Ok(list) = value.cast::<PyList>() {
                for item in list.iter() {
                    self.scan(&item, depth + 1)?;
                }
            } else if let Ok(tuple) = value.cast::<PyTuple>() {
                for item in tuple.iter() {
                    self.scan(&item, depth + 1)?;
                }
            }
        }
        Ok(())
    }

    /// TensorFlow's refusal of these ints as `dtype` (`None`: the dtype TensorFlow infers),
    /// as `tf.constant(value, dtype)` gives it. TensorFlow converts Python numbers to half,
    /// float, double and complex128 through a double; to uint64 as unsigned; to every other
    /// type it converts them to the type it infers (int64 for ints alone, a float type when
    /// floats are among them) and casts. So an int is refused: beyond a double, among floats,
    /// always (`FLOAT_OUT_OF_RANGE`); beyond a double for the double-converted types; beyond
    /// uint64, or negative, for uint64 (where TensorFlow's own conversion raises a SystemError,
    /// or aborts); beyond int64 otherwise, unless floats make the inferred type a float type
    /// and `dtype` is a floating or complex one.
    fn check(&self, dtype: Option<DataType>) -> PyResult<()> {
        if self.floats && self.beyond_f64 {
            return Err(PyValueError::new_err(FLOAT_OUT_OF_RANGE));
        }
        let refused = match dtype {
            Some(DataType::UINT64) => self.negative || self.beyond_u64,
            Some(DataType::HALF | DataType::FLOAT | DataType::DOUBLE | DataType::COMPLEX128) => {
                self.beyond_f64
            }
            None if self.floats => false,
            Some(d) if self.floats && (d.is_floating() || d.is_complex()) => false,
            None | Some(_) => self.above_i64 || self.beyond_u64,
        };
        if refused {
            return Err(PyValueError::new_err(INT_OUT_OF_RANGE));
        }
        Ok(())
    }
}

/// `np.asarray(value, dtype)`, with TensorFlow's handling of Python ints: those beyond what
/// TensorFlow converts are refused with its `ValueError` ([`PyInts::check`]); those within
/// int64 but outside a narrower integer type wrap as TensorFlow's conversion (int64, then
/// `Cast`) wraps them (`tf.constant(-1, tf.uint8)` is 255, `tf.constant(2**40, tf.int32)` 0),
/// where numpy 2 raises OverflowError.
fn asarray_like_tensorflow<'py>(
    np: &Bound<'py, PyModule>,
    value: &Bound<'py, PyAny>,
    dtype: Option<DataType>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = value.py();
    let ints = PyInts::of(value)?;
    ints.check(dtype)?;
    let asarray = np.getattr("asarray")?;
    let Some(d) = dtype else {
        return asarray.call1((value,));
    };
    if d == DataType::STRING {
        let kwargs = PyDict::new(py);
        kwargs.set_item("dtype", "object")?;
        return asarray.call((value,), Some(&kwargs));
    }
    let np_dtype = dtypes::numpy_dtype(py, d)?;
    if (ints.above_i64 || ints.beyond_u64) && (d.is_floating() || d.is_complex()) {
        // Ints beyond int64 that TensorFlow takes as a double (ml_dtypes' types take no Python
        // int beyond a C long).
        let wide = if d.is_complex() {
            "complex128"
        } else {
            "float64"
        };
        return asarray
            .call1((value, wide))?
            .call_method1("astype", (np_dtype,));
    }
    match asarray.call1((value, &np_dtype)) {
        Err(e)
            if ints.found
                && e.is_instance_of::<PyOverflowError>(py)
                && (d.is_integer() || d.is_quantized()) =>
        {
            asarray
                .call1((value, "int64"))?
                .call_method1("astype", (np_dtype,))
        }
        other => other,
    }
}

/// Adopts a numpy array (or converts anything `np.asarray` takes) as a tensor of `dtype`
/// (default: the array's).
pub(crate) fn from_value(value: &Bound<'_, PyAny>, dtype: Option<DataType>) -> PyResult<PyTensor> {
    if let Ok(t) = value.cast::<PyTensor>() {
        let t = t.get();
        return match dtype {
            None => Ok(PyTensor {
                inner: t.inner.clone(),
                source: t.source.as_ref().map(|s| s.clone_ref(value.py())),
                writable: t.writable,
            }),
            Some(d) if d == t.inner.dtype() => Ok(PyTensor::new(t.inner.clone())),
            Some(d) => Err(invalid(format!(
                "Tensor conversion requested dtype {} for Tensor with dtype {}",
                dtypes::py_name(d),
                dtypes::py_name(t.inner.dtype())
            ))),
        };
    }
    let py = value.py();
    let np = py.import("numpy")?;
    if dtype.is_none() && value.is_instance(&np.getattr("ndarray")?)? {
        if let Some(t) = crate::foreign::adopt_ndarray(value)? {
            return Ok(t);
        }
    }
    let arr = asarray_like_tensorflow(&np, value, dtype)?;
    let np_dtype = arr.getattr("dtype")?;
    let name: String = np_dtype.getattr("name")?.extract()?;
    let dtype = match dtype {
        Some(d) => d,
        None => dtypes::from_numpy_name(&name)
            .ok_or_else(|| invalid(format!("numpy dtype {name} has no TensorFlow dtype")))?,
    };
    let dims: Vec<i64> = arr.getattr("shape")?.extract()?;
    let shape = TensorShape::new(&dims).py()?;
    if dtype == DataType::STRING {
        let flat = arr.call_method0("ravel")?.call_method0("tolist")?;
        let mut strings = Vec::with_capacity(shape.num_elements_usize());
        for item in flat.try_iter()? {
            let item = item?;
            let s = if let Ok(b) = item.cast::<PyBytes>() {
                TString::from(b.as_bytes())
            } else if let Ok(s) = item.cast::<PyString>() {
                TString::from(s.extract::<String>()?)
            } else {
                return Err(invalid(format!(
                    "a string tensor takes bytes or str, not {}",
                    item.get_type().name()?
                )));
            };
            strings.push(s);
        }
        let t = Tensor::from_vec(strings, shape).py()?;
        return Ok(PyTensor::new(t));
    }
    // A non-contiguous or byte-swapped array is copied into a native C-ordered one first.
    let contiguous: bool = arr.getattr("flags")?.getattr("c_contiguous")?.extract()?;
    let native: bool = np_dtype.getattr("isnative")?.extract()?;
    let arr = if contiguous && native {
        arr
    } else {
        let native_dtype = np_dtype.call_method1("newbyteorder", ("=",))?;
        np.getattr("ascontiguousarray")?
            .call1((arr, native_dtype))?
    };
    let interface = arr.getattr("__array_interface__")?;
    let (ptr, readonly): (usize, bool) = interface.get_item("data")?.extract()?;
    let nbytes: usize = arr.getattr("nbytes")?.extract()?;
    let keeper = Keeper::Object(arr.clone().unbind());
    // SAFETY: numpy's array interface gives the address of the array's `nbytes` bytes, which
    // stay allocated and unmoved while the array lives (an ndarray's data never moves; a
    // resize is refused while other references exist, and we hold one in the keeper).
    let foreign = unsafe { Foreign::new(ptr as *const u8, nbytes, keeper) };
    let t = Tensor::from_buffer(dtype, &shape, Buffer::from_owner(foreign)).py()?;
    Ok(PyTensor {
        inner: t,
        source: Some(arr.unbind()),
        writable: !readonly,
    })
}

/// Any tensor-like argument as a tensor.
pub(crate) fn tensor_arg(value: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    if let Ok(t) = value.cast::<PyTensor>() {
        return Ok(t.get().inner.clone());
    }
    Ok(from_value(value, None)?.inner)
}

/// A shape argument: a sequence of ints, or a tensor of them.
pub(crate) fn shape_arg(value: &Bound<'_, PyAny>) -> PyResult<TensorShape> {
    let dims: Vec<i64> = match value.extract() {
        Ok(d) => d,
        Err(_) => tensor_arg(value)?
            .to_vec::<i64>()
            .or_else(|_| -> PyResult<Vec<i64>> {
                Ok(tensor_arg(value)?
                    .to_vec::<i32>()
                    .py()?
                    .into_iter()
                    .map(i64::from)
                    .collect())
            })?,
    };
    TensorShape::new(&dims).py()
}

#[pymethods]
impl PyTensor {
    #[new]
    #[pyo3(signature = (value, dtype=None))]
    fn py_new(value: &Bound<'_, PyAny>, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let dtype = dtype.map(dtypes::dtype_arg).transpose()?;
        from_value(value, dtype)
    }

    /// TensorFlow's name of the element type (`tf.float32.name`: `"float32"`, `"bfloat16"`).
    #[getter]
    fn dtype(&self) -> String {
        dtypes::py_name(self.inner.dtype())
    }

    /// The `DataType` enum number (`tf.float32.as_datatype_enum`).
    #[getter]
    fn dtype_enum(&self) -> i32 {
        self.inner.dtype().number()
    }

    /// The shape as a tuple of ints.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.shape().dim_sizes())
    }

    /// The number of dimensions.
    #[getter]
    fn ndim(&self) -> usize {
        self.inner.dims()
    }

    /// The number of elements (`NumElements`).
    #[getter]
    fn size(&self) -> i64 {
        self.inner.num_elements()
    }

    /// The bytes of the elements (`TotalBytes`).
    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.total_bytes()
    }

    /// The address of the first element (0 for an empty or string tensor's memory).
    #[getter]
    fn data_ptr(&self) -> usize {
        self.inner.data_ptr() as usize
    }

    /// `NumElements()`.
    #[allow(non_snake_case, reason = "TensorFlow's C++ name")]
    fn NumElements(&self) -> i64 {
        self.inner.num_elements()
    }

    /// `TotalBytes()`.
    #[allow(non_snake_case, reason = "TensorFlow's C++ name")]
    fn TotalBytes(&self) -> usize {
        self.inner.total_bytes()
    }

    /// `IsAligned()`: the data's address suits TensorFlow's alignment.
    #[allow(non_snake_case, reason = "TensorFlow's C++ name")]
    fn IsAligned(&self) -> bool {
        self.inner.is_aligned()
    }

    /// `SharesBufferWith(other)`.
    #[allow(non_snake_case, reason = "TensorFlow's C++ name")]
    fn SharesBufferWith(&self, other: &Bound<'_, PyTensor>) -> bool {
        self.inner.shares_buffer_with(&other.get().inner)
    }

    /// `DebugString(num_values=3)`: TensorFlow's text, exactly.
    #[allow(non_snake_case, reason = "TensorFlow's C++ name")]
    #[pyo3(signature = (num_values=3))]
    fn DebugString(&self, num_values: i64) -> String {
        self.inner.debug_string(num_values)
    }

    /// `SummarizeValue(max_entries, print_v2=False)`.
    #[allow(non_snake_case, reason = "TensorFlow's C++ name")]
    #[pyo3(signature = (max_entries, print_v2=false))]
    fn SummarizeValue(&self, max_entries: i64, print_v2: bool) -> String {
        self.inner.summarize_value(max_entries, print_v2)
    }

    /// `bitcast(dtype)`: the same bytes as another dtype (TensorFlow's `Bitcast`), no copy.
    fn bitcast(&self, dtype: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let d = dtypes::dtype_arg(dtype)?;
        Ok(PyTensor::new(
            tensorcast_kernels::bitcast::bitcast(&self.inner, d).py()?,
        ))
    }

    /// `reshape(shape)`: the same buffer with another shape of as many elements, no copy.
    fn reshape(&self, shape: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = shape_arg(shape)?;
        Ok(PyTensor::new(self.inner.reshape(s).py()?))
    }

    /// `Slice(start, limit)` along the first dimension, sharing the buffer.
    #[allow(non_snake_case, reason = "TensorFlow's C++ name")]
    fn Slice(&self, start: i64, limit: i64) -> PyResult<PyTensor> {
        Ok(PyTensor::new(self.inner.slice(start, limit).py()?))
    }

    /// `SubSlice(index)`: element `index` of the first dimension, sharing the buffer.
    #[allow(non_snake_case, reason = "TensorFlow's C++ name")]
    fn SubSlice(&self, index: i64) -> PyResult<PyTensor> {
        Ok(PyTensor::new(self.inner.sub_slice(index).py()?))
    }

    /// A copy in a new buffer (`tensor::DeepCopy`).
    fn deep_copy(&self, py: Python<'_>) -> PyResult<PyTensor> {
        let t = self.inner.clone();
        Ok(PyTensor::new(py.detach(move || t.deep_copy()).py()?))
    }

    /// The element bytes (`tensor_data()`), copied into `bytes`.
    fn tobytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, self.inner.tensor_data().py()?))
    }

    /// The tensor as a numpy array sharing its memory (read-only, unless the tensor adopted a
    /// writable numpy array, which is returned itself); strings as an `object` array of bytes.
    fn numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::__array__(slf, None, None)
    }

    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this = slf.get();
        let arr = match &this.source {
            Some(src) => src.bind(py).clone(),
            None => to_numpy(py, &this.inner)?,
        };
        let arr = match dtype {
            Some(d) if !d.is_none() => {
                let kwargs = PyDict::new(py);
                kwargs.set_item("copy", copy.unwrap_or(false))?;
                let converted = arr.call_method("astype", (d,), Some(&kwargs))?;
                if copy == Some(false) && !converted.is(&arr) {
                    return Err(PyValueError::new_err(
                        "a copy is needed to convert to the requested dtype",
                    ));
                }
                converted
            }
            _ if copy == Some(true) => arr.call_method0("copy")?,
            _ => arr,
        };
        Ok(arr)
    }

    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = stream;
        if let Some((kind, _)) = dl_device {
            if kind != 1 {
                return Err(pyo3::exceptions::PyBufferError::new_err(
                    "tensorcast tensors live on the CPU (DLPack device 1)",
                ));
            }
        }
        let tensor = if copy == Some(true) {
            let t = self.inner.clone();
            py.detach(move || t.deep_copy()).py()?
        } else {
            self.inner.clone()
        };
        let versioned = max_version.is_some_and(|(major, _)| major >= 1);
        crate::dlpack::export(py, &tensor, !self.writable && copy != Some(true), versioned)
    }

    /// A string tensor's elements as Arrow's large-binary buffers: `(offsets, data)`, `n + 1`
    /// little-endian int64 offsets and the concatenated bytes (one copy, no Python objects per
    /// element).
    fn _string_buffers<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let strings = self.inner.as_slice::<TString>().py()?;
        let total: usize = strings.iter().map(|s| s.as_ref().len()).sum();
        let mut offsets = Vec::with_capacity((strings.len() + 1) * 8);
        let mut data = Vec::with_capacity(total);
        offsets.extend_from_slice(&0i64.to_le_bytes());
        for s in strings {
            data.extend_from_slice(s.as_ref());
            offsets.extend_from_slice(&(data.len() as i64).to_le_bytes());
        }
        Ok((PyBytes::new(py, &offsets), PyBytes::new(py, &data)))
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        (1, 0)
    }

    fn __len__(&self) -> PyResult<usize> {
        self.inner
            .dim_size(0)
            .map(|d| d as usize)
            .ok_or_else(|| PyTypeError::new_err("len() of a 0-d tensor"))
    }

    fn __repr__(&self) -> String {
        self.inner.debug_string(3)
    }

    fn __str__(&self) -> String {
        self.inner.summarize_value(10, true)
    }
}
