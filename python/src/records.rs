//! TFRecord files (`tensorcast.io.TFRecordWriter`, `tf_record_iterator`, whole-file and
//! record-range reads) and `parse_example`, as `tf.io` does them.

use std::fs::File;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use bytes::Bytes;
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use tensorcast_core::{DataType, Tensor};
use tensorcast_records::{
    Compression, FeatureSpec, FileWriter, Parsed, Partition, ReaderOptions, RecordIndex,
    RecordReader,
};

use crate::arrow::ArrowBatch;
use crate::dtypes::dtype_arg;
use crate::errors::{invalid, ResultExt};
use crate::tensor::{tensor_arg, PyTensor};

/// A compression name as TensorFlow spells it (`""`, `"NONE"`, `"GZIP"`, `"ZLIB"`, or None).
pub(crate) fn compression_arg(name: Option<&str>) -> PyResult<Compression> {
    let name = name.unwrap_or("");
    Compression::from_tf_name(name)
        .ok_or_else(|| invalid(format!("Unsupported compression_type: {name}")))
}

/// The compression name in a `tf.io.TFRecordOptions` argument: the options object's
/// `compression_type`, or the argument itself when it is a string (as TensorFlow also takes).
fn options_compression(options: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    let Some(o) = options.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    Ok(Some(match o.extract::<String>() {
        Ok(s) => s,
        Err(_) => o
            .getattr("compression_type")?
            .extract::<Option<String>>()?
            .unwrap_or_default(),
    }))
}

/// The next item of a Python iterator's source held in `slot`, which is emptied at the end or
/// at the first error, so that every later `__next__` ends the iteration.
fn fused_next<S, T>(
    slot: &mut Option<S>,
    next: impl FnOnce(&mut S) -> PyResult<Option<T>>,
) -> PyResult<Option<T>> {
    let Some(source) = slot.as_mut() else {
        return Ok(None);
    };
    let item = next(source);
    if !matches!(item, Ok(Some(_))) {
        *slot = None;
    }
    item
}

/// The source of a native iterator, for one thread at a time. `__next__` waits for its source
/// with the GIL released (`ExampleBatchIterator`), or may let Python run other threads while it
/// holds the source (a garbage collection that runs a finaliser), so a second thread that
/// waited for the lock with the GIL held would deadlock the interpreter: the first one needs
/// the GIL back to return. The second thread gets a `RuntimeError` instead, as two threads
/// that drive one generator get a `ValueError`.
fn claim<'a, T>(source: &'a Mutex<T>, class: &str) -> PyResult<MutexGuard<'a, T>> {
    match source.try_lock() {
        Ok(guard) => Ok(guard),
        Err(TryLockError::Poisoned(e)) => Ok(e.into_inner()),
        Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(format!(
            "{class} is already in use by another thread"
        ))),
    }
}

/// Records in one contiguous block of memory: `data[offsets[i]..offsets[i + 1]]`.
#[derive(Default)]
struct Gathered {
    data: Vec<u8>,
    offsets: Vec<usize>,
}

impl Gathered {
    fn push(&mut self, record: &[u8]) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.data.extend_from_slice(record);
        self.offsets.push(self.data.len());
    }

    fn into_records(self) -> Vec<Bytes> {
        let data = Bytes::from(self.data);
        self.offsets
            .windows(2)
            .map(|w| data.slice(w[0]..w[1]))
            .collect()
    }
}

/// Serialized records held in Rust (one block of memory): parsed without becoming Python
/// `bytes`, or handed out one by one. Slices share the list (no copy of it).
#[pyclass(module = "tensorcast.io", name = "RecordBatch", frozen)]
pub(crate) struct RecordBatch {
    all: Arc<Vec<Bytes>>,
    range: std::ops::Range<usize>,
}

impl RecordBatch {
    fn new(records: Vec<Bytes>) -> Self {
        let n = records.len();
        Self {
            all: Arc::new(records),
            range: 0..n,
        }
    }

    /// The records of this batch.
    pub(crate) fn records(&self) -> &[Bytes] {
        &self.all[self.range.clone()]
    }
}

#[pymethods]
impl RecordBatch {
    fn __len__(&self) -> usize {
        self.range.len()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, i: isize) -> PyResult<Bound<'py, PyBytes>> {
        let records = self.records();
        let n = records.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(PyIndexError::new_err("record index out of range"));
        }
        Ok(PyBytes::new(py, &records[j as usize]))
    }

    /// Records `[start, stop)` (clamped), sharing this batch's memory.
    fn slice(&self, start: usize, stop: usize) -> RecordBatch {
        let stop = stop.min(self.range.len());
        let start = start.min(stop);
        RecordBatch {
            all: Arc::clone(&self.all),
            range: self.range.start + start..self.range.start + stop,
        }
    }

    /// The records as a list of `bytes`.
    fn to_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.records().iter().map(|r| PyBytes::new(py, r)))
    }
}

