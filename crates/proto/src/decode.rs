//! `TensorProto` -> [`Tensor`]: TensorFlow's `Tensor::FromProto`, rule by rule, plus the
//! `ParseTensor` op and zero-copy decoding from `bytes::Bytes`.

use std::mem::size_of;

use bytes::Bytes;
use prost::Message;
use std::sync::Arc;

use tensorcast_buffer::{Allocator, Buffer};
use tensorcast_core::{
    DataType, ResourceHandle, TString, Tensor, TensorShape, Variant, VariantTensorData,
};

use crate::handle::resource_handle_from_proto;
use crate::messages::{ResourceHandleProto, TensorProto, VariantTensorDataProto};
use crate::options::{DecodeOptions, MAX_NESTING_DEPTH};
use crate::shape::shape_from_proto;
use crate::ProtoError;

/// `FromProto` with the default [`DecodeOptions`]: the tensor a proto describes, or why it
/// describes none (TensorFlow's `FromProto` returns `false` in exactly these cases, plus the
/// fill limit of [`DecodeOptions`]).
///
/// The rules (TensorFlow's `tensor.cc`):
/// 1. The shape must be valid ([`crate::shape_from_proto`]) and the dtype one tensors can hold
///    (`DT_INVALID`: `Type not set`; refs and unknown numbers: `Unexpected type: ...`).
/// 2. No elements: a tensor without a buffer; content and typed fields are ignored.
/// 3. Non-empty `tensor_content` wins over the typed fields. Its size must be exactly
///    `num_elements * size` (`Input size was <actual> and expected <expected>`); `bool` bytes
///    must be 0 or 1; string, resource and variant content is the string-list encoding (one
///    varint32 length per element, then the bytes, adding up exactly).
/// 4. Otherwise the dtype's typed field: extra values are ignored; fewer values than elements
///    repeat the last one (resource and variant elements are filled with defaults instead);
///    none gives zeros. Narrower integers take the low bits of `int_val` (int4/int2 keep
///    their value bits: TensorFlow keeps the whole low byte, which holds the same value; see
///    [`DataType::sub_byte_mask`]); half and bfloat16 the low 16 bits of `half_val`;
///    complex values come in (re, im) pairs (an odd trailing float is ignored); float8/float4
///    come from the bytes of `float8_val`.
///
/// `tensor_content` is shared, not copied, when its address suits the dtype (see
/// [`DecodeOptions`]); nothing is returned on failure.
///
/// # Errors
/// [`ProtoError::InvalidShape`] and [`ProtoError::InvalidDtype`] (`Type not set`) for rule 1;
/// [`ProtoError::ContentSize`] (`Input size was 12 and expected 16`), [`ProtoError::InvalidBool`]
/// or [`ProtoError::InvalidContent`] for bad `tensor_content`; [`ProtoError::ResourceHandle`],
/// [`ProtoError::Variant`] or [`ProtoError::TooDeep`] for bad elements; [`ProtoError::FillLimit`]
/// or [`ProtoError::MemoryLimit`] over the limit; [`ProtoError::Tensor`] when allocation fails.
///
/// ```
/// use tensorcast_proto::{tensor_from_proto, DataType as ProtoDataType, TensorProto, shape_to_proto};
/// use tensorcast_core::{DataType, TensorShape};
///
/// // float [4] with two values: the last repeats (TensorFlow's compressed protos rely on it).
/// let mut p = TensorProto {
///     tensor_shape: Some(shape_to_proto(&TensorShape::new(&[4])?)),
///     float_val: vec![1.0, 2.0],
///     ..Default::default()
/// };
/// p.set_dtype(ProtoDataType::DtFloat);
/// let t = tensor_from_proto(&p)?;
/// assert_eq!(t.dtype(), DataType::FLOAT);
/// assert_eq!(t.as_slice::<f32>()?, [1.0, 2.0, 2.0, 2.0]);
///
/// // Content of the wrong size is refused with TensorFlow's message.
/// p.tensor_content = bytes::Bytes::from_static(&[0; 12]);
/// assert_eq!(tensor_from_proto(&p).unwrap_err().to_string(), "Input size was 12 and expected 16");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn tensor_from_proto(proto: &TensorProto) -> Result<Tensor, ProtoError> {
    tensor_from_proto_with(proto, &DecodeOptions::default())
}

