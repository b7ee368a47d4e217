//! The native module of the `tensorcast` Python package (`tensorcast._native`): PyO3 bindings
//! over the library crates' public APIs. The Python package (`python/tensorcast/`) wraps it
//! with TensorFlow's module layout (`tensorcast.io`, `tensorcast.train`, `tensorcast.errors`).
//!
//! Why it is built this way:
//! - **abi3** (`abi3-py39`): one wheel serves every CPython from 3.9 on.
//! - **No copies at the border.** numpy arrays are adopted through their array interface and
//!   kept alive by the tensor's buffer (`foreign.rs`); tensors go to numpy as views of their
//!   buffer, and to any DLPack consumer as managed tensors (`dlpack.rs`). Those two files are
//!   the binding's only `unsafe` code.
//! - **The GIL is released** (`Python::detach`) around every call that touches data in bulk:
//!   ops, file reads and writes, checkpoint reads, record reads, example parsing, SavedModel
//!   loads and signature runs.
//! - **TensorFlow's errors.** Every library error becomes the `tensorcast.errors` class
//!   TensorFlow raises for its status code, with the library's (TensorFlow's) text.

mod arrow;
mod checkpoint;
mod dlpack;
mod dtypes;
mod errors;
mod files;
mod foreign;
mod graph;
mod ops;
mod records;
mod saved_model;
mod tensor;

use pyo3::prelude::*;

/// The module `tensorcast._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<tensor::PyTensor>()?;
    m.add_function(wrap_pyfunction!(ops::bitcast, m)?)?;
    m.add_function(wrap_pyfunction!(ops::reinterpret_cast_to, m)?)?;
    m.add_function(wrap_pyfunction!(ops::broadcast_to, m)?)?;
    m.add_function(wrap_pyfunction!(ops::cast, m)?)?;
    ops::add_binary(m)?;
    m.add_function(wrap_pyfunction!(ops::serialize_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(ops::parse_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(ops::from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(files::load, m)?)?;
    m.add_function(wrap_pyfunction!(files::save, m)?)?;
    m.add_class::<checkpoint::CheckpointReader>()?;
    m.add_function(wrap_pyfunction!(checkpoint::load_checkpoint, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint::save_checkpoint, m)?)?;
    m.add_class::<records::RecordBatch>()?;
    m.add_class::<records::RecordIterator>()?;
    m.add_class::<records::ExampleBatchIterator>()?;
    m.add_class::<arrow::ArrowBatch>()?;
    m.add_class::<records::TfRecordWriter>()?;
    m.add_function(wrap_pyfunction!(records::read_records, m)?)?;
    m.add_function(wrap_pyfunction!(records::record_offsets, m)?)?;
    m.add_function(wrap_pyfunction!(records::tf_record_iterator, m)?)?;
    m.add_function(wrap_pyfunction!(records::parse_example_native, m)?)?;
    m.add_function(wrap_pyfunction!(records::parse_example_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(records::parse_example_batches_native, m)?)?;
    m.add_class::<graph::PySession>()?;
    m.add_class::<saved_model::NativeSavedModel>()?;
    m.add_function(wrap_pyfunction!(saved_model::load_saved_model, m)?)?;
    m.add_function(wrap_pyfunction!(saved_model::saved_model_tag_sets, m)?)?;
    Ok(())
}
