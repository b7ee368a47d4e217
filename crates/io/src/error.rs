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
    /// The error underneath (an operating-system, tensor, proto or allocation error), kept as
    /// [`std::error::Error::source`]; the message already says what it says.
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl IoError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// An error of `kind` with `message` caused by `source` (returned by
    /// [`std::error::Error::source`]).
    ///
    /// ```
    /// use std::error::Error as _;
    /// use tensorcast_io::{ErrorKind, IoError};
    /// let cause = std::io::Error::other("disk on fire");
    /// let e = IoError::with_source(ErrorKind::Io, "writing x.npy: disk on fire", cause);
    /// assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("disk on fire"));
    /// ```
    pub fn with_source(
        kind: ErrorKind,
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            kind,
            message: message.into(),
            source: Some(Box::new(source)),
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
            source: self.source,
        }
    }

    /// The same error (kind and cause) with `message` instead of its own.
    pub(crate) fn with_message(self, message: impl Into<String>) -> Self {
        Self {
            kind: self.kind,
            message: message.into(),
            source: self.source,
        }
    }

    pub(crate) fn io(what: impl fmt::Display, e: std::io::Error) -> Self {
        Self::with_source(ErrorKind::Io, format!("{what}: {e}"), e)
    }

    pub(crate) fn bad_magic(msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::BadMagic, msg)
    }

    pub(crate) fn truncated(msg: impl fmt::Display) -> Self {
        Self::new(ErrorKind::Truncated, format!("truncated data: {msg}"))
    }

    /// A `Truncated` error whose message is exactly `msg` (TensorFlow's words).
    pub(crate) fn truncated_exact(msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Truncated, msg)
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
        Self::with_source(kind, e.to_string(), e)
    }
}

impl From<tensorcast_buffer::AllocError> for IoError {
    fn from(e: tensorcast_buffer::AllocError) -> Self {
        Self::with_source(ErrorKind::TooLarge, e.to_string(), e)
    }
}

/// The result type of this crate.
pub type Result<T, E = IoError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn causes_are_kept_as_source_through_context() {
        let e: IoError = tensorcast_core::Error::SharedBuffer.into();
        let e = e.context("tensor 'x'");
        let cause = e
            .source()
            .and_then(|s| s.downcast_ref::<tensorcast_core::Error>());
        assert!(matches!(cause, Some(tensorcast_core::Error::SharedBuffer)));
        assert!(e.to_string().starts_with("tensor 'x': "));
        let e = crate::read_file(std::path::Path::new("/nonexistent/dir/x.npy")).unwrap_err();
        let io = e.source().and_then(|s| s.downcast_ref::<std::io::Error>());
        assert_eq!(
            io.map(std::io::Error::kind),
            Some(std::io::ErrorKind::NotFound),
            "{e}"
        );
    }
}
