//! `tensorcast.train.load_checkpoint(prefix)`: TensorFlow's `CheckpointReader` (shape and dtype
//! maps, `get_tensor`), also a lazy mapping by key or object path; and checkpoint writing.

use std::collections::HashMap;
use std::path::PathBuf;

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use tensorcast_io::checkpoint::{
    write_checkpoint, Checkpoint, CheckpointWriteOptions, ObjectGraph,
};
use tensorcast_io::{NamedTensor, ReadMode, ReadOptions};

use crate::dtypes::py_name;
use crate::errors::{op_error, ResultExt};
use crate::tensor::{numpy_view, tensor_arg, PyTensor};

/// A checkpoint opened by its prefix, `.index`, a `.data-*` file or its directory (the latest
/// checkpoint). Only the index is read when it opens; each tensor is read (its CRC32C checked)
/// when asked for, with the GIL released.
///
/// `mmap=True` (the default): tensors are read-only numpy views of a memory map of their
/// shard, no copy. A shard truncated in place while such arrays are alive kills the process
/// with `SIGBUS` (a file replaced by rename, as TensorFlow's writer does, is safe).
/// `mmap=False`: each tensor is read into memory of its own and returned as a writable array,
/// as TensorFlow's reader does; a shard changed meanwhile is then an error, never a signal.
///
/// >>> import numpy as np, tensorcast as tc, tempfile, os
/// >>> prefix = os.path.join(tempfile.mkdtemp(), "ckpt-1")
/// >>> tc.train.save_checkpoint(prefix, {"model/dense/kernel": np.eye(2, dtype=np.float32)})
/// >>> ckpt = tc.train.load_checkpoint(prefix)
/// >>> ckpt.get_variable_to_shape_map()["model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"]
/// [2, 2]
/// >>> ckpt["model/dense/kernel"]
/// array([[1., 0.],
///        [0., 1.]], dtype=float32)
#[pyclass(module = "tensorcast.train", name = "CheckpointReader", frozen)]
pub(crate) struct CheckpointReader {
    ckpt: Checkpoint,
    /// Object path -> key, for a TF2 checkpoint.
    paths: HashMap<String, String>,
    /// Whether tensors are views of the mapped shards (`mmap=True`) rather than read into
    /// memory of their own.
    mapped: bool,
}

impl CheckpointReader {
    /// The key of a name: a key itself, or an object path.
    fn key_of<'a>(&'a self, name: &'a str) -> Option<&'a str> {
        if self.ckpt.entry(name).is_some() {
            Some(name)
        } else {
            self.paths.get(name).map(String::as_str)
        }
    }

    fn read(&self, py: Python<'_>, name: &str) -> PyResult<tensorcast_core::Tensor> {
        let Some(key) = self.key_of(name) else {
            return Err(op_error(
                "NOT_FOUND",
                format!("Key {name} not found in checkpoint"),
            ));
        };
        py.detach(|| self.ckpt.read(key)).py()
    }
}

/// `tensorcast.train.load_checkpoint(ckpt_dir_or_file, mmap=True)`.
#[pyfunction]
#[pyo3(signature = (ckpt_dir_or_file, *, mmap=true))]
pub(crate) fn load_checkpoint(
    py: Python<'_>,
    ckpt_dir_or_file: PathBuf,
    mmap: bool,
) -> PyResult<CheckpointReader> {
    let options = ReadOptions {
        mode: if mmap { ReadMode::Map } else { ReadMode::Read },
        ..ReadOptions::default()
    };
    let (ckpt, graph) = py
        .detach(
            || -> tensorcast_io::Result<(Checkpoint, Option<ObjectGraph>)> {
                let ckpt = Checkpoint::open(&ckpt_dir_or_file, &options)?;
                let graph = ckpt.object_graph().ok().flatten();
                Ok((ckpt, graph))
            },
        )
        .py()?;
    let mut paths = HashMap::new();
    if let Some(g) = graph {
        for t in g.tensors() {
            paths.entry(t.path.clone()).or_insert_with(|| t.key.clone());
        }
    }
    Ok(CheckpointReader {
        ckpt,
        paths,
        mapped: mmap,
    })
}

