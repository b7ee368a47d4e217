//! Whole uncompressed TFRecord files read at once: the file memory-mapped (or already in
//! memory), walked once into an offset index with every checksum verified on the way, and the
//! records handed out as slices of the file's memory.

use std::fs::File;
use std::path::Path;

use bytes::Bytes;

use crate::crc::masked_crc32c;
use crate::error::{RecordsError, Result};
use crate::index::RecordIndex;
use crate::reader::{ReaderOptions, FOOTER_BYTES, HEADER_BYTES};
use crate::Compression;

/// All the records of an uncompressed TFRecord file, checked, as slices of the file's memory.
///
/// The fastest way to read a whole file: [`RecordFile::open`] maps it (no copy: the pages
/// come from the page cache as they are touched), and one pass over the file builds the
/// [`RecordIndex`], checking each length's CRC and each record's data CRC as it goes. (Walking
/// the headers alone and checking the data afterwards in parallel was three times slower on
/// small records: each header read waited on memory, as nothing had brought it into cache;
/// the data CRC streams through the file, so the next header is already there.) Records are
/// `Bytes` slices of the mapping, so they keep it alive and cost nothing to clone.
///
/// The result and the error are what [`crate::RecordReader`] gives for the same bytes and
/// options: the first damage in file order wins (a damaged record before a damaged header is
/// the error, and the other way round), with TensorFlow's `DataLoss` texts and offsets; a
/// partial header at the end is the end of the records; [`ReaderOptions::max_record_bytes`]
/// and [`ReaderOptions::allow_incomplete_tail`] hold as for the streaming reader. Memory is
/// the file's (mapped, not allocated) plus 16 bytes a record for the index.
///
/// A mapped file must not be truncated by another process while its records are in use
/// (touching a page that is gone ends the process with `SIGBUS`); read a file that may change
/// into memory and use [`RecordFile::from_bytes`], or stream it with [`crate::RecordReader`].
///
/// ```
/// use tensorcast_records::{write_file, Compression, ReaderOptions, RecordFile};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("data.tfrecord");
/// write_file(&path, Compression::None, [&b"first"[..], b"second"])?;
/// let file = RecordFile::open(&path, &ReaderOptions::default())?;
/// assert_eq!(file.len(), 2);
/// assert_eq!(file.get(1).unwrap(), &b"second"[..]);
/// let all: Vec<_> = file.iter().collect();
/// assert_eq!(all, [&b"first"[..], &b"second"[..]]);
///
/// // Damage is found, at TensorFlow's offset.
/// let mut bytes = std::fs::read(&path).unwrap();
/// bytes[12] ^= 1;
/// let err = RecordFile::from_bytes(bytes.into(), &ReaderOptions::default()).unwrap_err();
/// assert_eq!(err.to_string(), "corrupted record at 12");
/// # Ok::<(), tensorcast_records::RecordsError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RecordFile {
    data: Bytes,
    index: RecordIndex,
}

impl RecordFile {
    /// Maps the uncompressed TFRecord file at `path` and checks it (see the type's docs).
    ///
    /// # Errors
    /// [`RecordsError::Io`] when the file cannot be opened or mapped;
    /// [`RecordsError::InvalidArgument`] when `options` name a compression; otherwise as
    /// [`RecordFile::from_bytes`].
    pub fn open(path: impl AsRef<Path>, options: &ReaderOptions) -> Result<Self> {
        refuse_compressed(options)?;
        let file = File::open(path).map_err(|e| RecordsError::io("cannot open", e))?;
        let map = tensorcast_buffer::Buffer::map_file(&file)
            .map_err(|e| RecordsError::io("cannot map", e))?;
        Self::from_bytes(map.into_bytes(), options)
    }