/// A mapped file's memory, owned by the `Bytes` its records are slices of.
struct Mapped(tensorcast_buffer::Buffer);

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

/// A whole file's bytes: memory-mapped (`mmap`: no copy, pages come from the page cache as
/// they are touched) or read; `None` when it cannot be opened.
fn whole_file(path: &std::path::Path, mmap: bool) -> Option<Bytes> {
    if mmap {
        let file = File::open(path).ok()?;
        let map = tensorcast_buffer::Buffer::map_file(&file).ok()?;
        return Some(Bytes::from_owner(Mapped(map)));
    }
    std::fs::read(path).ok().map(Bytes::from)
}

/// Reads records `[0, count)` from `offset` (the start of a record: 0, or an offset from
/// `record_offsets`) of the file at `path`; `count=None` reads to the end. Compressed files
/// can only be read from offset 0. A whole uncompressed file is memory-mapped (`mmap=True`,
/// the default: its records share the mapping, as `load_checkpoint` shares its file's), so it
/// must not be truncated while its records are in use; `mmap=False` reads it into memory.
#[pyfunction]
#[pyo3(signature = (path, compression_type=None, offset=0, count=None, verify_checksums=true, *, mmap=true))]
pub(crate) fn read_records(
    py: Python<'_>,
    path: PathBuf,
    compression_type: Option<&str>,
    offset: u64,
    count: Option<usize>,
    verify_checksums: bool,
    mmap: bool,
) -> PyResult<RecordBatch> {
    let compression = compression_arg(compression_type)?;
    let options = ReaderOptions {
        verify_checksums,
        ..ReaderOptions::with_compression(compression)
    };
    let records = py
        .detach(|| -> tensorcast_records::Result<Vec<Bytes>> {
            if offset == 0 && count.is_none() && compression == Compression::None {
                // A whole uncompressed file: mapped (or read) once, records are slices of it
                // (no copy each). A file that cannot be opened falls through to the reader,
                // which says why.
                if let Some(data) = whole_file(&path, mmap) {
                    return tensorcast_records::slice_records(&data, verify_checksums);
                }
            }
            let mut reader = if offset == 0 {
                RecordReader::open(&path, options)?
            } else {
                RecordReader::open_at(&path, offset, options)?
            };
            let mut out = Gathered::default();
            let mut n = 0usize;
            while count.is_none_or(|c| n < c) {
                match reader.next_record()? {
                    Some(r) => out.push(r),
                    None => break,
                }
                n += 1;
            }
            Ok(out.into_records())
        })
        .py()?;
    Ok(RecordBatch::new(records))
}

/// The offset of every record of an uncompressed TFRecord file and its end (headers read
/// only): `offsets[i]` is where record `i` starts, the last entry where the file's records end.
#[pyfunction]
pub(crate) fn record_offsets(py: Python<'_>, path: PathBuf) -> PyResult<Vec<u64>> {
    let index = py.detach(|| RecordIndex::build_file(&path)).py()?;
    Ok((0..=index.len()).map(|i| index.offset(i)).collect())
}

/// `tf.compat.v1.io.tf_record_iterator`: the records of a file, one `bytes` at a time.
#[pyclass(module = "tensorcast.io", name = "RecordIterator", frozen)]
pub(crate) struct RecordIterator {
    /// The reader (a `Mutex` makes the class `Sync`; [`claim`] keeps it to one thread).
    reader: Mutex<Option<RecordReader<File>>>,
}

/// `tensorcast.io.tf_record_iterator(path, options=None, compression_type=None)`.
#[pyfunction]
#[pyo3(signature = (path, options=None, compression_type=None))]
pub(crate) fn tf_record_iterator(
    path: PathBuf,
    options: Option<&Bound<'_, PyAny>>,
    compression_type: Option<&str>,
) -> PyResult<RecordIterator> {
    let from_options = options_compression(options)?;
    let compression = compression_arg(compression_type.or(from_options.as_deref()))?;
    let reader = RecordReader::open(&path, ReaderOptions::with_compression(compression)).py()?;
    Ok(RecordIterator {
        reader: Mutex::new(Some(reader)),
    })
}

