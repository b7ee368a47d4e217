//! Tensor files for tensorcast: numpy `.npy` / `.npz`, safetensors, bare serialized
//! `TensorProto`s (`tf.io.serialize_tensor`), TensorFlow checkpoints ([`checkpoint`]) and
//! SavedModel folders ([`saved_model`]: tag sets, signatures, variables, fingerprint).
//!
//! Why it is built this way:
//! - **Memory-mapped, zero-copy reads.** [`read_file`] maps the file
//!   ([`tensorcast_buffer::Buffer::map_file`]) and builds tensors whose buffers are slices of
//!   the map wherever the data's address suits its dtype: safetensors always (writers align
//!   it), `.npy` and stored `.npz` members when numpy's 64-byte header padding holds, and
//!   `tensor_content` of a TensorProto when it happens to be aligned. Anything else (a
//!   misaligned tensor, big-endian or Fortran-order npy data, deflated npz members, packed F4)
//!   is copied into a 64-byte-aligned buffer, and each module's docs say when.
//! - **Or read, where a map cannot be trusted.** A file another process truncates while it is
//!   mapped kills the reader with `SIGBUS`; [`read_file_contents_with`] takes [`ReadOptions`]
//!   whose [`ReadMode::Read`] reads the file into an aligned buffer instead (the CLI's
//!   default), and reads FIFOs, pipes and character devices as streams bounded by
//!   [`ReadOptions::max_stream_bytes`].
//! - **Bounded memory.** What a decode may allocate beyond its input (decompressed npz members,
//!   a TensorProto's filled values and object elements) is bounded by
//!   [`ReadOptions::max_memory`]; `tests/peak_memory.rs` measures each decoder's peak on hostile
//!   files.
//! - **Format from content.** [`detect_format`] looks at the bytes (magic numbers, the
//!   safetensors header length, a plausible protobuf), the extension only breaking ties.
//! - **Untrusted input.** Every header is bounded, parsed by a real parser (a small
//!   Python-literal parser for npy, `serde_json` for safetensors, `prost` for protos),
//!   every size is checked for overflow and against the file, and every failure is an
//!   [`IoError`] naming the problem in one line. Nothing here panics on bad bytes; the
//!   fuzz targets `npy_header` and `safetensors_header` check that.
//! - **Atomic writes.** [`write_file`] writes a temporary file in the target's directory,
//!   fsyncs it and renames it into place: a failed write leaves the old file byte-identical
//!   and no temporary file behind.
//!
//! ```
//! use tensorcast_core::{bf16, Tensor};
//! use tensorcast_io::{read_file, write_file, Format, NamedTensor};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("weights.safetensors");
//! let tensors = vec![
//!     NamedTensor::new("w", Tensor::vector(&[bf16::from_f32(0.5), bf16::from_f32(-1.0)])),
//!     NamedTensor::new("b", Tensor::vector(&[1.0f32, 2.0, 3.0])),
//! ];
//! write_file(&path, Format::Safetensors, &tensors).unwrap();
//! let back = read_file(&path).unwrap();
//! assert_eq!(back.len(), 2);
//! assert_eq!(back.iter().find(|t| t.name == "w").unwrap(), &tensors[0]);
//! // The tensor's memory is the memory map of the file.
//! assert_eq!(back[0].tensor.buffer().unwrap().owner_name(), "mmap");
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub, missing_debug_implementations)]

mod atomic;
mod budget;
pub mod checkpoint;
mod error;
mod escape;
mod format;
pub mod npy;
pub mod npz;
mod options;
pub mod safetensors;
pub mod saved_model;
mod source;
pub mod tensorproto;
mod util;

use std::collections::BTreeMap;
use std::path::Path;

use tensorcast_buffer::Buffer;
use tensorcast_core::Tensor;

