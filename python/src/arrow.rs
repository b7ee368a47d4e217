//! Parsed Examples as Arrow record batches, built natively and handed to pyarrow (or any
//! consumer of the Arrow PyCapsule interface) through the Arrow C data interface, without a
//! copy and without a Python call per column.

use arrow_array::ffi::to_ffi;
use arrow_array::{Array, RecordBatch, StructArray};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use tensorcast_records::{ParsedBatch, RecordsError};

use crate::errors::invalid;

/// One record batch of parsed Examples: `pyarrow.record_batch(b)` or `pyarrow.table(b)` takes
/// it through `__arrow_c_array__` (the Arrow PyCapsule interface), sharing its memory.
#[pyclass(module = "tensorcast.io", name = "ArrowBatch", frozen)]
pub(crate) struct ArrowBatch {
    batch: RecordBatch,
}

impl ArrowBatch {
    pub(crate) fn new(batch: RecordBatch) -> Self {
        Self { batch }
    }
}

#[pymethods]
impl ArrowBatch {
    /// The number of rows (Examples).
    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// The batch as a struct array's `(schema, array)` capsules (the Arrow PyCapsule
    /// interface); a requested schema is not supported and is ignored, as the interface allows.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let data = StructArray::from(self.batch.clone()).into_data();
        let (array, schema) = to_ffi(&data).map_err(|e| invalid(e.to_string()))?;
        let schema = PyCapsule::new(py, schema, Some(c"arrow_schema".to_owned()))?;
        let array = PyCapsule::new(py, array, Some(c"arrow_array".to_owned()))?;
        Ok((schema, array))
    }
}

/// A parsed batch as a record batch (`tensorcast_arrow::parsed_to_batch`), its error as the
/// records crate's invalid-argument error.
pub(crate) fn to_batch(parsed: ParsedBatch) -> Result<RecordBatch, RecordsError> {
    tensorcast_arrow::parsed_to_batch(&parsed)
        .map_err(|e| RecordsError::InvalidArgument(e.to_string()))
}
