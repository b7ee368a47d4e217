//! `.npz` files: a zip archive of `.npy` members, as numpy's `np.savez` and
//! `np.savez_compressed` write them.
//!
//! - **Reading**: every member, in archive order, each named after its member name without
//!   `.npy` (as `np.load(...).files` names them); directories are skipped, a member that is
//!   not an `.npy` file is an error naming it. Stored (uncompressed) members are read without
//!   copying when their data is aligned for the dtype: the tensor is a slice of the input
//!   buffer (the memory map). Their CRC is not checked, since that would read every byte of a
//!   file that is otherwise only mapped; deflated members are decompressed into a new
//!   64-byte-aligned buffer and their CRC is checked.
//! - **Untrusted sizes**: a deflated member may not declare more than 1100 times its
//!   compressed size (deflate cannot expand further), the `.npy` header inside must agree with
//!   the member's size, and decompression reads exactly that many bytes. Members may not
//!   overlap each other in the file (a zip bomb's trick: many directory entries pointing at
//!   the same compressed bytes), the declared sizes of all deflated members together must fit
//!   the caller's memory budget ([`crate::ReadOptions::read_budget`]), and the output buffer grows only as
//!   decompressed bytes actually arrive: a declared size is never allocated up front. So a
//!   small archive cannot make the reader allocate much more than the file justifies.
//! - **Writing**: stored by default ([`Compression::Stored`]), with each member's data placed
//!   at a multiple of 64 bytes in the file (zip's extra-field padding plus numpy's 64-byte
//!   header), so the file can be read back zero-copy; [`Compression::Deflated`] compresses.
//!   Timestamps are fixed (1980-01-01), so the same tensors always give the same bytes.
//!
//! ```
//! use tensorcast_core::Tensor;
//! use tensorcast_io::{npz, NamedTensor};
//! let ts = vec![
//!     NamedTensor::new("a", Tensor::vector(&[1i32, 2, 3])),
//!     NamedTensor::new("b", Tensor::vector(&[true, false])),
//! ];
//! let bytes = npz::write(&ts, npz::Compression::Stored).unwrap();
//! let back = npz::read(tensorcast_buffer::Buffer::from_vec(bytes)).unwrap();
//! assert_eq!(back, ts);
//! ```

use std::io::{Cursor, Read, Seek, Write};

use tensorcast_buffer::{cpu_allocator, AllocationAttributes, Buffer};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipArchive, ZipWriter};

use crate::error::{ErrorKind, IoError, Result};
use crate::{npy, MemoryBudget, NamedTensor, ReadOptions};

/// The most a deflated member may declare per compressed byte (deflate's limit is about 1032).
const MAX_DEFLATE_RATIO: u64 = 1100;

/// How [`write()`] stores members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// No compression (`np.savez`); readable without copying.
    #[default]
    Stored,
    /// Deflate (`np.savez_compressed`).
    Deflated,
}

fn zip_error(e: zip::result::ZipError) -> IoError {
    let (kind, message) = match &e {
        zip::result::ZipError::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => (
            ErrorKind::Truncated,
            format!("truncated data: the zip archive ends early ({io})"),
        ),
        zip::result::ZipError::UnsupportedArchive(m) => (
            ErrorKind::Unsupported,
            format!("unsupported zip archive: {m}"),
        ),
        e => (ErrorKind::Corrupt, format!("bad zip archive: {e}")),
    };
    IoError::with_source(kind, message, e)
}

/// A zip writer's failure as one line: an I/O error as the operating system words it (not
/// wrapped in the zip library's own prefix), anything else as the zip library words it.
fn zip_write_error(e: zip::result::ZipError) -> IoError {
    match e {
        zip::result::ZipError::Io(io) => IoError::io("cannot write", io),
        e => IoError::io("cannot write", std::io::Error::other(e)),
    }
}

/// The tensor name of a member: its name without a trailing `.npy`.
fn tensor_name(member: &str) -> &str {
    member.strip_suffix(".npy").unwrap_or(member)
}

/// Reads every member of an `.npz` archive held in `buf`, with the default [`ReadOptions`].
///
/// # Errors
/// An [`IoError`] naming the problem: not a zip archive, a malformed or truncated one,
/// overlapping members, a member that is not an `.npy` file or declares more than deflate
/// can produce, or deflated members together larger than the memory limit.
pub fn read(buf: Buffer) -> Result<Vec<NamedTensor>> {
    read_with(buf, &ReadOptions::default())
}