pub use atomic::{remove_temporary_files, OutputFile, OutputOptions};
pub use budget::MemoryBudget;
pub use error::{ErrorKind, IoError, Result};
pub use escape::escaped;
pub use format::{detect_format, Format};
pub use options::{ReadMode, ReadOptions, DEFAULT_MAX_MEMORY, DEFAULT_MAX_STREAM_BYTES};

/// A tensor with the name it has (or will have) in a file.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedTensor {
    /// The name: an npz member without `.npy`, a safetensors key, or the file stem for
    /// single-tensor formats.
    pub name: String,
    /// The tensor.
    pub tensor: Tensor,
}

impl NamedTensor {
    /// A named tensor.
    pub fn new(name: impl Into<String>, tensor: Tensor) -> Self {
        Self {
            name: name.into(),
            tensor,
        }
    }
}

/// Everything read from a file: its format, its tensors in file order, and its metadata
/// (safetensors' `__metadata__`; empty for the other formats).
#[derive(Debug, Clone, PartialEq)]
pub struct FileContents {
    /// The detected format.
    pub format: Format,
    /// The tensors, in file order.
    pub tensors: Vec<NamedTensor>,
    /// String metadata (safetensors only).
    pub metadata: BTreeMap<String, String>,
}

/// Options for [`write_file_with`] and [`write_bytes`].
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// How `.npz` members are stored (default: [`npz::Compression::Stored`]).
    pub npz_compression: npz::Compression,
    /// safetensors `__metadata__` (ignored by the other formats).
    pub metadata: BTreeMap<String, String>,
}

/// The tensor name a single-tensor file gets: the file stem (`activations` for
/// `samples/activations.npy`), or `tensor` if there is none.
fn stem_name(name_hint: &str) -> String {
    Path::new(name_hint)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .unwrap_or("tensor")
        .to_string()
}

/// Reads every tensor of the file at `path`, detecting its format from the content.
///
/// The file is memory-mapped; see the crate docs for when tensors share the map and when
/// they are copied. `.npy` and TensorProto files give one tensor named after the file stem;
/// safetensors and `.npz` files give all their entries, in file order.
///
/// # Errors
/// As [`read_file_contents_with`].
pub fn read_file(path: &Path) -> Result<Vec<NamedTensor>> {
    read_file_contents(path).map(|c| c.tensors)
}

/// [`read_file`], also returning the detected format and any metadata.
///
/// # Errors
/// As [`read_file_contents_with`].
pub fn read_file_contents(path: &Path) -> Result<FileContents> {
    read_file_contents_with(path, &ReadOptions::default())
}

/// [`read_file_contents`] with `options`: map or read a regular file ([`ReadMode`]), read a
/// FIFO, pipe or character device as a stream (up to [`ReadOptions::max_stream_bytes`]), and
/// bound what the decode may allocate ([`ReadOptions::max_memory`]).
///
/// # Errors
/// An [`IoError`]: the file cannot be opened, read or mapped (a directory, a block device),
/// a stream is longer than its limit, the format is unknown, or the decode fails.
pub fn read_file_contents_with(path: &Path, options: &ReadOptions) -> Result<FileContents> {
    let buf = source::read_path(path, options.mode, &source::Bound::input(options))?;
    let hint = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    read_buffer(buf, hint, Some(path), options)
}

/// Reads a whole stream (standard input, a socket...) of at most
/// [`ReadOptions::max_stream_bytes`] into an aligned buffer and decodes it; `name_hint` as for
/// [`read_bytes`].
///
/// # Errors
/// As [`read_file_contents_with`].
pub fn read_stream_contents_with(
    reader: impl std::io::Read,
    name_hint: &str,
    options: &ReadOptions,
) -> Result<FileContents> {
    let buf = source::read_stream(reader, options.max_stream_bytes)?;
    let path = (!name_hint.is_empty()).then(|| Path::new(name_hint));
    read_buffer(buf, name_hint, path, options)
}

