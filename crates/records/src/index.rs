//! The offset index: one pass over the record headers of an uncompressed file, so that its
//! records can be split into ranges read by different threads (or workers) without decoding the
//! file twice.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;

use crate::crc::masked_crc32c;
use crate::error::{RecordsError, Result};
use crate::reader::{FOOTER_BYTES, HEADER_BYTES};

/// Where each record of an uncompressed TFRecord file starts, and how long its data is.
///
/// Building it reads only the 12-byte headers (checking each length's CRC) and seeks over
/// the data, so it costs one small read per record. The data CRCs are checked by whoever
/// reads the records.
///
/// ```
/// use tensorcast_records::{write_file, Compression, ReaderOptions, RecordIndex, RecordReader};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("data.tfrecord");
/// write_file(&path, Compression::None, (0..10u8).map(|i| vec![i; i as usize]))?;
/// let index = RecordIndex::build_file(&path)?;
/// assert_eq!(index.len(), 10);
/// // Two workers, each with about half of the bytes.
/// let parts = index.split(2);
/// let mut seen = 0;
/// for part in parts {
///     let mut r = RecordReader::open_at(&path, index.offset(part.start), ReaderOptions::default())?;
///     for _ in part {
///         let rec = r.next_record()?.unwrap();
///         assert_eq!(rec.len(), seen);
///         seen += 1;
///     }
/// }
/// assert_eq!(seen, 10);
/// # Ok::<(), tensorcast_records::RecordsError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordIndex {
    /// Offset of each record's header.
    offsets: Vec<u64>,
    /// Length of each record's data.
    lengths: Vec<u64>,
}

impl RecordIndex {
    /// Indexes the uncompressed TFRecord file at `path`.
    ///
    /// # Errors
    /// As [`RecordIndex::build`].
    pub fn build_file(path: impl AsRef<Path>) -> Result<Self> {
        let file = File::open(path).map_err(|e| RecordsError::io("cannot open", e))?;
        Self::build(BufReader::with_capacity(64 << 10, file))
    }

    /// Indexes an uncompressed TFRecord stream that can seek.
    ///
    /// # Errors
    /// [`RecordsError::CorruptedLength`] for a header whose CRC does not match,
    /// [`RecordsError::Truncated`] when the last record's data or footer is cut short,
    /// [`RecordsError::Io`] when reading or seeking fails.
    pub fn build<R: Read + Seek>(mut reader: R) -> Result<Self> {
        let end = reader
            .seek(SeekFrom::End(0))
            .and_then(|end| reader.seek(SeekFrom::Start(0)).map(|_| end))
            .map_err(|e| RecordsError::io("cannot seek", e))?;
        let mut index = RecordIndex::default();
        let mut offset = 0u64;
        let mut header = [0u8; HEADER_BYTES];
        while end - offset >= HEADER_BYTES as u64 {
            reader
                .read_exact(&mut header)
                .map_err(|e| RecordsError::io("cannot read", e))?;
            let mut len8 = [0u8; 8];
            len8.copy_from_slice(&header[..8]);
            let stored = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
            if masked_crc32c(&len8) != stored {
                return Err(RecordsError::CorruptedLength { offset });
            }
            let length = u64::from_le_bytes(len8);
            let rest = end - offset - HEADER_BYTES as u64;
            if length.saturating_add(FOOTER_BYTES as u64) > rest {
                return Err(RecordsError::Truncated {
                    offset,
                    cause: "Read less bytes than requested",
                });
            }
            let skip = length + FOOTER_BYTES as u64;
            // Within the file (checked above), so it fits an i64.
            reader
                .seek_relative(skip as i64)
                .map_err(|e| RecordsError::io("cannot seek", e))?;
            index.offsets.push(offset);
            index.lengths.push(length);
            offset += HEADER_BYTES as u64 + skip;
        }
        Ok(index)
    }

    /// Appends a record whose header is at `offset` and whose data is `length` bytes.
    pub(crate) fn push(&mut self, offset: u64, length: u64) {
        self.offsets.push(offset);
        self.lengths.push(length);
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// Where record `i` starts (its header), or the end of the last record for `i == len()`.
    /// Panics past `len()`.
    pub fn offset(&self, i: usize) -> u64 {
        if i == self.offsets.len() {
            return self.end_offset();
        }
        self.offsets[i]
    }

    /// The data length of record `i`. Panics past the last record.
    pub fn length(&self, i: usize) -> u64 {
        self.lengths[i]
    }

    /// Where the last record ends.
    pub fn end_offset(&self) -> u64 {
        match (self.offsets.last(), self.lengths.last()) {
            (Some(o), Some(l)) => o + HEADER_BYTES as u64 + l + FOOTER_BYTES as u64,
            _ => 0,
        }
    }

    /// Splits the records into at most `parts` consecutive ranges of about equal bytes (no
    /// empty range; fewer ranges than `parts` when there are fewer records).
    pub fn split(&self, parts: usize) -> Vec<Range<usize>> {
        let n = self.len();
        let parts = parts.max(1).min(n.max(1));
        if n == 0 {
            return Vec::new();
        }
        let total = self.end_offset();
        let mut out = Vec::with_capacity(parts);
        let mut start = 0usize;
        for p in 1..=parts {
            if start >= n {
                break;
            }
            let end = if p == parts {
                n
            } else {
                let goal = (total as u128 * p as u128 / parts as u128) as u64;
                // The first record starting at or after `goal`, at least one past `start`,
                // leaving one record for each later part.
                let i = self.offsets.partition_point(|&o| o < goal);
                i.clamp(start + 1, n - (parts - p))
            };
            out.push(start..end);
            start = end;
        }
        out
    }
}
