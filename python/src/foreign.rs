//! Memory owned by Python objects (numpy arrays, DLPack producers) adopted as tensorcast buffers
//! without copying. This module and `dlpack.rs` are the binding's only `unsafe` code.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::Mutex;

use pyo3::ffi;
use pyo3::prelude::*;
use tensorcast_buffer::Buffer;
use tensorcast_core::{DataType, Tensor, TensorShape};

use crate::errors::ResultExt;
use crate::tensor::PyTensor;

/// What keeps adopted memory alive.
pub(crate) enum Keeper {
    /// A Python object (a numpy array) whose memory it is: dropping the reference frees it.
    Object(#[allow(dead_code, reason = "held only to keep the object alive")] Py<PyAny>),
    /// A DLPack managed tensor whose deleter must run once, when the memory is no longer used.
    DlPack {
        /// The `DLManagedTensor` or `DLManagedTensorVersioned`.
        managed: *mut c_void,
        /// Its deleter.
        deleter: unsafe extern "C" fn(*mut c_void),
    },
}

/// A range of memory owned by someone else, kept alive by `keeper` until dropped.
pub(crate) struct Foreign {
    ptr: *const u8,
    len: usize,
    keeper: Keeper,
}

// SAFETY: `Foreign` is a read-only view of memory plus a way to release it. The memory is never
// written through this type. The keeper is either a `Py<PyAny>` (itself `Send + Sync`: PyO3
// defers its decref to a thread holding the GIL) or a DLPack deleter, which the DLPack standard
// requires to be callable from any thread (producers such as numpy take the GIL inside it).
unsafe impl Send for Foreign {}
// SAFETY: shared access only reads the memory (`as_ref`) and never touches the keeper.
unsafe impl Sync for Foreign {}

impl Foreign {
    /// Adopts `len` bytes at `ptr`.
    ///
    /// # Safety
    /// `ptr..ptr + len` must be readable and stay allocated, unmoved, for as long as `keeper`
    /// lives (until it is dropped or its deleter runs); `ptr` must be non-null when `len > 0`.
    pub(crate) unsafe fn new(ptr: *const u8, len: usize, keeper: Keeper) -> Self {
        Self { ptr, len, keeper }
    }
}

impl AsRef<[u8]> for Foreign {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `Foreign::new`'s contract: the range is readable and alive while `self` (and
        // so its keeper) lives, and `ptr` is non-null for a non-empty range. The bytes may be
        // written by their Python owner meanwhile (a numpy array the user writes to): every
        // byte pattern is a valid `u8`, and tensorcast derives no memory safety from the values
        // (the same documented hazard as a memory-mapped file another process rewrites).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Foreign {
    fn drop(&mut self) {
        if let Keeper::DlPack { managed, deleter } = self.keeper {
            // SAFETY: the producer handed us `managed` with this deleter, to be called exactly
            // once when we no longer use the memory; `Foreign` is dropped once, and the buffer
            // (the only reader of `ptr`) is gone by then.
            unsafe { deleter(managed) };
        }
    }
}

/// numpy's `PyArrayInterface` (the `__array_struct__` capsule's content, a stable part of the
/// array interface protocol).
#[repr(C)]
struct ArrayInterface {
    two: c_int,
    nd: c_int,
    typekind: c_char,
    itemsize: c_int,
    flags: c_int,
    shape: *const isize,
    strides: *const isize,
    data: *mut c_void,
    descr: *mut ffi::PyObject,
}

/// `NPY_ARRAY_C_CONTIGUOUS`.
const C_CONTIGUOUS: c_int = 0x1;
/// `NPY_ARRAY_NOTSWAPPED`.
const NOT_SWAPPED: c_int = 0x200;
/// `NPY_ARRAY_WRITEABLE`.
const WRITEABLE: c_int = 0x400;

/// numpy dtype numbers (`dtype.num`) already mapped to a tensorcast dtype in this process
/// (user dtypes such as ml_dtypes' get their numbers when registered).
static DTYPE_BY_NUM: Mutex<Option<HashMap<i32, Option<DataType>>>> = Mutex::new(None);

/// The dtype of a numpy dtype number, looked up by name once per number.
fn dtype_of(dtype: &Bound<'_, PyAny>) -> PyResult<Option<DataType>> {
    let num: i32 = dtype.getattr("num")?.extract()?;
    if let Some(found) = DTYPE_BY_NUM
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|m| m.get(&num).copied())
    {
        return Ok(found);
    }
    let name: String = dtype.getattr("name")?.extract()?;
    let found = crate::dtypes::from_numpy_name(&name).filter(|d| d.can_use_memcpy());
    DTYPE_BY_NUM
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(num, found);
    Ok(found)
}

/// The fast path of `Tensor(ndarray)`: reads the array's `__array_struct__` (no dict, no name
/// lookups) and adopts a C-contiguous, native-order array of a memcpy-able dtype without
/// copying. `None`: the general path must handle it (strings, strided or swapped arrays).
pub(crate) fn adopt_ndarray(array: &Bound<'_, PyAny>) -> PyResult<Option<PyTensor>> {
    let Some(dtype) = dtype_of(&array.getattr("dtype")?)? else {
        return Ok(None);
    };
    let capsule = array.getattr("__array_struct__")?;
    // SAFETY: `capsule` is alive while we read it. `PyCapsule_GetPointer` with a NULL name
    // checks that it is a capsule of that (numpy's) name and returns its pointer, or NULL with
    // an exception set. The pointer is numpy's `PyArrayInterface` for `array`, valid while the
    // capsule lives; `two == 2` is the protocol's check that the struct is one. `shape` holds
    // `nd` entries, and `data` is the array's memory, which lives (unmoved) as long as the
    // array object, which the returned tensor's keeper holds.
    unsafe {
        let p = ffi::PyCapsule_GetPointer(capsule.as_ptr(), std::ptr::null())
            .cast::<ArrayInterface>()
            .cast_const();
        if p.is_null() {
            return Err(PyErr::fetch(array.py()));
        }
        let s = &*p;
        if s.two != 2
            || s.flags & C_CONTIGUOUS == 0
            || s.flags & NOT_SWAPPED == 0
            || usize::try_from(s.itemsize).ok() != Some(dtype.size())
        {
            return Ok(None);
        }
        let nd = usize::try_from(s.nd).unwrap_or(usize::MAX);
        if nd > tensorcast_core::MAX_DIMENSIONS {
            return Ok(None);
        }
        let dims: Vec<i64> = if nd == 0 {
            Vec::new()
        } else {
            std::slice::from_raw_parts(s.shape, nd)
                .iter()
                .map(|&d| d as i64)
                .collect()
        };
        let shape = TensorShape::new(&dims).py()?;
        let Some(len) = shape.num_elements_usize().checked_mul(dtype.size()) else {
            return Ok(None);
        };
        let foreign = Foreign::new(
            s.data.cast::<u8>().cast_const(),
            len,
            Keeper::Object(array.clone().unbind()),
        );
        let t = Tensor::from_buffer(dtype, &shape, Buffer::from_owner(foreign)).py()?;
        Ok(Some(PyTensor {
            inner: t,
            source: Some(array.clone().unbind()),
            writable: s.flags & WRITEABLE != 0,
        }))
    }
}
