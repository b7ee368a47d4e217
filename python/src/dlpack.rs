//! DLPack: tensors handed to numpy 2, JAX and PyTorch (`__dlpack__`) and taken from them
//! (`from_dlpack`) without copying. Both the legacy (`"dltensor"`) and the versioned
//! (`"dltensor_versioned"`, DLPack 1.x, with its read-only flag) capsules are spoken.

use std::ffi::{c_void, CStr};

use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use tensorcast_buffer::Buffer;
use tensorcast_core::{DataType, Tensor, TensorShape};

use crate::errors::ResultExt;
use crate::foreign::{Foreign, Keeper};

/// `kDLCPU`.
const CPU: i32 = 1;
/// `kDLCUDAHost`: pinned host memory, readable by the CPU.
const CUDA_HOST: i32 = 3;
/// `DLPACK_FLAG_BITMASK_READ_ONLY`.
const FLAG_READ_ONLY: u64 = 1;

const LEGACY: &CStr = c"dltensor";
const LEGACY_USED: &CStr = c"used_dltensor";
const VERSIONED: &CStr = c"dltensor_versioned";
const VERSIONED_USED: &CStr = c"used_dltensor_versioned";

#[repr(C)]
#[derive(Clone, Copy)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

#[repr(C)]
struct DlPackVersion {
    major: u32,
    minor: u32,
}

#[repr(C)]
struct DlManagedTensorVersioned {
    version: DlPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DlTensor,
}

/// DLPack's type code and bits for a dtype (`None`: no DLPack spelling, such as strings, the
/// one-per-byte int4/int2 of TensorFlow, and quantized types, which travel as their integers).
fn dl_dtype(dtype: DataType) -> Option<DlDataType> {
    let (code, bits) = match dtype {
        DataType::INT8 | DataType::QINT8 => (0, 8),
        DataType::INT16 | DataType::QINT16 => (0, 16),
        DataType::INT32 | DataType::QINT32 => (0, 32),
        DataType::INT64 => (0, 64),
        DataType::UINT8 | DataType::QUINT8 => (1, 8),
        DataType::UINT16 | DataType::QUINT16 => (1, 16),
        DataType::UINT32 => (1, 32),
        DataType::UINT64 => (1, 64),
        DataType::HALF => (2, 16),
        DataType::FLOAT => (2, 32),
        DataType::DOUBLE => (2, 64),
        DataType::BFLOAT16 => (4, 16),
        DataType::COMPLEX64 => (5, 64),
        DataType::COMPLEX128 => (5, 128),
        DataType::BOOL => (6, 8),
        DataType::FLOAT8_E4M3B11FNUZ => (9, 8),
        DataType::FLOAT8_E4M3FN => (10, 8),
        DataType::FLOAT8_E4M3FNUZ => (11, 8),
        DataType::FLOAT8_E5M2 => (12, 8),
        DataType::FLOAT8_E5M2FNUZ => (13, 8),
        _ => return None,
    };
    Some(DlDataType {
        code,
        bits,
        lanes: 1,
    })
}

/// The dtype of a DLPack type.
fn from_dl_dtype(t: DlDataType) -> Option<DataType> {
    if t.lanes != 1 {
        return None;
    }
    Some(match (t.code, t.bits) {
        (0, 8) => DataType::INT8,
        (0, 16) => DataType::INT16,
        (0, 32) => DataType::INT32,
        (0, 64) => DataType::INT64,
        (1, 8) => DataType::UINT8,
        (1, 16) => DataType::UINT16,
        (1, 32) => DataType::UINT32,
        (1, 64) => DataType::UINT64,
        (2, 16) => DataType::HALF,
        (2, 32) => DataType::FLOAT,
        (2, 64) => DataType::DOUBLE,
        (4, 16) => DataType::BFLOAT16,
        (5, 64) => DataType::COMPLEX64,
        (5, 128) => DataType::COMPLEX128,
        (6, 8) => DataType::BOOL,
        (9, 8) => DataType::FLOAT8_E4M3B11FNUZ,
        (10, 8) => DataType::FLOAT8_E4M3FN,
        (11, 8) => DataType::FLOAT8_E4M3FNUZ,
        (12, 8) => DataType::FLOAT8_E5M2,
        (13, 8) => DataType::FLOAT8_E5M2FNUZ,
        _ => return None,
    })
}

