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

/// [`read()`] with `options`: what the decode allocates beyond the input's bytes (values the
/// proto declares but does not carry, string, resource and variant elements, the message
/// structs the wire decodes into) is bounded by what is left of the options' budget
/// ([`ReadOptions::read_budget`]: the reads' shared one, or [`ReadOptions::max_memory`] for
/// this read alone), and the tensor's bytes beyond the input's are charged to it.
///
/// # Errors
/// As [`read()`].
pub fn read_with(buf: Buffer, options: &ReadOptions) -> Result<Tensor> {
    read_charged(buf, options).map(|(t, _)| t)
}

/// [`read_with`], also returning the bytes charged to the options' budget for the tensor (its
/// bytes beyond the input's), which a caller that drops the tensor can give back with
/// [`crate::MemoryBudget::release`].
///
/// ```
/// use tensorcast_io::{tensorproto, ReadOptions};
/// // float [1024], one value carried: 4 KiB filled from 16 bytes.
/// let p = b"\x08\x01\x12\x05\x12\x03\x08\x80\x08\x2a\x04\x00\x00\x80\x3f";
/// let opts = ReadOptions { max_memory: 6000, ..ReadOptions::default() }.with_shared_budget("the limit");
/// let buf = || tensorcast_buffer::Buffer::copy_from_slice(p).unwrap();
/// let (t, charged) = tensorproto::read_charged(buf(), &opts)?;
/// assert_eq!((t.num_elements(), charged), (1024, 4096 - p.len() as u64));
/// // The budget is shared: a second such tensor does not fit while the first is kept...
/// assert!(tensorproto::read_with(buf(), &opts).is_err());
/// // ...and does once it is given back.
/// opts.read_budget().release(charged);
/// assert!(tensorproto::read_with(buf(), &opts).is_ok());
/// # Ok::<(), tensorcast_io::IoError>(())
/// ```
///
/// # Errors
/// As [`read()`]; `TooLarge` naming the budget when the tensor does not fit in what is left.
pub fn read_charged(buf: Buffer, options: &ReadOptions) -> Result<(Tensor, u64)> {
    let budget = options.read_budget();
    let input = buf.len() as u64;
    let left = usize::try_from(budget.remaining_bytes()).unwrap_or(usize::MAX);
    let decode = tensorcast_proto::DecodeOptions::new().with_max_fill_bytes(left);
    let t = tensorcast_proto::decode_tensor_with(util::buffer_to_bytes(buf), &decode)
        .map_err(|e| proto_error(e, &budget))?;
    let beyond = (t.total_bytes() as u64).saturating_sub(input);
    budget.charge(
        beyond,
        format_args!("a {} tensor of shape {}", t.dtype().name(), t.shape()),
    )?;
    Ok((t, beyond))
}

/// A decode's error as an [`IoError`]; the memory limits it met worded as the budget's.
fn proto_error(e: tensorcast_proto::ProtoError, budget: &crate::MemoryBudget) -> IoError {
    use tensorcast_proto::ProtoError;
    let what = match &e {
        ProtoError::FillLimit {
            dtype,
            elements,
            carried,
            fill_bytes,
            ..
        } => Some((
            format!(
                "a TensorProto of {} claiming {elements} elements and carrying {carried} (the \
                 rest filled)",
                dtype.name()
            ),
            *fill_bytes,
        )),
        ProtoError::MemoryLimit { what, bytes, .. } => {
            Some((format!("decoding a TensorProto ({what})"), *bytes))
        }
        _ => None,
    };
    if let Some((what, bytes)) = what {
        // The decoder's own text names its option, not the budget: not kept as the source.
        return budget.exceeded(what, bytes);
    }
    let kind = match e.code() {
        tensorcast_core::Code::ResourceExhausted => ErrorKind::TooLarge,
        tensorcast_core::Code::Unimplemented => ErrorKind::Unsupported,
        _ => ErrorKind::Corrupt,
    };
    IoError::with_source(kind, e.to_string(), e)
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