/// [`tensor_from_proto`] with an allocator, fill limit and alignment policy.
///
/// # Errors
/// As [`tensor_from_proto`], with the options' limit and allocator.
pub fn tensor_from_proto_with(
    proto: &TensorProto,
    options: &DecodeOptions,
) -> Result<Tensor, ProtoError> {
    Decoder::new(options).tensor(proto)
}

/// Parses serialized `TensorProto` bytes (what `tf.io.serialize_tensor` writes) into a tensor,
/// with the default [`DecodeOptions`].
///
/// Decoding from `Bytes` does not copy `tensor_content`: the message's bytes fields are slices
/// of `bytes`, and the tensor's buffer is that slice when its address is a multiple of the
/// element type's alignment (always for 1-byte types; for wider types when the writer placed it
/// so, as [`crate::encode_tensor`] does). Otherwise the content is copied once into a 64-byte
/// aligned buffer. Either way [`Tensor::is_aligned`] reports TensorFlow's 64-byte alignment.
/// String elements are slices of `bytes` too.
///
/// # Errors
/// [`ProtoError::Wire`] when `bytes` are not a `TensorProto`; then as [`tensor_from_proto`].
///
/// ```
/// use tensorcast_proto::{decode_tensor, encode_tensor};
/// use tensorcast_core::Tensor;
///
/// let t = Tensor::vector(&[1.5f32, -2.0, 3.25]);
/// let wire = encode_tensor(&t)?; // content placed 64-byte aligned
/// let back = decode_tensor(wire.clone())?;
/// assert_eq!(back, t);
/// // Zero copy: the tensor's data lies inside the encoded bytes.
/// assert!(wire.as_ptr_range().contains(&back.data_ptr()));
/// assert!(back.is_aligned());
/// # Ok::<(), tensorcast_proto::ProtoError>(())
/// ```
pub fn decode_tensor(bytes: Bytes) -> Result<Tensor, ProtoError> {
    decode_tensor_with(bytes, &DecodeOptions::default())
}

/// [`decode_tensor`] with options.
///
/// The message structs the wire decodes into (one per string, resource or variant element,
/// nested protos included) are charged to the options' limit before they are built, so a small
/// input cannot make the decode build gigabytes of them.
///
/// # Errors
/// As [`decode_tensor`]; [`ProtoError::MemoryLimit`] when the message structs alone exceed the
/// options' limit.
pub fn decode_tensor_with(bytes: Bytes, options: &DecodeOptions) -> Result<Tensor, ProtoError> {
    let mut decoder = Decoder::new(options);
    decoder.take_bytes(
        "its string, resource and variant elements' message structs",
        crate::budget::message_bytes(&bytes),
    )?;
    let proto = TensorProto::decode(bytes)?;
    decoder.tensor(&proto)
}

/// TensorFlow's `ParseTensor` op (`tf.io.parse_tensor(bytes, out_type)`): [`decode_tensor`],
/// then the dtype must be `out_type` (`Type mismatch between parsed tensor (int32) and dtype
/// (float)`). As the op, it reports every failure of the decode as `InvalidArgument`
/// ([`ProtoError::CannotParse`]: `Cannot parse tensor from proto: ...`), a fill limit
/// included; the decode's own error is its `source()`.
///
/// # Errors
/// [`ProtoError::Wire`] when `bytes` are not a `TensorProto`; [`ProtoError::CannotParse`] wrapping
/// any other failure of [`decode_tensor`]; [`ProtoError::TypeMismatch`] when the dtype is not
/// `out_type`.
///
/// ```
/// use tensorcast_proto::{parse_tensor, serialize_tensor};
/// use tensorcast_core::{DataType, Tensor};
/// let wire = bytes::Bytes::from(serialize_tensor(&Tensor::vector(&[7i32]))?);
/// assert!(parse_tensor(wire.clone(), DataType::INT32).is_ok());
/// assert_eq!(
///     parse_tensor(wire, DataType::FLOAT).unwrap_err().to_string(),
///     "Type mismatch between parsed tensor (int32) and dtype (float)"
/// );
/// # Ok::<(), tensorcast_proto::ProtoError>(())
/// ```
pub fn parse_tensor(bytes: Bytes, out_type: DataType) -> Result<Tensor, ProtoError> {
    parse_tensor_with(bytes, out_type, &DecodeOptions::default())
}