/// What an exported managed tensor owns: the tensor (its buffer stays alive) and the shape
/// array `dl_tensor.shape` points into.
struct Context {
    _tensor: Tensor,
    shape: Vec<i64>,
}

unsafe extern "C" fn delete_legacy(m: *mut DlManagedTensor) {
    if m.is_null() {
        return;
    }
    // SAFETY: `m` was made by `Box::into_raw` in `export` and DLPack calls the deleter once;
    // its context is the `Box<Context>` leaked there.
    unsafe {
        let m = Box::from_raw(m);
        drop(Box::from_raw(m.manager_ctx.cast::<Context>()));
    }
}

unsafe extern "C" fn delete_versioned(m: *mut DlManagedTensorVersioned) {
    if m.is_null() {
        return;
    }
    // SAFETY: as `delete_legacy`, for the versioned struct.
    unsafe {
        let m = Box::from_raw(m);
        drop(Box::from_raw(m.manager_ctx.cast::<Context>()));
    }
}

/// The destructor of an exported capsule: frees the tensor only if no consumer took it
/// (a consumer renames the capsule to `used_*` and calls the deleter itself later).
unsafe extern "C" fn capsule_destructor(capsule: *mut ffi::PyObject) {
    // SAFETY: called by Python with the GIL held, on a live capsule. `PyCapsule_IsValid` checks
    // the name before `PyCapsule_GetPointer` reads it; a pointer under an unused name is one of
    // ours, whose deleter runs once here.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, LEGACY.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(capsule, LEGACY.as_ptr()).cast::<DlManagedTensor>();
            if let Some(d) = (*m).deleter {
                d(m);
            }
        } else if ffi::PyCapsule_IsValid(capsule, VERSIONED.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(capsule, VERSIONED.as_ptr())
                .cast::<DlManagedTensorVersioned>();
            if let Some(d) = (*m).deleter {
                d(m);
            }
        }
        ffi::PyErr_Clear();
    }
}

/// numpy's refusal (2.x, `Cannot export readonly array ...`) of read-only memory asked for in
/// a legacy capsule, word for word.
const READ_ONLY_LEGACY: &str = "Cannot export readonly array since signalling readonly is \
    unsupported by DLPack (supported by newer DLPack version).";

