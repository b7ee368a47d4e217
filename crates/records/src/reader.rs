//! The streaming TFRecord reader.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use bytes::Bytes;

use crate::crc::masked_crc32c;
use crate::error::{RecordsError, Result};
use crate::inflate::Inflater;
use crate::prefetch::Prefetcher;
use crate::Compression;

/// `kHeaderSize`: the length (8 bytes) and its masked CRC (4).
pub const HEADER_BYTES: usize = 12;
/// `kFooterSize`: the data's masked CRC.
pub const FOOTER_BYTES: usize = 4;

/// The default of [`ReaderOptions::max_record_bytes`]: 1 GiB.
pub const DEFAULT_MAX_RECORD_BYTES: u64 = 1 << 30;

/// How a [`RecordReader`] reads.
#[derive(Debug, Clone)]
pub struct ReaderOptions {
    /// The compression of the whole file (default none).
    pub compression: Compression,
    /// Verify the CRC of every length and every record's data (default `true`). Off, only
    /// the length limit guards against a damaged header.
    pub verify_checksums: bool,
    /// A record longer than this is an error ([`RecordsError::RecordTooLarge`]) before
    /// anything is read or allocated for it (default [`DEFAULT_MAX_RECORD_BYTES`]).
    pub max_record_bytes: u64,
    /// Read a file that is still being written: a record cut short at the end of the input
    /// ends the reading (as a complete file's end does) instead of being an error. The reader's
    /// [`RecordReader::offset`] then says where the incomplete record starts.
    pub allow_incomplete_tail: bool,
    /// The size of the read buffer (default 256 KiB; the chunk size when prefetching).
    pub buffer_bytes: usize,
    /// [`RecordReader::open`] only: read the file ahead on threads of their own (on Unix two,
    /// reading alternate chunks of `buffer_bytes` with positional reads), so that the copy out
    /// of the page cache and the checksums run on every core at once (default `false`: no
    /// thread is started). Memory: a few chunks per thread. Uncompressed files only; ignored
    /// otherwise. A file that grows meanwhile is read up to where a chunk first came back short.
    pub prefetch: bool,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        Self {
            compression: Compression::None,
            verify_checksums: true,
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES,
            allow_incomplete_tail: false,
            buffer_bytes: 256 << 10,
            prefetch: false,
        }
    }
}

impl ReaderOptions {
    /// The defaults with `compression`.
    pub fn with_compression(compression: Compression) -> Self {
        Self {
            compression,
            ..Self::default()
        }
    }
}

enum Source<R> {
    Plain(R),
    Prefetch(Box<Prefetcher>),
    Inflate(Box<Inflater<BufReader<R>>>),
}

impl<R: Read> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::Plain(r) => r.read(buf),
            Source::Inflate(r) => r.read(buf),
            // Read through `fill_prefetched`, never as a stream.
            Source::Prefetch(_) => Ok(0),
        }
    }
}

/// Reads TFRecord records one at a time from any `Read`, holding one record in memory.
///
/// Corruption is reported as TensorFlow's `tf.data.TFRecordDataset` reports it, with the same
/// texts and byte offsets (in the uncompressed stream):
/// - a length whose CRC does not match: `corrupted record at <record offset>`, plus `(Is this
///   even a TFRecord file?)` for the first record;
/// - data whose CRC does not match: `corrupted record at <data offset>`;
/// - the input ends inside a record's data or footer: `truncated record at <record offset>'
///   failed with Read less bytes than requested` (`EOF reached` when compressed);
/// - the input ends inside a record's 12-byte header: the end of the records, no error (as
///   TensorFlow).
///
/// After an error the reader is finished: further reads return `Ok(None)`.
///
/// ```
/// use tensorcast_records::{Compression, ReaderOptions, RecordReader, RecordWriter};
///
/// let mut w = RecordWriter::new(Vec::new(), Compression::Gzip)?;
/// w.write_record(b"first")?;
/// w.write_record(b"second")?;
/// let file = w.finish()?;
///
/// let mut r = RecordReader::new(&file[..], ReaderOptions::with_compression(Compression::Gzip));
/// assert_eq!(r.next_record()?, Some(&b"first"[..]));
/// assert_eq!(r.next_record()?, Some(&b"second"[..]));
/// assert_eq!(r.next_record()?, None);
/// # Ok::<(), tensorcast_records::RecordsError>(())
/// ```
pub struct RecordReader<R> {
    src: Source<R>,
    options: ReaderOptions,
    offset: u64,
    /// Bytes read and not yet handed out: `buf[start..end]`. Records are returned as slices
    /// of this buffer (one copy, from the source into it), so it grows to the largest record.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// The source has ended.
    eof: bool,
    done: bool,
}

