//! `tensorcast.saved_model.load`'s native half: a SavedModel loaded with the graph crate's
//! [`SavedModel`] (variables restored, init op run) whose signatures run with the GIL
//! released. `tensorcast/saved_model.py` binds inputs as TensorFlow's signature functions do
//! and builds TensorFlow's errors for inputs that do not fit.

use std::path::PathBuf;

use pyo3::prelude::*;
use tensorcast_core::{DataType, Tensor};
use tensorcast_graph::SavedModel;
use tensorcast_io::ReadOptions;

use crate::errors::{op_error, ResultExt};
use crate::tensor::{tensor_arg, PyTensor};

/// One input or output of a signature: `(key, dtype, c_name, shape)`, the dtype as
/// TensorFlow's Python names it (`float32`), `c_name` as its C++ side does (`float`, in
/// conversion errors), `shape` with `-1` for an unknown dim, `None` for an unknown rank.
type Spec = (String, String, String, Option<Vec<i64>>);

fn spec_of(t: &tensorcast_io::saved_model::SignatureTensor) -> Spec {
    let dtype = DataType::from_number(t.dtype);
    (
        t.key.clone(),
        crate::dtypes::py_name(dtype),
        dtype.name(),
        t.shape.clone(),
    )
}

/// The tag sets of the SavedModel in `export_dir`, in the order `saved_model_cli` lists them.
#[pyfunction]
pub(crate) fn saved_model_tag_sets(
    py: Python<'_>,
    export_dir: PathBuf,
) -> PyResult<Vec<Vec<String>>> {
    let file = py
        .detach(|| {
            tensorcast_io::saved_model::SavedModel::open(&export_dir, &ReadOptions::default())
        })
        .py()?;
    Ok(file.tag_sets())
}

/// A loaded SavedModel (the Python class `tensorcast.saved_model.LoadedSavedModel` wraps it).
#[pyclass(module = "tensorcast._native", name = "NativeSavedModel", frozen)]
pub(crate) struct NativeSavedModel {
    model: SavedModel,
}

/// Loads the meta graph tagged `tags` of the SavedModel in `export_dir`, restoring its
/// variables (GIL released).
#[pyfunction]
pub(crate) fn load_saved_model(
    py: Python<'_>,
    export_dir: PathBuf,
    tags: Vec<String>,
) -> PyResult<NativeSavedModel> {
    let model = py
        .detach(|| {
            let tags: Vec<&str> = tags.iter().map(String::as_str).collect();
            SavedModel::load(&export_dir, &tags)
        })
        .py()?;
    Ok(NativeSavedModel { model })
}

#[pymethods]
impl NativeSavedModel {
    /// The tags of the meta graph loaded.
    #[getter]
    fn tags(&self) -> Vec<String> {
        self.model.tags().to_vec()
    }

    /// The folder it was loaded from.
    #[getter]
    fn export_dir(&self) -> PathBuf {
        self.model.dir().to_path_buf()
    }

    /// The signature keys, sorted.
    fn signature_keys(&self) -> Vec<String> {
        self.model
            .signature_keys()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// Signature `key`'s `(inputs, outputs)`, each a list of `(key, dtype, c_name, shape)`
    /// sorted by key.
    fn signature(&self, key: &str) -> PyResult<(Vec<Spec>, Vec<Spec>)> {
        let sig = self
            .model
            .signature(key)
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(key.to_string()))?;
        Ok((
            sig.inputs.iter().map(spec_of).collect(),
            sig.outputs.iter().map(spec_of).collect(),
        ))
    }

    /// Runs signature `key` on `inputs` (`[(key, tensor-like)]`, every input once) with the
    /// GIL released (Ctrl-C stops it: `KeyboardInterrupt`); returns `[(output key, Tensor)]`
    /// sorted by key.
    fn run(
        &self,
        py: Python<'_>,
        key: &str,
        inputs: Vec<(String, Bound<'_, PyAny>)>,
    ) -> PyResult<Vec<(String, PyTensor)>> {
        let mut feeds: Vec<(String, Tensor)> = Vec::with_capacity(inputs.len());
        for (k, v) in &inputs {
            feeds.push((k.clone(), tensor_arg(v)?));
        }
        let out = crate::graph::run_interruptible(py, |cancel| {
            let feeds: Vec<(&str, Tensor)> =
                feeds.iter().map(|(k, t)| (k.as_str(), t.clone())).collect();
            self.model.run_cancellable(key, &feeds, cancel)
        })?
        .map_err(|e| match e {
            // The binding's own checks (input keys, dtypes) come first in Python; what
            // the graph crate still refuses here is an argument error.
            tensorcast_graph::Error::SavedModel(m) => op_error("INVALID_ARGUMENT", m),
            e => crate::errors::IntoPyErr::into_py_err(e),
        })?;
        Ok(out
            .into_iter()
            .map(|(k, t)| (k, PyTensor::new(t)))
            .collect())
    }
}
