//! The one input layer: every file this crate reads whole is read by [`read_path`] (or
//! [`file_bytes`] for a file already open), which takes at most a bound from any file.
//!
//! What a file is decides how it is read. A regular file that reports a size is that size:
//! mapped or read into an aligned buffer (refused before anything is read when it is larger
//! than the bound for known sizes). Anything else is read as a stream, to its end or to the
//! bound for unknown sizes, and refused past it: standard input, a pipe, a FIFO, a socket, a
//! character device, and a regular file that reports a size of 0, which procfs and sysfs
//! files do whatever they hold (`/proc/self/pagemap` holds gigabytes; TensorFlow, which reads
//! the size it is told, reads it as empty).

use std::fs::File;
use std::io::Read;
use std::path::Path;

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

/// How much a read may take from a file.
#[derive(Debug, Clone)]
pub(crate) struct Bound {
    /// The largest regular file read (a larger one is refused before anything is read).
    pub(crate) known: u64,
    /// The most read from a file whose size is not known in advance (past it the read fails).
    pub(crate) unknown: u64,
    /// How errors name the limit (`the limit`, `--max-memory`).
    pub(crate) name: String,
}

impl Bound {
    /// A tensor file's: a regular file whole (its size is what it holds), anything else up to
    /// [`ReadOptions::max_stream_bytes`].
    pub(crate) fn input(options: &ReadOptions) -> Self {
        Self {
            known: u64::MAX,
            unknown: options.max_stream_bytes,
            name: "the limit".to_string(),
        }
    }

    /// A metadata file's that a reader parses whole (`saved_model.pb`, `fingerprint.pb`, a
    /// checkpoint's index): at most [`ReadOptions::max_memory`] from a file of unknown size
    /// (nor more than `max_stream_bytes`), and, when `known_too`, from a regular file as well.
    pub(crate) fn metadata(options: &ReadOptions, known_too: bool) -> Self {
        let max = options.max_memory.min(options.max_stream_bytes);
        Self {
            known: if known_too { max } else { u64::MAX },
            unknown: max,
            name: match &options.budget {
                Some(b) => b.name().to_string(),
                None => "the memory limit".to_string(),
            },
        }
    }
}

/// The bytes of the file at `path`, read as the module docs say, within `bound`.
///
/// # Errors
/// `Io` when the file cannot be opened, read or mapped (a directory, a block device);
/// `TooLarge` past the bound; `Truncated` for a regular file that shrank while it was read.
pub(crate) fn read_path(path: &Path, mode: ReadMode, bound: &Bound) -> Result<Buffer> {
    let file = File::open(path).map_err(|e| IoError::io("cannot open", e))?;
    file_bytes(file, mode, bound)
}

/// The bytes of an open file, read as the module docs say, within `bound`.
///
/// # Errors
/// As [`read_path`].
pub(crate) fn file_bytes(file: File, mode: ReadMode, bound: &Bound) -> Result<Buffer> {
    match kind(&file)? {
        Kind::Regular(0) => read_unsized(file, bound, true),
        Kind::Regular(len) => {
            if len > bound.known {
                return Err(IoError::too_large(format!(
                    "the file holds {len} bytes, more than {} ({} bytes)",
                    bound.name, bound.known
                )));
            }
            match mode {
                ReadMode::Map => Buffer::map_file(&file).map_err(|e| IoError::io("cannot map", e)),
                ReadMode::Read => read_regular(file, len),
            }
        }
        Kind::Stream => read_unsized(file, bound, false),
    }
}

/// Reads a file of unknown size within `bound.unknown`; `regular` for a regular file that
/// reports no size (the error says so).
fn read_unsized(file: File, bound: &Bound, regular: bool) -> Result<Buffer> {
    read_stream_or(file, bound.unknown, || {
        if regular {
            IoError::too_large(format!(
                "the file reports a size of 0 (a procfs or sysfs file?) but holds more than {} \
                 ({} bytes)",
                bound.name, bound.unknown
            ))
        } else {
            past_limit(bound.unknown)
        }
    })
}