impl<R> std::fmt::Debug for RecordReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordReader")
            .field("options", &self.options)
            .field("offset", &self.offset)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl RecordReader<File> {
    /// Opens the file at `path`.
    ///
    /// # Errors
    /// [`RecordsError::Io`] when the file cannot be opened.
    pub fn open(path: impl AsRef<Path>, options: ReaderOptions) -> Result<Self> {
        let file = File::open(path).map_err(|e| RecordsError::io("cannot open", e))?;
        if options.prefetch && options.compression == Compression::None {
            let chunk = options.buffer_bytes.max(64);
            let p = Prefetcher::spawn(file, chunk)
                .map_err(|e| RecordsError::io("cannot start the read-ahead thread", e))?;
            return Ok(Self::with_source(Source::Prefetch(Box::new(p)), options));
        }
        Ok(Self::new(file, options))
    }

    /// Opens the uncompressed file at `path` at `offset`, the start of a record (from a
    /// [`crate::RecordIndex`]); offsets in errors count from the start of the file.
    ///
    /// # Errors
    /// [`RecordsError::Io`] when the file cannot be opened or positioned;
    /// [`RecordsError::InvalidArgument`] for a compressed file (which cannot be entered in the
    /// middle).
    pub fn open_at(path: impl AsRef<Path>, offset: u64, options: ReaderOptions) -> Result<Self> {
        if options.compression != Compression::None {
            return Err(RecordsError::invalid(
                "a compressed TFRecord file can only be read from its start",
            ));
        }
        let mut file = File::open(path).map_err(|e| RecordsError::io("cannot open", e))?;
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| RecordsError::io("cannot seek", e))?;
        let mut r = Self::new(file, options);
        r.offset = offset;
        Ok(r)
    }
}

impl<R: Read> RecordReader<R> {
    /// A reader of the records in `reader`, decompressed as `options.compression` says.
    pub fn new(reader: R, options: ReaderOptions) -> Self {
        let cap = options.buffer_bytes.max(64);
        let src = match options.compression {
            Compression::None => Source::Plain(reader),
            Compression::Gzip => Source::Inflate(Box::new(Inflater::new(
                BufReader::with_capacity(cap, reader),
                true,
            ))),
            Compression::Zlib => Source::Inflate(Box::new(Inflater::new(
                BufReader::with_capacity(cap, reader),
                false,
            ))),
        };
        Self::with_source(src, options)
    }

    /// A reader at the start of `src`.
    fn with_source(src: Source<R>, options: ReaderOptions) -> Self {
        Self {
            src,
            options,
            offset: 0,
            buf: Vec::new(),
            start: 0,
            end: 0,
            eof: false,
            done: false,
        }
    }

