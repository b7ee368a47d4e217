//! Arrow IPC and Parquet files in the CLI: `convert` writes tensors to them as
//! `arrow.fixed_shape_tensor` columns (a tensor's first dimension is the rows), and Examples
//! parsed with `--spec` as one row per Example; it reads them back into tensors (told by
//! content: `PAR1`, `ARROW1` or an IPC stream's first message).

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

/// The Arrow-world format of the regular file `path`, told by its first bytes.
pub(crate) fn input_kind(path: &Path) -> Option<FileKind> {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let mut head = [0u8; 8];
    let mut f = std::fs::File::open(path).ok()?;
    let n = f.read(&mut head).ok()?;
    FileKind::detect(&head[..n])
}

/// The tensors of a Parquet or Arrow IPC file: a tensor per column (`[rows] + shape` for a
/// fixed-shape tensor column, `[rows]` for a plain one; list columns as `name.flat_values` and
/// `name.row_splits.<i>`).
pub(crate) fn load(path: &Path) -> Result<Vec<NamedTensor>> {
    let options = super::source::read_options();
    let len = std::fs::metadata(path)
        .map(|m| m.len())
        .with_context(|| shown(path))?;
    if len > options.max_memory {
        return Err(anyhow!(
            "the file is {len} bytes, over the memory limit of {} (--max-memory)",
            options.max_memory
        ))
        .with_context(|| shown(path));
    }
    let pb = super::progress::spinner(len, &format!("reading {}", path.display()));
    let r = (|| -> Result<Vec<NamedTensor>> {
        let bytes = std::fs::read(path)?;
        let limits = ReadLimits {
            max_decoded_bytes: options.max_memory,
        };
        let (schema, batches) = tensorcast_arrow::read_bytes(bytes.into(), &limits)?;
        let tensors = tensorcast_arrow::batches_to_tensors(&schema, &batches)?;
        Ok(tensors
            .into_iter()
            .map(|(n, t)| NamedTensor::new(n, t))
            .collect())
    })();
    pb.finish_and_clear();
    r.with_context(|| shown(path))
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