/// [`parse_tensor`] with options.
///
/// # Errors
/// As [`parse_tensor`], with the options' limit and allocator.
pub fn parse_tensor_with(
    bytes: Bytes,
    out_type: DataType,
    options: &DecodeOptions,
) -> Result<Tensor, ProtoError> {
    let t = decode_tensor_with(bytes, options).map_err(|e| match e {
        // Bytes that are not a TensorProto: TensorFlow's own message for that.
        e @ ProtoError::Wire(_) => e,
        e => ProtoError::CannotParse(Box::new(e)),
    })?;
    if t.dtype() != out_type {
        return Err(ProtoError::TypeMismatch {
            actual: t.dtype(),
            expected: out_type,
        });
    }
    Ok(t)
}

/// One decode: the options, what is left of the fill budget, and the variant nesting depth.
pub(crate) struct Decoder<'a> {
    options: &'a DecodeOptions,
    fill_left: usize,
    depth: usize,
}

/// `align_of` the Rust type holding one element of a dtype (the dtype table's column).
fn element_align(dtype: DataType) -> usize {
    dtype.info().map_or(1, |row| row.align)
}

fn check_dtype(dtype: DataType) -> Result<(), ProtoError> {
    if dtype == DataType::INVALID {
        return Err(ProtoError::InvalidDtype("Type not set".to_string()));
    }
    if !dtype.is_supported() {
        return Err(ProtoError::InvalidDtype(format!(
            "Unexpected type: {}",
            dtype
                .proto_name()
                .unwrap_or_else(|| dtype.number().to_string())
        )));
    }
    Ok(())
}

/// Reads a varint32 as TensorFlow's `GetVarint32` does (at most 5 bytes; bits past 32 are
/// dropped). Returns the value and the bytes used.
fn read_varint32(b: &[u8]) -> Option<(u32, usize)> {
    let mut v: u64 = 0;
    for i in 0..5 {
        let byte = *b.get(i)?;
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some(((v & 0xffff_ffff) as u32, i + 1));
        }
    }
    None
}

/// Splits the string-list encoding (`n` varint32 lengths, then the bytes, adding up exactly)
/// into `n` zero-copy slices of `content`.
pub(crate) fn decode_string_list(content: &Bytes, n: usize) -> Result<Vec<Bytes>, ProtoError> {
    if n > content.len() {
        return Err(ProtoError::InvalidContent(format!(
            "tensor_content of {} bytes cannot hold the lengths of {n} elements",
            content.len()
        )));
    }
    let mut sizes = Vec::with_capacity(n);
    let mut pos = 0usize;
    for i in 0..n {
        let (len, used) = read_varint32(&content[pos..]).ok_or_else(|| {
            ProtoError::InvalidContent(format!(
                "tensor_content: the length of element {i} is not a valid varint32"
            ))
        })?;
        sizes.push(len as usize);
        pos += used;
    }
    let total: u64 = sizes.iter().map(|&s| s as u64).sum();
    let rest = (content.len() - pos) as u64;
    if total != rest {
        return Err(ProtoError::InvalidContent(format!(
            "tensor_content: the {n} element lengths add up to {total} bytes but {rest} bytes \
             follow them"
        )));
    }
    let mut out = Vec::with_capacity(n);
    for s in sizes {
        out.push(content.slice(pos..pos + s));
        pos += s;
    }
    Ok(out)
}

