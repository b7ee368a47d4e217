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
//!   the member's size, and decompression reads exactly that many bytes, so a small archive
//!   cannot make the reader allocate much more than the file justifies.
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

use crate::error::{IoError, Result};
use crate::{npy, NamedTensor};

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
    match e {
        zip::result::ZipError::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            IoError::truncated(format!("the zip archive ends early ({e})"))
        }
        zip::result::ZipError::UnsupportedArchive(m) => {
            IoError::unsupported(format!("unsupported zip archive: {m}"))
        }
        e => IoError::corrupt(format!("bad zip archive: {e}")),
    }
}

/// The tensor name of a member: its name without a trailing `.npy`.
fn tensor_name(member: &str) -> &str {
    member.strip_suffix(".npy").unwrap_or(member)
}

/// Reads every member of an `.npz` archive held in `buf`.
pub fn read(buf: Buffer) -> Result<Vec<NamedTensor>> {
    read_with_info(buf).map(|v| v.into_iter().map(|(t, _)| t).collect())
}

/// [`read()`], also telling for each tensor whether its data was copied.
pub(crate) fn read_with_info(buf: Buffer) -> Result<Vec<(NamedTensor, bool)>> {
    let bytes = buf.as_slice();
    if bytes.len() >= 4 && &bytes[..4] != b"PK\x03\x04" && &bytes[..4] != b"PK\x05\x06" {
        return Err(IoError::bad_magic(
            "bad magic: not an .npz file (a zip archive starts with PK\\x03\\x04)",
        ));
    }
    let mut archive = ZipArchive::new(Cursor::new(bytes)).map_err(zip_error)?;
    let mut out = Vec::with_capacity(archive.len());
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
                    let limit = f
                        .compressed_size()
                        .saturating_mul(MAX_DEFLATE_RATIO)
                        .saturating_add(4096);
                    if f.size() > limit {
                        return Err(IoError::corrupt(format!(
                            "member '{name}' declares {} bytes from {} compressed, more than \
                             deflate can produce",
                            f.size(),
                            f.compressed_size()
                        )));
                    }
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
                npy::read_with_info(member).map_err(ctx)?
            }
            None => {
                let f = archive.by_index(i).map_err(zip_error).map_err(ctx)?;
                let size = f.size();
                read_streamed(f, size).map_err(ctx)?
            }
        };
        out.push((NamedTensor::new(tensor_name(&name), tensor), copied));
    }
    Ok(out)
}

/// Reads a compressed member of declared uncompressed `size`: header first, then exactly the
/// data bytes into a new aligned buffer, then checks the stream ends there (which also makes
/// the zip reader verify the CRC).
fn read_streamed(mut r: impl Read, size: u64) -> Result<(tensorcast_core::Tensor, bool)> {
    let mut head = vec![0u8; 12];
    let n = read_up_to(&mut r, &mut head)?;
    head.truncate(n);
    // Learn the header length from the fixed part, then read the rest of the header.
    let header_len = match npy::parse_header(&head) {
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
    let h = npy::parse_header(&head)?;
    if (h.data_offset as u64).saturating_add(h.data_bytes as u64) != size {
        return Err(IoError::corrupt(format!(
            "the .npy header declares {} data bytes, the zip member holds {}",
            h.data_bytes,
            size.saturating_sub(h.data_offset as u64)
        )));
    }
    let mut failure = None;
    let data = Buffer::new_with(
        &cpu_allocator(),
        h.data_bytes,
        &AllocationAttributes::default(),
        |w| {
            let mut scratch = vec![0u8; (64 * 1024).min(h.data_bytes)];
            while w.remaining() > 0 {
                let n = w.remaining().min(scratch.len());
                if let Err(e) = r.read_exact(&mut scratch[..n]) {
                    failure = Some(e);
                    return;
                }
                w.put_slice(&scratch[..n]);
            }
        },
    )?;
    if let Some(e) = failure {
        return Err(stream_error(e));
    }
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
        IoError::truncated(format!("the member ends early ({e})"))
    } else {
        IoError::corrupt(format!("bad compressed data: {e}"))
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
pub fn write(tensors: &[NamedTensor], compression: Compression) -> Result<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    write_to(&mut out, tensors, compression)?;
    Ok(out.into_inner())
}

/// Streams `tensors` as an `.npz` archive to `w` (see [`write()`]). Fails on the first tensor
/// numpy has no dtype for (see [`npy::dtype_to_descr`]), on a duplicate name, or on an I/O
/// error; `w` then holds a partial archive, which [`crate::write_file`] discards.
pub fn write_to<W: Write + Seek>(
    w: W,
    tensors: &[NamedTensor],
    compression: Compression,
) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    let mut zip = ZipWriter::new(w);
    for nt in tensors {
        if !seen.insert(nt.name.as_str()) {
            return Err(IoError::corrupt(format!(
                "duplicate tensor name '{}'",
                nt.name
            )));
        }
        let header = npy::header_bytes(nt.tensor.dtype(), nt.tensor.shape())
            .map_err(|e| e.context(format!("tensor '{}'", nt.name)))?;
        let data = nt.tensor.tensor_data()?;
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
            .map_err(|e| IoError::io("cannot write", std::io::Error::other(e)))?;
        zip.write_all(&header)
            .and_then(|_| zip.write_all(data))
            .map_err(|e| IoError::io("cannot write", e))?;
    }
    zip.finish()
        .map_err(|e| IoError::io("cannot write", std::io::Error::other(e)))?;
    Ok(())
}
