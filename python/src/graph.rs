//! `tensorcast.Session`: runs a TensorFlow GraphDef (binary or text) with the graph crate's
//! `Session`. SavedModel signatures are in `saved_model.rs`.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use tensorcast_graph::{import_graph_def_bytes, Graph, Session};

use crate::errors::ResultExt;
use crate::tensor::{tensor_arg, to_numpy};

/// A session over a GraphDef: `Session(graph_def)` takes the serialized bytes or a path to a
/// `.pb` file; `run(fetches, feed_dict)` feeds tensor-likes by name (`"x"` or `"x:0"`) and
/// returns numpy arrays (a list for a list of fetches, one array for one name), as
/// `tf.compat.v1.Session.run` does. A run releases the GIL and runs on the Rust thread pool
/// (one hand-off per run, about 6 us, instead of one per kernel that splits its work).
#[pyclass(module = "tensorcast", name = "Session", frozen)]
pub(crate) struct PySession {
    session: Session,
}

#[pymethods]
impl PySession {
    #[new]
    fn new(py: Python<'_>, graph_def: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes: Vec<u8> = if let Ok(b) = graph_def.cast::<PyBytes>() {
            b.as_bytes().to_vec()
        } else {
            let path: PathBuf = graph_def.extract()?;
            py.detach(|| std::fs::read(&path)).map_err(|e| {
                crate::errors::op_error(
                    if e.kind() == std::io::ErrorKind::NotFound {
                        "NOT_FOUND"
                    } else {
                        "UNKNOWN"
                    },
                    format!("{}; {e}", path.display()),
                )
            })?
        };
        let graph = Graph::new();
        py.detach(|| import_graph_def_bytes(&graph, &bytes)).py()?;
        Ok(Self {
            session: Session::new(&graph),
        })
    }

    /// Runs the graph: `fetches` a name or a list of names, `feed_dict` `{name: value}`.
    #[pyo3(signature = (fetches, feed_dict=None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        fetches: &Bound<'py, PyAny>,
        feed_dict: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let single = fetches.cast::<PyString>().is_ok();
        let names: Vec<String> = if single {
            vec![fetches.extract()?]
        } else {
            fetches.extract()?
        };
        let mut feeds = Vec::new();
        if let Some(d) = feed_dict {
            for (k, v) in d.iter() {
                feeds.push((k.extract::<String>()?, tensor_arg(&v)?));
            }
        }
        let out = py
            .detach(|| {
                let feeds: Vec<(&str, tensorcast_core::Tensor)> =
                    feeds.iter().map(|(k, t)| (k.as_str(), t.clone())).collect();
                let fetches: Vec<&str> = names.iter().map(String::as_str).collect();
                in_pool(|| self.session.run(&feeds, &fetches, &[]))
            })
            .py()?;
        let arrays = out
            .iter()
            .map(|t| to_numpy(py, t))
            .collect::<PyResult<Vec<_>>>()?;
        if single {
            Ok(arrays
                .into_iter()
                .next()
                .unwrap_or_else(|| py.None().into_bound(py)))
        } else {
            Ok(PyList::new(py, arrays)?.into_any())
        }
    }
}

/// `f` on one of rayon's pool threads. Python's threads are not the pool's, and a kernel that
/// splits its work from outside the pool hands it over and sleeps until it is done: a wake-up
/// and a sleep per kernel (tens of microseconds on a virtual machine). From inside, a kernel
/// starts its work itself and the other threads join in by stealing: one hand-off per run.
pub(crate) fn in_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() {
        return f();
    }
    rayon::scope(|_| f())
}