#[pymethods]
impl CheckpointReader {
    /// `{key: shape as a list of ints}`, as TensorFlow's reader gives it.
    fn get_variable_to_shape_map<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for e in self.ckpt.entries() {
            d.set_item(&e.key, PyList::new(py, e.shape.dim_sizes())?)?;
        }
        Ok(d)
    }

    /// `{key: dtype name}` (`"float32"`, ...: the `.name` of TensorFlow's `tf.DType`).
    fn get_variable_to_dtype_map<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for e in self.ckpt.entries() {
            d.set_item(&e.key, py_name(e.dtype))?;
        }
        Ok(d)
    }

    /// `has_tensor(name)`.
    fn has_tensor(&self, name: &str) -> bool {
        self.ckpt.entry(name).is_some()
    }

    /// `get_tensor(name)`: the tensor as a numpy array. Mapped (the default): a read-only
    /// view of the shard where the data's alignment allows. With `mmap=False`: a writable
    /// array of its own, as TensorFlow's reader returns. Strings are `object` arrays of bytes.
    fn get_tensor<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let t = self.read(py, name)?;
        // Read into a buffer of its own, the tensor is this array's alone.
        numpy_view(py, t, !self.mapped)
    }

    /// The tensor as a `tensorcast.Tensor`.
    fn get_tensorcast(&self, py: Python<'_>, name: &str) -> PyResult<PyTensor> {
        Ok(PyTensor::new(self.read(py, name)?))
    }

    /// The keys, in the index's (sorted) order.
    fn keys(&self) -> Vec<String> {
        self.ckpt.keys().map(str::to_owned).collect()
    }

    /// `{object path: key}` for a TF2 checkpoint (empty for a name-based one).
    fn object_paths(&self) -> HashMap<String, String> {
        self.paths.clone()
    }

    /// `debug_string()`: TensorFlow's `inspect_checkpoint` lines (`key (DT_FLOAT) [2,2]`).
    fn debug_string(&self) -> String {
        String::from_utf8_lossy(&self.ckpt.debug_string()).into_owned()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        if self.key_of(name).is_none() {
            return Err(PyKeyError::new_err(name.to_owned()));
        }
        self.get_tensor(py, name)
    }

    fn __contains__(&self, name: &str) -> bool {
        self.key_of(name).is_some()
    }

    fn __len__(&self) -> usize {
        self.ckpt.entries().len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyList::new(py, self.keys())?
            .try_iter()
            .map(Bound::into_any)
    }

    fn __repr__(&self) -> String {
        format!(
            "<CheckpointReader {} ({} tensors)>",
            self.ckpt.prefix().display(),
            self.ckpt.entries().len()
        )
    }
}

/// `tensorcast.train.save_checkpoint(prefix, tensors, object_graph=True)`: writes a TF2
/// checkpoint (`prefix.index` + `prefix.data-00000-of-00001`, atomically) that
/// `tf.train.Checkpoint(...).restore` loads. Names are object paths (`model/dense/kernel`) or
/// TF2 keys; with `object_graph=False` the names are written as they are (a name-based
/// checkpoint, as `tf.compat.v1.train.Saver` writes).
#[pyfunction]
#[pyo3(signature = (prefix, tensors, *, object_graph=true))]
pub(crate) fn save_checkpoint(
    py: Python<'_>,
    prefix: PathBuf,
    tensors: &Bound<'_, PyDict>,
    object_graph: bool,
) -> PyResult<()> {
    let mut named = Vec::new();
    for (k, v) in tensors.iter() {
        let name = k.extract::<String>()?;
        let name = if object_graph && !name.contains("/.ATTRIBUTES/") {
            format!("{name}/.ATTRIBUTES/VARIABLE_VALUE")
        } else {
            name
        };
        named.push(NamedTensor::new(name, tensor_arg(&v)?));
    }
    named.sort_by(|a, b| a.name.cmp(&b.name));
    let options = CheckpointWriteOptions {
        object_graph: object_graph
            .then(|| ObjectGraph::from_keys(named.iter().map(|n| n.name.as_str()))),
        ..CheckpointWriteOptions::default()
    };
    py.detach(|| write_checkpoint(&prefix, &named, &options))
        .py()
}
