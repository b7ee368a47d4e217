//! [`Tensor`] -> `TensorProto` and wire bytes: TensorFlow's `AsProtoField`,
//! `AsProtoTensorContent`, the `SerializeTensor` op, and `FillDescription`.

use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use tensorcast_buffer::{cpu_allocator, AllocationAttributes, Allocator, Buffer};
use tensorcast_core::{DataType, ResourceHandle, TString, Tensor, Variant};

use crate::handle::resource_handle_to_proto;
use crate::messages::{
    AllocationDescription, TensorDescription, TensorProto, VariantTensorDataProto,
};
use crate::shape::shape_to_proto;
use crate::ProtoError;

/// Field 4 (`tensor_content`), wire type 2: the tag byte that precedes the content.
const TENSOR_CONTENT_TAG: u8 = 0x22;

/// Keeps a [`Buffer`] alive as the owner of a `Bytes`.
struct BufferOwner(Buffer);

impl AsRef<[u8]> for BufferOwner {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

/// A `bytes::Bytes` over a buffer's memory, without copying (the `Bytes` keeps the buffer
/// alive). The way to hand a memory-mapped file or a tensor's buffer to [`crate::decode_tensor`]
/// or to anything else that takes `Bytes`.
///
/// ```
/// use tensorcast_buffer::Buffer;
/// let buf = Buffer::copy_from_slice(b"abc").unwrap();
/// let bytes = tensorcast_proto::bytes_from_buffer(buf.clone());
/// assert_eq!(bytes.as_ptr(), buf.as_ptr());
/// ```
pub fn bytes_from_buffer(buffer: Buffer) -> Bytes {
    if buffer.is_empty() {
        return Bytes::new();
    }
    Bytes::from_owner(BufferOwner(buffer))
}

/// dtype and shape: what both encodings start with. TensorFlow always writes the shape, even
/// for scalars (an empty message).
fn header_proto(t: &Tensor) -> TensorProto {
    TensorProto {
        dtype: t.dtype().number(),
        tensor_shape: Some(shape_to_proto(t.shape())),
        ..Default::default()
    }
}

/// The bytes of a memcpy-able tensor (empty without a buffer).
fn pod_data(t: &Tensor) -> &[u8] {
    t.tensor_data().unwrap_or(&[])
}

/// Little-endian elements of `T` from possibly unaligned bytes.
fn le<T: bytemuck::Pod>(data: &[u8]) -> Vec<T> {
    bytemuck::pod_collect_to_vec(data)
}

/// TensorFlow's `AsProtoField`: dtype, shape, and every value in the dtype's typed field
/// (no repeat-last compression); `tensor_content` is left empty.
///
/// Per dtype: float/double/int64/uint32/uint64/bool in their own fields; int8..int32, uint8,
/// uint16 and the quantized types in `int_val`; half and bfloat16 as their bit patterns in
/// `half_val`; complex as interleaved (re, im); float8/float4 one byte each in `float8_val`;
/// int4/uint4/int2/uint2 in `int_val` as their numeric values (the low 4 or 2 bits, sign-extended
/// for the signed types, as TensorFlow's ml_dtypes conversion does); strings in `string_val`;
/// handles in `resource_handle_val`; variants in `variant_val`. A tensor without a buffer (no
/// elements, or an allocation that failed) gets dtype and shape only.
///
/// ```
/// use tensorcast_proto::as_proto_field;
/// use tensorcast_core::{f16, Tensor};
/// let p = as_proto_field(&Tensor::vector(&[f16::from_f32(1.0), f16::from_f32(-2.0)]));
/// assert_eq!(p.half_val, [0x3c00, 0xc000]);
/// assert!(p.tensor_content.is_empty());
/// ```
pub fn as_proto_field(t: &Tensor) -> TensorProto {
    let mut p = header_proto(t);
    if t.num_elements() == 0 {
        return p;
    }
    let data = pod_data(t);
    match t.dtype() {
        DataType::FLOAT => p.float_val = le(data),
        DataType::DOUBLE => p.double_val = le(data),
        DataType::INT32 | DataType::QINT32 => p.int_val = le(data),
        DataType::UINT8 | DataType::QUINT8 => p.int_val = data.iter().map(|&b| b.into()).collect(),
        DataType::INT8 | DataType::QINT8 => {
            p.int_val = data.iter().map(|&b| (b as i8).into()).collect()
        }
        DataType::INT16 | DataType::QINT16 => {
            p.int_val = le::<i16>(data).into_iter().map(i32::from).collect()
        }
        DataType::UINT16 | DataType::QUINT16 => {
            p.int_val = le::<u16>(data).into_iter().map(i32::from).collect()
        }
        DataType::INT4 => p.int_val = data.iter().map(|&b| ((b << 4) as i8 >> 4).into()).collect(),
        DataType::UINT4 => p.int_val = data.iter().map(|&b| (b & 0x0f).into()).collect(),
        DataType::INT2 => p.int_val = data.iter().map(|&b| ((b << 6) as i8 >> 6).into()).collect(),
        DataType::UINT2 => p.int_val = data.iter().map(|&b| (b & 0x03).into()).collect(),
        DataType::INT64 => p.int64_val = le(data),
        DataType::UINT32 => p.uint32_val = le(data),
        DataType::UINT64 => p.uint64_val = le(data),
        DataType::BOOL => p.bool_val = data.iter().map(|&b| b != 0).collect(),
        DataType::HALF | DataType::BFLOAT16 => {
            p.half_val = le::<u16>(data).into_iter().map(i32::from).collect()
        }
        DataType::COMPLEX64 => p.scomplex_val = le(data),
        DataType::COMPLEX128 => p.dcomplex_val = le(data),
        DataType::FLOAT8_E5M2
        | DataType::FLOAT8_E4M3FN
        | DataType::FLOAT8_E4M3FNUZ
        | DataType::FLOAT8_E4M3B11FNUZ
        | DataType::FLOAT8_E5M2FNUZ
        | DataType::FLOAT4_E2M1FN => p.float8_val = Bytes::copy_from_slice(data),
        DataType::STRING => {
            if let Ok(s) = t.as_slice::<TString>() {
                p.string_val = s.iter().map(TString::to_bytes).collect();
            }
        }
        DataType::RESOURCE => {
            if let Ok(s) = t.as_slice::<ResourceHandle>() {
                p.resource_handle_val = s.iter().map(resource_handle_to_proto).collect();
            }
        }
        DataType::VARIANT => {
            if let Ok(s) = t.as_slice::<Variant>() {
                p.variant_val = s.iter().map(variant_to_proto).collect();
            }
        }
        _ => {}
    }
    p
}

/// The string-list encoding: every length as a varint32, then the bytes.
fn encode_string_list<'a>(items: impl Iterator<Item = &'a [u8]> + Clone) -> Bytes {
    let mut sizes = Vec::new();
    let mut total = 0usize;
    for s in items.clone() {
        // TensorFlow writes varint32 lengths; a string of 4 GiB or more cannot be represented
        // there, and gets its full length as a longer varint here.
        prost::encoding::encode_varint(s.len() as u64, &mut sizes);
        total += s.len();
    }
    let mut out = Vec::with_capacity(sizes.len() + total);
    out.extend_from_slice(&sizes);
    for s in items {
        out.extend_from_slice(s);
    }
    Bytes::from(out)
}

