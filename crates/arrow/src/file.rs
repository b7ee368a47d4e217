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
use crate::thrift_check::{Chunk, Codec};

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
/// back. Its column chunks are encoded on every core: the rows are cut into row groups of at
/// least 16 MiB, one per core (at most 1Mi rows each), and each (row group, column) pair is
/// encoded by its own task.
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
    // Arrow's file and stream writers share no trait: one body for both.
    macro_rules! write_ipc {
        ($writer:ty, $w:expr) => {{
            let arrow = |e: arrow_schema::ArrowError| io_error("cannot write Arrow", e);
            let mut writer = <$writer>::try_new($w, &schema).map_err(arrow)?;
            for b in batches {
                writer.write(b).map_err(arrow)?;
            }
            writer.finish().map_err(arrow)
        }};
    }
    tensorcast_io::write_file_streamed(path, |w| match kind {
        FileKind::Parquet => {
            write_parquet(w, &schema, batches).map_err(|e| io_error("cannot write Parquet", e))
        }
        FileKind::ArrowFile => write_ipc!(arrow_ipc::writer::FileWriter<_>, w),
        FileKind::ArrowStream => write_ipc!(arrow_ipc::writer::StreamWriter<_>, w),
    })?;
    Ok(())
}

/// Row groups of at least this many bytes (Arrow's in-memory size) when a write is split into
/// row groups to encode them on several cores: smaller ones would cost readers more per row
/// (metadata, statistics, one more seek) than the encoding gains.
const MIN_PARALLEL_ROW_GROUP_BYTES: usize = 16 << 20;

/// The row groups of a write: consecutive slices of `batches` (zero-copy), at most `max_rows`
/// rows each (the writer's row-group size, 1Mi rows as pyarrow's), and at least `threads` of
/// them when the data is large enough that each still holds `MIN_PARALLEL_ROW_GROUP_BYTES`.
fn row_groups(batches: &[RecordBatch], max_rows: usize, threads: usize) -> Vec<Vec<RecordBatch>> {
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if rows == 0 {
        return Vec::new();
    }
    let bytes: usize = batches.iter().map(RecordBatch::get_array_memory_size).sum();
    let by_rows = rows.div_ceil(max_rows.max(1));
    let by_cores = threads.min(bytes / MIN_PARALLEL_ROW_GROUP_BYTES).max(1);
    let n = by_rows.max(by_cores).min(rows);
    let mut groups = Vec::with_capacity(n);
    let mut current = Vec::new();
    let (mut g, mut in_group) = (0usize, 0usize);
    // Group `g` takes rows up to `rows * (g + 1) / n`.
    let goal = |g: usize| rows * (g + 1) / n - rows * g / n;
    for b in batches {
        let mut at = 0;
        while at < b.num_rows() {
            let take = (goal(g) - in_group).min(b.num_rows() - at);
            current.push(b.slice(at, take));
            at += take;
            in_group += take;
            if in_group == goal(g) {
                groups.push(std::mem::take(&mut current));
                g += 1;
                in_group = 0;
            }
        }
    }
    groups
}

