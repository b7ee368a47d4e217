//! Bare serialized `TensorProto` files: what `tf.io.serialize_tensor` writes and
//! `tf.io.parse_tensor` reads (one tensor, no framing).
//!
//! Reading decodes from the input's memory through `bytes::Bytes` (no copy of the file):
//! `tensor_content` is shared when its address suits the dtype and copied into an aligned
//! buffer otherwise (see `tensorcast_proto::decode_tensor`, which applies every TensorFlow
//! rule of `Tensor::FromProto` and bounds what an untrusted proto may make it allocate).
//! Writing uses TensorFlow's `AsProtoTensorContent` encoding, byte-identical to
//! `tf.io.serialize_tensor`.
//!
//! ```
//! use tensorcast_core::Tensor;
//! use tensorcast_io::tensorproto;
//! let t = Tensor::vector(&[1.0f32, 2.0]);
//! let bytes = tensorproto::write(&t).unwrap();
//! assert_eq!(bytes, b"\x08\x01\x12\x04\x12\x02\x08\x02\x22\x08\x00\x00\x80\x3f\x00\x00\x00\x40");
//! let back = tensorproto::read(tensorcast_buffer::Buffer::from_vec(bytes)).unwrap();
//! assert_eq!(back, t);
//! ```

use tensorcast_buffer::Buffer;
use tensorcast_core::Tensor;

use crate::error::{ErrorKind, IoError, Result};
use crate::{util, ReadOptions};

/// Decodes one serialized `TensorProto` held in `buf`, with the default [`ReadOptions`].
///
/// # Errors
/// An [`IoError`] with TensorFlow's reason the proto describes no tensor; `TooLarge` when the
/// decode would spend more than the memory limit.
pub fn read(buf: Buffer) -> Result<Tensor> {
    read_with(buf, &ReadOptions::default())
}

/// [`read()`] with `options`: [`ReadOptions::max_memory`] is the decode's fill budget
/// (`tensorcast_proto::DecodeOptions::with_max_fill_bytes`), which also counts string, resource
/// and variant elements.
///
/// # Errors
/// As [`read()`].
pub fn read_with(buf: Buffer, options: &ReadOptions) -> Result<Tensor> {
    let limit = usize::try_from(options.max_memory).unwrap_or(usize::MAX);
    let decode = tensorcast_proto::DecodeOptions::new().with_max_fill_bytes(limit);
    tensorcast_proto::decode_tensor_with(util::buffer_to_bytes(buf), &decode).map_err(|e| {
        let kind = match e.code() {
            tensorcast_core::Code::ResourceExhausted => ErrorKind::TooLarge,
            tensorcast_core::Code::Unimplemented => ErrorKind::Unsupported,
            _ => ErrorKind::Corrupt,
        };
        IoError::with_source(kind, e.to_string(), e)
    })
}

/// Encodes `t` as a serialized `TensorProto` (`tf.io.serialize_tensor`'s bytes).
///
/// # Errors
/// An [`IoError`] of kind [`Unsupported`](crate::ErrorKind::Unsupported) wrapping
/// [`tensorcast_proto::serialize_tensor`]'s error (a tensor with elements but no buffer).
pub fn write(t: &Tensor) -> Result<Vec<u8>> {
    tensorcast_proto::serialize_tensor(t)
        .map_err(|e| IoError::with_source(crate::ErrorKind::Unsupported, e.to_string(), e))
}