/// The bytes of the file at `path`, as [`read_file_contents_with`] gets them: a regular file
/// that reports a size mapped or read by `options.mode`; a FIFO, pipe or character device, or a
/// regular file that reports a size of 0 (procfs, sysfs), read as a stream of at most
/// [`ReadOptions::max_stream_bytes`]. For formats this crate does not decode (a `GraphDef`,
/// say) that should still be read through the same safe input layer.
///
/// # Errors
/// [`ErrorKind::Io`] when the file cannot be opened, read or mapped (a directory, a block
/// device); `TooLarge` for a stream past its limit; `Truncated` for a file that shrank while it
/// was read.
pub fn read_path_buffer(path: &Path, options: &ReadOptions) -> Result<Buffer> {
    source::read_path(path, options.mode, &source::Bound::input(options))
}

/// At most `max_bytes` of the file at `path`, whatever it is: a regular file that reports a
/// larger size is refused before anything is read; a stream, or a regular file that reports a
/// size of 0 (procfs, sysfs: they may hold any amount), is read up to `max_bytes` and refused
/// past it. For small files a reader holds whole (a spec, a state file, a sniffed header).
///
/// ```
/// use std::path::Path;
/// use tensorcast_io::{read_path_at_most, ReadMode};
/// let status = read_path_at_most(Path::new("/proc/self/status"), 1 << 20, ReadMode::Read)?;
/// assert!(status.as_slice().starts_with(b"Name:"));
/// assert!(read_path_at_most(Path::new("/proc/self/pagemap"), 1 << 20, ReadMode::Read).is_err());
/// # Ok::<(), tensorcast_io::IoError>(())
/// ```
///
/// # Errors
/// As [`read_path_buffer`]; `TooLarge` past `max_bytes`.
pub fn read_path_at_most(path: &Path, max_bytes: u64, mode: ReadMode) -> Result<Buffer> {
    let bound = source::Bound {
        known: max_bytes,
        unknown: max_bytes,
        name: "the limit".to_string(),
    };
    source::read_path(path, mode, &bound)
}

/// Writes `bytes` to `path` as [`write_file_with`] writes tensor files: atomically through a
/// temporary file renamed into place (the file a symbolic link names is replaced, the link
/// stays; a FIFO or character device is written as a stream; an interrupted or failed write
/// leaves the old file and no temporary file).
///
/// # Errors
/// [`ErrorKind::Io`] when the target is a directory, block device or socket, or creating,
/// writing, syncing or renaming fails.
pub fn write_file_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    match atomic::resolve_target(path)? {
        atomic::Target::Replace(p) => atomic::write_atomic(&p, |w| {
            std::io::Write::write_all(w, bytes).map_err(|e| IoError::io("cannot write", e))
        }),
        atomic::Target::Stream(p) => atomic::write_stream(&p, bytes),
    }
}

/// Writes to `path` what `write` produces, as [`write_file_bytes`] writes: atomically through
/// a temporary file renamed into place, streamed (the bytes never sit in memory whole) except
/// for a FIFO or character device target, which gets them buffered and then as a stream. For
/// writers of other formats (Parquet, Arrow IPC) that should replace files the same way.
///
/// # Errors
/// [`ErrorKind::Io`] when the target is a directory, block device or socket, or creating,
/// writing, syncing or renaming fails; whatever `write` returns (the target is then left as it
/// was and the temporary file removed).
pub fn write_file_streamed(
    path: &Path,
    write: impl FnOnce(&mut (dyn std::io::Write + Send)) -> Result<()>,
) -> Result<()> {
    match atomic::resolve_target(path)? {
        atomic::Target::Replace(p) => atomic::write_atomic(&p, |w| write(w)),
        atomic::Target::Stream(p) => {
            let mut buf = Vec::new();
            write(&mut buf)?;
            atomic::write_stream(&p, &buf)
        }
    }
}

/// Reads a whole stream (standard input, a pipe...) into a new 64-byte-aligned buffer,
/// refusing one longer than `max_bytes`; memory grows with what arrives.
///
/// # Errors
/// `TooLarge` past `max_bytes` or when memory runs out; `Io` when reading fails.
pub fn read_stream_buffer(reader: impl std::io::Read, max_bytes: u64) -> Result<Buffer> {
    source::read_stream(reader, max_bytes)
}

