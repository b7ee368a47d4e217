//! The error type of the core crate, carrying TensorFlow's status code and exact message.

use crate::DataType;

/// TensorFlow's status codes (the subset tensorcast produces).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    /// `INVALID_ARGUMENT`.
    InvalidArgument,
    /// `OUT_OF_RANGE`.
    OutOfRange,
    /// `RESOURCE_EXHAUSTED`.
    ResourceExhausted,
    /// `UNIMPLEMENTED`.
    Unimplemented,
    /// `FAILED_PRECONDITION`.
    FailedPrecondition,
    /// `INTERNAL`.
    Internal,
}

impl Code {
    /// TensorFlow's spelling, e.g. `INVALID_ARGUMENT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::OutOfRange => "OUT_OF_RANGE",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::FailedPrecondition => "FAILED_PRECONDITION",
            Code::Internal => "INTERNAL",
        }
    }
}

/// An error from a tensor operation. `Display` prints exactly the message TensorFlow prints
/// where TensorFlow has one (`Cannot bitcast from 1 to 18`, `119 vs. 120`, ...); [`Error::code`]
/// gives TensorFlow's status code.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// TensorFlow's `InvalidArgument`, with its message.
    #[error("{0}")]
    InvalidArgument(String),
    /// TensorFlow's `OutOfRange`.
    #[error("{0}")]
    OutOfRange(String),
    /// TensorFlow's `ResourceExhausted` (a size limit was hit before allocating).
    #[error("{0}")]
    ResourceExhausted(String),
    /// TensorFlow's `Unimplemented`.
    #[error("{0}")]
    Unimplemented(String),
    /// The operation needs a state the tensor is not in (a write to a shared buffer, say).
    #[error("{0}")]
    FailedPrecondition(String),
    /// A broken internal invariant (a bug in tensorcast, reported instead of a panic).
    #[error("{0}")]
    Internal(String),
    /// Memory could not be allocated.
    #[error(transparent)]
    Alloc(#[from] tensorcast_buffer::AllocError),
    /// A typed view asked for the wrong element type (TensorFlow's CHECK message).
    #[error("{} expected, got {}", expected.name(), actual.name())]
    TypeMismatch {
        /// The tensor's dtype.
        actual: DataType,
        /// The dtype of the element type asked for.
        expected: DataType,
    },
    /// A typed view's address does not meet the element type's alignment.
    #[error("tensor data at address {address:#x} is not aligned to {required} bytes, as {type_name} needs; use the unaligned_* accessors")]
    Misaligned {
        /// The element type asked for.
        type_name: &'static str,
        /// The data's address.
        address: usize,
        /// The alignment the type needs.
        required: usize,
    },
}

impl Error {
    /// TensorFlow's status code for this error.
    pub fn code(&self) -> Code {
        match self {
            Error::InvalidArgument(_) | Error::TypeMismatch { .. } | Error::Misaligned { .. } => {
                Code::InvalidArgument
            }
            Error::OutOfRange(_) => Code::OutOfRange,
            Error::ResourceExhausted(_) | Error::Alloc(_) => Code::ResourceExhausted,
            Error::Unimplemented(_) => Code::Unimplemented,
            Error::FailedPrecondition(_) => Code::FailedPrecondition,
            Error::Internal(_) => Code::Internal,
        }
    }

    /// Shorthand for [`Error::InvalidArgument`].
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidArgument(msg.into())
    }
}

/// Result with the core [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
