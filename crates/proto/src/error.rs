//! [`ProtoError`]: why a `TensorProto` could not become a tensor, with TensorFlow's messages and
//! status codes.

use tensorcast_core::{Code, DataType};

/// An error converting between tensors and their protos.
///
/// `Display` prints TensorFlow's message where TensorFlow has one (`Input size was 8 and
/// expected 12`, `Shape [-1] is not fully defined`, `Type not set`, `Type mismatch between
/// parsed tensor (int32) and dtype (float)`); TensorFlow's `FromProto` only logs most of these
/// and returns `false`, and its `ParseTensor` op then reports `Cannot parse tensor from proto:`
/// followed by the proto's text form. [`ProtoError::code`] gives TensorFlow's status code.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtoError {
    /// The bytes are not a valid protobuf encoding of the message.
    #[error("Could not parse serialized bytes as TensorProto: {0}")]
    Wire(#[from] prost::DecodeError),
    /// The shape is not a valid (fully defined) `TensorShape`: more than 254 dims, a negative
    /// dim, or more than 2**63 - 1 elements (`TensorShape::IsValidShape`'s messages).
    #[error("{0}")]
    InvalidShape(String),
    /// `DT_INVALID` (`Type not set`), a `_REF` dtype or a number outside the enum
    /// (`Unexpected type: DT_FLOAT_REF`).
    #[error("{0}")]
    InvalidDtype(String),
    /// `tensor_content` of a memcpy-able dtype is not exactly `num_elements * size` bytes.
    #[error("Input size was {actual} and expected {expected}")]
    ContentSize {
        /// The tensor's dtype.
        dtype: DataType,
        /// Bytes of `tensor_content`.
        actual: usize,
        /// `num_elements * DataTypeSize(dtype)`.
        expected: u128,
    },
    /// A `bool` tensor's `tensor_content` holds a byte other than 0 or 1.
    #[error(
        "Invalid bool value {byte} at element {index} of tensor_content: bool bytes must be 0 or 1"
    )]
    InvalidBool {
        /// Index of the first bad element.
        index: usize,
        /// Its byte.
        byte: u8,
    },
    /// The string-list encoding of a string, resource or variant `tensor_content` is malformed
    /// (bad varint length, or lengths that do not add up to the bytes that follow).
    #[error("{0}")]
    InvalidContent(String),
    /// A resource handle's proto is not valid (its dtype-and-shape records).
    #[error("Could not decode resource handle from proto \"{proto}\", returned status: {status}")]
    ResourceHandle {
        /// A short rendering of the handle's proto.
        proto: String,
        /// Why it is invalid.
        status: String,
    },
    /// A variant's proto holds a tensor that does not decode.
    #[error("Could not decode variant with type_name: \"{type_name}\": {reason}")]
    Variant {
        /// The variant's type name.
        type_name: String,
        /// Why it could not be decoded.
        reason: String,
    },
    /// Variants nest tensors that hold variants deeper than [`crate::MAX_NESTING_DEPTH`].
    #[error("Variant tensors are nested more than {0} levels deep")]
    TooDeep(usize),
    /// The proto claims more elements than it carries, and filling them (repeat-last or zeros)
    /// would take more memory than the caller's limit ([`crate::DecodeOptions::with_max_fill_bytes`]).
    #[error(
        "TensorProto of {dtype} claims {elements} elements but carries {carried}; filling the \
         rest needs {fill_bytes} bytes, more than the limit of {limit_bytes} bytes \
         (raise it with DecodeOptions::with_max_fill_bytes)"
    )]
    FillLimit {
        /// The tensor's dtype.
        dtype: DataType,
        /// Elements the shape claims.
        elements: u64,
        /// Values the proto carries.
        carried: u64,
        /// Bytes of memory the fill would take.
        fill_bytes: u128,
        /// What was left of the limit when this tensor was decoded.
        limit_bytes: usize,
    },
    /// Object elements (string, resource, variant) or the message structs the wire decodes
    /// into would take more memory than what is left of the caller's limit
    /// ([`crate::DecodeOptions::with_max_fill_bytes`]); refused before allocating.
    #[error(
        "decoding the TensorProto needs {bytes} bytes for {what}, more than the {limit_bytes} \
         bytes left of the limit (raise it with DecodeOptions::with_max_fill_bytes)"
    )]
    MemoryLimit {
        /// What the memory is for.
        what: String,
        /// Bytes needed.
        bytes: u128,
        /// What was left of the limit.
        limit_bytes: usize,
    },
    /// `parse_tensor`, the op: the proto parsed but describes no tensor. TensorFlow's
    /// `ParseTensor` reports every `FromProto` failure this way (`InvalidArgument`), whatever
    /// the failure underneath - a fill or memory limit included, whose own code
    /// (`ResourceExhausted`) is what the library calls (`decode_tensor_with`...) return. The
    /// failure underneath is kept as [`std::error::Error::source`] and printed after the
    /// prefix (TensorFlow prints the proto's text form there instead).
    #[error("Cannot parse tensor from proto: {0}")]
    CannotParse(#[source] Box<ProtoError>),
    /// `parse_tensor`: the decoded dtype is not the one asked for (TensorFlow's `ParseTensor`).
    #[error("Type mismatch between parsed tensor ({actual}) and dtype ({expected})")]
    TypeMismatch {
        /// The dtype in the proto.
        actual: DataType,
        /// The dtype asked for.
        expected: DataType,
    },
    /// Text-format input that does not parse (`line:column: what`), or a message the text
    /// writer cannot print.
    #[error("{0}")]
    Text(String),
    /// An error from the tensor layer (allocation failure, mostly).
    #[error(transparent)]
    Tensor(#[from] tensorcast_core::Error),
}

impl ProtoError {
    /// TensorFlow's status code: `ResourceExhausted` for the fill limit and allocation failure,
    /// `InvalidArgument` for everything the input got wrong.
    pub fn code(&self) -> Code {
        match self {
            ProtoError::FillLimit { .. } | ProtoError::MemoryLimit { .. } => {
                Code::ResourceExhausted
            }
            ProtoError::Tensor(e) => e.code(),
            _ => Code::InvalidArgument,
        }
    }
}

impl From<tensorcast_buffer::AllocError> for ProtoError {
    fn from(e: tensorcast_buffer::AllocError) -> Self {
        ProtoError::Tensor(e.into())
    }
}