#[pymethods]
impl RecordIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let mut guard = claim(&self.reader, "RecordIterator")?;
        fused_next(&mut guard, |reader| {
            let record = reader.next_record().py()?;
            Ok(record.map(|r| PyBytes::new(py, r)))
        })
    }
}

/// `tf.io.TFRecordWriter(path, options=None)`: writes records through tensorcast-io's atomic
/// output layer, to a temporary file renamed into place by `close()` (or the end of a `with`
/// block), so a reader never sees a partial file; a symbolic link is written through, a FIFO
/// or device (`/dev/null`) written as a stream, never replaced.
#[pyclass(module = "tensorcast.io", name = "TFRecordWriter")]
pub(crate) struct TfRecordWriter {
    writer: Option<FileWriter>,
}

#[pymethods]
impl TfRecordWriter {
    #[new]
    #[pyo3(signature = (path, options=None))]
    fn new(path: PathBuf, options: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let compression = compression_arg(options_compression(options)?.as_deref())?;
        let writer = FileWriter::create(&path, compression).py()?;
        Ok(Self {
            writer: Some(writer),
        })
    }

    /// Appends one record.
    fn write(&mut self, record: &[u8]) -> PyResult<()> {
        let w = self
            .writer
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("write to a closed TFRecordWriter"))?;
        w.write_record(record).py()
    }

    /// Flushes the records written so far: a FIFO or device target (written as a stream)
    /// gets them now; a file target shows them at `close()`, when it is renamed into place.
    fn flush(&mut self, py: Python<'_>) -> PyResult<()> {
        match self.writer.as_mut() {
            Some(w) => py.detach(|| w.flush()).py(),
            None => Ok(()),
        }
    }

    /// Finishes the file and renames it into place.
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        match self.writer.take() {
            Some(w) => py.detach(|| w.commit()).py(),
            None => Ok(()),
        }
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __exit__(
        &mut self,
        py: Python<'_>,
        _exc_type: &Bound<'_, PyAny>,
        _exc: &Bound<'_, PyAny>,
        _tb: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }
}

/// A flattened default value (`None` for none).
fn default_arg(value: &Bound<'_, PyAny>, dtype: DataType) -> PyResult<Option<Tensor>> {
    if value.is_none() {
        return Ok(None);
    }
    let t = crate::tensor::from_value(value, Some(dtype))?.inner;
    let n = t.num_elements();
    Ok(Some(t.reshape([n]).py()?))
}