/// Detects the format of a file held in `buf` and reads it with `options`; `name_hint` as for
/// [`read_bytes`].
///
/// # Errors
/// An [`IoError`]: unknown format, or the decode fails.
pub fn read_buffer_contents_with(
    buf: Buffer,
    name_hint: &str,
    options: &ReadOptions,
) -> Result<FileContents> {
    let path = (!name_hint.is_empty()).then(|| Path::new(name_hint));
    read_buffer(buf, name_hint, path, options)
}

/// Reads every tensor of a file held in memory; `name_hint` (a file name such as
/// `x.npy`) names single tensors and breaks format ties by its extension. The tensors share
/// `bytes`' memory where alignment allows, as [`read_file`] shares the map.
///
/// # Errors
/// An [`IoError`] of kind [`ErrorKind::BadMagic`] when the format is unknown, otherwise the
/// format's reader's error ([`npy::read`], [`npz::read`], [`safetensors::read`],
/// [`tensorproto::read`]).
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_io::{npy, read_bytes};
/// let bytes = npy::write(&Tensor::vector(&[1u16, 2]))?;
/// let ts = read_bytes(bytes.into(), "counts.npy")?;
/// assert_eq!(ts[0].name, "counts");
/// assert_eq!(ts[0].tensor.flat::<u16>()?.to_vec(), vec![1, 2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_bytes(bytes: bytes::Bytes, name_hint: &str) -> Result<Vec<NamedTensor>> {
    read_bytes_contents(bytes, name_hint).map(|c| c.tensors)
}

/// [`read_bytes`], also returning the detected format and any metadata.
///
/// # Errors
/// As [`read_bytes`].
pub fn read_bytes_contents(bytes: bytes::Bytes, name_hint: &str) -> Result<FileContents> {
    let path = (!name_hint.is_empty()).then(|| Path::new(name_hint));
    read_buffer(
        Buffer::from_bytes(bytes),
        name_hint,
        path,
        &ReadOptions::default(),
    )
}

fn read_buffer(
    buf: Buffer,
    name_hint: &str,
    path: Option<&Path>,
    options: &ReadOptions,
) -> Result<FileContents> {
    let Some(format) = detect_format(buf.as_slice(), path) else {
        return Err(IoError::bad_magic(
            "unknown format: the content is not npy, npz, safetensors or a serialized \
             TensorProto, and the extension does not name one",
        ));
    };
    read_as_with(buf, format, name_hint, options)
}

/// Reads a file held in `buf` as `format` (no detection).
///
/// # Errors
/// As [`read_as_with`].
pub fn read_as(buf: Buffer, format: Format, name_hint: &str) -> Result<FileContents> {
    read_as_with(buf, format, name_hint, &ReadOptions::default())
}

/// [`read_as`] with `options` (their [`ReadOptions::max_memory`] bounds the decode).
///
/// # Errors
/// An [`IoError`] naming what is wrong with the bytes as `format`.
pub fn read_as_with(
    buf: Buffer,
    format: Format,
    name_hint: &str,
    options: &ReadOptions,
) -> Result<FileContents> {
    let mut metadata = BTreeMap::new();
    let tensors = match format {
        Format::Npy => vec![NamedTensor::new(
            stem_name(name_hint),
            npy::read_with(buf, options.max_npy_header_bytes)?,
        )],
        Format::TensorProto => vec![NamedTensor::new(
            stem_name(name_hint),
            tensorproto::read_with(buf, options)?,
        )],
        Format::Npz => npz::read_with(buf, options)?,
        Format::Safetensors => {
            let (t, m) = safetensors::read_with_metadata(buf)?;
            metadata = m;
            t
        }
    };
    Ok(FileContents {
        format,
        tensors,
        metadata,
    })
}

