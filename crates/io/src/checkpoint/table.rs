//! The `.index` file: TensorFlow's fork of the LevelDB table (`tsl/lib/io/{table_builder,
//! block_builder,format,table}.cc`), read and written.
//!
//! Layout: `[data block]* [metaindex block] [index block] [footer]`. A block is a run of
//! entries `varint32 shared, varint32 non_shared, varint32 value_len, key_delta, value`, then
//! `fixed32 restarts[n]`, `fixed32 n`, and is followed on disk by a 5-byte trailer: a type byte
//! (0 raw, 1 snappy) and `fixed32 Mask(crc32c(contents ++ type))`. The footer (48 bytes) holds
//! the metaindex and index block handles (`varint64 offset, varint64 size`) zero-padded to 40
//! bytes, then the magic `0xdb4775248b80fb57` low word first.
//!
//! The reader ([`read_table`]) checks everything it reads: the footer and magic, every handle
//! against the file, every block's checksum, every entry against its block, keys strictly
//! increasing; a snappy block's claimed length is bounded before anything is allocated. Errors
//! carry TensorFlow's words where it has them (`not an sstable (bad magic number)`, `block
//! checksum mismatch`, `truncated block read`, `bad block contents`...).
//!
//! The writer ([`TableBuilder`]) is TensorFlow's rule for rule, so that its bytes are
//! TensorFlow's: 256 KiB blocks flushed when their size estimate reaches the block size or
//! before an entry of 2 x block size, restart interval 16 in data blocks and 1 in the index
//! block, index keys shortened by `FindShortestSeparator` / `FindShortSuccessor`, an empty
//! metaindex block, no compression.

use super::crc;
use crate::error::{IoError, Result};

/// The footer's magic number.
pub(crate) const MAGIC: u64 = 0xdb47_7524_8b80_fb57;
/// The footer's length.
pub(crate) const FOOTER_BYTES: usize = 48;
/// A block's trailer: type byte and masked CRC.
const TRAILER_BYTES: usize = 5;
/// TensorFlow's block size for bundle indexes (`BundleWriter`: 256 KiB).
pub(crate) const BLOCK_SIZE: usize = 256 * 1024;
/// Restart interval of data blocks.
const RESTART_INTERVAL: usize = 16;

/// `crc32c::Mask`: rotate right by 15 and add a constant (LevelDB's, so that a CRC stored in
/// data that is itself checksummed does not weaken the outer CRC).
pub(crate) fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// The inverse of [`mask`].
pub(crate) fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(0xa282_ead8).rotate_left(15)
}

fn corrupt(msg: impl Into<String>) -> IoError {
    IoError::corrupt(msg)
}

/// Reads a varint of at most `max_bytes` bytes at `*pos`, advancing it.
pub(crate) fn get_varint(buf: &[u8], pos: &mut usize, max_bytes: usize) -> Option<u64> {
    let mut v: u64 = 0;
    for i in 0..max_bytes {
        let b = *buf.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

/// Appends `v` as a varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn fixed32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    u32::from_le_bytes(a)
}

/// A `BlockHandle`: where a block's contents lie in the file (trailer excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct BlockHandle {
    pub(crate) offset: u64,
    pub(crate) size: u64,
}

impl BlockHandle {
    fn decode(buf: &[u8], pos: &mut usize) -> Option<Self> {
        let offset = get_varint(buf, pos, 10)?;
        let size = get_varint(buf, pos, 10)?;
        Some(Self { offset, size })
    }

    fn encode_to(self, out: &mut Vec<u8>) {
        put_varint(out, self.offset);
        put_varint(out, self.size);
    }
}

/// The entries of a table, in key order: `(key, value)`.
pub(crate) type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// What went wrong reading a block, and in which part of the table.
#[derive(Debug)]
pub(crate) enum TableError {
    /// The footer or the index block: TensorFlow fails `Table::Open` with the bare message.
    Open(IoError),
    /// A data block: TensorFlow's bundle reader wraps the message.
    Data(IoError),
}