/// [`read()`] with `options`: the decompressed bytes of all deflated members together are
/// charged to its budget ([`ReadOptions::read_budget`]: the reads' shared one, or
/// [`ReadOptions::max_memory`] for this read alone).
///
/// # Errors
/// As [`read()`].
pub fn read_with(buf: Buffer, options: &ReadOptions) -> Result<Vec<NamedTensor>> {
    read_with_info(buf, options).map(|v| v.into_iter().map(|(t, _)| t).collect())
}

/// Refuses a deflated member that declares more than deflate can produce from its size.
fn check_ratio(name: &str, size: u64, compressed: u64) -> Result<()> {
    let limit = compressed
        .saturating_mul(MAX_DEFLATE_RATIO)
        .saturating_add(4096);
    if size > limit {
        return Err(IoError::corrupt(format!(
            "member '{}' declares {size} bytes from {compressed} compressed, more than \
             deflate can produce",
            crate::escaped(name)
        )));
    }
    Ok(())
}

/// Refuses members whose bytes (local header to end of compressed data) overlap another's,
/// and charges the declared sizes of the deflated members together to `budget` (refusing
/// them when they do not fit).
fn check_members(archive: &mut ZipArchive<Cursor<&[u8]>>, budget: &MemoryBudget) -> Result<()> {
    let mut spans = Vec::new();
    let mut inflated: u64 = 0;
    for i in 0..archive.len() {
        let f = archive.by_index_raw(i).map_err(zip_error)?;
        let start = f.header_start();
        let end = f
            .data_start()
            .unwrap_or(start)
            .saturating_add(f.compressed_size());
        spans.push((start, end, i));
        if f.compression() == CompressionMethod::Deflated {
            check_ratio(f.name(), f.size(), f.compressed_size())?;
            inflated = inflated.saturating_add(f.size());
        }
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        let ((_, end_a, a), (start_b, _, b)) = (w[0], w[1]);
        if start_b < end_a {
            let name = |i| {
                archive
                    .name_for_index(i)
                    .map(crate::escape::escaped)
                    .unwrap_or_default()
            };
            return Err(IoError::corrupt(format!(
                "bad zip archive: members '{}' and '{}' overlap in the file",
                name(a),
                name(b)
            )));
        }
    }
    budget.charge(
        inflated,
        "the archive's compressed members (their declared sizes together)",
    )
}

/// [`read()`], also telling for each tensor whether its data was copied.
pub(crate) fn read_with_info(
    buf: Buffer,
    options: &ReadOptions,
) -> Result<Vec<(NamedTensor, bool)>> {
    let bytes = buf.as_slice();
    if bytes.len() >= 4 && &bytes[..4] != b"PK\x03\x04" && &bytes[..4] != b"PK\x05\x06" {
        return Err(IoError::bad_magic(
            "bad magic: not an .npz file (a zip archive starts with PK\\x03\\x04)",
        ));
    }
    let mut archive = ZipArchive::new(Cursor::new(bytes)).map_err(zip_error)?;
    check_members(&mut archive, &options.read_budget())?;
    let mut out = Vec::with_capacity(archive.len().min(bytes.len() / 22 + 1));
    for i in 0..archive.len() {
        let (name, stored_range) = {
            let f = archive.by_index_raw(i).map_err(zip_error)?;
            if f.is_dir() {
                continue;
            }
            let name = f.name().to_string();
            if f.encrypted() {
                return Err(
                    IoError::unsupported("encrypted zip members are not supported")
                        .context(format!("member '{name}'")),
                );
            }
            let range = match f.compression() {
                CompressionMethod::Stored => {
                    let start = f.data_start().ok_or_else(|| {
                        IoError::corrupt("bad zip archive: no data offset")
                            .context(format!("member '{name}'"))
                    })?;
                    if f.compressed_size() != f.size() {
                        return Err(IoError::corrupt(format!(
                            "bad zip archive: stored member of {} bytes claims {} uncompressed",
                            f.compressed_size(),
                            f.size()
                        ))
                        .context(format!("member '{name}'")));
                    }
                    let end = start.checked_add(f.size());
                    match end.and_then(|e| usize::try_from(e).ok()) {
                        Some(end) if end <= bytes.len() => Some(start as usize..end),
                        _ => {
                            return Err(IoError::truncated(format!(
                                "member '{name}' ends past the end of the archive"
                            )))
                        }
                    }
                }
                CompressionMethod::Deflated => {
                    check_ratio(&name, f.size(), f.compressed_size())?;
                    None
                }
                m => {
                    return Err(IoError::unsupported(format!(
                        "unsupported zip compression method {m} (stored and deflate are supported)"
                    ))
                    .context(format!("member '{name}'")))
                }
            };
            (name, range)
        };
        let ctx = |e: IoError| e.context(format!("member '{name}'"));
        let (tensor, copied) = match stored_range {
            Some(range) => {
                let member = buf
                    .slice(range)
                    .ok_or_else(|| IoError::truncated("member out of bounds"))?;
                npy::read_with_info(member, options.max_npy_header_bytes).map_err(ctx)?
            }
            None => {
                let f = archive.by_index(i).map_err(zip_error).map_err(ctx)?;
                let size = f.size();
                read_streamed(f, size, options.max_npy_header_bytes).map_err(ctx)?
            }
        };
        out.push((NamedTensor::new(tensor_name(&name), tensor), copied));
    }
    Ok(out)
}