/// Builds an object tensor from the first `k` converted values, filling the rest with the last
/// value (`repeat_last`) or the default, its elements in a block from `allocator`.
fn object_tensor<S, T>(
    allocator: &Arc<dyn Allocator>,
    shape: &TensorShape,
    n: usize,
    vals: &[S],
    repeat_last: bool,
    mut conv: impl FnMut(&S) -> Result<T, ProtoError>,
) -> Result<Tensor, ProtoError>
where
    T: tensorcast_core::Element,
{
    let k = vals.len().min(n);
    let mut last: Option<T> = None;
    Tensor::from_objects_in(allocator, shape, |i| {
        if i < k {
            let v = conv(&vals[i])?;
            if repeat_last && i + 1 == k {
                last = Some(v.clone());
            }
            return Ok(v);
        }
        Ok(last.clone().unwrap_or_default())
    })
}

impl<'a> Decoder<'a> {
    pub(crate) fn new(options: &'a DecodeOptions) -> Self {
        Self {
            options,
            fill_left: options.max_fill_bytes(),
            depth: 0,
        }
    }

    /// Charges the fill of `n - carried` elements of `elem_bytes` each to the budget.
    fn take_fill(
        &mut self,
        dtype: DataType,
        n: usize,
        carried: usize,
        elem_bytes: usize,
    ) -> Result<(), ProtoError> {
        let fill = (n - carried.min(n)) as u128 * elem_bytes as u128;
        if fill > self.fill_left as u128 {
            return Err(ProtoError::FillLimit {
                dtype,
                elements: n as u64,
                carried: carried as u64,
                fill_bytes: fill,
                limit_bytes: self.fill_left,
            });
        }
        self.fill_left -= fill as usize;
        Ok(())
    }

    /// Charges `bytes` of memory for `what` to the budget.
    fn take_bytes(&mut self, what: &str, bytes: u128) -> Result<(), ProtoError> {
        if bytes > self.fill_left as u128 {
            return Err(ProtoError::MemoryLimit {
                what: what.to_string(),
                bytes,
                limit_bytes: self.fill_left,
            });
        }
        self.fill_left -= bytes as usize;
        Ok(())
    }

    /// Charges `n` object elements of `elem_bytes` each (string, resource, variant: Rust
    /// objects built from the proto, not justified by its size) to the budget.
    fn take_objects(
        &mut self,
        dtype: DataType,
        n: usize,
        elem_bytes: usize,
    ) -> Result<(), ProtoError> {
        self.take_bytes(
            &format!("{n} {dtype} elements"),
            n as u128 * elem_bytes as u128,
        )
    }

    /// An object tensor (`string`, `resource`, `variant`) of `n` elements from typed values,
    /// charged to the budget: the first `min(len, n)` converted by `conv` (which may decode
    /// with this decoder), then the last one repeated if `repeat_last`, default values
    /// otherwise.
    fn objects<S, T: tensorcast_core::Element>(
        &mut self,
        dtype: DataType,
        shape: &TensorShape,
        n: usize,
        vals: &[S],
        repeat_last: bool,
        mut conv: impl FnMut(&mut Self, &S) -> Result<T, ProtoError>,
    ) -> Result<Tensor, ProtoError> {
        let k = vals.len().min(n);
        self.take_fill(dtype, n, k, size_of::<T>())?;
        self.take_objects(dtype, k, size_of::<T>())?;
        let options = self.options;
        object_tensor(options.allocator(), shape, n, vals, repeat_last, |v| {
            conv(self, v)
        })
    }

    /// The `n` parts of an object tensor's string-list `content`, charged to the budget with
    /// the `T` elements they become.
    fn content_parts<T>(
        &mut self,
        dtype: DataType,
        content: &Bytes,
        n: usize,
    ) -> Result<Vec<Bytes>, ProtoError> {
        if n <= content.len() {
            // (More elements than bytes is refused by the split, cheaply.)
            self.take_objects(dtype, n, size_of::<Bytes>() + size_of::<T>())?;
        }
        decode_string_list(content, n)
    }