/// `tensor.__dlpack__(...)`: a capsule holding a managed tensor over `tensor`'s memory.
///
/// Read-only memory (a tensor made in Rust, a view of a mapped checkpoint shard, an adopted
/// read-only array) goes out only in a versioned capsule, which carries the read-only flag. The
/// legacy capsule cannot say read-only, and a consumer that writes through it would change a
/// tensor every other holder sees as immutable, or fault on a read-only page of a memory map
/// (SIGSEGV); so, as numpy does for its read-only arrays, the export is refused with numpy's
/// `BufferError`. The caller who accepts a copy asks for one (`copy=True`), which is writable
/// and goes out in either capsule. Copying silently instead would turn a zero-copy hand-off
/// into an unannounced copy of any size (a mapped checkpoint tensor of gigabytes).
pub(crate) fn export<'py>(
    py: Python<'py>,
    tensor: &Tensor,
    read_only: bool,
    versioned: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let dtype = dl_dtype(tensor.dtype()).ok_or_else(|| {
        let name = crate::dtypes::py_name(tensor.dtype());
        PyBufferError::new_err(
            if matches!(
                tensor.dtype(),
                DataType::INT4 | DataType::UINT4 | DataType::INT2 | DataType::UINT2
            ) {
                // DLPack's sub-byte integers are packed (two 4-bit values a byte); TensorFlow's and
                // ml_dtypes' hold one value a byte, so the memory cannot be shared as DLPack.
                format!(
                "DLPack has no type for {name}: DLPack packs sub-byte integers, TensorFlow and \
                 ml_dtypes store one {name} value per byte; use numpy.asarray(tensor) (an \
                 ml_dtypes.{name} view of the same memory) instead"
            )
            } else {
                format!("DLPack has no type for {name}")
            },
        )
    })?;
    if read_only && !versioned {
        return Err(PyBufferError::new_err(READ_ONLY_LEGACY));
    }
    let mut ctx = Box::new(Context {
        _tensor: tensor.clone(),
        shape: tensor.shape().dim_sizes().to_vec(),
    });
    let ndim = i32::try_from(ctx.shape.len()).unwrap_or(i32::MAX);
    let dl_tensor = DlTensor {
        data: tensor.data_ptr().cast_mut().cast::<c_void>(),
        device: DlDevice {
            device_type: CPU,
            device_id: 0,
        },
        ndim,
        dtype,
        shape: ctx.shape.as_mut_ptr(),
        // Null strides: compact row-major, which every tensor is.
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    };
    let manager_ctx = Box::into_raw(ctx).cast::<c_void>();
    let (ptr, name): (*mut c_void, &CStr) = if versioned {
        let m = Box::new(DlManagedTensorVersioned {
            version: DlPackVersion { major: 1, minor: 1 },
            manager_ctx,
            deleter: Some(delete_versioned),
            flags: if read_only { FLAG_READ_ONLY } else { 0 },
            dl_tensor,
        });
        (Box::into_raw(m).cast(), VERSIONED)
    } else {
        let m = Box::new(DlManagedTensor {
            dl_tensor,
            manager_ctx,
            deleter: Some(delete_legacy),
        });
        (Box::into_raw(m).cast(), LEGACY)
    };
    // SAFETY: `ptr` is a live managed tensor we own; the capsule's destructor frees it unless a
    // consumer takes it. On failure the capsule was not made, so we free it ourselves.
    unsafe {
        let cap = ffi::PyCapsule_New(ptr, name.as_ptr(), Some(capsule_destructor));
        if cap.is_null() {
            if versioned {
                delete_versioned(ptr.cast());
            } else {
                delete_legacy(ptr.cast());
            }
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, cap))
    }
}

