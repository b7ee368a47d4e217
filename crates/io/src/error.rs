//! [`IoError`]: what went wrong reading or writing a tensor file, in one line.

use std::fmt;

use tensorcast_core::Code;

/// The kind of an [`IoError`], for callers that branch on it (the message is for people).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The operating system refused (open, map, write, rename, sync...).
    Io,
    /// The bytes are not in the format they were read as (bad magic, unknown format).
    BadMagic,
    /// The file ends before the data it declares.
    Truncated,
    /// The structure is malformed (a header that does not parse, offsets that overlap...).
    Corrupt,
    /// Well-formed, but asks for something this library does not do (a dtype with no
    /// counterpart, a structured numpy dtype, an encrypted zip member...).
    Unsupported,
    /// A declared size is past a safety bound (header length, element count).
    TooLarge,
    /// The tensor layer refused (a shape TensorFlow rejects, an allocation failure...).
    Tensor,
}

impl ErrorKind {
    /// A short lowercase name (`io`, `bad magic`, `truncated`...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Io => "io",
            ErrorKind::BadMagic => "bad magic",
            ErrorKind::Truncated => "truncated",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::TooLarge => "too large",
            ErrorKind::Tensor => "tensor",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error reading or writing a tensor file.
///
/// `Display` is one line naming the problem (`bad magic: not an .npy file`, `truncated data:
/// ...`, `unsupported dtype '<U10'`, `header too long: ...`), without the file name: callers
/// that know the file (the CLI) prefix it.
///
/// ```
/// use tensorcast_io::{npy, ErrorKind};
/// let err = npy::parse_header(b"PK\x03\x04 not numpy").unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::BadMagic);
/// assert_eq!(err.to_string(), "bad magic: not an .npy file (it starts with 50 4b 03 04 20 6e, not \\x93NUMPY)");
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct IoError {
    kind: ErrorKind,
    message: String,
}

impl IoError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message (what `Display` prints).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The TensorFlow status code closest to the kind: operating-system failures map to
    /// `Internal`, refusals to `Unimplemented`, bounds to `ResourceExhausted`, everything about
    /// the bytes to `InvalidArgument` (as TensorFlow's `ParseTensor` reports bad input).
    pub fn code(&self) -> Code {
        match self.kind {
            ErrorKind::Io => Code::Internal,
            ErrorKind::BadMagic | ErrorKind::Corrupt | ErrorKind::Tensor | ErrorKind::Truncated => {
                Code::InvalidArgument
            }
            ErrorKind::Unsupported => Code::Unimplemented,
            ErrorKind::TooLarge => Code::ResourceExhausted,
        }
    }

    /// The same error with `context: ` in front of the message (used to name an npz member or
    /// a safetensors entry).
    pub fn context(self, context: impl fmt::Display) -> Self {
        Self {
            kind: self.kind,
            message: format!("{context}: {}", self.message),
        }
    }

    pub(crate) fn io(what: impl fmt::Display, e: std::io::Error) -> Self {
        Self::new(ErrorKind::Io, format!("{what}: {e}"))
    }

    pub(crate) fn bad_magic(msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::BadMagic, msg)
    }

    pub(crate) fn truncated(msg: impl fmt::Display) -> Self {
        Self::new(ErrorKind::Truncated, format!("truncated data: {msg}"))
    }

    pub(crate) fn corrupt(msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Corrupt, msg)
    }

    pub(crate) fn unsupported(msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, msg)
    }

    pub(crate) fn too_large(msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::TooLarge, msg)
    }
}

impl From<tensorcast_core::Error> for IoError {
    fn from(e: tensorcast_core::Error) -> Self {
        let kind = match e.code() {
            Code::ResourceExhausted => ErrorKind::TooLarge,
            Code::Unimplemented => ErrorKind::Unsupported,
            _ => ErrorKind::Tensor,
        };
        Self::new(kind, e.to_string())
    }
}

impl From<tensorcast_buffer::AllocError> for IoError {
    fn from(e: tensorcast_buffer::AllocError) -> Self {
        Self::new(ErrorKind::TooLarge, e.to_string())
    }
}

/// The result type of this crate.
pub type Result<T, E = IoError> = std::result::Result<T, E>;