/// One spec from the Python side's tuple (see `tensorcast/io.py`).
fn spec_arg(spec: &Bound<'_, PyTuple>) -> PyResult<(String, FeatureSpec)> {
    let kind: String = spec.get_item(0)?.extract()?;
    let name: String = spec.get_item(1)?.extract()?;
    let spec = match kind.as_str() {
        "fixed" => {
            let dtype = dtype_arg(&spec.get_item(3)?)?;
            FeatureSpec::FixedLen {
                shape: spec.get_item(2)?.extract()?,
                dtype,
                default_value: default_arg(&spec.get_item(4)?, dtype)?,
            }
        }
        "varlen" => FeatureSpec::VarLen {
            dtype: dtype_arg(&spec.get_item(2)?)?,
        },
        "fixedseq" => {
            let dtype = dtype_arg(&spec.get_item(3)?)?;
            FeatureSpec::FixedLenSequence {
                shape: spec.get_item(2)?.extract()?,
                dtype,
                allow_missing: spec.get_item(4)?.extract()?,
                default_value: default_arg(&spec.get_item(5)?, dtype)?,
            }
        }
        "ragged" => {
            let mut partitions = Vec::new();
            for p in spec.get_item(4)?.try_iter()? {
                let p = p?;
                let (kind, value): (String, Bound<'_, PyAny>) = p.extract()?;
                partitions.push(match kind.as_str() {
                    "row_lengths" => Partition::RowLengths(value.extract()?),
                    "row_splits" => Partition::RowSplits(value.extract()?),
                    "uniform_row_length" => Partition::UniformRowLength(value.extract()?),
                    "row_starts" => Partition::RowStarts(value.extract()?),
                    "row_limits" => Partition::RowLimits(value.extract()?),
                    "value_rowids" => Partition::ValueRowIds(value.extract()?),
                    other => return Err(invalid(format!("Unknown partition {other}"))),
                });
            }
            FeatureSpec::Ragged {
                dtype: dtype_arg(&spec.get_item(2)?)?,
                value_key: spec.get_item(3)?.extract()?,
                partitions,
                row_splits_dtype: dtype_arg(&spec.get_item(5)?)?,
            }
        }
        other => return Err(invalid(format!("Unknown feature kind {other}"))),
    };
    Ok((name, spec))
}

/// The serialized examples: a `RecordBatch`'s (shared, no copy) or a sequence of `bytes`
/// (gathered into one block).
enum Serialized {
    Batch(Py<RecordBatch>),
    Owned(Vec<Bytes>),
}

impl Serialized {
    fn records(&self) -> &[Bytes] {
        match self {
            Serialized::Batch(b) => b.get().records(),
            Serialized::Owned(v) => v,
        }
    }
}

fn serialized_arg(value: &Bound<'_, PyAny>) -> PyResult<Serialized> {
    if let Ok(batch) = value.cast::<RecordBatch>() {
        return Ok(Serialized::Batch(batch.clone().unbind()));
    }
    Ok(Serialized::Owned(serialized_vec(value)?))
}

fn serialized_vec(value: &Bound<'_, PyAny>) -> PyResult<Vec<Bytes>> {
    if let Ok(b) = value.cast::<PyBytes>() {
        return Ok(vec![Bytes::copy_from_slice(b.as_bytes())]);
    }
    let mut out = Gathered::default();
    for item in value.try_iter()? {
        let item = item?;
        if let Ok(b) = item.cast::<PyBytes>() {
            out.push(b.as_bytes());
        } else {
            let t = tensor_arg(&item)?;
            for s in t.as_slice::<tensorcast_core::TString>().py()? {
                out.push(s.as_ref());
            }
        }
    }
    Ok(out.into_records())
}

/// The native `parse_example(serialized, specs)`: a list of `(name, kind, parts...)`
/// (`("dense", t)`, `("sparse", indices, values, dense_shape)`, `("ragged", flat_values,
/// [row_splits...])`); `tensorcast.io.parse_example` builds TensorFlow's result from it. The
/// parts are `Tensor`s, or numpy arrays with `as_numpy` (views of the tensors' memory; strings
/// as `object` arrays of `bytes`).
#[pyfunction]
#[pyo3(signature = (serialized, specs, names=None, as_numpy=false))]
pub(crate) fn parse_example_native<'py>(
    py: Python<'py>,
    serialized: &Bound<'py, PyAny>,
    specs: &Bound<'py, PyList>,
    names: Option<Vec<String>>,
    as_numpy: bool,
) -> PyResult<Bound<'py, PyList>> {
    let records = serialized_arg(serialized)?;
    let parsed_specs = specs_arg(specs)?;
    let parsed = py
        .detach(|| {
            tensorcast_records::parse_example(records.records(), names.as_deref(), &parsed_specs)
        })
        .py()?;
    parsed_items(py, parsed, as_numpy)
}

/// `parse_example_arrow(serialized, specs, names=None)`: the parsed Examples as one
/// `ArrowBatch` (`tensorcast_arrow::parsed_to_batch`), built with the GIL released.
#[pyfunction]
#[pyo3(signature = (serialized, specs, names=None))]
pub(crate) fn parse_example_arrow(
    py: Python<'_>,
    serialized: &Bound<'_, PyAny>,
    specs: &Bound<'_, PyList>,
    names: Option<Vec<String>>,
) -> PyResult<ArrowBatch> {
    let records = serialized_arg(serialized)?;
    let parsed_specs = specs_arg(specs)?;
    let batch = py
        .detach(|| {
            tensorcast_records::parse_example(records.records(), names.as_deref(), &parsed_specs)
                .and_then(crate::arrow::to_batch)
        })
        .py()?;
    Ok(ArrowBatch::new(batch))
}

/// The native specs of a list of spec tuples.
fn specs_arg(specs: &Bound<'_, PyList>) -> PyResult<Vec<(String, FeatureSpec)>> {
    specs
        .iter()
        .map(|s| spec_arg(s.cast::<PyTuple>()?))
        .collect()
}