/// `tensorcast.from_dlpack(x)`: adopts the memory of any object with `__dlpack__` (or a
/// capsule) as a tensor, without copying. Returns the tensor and whether the producer marked
/// the memory read-only.
pub(crate) fn import(obj: &Bound<'_, PyAny>) -> PyResult<(Tensor, bool)> {
    let py = obj.py();
    let capsule = if obj.hasattr("__dlpack__")? {
        let kwargs = PyDict::new(py);
        kwargs.set_item("max_version", PyTuple::new(py, [1, 1])?)?;
        match obj.call_method("__dlpack__", (), Some(&kwargs)) {
            Ok(c) => c,
            Err(e) if e.is_instance_of::<PyTypeError>(py) => obj.call_method0("__dlpack__")?,
            Err(e) => return Err(e),
        }
    } else {
        obj.clone()
    };
    let cap = capsule.as_ptr();
    // SAFETY: `cap` is a live object (we hold `capsule`); `PyCapsule_IsValid` accepts any object
    // and checks type and name before we read the pointer. The pointer of a valid DLPack
    // capsule is a managed tensor the producer keeps alive until its deleter runs; we read its
    // fields, then rename the capsule so its destructor leaves the tensor to us, and hand the
    // deleter to a `Foreign` that calls it when the last buffer handle goes.
    unsafe {
        let (dl, managed, deleter, read_only, used): (
            *const DlTensor,
            *mut c_void,
            Option<unsafe extern "C" fn(*mut c_void)>,
            bool,
            &CStr,
        ) = if ffi::PyCapsule_IsValid(cap, VERSIONED.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(cap, VERSIONED.as_ptr())
                .cast::<DlManagedTensorVersioned>();
            if (*m).version.major != 1 {
                return Err(PyBufferError::new_err(format!(
                    "unsupported DLPack version {}",
                    (*m).version.major
                )));
            }
            (
                &raw const (*m).dl_tensor,
                m.cast(),
                std::mem::transmute::<
                    Option<unsafe extern "C" fn(*mut DlManagedTensorVersioned)>,
                    Option<unsafe extern "C" fn(*mut c_void)>,
                >((*m).deleter),
                (*m).flags & FLAG_READ_ONLY != 0,
                VERSIONED_USED,
            )
        } else if ffi::PyCapsule_IsValid(cap, LEGACY.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(cap, LEGACY.as_ptr()).cast::<DlManagedTensor>();
            (
                &raw const (*m).dl_tensor,
                m.cast(),
                std::mem::transmute::<
                    Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
                    Option<unsafe extern "C" fn(*mut c_void)>,
                >((*m).deleter),
                false,
                LEGACY_USED,
            )
        } else {
            return Err(PyTypeError::new_err(
                "from_dlpack expects an object with __dlpack__ or an unused DLPack capsule",
            ));
        };
        let dl = &*dl;
        if dl.device.device_type != CPU && dl.device.device_type != CUDA_HOST {
            return Err(PyBufferError::new_err(format!(
                "only CPU memory can be adopted (DLPack device type {})",
                dl.device.device_type
            )));
        }
        let dtype = from_dl_dtype(dl.dtype).ok_or_else(|| {
            let packed = if dl.dtype.bits < 8 && dl.dtype.code <= 1 {
                " (DLPack packs sub-byte integers; TensorFlow's int4/uint4/int2/uint2 hold one \
                 value per byte, so such memory cannot be adopted: hand over an ml_dtypes array \
                 through numpy instead)"
            } else {
                ""
            };
            PyBufferError::new_err(format!(
                "unsupported DLPack dtype (code {}, bits {}, lanes {}){packed}",
                dl.dtype.code, dl.dtype.bits, dl.dtype.lanes
            ))
        })?;
        let ndim = usize::try_from(dl.ndim)
            .ok()
            .filter(|&n| n <= tensorcast_core::MAX_DIMENSIONS)
            .ok_or_else(|| PyBufferError::new_err(format!("bad DLPack ndim {}", dl.ndim)))?;
        let dims: Vec<i64> = if ndim == 0 {
            Vec::new()
        } else {
            std::slice::from_raw_parts(dl.shape, ndim).to_vec()
        };
        let shape = TensorShape::new(&dims).py()?;
        let count = shape.num_elements_usize();
        if !dl.strides.is_null() && ndim > 0 {
            let strides = std::slice::from_raw_parts(dl.strides, ndim);
            let mut want = 1i64;
            for (d, s) in dims.iter().zip(strides).rev() {
                if *d != 1 && *s != want {
                    return Err(PyBufferError::new_err(
                        "only compact row-major DLPack tensors can be adopted without a copy",
                    ));
                }
                want = want.saturating_mul(*d);
            }
        }
        let len = count
            .checked_mul(dtype.size())
            .ok_or_else(|| PyBufferError::new_err("DLPack tensor too large"))?;
        let data = dl.data.cast::<u8>().cast_const();
        let offset = usize::try_from(dl.byte_offset)
            .map_err(|_| PyBufferError::new_err("bad DLPack byte_offset"))?;
        if len > 0 && data.is_null() {
            return Err(PyBufferError::new_err("DLPack tensor without data"));
        }
        let ptr = if len > 0 { data.add(offset) } else { data };
        // Take ownership: from here on the deleter is ours to call, through `Foreign`.
        if ffi::PyCapsule_SetName(cap, used.as_ptr()) != 0 {
            return Err(PyErr::fetch(py));
        }
        let keeper = match deleter {
            Some(deleter) => Keeper::DlPack { managed, deleter },
            // No deleter: the producer keeps the memory alive as long as the capsule's
            // owner lives; keep that owner.
            None => Keeper::Object(obj.clone().unbind()),
        };
        let foreign = Foreign::new(ptr, len, keeper);
        let buffer = Buffer::from_owner(foreign);
        let tensor = Tensor::from_buffer(dtype, &shape, buffer).py()?;
        Ok((tensor, read_only))
    }
}