/// Reads a compressed member of declared uncompressed `size`: header first, then exactly the
/// data bytes into a new aligned buffer, then checks the stream ends there (which also makes
/// the zip reader verify the CRC).
fn read_streamed(
    mut r: impl Read,
    size: u64,
    max_header_bytes: usize,
) -> Result<(tensorcast_core::Tensor, bool)> {
    let mut head = vec![0u8; 12];
    let n = read_up_to(&mut r, &mut head)?;
    head.truncate(n);
    // Learn the header length from the fixed part, then read the rest of the header.
    let header_len = match npy::parse_header_with(&head, max_header_bytes) {
        Ok(h) => h.data_offset,
        Err(e) if e.kind() == crate::ErrorKind::Truncated && n == 12 => {
            let len_bytes = if head[6] == 1 { 2 } else { 4 };
            let len = head[8..8 + len_bytes]
                .iter()
                .rev()
                .fold(0usize, |a, &b| (a << 8) | usize::from(b));
            8 + len_bytes + len
        }
        Err(e) => return Err(e),
    };
    if header_len as u64 > size {
        return Err(IoError::truncated(format!(
            "the .npy header needs {header_len} bytes, the member has {size}"
        )));
    }
    if header_len > head.len() {
        let have = head.len();
        head.resize(header_len, 0);
        r.read_exact(&mut head[have..])
            .map_err(|e| IoError::truncated(format!("the member ends inside its header ({e})")))?;
    }
    let h = npy::parse_header_with(&head, max_header_bytes)?;
    if (h.data_offset as u64).saturating_add(h.data_bytes as u64) != size {
        return Err(IoError::corrupt(format!(
            "the .npy header declares {} data bytes, the zip member holds {}",
            h.data_bytes,
            size.saturating_sub(h.data_offset as u64)
        )));
    }
    // Only sizes the stream delivers are trusted: the bytes go to a vector that grows (at most
    // doubling, never past the declared size) as they arrive, then once into an aligned buffer.
    let mut delivered: Vec<u8> = Vec::new();
    while delivered.len() < h.data_bytes {
        let want = (h.data_bytes - delivered.len()).min(delivered.len().max(64 * 1024));
        delivered.try_reserve_exact(want).map_err(|_| {
            IoError::too_large(format!("cannot allocate {want} more bytes for the member"))
        })?;
        let have = delivered.len();
        delivered.resize(have + want, 0);
        if let Err(e) = r.read_exact(&mut delivered[have..]) {
            return Err(stream_error(e));
        }
    }
    let data = Buffer::new_with(
        &cpu_allocator(),
        h.data_bytes,
        &AllocationAttributes::default(),
        |w| w.put_slice(&delivered),
    )?;
    drop(delivered);
    // Reading past the end makes the zip reader check the CRC.
    let mut probe = [0u8; 1];
    match r.read(&mut probe) {
        Ok(0) => {}
        Ok(_) => {
            return Err(IoError::corrupt(
                "the member holds more bytes than it declares",
            ))
        }
        Err(e) => return Err(stream_error(e)),
    }
    let (t, _) = npy::tensor_from_raw(&h, data)?;
    Ok((t, true))
}

