//! [`RecordsError`]: one variant per failure mode, printing TensorFlow's words where it has them.

/// TensorFlow's status codes for the errors of this crate (`DATA_LOSS` is the one TensorFlow's
/// record reader uses for damaged files; `tensorcast_core::Code` has no such code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    /// `DATA_LOSS`: a damaged or truncated file.
    DataLoss,
    /// `INVALID_ARGUMENT`: a bad example, spec or argument.
    InvalidArgument,
    /// `RESOURCE_EXHAUSTED`: a limit set by the caller was reached.
    ResourceExhausted,
    /// `UNKNOWN`: the operating system failed.
    Unknown,
}

impl Code {
    /// TensorFlow's spelling, e.g. `DATA_LOSS`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::DataLoss => "DATA_LOSS",
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::Unknown => "UNKNOWN",
        }
    }
}

/// An error reading or writing TFRecord files or parsing examples.
///
/// `Display` is TensorFlow's message where TensorFlow has one (`corrupted record at 12`,
/// `truncated record at 21' failed with Read less bytes than requested`, `Name: <unknown>, Key:
/// f, Index: 0.  Data types don't match. ...`); [`RecordsError::code`] is TensorFlow's status code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordsError {
    /// A record's length does not match its checksum (`offset`: the record's start). TensorFlow
    /// adds `(Is this even a TFRecord file?)` for the first record.
    #[error("corrupted record at {offset}{}", if *offset == 0 { " (Is this even a TFRecord file?)" } else { "" })]
    CorruptedLength {
        /// Byte offset of the record (in the uncompressed stream).
        offset: u64,
    },
    /// A record's data does not match its checksum (`offset`: where the data starts, the
    /// record's start + 12, as TensorFlow reports it).
    #[error("corrupted record at {offset}")]
    CorruptedData {
        /// Byte offset of the record's data (in the uncompressed stream).
        offset: u64,
    },
    /// The stream ends inside a record's data or footer (`offset`: the record's start).
    /// `cause` is TensorFlow's underlying message: `Read less bytes than requested` for a plain
    /// file, `EOF reached` for a compressed one.
    #[error("truncated record at {offset}' failed with {cause}")]
    Truncated {
        /// Byte offset of the record (in the uncompressed stream).
        offset: u64,
        /// TensorFlow's words for the short read.
        cause: &'static str,
    },
    /// A record header claims more bytes than [`crate::ReaderOptions::max_record_bytes`].
    #[error("record at {offset} claims {length} bytes, over the limit of {limit} bytes")]
    RecordTooLarge {
        /// Byte offset of the record (in the uncompressed stream).
        offset: u64,
        /// The claimed length.
        length: u64,
        /// The limit.
        limit: u64,
    },
    /// The compressed stream is damaged (zlib's message as TensorFlow prints it:
    /// `inflate() failed with error -3: invalid block type`).
    #[error("inflate() failed with error {zlib_code}: {message}")]
    Inflate {
        /// zlib's error code (`-3`, `Z_DATA_ERROR`, for damaged data).
        zlib_code: i32,
        /// zlib's message.
        message: String,
    },
    /// Reading or writing failed in the operating system.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The error underneath.
        #[source]
        source: std::io::Error,
    },
    /// The atomic output layer refused or failed (creating the temporary file, writing it,
    /// renaming it over the target; a target that is a directory): its one-line message.
    #[error(transparent)]
    Output(#[from] tensorcast_io::IoError),
    /// An example, a spec or an argument is invalid; the message is TensorFlow's.
    #[error("{0}")]
    InvalidArgument(String),
    /// A limit on the work or memory of a parse was reached.
    #[error("{0}")]
    ResourceExhausted(String),
}

impl RecordsError {
    /// TensorFlow's status code for this error.
    pub fn code(&self) -> Code {
        match self {
            RecordsError::CorruptedLength { .. }
            | RecordsError::CorruptedData { .. }
            | RecordsError::Truncated { .. }
            | RecordsError::Inflate { .. } => Code::DataLoss,
            RecordsError::RecordTooLarge { .. } | RecordsError::ResourceExhausted(_) => {
                Code::ResourceExhausted
            }
            RecordsError::Io { .. } | RecordsError::Output(_) => Code::Unknown,
            RecordsError::InvalidArgument(_) => Code::InvalidArgument,
        }
    }

    pub(crate) fn io(context: &'static str, source: std::io::Error) -> Self {
        RecordsError::Io { context, source }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        RecordsError::InvalidArgument(message.into())
    }
}

/// The result type of this crate.
pub type Result<T, E = RecordsError> = std::result::Result<T, E>;