/// Reads every entry of the table in `file`. `max_memory` bounds the decompressed size of
/// snappy blocks.
pub(crate) fn read_table(file: &[u8], max_memory: u64) -> std::result::Result<Entries, TableError> {
    if file.len() < FOOTER_BYTES {
        return Err(TableError::Open(IoError::truncated_exact(
            "file is too short to be an sstable",
        )));
    }
    let footer = &file[file.len() - FOOTER_BYTES..];
    let magic = u64::from(fixed32(&footer[40..])) | (u64::from(fixed32(&footer[44..])) << 32);
    if magic != MAGIC {
        return Err(TableError::Open(IoError::bad_magic(
            "not an sstable (bad magic number)",
        )));
    }
    let mut pos = 0;
    let handles = BlockHandle::decode(footer, &mut pos)
        .and_then(|meta| Some((meta, BlockHandle::decode(footer, &mut pos)?)));
    let Some((_meta, index_handle)) = handles.filter(|_| pos <= 40) else {
        return Err(TableError::Open(corrupt("bad block handle")));
    };
    let index = read_block(file, index_handle, max_memory).map_err(TableError::Open)?;
    let index_entries = block_entries(&index).map_err(TableError::Open)?;
    let mut entries: Entries = Vec::new();
    let mut budget = max_memory;
    for (_, handle_bytes) in index_entries {
        let mut p = 0;
        let handle = BlockHandle::decode(&handle_bytes, &mut p)
            .ok_or_else(|| TableError::Data(corrupt("bad block handle")))?;
        let block = read_block(file, handle, budget).map_err(TableError::Data)?;
        if block.len() as u64 > handle.size {
            budget = budget.saturating_sub(block.len() as u64);
        }
        for (k, v) in block_entries(&block).map_err(TableError::Data)? {
            if let Some((last, _)) = entries.last() {
                if k <= *last {
                    return Err(TableError::Data(corrupt(
                        "bad table: keys are not in strictly increasing order",
                    )));
                }
            }
            entries.push((k, v));
        }
    }
    Ok(entries)
}

/// The contents of the block at `handle`, checksum verified, decompressed if snappy.
fn read_block(
    file: &[u8],
    handle: BlockHandle,
    max_memory: u64,
) -> Result<std::borrow::Cow<'_, [u8]>> {
    let start = usize::try_from(handle.offset).ok();
    let end = start
        .zip(usize::try_from(handle.size).ok())
        .and_then(|(s, n)| s.checked_add(n))
        .and_then(|e| e.checked_add(TRAILER_BYTES));
    let (Some(start), Some(end)) = (start, end) else {
        return Err(IoError::truncated_exact("truncated block read"));
    };
    // The footer is not block space.
    if end > file.len() - FOOTER_BYTES {
        return Err(IoError::truncated_exact("truncated block read"));
    }
    let n = end - TRAILER_BYTES - start;
    let contents = &file[start..start + n];
    let kind = file[start + n];
    let stored = unmask(fixed32(&file[start + n + 1..]));
    let actual = crc::crc32c_append(crc::crc32c(contents), &[kind]);
    if stored != actual {
        return Err(corrupt("block checksum mismatch"));
    }
    match kind {
        0 => Ok(std::borrow::Cow::Borrowed(contents)),
        1 => {
            let bad = || corrupt("corrupted compressed block contents");
            let len = snap::raw::decompress_len(contents).map_err(|_| bad())?;
            if len as u64 > max_memory {
                return Err(IoError::too_large(format!(
                    "a snappy block of the index claims {len} bytes, more than the memory limit of {max_memory}"
                )));
            }
            let mut out = Vec::new();
            out.try_reserve_exact(len).map_err(|_| {
                IoError::too_large(format!("cannot allocate {len} bytes for a block"))
            })?;
            out.resize(len, 0);
            snap::raw::Decoder::new()
                .decompress(contents, &mut out)
                .map_err(|_| bad())?;
            Ok(std::borrow::Cow::Owned(out))
        }
        _ => Err(corrupt("bad block type")),
    }
}