    pub(crate) fn tensor(&mut self, proto: &TensorProto) -> Result<Tensor, ProtoError> {
        let shape = shape_from_proto(proto.tensor_shape.as_ref())?;
        let dtype = DataType::from_number(proto.dtype);
        check_dtype(dtype)?;
        let n = shape.num_elements_usize();
        if n == 0 {
            return Ok(Tensor::unallocated(dtype, &shape));
        }
        if proto.tensor_content.is_empty() {
            self.typed_fields(proto, dtype, &shape, n)
        } else {
            self.content(&proto.tensor_content, dtype, &shape, n)
        }
    }

    fn content(
        &mut self,
        content: &Bytes,
        dtype: DataType,
        shape: &TensorShape,
        n: usize,
    ) -> Result<Tensor, ProtoError> {
        let options = self.options;
        match dtype {
            DataType::STRING => {
                let parts = self.content_parts::<TString>(dtype, content, n)?;
                let mut parts = parts.into_iter();
                Tensor::from_objects_in(self.options.allocator(), shape, |_| {
                    Ok::<_, ProtoError>(parts.next().map(TString::from).unwrap_or_default())
                })
            }
            DataType::RESOURCE => {
                let parts = self.content_parts::<ResourceHandle>(dtype, content, n)?;
                object_tensor::<_, ResourceHandle>(
                    options.allocator(),
                    shape,
                    n,
                    &parts,
                    false,
                    |b| {
                        let p = ResourceHandleProto::decode(b.clone()).map_err(|e| {
                            ProtoError::ResourceHandle {
                                proto: String::new(),
                                status: e.to_string(),
                            }
                        })?;
                        resource_handle_from_proto(&p)
                    },
                )
            }
            DataType::VARIANT => {
                let parts = self.content_parts::<Variant>(dtype, content, n)?;
                object_tensor::<_, Variant>(options.allocator(), shape, n, &parts, false, |b| {
                    let p = VariantTensorDataProto::decode(b.clone()).map_err(|e| {
                        ProtoError::Variant {
                            type_name: String::new(),
                            reason: e.to_string(),
                        }
                    })?;
                    self.variant(&p)
                })
            }
            _ => {
                let expected = n as u128 * dtype.size() as u128;
                if content.len() as u128 != expected {
                    return Err(ProtoError::ContentSize {
                        dtype,
                        actual: content.len(),
                        expected,
                    });
                }
                if dtype == DataType::BOOL {
                    if let Some(index) = content.iter().position(|&b| b > 1) {
                        return Err(ProtoError::InvalidBool {
                            index,
                            byte: content[index],
                        });
                    }
                }
                let align = if self.options.require_aligned() {
                    64
                } else {
                    element_align(dtype)
                };
                if let Some(mask) = dtype.sub_byte_mask() {
                    if content.iter().any(|&b| b & !mask != 0) {
                        // Stray upper bits: a copy, which the tensor's constructor stores in
                        // canonical form, rather than sharing bytes no constructor produces.
                        let copy = Buffer::copy_from_slice_in(self.options.allocator(), content)?;
                        return Ok(Tensor::from_buffer(dtype, shape, copy)?);
                    }
                }
                let buffer = if (content.as_ptr() as usize).is_multiple_of(align) {
                    Buffer::from_bytes(content.clone())
                } else {
                    Buffer::copy_from_slice_in(self.options.allocator(), content)?
                };
                Ok(Tensor::from_buffer(dtype, shape, buffer)?)
            }
        }
    }

    /// A memcpy-able tensor from typed values: the first `min(len, n)` converted, the last
    /// repeated, zeros when there are none.
    fn pod<S: Copy, T: bytemuck::NoUninit>(
        &mut self,
        dtype: DataType,
        shape: &TensorShape,
        n: usize,
        vals: &[S],
        conv: impl FnMut(S) -> T,
    ) -> Result<Tensor, ProtoError> {
        let size = std::mem::size_of::<T>();
        debug_assert_eq!(size, dtype.size());
        let k = vals.len().min(n);
        self.take_fill(dtype, n, k, size)?;
        Ok(Tensor::from_writer(
            self.options.allocator(),
            dtype,
            shape,
            |w| {
                if k > 0 {
                    w.put_map(&vals[..k], conv);
                    w.repeat_last(size, n - k);
                }
                // Nothing carried: the writer zeroes what is left unwritten.
            },
        )?)
    }

