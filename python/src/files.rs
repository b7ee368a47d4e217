//! `tensorcast.load(path)` / `tensorcast.save(path, tensors)`: npy, npz, safetensors and
//! serialized `TensorProto` files.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use tensorcast_io::{Format, NamedTensor, ReadMode, ReadOptions};

use crate::errors::{invalid, ResultExt};
use crate::tensor::{tensor_arg, PyTensor};

/// A format by name (`npy`, `npz`, `safetensors`, `pb`/`tensorproto`).
fn format_arg(name: &str) -> PyResult<Format> {
    match name {
        "tensorproto" | "TensorProto" | "proto" => Ok(Format::TensorProto),
        other => Format::from_extension(other.trim_start_matches('.'))
            .ok_or_else(|| invalid(format!("Unknown tensor file format: {other}"))),
    }
}

/// Reads a tensor file, detecting its format from the content: a dict of name -> Tensor for
/// npz and safetensors, one Tensor for npy and TensorProto files. Tensors share the file's
/// memory map (`mmap=True`, the default) where the data is aligned; `mmap=False` reads into
/// memory instead (safe against the file being truncated meanwhile).
///
/// >>> import numpy as np, tensorcast as tc, tempfile, os
/// >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
/// >>> tc.save(path, {"w": np.ones((2, 2), np.float32)})
/// >>> tc.load(path)["w"].shape
/// (2, 2)
#[pyfunction]
#[pyo3(signature = (path, *, mmap=true))]
pub(crate) fn load(py: Python<'_>, path: PathBuf, mmap: bool) -> PyResult<Py<PyAny>> {
    let options = ReadOptions {
        mode: if mmap { ReadMode::Map } else { ReadMode::Read },
        ..ReadOptions::default()
    };
    let contents = py
        .detach(|| tensorcast_io::read_file_contents_with(&path, &options))
        .py()?;
    if contents.format.is_single_tensor() && contents.tensors.len() == 1 {
        if let Some(n) = contents.tensors.into_iter().next() {
            return Ok(Py::new(py, PyTensor::new(n.tensor))?.into_any());
        }
        return Ok(PyDict::new(py).into_any().unbind());
    }
    let d = PyDict::new(py);
    for n in contents.tensors {
        d.set_item(n.name, Py::new(py, PyTensor::new(n.tensor))?)?;
    }
    Ok(d.into_any().unbind())
}

/// Writes tensors to a file atomically (a temporary file renamed into place). `tensors` is a
/// dict of name -> tensor-like, or one tensor-like for npy / TensorProto; the format comes
/// from the extension (`.npy`, `.npz`, `.safetensors`, `.pb`) or `format`.
#[pyfunction]
#[pyo3(signature = (path, tensors, *, format=None))]
pub(crate) fn save(
    py: Python<'_>,
    path: PathBuf,
    tensors: &Bound<'_, PyAny>,
    format: Option<&str>,
) -> PyResult<()> {
    let format = match format {
        Some(f) => format_arg(f)?,
        None => Format::from_path(&path).ok_or_else(|| {
            invalid(format!(
                "Cannot tell the format of {} from its extension; pass format=",
                path.display()
            ))
        })?,
    };
    let mut named = Vec::new();
    if let Ok(d) = tensors.cast::<PyDict>() {
        for (k, v) in d.iter() {
            let name: String = k.extract::<String>()?;
            named.push(NamedTensor::new(name, tensor_arg(&v)?));
        }
    } else {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        named.push(NamedTensor::new(stem, tensor_arg(tensors)?));
    }
    py.detach(|| tensorcast_io::write_file(&path, format, &named))
        .py()
}