/// Writes Parquet with its column chunks encoded in parallel: the rows are cut into row groups
/// ([`row_groups`]), and each (row group, column) pair is encoded by its own rayon task through
/// the `parquet` crate's `ArrowColumnWriter`, a wave of row groups (one per core) at a time, so
/// memory holds the encoded pages of one wave. The file is what `ArrowWriter` writes for the
/// same row groups: the same properties, the Arrow schema in the footer.
fn write_parquet<W: std::io::Write + Send>(
    w: W,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> parquet::errors::Result<()> {
    use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowColumnWriter};
    use parquet::errors::ParquetError;
    use rayon::prelude::*;

    for b in batches {
        let fits = b.num_columns() == schema.fields().len()
            && (b.columns().iter().zip(schema.fields()))
                .all(|(c, f)| c.data_type() == f.data_type());
        if !fits {
            return Err(ParquetError::General(format!(
                "a record batch of schema {} does not match the file's schema {}",
                b.schema(),
                schema
            )));
        }
    }
    let props = parquet_properties(schema);
    let max_rows = props
        .max_row_group_row_count()
        .unwrap_or(parquet::file::properties::DEFAULT_MAX_ROW_GROUP_ROW_COUNT);
    let writer = ArrowWriter::try_new(w, schema.clone(), Some(props))?;
    let (mut file, factory) = writer.into_serialized_writer()?;
    // How many Parquet leaf columns each Arrow field has (a nested field has several).
    let descr = file.schema_descr();
    let mut leaves_of = vec![0usize; schema.fields().len()];
    for leaf in 0..descr.num_columns() {
        if let Some(n) = leaves_of.get_mut(descr.get_column_root_idx(leaf)) {
            *n += 1;
        }
    }
    let threads = rayon::current_num_threads().max(1);
    let groups = row_groups(batches, max_rows, threads);
    let mut next_group = 0usize;
    for wave in groups.chunks(threads) {
        // One task per (row group, field), with that field's column writers.
        let mut tasks: Vec<(&[RecordBatch], usize, Vec<ArrowColumnWriter>)> = Vec::new();
        for group in wave {
            let mut writers = factory.create_column_writers(next_group)?.into_iter();
            next_group += 1;
            for (i, &n) in leaves_of.iter().enumerate() {
                tasks.push((group.as_slice(), i, writers.by_ref().take(n).collect()));
            }
        }
        let encoded: Vec<Vec<ArrowColumnChunk>> = tasks
            .into_par_iter()
            .map(|(group, i, mut writers)| {
                let field = schema.field(i);
                for b in group {
                    let leaves = compute_leaves(field, b.column(i))?;
                    if leaves.len() != writers.len() {
                        return Err(ParquetError::General(format!(
                            "column '{}' has {} leaves, its schema {}",
                            field.name(),
                            leaves.len(),
                            writers.len()
                        )));
                    }
                    for (w, leaf) in writers.iter_mut().zip(&leaves) {
                        w.write(leaf)?;
                    }
                }
                writers.into_iter().map(ArrowColumnWriter::close).collect()
            })
            .collect::<parquet::errors::Result<_>>()?;
        let mut encoded = encoded.into_iter();
        for _ in wave {
            let mut rg = file.next_row_group()?;
            for chunks in encoded.by_ref().take(leaves_of.len()) {
                for c in chunks {
                    c.append_to_row_group(&mut rg)?;
                }
            }
            rg.close()?;
        }
    }
    file.close()?;
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
    let file_len = bytes.len() as u64;
    crate::thrift_check::check_footer(&bytes)?;
    // No page index: the reader walks each chunk's page headers, which are checked below.
    let options = parquet::arrow::arrow_reader::ArrowReaderOptions::new()
        .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Skip);
    let builder = ParquetRecordBatchReaderBuilder::try_new_with_options(bytes.clone(), options)?;
    // Bound what decoding may allocate before decoding: rows times the columns' fixed widths
    // (a list or string column counts its declared uncompressed bytes).
    let meta = builder.metadata().clone();
    let mut estimate = 0u64;
    for (rg_idx, rg) in meta.row_groups().iter().enumerate() {
        let rows = rg.num_rows().max(0) as u64;
        for c in rg.columns() {
            // The `parquet` crate asserts (panics) on a negative column start or size when it
            // reads the chunk: refuse those, and chunks past the end of the file, first.
            let start = c.dictionary_page_offset().unwrap_or(c.data_page_offset());
            let inside = u64::try_from(start)
                .ok()
                .zip(u64::try_from(c.compressed_size()).ok())
                .and_then(|(s, l)| s.checked_add(l))
                .is_some_and(|end| end <= file_len);
            if !inside {
                return Err(Error::Invalid(
                    "corrupt Parquet file: a column chunk lies outside the file".into(),
                ));
            }
            let start = start as usize;
            let descr = c.column_descr();
            let codec = match c.compression() {
                parquet::basic::Compression::UNCOMPRESSED => Codec::Stored,
                parquet::basic::Compression::SNAPPY => Codec::Snappy,
                _ => Codec::Other,
            };
            crate::thrift_check::check_page_headers(
                &bytes,
                &Chunk {
                    name: &format!("column {} of row group {rg_idx}", c.column_path()),
                    range: start..start + c.compressed_size() as usize,
                    num_values: c.num_values(),
                    physical: c.column_type(),
                    type_length: descr.type_length(),
                    codec,
                    max_decoded_bytes: limits.max_decoded_bytes,
                },
            )?;
            let width = match c.column_type() {
                parquet::basic::Type::BOOLEAN => 1,
                parquet::basic::Type::INT32 | parquet::basic::Type::FLOAT => 4,
                parquet::basic::Type::INT64 | parquet::basic::Type::DOUBLE => 8,
                parquet::basic::Type::INT96 => 12,
                // The reader reserves a batch of fixed-length values before reading one.
                parquet::basic::Type::FIXED_LEN_BYTE_ARRAY => {
                    let len = u64::try_from(descr.type_length()).unwrap_or(0).max(1);
                    if (READ_BATCH_ROWS as u64).saturating_mul(len) > limits.max_decoded_bytes {
                        return Err(too_large(limits));
                    }
                    len.max(16)
                }
                parquet::basic::Type::BYTE_ARRAY => 16,
            };
            // Each level takes 2 bytes of definition and 2 of repetition levels as decoded.
            let levels =
                2 * u64::from(descr.max_def_level() > 0) + 2 * u64::from(descr.max_rep_level() > 0);
            let values = c.num_values().max(0) as u64;
            estimate = estimate
                .saturating_add(rows.max(values).saturating_mul(width + levels))
                .saturating_add(c.uncompressed_size().max(0) as u64);
        }
    }
    // A fixed-size list column (from the Arrow schema the file carries) is read into
    // `rows x size` slots whatever its pages hold: count those too.
    let rows = meta
        .row_groups()
        .iter()
        .map(|rg| rg.num_rows().max(0) as u64)
        .fold(0u64, u64::saturating_add);
    // The reader sizes a batch's fixed-size list column at `lists x size` before it looks at
    // the values (null lists included), so one batch alone must fit the limit too.
    for field in builder.schema().fields() {
        let slots = fixed_size_slots(field.data_type());
        if slots > 1 {
            let per_row = slots.saturating_mul(16);
            if (READ_BATCH_ROWS as u64).saturating_mul(per_row) > limits.max_decoded_bytes {
                return Err(too_large(limits));
            }
            estimate = estimate.saturating_add(rows.saturating_mul(per_row));
        }
    }
    if estimate > limits.max_decoded_bytes {
        return Err(too_large(limits));
    }
    check_pages(&bytes, &meta)?;
    let schema = builder.schema().clone();
    let reader = builder.with_batch_size(READ_BATCH_ROWS).build()?;
    collect(schema, reader, limits)
}

