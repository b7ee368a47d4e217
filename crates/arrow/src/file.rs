//! Parquet and Arrow IPC files: written atomically as tensorcast writes every file, read from
//! memory with limits.

use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use tensorcast_io::{ErrorKind, IoError};

use crate::error::{Error, Result};

/// The kind of an Arrow-world file, told by its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Apache Parquet (`PAR1` at both ends).
    Parquet,
    /// The Arrow IPC file format (Feather v2; `ARROW1` at both ends).
    ArrowFile,
    /// The Arrow IPC stream format (a message starting with the `0xFFFFFFFF` continuation).
    ArrowStream,
}

impl FileKind {
    /// The kind of a file starting with `head` (its first 8 bytes or more), if any.
    pub fn detect(head: &[u8]) -> Option<Self> {
        if head.starts_with(b"PAR1") {
            Some(FileKind::Parquet)
        } else if head.starts_with(b"ARROW1") {
            Some(FileKind::ArrowFile)
        } else if head.len() >= 8 && head.starts_with(&[0xff; 4]) && head[4..8] != [0; 4] {
            Some(FileKind::ArrowStream)
        } else {
            None
        }
    }

    /// The kind an output path's extension names: `.parquet` / `.pq` for Parquet, `.arrow`,
    /// `.feather` and `.ipc` for the Arrow IPC file format, `.arrows` for its stream format.
    pub fn from_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "parquet" | "pq" => Some(FileKind::Parquet),
            "arrow" | "feather" | "ipc" => Some(FileKind::ArrowFile),
            "arrows" => Some(FileKind::ArrowStream),
            _ => None,
        }
    }

    /// The kind a `--format` name asks for (`parquet`, `arrow`, `feather`, `ipc`,
    /// `arrow-stream`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "parquet" | "pq" => Some(FileKind::Parquet),
            "arrow" | "feather" | "ipc" | "arrow-file" => Some(FileKind::ArrowFile),
            "arrows" | "arrow-stream" => Some(FileKind::ArrowStream),
            _ => None,
        }
    }
}

fn io_error(what: &str, e: impl std::fmt::Display) -> IoError {
    IoError::new(ErrorKind::Io, format!("{what}: {e}"))
}

/// Writes `batches` (of one schema) to `path` as `kind`, atomically (a temporary file beside
/// it, renamed into place; on any error the old file stays and no temporary file is left).
/// Parquet is written by the `parquet` crate with Snappy compression (pyarrow's default), the
/// Arrow schema kept in the file so that extension types (`arrow.fixed_shape_tensor`) come
/// back.
///
/// # Errors
/// [`Error::Io`] when the file cannot be written; [`Error::Invalid`] when a batch does not
/// match the schema.
pub fn write_file(
    path: &Path,
    kind: FileKind,
    schema: SchemaRef,
    batches: &[RecordBatch],
) -> Result<()> {
    tensorcast_io::write_file_streamed(path, |w| match kind {
        FileKind::Parquet => {
            let props = parquet_properties(&schema);
            let mut writer = ArrowWriter::try_new(w, schema.clone(), Some(props))
                .map_err(|e| io_error("cannot write Parquet", e))?;
            for b in batches {
                writer
                    .write(b)
                    .map_err(|e| io_error("cannot write Parquet", e))?;
            }
            writer
                .close()
                .map_err(|e| io_error("cannot write Parquet", e))?;
            Ok(())
        }
        FileKind::ArrowFile => {
            let mut writer = arrow_ipc::writer::FileWriter::try_new(w, &schema)
                .map_err(|e| io_error("cannot write Arrow", e))?;
            for b in batches {
                writer
                    .write(b)
                    .map_err(|e| io_error("cannot write Arrow", e))?;
            }
            writer
                .finish()
                .map_err(|e| io_error("cannot write Arrow", e))
        }
        FileKind::ArrowStream => {
            let mut writer = arrow_ipc::writer::StreamWriter::try_new(w, &schema)
                .map_err(|e| io_error("cannot write Arrow", e))?;
            for b in batches {
                writer
                    .write(b)
                    .map_err(|e| io_error("cannot write Arrow", e))?;
            }
            writer
                .finish()
                .map_err(|e| io_error("cannot write Arrow", e))
        }
    })?;
    Ok(())
}