/// Every entry of one block, keys rebuilt from their shared prefixes.
fn block_entries(block: &[u8]) -> Result<Entries> {
    if block.len() < 4 {
        return Err(corrupt("bad block contents"));
    }
    let num_restarts = fixed32(&block[block.len() - 4..]) as usize;
    let max_restarts = (block.len() - 4) / 4;
    if num_restarts > max_restarts {
        return Err(corrupt("bad block contents"));
    }
    let limit = block.len() - (1 + num_restarts) * 4;
    let bad = || corrupt("bad entry in block");
    let mut entries: Entries = Vec::new();
    let mut key: Vec<u8> = Vec::new();
    let mut pos = 0;
    while pos < limit {
        let region = &block[..limit];
        let shared = get_varint(region, &mut pos, 5).ok_or_else(bad)? as usize;
        let non_shared = get_varint(region, &mut pos, 5).ok_or_else(bad)? as usize;
        let value_len = get_varint(region, &mut pos, 5).ok_or_else(bad)? as usize;
        if shared > key.len() || limit - pos < non_shared || limit - pos - non_shared < value_len {
            return Err(bad());
        }
        key.truncate(shared);
        key.extend_from_slice(&region[pos..pos + non_shared]);
        pos += non_shared;
        entries.push((key.clone(), region[pos..pos + value_len].to_vec()));
        pos += value_len;
    }
    Ok(entries)
}

/// `BlockBuilder`: prefix-compressed entries with restart points.
#[derive(Debug)]
struct BlockBuilder {
    interval: usize,
    buffer: Vec<u8>,
    restarts: Vec<u32>,
    counter: usize,
    last_key: Vec<u8>,
}

impl BlockBuilder {
    fn new(interval: usize) -> Self {
        Self {
            interval,
            buffer: Vec::new(),
            restarts: vec![0],
            counter: 0,
            last_key: Vec::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }

    fn size_estimate(&self) -> usize {
        self.buffer.len() + self.restarts.len() * 4 + 4
    }

    fn add(&mut self, key: &[u8], value: &[u8]) {
        let mut shared = 0;
        if self.counter < self.interval {
            let n = self.last_key.len().min(key.len());
            while shared < n && self.last_key[shared] == key[shared] {
                shared += 1;
            }
        } else {
            self.restarts.push(self.buffer.len() as u32);
            self.counter = 0;
        }
        put_varint(&mut self.buffer, shared as u64);
        put_varint(&mut self.buffer, (key.len() - shared) as u64);
        put_varint(&mut self.buffer, value.len() as u64);
        self.buffer.extend_from_slice(&key[shared..]);
        self.buffer.extend_from_slice(value);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.counter += 1;
    }

    /// The finished block's bytes; the builder is reset.
    fn finish(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.buffer);
        for r in &self.restarts {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        self.restarts = vec![0];
        self.counter = 0;
        self.last_key.clear();
        out
    }
}

/// `FindShortestSeparator`: a short key in `[start, limit)`.
fn shortest_separator(start: &mut Vec<u8>, limit: &[u8]) {
    let n = start.len().min(limit.len());
    let mut i = 0;
    while i < n && start[i] == limit[i] {
        i += 1;
    }
    if i < n {
        let b = start[i];
        if b < 0xff && u16::from(b) + 1 < u16::from(limit[i]) {
            start[i] = b + 1;
            start.truncate(i + 1);
        }
    }
}

/// `FindShortSuccessor`: a short key `>= key`.
fn short_successor(key: &mut Vec<u8>) {
    if let Some(i) = key.iter().position(|&b| b != 0xff) {
        key[i] += 1;
        key.truncate(i + 1);
    }
}

/// `TableBuilder` with TensorFlow's bundle options, writing into memory.
#[derive(Debug)]
pub(crate) struct TableBuilder {
    out: Vec<u8>,
    data: BlockBuilder,
    index: BlockBuilder,
    last_key: Vec<u8>,
    entries: u64,
    pending: Option<BlockHandle>,
}

impl TableBuilder {
    pub(crate) fn new() -> Self {
        Self {
            out: Vec::new(),
            data: BlockBuilder::new(RESTART_INTERVAL),
            index: BlockBuilder::new(1),
            last_key: Vec::new(),
            entries: 0,
            pending: None,
        }
    }