/// TensorFlow's `AsProtoTensorContent`: dtype, shape, and the values as `tensor_content`: the
/// raw little-endian bytes for memcpy-able dtypes (shared with the tensor's buffer, not
/// copied: the proto keeps the buffer alive), the string-list encoding for strings, and for
/// handles and variants the string-list encoding of each element's serialized proto. Tensors
/// without elements or without a buffer get no content.
///
/// ```
/// use tensorcast_proto::as_proto_tensor_content;
/// use tensorcast_core::{TString, Tensor, TensorShape};
/// let t = Tensor::from_vec(vec![TString::from("a"), TString::from("bc")], &TensorShape::new(&[2]).unwrap()).unwrap();
/// assert_eq!(as_proto_tensor_content(&t).tensor_content.as_ref(), b"\x01\x02abc");
/// ```
pub fn as_proto_tensor_content(t: &Tensor) -> TensorProto {
    let mut p = header_proto(t);
    if t.num_elements() == 0 {
        return p;
    }
    match t.dtype() {
        DataType::STRING => {
            if let Ok(s) = t.as_slice::<TString>() {
                p.tensor_content = encode_string_list(s.iter().map(TString::as_bytes));
            }
        }
        DataType::RESOURCE => {
            if let Ok(s) = t.as_slice::<ResourceHandle>() {
                let enc: Vec<Vec<u8>> = s
                    .iter()
                    .map(|h| resource_handle_to_proto(h).encode_to_vec())
                    .collect();
                p.tensor_content = encode_string_list(enc.iter().map(Vec::as_slice));
            }
        }
        DataType::VARIANT => {
            if let Ok(s) = t.as_slice::<Variant>() {
                let enc: Vec<Vec<u8>> = s
                    .iter()
                    .map(|v| variant_to_proto(v).encode_to_vec())
                    .collect();
                p.tensor_content = encode_string_list(enc.iter().map(Vec::as_slice));
            }
        }
        _ => {
            if let Some(b) = t.buffer() {
                p.tensor_content = bytes_from_buffer(b.clone());
            }
        }
    }
    p
}

