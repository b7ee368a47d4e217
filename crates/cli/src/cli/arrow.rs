//! Arrow IPC and Parquet files in the CLI: `convert` writes tensors to them as
//! `arrow.fixed_shape_tensor` columns (a tensor's first dimension is the rows), and Examples
//! parsed with `--spec` as one row per Example; it reads them back into tensors, and `inspect`
//! shows them (told by the one detector, [`super::detect`]: `PAR1`, `ARROW1` or an IPC
//! stream's first message).

use std::path::Path;

use anyhow::{anyhow, Context, Result};
use tensorcast::io::{escaped, NamedTensor};
use tensorcast_arrow::{FileKind, ReadLimits};
use tensorcast_records::Parsed;

fn shown(path: &Path) -> String {
    escaped(&path.display().to_string())
}

/// The Arrow-world format an output is asked for in: `--format parquet|arrow|arrow-stream`,
/// else its extension (`.parquet`, `.pq`, `.arrow`, `.feather`, `.ipc`, `.arrows`).
pub(crate) fn output_kind(output: &Path, format: Option<&str>) -> Option<FileKind> {
    match format {
        Some(f) => FileKind::from_name(f),
        None => FileKind::from_path(output),
    }
}

/// A Parquet or Arrow IPC file read whole: its schema, rows and the tensors of its columns.
pub(crate) struct Table {
    /// The schema: each field's name and Arrow type (and its tensor extension, if any).
    pub(crate) schema: tensorcast_arrow::arrow_schema::SchemaRef,
    /// Rows over all the record batches.
    pub(crate) rows: u64,
    /// A tensor per column (see [`load`]).
    pub(crate) tensors: Vec<NamedTensor>,
    /// The file's size.
    pub(crate) file_bytes: u64,
}

/// Reads the Parquet or Arrow IPC file `path` through the one input layer (a regular file
/// read or mapped, a procfs file or FIFO up to `--max-stream`); what its columns decode to
/// beyond the file's size is charged to the command's `--max-memory` budget (and bounded by
/// what is left of it before anything is decoded). Errors name the file.
pub(crate) fn read_table(path: &Path) -> Result<Table> {
    let options = super::source::read_options();
    let budget = super::source::budget();
    let buf = tensorcast::io::read_path_buffer(path, &options).with_context(|| shown(path))?;
    let len = buf.len() as u64;
    let pb = super::progress::spinner(len, &format!("reading {}", path.display()));
    let r = (|| -> Result<Table> {
        let limits = ReadLimits {
            max_decoded_bytes: len.saturating_add(budget.remaining_bytes()),
        };
        let (schema, batches) =
            tensorcast_arrow::read_bytes(buf.into_bytes(), &limits).map_err(|e| match e {
                tensorcast_arrow::Error::Unsupported(m) if m.contains("decode to more than") => {
                    anyhow!(
                        "{m}: the file's {len} bytes and the {} left of --max-memory ({} bytes)",
                        budget.remaining_bytes(),
                        budget.limit_bytes()
                    )
                }
                e => anyhow!(e),
            })?;
        let rows = batches.iter().map(|b| b.num_rows() as u64).sum();
        let tensors: Vec<NamedTensor> = tensorcast_arrow::batches_to_tensors(&schema, &batches)?
            .into_iter()
            .map(|(n, t)| NamedTensor::new(n, t))
            .collect();
        drop(batches);
        let decoded: u64 = tensors.iter().map(|t| t.tensor.total_bytes() as u64).sum();
        budget.charge(
            decoded.saturating_sub(len),
            format_args!("the {} columns' tensors", tensors.len()),
        )?;
        Ok(Table {
            schema,
            rows,
            tensors,
            file_bytes: len,
        })
    })();
    pb.finish_and_clear();
    r.with_context(|| shown(path))
}

/// The tensors of a Parquet or Arrow IPC file: a tensor per column (`[rows] + shape` for a
/// fixed-shape tensor column, `[rows]` for a plain one; list columns as `name.flat_values` and
/// `name.row_splits.<i>`).
pub(crate) fn load(path: &Path) -> Result<Vec<NamedTensor>> {
    read_table(path).map(|t| t.tensors)
}

/// What `inspect` shows of a Parquet or Arrow IPC file: its kind, rows and schema (each
/// column's Arrow type, and the shape of a fixed-shape tensor column's cells), then the
/// tensor of each column with its dtype, shape and statistics as for any tensor file.
pub(crate) fn inspect(
    path: &Path,
    kind: FileKind,
    args: &super::inspect::Args,
) -> Result<super::inspect::FileReport> {
    let table = read_table(path)?;
    let kind_name = match kind {
        FileKind::Parquet => "parquet",
        FileKind::ArrowFile => "arrow",
        FileKind::ArrowStream => "arrow stream",
    };
    let schema: Vec<(String, String)> = table
        .schema
        .fields()
        .iter()
        .map(|f| {
            let tensor = tensorcast_arrow::TensorType::of_field(f)
                .ok()
                .flatten()
                .map(|t| format!(" (tensor cells of shape {:?})", t.logical_shape()))
                .unwrap_or_default();
            (f.name().clone(), format!("{}{tensor}", f.data_type()))
        })
        .collect();
    let format = format!(
        "{kind_name}, {} row{}, {} column{}",
        table.rows,
        if table.rows == 1 { "" } else { "s" },
        schema.len(),
        if schema.len() == 1 { "" } else { "s" }
    );
    let mut report = super::inspect::tensors_report(
        path,
        table.file_bytes,
        format,
        Vec::new(),
        table.tensors,
        args,
    );
    report.set_schema(table.rows, schema);
    Ok(report)
}

fn write(
    path: &Path,
    kind: FileKind,
    batch: tensorcast_arrow::arrow_array::RecordBatch,
) -> Result<()> {
    if super::source::is_std(path) {
        return Err(anyhow!(
            "Parquet and Arrow files are written to a named file, not standard output"
        ));
    }
    let pb = super::progress::spinner(
        batch.get_array_memory_size() as u64,
        &format!("writing {}", path.display()),
    );
    let r = tensorcast_arrow::write_file(path, kind, batch.schema(), &[batch]);
    pb.finish_and_clear();
    r.with_context(|| shown(path))
}

/// Writes `tensors` as one record batch: one column per tensor, the rows from their first
/// dimension (which they must share).
pub(crate) fn write_tensors(path: &Path, kind: FileKind, tensors: &[NamedTensor]) -> Result<()> {
    let batch =
        tensorcast_arrow::tensors_to_batch(tensors.iter().map(|t| (t.name.as_str(), &t.tensor)))
            .with_context(|| shown(path))?;
    write(path, kind, batch)
}

/// Writes parsed Examples as one record batch: a row per Example, a column per feature.
pub(crate) fn write_parsed(path: &Path, kind: FileKind, parsed: &[(String, Parsed)]) -> Result<()> {
    let batch = tensorcast_arrow::parsed_to_batch(parsed).with_context(|| shown(path))?;
    write(path, kind, batch)
}