fn single(format: Format, tensors: &[NamedTensor]) -> Result<&Tensor> {
    match tensors {
        [one] => Ok(&one.tensor),
        _ => Err(IoError::unsupported(format!(
            "a {format} file holds exactly one tensor, not {}",
            tensors.len()
        ))),
    }
}

/// Writes `tensors` to `path` in `format`, atomically (see [`write_file_with`]).
///
/// # Errors
/// As [`write_file_with`].
pub fn write_file(path: &Path, format: Format, tensors: &[NamedTensor]) -> Result<()> {
    write_file_with(path, format, tensors, &WriteOptions::default())
}

/// Writes `tensors` to `path` in `format` with `options`.
///
/// Atomic: the bytes go to a temporary file in the same directory, which is flushed, fsynced
/// and renamed over `path` (the directory is fsynced too). On any error (a dtype the format
/// cannot hold, discovered halfway through; a full disk; a read-only directory) the temporary
/// file is removed and an existing file at `path` is untouched. An existing file's
/// permissions are kept; a new file gets `0666` minus the umask. A symbolic link is followed
/// and the file it names replaced (the link stays); a FIFO or character device is written as
/// a stream, never replaced; a directory, block device or socket is refused. A tensor with no
/// buffer (not initialized) is refused before anything is written.
///
/// npy and TensorProto files hold exactly one tensor (its name is not stored); npz and
/// safetensors store names.
///
/// # Errors
/// An [`IoError`]: [`ErrorKind::Unsupported`] for more than one tensor in an npy or TensorProto
/// file, a tensor with no buffer, or a dtype the format cannot hold; [`ErrorKind::Io`] when the
/// target is a directory, block device or socket, or creating, writing, syncing or renaming fails.
pub fn write_file_with(
    path: &Path,
    format: Format,
    tensors: &[NamedTensor],
    options: &WriteOptions,
) -> Result<()> {
    if format.is_single_tensor() {
        single(format, tensors)?;
    }
    check_initialized(tensors)?;
    match atomic::resolve_target(path)? {
        atomic::Target::Replace(p) => {
            atomic::write_atomic(&p, |w| write_to(w, format, tensors, options))
        }
        atomic::Target::Stream(p) => {
            atomic::write_stream(&p, &write_bytes(format, tensors, options)?)
        }
    }
}

/// Refuses a tensor without a buffer that claims elements (a reader would refuse the file).
fn check_initialized(tensors: &[NamedTensor]) -> Result<()> {
    for nt in tensors {
        if !nt.tensor.is_initialized() {
            return Err(IoError::unsupported(format!(
                "tensor '{}' is not initialized (it has no buffer for its {} elements)",
                escaped(&nt.name),
                nt.tensor.num_elements()
            )));
        }
    }
    Ok(())
}

/// Encodes `tensors` in `format` into memory (what [`write_file_with`] would write).
///
/// # Errors
/// As [`write_file_with`], without the file-system errors.
pub fn write_bytes(
    format: Format,
    tensors: &[NamedTensor],
    options: &WriteOptions,
) -> Result<Vec<u8>> {
    check_initialized(tensors)?;
    let mut out = std::io::Cursor::new(Vec::new());
    write_to(&mut out, format, tensors, options)?;
    Ok(out.into_inner())
}

fn write_to<W: std::io::Write + std::io::Seek>(
    w: &mut W,
    format: Format,
    tensors: &[NamedTensor],
    options: &WriteOptions,
) -> Result<()> {
    let io = |e| IoError::io("cannot write", e);
    match format {
        Format::Npy => npy::write_to(w, single(format, tensors)?),
        Format::TensorProto => w
            .write_all(&tensorproto::write(single(format, tensors)?)?)
            .map_err(io),
        Format::Npz => npz::write_to(w, tensors, options.npz_compression),
        Format::Safetensors => safetensors::write_to(w, tensors, Some(&options.metadata)),
    }
}