/// For a memcpy-able dtype, the bytes `serialize_tensor` writes *before* the tensor's data:
/// `serialize_tensor(t) == header ++ t.tensor_data()`. Lets a writer send the header and then
/// the tensor's own memory (to a file or socket) without building the message. `None` for
/// string, resource and variant tensors.
///
/// # Errors
/// [`ProtoError::Tensor`] with [`tensorcast_core::Error::Uninitialized`] for a tensor that has
/// elements but no buffer (its allocation failed): its values do not exist, and writing the
/// header alone would describe a tensor that a reader fills with zeros.
///
/// ```
/// use tensorcast_proto::{serialize_tensor, serialize_tensor_header};
/// use tensorcast_core::Tensor;
/// let t = Tensor::vector(&[1.0f32, 2.0]);
/// let mut wire = serialize_tensor_header(&t)?.expect("float is memcpy-able");
/// wire.extend_from_slice(t.tensor_data()?);
/// assert_eq!(wire, serialize_tensor(&t)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn serialize_tensor_header(t: &Tensor) -> Result<Option<Vec<u8>>, ProtoError> {
    check_initialized(t)?;
    if !t.dtype().can_use_memcpy() {
        return Ok(None);
    }
    let p = header_proto(t);
    let data = pod_data(t);
    let mut header = p.encode_to_vec();
    if !data.is_empty() {
        header.push(TENSOR_CONTENT_TAG);
        prost::encoding::encode_varint(data.len() as u64, &mut header);
    }
    Ok(Some(header))
}

/// Refuses a tensor with elements but no buffer: there are no values to write.
fn check_initialized(t: &Tensor) -> Result<(), ProtoError> {
    if t.num_elements() > 0 && !t.is_initialized() {
        return Err(ProtoError::Tensor(tensorcast_core::Error::Uninitialized {
            op: "SerializeTensor",
            dtype: t.dtype(),
            elements: t.num_elements(),
        }));
    }
    Ok(())
}

/// What TensorFlow's `SerializeTensor` op (`tf.io.serialize_tensor`) writes: the
/// `AsProtoTensorContent` proto, except for string tensors, which are written in their
/// `AsProtoField` form (`string_val`), byte for byte as TensorFlow does.
///
/// For memcpy-able dtypes this is the header followed by one copy of the data into a new
/// `Vec`. [`encode_tensor`] writes the same bytes into an aligned, reusable buffer instead.
///
/// # Errors
/// As [`serialize_tensor_header`]: a tensor whose allocation failed (elements but no buffer) is
/// refused rather than written as a tensor that reads back as zeros.
///
/// ```
/// use tensorcast_proto::serialize_tensor;
/// use tensorcast_core::Tensor;
/// assert_eq!(serialize_tensor(&Tensor::from(7.0f32))?, b"\x08\x01\x12\x00\x22\x04\x00\x00\xe0\x40");
/// # Ok::<(), tensorcast_proto::ProtoError>(())
/// ```
pub fn serialize_tensor(t: &Tensor) -> Result<Vec<u8>, ProtoError> {
    let mut out = Vec::new();
    serialize_tensor_into(t, &mut out)?;
    Ok(out)
}

/// [`serialize_tensor`], appended to `out`. A caller that serializes repeatedly and reuses (and
/// clears) one `Vec` avoids the cost of fresh memory on every call, which for large tensors is
/// larger than the copy itself (page faults).
///
/// ```
/// use tensorcast_proto::{serialize_tensor, serialize_tensor_into};
/// use tensorcast_core::Tensor;
/// let t = Tensor::vector(&[1u8, 2, 3]);
/// let mut out = b"prefix".to_vec();
/// serialize_tensor_into(&t, &mut out)?;
/// assert_eq!(&out[6..], serialize_tensor(&t)?.as_slice());
/// # Ok::<(), tensorcast_proto::ProtoError>(())
/// ```
///
/// # Errors
/// As [`serialize_tensor`]; `out` is left as it was.
pub fn serialize_tensor_into(t: &Tensor, out: &mut Vec<u8>) -> Result<(), ProtoError> {
    match serialize_tensor_header(t)? {
        Some(header) => {
            let data = pod_data(t);
            out.reserve(header.len() + data.len());
            out.extend_from_slice(&header);
            extend_large(out, data);
        }
        None if t.dtype() == DataType::STRING => as_proto_field(t).encode_raw_into(out),
        None => as_proto_tensor_content(t).encode_raw_into(out),
    }
    Ok(())
}

