//! `tensorcast.Session`: runs a TensorFlow GraphDef (binary or text) with the graph crate's
//! `Session`. SavedModel signatures are in `saved_model.rs`.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use tensorcast_graph::{import_graph_def_bytes, Cancellation, Graph, Session};

use crate::errors::ResultExt;
use crate::tensor::{tensor_arg, to_numpy};

/// A session over a GraphDef: `Session(graph_def)` takes the serialized bytes or a path to a
/// `.pb` file; `run(fetches, feed_dict)` feeds tensor-likes by name (`"x"` or `"x:0"`) and
/// returns numpy arrays (a list for a list of fetches, one array for one name), as
/// `tf.compat.v1.Session.run` does. A run releases the GIL and runs on the Rust thread pool
/// (one hand-off per run, about 6 us, instead of one per kernel that splits its work); Ctrl-C
/// stops it (`KeyboardInterrupt`), a graph that never ends too.
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
        let out = run_interruptible(py, |cancel| {
            let feeds: Vec<(&str, tensorcast_core::Tensor)> =
                feeds.iter().map(|(k, t)| (k.as_str(), t.clone())).collect();
            let fetches: Vec<&str> = names.iter().map(String::as_str).collect();
            self.session.run_cancellable(&feeds, &fetches, &[], cancel)
        })?
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

/// How often a run waiting for the graph checks for Python signals (Ctrl-C).
const SIGNAL_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// Runs `f` (a graph run, given the flag that cancels it) on one of rayon's pool threads with
/// the GIL released, while this thread checks for Python signals every [`SIGNAL_POLL`]: when a
/// signal handler raises (Ctrl-C's `KeyboardInterrupt`), the run is cancelled - it stops at its
/// next node, loop iteration or function call - and its exception is raised once the run has
/// stopped. A graph that never ends (a `While` whose condition stays true) thus stops on
/// Ctrl-C, as the CLI does.
pub(crate) fn run_interruptible<R: Send>(
    py: Python<'_>,
    f: impl FnOnce(&Cancellation) -> R + Send,
) -> PyResult<R> {
    let cancel = Cancellation::new();
    if rayon::current_thread_index().is_some() {
        // Called from a pool thread (not Python's main thread, where signals are handled).
        return Ok(py.detach(|| f(&cancel)));
    }
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let cancel_ref = &cancel;
    let (out, interrupted) = py.detach(|| {
        rayon::in_place_scope(|s| {
            s.spawn(move |_| {
                // The receiver waits for this unless it is gone; nothing to do then.
                let _ = tx.send(f(cancel_ref));
            });
            let mut interrupted = None;
            loop {
                match rx.recv_timeout(SIGNAL_POLL) {
                    Ok(r) => return (Some(r), interrupted),
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        return (None, interrupted)
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) if interrupted.is_none() => {
                        if let Err(e) = Python::attach(|py| py.check_signals()) {
                            cancel_ref.cancel();
                            interrupted = Some(e);
                        }
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                }
            }
        })
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    out.ok_or_else(|| {
        pyo3::exceptions::PyRuntimeError::new_err("the graph run ended without a result")
    })
}