    fn typed_fields(
        &mut self,
        p: &TensorProto,
        dtype: DataType,
        shape: &TensorShape,
        n: usize,
    ) -> Result<Tensor, ProtoError> {
        match dtype {
            DataType::FLOAT => self.pod(dtype, shape, n, &p.float_val, |v| v),
            DataType::DOUBLE => self.pod(dtype, shape, n, &p.double_val, |v| v),
            DataType::INT32 | DataType::QINT32 => self.pod(dtype, shape, n, &p.int_val, |v| v),
            // Narrowing keeps the low bits (C++ conversion); int4/int2 keep the whole byte.
            DataType::UINT8
            | DataType::QUINT8
            | DataType::INT8
            | DataType::QINT8
            | DataType::INT4
            | DataType::UINT4
            | DataType::INT2
            | DataType::UINT2 => {
                // TensorFlow keeps the whole low byte of each `int_val`; tensorcast keeps the
                // value's bits only (the canonical byte, `DataType::sub_byte_mask`): the same
                // values, and equal to the tensor the values were encoded from.
                let mask = dtype.sub_byte_mask().unwrap_or(0xff);
                self.pod(dtype, shape, n, &p.int_val, |v| v as u8 & mask)
            }
            DataType::INT16 | DataType::QINT16 | DataType::UINT16 | DataType::QUINT16 => {
                self.pod(dtype, shape, n, &p.int_val, |v| v as u16)
            }
            DataType::INT64 => self.pod(dtype, shape, n, &p.int64_val, |v| v),
            DataType::UINT32 => self.pod(dtype, shape, n, &p.uint32_val, |v| v),
            DataType::UINT64 => self.pod(dtype, shape, n, &p.uint64_val, |v| v),
            DataType::BOOL => self.pod(dtype, shape, n, &p.bool_val, u8::from),
            DataType::HALF => self.pod(dtype, shape, n, &p.half_val, |v| v as u16),
            DataType::BFLOAT16 => {
                let vals = if p.half_val.is_empty() && self.options.bfloat16_from_int_val() {
                    &p.int_val
                } else {
                    &p.half_val
                };
                self.pod(dtype, shape, n, vals, |v| v as u16)
            }
            DataType::COMPLEX64 => {
                let even = &p.scomplex_val[..p.scomplex_val.len() / 2 * 2];
                let pairs: &[[f32; 2]] = bytemuck::try_cast_slice(even)
                    .map_err(|e| ProtoError::InvalidContent(format!("scomplex_val: {e:?}")))?;
                self.pod(dtype, shape, n, pairs, |v| v)
            }
            DataType::COMPLEX128 => {
                let even = &p.dcomplex_val[..p.dcomplex_val.len() / 2 * 2];
                let pairs: &[[f64; 2]] = bytemuck::try_cast_slice(even)
                    .map_err(|e| ProtoError::InvalidContent(format!("dcomplex_val: {e:?}")))?;
                self.pod(dtype, shape, n, pairs, |v| v)
            }
            DataType::FLOAT8_E5M2
            | DataType::FLOAT8_E4M3FN
            | DataType::FLOAT8_E4M3FNUZ
            | DataType::FLOAT8_E4M3B11FNUZ
            | DataType::FLOAT8_E5M2FNUZ
            | DataType::FLOAT4_E2M1FN => self.pod(dtype, shape, n, &p.float8_val, |v| v),
            // Strings repeat the last value given, as TensorFlow's FromProto does; the other
            // object types fill with empty values.
            DataType::STRING => {
                let conv = |_: &mut Self, b: &Bytes| Ok(TString::from(b.clone()));
                self.objects(dtype, shape, n, &p.string_val, true, conv)
            }
            DataType::RESOURCE => {
                let conv = |_: &mut Self, h: &_| resource_handle_from_proto(h);
                self.objects(dtype, shape, n, &p.resource_handle_val, false, conv)
            }
            DataType::VARIANT => {
                self.objects(dtype, shape, n, &p.variant_val, false, Self::variant)
            }
            // check_dtype admitted only supported dtypes, all of which are listed above.
            other => Err(ProtoError::InvalidDtype(format!(
                "Unexpected type: {}",
                other
                    .proto_name()
                    .unwrap_or_else(|| other.number().to_string())
            ))),
        }
    }

