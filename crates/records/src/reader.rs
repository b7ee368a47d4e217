//! The streaming TFRecord reader.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use bytes::Bytes;

use crate::crc::masked_crc32c;
use crate::error::{RecordsError, Result};
use crate::inflate::Inflater;
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
    /// The size of the read buffer (default 256 KiB).
    pub buffer_bytes: usize,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        Self {
            compression: Compression::None,
            verify_checksums: true,
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES,
            allow_incomplete_tail: false,
            buffer_bytes: 256 << 10,
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
    Plain(BufReader<R>),
    Inflate(Inflater<BufReader<R>>),
}

impl<R: Read> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::Plain(r) => r.read(buf),
            Source::Inflate(r) => r.read(buf),
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
    buf: Vec<u8>,
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
        let buffered = BufReader::with_capacity(options.buffer_bytes.max(64), reader);
        let src = match options.compression {
            Compression::None => Source::Plain(buffered),
            Compression::Gzip => Source::Inflate(Inflater::new(buffered, true)),
            Compression::Zlib => Source::Inflate(Inflater::new(buffered, false)),
        };
        Self {
            src,
            options,
            offset: 0,
            buf: Vec::new(),
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
            Ok(Some(n)) => Ok(Some(&self.buf[..n])),
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

    /// Reads the next record into `self.buf[..n]`, returning `n`.
    fn read_one(&mut self) -> Result<Option<usize>> {
        let mut header = [0u8; HEADER_BYTES];
        let got = read_full(&mut self.src, &mut header)?;
        if got < HEADER_BYTES {
            // TensorFlow: no header, or a partial one, is the end of the records.
            return Ok(None);
        }
        let mut len8 = [0u8; 8];
        len8.copy_from_slice(&header[..8]);
        let length = u64::from_le_bytes(len8);
        if self.options.verify_checksums {
            let stored = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
            if masked_crc32c(&header[..8]) != stored {
                return Err(RecordsError::CorruptedLength {
                    offset: self.offset,
                });
            }
        }
        if length > self.options.max_record_bytes {
            return Err(RecordsError::RecordTooLarge {
                offset: self.offset,
                length,
                limit: self.options.max_record_bytes,
            });
        }
        // `length` fits in memory's address space: it is at most max_record_bytes, which
        // the caller chose; the buffer grows with what actually arrives.
        let want = usize::try_from(length)
            .ok()
            .and_then(|n| n.checked_add(FOOTER_BYTES))
            .ok_or(RecordsError::RecordTooLarge {
                offset: self.offset,
                length,
                limit: self.options.max_record_bytes,
            })?;
        let got = self.read_body(want)?;
        if got < want {
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
        let n = want - FOOTER_BYTES;
        if self.options.verify_checksums {
            let f = &self.buf[n..want];
            let stored = u32::from_le_bytes([f[0], f[1], f[2], f[3]]);
            if masked_crc32c(&self.buf[..n]) != stored {
                return Err(RecordsError::CorruptedData {
                    offset: self.offset + HEADER_BYTES as u64,
                });
            }
        }
        self.offset += (HEADER_BYTES + want) as u64;
        Ok(Some(n))
    }

    /// Reads up to `want` bytes into `self.buf[..]`, growing the buffer only with data that
    /// arrived past 1 MiB (so that a header claiming more than the input holds allocates
    /// little), returning how many were read.
    fn read_body(&mut self, want: usize) -> Result<usize> {
        const EAGER: usize = 1 << 20;
        let mut filled: usize = 0;
        loop {
            let target = want.min(EAGER.max(filled.saturating_mul(2)));
            if self.buf.len() < target {
                self.buf.try_reserve(target - self.buf.len()).map_err(|_| {
                    RecordsError::ResourceExhausted(format!(
                        "cannot allocate {target} bytes for the record at {}",
                        self.offset
                    ))
                })?;
                self.buf.resize(target, 0);
            }
            let got = read_full(&mut self.src, &mut self.buf[filled..target])?;
            filled += got;
            if filled == want || filled < target {
                return Ok(filled);
            }
        }
    }

    /// The records left, each copied into its own `Bytes`.
    pub fn into_records(self) -> Records<R> {
        Records { reader: self }
    }
}

/// Reads until `buf` is full or the input ends; the count read.
fn read_full(src: &mut impl Read, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match src.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(from_io(e)),
        }
    }
    Ok(n)
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
/// each record is a slice of `data`. The fastest way to read a file that is in memory (or
/// mapped). Errors as [`RecordReader::next_record`].
///
/// # Errors
/// As [`RecordReader::next_record`].
pub fn slice_records(data: &Bytes, verify_checksums: bool) -> Result<Vec<Bytes>> {
    let mut out = Vec::new();
    let mut offset = 0usize;
    while data.len() - offset >= HEADER_BYTES {
        let h = &data[offset..offset + HEADER_BYTES];
        let length = u64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]);
        if verify_checksums
            && masked_crc32c(&h[..8]) != u32::from_le_bytes([h[8], h[9], h[10], h[11]])
        {
            return Err(RecordsError::CorruptedLength {
                offset: offset as u64,
            });
        }
        let start = offset + HEADER_BYTES;
        let rest = (data.len() - start) as u64;
        if length.saturating_add(FOOTER_BYTES as u64) > rest {
            return Err(RecordsError::Truncated {
                offset: offset as u64,
                cause: "Read less bytes than requested",
            });
        }
        let end = start + length as usize;
        if verify_checksums {
            let f = &data[end..end + FOOTER_BYTES];
            if masked_crc32c(&data[start..end]) != u32::from_le_bytes([f[0], f[1], f[2], f[3]]) {
                return Err(RecordsError::CorruptedData {
                    offset: start as u64,
                });
            }
        }
        out.push(data.slice(start..end));
        offset = end + FOOTER_BYTES;
    }
    Ok(out)
}