/// The error of a stream longer than `max` bytes.
fn past_limit(max: u64) -> IoError {
    IoError::too_large(format!(
        "the stream is longer than the limit of {max} bytes (raise it to read more)"
    ))
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

/// The piece a stream is read in.
const STREAM_CHUNK: usize = 1 << 20;

/// Reads a stream to its end into a new 64-byte-aligned buffer, refusing one longer than
/// `max` bytes. Memory grows with what arrives: the pieces read, then the buffer they are
/// gathered into (twice the stream's length at the peak, never more than twice `max`).
pub(crate) fn read_stream(r: impl Read, max: u64) -> Result<Buffer> {
    read_stream_or(r, max, || past_limit(max))
}

/// [`read_stream`], with `too_long` the error of a stream past `max`.
fn read_stream_or(r: impl Read, max: u64, too_long: impl FnOnce() -> IoError) -> Result<Buffer> {
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    let mut total = 0u64;
    // One byte past `max` tells a longer stream, but read whole pages: some files refuse
    // reads of other sizes (`/proc/self/pagemap` wants multiples of 8 bytes).
    let mut limited = r.take(max.saturating_add(1).saturating_add(4095) & !4095);
    loop {
        let mut piece = Vec::new();
        piece.try_reserve_exact(STREAM_CHUNK).map_err(|_| {
            IoError::too_large(format!(
                "cannot allocate memory for the {total} bytes read so far"
            ))
        })?;
        piece.resize(STREAM_CHUNK, 0);
        let mut filled = 0;
        while filled < piece.len() {
            match limited.read(&mut piece[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(IoError::io("cannot read", e)),
            }
        }
        piece.truncate(filled);
        total += filled as u64;
        if total > max {
            return Err(too_long());
        }
        let ended = filled < STREAM_CHUNK;
        if filled > 0 {
            pieces.push(piece);
        }
        if ended {
            break;
        }
    }
    let len = usize::try_from(total).map_err(|_| IoError::too_large("the stream is too large"))?;
    let buf = Buffer::new_with(
        &cpu_allocator(),
        len,
        &AllocationAttributes::default(),
        |w| {
            for p in pieces.drain(..) {
                w.put_slice(&p);
            }
        },
    )?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_read_whole_up_to_the_limit_and_refused_past_it() {
        let data: Vec<u8> = (0..(3 * STREAM_CHUNK + 17)).map(|i| i as u8).collect();
        let b = read_stream(&data[..], data.len() as u64).unwrap();
        assert_eq!(b.as_slice(), &data[..]);
        assert!(b.is_aligned_to(64));
        let e = read_stream(&data[..], data.len() as u64 - 1).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::TooLarge);
        assert!(read_stream(&b""[..], 0).unwrap().is_empty());
        let exact: Vec<u8> = vec![7; STREAM_CHUNK];
        assert_eq!(
            read_stream(&exact[..], STREAM_CHUNK as u64).unwrap().len(),
            STREAM_CHUNK
        );
    }

    #[test]
    fn procfs_files_that_report_no_size_are_read_bounded() {
        // /proc/self/status reports a size of 0 and holds a few hundred bytes.
        let opts = ReadOptions::default();
        let b = read_path(
            Path::new("/proc/self/status"),
            ReadMode::Map,
            &Bound::input(&opts),
        )
        .unwrap();
        assert!(
            b.as_slice().starts_with(b"Name:"),
            "{:?}",
            &b.as_slice()[..16]
        );
        // /proc/self/pagemap reports 0 and holds 8 bytes per page of the address space.
        let small = ReadOptions {
            max_memory: 1 << 16,
            ..ReadOptions::default()
        };
        let e = read_path(
            Path::new("/proc/self/pagemap"),
            ReadMode::Read,
            &Bound::metadata(&small, true),
        )
        .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::TooLarge);
        assert!(e.to_string().contains("reports a size of 0"), "{e}");
    }
}
