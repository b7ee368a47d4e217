//! TFRecord writers: to any `Write`, and atomically to a file.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::write::{GzEncoder, ZlibEncoder};
use tensorcast_io::OutputFile;

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

    /// The sink the (compressed) stream goes to.
    pub fn get_ref(&self) -> &W {
        match &self.sink {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w.get_ref(),
            Sink::Zlib(w) => w.get_ref(),
        }
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

/// Writes a TFRecord file through tensorcast-io's atomic output layer ([`OutputFile`]), as
/// every tensorcast writer does: the records go to a hidden temporary file beside `path`
/// (`0666` minus the umask, or the replaced file's mode), which [`FileWriter::commit`] syncs
/// and renames over `path`. Dropped without `commit` (an error halfway), the temporary file is
/// removed and `path` is untouched; a signal the program handles with
/// `tensorcast_io::remove_temporary_files` removes it too. A symbolic link is followed (the
/// file it names is replaced, the link stays); a FIFO or character device (`/dev/null`) is
/// written as a stream, never replaced; a directory, block device or socket is refused.
pub struct FileWriter {
    writer: RecordWriter<BufWriter<OutputFile>>,
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
    /// [`RecordsError::Output`] when the target is a directory, block device or socket, or
    /// the temporary file cannot be created in its directory (a FIFO or device: opened).
    pub fn create(path: impl AsRef<Path>, compression: Compression) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let out = OutputFile::create(&path)?;
        let writer = RecordWriter::new(BufWriter::with_capacity(256 << 10, out), compression)?;
        Ok(Self { writer, path })
    }

    /// Appends one record.
    ///
    /// # Errors
    /// [`RecordsError::Io`] when writing fails.
    pub fn write_record(&mut self, data: &[u8]) -> Result<()> {
        self.writer.write_record(data)
    }

    /// Flushes the records written so far to the temporary file (to the stream, for a FIFO
    /// or device target, where a reader then sees them); the file itself appears at
    /// [`FileWriter::commit`].
    ///
    /// # Errors
    /// [`RecordsError::Io`] when writing fails.
    pub fn flush(&mut self) -> Result<()> {
        self.writer.flush()
    }

    /// True when the target is a FIFO or character device, written as a stream.
    pub fn is_stream(&self) -> bool {
        self.writer.get_ref().get_ref().is_stream()
    }

    /// Ends the stream, syncs the file and renames it over the target.
    ///
    /// # Errors
    /// [`RecordsError::Io`] when writing fails, [`RecordsError::Output`] when syncing or
    /// renaming does (the target is then untouched).
    pub fn commit(self) -> Result<()> {
        let buf = self.writer.finish()?;
        let out = buf
            .into_inner()
            .map_err(|e| RecordsError::io("cannot write", e.into_error()))?;
        out.commit()?;
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
