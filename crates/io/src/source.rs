//! Getting a file's bytes: a map, a read into an aligned buffer, or a bounded stream.

use std::fs::File;
use std::io::Read;

use tensorcast_buffer::{cpu_allocator, AllocationAttributes, Buffer};

use crate::error::{IoError, Result};
use crate::options::{ReadMode, ReadOptions};

/// What kind of file a path names, for reading.
pub(crate) enum Kind {
    /// A regular file of this many bytes (at the time of the `stat`).
    Regular(u64),
    /// A FIFO, pipe, socket or character device: read as a stream.
    Stream,
}

/// Classifies an open file; directories and block devices are refused.
pub(crate) fn kind(file: &File) -> Result<Kind> {
    use std::os::unix::fs::FileTypeExt;
    let meta = file.metadata().map_err(|e| IoError::io("cannot stat", e))?;
    let ft = meta.file_type();
    if ft.is_dir() {
        return Err(IoError::io(
            "cannot read",
            std::io::Error::other("it is a directory"),
        ));
    }
    if ft.is_file() {
        return Ok(Kind::Regular(meta.len()));
    }
    if ft.is_fifo() || ft.is_char_device() || ft.is_socket() {
        return Ok(Kind::Stream);
    }
    Err(IoError::io(
        "cannot read",
        std::io::Error::other(
            "it is a block device (read a regular file, a pipe or standard input)",
        ),
    ))
}

/// The bytes of an open file, by `options`: a regular file mapped or read, a stream read up
/// to `options.max_stream_bytes`.
pub(crate) fn file_bytes(file: File, options: &ReadOptions) -> Result<Buffer> {
    match kind(&file)? {
        Kind::Regular(len) => match options.mode {
            ReadMode::Map => Buffer::map_file(&file).map_err(|e| IoError::io("cannot map", e)),
            ReadMode::Read => read_regular(file, len),
        },
        Kind::Stream => read_stream(file, options.max_stream_bytes),
    }
}

/// Reads the first `len` bytes of a regular file into a new 64-byte-aligned buffer; a file
/// that turns out shorter (truncated meanwhile) is an error, not a signal.
fn read_regular(mut file: File, len: u64) -> Result<Buffer> {
    let len = usize::try_from(len).map_err(|_| IoError::too_large("the file is too large"))?;
    let mut failure = None;
    let buf = Buffer::new_with(
        &cpu_allocator(),
        len,
        &AllocationAttributes::default(),
        |w| {
            let mut scratch = vec![0u8; (1 << 20).min(len)];
            while w.remaining() > 0 {
                let n = w.remaining().min(scratch.len());
                if let Err(e) = file.read_exact(&mut scratch[..n]) {
                    failure = Some(e);
                    return;
                }
                w.put_slice(&scratch[..n]);
            }
        },
    )?;
    match failure {
        None => Ok(buf),
        Some(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(IoError::truncated(
            format!("the file shrank while it was read (it had {len} bytes)"),
        )),
        Some(e) => Err(IoError::io("cannot read", e)),
    }
}

/// Reads a stream to its end into a new 64-byte-aligned buffer, refusing one longer than
/// `max` bytes (memory grows with what arrives, at most doubling).
pub(crate) fn read_stream(r: impl Read, max: u64) -> Result<Buffer> {
    let mut v = Vec::new();
    let mut limited = r.take(max.saturating_add(1));
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match limited.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                v.try_reserve(n).map_err(|_| {
                    IoError::too_large(format!(
                        "cannot allocate memory for the {} bytes read so far",
                        v.len()
                    ))
                })?;
                v.extend_from_slice(&chunk[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(IoError::io("cannot read", e)),
        }
    }
    if v.len() as u64 > max {
        return Err(IoError::too_large(format!(
            "the stream is longer than the limit of {max} bytes (raise it to read more)"
        )));
    }
    drop(chunk);
    Ok(Buffer::copy_from_slice(&v)?)
}