/// How Parquet is written: Snappy (pyarrow's default codec), statistics per column chunk (as
/// pyarrow writes them; no page index), and dictionary encoding where it pays: on for
/// integers and strings (labels, ids, tags repeat), off for floating-point columns, whose
/// dense feature values rarely repeat and whose hashing would dominate the write.
fn parquet_properties(schema: &arrow_schema::Schema) -> WriterProperties {
    let mut props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_statistics_enabled(EnabledStatistics::Chunk);
    if let Ok(descr) = parquet::arrow::ArrowSchemaConverter::new().convert(schema) {
        for c in descr.columns() {
            let float = matches!(
                c.physical_type(),
                parquet::basic::Type::FLOAT | parquet::basic::Type::DOUBLE
            ) || matches!(
                c.logical_type_ref(),
                Some(parquet::basic::LogicalType::Float16)
            );
            if float {
                props = props.set_column_dictionary_enabled(c.path().clone(), false);
            }
        }
    }
    props.build()
}

/// Limits for reading files that may be hostile.
#[derive(Debug, Clone, Copy)]
pub struct ReadLimits {
    /// The most bytes the decoded columns may take, estimated from the file's metadata before
    /// anything is decoded (Parquet's encodings can expand a few bytes into gigabytes).
    pub max_decoded_bytes: u64,
}

impl Default for ReadLimits {
    /// 8 GiB of decoded columns.
    fn default() -> Self {
        Self {
            max_decoded_bytes: 8 << 30,
        }
    }
}

/// Reads a Parquet or Arrow IPC file held in `bytes` (told by [`FileKind::detect`]): its
/// schema and record batches.
///
/// # Errors
/// [`Error::Invalid`] for a file that is not Parquet or Arrow IPC or is corrupt;
/// [`Error::Unsupported`] for one whose decoded size exceeds `limits`.
pub fn read_bytes(bytes: Bytes, limits: &ReadLimits) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let kind = FileKind::detect(&bytes).ok_or_else(|| {
        Error::Invalid("not a Parquet or Arrow IPC file (no PAR1 or ARROW1 magic)".into())
    })?;
    // arrow-rs's readers are not all hardened against hostile framing: the IPC framing is
    // checked first (ipc_check), and a panic left in a reader is caught and reported as a
    // corrupt file rather than taking the process down.
    let read = std::panic::AssertUnwindSafe(|| read_kind(kind, bytes, limits));
    std::panic::catch_unwind(read).unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("no message");
        Err(Error::Invalid(format!(
            "corrupt {} file (its reader failed: {why})",
            if kind == FileKind::Parquet {
                "Parquet"
            } else {
                "Arrow IPC"
            }
        )))
    })
}

fn read_kind(
    kind: FileKind,
    bytes: Bytes,
    limits: &ReadLimits,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    match kind {
        FileKind::Parquet => read_parquet(bytes, limits),
        FileKind::ArrowFile => {
            crate::ipc_check::check_file(&bytes)?;
            let reader = arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None)?;
            let schema = reader.schema();
            collect(schema, reader, limits)
        }
        FileKind::ArrowStream => {
            crate::ipc_check::check_stream(&bytes)?;
            let reader =
                arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)?;
            let schema = reader.schema();
            collect(schema, reader, limits)
        }
    }
}

fn collect(
    schema: SchemaRef,
    reader: impl Iterator<Item = std::result::Result<RecordBatch, arrow_schema::ArrowError>>,
    limits: &ReadLimits,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let mut out = Vec::new();
    let mut total = 0u64;
    for b in reader {
        let b = b?;
        total = total.saturating_add(b.get_array_memory_size() as u64);
        if total > limits.max_decoded_bytes {
            return Err(too_large(limits));
        }
        out.push(b);
    }
    Ok((schema, out))
}

fn too_large(limits: &ReadLimits) -> Error {
    Error::Unsupported(format!(
        "the file's columns decode to more than the limit of {} bytes",
        limits.max_decoded_bytes
    ))
}

fn read_parquet(bytes: Bytes, limits: &ReadLimits) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes)?;
    // Bound what decoding may allocate before decoding: rows times the columns' fixed widths
    // (a list or string column counts its declared uncompressed bytes).
    let meta = builder.metadata().clone();
    let mut estimate = 0u64;
    for rg in meta.row_groups() {
        let rows = rg.num_rows().max(0) as u64;
        for c in rg.columns() {
            let width = match c.column_type() {
                parquet::basic::Type::BOOLEAN => 1,
                parquet::basic::Type::INT32 | parquet::basic::Type::FLOAT => 4,
                parquet::basic::Type::INT64 | parquet::basic::Type::DOUBLE => 8,
                parquet::basic::Type::INT96 => 12,
                _ => 16,
            };
            let values = c.num_values().max(0) as u64;
            estimate = estimate
                .saturating_add(rows.max(values).saturating_mul(width))
                .saturating_add(c.uncompressed_size().max(0) as u64);
        }
    }
    if estimate > limits.max_decoded_bytes {
        return Err(too_large(limits));
    }
    let schema = builder.schema().clone();
    let reader = builder.build()?;
    collect(schema, reader, limits)
}