/// Rows the Parquet reader decodes at a time.
const READ_BATCH_ROWS: usize = 1024;

/// How many values a row of `t` holds through its fixed-size lists (1 without any).
fn fixed_size_slots(t: &arrow_schema::DataType) -> u64 {
    use arrow_schema::DataType as T;
    match t {
        T::FixedSizeList(f, n) => u64::try_from(*n)
            .unwrap_or(u64::MAX) // a negative size (a damaged schema): refused as too large
            .saturating_mul(fixed_size_slots(f.data_type())),
        T::List(f) | T::LargeList(f) => fixed_size_slots(f.data_type()),
        T::Struct(fields) => fields
            .iter()
            .map(|f| fixed_size_slots(f.data_type()))
            .fold(1, u64::saturating_add),
        _ => 1,
    }
}

/// Walks every page of every column chunk, through the same page reader and page locations
/// that the arrow reader will use, and refuses what the `parquet` crate (60.x) panics on
/// rather than refusing (found by the `arrow_read` fuzz target and the damaged-file test):
/// a dictionary-encoded data page before (or without) its dictionary page ("Decoder for dict
/// should have been set"), a dictionary page of no values that holds bytes (a division by zero
/// in its plain byte-array decoder), and repetition or definition levels whose runs need more
/// bytes than the page holds (arrow-buffer's "offset + len out of bounds" under the crate's
/// definition-level decoder). The walk reads every page once more (decompressing it); Parquet
/// reading is not on a hot path here, and a file that cannot crash the reader is worth it.
fn check_pages(bytes: &Bytes, meta: &parquet::file::metadata::ParquetMetaData) -> Result<()> {
    use parquet::basic::Encoding;
    use parquet::column::page::{Page, PageReader};
    use parquet::file::serialized_reader::SerializedPageReader;

    let reader = std::sync::Arc::new(bytes.clone());
    for (rg_idx, rg) in meta.row_groups().iter().enumerate() {
        for (col_idx, chunk) in rg.columns().iter().enumerate() {
            let locations = meta
                .page_index()
                .and_then(|i| i.page_locations(rg_idx, col_idx).cloned());
            let total_rows = usize::try_from(rg.num_rows()).unwrap_or(0);
            let mut pages =
                SerializedPageReader::new(reader.clone(), chunk, total_rows, locations)?;
            let mut have_dictionary = false;
            let descr = chunk.column_descr();
            let (max_rep, max_def) = (descr.max_rep_level(), descr.max_def_level());
            while let Some(page) = pages.get_next_page()? {
                let column = || format!("column {} of row group {rg_idx}", chunk.column_path());
                let encoding = match page {
                    Page::DictionaryPage {
                        buf, num_values, ..
                    } => {
                        // A dictionary of no values holding bytes makes the crate's plain
                        // byte-array decoder divide by zero.
                        if num_values == 0 && !buf.is_empty() {
                            return Err(Error::Invalid(format!(
                                "corrupt Parquet file: the dictionary page of {} holds {} bytes \
                                 for no values",
                                column(),
                                buf.len()
                            )));
                        }
                        have_dictionary = true;
                        continue;
                    }
                    Page::DataPage {
                        ref buf,
                        num_values,
                        encoding,
                        def_level_encoding,
                        rep_level_encoding,
                        ..
                    } => {
                        let mut rest = &buf[..];
                        for (max, level_encoding) in
                            [(max_rep, rep_level_encoding), (max_def, def_level_encoding)]
                        {
                            if max > 0 {
                                rest = check_v1_levels(rest, max, num_values, level_encoding)
                                    .map_err(|why| corrupt_levels(&column(), why))?;
                            }
                        }
                        check_delta_counts(rest, encoding, num_values, &column)?;
                        encoding
                    }
                    Page::DataPageV2 {
                        ref buf,
                        num_values,
                        encoding,
                        def_levels_byte_len,
                        rep_levels_byte_len,
                        ..
                    } => {
                        let (rep_len, def_len) =
                            (rep_levels_byte_len as usize, def_levels_byte_len as usize);
                        if rep_len.saturating_add(def_len) > buf.len() {
                            return Err(corrupt_levels(
                                &column(),
                                format!(
                                    "{rep_len} + {def_len} bytes of levels in a page of {}",
                                    buf.len()
                                ),
                            ));
                        }
                        let (rep, def) = buf[..rep_len + def_len].split_at(rep_len);
                        for (max, levels) in [(max_rep, rep), (max_def, def)] {
                            if max > 0 {
                                check_hybrid_levels(levels, max, num_values)
                                    .map_err(|why| corrupt_levels(&column(), why))?;
                            }
                        }
                        check_delta_counts(
                            &buf[rep_len + def_len..],
                            encoding,
                            num_values,
                            &column,
                        )?;
                        encoding
                    }
                };
                let dictionary_encoded = matches!(
                    encoding,
                    Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY
                );
                if dictionary_encoded && !have_dictionary {
                    return Err(Error::Invalid(format!(
                        "corrupt Parquet file: {} has a dictionary-encoded page before its \
                         dictionary page",
                        column()
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The delta encodings' decoders in the crate allocate the value count their stream's header
/// declares (`vec![0; count]` of lengths) before decoding a value: a data page's header of a
/// few bytes could ask for 8 GiB. Each count (the lengths of DELTA_LENGTH_BYTE_ARRAY, the
/// prefix and then suffix lengths of DELTA_BYTE_ARRAY, the values of DELTA_BINARY_PACKED)
/// must be at most the page's `num_values`, which the page header check has bounded by the
/// column chunk's. A stream that does not parse is left to the crate, which refuses it.
fn check_delta_counts(
    values: &[u8],
    encoding: parquet::basic::Encoding,
    num_values: u32,
    column: &dyn Fn() -> String,
) -> Result<()> {
    use parquet::basic::Encoding;
    let streams = match encoding {
        Encoding::DELTA_BINARY_PACKED | Encoding::DELTA_LENGTH_BYTE_ARRAY => 1,
        Encoding::DELTA_BYTE_ARRAY => 2,
        _ => return Ok(()),
    };
    let mut at = 0usize;
    for _ in 0..streams {
        let Some((count, end)) = values.get(at..).and_then(delta_stream) else {
            return Ok(());
        };
        if count > u64::from(num_values) {
            return Err(Error::Invalid(format!(
                "corrupt Parquet file: a data page of {} declares {count} {encoding} values in \
                 a page of {num_values}",
                column()
            )));
        }
        // The crate reads the next stream only after this one's values.
        let Some(end) = end else { return Ok(()) };
        at += end;
    }
    Ok(())
}

/// A ULEB128 integer at `at` in `data`, as the crate reads it (it refuses more than 10 bytes).
fn uleb(data: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..10 {
        let b = *data.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The value count a DELTA_BINARY_PACKED stream at the start of `data` declares in its header,
/// and where the stream ends as the crate's decoder finds it (after the last block that holds
/// a value; the bit widths of a block's mini blocks past the last value count as 0), if its
/// blocks are all there. `None` for a header the crate's decoder refuses.
fn delta_stream(data: &[u8]) -> Option<(u64, Option<usize>)> {
    let mut at = 0usize;
    let block = uleb(data, &mut at)?;
    let minis = uleb(data, &mut at)?;
    let count = uleb(data, &mut at)?;
    uleb(data, &mut at)?; // the first value
    if minis == 0 || block % 128 != 0 || block % minis != 0 || i64::try_from(count).is_err() {
        return None;
    }
    let per_mini = block / minis;
    if per_mini % 32 != 0 {
        return None;
    }
    Some((count, delta_blocks_end(data, at, count, minis, per_mini)))
}

/// Where the blocks of a DELTA_BINARY_PACKED stream starting at `at` in `data` end, up to the
/// one holding the last of its `count` values (`None` when they are not all there).
fn delta_blocks_end(
    data: &[u8],
    mut at: usize,
    count: u64,
    minis: u64,
    per_mini: u64,
) -> Option<usize> {
    let mut left = count.saturating_sub(1);
    while left > 0 {
        if per_mini == 0 {
            return None; // no block holds a value: the crate runs out of bytes
        }
        uleb(data, &mut at)?; // the block's min delta
        let widths = data.get(at..at.checked_add(usize::try_from(minis).ok()?)?)?;
        at += widths.len();
        let mut bytes = 0u64;
        for &w in widths {
            if left > 0 {
                bytes = bytes.saturating_add(u64::from(w).saturating_mul(per_mini) / 8);
                left = left.saturating_sub(per_mini);
            }
        }
        at = at.checked_add(usize::try_from(bytes).ok()?)?;
        if at > data.len() {
            return None;
        }
    }
    Some(at)
}

fn corrupt_levels(column: &str, why: String) -> Error {
    Error::Invalid(format!(
        "corrupt Parquet file: the levels of a data page of {column} are damaged ({why})"
    ))
}

/// Bits a level of at most `max` takes.
fn level_bits(max: i16) -> u64 {
    u64::from(16 - (max.max(0) as u16).leading_zeros())
}

/// Checks the levels at the start of a version-1 data page body (RLE: a 4-byte length and a
/// hybrid stream; the old BIT_PACKED: `values` packed levels) and returns the bytes after them.
fn check_v1_levels(
    body: &[u8],
    max: i16,
    values: u32,
    encoding: parquet::basic::Encoding,
) -> std::result::Result<&[u8], String> {
    use parquet::basic::Encoding;
    match encoding {
        Encoding::RLE => {
            let (len, rest) = body
                .split_first_chunk::<4>()
                .ok_or_else(|| format!("{} bytes, no level length", body.len()))?;
            let len = u32::from_le_bytes(*len) as usize;
            if len > rest.len() {
                return Err(format!("{len} bytes of levels, {} left", rest.len()));
            }
            let (levels, rest) = rest.split_at(len);
            check_hybrid_levels(levels, max, values)?;
            Ok(rest)
        }
        #[allow(deprecated)]
        Encoding::BIT_PACKED => {
            // The crate slices these bytes without checking that the page holds them.
            let len = (u64::from(values) * level_bits(max)).div_ceil(8);
            match usize::try_from(len) {
                Ok(len) if len <= body.len() => Ok(&body[len..]),
                _ => Err(format!("{len} bytes of packed levels, {} left", body.len())),
            }
        }
        // The crate refuses other level encodings with an error of its own.
        _ => Ok(body),
    }
}

/// Checks a run-length/bit-packed hybrid stream of levels: every run that the page's `values`
/// levels reach must have its bytes. The crate's reader of definition levels takes a
/// bit-packed run's bits without checking that they are there (arrow-buffer then panics,
/// found by the `arrow_read` fuzz target).
fn check_hybrid_levels(levels: &[u8], max: i16, values: u32) -> std::result::Result<(), String> {
    let bits = level_bits(max);
    let mut left = u64::from(values);
    let mut at = 0usize;
    while left > 0 && at < levels.len() {
        let mut header = 0u64;
        let mut shift = 0;
        loop {
            let Some(&b) = levels.get(at) else {
                return Err(format!("a run header cut off at byte {at}"));
            };
            at += 1;
            if shift < 64 {
                header |= u64::from(b & 0x7f) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        let (run, bytes) = if header & 1 == 1 {
            let run = (header >> 1).saturating_mul(8);
            let taken = run.min(left);
            (run, (taken * bits).div_ceil(8))
        } else {
            (header >> 1, bits.div_ceil(8))
        };
        let here = (levels.len() - at) as u64;
        if bytes > here {
            return Err(format!(
                "a run of {run} levels at byte {at} needs {bytes} bytes, {here} left"
            ));
        }
        at += bytes as usize;
        left = left.saturating_sub(run);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch};

    use super::{delta_stream, row_groups, MIN_PARALLEL_ROW_GROUP_BYTES};

    /// A DELTA_BINARY_PACKED stream of 200 values in blocks of 128 (4 mini blocks of 32): the
    /// first block's 4 mini blocks hold 128 deltas, the second's first 3 the other 71 (its
    /// fourth's width counts as 0, as the crate's decoder takes it), so it ends at byte 128.
    #[test]
    fn delta_stream_ends_where_the_crate_ends_it() {
        let mut s = vec![0x80, 0x01, 0x04, 0xc8, 0x01, 0x00];
        s.extend([0x02, 1, 2, 3, 4]);
        s.extend([0u8; 40]); // 32 * (1 + 2 + 3 + 4) / 8
        s.extend([0x02, 5, 6, 7, 8]);
        s.extend([0u8; 72]); // 32 * (5 + 6 + 7) / 8
        assert_eq!(s.len(), 128);
        s.extend([0xaa; 9]); // what follows the stream
        assert_eq!(delta_stream(&s), Some((200, Some(128))));
        // Cut short: the count is still read, the end is not known.
        assert_eq!(delta_stream(&s[..127]), Some((200, None)));
        // One value needs no block; a header the crate refuses gives nothing.
        assert_eq!(
            delta_stream(&[0x80, 0x01, 0x04, 0x01, 0x06]),
            Some((1, Some(5)))
        );
        assert_eq!(delta_stream(&[0x81, 0x01, 0x04, 0x01, 0x06]), None);
        assert_eq!(delta_stream(&[0x80, 0x01, 0x00, 0x01, 0x06]), None);
    }

    fn batches(sizes: &[usize]) -> Vec<RecordBatch> {
        let mut next = 0i64;
        sizes
            .iter()
            .map(|&n| {
                let a: ArrayRef = Arc::new(Int64Array::from_iter_values(next..next + n as i64));
                next += n as i64;
                RecordBatch::try_from_iter([("v", a)]).unwrap()
            })
            .collect()
    }

    /// The values of each group, concatenated.
    fn values(groups: &[Vec<RecordBatch>]) -> Vec<Vec<i64>> {
        groups
            .iter()
            .map(|g| {
                g.iter()
                    .flat_map(|b| {
                        let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                        a.values().to_vec()
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn row_groups_small_data_stays_one_group() {
        let g = row_groups(&batches(&[1024, 1024, 10]), 1 << 20, 2);
        assert_eq!(g.len(), 1);
        assert_eq!(values(&g)[0], (0..2058).collect::<Vec<_>>());
        assert!(row_groups(&batches(&[0, 0]), 1 << 20, 2).is_empty());
        assert!(row_groups(&[], 1 << 20, 2).is_empty());
    }

    #[test]
    fn row_groups_large_data_splits_per_core_across_batch_boundaries() {
        // 40 MiB of int64 in 3 uneven batches: two groups of at least 16 MiB, on 4 cores.
        let rows = 5 << 20;
        let b = batches(&[rows / 3 + 1, rows / 3, rows - 2 * (rows / 3) - 1]);
        let bytes: usize = b.iter().map(RecordBatch::get_array_memory_size).sum();
        let want = 4.min(bytes / MIN_PARALLEL_ROW_GROUP_BYTES).max(1);
        assert_eq!(want, 2);
        let g = row_groups(&b, 1 << 30, 4);
        assert_eq!(g.len(), want);
        let v = values(&g);
        assert_eq!(v.concat(), (0..rows as i64).collect::<Vec<_>>());
        let sizes: Vec<usize> = v.iter().map(Vec::len).collect();
        assert!(
            sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1,
            "{sizes:?}"
        );
    }

    #[test]
    fn row_groups_respect_the_row_group_size() {
        let g = row_groups(&batches(&[100, 100, 50]), 60, 2);
        let sizes: Vec<usize> = values(&g).iter().map(Vec::len).collect();
        assert_eq!(sizes, [50, 50, 50, 50, 50]);
    }
}