/// Appends `data` to `out` (which has room for it). One `memcpy` when the destination and the
/// source sit at the same offset within a 4 KiB page; otherwise in 1 MiB pieces. Measured on the
/// reference machine (256 MiB): glibc's single large `memcpy` takes about 3x longer when the
/// offsets differ (as they do here, the content following a header of a dozen bytes: 4K
/// aliasing defeats its large-copy path), while 1 MiB pieces run at the aligned speed or close.
fn extend_large(out: &mut Vec<u8>, data: &[u8]) {
    const PIECE: usize = 1 << 20;
    let dst = out.as_ptr() as usize + out.len();
    let same_page_offset = dst
        .wrapping_sub(data.as_ptr() as usize)
        .is_multiple_of(4096);
    if data.len() <= 2 * PIECE || same_page_offset {
        out.extend_from_slice(data);
    } else {
        for piece in data.chunks(PIECE) {
            out.extend_from_slice(piece);
        }
    }
}

/// Appends a message's encoding to a `Vec` (which grows as needed, so it cannot fail).
trait EncodeInto {
    fn encode_raw_into(&self, out: &mut Vec<u8>);
}

impl<M: Message> EncodeInto for M {
    fn encode_raw_into(&self, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        // A Vec has room for any message after the reserve above; prost reports an error only
        // when the buffer is too small.
        let _ = self.encode(out);
    }
}

/// [`serialize_tensor`]'s bytes as a `Bytes`, written into a buffer from the default CPU
/// allocator so that the *content* starts 64-byte aligned (the header is placed just before a
/// 64-byte boundary; the `Bytes` starts at the header).
///
/// Why: [`crate::decode_tensor`] of these bytes then shares the content with no copy for every
/// dtype (in a plain `Vec` the content sits at an odd offset and wider types must be copied),
/// the copy in here is an aligned, streaming copy, and the allocator reuses freed large blocks
/// instead of page-faulting fresh memory for every call.
///
/// # Errors
/// As [`serialize_tensor`]; [`ProtoError::Tensor`] wrapping an allocation error when the output
/// buffer cannot be allocated.
pub fn encode_tensor(t: &Tensor) -> Result<Bytes, ProtoError> {
    encode_tensor_in(t, &cpu_allocator())
}

/// [`encode_tensor`] with the memory from `allocator` (the content is 64-byte aligned when the
/// allocator honours the 64-byte alignment it is asked for).
///
/// # Errors
/// As [`encode_tensor`], with the memory from `allocator`.
pub fn encode_tensor_in(t: &Tensor, allocator: &Arc<dyn Allocator>) -> Result<Bytes, ProtoError> {
    let Some(header) = serialize_tensor_header(t)? else {
        return Ok(Bytes::from(serialize_tensor(t)?));
    };
    let data = pod_data(t);
    if data.is_empty() {
        return Ok(Bytes::from(header));
    }
    let pad = (64 - header.len() % 64) % 64;
    let total = pad + header.len() + data.len();
    let buf = Buffer::new_with(allocator, total, &AllocationAttributes::default(), |w| {
        w.put_zeros(pad);
        w.put_slice(&header);
        w.put_slice(data);
    })?;
    Ok(bytes_from_buffer(buf).slice(pad..))
}

/// TensorFlow's `FillDescription`, as the proto: dtype, shape, and when the tensor's buffer
/// holds data, its allocation (requested bytes, allocator name, address; with a size-tracking
/// allocator also allocated bytes, allocation id and single-reference flag). The proto form of
/// [`Tensor::fill_description`].
///
/// ```
/// use tensorcast_proto::tensor_description;
/// use tensorcast_core::Tensor;
/// let d = tensor_description(&Tensor::vector(&[1.0f32, 2.0]));
/// assert_eq!(d.dtype, 1);
/// assert_eq!(d.allocation_description.unwrap().requested_bytes, 8);
/// ```
pub fn tensor_description(t: &Tensor) -> TensorDescription {
    let d = t.fill_description();
    TensorDescription {
        dtype: d.dtype.number(),
        shape: Some(shape_to_proto(&d.shape)),
        allocation_description: d.allocation_description.map(|a| AllocationDescription {
            requested_bytes: a.requested_bytes,
            allocated_bytes: a.allocated_bytes,
            allocator_name: a.allocator_name,
            allocation_id: a.allocation_id,
            has_single_reference: a.has_single_reference,
            ptr: a.ptr,
        }),
    }
}

/// The proto of a variant value: [`Variant::encode`], nested tensors in their typed-field form
/// (TensorFlow's `VariantTensorData::ToProto` uses `AsProtoField`).
pub fn variant_to_proto(v: &Variant) -> VariantTensorDataProto {
    let data = v.encode();
    VariantTensorDataProto {
        type_name: data.type_name,
        metadata: data.metadata,
        tensors: data.tensors.iter().map(as_proto_field).collect(),
    }
}