    /// Where the next record starts, in the uncompressed stream (after an incomplete tail
    /// with [`ReaderOptions::allow_incomplete_tail`]: where the incomplete record starts).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next record, borrowed from the reader's buffer until the next call; `Ok(None)` at
    /// the end of the records.
    ///
    /// # Errors
    /// [`RecordsError::CorruptedLength`], [`RecordsError::CorruptedData`],
    /// [`RecordsError::Truncated`], [`RecordsError::RecordTooLarge`],
    /// [`RecordsError::Inflate`] (damaged compressed data) or [`RecordsError::Io`]; the reader
    /// is finished after any of them.
    pub fn next_record(&mut self) -> Result<Option<&[u8]>> {
        if self.done {
            return Ok(None);
        }
        match self.read_one() {
            Ok(Some((a, b))) => Ok(Some(&self.buf[a..b])),
            Ok(None) => {
                self.done = true;
                Ok(None)
            }
            Err(e) => {
                self.done = true;
                Err(e)
            }
        }
    }

    /// Makes at least `n` bytes available in `buf[start..end]` unless the source ends first;
    /// whether it did. The buffer grows with the data that arrives (geometrically past the
    /// read size), never to a size only claimed.
    fn fill(&mut self, n: usize) -> Result<bool> {
        if self.end - self.start >= n {
            return Ok(true);
        }
        if matches!(self.src, Source::Prefetch(_)) {
            return self.fill_prefetched(n);
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let chunk = self.options.buffer_bytes.max(64);
        while self.end < n && !self.eof {
            if self.buf.len() == self.end {
                // Full: one chunk for records that fit in it; past that, at most double
                // (so the buffer is at most twice the data that arrived, plus a chunk).
                let new_len = if n <= chunk {
                    chunk
                } else {
                    n.min(chunk.max(self.buf.len().saturating_mul(2)))
                };
                self.buf
                    .try_reserve(new_len - self.buf.len())
                    .map_err(|_| {
                        RecordsError::ResourceExhausted(format!(
                            "cannot allocate {new_len} bytes for the record at {}",
                            self.offset
                        ))
                    })?;
                self.buf.resize(new_len, 0);
            }
            let end = self.end;
            match self.src.read(&mut self.buf[end..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(from_io(e)),
            }
        }
        Ok(self.end >= n)
    }

    /// [`Self::fill`] from the read-ahead thread's chunks: an exhausted buffer is replaced by
    /// the next chunk (no copy); bytes that straddle chunks are gathered in the buffer.
    fn fill_prefetched(&mut self, n: usize) -> Result<bool> {
        let Source::Prefetch(p) = &mut self.src else {
            return Ok(false);
        };
        while self.end - self.start < n {
            let (chunk, pos) = match p.pending.take() {
                Some(c) => c,
                None => match p
                    .next_chunk()
                    .map_err(|e| RecordsError::io("cannot read", e))?
                {
                    Some(c) => (c, 0),
                    None => {
                        self.eof = true;
                        return Ok(false);
                    }
                },
            };
            if self.start == self.end {
                // Nothing left in the buffer: the chunk becomes the buffer.
                let old = std::mem::replace(&mut self.buf, chunk);
                p.recycle(old);
                self.start = pos;
                self.end = self.buf.len();
                continue;
            }
            // Gather: move what is left to the front, append what is still wanted.
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            let k = (n - self.end).min(chunk.len() - pos);
            if self.buf.len() < self.end + k {
                let grow = self.end + k - self.buf.len();
                self.buf.try_reserve(grow).map_err(|_| {
                    RecordsError::ResourceExhausted(format!(
                        "cannot allocate {} bytes for the record at {}",
                        self.end + k,
                        self.offset
                    ))
                })?;
                self.buf.resize(self.end + k, 0);
            }
            self.buf[self.end..self.end + k].copy_from_slice(&chunk[pos..pos + k]);
            self.end += k;
            if pos + k < chunk.len() {
                p.pending = Some((chunk, pos + k));
            } else {
                p.recycle(chunk);
            }
        }
        Ok(true)
    }

    /// Reads the next record; its range in `self.buf`.
    fn read_one(&mut self) -> Result<Option<(usize, usize)>> {
        if !self.fill(HEADER_BYTES)? {
            // TensorFlow: no header, or a partial one, is the end of the records.
            return Ok(None);
        }
        let h = &self.buf[self.start..self.start + HEADER_BYTES];
        let mut len8 = [0u8; 8];
        len8.copy_from_slice(&h[..8]);
        let length = u64::from_le_bytes(len8);
        if self.options.verify_checksums {
            let stored = u32::from_le_bytes([h[8], h[9], h[10], h[11]]);
            if masked_crc32c(&len8) != stored {
                return Err(RecordsError::CorruptedLength {
                    offset: self.offset,
                });
            }
        }
        let too_large = RecordsError::RecordTooLarge {
            offset: self.offset,
            length,
            limit: self.options.max_record_bytes,
        };
        if length > self.options.max_record_bytes {
            return Err(too_large);
        }
        let total = usize::try_from(length)
            .ok()
            .and_then(|n| n.checked_add(HEADER_BYTES + FOOTER_BYTES))
            .ok_or(too_large)?;
        if !self.fill(total)? {
            if self.options.allow_incomplete_tail {
                return Ok(None);
            }
            return Err(RecordsError::Truncated {
                offset: self.offset,
                cause: match self.options.compression {
                    Compression::None => "Read less bytes than requested",
                    _ => "EOF reached",
                },
            });
        }
        let a = self.start + HEADER_BYTES;
        let b = self.start + total - FOOTER_BYTES;
        if self.options.verify_checksums {
            let f = &self.buf[b..b + FOOTER_BYTES];
            let stored = u32::from_le_bytes([f[0], f[1], f[2], f[3]]);
            if masked_crc32c(&self.buf[a..b]) != stored {
                return Err(RecordsError::CorruptedData {
                    offset: self.offset + HEADER_BYTES as u64,
                });
            }
        }
        self.start += total;
        self.offset += total as u64;
        Ok(Some((a, b)))
    }

    /// The records left, each copied into its own `Bytes`.
    pub fn into_records(self) -> Records<R> {
        Records { reader: self }
    }
}

/// Unwraps the inflater's errors, which travel inside `io::Error`.
fn from_io(e: io::Error) -> RecordsError {
    if e.get_ref().is_some_and(|inner| inner.is::<RecordsError>()) {
        if let Some(inner) = e.into_inner() {
            if let Ok(r) = inner.downcast::<RecordsError>() {
                return *r;
            }
        }
        return RecordsError::invalid("inflate failed");
    }
    RecordsError::io("cannot read", e)
}

/// An iterator over the records of a [`RecordReader`], each copied into a `Bytes`.
#[derive(Debug)]
pub struct Records<R> {
    reader: RecordReader<R>,
}

impl<R: Read> Iterator for Records<R> {
    type Item = Result<Bytes>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.reader.next_record() {
            Ok(Some(r)) => Some(Ok(Bytes::copy_from_slice(r))),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// Reads every record of `data` (a whole file in memory).
///
/// # Errors
/// As [`RecordReader::next_record`], for the first bad record.
pub fn read_records(data: &[u8], options: ReaderOptions) -> Result<Vec<Bytes>> {
    RecordReader::new(data, options).into_records().collect()
}

/// Reads the records of an uncompressed TFRecord file held in `data` without copying them:
/// each record is a slice of `data`. The data checksums are verified on every core
/// ([`crate::RecordFile`], with no record-size limit: the records are already in memory).
///
/// # Errors
/// As [`RecordReader::next_record`], for the first damaged record in file order.
pub fn slice_records(data: &Bytes, verify_checksums: bool) -> Result<Vec<Bytes>> {
    let options = ReaderOptions {
        verify_checksums,
        max_record_bytes: u64::MAX,
        ..ReaderOptions::default()
    };
    crate::file::RecordFile::from_bytes(data.clone(), &options).map(|f| f.to_vec())
}