    /// Adds an entry; keys must come in strictly increasing order (the caller sorts them).
    pub(crate) fn add(&mut self, key: &[u8], value: &[u8]) {
        debug_assert!(self.entries == 0 || key > self.last_key.as_slice());
        if self.entries > 0 && key.len() + value.len() >= 2 * BLOCK_SIZE {
            self.flush();
        }
        if let Some(handle) = self.pending.take() {
            shortest_separator(&mut self.last_key, key);
            let mut enc = Vec::with_capacity(20);
            handle.encode_to(&mut enc);
            self.index.add(&self.last_key, &enc);
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.entries += 1;
        self.data.add(key, value);
        if self.data.size_estimate() >= BLOCK_SIZE {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.data.is_empty() {
            return;
        }
        let block = self.data.finish();
        self.pending = Some(self.write_block(&block));
    }

    fn write_block(&mut self, contents: &[u8]) -> BlockHandle {
        let handle = BlockHandle {
            offset: self.out.len() as u64,
            size: contents.len() as u64,
        };
        self.out.extend_from_slice(contents);
        let crc = crc::crc32c_append(crc::crc32c(contents), &[0]);
        self.out.push(0);
        self.out.extend_from_slice(&mask(crc).to_le_bytes());
        handle
    }

    /// The table's bytes.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.flush();
        let meta = BlockBuilder::new(RESTART_INTERVAL).finish();
        let meta_handle = self.write_block(&meta);
        if let Some(handle) = self.pending.take() {
            short_successor(&mut self.last_key);
            let mut enc = Vec::with_capacity(20);
            handle.encode_to(&mut enc);
            self.index.add(&self.last_key, &enc);
        }
        let index = self.index.finish();
        let index_handle = self.write_block(&index);
        let mut footer = Vec::with_capacity(FOOTER_BYTES);
        meta_handle.encode_to(&mut footer);
        index_handle.encode_to(&mut footer);
        footer.resize(40, 0);
        footer.extend_from_slice(&(MAGIC as u32).to_le_bytes());
        footer.extend_from_slice(&((MAGIC >> 32) as u32).to_le_bytes());
        self.out.extend_from_slice(&footer);
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_matches_leveldb_and_unmask_inverts_it() {
        // LevelDB's crc32c_test: Mask(Value("foo")) differs from it and round-trips.
        let crc = crc::crc32c(b"foo");
        assert_ne!(mask(crc), crc);
        assert_eq!(unmask(mask(crc)), crc);
        assert_eq!(unmask(mask(unmask(mask(crc)))), crc);
        // The CRC32C of "123456789" is 0xe3069283 (the Castagnoli check value).
        assert_eq!(crc::crc32c(b"123456789"), 0xe306_9283);
    }

    #[test]
    fn separators_are_leveldbs() {
        let mut s = b"abcd".to_vec();
        shortest_separator(&mut s, b"abzz");
        assert_eq!(s, b"abd");
        let mut s = b"abc".to_vec();
        shortest_separator(&mut s, b"abcd");
        assert_eq!(s, b"abc", "a prefix is not shortened");
        let mut s = b"abc".to_vec();
        shortest_separator(&mut s, b"abd");
        assert_eq!(s, b"abc", "adjacent bytes leave no room");
        let mut s = vec![0xff, 0xff, 3];
        short_successor(&mut s);
        assert_eq!(s, vec![0xff, 0xff, 4]);
        let mut s = vec![0xff, 0xff];
        short_successor(&mut s);
        assert_eq!(s, vec![0xff, 0xff]);
    }

    #[test]
    fn a_written_table_reads_back_across_blocks() {
        let mut b = TableBuilder::new();
        let mut want = Vec::new();
        for i in 0..20_000u32 {
            let k = format!("key/{i:08}").into_bytes();
            let v = vec![(i % 251) as u8; (i % 40) as usize];
            b.add(&k, &v);
            want.push((k, v));
        }
        let bytes = b.finish();
        let got = read_table(&bytes, 1 << 20).unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn damaged_tables_are_errors_with_tensorflows_words() {
        let mut b = TableBuilder::new();
        b.add(b"", b"h");
        b.add(b"a", b"1");
        let bytes = b.finish();
        let msg = |r: std::result::Result<Entries, TableError>| match r.unwrap_err() {
            TableError::Open(e) | TableError::Data(e) => e.to_string(),
        };
        assert_eq!(
            msg(read_table(&bytes[..30], 1 << 20)),
            "file is too short to be an sstable"
        );
        let mut m = bytes.clone();
        *m.last_mut().unwrap() ^= 1;
        assert_eq!(
            msg(read_table(&m, 1 << 20)),
            "not an sstable (bad magic number)"
        );
        let mut m = bytes.clone();
        m[2] ^= 1;
        assert_eq!(msg(read_table(&m, 1 << 20)), "block checksum mismatch");
        // An index handle far past the end.
        let mut m = bytes.clone();
        let f = m.len() - FOOTER_BYTES;
        m[f..f + 40].fill(0);
        let mut enc = Vec::new();
        BlockHandle { offset: 0, size: 0 }.encode_to(&mut enc);
        BlockHandle {
            offset: 1 << 40,
            size: 1 << 40,
        }
        .encode_to(&mut enc);
        m[f..f + enc.len()].copy_from_slice(&enc);
        assert_eq!(msg(read_table(&m, 1 << 20)), "truncated block read");
    }

    #[test]
    fn random_binary_keys_round_trip_through_several_blocks() {
        // xorshift: deterministic keys with 0x00 and 0xff runs, shared prefixes and long values.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut entries: Vec<(Vec<u8>, Vec<u8>)> = (0..3000)
            .map(|_| {
                let n = (next() % 24) as usize;
                let key: Vec<u8> = (0..n)
                    .map(|_| match next() % 4 {
                        0 => 0xff,
                        1 => 0x00,
                        _ => (next() % 256) as u8,
                    })
                    .collect();
                let value = vec![(next() % 256) as u8; (next() % 600) as usize];
                (key, value)
            })
            .collect();
        entries.sort();
        entries.dedup_by(|a, b| a.0 == b.0);
        let mut b = TableBuilder::new();
        for (k, v) in &entries {
            b.add(k, v);
        }
        let bytes = b.finish();
        assert!(bytes.len() > 2 * BLOCK_SIZE, "several data blocks");
        assert_eq!(read_table(&bytes, 1 << 20).unwrap(), entries);
    }

    /// A table whose data block is snappy-compressed, as TensorFlow before 1.1 could write.
    fn snappy_table(entries: &[(&[u8], &[u8])]) -> Vec<u8> {
        let mut block = BlockBuilder::new(RESTART_INTERVAL);
        for (k, v) in entries {
            block.add(k, v);
        }
        let raw = block.finish();
        let compressed = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
        let mut out = Vec::new();
        let put = |out: &mut Vec<u8>, contents: &[u8], kind: u8| {
            let h = BlockHandle {
                offset: out.len() as u64,
                size: contents.len() as u64,
            };
            out.extend_from_slice(contents);
            out.push(kind);
            let crc = crc::crc32c_append(crc::crc32c(contents), &[kind]);
            out.extend_from_slice(&mask(crc).to_le_bytes());
            h
        };
        let data = put(&mut out, &compressed, 1);
        let meta = put(&mut out, &BlockBuilder::new(16).finish(), 0);
        let mut index = BlockBuilder::new(1);
        let mut enc = Vec::new();
        data.encode_to(&mut enc);
        index.add(b"\xff", &enc);
        let index = put(&mut out, &index.finish(), 0);
        let mut footer = Vec::new();
        meta.encode_to(&mut footer);
        index.encode_to(&mut footer);
        footer.resize(40, 0);
        footer.extend_from_slice(&(MAGIC as u32).to_le_bytes());
        footer.extend_from_slice(&((MAGIC >> 32) as u32).to_le_bytes());
        out.extend_from_slice(&footer);
        out
    }

    #[test]
    fn snappy_blocks_are_read_and_bounded() {
        let big = vec![7u8; 5000];
        let entries: [(&[u8], &[u8]); 2] = [(b"", b"header"), (b"a", &big)];
        let t = snappy_table(&entries);
        let got = read_table(&t, 1 << 20).unwrap();
        assert_eq!(got[1], (b"a".to_vec(), big.clone()));
        // A block that would decompress past the memory limit is refused before allocating.
        match read_table(&t, 100) {
            Err(TableError::Data(e)) => assert_eq!(e.kind(), crate::ErrorKind::TooLarge),
            other => panic!("{other:?}"),
        }
    }
}
