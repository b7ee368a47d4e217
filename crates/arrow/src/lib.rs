//! tensorcast tensors and parsed `tf.train.Example`s to and from Apache Arrow, Arrow IPC
//! files and Parquet.
//!
//! - **Tensors as `arrow.fixed_shape_tensor`** (the canonical extension type): a tensor's
//!   first dimension is the rows, each row a tensor of the remaining dimensions stored
//!   row-major in a `FixedSizeList<value_type>[prod(shape)]`, with the extension's metadata
//!   written exactly as the specification and Arrow C++ write it (`{"shape":[28,28]}`; the
//!   singular `permutation` and `dim_names` when present, empty ones omitted), so pyarrow's
//!   `FixedShapeTensorArray.to_numpy_ndarray()` gives the tensor back. Reading accepts what
//!   pyarrow writes, `dim_names` and `permutation` included (a permuted column is read in its
//!   logical order, as `to_numpy_ndarray` gives it). arrow-rs's own `FixedShapeTensor`
//!   extension type is not used: releases before the fix wrote `permutations` (plural) with
//!   `null`s and refused pyarrow's `permutation`.
//! - **Parsed Examples as a record batch** ([`parsed_to_batch`]): one row per Example,
//!   fixed-length features as fixed-shape tensor columns (a scalar feature as a plain column),
//!   `VarLenFeature`s as list columns, `RaggedFeature`s as nested list columns, strings as
//!   `binary`.
//! - **Files** ([`write_file`], [`read_bytes`]): Parquet through the `parquet` crate (Snappy,
//!   the Arrow schema kept so that the extension types come back) and the Arrow IPC file and
//!   stream formats, written atomically as every tensorcast writer writes (temporary file,
//!   rename), read with a limit on the decoded size.
//!
//! Strings are `binary` columns: TensorFlow's strings are bytes. bfloat16, complex and the
//! float8 and quantized dtypes have no Arrow type and are refused with a hint to cast.
//!
//! This crate is the only one of tensorcast that compiles arrow-rs and parquet (with their
//! default features off: no zstd, brotli or lz4); the CLI uses it, and the facade re-exports
//! it behind its optional `arrow` feature, so users of the tensor core do not build it.
//!
//! ```
//! use tensorcast_arrow::{batch_to_tensors, read_bytes, tensors_to_batch, write_file, FileKind, ReadLimits};
//! use tensorcast_core::Tensor;
//!
//! let x = Tensor::from_vec((0..12).map(|v| v as f32).collect(), [3i64, 2, 2])?;
//! let y = Tensor::from_vec(vec![1i64, 0, 1], [3i64])?;
//! let batch = tensors_to_batch([("x", &x), ("y", &y)])?;
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("data.parquet");
//! write_file(&path, FileKind::Parquet, batch.schema(), &[batch])?;
//! let (_, batches) = read_bytes(std::fs::read(&path)?.into(), &ReadLimits::default())?;
//! let back = batch_to_tensors(&batches[0])?;
//! assert_eq!(back, vec![("x".to_string(), x), ("y".to_string(), y)]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub, missing_debug_implementations)]

mod batch;
mod convert;
mod error;
mod file;
mod ipc_check;
mod meta;
mod thrift_check;

pub use arrow_array;
pub use arrow_schema;
pub use batch::{batch_to_tensors, parsed_to_batch, tensors_to_batch};
pub use convert::{arrow_type, column_tensor, tensor_column, values_array};
pub use error::{Error, Result};
pub use file::{read_bytes, write_file, FileKind, ReadLimits};
pub use meta::{TensorType, EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY, FIXED_SHAPE_TENSOR};

/// The tensors of all the record batches of one schema: the batches' columns concatenated,
/// then read as [`batch_to_tensors`] reads one batch.
///
/// # Errors
/// As [`batch_to_tensors`]; [`Error::Invalid`] when the batches do not share the schema.
pub fn batches_to_tensors(
    schema: &arrow_schema::SchemaRef,
    batches: &[arrow_array::RecordBatch],
) -> Result<Vec<(String, tensorcast_core::Tensor)>> {
    if batches.is_empty() {
        // No batches: concatenating makes empty columns from the schema alone, and arrow-rs
        // panics making one of a map (or union, run-end) type a file declared malformed.
        // None of those is a tensor: refuse them first.
        for field in schema.fields() {
            if let Some(kind) = not_a_tensor(field.data_type()) {
                return Err(Error::Unsupported(format!(
                    "column '{}' holds {kind}, which a tensor cannot hold",
                    field.name()
                )));
            }
        }
    }
    let one = arrow_select::concat::concat_batches(schema, batches)?;
    batch_to_tensors(&one)
}

/// The kind of nested Arrow type in `t` that no tensor column is made of, if any.
fn not_a_tensor(t: &arrow_schema::DataType) -> Option<&'static str> {
    use arrow_schema::DataType as T;
    match t {
        T::Map(..) => Some("a map"),
        T::Union(..) => Some("a union"),
        T::RunEndEncoded(..) => Some("run-end encoded values"),
        T::List(f)
        | T::LargeList(f)
        | T::FixedSizeList(f, _)
        | T::ListView(f)
        | T::LargeListView(f) => not_a_tensor(f.data_type()),
        T::Struct(fields) => fields.iter().find_map(|f| not_a_tensor(f.data_type())),
        T::Dictionary(_, v) => not_a_tensor(v),
        _ => None,
    }
}
