//! TFRecord writers: to any `Write`, and atomically to a file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::write::{GzEncoder, ZlibEncoder};

use crate::crc::masked_crc32c;
use crate::error::{RecordsError, Result};
use crate::Compression;

enum Sink<W: Write> {
    Plain(W),
    Gzip(GzEncoder<W>),
    Zlib(ZlibEncoder<W>),
}

/// Writes TFRecord records to any `Write`, compressing the whole stream as TensorFlow's
/// `TFRecordWriter` does (GZIP with TensorFlow's header: no name, time 0, OS 3; ZLIB with the
/// default level). [`RecordWriter::finish`] ends the compressed stream and hands the sink back;
/// an uncompressed stream written by this writer is byte-identical to TensorFlow's.
///
/// ```
/// use tensorcast_records::{read_records, Compression, ReaderOptions, RecordWriter};
///
/// let mut w = RecordWriter::new(Vec::new(), Compression::None)?;
/// w.write_record(b"hello")?;
/// let file = w.finish()?;
/// assert_eq!(file.len(), 12 + 5 + 4);
/// assert_eq!(read_records(&file, ReaderOptions::default())?, vec![&b"hello"[..]]);
/// # Ok::<(), tensorcast_records::RecordsError>(())
/// ```
pub struct RecordWriter<W: Write> {
    sink: Sink<W>,
    records: u64,
}

impl<W: Write> std::fmt::Debug for RecordWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordWriter")
            .field("records", &self.records)
            .finish_non_exhaustive()
    }
}

impl<W: Write> RecordWriter<W> {
    /// A writer to `sink` with `compression`.
    ///
    /// # Errors
    /// None today; fallible so that a compression needing setup can fail.
    pub fn new(sink: W, compression: Compression) -> Result<Self> {
        let level = flate2::Compression::default();
        let sink = match compression {
            Compression::None => Sink::Plain(sink),
            Compression::Gzip => Sink::Gzip(
                flate2::GzBuilder::new()
                    .operating_system(3)
                    .write(sink, level),
            ),
            Compression::Zlib => Sink::Zlib(ZlibEncoder::new(sink, level)),
        };
        Ok(Self { sink, records: 0 })
    }

    /// Appends one record.
    ///
    /// # Errors
    /// [`RecordsError::Io`] when writing fails.
    pub fn write_record(&mut self, data: &[u8]) -> Result<()> {
        let len = (data.len() as u64).to_le_bytes();
        let mut header = [0u8; 12];
        header[..8].copy_from_slice(&len);
        header[8..].copy_from_slice(&masked_crc32c(&len).to_le_bytes());
        let footer = masked_crc32c(data).to_le_bytes();
        let w: &mut dyn Write = match &mut self.sink {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w,
            Sink::Zlib(w) => w,
        };
        w.write_all(&header)
            .and_then(|()| w.write_all(data))
            .and_then(|()| w.write_all(&footer))
            .map_err(|e| RecordsError::io("cannot write", e))?;
        self.records += 1;
        Ok(())
    }

    /// How many records were written.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Flushes what was written so far so that a reader sees every complete record
    /// (compressed: a zlib sync flush, which costs a few bytes).
    ///
    /// # Errors
    /// [`RecordsError::Io`] when writing fails.
    pub fn flush(&mut self) -> Result<()> {
        let w: &mut dyn Write = match &mut self.sink {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w,
            Sink::Zlib(w) => w,
        };
        w.flush().map_err(|e| RecordsError::io("cannot flush", e))
    }

    /// Ends the stream (the compressed trailer) and returns the sink, flushed.
    ///
    /// # Errors
    /// [`RecordsError::Io`] when writing fails.
    pub fn finish(self) -> Result<W> {
        let mut w = match self.sink {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w
                .finish()
                .map_err(|e| RecordsError::io("cannot write", e))?,
            Sink::Zlib(w) => w
                .finish()
                .map_err(|e| RecordsError::io("cannot write", e))?,
        };
        w.flush().map_err(|e| RecordsError::io("cannot flush", e))?;
        Ok(w)
    }
}

/// Writes a TFRecord file atomically: the records go to a temporary file beside `path`, which
/// is synced and renamed over `path` by [`FileWriter::commit`]. Dropped without `commit` (an
/// error halfway), the temporary file is removed and `path` is untouched.
pub struct FileWriter {
    writer: RecordWriter<BufWriter<tempfile::NamedTempFile>>,
    path: PathBuf,
}

impl std::fmt::Debug for FileWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWriter")
            .field("path", &self.path)
            .field("records", &self.writer.records())
            .finish()
    }
}

impl FileWriter {
    /// Starts writing `path`.
    ///
    /// # Errors
    /// [`RecordsError::Io`] when the temporary file cannot be created in `path`'s directory.
    pub fn create(path: impl AsRef<Path>, compression: Compression) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let tmp = tempfile::Builder::new()
            .prefix(".tfrecord.")
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| RecordsError::io("cannot create a temporary file", e))?;
        let writer = RecordWriter::new(BufWriter::with_capacity(256 << 10, tmp), compression)?;
        Ok(Self { writer, path })
    }

    /// Appends one record.
    ///
    /// # Errors
    /// [`RecordsError::Io`] when writing fails.
    pub fn write_record(&mut self, data: &[u8]) -> Result<()> {
        self.writer.write_record(data)
    }

    /// Ends the stream, syncs the file and renames it over the target.
    ///
    /// # Errors
    /// [`RecordsError::Io`] when writing, syncing or renaming fails (the target is then
    /// untouched).
    pub fn commit(self) -> Result<()> {
        let buf = self.writer.finish()?;
        let tmp = buf
            .into_inner()
            .map_err(|e| RecordsError::io("cannot write", e.into_error()))?;
        tmp.as_file()
            .sync_all()
            .map_err(|e| RecordsError::io("cannot sync", e))?;
        tmp.persist(&self.path)
            .map_err(|e| RecordsError::io("cannot rename into place", e.error))?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // Make the rename durable; a directory that cannot be opened or synced (some
            // file systems) is not an error, as for the other writers.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

/// Writes `records` to the file at `path` atomically (see [`FileWriter`]).
///
/// # Errors
/// [`RecordsError::Io`] when writing fails; `path` is then untouched.
pub fn write_file<I, T>(path: impl AsRef<Path>, compression: Compression, records: I) -> Result<()>
where
    I: IntoIterator<Item = T>,
    T: AsRef<[u8]>,
{
    let mut w = FileWriter::create(path, compression)?;
    for r in records {
        w.write_record(r.as_ref())?;
    }
    w.commit()
}