    /// A variant value from its proto; nested tensors are decoded with this decoder's budget.
    pub(crate) fn variant(&mut self, p: &VariantTensorDataProto) -> Result<Variant, ProtoError> {
        if self.depth >= MAX_NESTING_DEPTH {
            return Err(ProtoError::TooDeep(MAX_NESTING_DEPTH));
        }
        self.depth += 1;
        let tensors: Result<Vec<Tensor>, ProtoError> =
            p.tensors.iter().map(|t| self.tensor(t)).collect();
        self.depth -= 1;
        let tensors = tensors.map_err(|e| match e {
            // Keep limits and allocation failures as they are (their codes matter).
            e @ (ProtoError::FillLimit { .. }
            | ProtoError::MemoryLimit { .. }
            | ProtoError::TooDeep(_)
            | ProtoError::Variant { .. }
            | ProtoError::Tensor(_)) => e,
            e => ProtoError::Variant {
                type_name: p.type_name.clone(),
                reason: e.to_string(),
            },
        })?;
        Ok(Variant::decode(VariantTensorData {
            type_name: p.type_name.clone(),
            metadata: p.metadata.clone(),
            tensors,
        }))
    }
}

/// A variant value from its proto ([`Variant::decode`] of the decoded `VariantTensorData`),
/// with the default [`DecodeOptions`] for its nested tensors. Any type name is accepted: values
/// tensorcast does not know natively stay in their encoded form.
///
/// # Errors
/// [`ProtoError::Variant`] when a nested tensor does not decode; [`ProtoError::TooDeep`] when
/// variants nest too deeply; [`ProtoError::FillLimit`], [`ProtoError::MemoryLimit`] and
/// [`ProtoError::Tensor`] as [`tensor_from_proto`].
pub fn variant_from_proto(p: &VariantTensorDataProto) -> Result<Variant, ProtoError> {
    variant_from_proto_with(p, &DecodeOptions::default())
}

/// [`variant_from_proto`] with options for the nested tensors.
///
/// # Errors
/// As [`variant_from_proto`], with the options' limit and allocator.
pub fn variant_from_proto_with(
    p: &VariantTensorDataProto,
    options: &DecodeOptions,
) -> Result<Variant, ProtoError> {
    Decoder::new(options).variant(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_round_trip() {
        let v = Variant::from(Tensor::from(42.0f32));
        let back = variant_from_proto(&crate::variant_to_proto(&v)).unwrap();
        assert_eq!(back, v);
        let empty = crate::variant_to_proto(&Variant::Empty);
        assert_eq!(variant_from_proto(&empty).unwrap(), Variant::Empty);
    }

    #[test]
    fn varint32_reads_like_tensorflow() {
        assert_eq!(read_varint32(&[0x05]), Some((5, 1)));
        assert_eq!(read_varint32(&[0x80, 0x01]), Some((128, 2)));
        assert_eq!(read_varint32(&[0x80, 0x80]), None);
        assert_eq!(
            read_varint32(&[0xff, 0xff, 0xff, 0xff, 0x0f]),
            Some((u32::MAX, 5))
        );
        assert_eq!(read_varint32(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), None);
    }

    #[test]
    fn string_list_needs_exact_lengths() {
        let ok = Bytes::from_static(b"\x01\x02abc");
        let parts = decode_string_list(&ok, 2).unwrap();
        assert_eq!(parts, [Bytes::from_static(b"a"), Bytes::from_static(b"bc")]);
        assert!(decode_string_list(&Bytes::from_static(b"\x01\x02abcd"), 2).is_err());
        assert!(decode_string_list(&Bytes::from_static(b"\x01\x02ab"), 2).is_err());
        assert!(decode_string_list(&Bytes::from_static(b"\x01"), 2).is_err());
    }
}