/// The native form of parsed results (see [`parse_example_native`]).
fn parsed_items<'py>(
    py: Python<'py>,
    parsed: Vec<(String, Parsed)>,
    as_numpy: bool,
) -> PyResult<Bound<'py, PyList>> {
    let out_of = |t: Tensor| -> PyResult<Bound<'py, PyAny>> {
        if as_numpy {
            crate::tensor::to_numpy(py, &t)
        } else {
            Ok(Py::new(py, PyTensor::new(t))?.into_bound(py).into_any())
        }
    };
    let out = PyList::empty(py);
    for (name, p) in parsed {
        let item = match p {
            Parsed::Dense(t) => PyTuple::new(
                py,
                [
                    name.into_pyobject(py)?.into_any(),
                    "dense".into_pyobject(py)?.into_any(),
                    out_of(t)?,
                ],
            )?,
            Parsed::Sparse {
                indices,
                values,
                dense_shape,
            } => PyTuple::new(
                py,
                [
                    name.into_pyobject(py)?.into_any(),
                    "sparse".into_pyobject(py)?.into_any(),
                    out_of(indices)?,
                    out_of(values)?,
                    out_of(dense_shape)?,
                ],
            )?,
            Parsed::Ragged {
                flat_values,
                row_splits,
            } => {
                let splits = PyList::empty(py);
                for s in row_splits {
                    splits.append(out_of(s)?)?;
                }
                PyTuple::new(
                    py,
                    [
                        name.into_pyobject(py)?.into_any(),
                        "ragged".into_pyobject(py)?.into_any(),
                        out_of(flat_values)?,
                        splits.into_any(),
                    ],
                )?
            }
        };
        out.append(item)?;
    }
    Ok(out)
}

/// The Examples of a TFRecord file (or of a `RecordBatch`) parsed `batch_size` at a time ahead
/// of the caller (`tensorcast_records::ExampleBatches`): each `next` is a batch in the native
/// form of `parse_example_native`, or an `ArrowBatch` built on the thread that parsed it.
#[pyclass(module = "tensorcast.io", name = "ExampleBatchIterator", frozen)]
pub(crate) struct ExampleBatchIterator {
    /// The batches (a `Mutex` makes the class `Sync`; [`claim`] keeps it to one thread).
    batches: Mutex<Option<Batches>>,
}

/// What an [`ExampleBatchIterator`] yields.
enum Batches {
    /// Parsed tensors, as numpy arrays or `Tensor`s.
    Parsed {
        batches: tensorcast_records::ExampleBatches,
        as_numpy: bool,
    },
    /// Arrow record batches.
    Arrow(tensorcast_records::ExampleBatches<arrow_array::RecordBatch>),
}

/// `parse_example_batches_native(source, specs, batch_size, compression_type, verify_checksums,
/// as_numpy, arrow)`: `source` is a path or a `RecordBatch`.
#[pyfunction]
#[pyo3(signature = (source, specs, batch_size, compression_type=None, verify_checksums=true, as_numpy=true, arrow=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn parse_example_batches_native(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    specs: &Bound<'_, PyList>,
    batch_size: usize,
    compression_type: Option<&str>,
    verify_checksums: bool,
    as_numpy: bool,
    arrow: bool,
) -> PyResult<ExampleBatchIterator> {
    use tensorcast_records::ExampleBatches;
    let parsed_specs = specs_arg(specs)?;
    let batches = if let Ok(batch) = source.cast::<RecordBatch>() {
        let records = batch.get().records().to_vec();
        if arrow {
            let b = ExampleBatches::from_records_map(
                records,
                batch_size,
                parsed_specs,
                crate::arrow::to_batch,
            );
            Batches::Arrow(b.py()?)
        } else {
            let batches = ExampleBatches::from_records(records, batch_size, parsed_specs).py()?;
            Batches::Parsed { batches, as_numpy }
        }
    } else {
        let path: PathBuf = source.extract()?;
        let options = ReaderOptions {
            verify_checksums,
            ..ReaderOptions::with_compression(compression_arg(compression_type)?)
        };
        py.detach(|| {
            if arrow {
                let finish = crate::arrow::to_batch;
                ExampleBatches::open_map(&path, options, batch_size, parsed_specs, finish)
                    .map(Batches::Arrow)
            } else {
                ExampleBatches::open(&path, options, batch_size, parsed_specs)
                    .map(|batches| Batches::Parsed { batches, as_numpy })
            }
        })
        .py()?
    };
    Ok(ExampleBatchIterator {
        batches: Mutex::new(Some(batches)),
    })
}

#[pymethods]
impl ExampleBatchIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let mut guard = claim(&self.batches, "ExampleBatchIterator")?;
        // Wait for the next batch with the GIL released: the reading thread and rayon's pool
        // never need it.
        fused_next(&mut guard, |source| {
            let next = match source {
                Batches::Parsed { batches, as_numpy } => {
                    let as_numpy = *as_numpy;
                    py.detach(|| batches.next()).map(|r| {
                        r.py()
                            .and_then(|p| Ok(parsed_items(py, p, as_numpy)?.into_any()))
                    })
                }
                Batches::Arrow(batches) => py.detach(|| batches.next()).map(|r| {
                    r.py().and_then(|b| {
                        Ok(Py::new(py, ArrowBatch::new(b))?.into_bound(py).into_any())
                    })
                }),
            };
            next.transpose()
        })
    }
}