fn stream_error(e: std::io::Error) -> IoError {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        let message = format!("truncated data: the member ends early ({e})");
        IoError::with_source(ErrorKind::Truncated, message, e)
    } else {
        IoError::with_source(ErrorKind::Corrupt, format!("bad compressed data: {e}"), e)
    }
}

/// Reads until `buf` is full or the stream ends; returns how many bytes were read.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(stream_error(e)),
        }
    }
    Ok(n)
}

/// Writes `tensors` as `.npz` bytes (members `<name>.npy`, in the given order).
///
/// # Errors
/// As [`write_to`].
pub fn write(tensors: &[NamedTensor], compression: Compression) -> Result<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    write_to(&mut out, tensors, compression)?;
    Ok(out.into_inner())
}

/// Streams `tensors` as an `.npz` archive to `w` (see [`write()`]). Fails on the first tensor
/// numpy has no dtype for (see [`npy::dtype_to_descr`]), on a duplicate name, or on an I/O
/// error; `w` then holds a partial archive, which [`crate::write_file`] discards.
///
/// # Errors
/// An [`IoError`]: [`Unsupported`](crate::ErrorKind::Unsupported) for a dtype numpy has no code
/// for ([`npy::dtype_to_descr`]), [`Corrupt`](crate::ErrorKind::Corrupt) for a duplicate name,
/// [`Io`](crate::ErrorKind::Io) when writing to `w` fails.
pub fn write_to<W: Write + Seek>(
    w: W,
    tensors: &[NamedTensor],
    compression: Compression,
) -> Result<()> {
    let mut zip = ZipWriter::new(Guarded::new(w));
    let body = write_members(&mut zip, tensors, compression);
    // Finished here, never by `ZipWriter`'s `Drop`, which finishes the archive itself and
    // prints its own message to standard error when that fails (a full disk): after a failed
    // write the guard takes the central directory's bytes without writing them.
    let guard = match zip.finish() {
        Ok(guard) => guard,
        Err(e) => return body.and(Err(zip_write_error(e))),
    };
    if let Some(e) = guard.failed {
        return Err(IoError::io("cannot write", e));
    }
    body
}

fn write_members<W: Write + Seek>(
    zip: &mut ZipWriter<W>,
    tensors: &[NamedTensor],
    compression: Compression,
) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for nt in tensors {
        if !seen.insert(nt.name.as_str()) {
            return Err(IoError::corrupt(format!(
                "duplicate tensor name '{}'",
                nt.name
            )));
        }
        let (header, data) =
            npy::encode(&nt.tensor).map_err(|e| e.context(format!("tensor '{}'", nt.name)))?;
        let total = (header.len() + data.len()) as u64;
        let base = SimpleFileOptions::default()
            .last_modified_time(DateTime::default())
            .unix_permissions(0o644)
            .large_file(total >= u64::from(u32::MAX));
        let options = match compression {
            Compression::Stored => base
                .compression_method(CompressionMethod::Stored)
                .with_alignment(64),
            Compression::Deflated => base.compression_method(CompressionMethod::Deflated),
        };
        zip.start_file(format!("{}.npy", nt.name), options)
            .map_err(zip_write_error)?;
        zip.write_all(&header)
            .and_then(|_| zip.write_all(&data))
            .map_err(|e| IoError::io("cannot write", e))?;
    }
    Ok(())
}

/// The writer under the `ZipWriter`: passes everything to `inner` until a write, flush or
/// seek fails, keeps that first error, and from then on takes every byte without writing it
/// (positions still tracked), so that finishing the archive afterwards cannot fail again or
/// touch `inner`; the caller reports the first error, once.
struct Guarded<W> {
    inner: W,
    failed: Option<std::io::Error>,
    pos: u64,
    end: u64,
}

impl<W: Write + Seek> Guarded<W> {
    fn new(mut inner: W) -> Self {
        let pos = inner.stream_position().unwrap_or(0);
        Self {
            inner,
            failed: None,
            pos,
            end: pos,
        }
    }