    /// The records of an uncompressed TFRecord file held in `data`, checked as `options` say
    /// (compression must be none; `buffer_bytes` and `prefetch` do not apply).
    ///
    /// # Errors
    /// [`RecordsError::CorruptedLength`], [`RecordsError::CorruptedData`],
    /// [`RecordsError::Truncated`] or [`RecordsError::RecordTooLarge`] for the first damaged
    /// record in file order, as [`crate::RecordReader::next_record`] reports it;
    /// [`RecordsError::InvalidArgument`] when `options` name a compression.
    pub fn from_bytes(data: Bytes, options: &ReaderOptions) -> Result<Self> {
        refuse_compressed(options)?;
        let (index, stop) = walk_headers(&data, options);
        match stop {
            Some(e) => Err(e),
            None => Ok(Self { data, index }),
        }
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Record `i` (a slice of the file's memory), or `None` past the last one.
    pub fn get(&self, i: usize) -> Option<Bytes> {
        (i < self.len()).then(|| self.data.slice(self.span(i)))
    }

    /// The records in file order, each a slice of the file's memory.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Bytes> + '_ {
        (0..self.len()).map(|i| self.data.slice(self.span(i)))
    }

    /// The records as a `Vec` (slices of the file's memory, not copies).
    pub fn to_vec(&self) -> Vec<Bytes> {
        self.iter().collect()
    }

    /// The offset index of the records (where each starts, how long its data is), to split
    /// them among workers.
    pub fn index(&self) -> &RecordIndex {
        &self.index
    }

    /// The whole file's bytes.
    pub fn bytes(&self) -> &Bytes {
        &self.data
    }

    /// Where the last record ends: the file's length, unless it ends in a partial header (or,
    /// with [`ReaderOptions::allow_incomplete_tail`], an incomplete record), which starts here.
    pub fn end_offset(&self) -> u64 {
        self.index.end_offset()
    }

    fn span(&self, i: usize) -> std::ops::Range<usize> {
        // Within `data`: the walk checked every record against its length.
        let start = self.index.offset(i) as usize + HEADER_BYTES;
        start..start + self.index.length(i) as usize
    }
}

fn refuse_compressed(options: &ReaderOptions) -> Result<()> {
    if options.compression == Compression::None {
        return Ok(());
    }
    Err(RecordsError::invalid(format!(
        "a whole-file read takes an uncompressed TFRecord file (this one is {}); read a \
         compressed file with RecordReader",
        options.compression.tf_name()
    )))
}

/// Walks the records of `data`: the index of every record whose header (and, when verifying,
/// length and data CRCs) holds and whose data lies within `data`, and the error that ended the
/// walk, if any (the first damage in file order, as the streaming reader meets it).
pub(crate) fn walk_headers(
    data: &[u8],
    options: &ReaderOptions,
) -> (RecordIndex, Option<RecordsError>) {
    let mut index = RecordIndex::default();
    let mut offset = 0usize;
    loop {
        let at = offset;
        match next_span(data, &mut offset, options) {
            Ok(Some((start, end))) => index.push(at as u64, (end - start) as u64),
            Ok(None) => return (index, None),
            Err(e) => return (index, Some(e)),
        }
    }
}

/// One step of the walk from `*offset` (the start of a record): the span of that record's
/// data, checked, with `*offset` moved past the record; `None` at the end of the records (the
/// end of `data`, a partial header, or with [`ReaderOptions::allow_incomplete_tail`] an
/// incomplete record); or the damage found there.
pub(crate) fn next_span(
    data: &[u8],
    offset: &mut usize,
    options: &ReaderOptions,
) -> Result<Option<(usize, usize)>> {
    let at = *offset;
    if data.len() - at < HEADER_BYTES {
        return Ok(None);
    }
    let h = &data[at..at + HEADER_BYTES];
    let length = u64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]);
    if options.verify_checksums
        && masked_crc32c(&h[..8]) != u32::from_le_bytes([h[8], h[9], h[10], h[11]])
    {
        return Err(RecordsError::CorruptedLength { offset: at as u64 });
    }
    if length > options.max_record_bytes {
        return Err(RecordsError::RecordTooLarge {
            offset: at as u64,
            length,
            limit: options.max_record_bytes,
        });
    }
    let rest = (data.len() - at - HEADER_BYTES) as u64;
    if length.saturating_add(FOOTER_BYTES as u64) > rest {
        if options.allow_incomplete_tail {
            return Ok(None);
        }
        return Err(RecordsError::Truncated {
            offset: at as u64,
            cause: "Read less bytes than requested",
        });
    }
    // Within `data` (checked above), so it fits a usize.
    let start = at + HEADER_BYTES;
    let end = start + length as usize;
    if options.verify_checksums {
        let f = &data[end..end + FOOTER_BYTES];
        if masked_crc32c(&data[start..end]) != u32::from_le_bytes([f[0], f[1], f[2], f[3]]) {
            return Err(RecordsError::CorruptedData {
                offset: start as u64,
            });
        }
    }
    *offset = end + FOOTER_BYTES;
    Ok(Some((start, end)))
}