    /// Keeps `e` as the first failure and gives the zip writer an error of the same kind
    /// and text.
    fn fail(&mut self, e: std::io::Error) -> std::io::Error {
        let copy = std::io::Error::new(e.kind(), e.to_string());
        self.failed = Some(e);
        copy
    }

    fn moved_to(&mut self, pos: u64) -> u64 {
        self.pos = pos;
        self.end = self.end.max(pos);
        pos
    }
}

impl<W: Write + Seek> Write for Guarded<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.failed.is_some() {
            self.moved_to(self.pos + buf.len() as u64);
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Ok(n) => {
                self.moved_to(self.pos + n as u64);
                Ok(n)
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Err(e),
            Err(e) => Err(self.fail(e)),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.failed.is_some() {
            return Ok(());
        }
        self.inner.flush().map_err(|e| self.fail(e))
    }
}

impl<W: Write + Seek> Seek for Guarded<W> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        if self.failed.is_none() {
            return match self.inner.seek(to) {
                Ok(p) => Ok(self.moved_to(p)),
                Err(e) => Err(self.fail(e)),
            };
        }
        let base = match to {
            std::io::SeekFrom::Start(p) => return Ok(self.moved_to(p)),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            std::io::SeekFrom::End(d) => self.end.checked_add_signed(d),
        };
        match base {
            Some(p) => Ok(self.moved_to(p)),
            None => Err(std::io::Error::from(std::io::ErrorKind::InvalidInput)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensorcast_core::Tensor;

    /// A seekable file of `limit` bytes at most: a write past it fails as on a full disk
    /// (`ENOSPC`, the error `/dev/full` gives); counts the calls made after that failure.
    struct FullAfter {
        file: Cursor<Vec<u8>>,
        limit: u64,
        failed: bool,
        calls_after_failure: usize,
    }

    impl Write for FullAfter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.failed {
                self.calls_after_failure += 1;
            }
            if self.file.position() + buf.len() as u64 > self.limit {
                self.failed = true;
                return Err(std::io::Error::from_raw_os_error(28));
            }
            self.file.write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Seek for FullAfter {
        fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
            if self.failed {
                self.calls_after_failure += 1;
            }
            self.file.seek(to)
        }
    }

    /// Four tensors of 4000 bytes each that deflate cannot shrink much.
    fn tensors() -> Vec<NamedTensor> {
        (0..4u32)
            .map(|i| {
                let v: Vec<f32> = (0..1000u32)
                    .map(|j| (i.wrapping_mul(7919) ^ j.wrapping_mul(2_654_435_761)) as f32)
                    .collect();
                NamedTensor::new(format!("t{i}"), Tensor::vector(&v))
            })
            .collect()
    }

    #[test]
    fn npz_write_error_is_one_clean_line() {
        // The child: writes to a "disk" that fills up after 6000 bytes (inside the second
        // member), prints the error.
        if std::env::var_os("TENSORCAST_NPZ_FULL_CHILD").is_some() {
            for compression in [Compression::Stored, Compression::Deflated] {
                let mut full = FullAfter {
                    file: Cursor::new(Vec::new()),
                    limit: 6000,
                    failed: false,
                    calls_after_failure: 0,
                };
                let e = write_to(&mut full, &tensors(), compression).unwrap_err();
                assert!(full.failed);
                assert_eq!(
                    full.calls_after_failure, 0,
                    "the writer was used after it failed"
                );
                eprintln!("{e}");
            }
            return;
        }
        // The parent: the child's standard error holds its two errors and nothing else (the
        // zip crate's `Drop` used to print its own complaint before them, on the same line).
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "npz::tests::npz_write_error_is_one_clean_line"])
            .args(["--nocapture", "--test-threads", "1"])
            .env("TENSORCAST_NPZ_FULL_CHILD", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(
            lines, ["cannot write: No space left on device (os error 28)"; 2],
            "{err:?}"
        );
    }

    #[test]
    fn npz_write_error_of_a_tensor_keeps_its_own_message() {
        let mut ts = tensors();
        ts.push(ts[0].clone());
        let e = write(&ts, Compression::Stored).unwrap_err();
        assert_eq!(e.to_string(), "duplicate tensor name 't0'");
    }
}
