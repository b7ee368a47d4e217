//! TensorFlow's tensor protos (`tensorflow/core/framework/*.proto`, proto3), written by hand as
//! `prost` derives.
//!
//! Field numbers, types and packing follow TensorFlow's `.proto` files exactly. Fields are declared in ascending tag order: prost encodes fields in
//! declaration order and TensorFlow's C++ serializer in tag order, so this makes our encoding
//! byte-identical to TensorFlow's. (Note `TensorProto.half_val` = 13: in `tensor.proto` it is written
//! right after `tensor_content` = 4, but it is *serialized* between 12 and 14, and so declared here.)
//!
//! Every `bytes` field is a [`bytes::Bytes`]: decoding from a `Bytes` input slices the input instead
//! of copying, which is what makes zero-copy tensor decode possible.
//!
//! Enum-typed fields are plain `i32` (`#[prost(enumeration = ...)]`) so that values TensorFlow may add
//! later survive a decode/encode round trip; prost generates typed accessors (`dtype()`,
//! `set_dtype()`) next to them.

use bytes::Bytes;

/// `tensorflow.DataType` (`types.proto`): the element type of a tensor.
///
/// The `_REF` values (base + 100) are only for TF1's obsolete reference variables. The wire form is
/// an `int32` varint; fields of this type are stored as `i32` so unknown values are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum DataType {
    /// `DT_INVALID`: not a valid type; the default value of every dtype field.
    DtInvalid = 0,
    /// `DT_FLOAT`: 32-bit IEEE float.
    DtFloat = 1,
    /// `DT_DOUBLE`: 64-bit IEEE float.
    DtDouble = 2,
    /// `DT_INT32`: signed 32-bit integer.
    DtInt32 = 3,
    /// `DT_UINT8`: unsigned 8-bit integer.
    DtUint8 = 4,
    /// `DT_INT16`: signed 16-bit integer.
    DtInt16 = 5,
    /// `DT_INT8`: signed 8-bit integer.
    DtInt8 = 6,
    /// `DT_STRING`: byte string.
    DtString = 7,
    /// `DT_COMPLEX64`: single-precision complex.
    DtComplex64 = 8,
    /// `DT_INT64`: signed 64-bit integer.
    DtInt64 = 9,
    /// `DT_BOOL`: boolean, one byte.
    DtBool = 10,
    /// `DT_QINT8`: quantized int8.
    DtQint8 = 11,
    /// `DT_QUINT8`: quantized uint8.
    DtQuint8 = 12,
    /// `DT_QINT32`: quantized int32.
    DtQint32 = 13,
    /// `DT_BFLOAT16`: float32 truncated to 16 bits.
    DtBfloat16 = 14,
    /// `DT_QINT16`: quantized int16.
    DtQint16 = 15,
    /// `DT_QUINT16`: quantized uint16.
    DtQuint16 = 16,
    /// `DT_UINT16`: unsigned 16-bit integer.
    DtUint16 = 17,
    /// `DT_COMPLEX128`: double-precision complex.
    DtComplex128 = 18,
    /// `DT_HALF`: IEEE half-precision float.
    DtHalf = 19,
    /// `DT_RESOURCE`: a resource handle.
    DtResource = 20,
    /// `DT_VARIANT`: an arbitrary C++ data type.
    DtVariant = 21,
    /// `DT_UINT32`: unsigned 32-bit integer.
    DtUint32 = 22,
    /// `DT_UINT64`: unsigned 64-bit integer.
    DtUint64 = 23,
    /// `DT_FLOAT8_E5M2`: 5 exponent bits, 2 mantissa bits.
    DtFloat8E5m2 = 24,
    /// `DT_FLOAT8_E4M3FN`: 4 exponent bits, 3 mantissa bits, finite-only, with 2 NaNs.
    DtFloat8E4m3fn = 25,
    /// `DT_FLOAT8_E4M3FNUZ`: 4 exponent bits, 3 mantissa bits, finite-only, with NaN.
    DtFloat8E4m3fnuz = 26,
    /// `DT_FLOAT8_E4M3B11FNUZ`: 4 exponent bits, 3 mantissa bits, bias 11, finite-only, with NaNs.
    DtFloat8E4m3b11fnuz = 27,
    /// `DT_FLOAT8_E5M2FNUZ`: 5 exponent bits, 2 mantissa bits, finite-only, with NaN.
    DtFloat8E5m2fnuz = 28,
    /// `DT_INT4`: signed 4-bit integer, one element per byte.
    DtInt4 = 29,
    /// `DT_UINT4`: unsigned 4-bit integer, one element per byte.
    DtUint4 = 30,
    /// `DT_INT2`: signed 2-bit integer, one element per byte.
    DtInt2 = 31,
    /// `DT_UINT2`: unsigned 2-bit integer, one element per byte.
    DtUint2 = 32,
    /// `DT_FLOAT4_E2M1FN`: 2 exponent bits, 1 mantissa bit, finite-only.
    DtFloat4E2m1fn = 33,
    /// `DT_FLOAT_REF`.
    DtFloatRef = 101,
    /// `DT_DOUBLE_REF`.
    DtDoubleRef = 102,
    /// `DT_INT32_REF`.
    DtInt32Ref = 103,
    /// `DT_UINT8_REF`.
    DtUint8Ref = 104,
    /// `DT_INT16_REF`.
    DtInt16Ref = 105,
    /// `DT_INT8_REF`.
    DtInt8Ref = 106,
    /// `DT_STRING_REF`.
    DtStringRef = 107,
    /// `DT_COMPLEX64_REF`.
    DtComplex64Ref = 108,
    /// `DT_INT64_REF`.
    DtInt64Ref = 109,
    /// `DT_BOOL_REF`.
    DtBoolRef = 110,
    /// `DT_QINT8_REF`.
    DtQint8Ref = 111,
    /// `DT_QUINT8_REF`.
    DtQuint8Ref = 112,
    /// `DT_QINT32_REF`.
    DtQint32Ref = 113,
    /// `DT_BFLOAT16_REF`.
    DtBfloat16Ref = 114,
    /// `DT_QINT16_REF`.
    DtQint16Ref = 115,
    /// `DT_QUINT16_REF`.
    DtQuint16Ref = 116,
    /// `DT_UINT16_REF`.
    DtUint16Ref = 117,
    /// `DT_COMPLEX128_REF`.
    DtComplex128Ref = 118,
    /// `DT_HALF_REF`.
    DtHalfRef = 119,
    /// `DT_RESOURCE_REF`.
    DtResourceRef = 120,
    /// `DT_VARIANT_REF`.
    DtVariantRef = 121,
    /// `DT_UINT32_REF`.
    DtUint32Ref = 122,
    /// `DT_UINT64_REF`.
    DtUint64Ref = 123,
    /// `DT_FLOAT8_E5M2_REF`.
    DtFloat8E5m2Ref = 124,
    /// `DT_FLOAT8_E4M3FN_REF`.
    DtFloat8E4m3fnRef = 125,
    /// `DT_FLOAT8_E4M3FNUZ_REF`.
    DtFloat8E4m3fnuzRef = 126,
    /// `DT_FLOAT8_E4M3B11FNUZ_REF`.
    DtFloat8E4m3b11fnuzRef = 127,
    /// `DT_FLOAT8_E5M2FNUZ_REF`.
    DtFloat8E5m2fnuzRef = 128,
    /// `DT_INT4_REF`.
    DtInt4Ref = 129,
    /// `DT_UINT4_REF`.
    DtUint4Ref = 130,
    /// `DT_INT2_REF`.
    DtInt2Ref = 131,
    /// `DT_UINT2_REF`.
    DtUint2Ref = 132,
    /// `DT_FLOAT4_E2M1FN_REF`.
    DtFloat4E2m1fnRef = 133,
}

/// One table of `(variant, proto name)`; the single source for [`DataType::as_str_name`] and
/// [`DataType::from_str_name`].
const DATA_TYPE_NAMES: [(DataType, &str); 67] = [
    (DataType::DtInvalid, "DT_INVALID"),
    (DataType::DtFloat, "DT_FLOAT"),
    (DataType::DtDouble, "DT_DOUBLE"),
    (DataType::DtInt32, "DT_INT32"),
    (DataType::DtUint8, "DT_UINT8"),
    (DataType::DtInt16, "DT_INT16"),
    (DataType::DtInt8, "DT_INT8"),
    (DataType::DtString, "DT_STRING"),
    (DataType::DtComplex64, "DT_COMPLEX64"),
    (DataType::DtInt64, "DT_INT64"),
    (DataType::DtBool, "DT_BOOL"),
    (DataType::DtQint8, "DT_QINT8"),
    (DataType::DtQuint8, "DT_QUINT8"),
    (DataType::DtQint32, "DT_QINT32"),
    (DataType::DtBfloat16, "DT_BFLOAT16"),
    (DataType::DtQint16, "DT_QINT16"),
    (DataType::DtQuint16, "DT_QUINT16"),
    (DataType::DtUint16, "DT_UINT16"),
    (DataType::DtComplex128, "DT_COMPLEX128"),
    (DataType::DtHalf, "DT_HALF"),
    (DataType::DtResource, "DT_RESOURCE"),
    (DataType::DtVariant, "DT_VARIANT"),
    (DataType::DtUint32, "DT_UINT32"),
    (DataType::DtUint64, "DT_UINT64"),
    (DataType::DtFloat8E5m2, "DT_FLOAT8_E5M2"),
    (DataType::DtFloat8E4m3fn, "DT_FLOAT8_E4M3FN"),
    (DataType::DtFloat8E4m3fnuz, "DT_FLOAT8_E4M3FNUZ"),
    (DataType::DtFloat8E4m3b11fnuz, "DT_FLOAT8_E4M3B11FNUZ"),
    (DataType::DtFloat8E5m2fnuz, "DT_FLOAT8_E5M2FNUZ"),
    (DataType::DtInt4, "DT_INT4"),
    (DataType::DtUint4, "DT_UINT4"),
    (DataType::DtInt2, "DT_INT2"),
    (DataType::DtUint2, "DT_UINT2"),
    (DataType::DtFloat4E2m1fn, "DT_FLOAT4_E2M1FN"),
    (DataType::DtFloatRef, "DT_FLOAT_REF"),
    (DataType::DtDoubleRef, "DT_DOUBLE_REF"),
    (DataType::DtInt32Ref, "DT_INT32_REF"),
    (DataType::DtUint8Ref, "DT_UINT8_REF"),
    (DataType::DtInt16Ref, "DT_INT16_REF"),
    (DataType::DtInt8Ref, "DT_INT8_REF"),
    (DataType::DtStringRef, "DT_STRING_REF"),
    (DataType::DtComplex64Ref, "DT_COMPLEX64_REF"),
    (DataType::DtInt64Ref, "DT_INT64_REF"),
    (DataType::DtBoolRef, "DT_BOOL_REF"),
    (DataType::DtQint8Ref, "DT_QINT8_REF"),
    (DataType::DtQuint8Ref, "DT_QUINT8_REF"),
    (DataType::DtQint32Ref, "DT_QINT32_REF"),
    (DataType::DtBfloat16Ref, "DT_BFLOAT16_REF"),
    (DataType::DtQint16Ref, "DT_QINT16_REF"),
    (DataType::DtQuint16Ref, "DT_QUINT16_REF"),
    (DataType::DtUint16Ref, "DT_UINT16_REF"),
    (DataType::DtComplex128Ref, "DT_COMPLEX128_REF"),
    (DataType::DtHalfRef, "DT_HALF_REF"),
    (DataType::DtResourceRef, "DT_RESOURCE_REF"),
    (DataType::DtVariantRef, "DT_VARIANT_REF"),
    (DataType::DtUint32Ref, "DT_UINT32_REF"),
    (DataType::DtUint64Ref, "DT_UINT64_REF"),
    (DataType::DtFloat8E5m2Ref, "DT_FLOAT8_E5M2_REF"),
    (DataType::DtFloat8E4m3fnRef, "DT_FLOAT8_E4M3FN_REF"),
    (DataType::DtFloat8E4m3fnuzRef, "DT_FLOAT8_E4M3FNUZ_REF"),
    (
        DataType::DtFloat8E4m3b11fnuzRef,
        "DT_FLOAT8_E4M3B11FNUZ_REF",
    ),
    (DataType::DtFloat8E5m2fnuzRef, "DT_FLOAT8_E5M2FNUZ_REF"),
    (DataType::DtInt4Ref, "DT_INT4_REF"),
    (DataType::DtUint4Ref, "DT_UINT4_REF"),
    (DataType::DtInt2Ref, "DT_INT2_REF"),
    (DataType::DtUint2Ref, "DT_UINT2_REF"),
    (DataType::DtFloat4E2m1fnRef, "DT_FLOAT4_E2M1FN_REF"),
];

impl DataType {
    /// Every value of the enum, in wire-number order (0..=33, then 101..=133).
    pub const ALL: [DataType; 67] = {
        let mut all = [DataType::DtInvalid; 67];
        let mut i = 0;
        while i < 67 {
            all[i] = DATA_TYPE_NAMES[i].0;
            i += 1;
        }
        all
    };

    /// The value's name as written in `types.proto` (`DT_FLOAT`, `DT_FLOAT_REF`, ...): the
    /// protobuf text-format spelling, not TensorFlow's `DataTypeString` (`float`).
    pub fn as_str_name(self) -> &'static str {
        DATA_TYPE_NAMES
            .iter()
            .find(|(dt, _)| *dt == self)
            .map(|(_, name)| *name)
            .unwrap_or("DT_INVALID")
    }

    /// The value with this `types.proto` name (`"DT_FLOAT"`), if there is one.
    pub fn from_str_name(name: &str) -> Option<DataType> {
        DATA_TYPE_NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(dt, _)| *dt)
    }
}

/// `tensorflow.TensorShapeProto` (`tensor_shape.proto`): dimensions of a tensor.
///
/// There is no field 1. `dim[0]` is the outermost (row-major) dimension.
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct TensorShapeProto {
    /// Field 2: the dimensions, outermost first. A size of -1 means "unknown".
    #[prost(message, repeated, tag = "2")]
    pub dim: Vec<tensor_shape_proto::Dim>,
    /// Field 3: true if the number of dimensions is unknown; then `dim` must be empty.
    #[prost(bool, tag = "3")]
    pub unknown_rank: bool,
}

/// Messages nested in [`TensorShapeProto`].
pub mod tensor_shape_proto {
    /// `TensorShapeProto.Dim`: one dimension.
    #[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
    pub struct Dim {
        /// Field 1: the size; -1 for an unknown dimension.
        #[prost(int64, tag = "1")]
        pub size: i64,
        /// Field 2: optional name of the dimension.
        #[prost(string, tag = "2")]
        pub name: String,
    }
}

/// `tensorflow.TensorProto` (`tensor.proto`): a serialized tensor.
///
/// Exactly one representation carries the values: `tensor_content` (raw little-endian bytes, or
/// the string-list encoding for string/resource/variant), or the typed `*_val` field for the dtype.
/// Repeated scalar fields are packed on encode; unpacked input is accepted on decode.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorProto {
    /// Field 1: the element type, a [`DataType`] number (unknown numbers are kept).
    #[prost(enumeration = "DataType", tag = "1")]
    pub dtype: i32,
    /// Field 2: the shape. TensorFlow always writes it, even for scalars (as an empty message).
    #[prost(message, optional, tag = "2")]
    pub tensor_shape: Option<TensorShapeProto>,
    /// Field 3: format version; ignored by TensorFlow's `FromProto`.
    #[prost(int32, tag = "3")]
    pub version_number: i32,
    /// Field 4: raw content; takes precedence over the typed fields when non-empty.
    #[prost(bytes = "bytes", tag = "4")]
    pub tensor_content: Bytes,
    /// Field 5: `DT_FLOAT` values.
    #[prost(float, repeated, packed = "true", tag = "5")]
    pub float_val: Vec<f32>,
    /// Field 6: `DT_DOUBLE` values.
    #[prost(double, repeated, packed = "true", tag = "6")]
    pub double_val: Vec<f64>,
    /// Field 7: int32, int16, uint16, int8, uint8, quantized, int4/uint4/int2/uint2 values.
    #[prost(int32, repeated, packed = "true", tag = "7")]
    pub int_val: Vec<i32>,
    /// Field 8: `DT_STRING` values (repeated bytes, never packed).
    #[prost(bytes = "bytes", repeated, tag = "8")]
    pub string_val: Vec<Bytes>,
    /// Field 9: `DT_COMPLEX64` values, (real, imaginary) interleaved.
    #[prost(float, repeated, packed = "true", tag = "9")]
    pub scomplex_val: Vec<f32>,
    /// Field 10: `DT_INT64` values.
    #[prost(int64, repeated, packed = "true", tag = "10")]
    pub int64_val: Vec<i64>,
    /// Field 11: `DT_BOOL` values.
    #[prost(bool, repeated, packed = "true", tag = "11")]
    pub bool_val: Vec<bool>,
    /// Field 12: `DT_COMPLEX128` values, (real, imaginary) interleaved.
    #[prost(double, repeated, packed = "true", tag = "12")]
    pub dcomplex_val: Vec<f64>,
    /// Field 13: `DT_HALF` and `DT_BFLOAT16` values as their 16-bit patterns (0..=65535).
    #[prost(int32, repeated, packed = "true", tag = "13")]
    pub half_val: Vec<i32>,
    /// Field 14: `DT_RESOURCE` values.
    #[prost(message, repeated, tag = "14")]
    pub resource_handle_val: Vec<ResourceHandleProto>,
    /// Field 15: `DT_VARIANT` values.
    #[prost(message, repeated, tag = "15")]
    pub variant_val: Vec<VariantTensorDataProto>,
    /// Field 16: `DT_UINT32` values.
    #[prost(uint32, repeated, packed = "true", tag = "16")]
    pub uint32_val: Vec<u32>,
    /// Field 17: `DT_UINT64` values.
    #[prost(uint64, repeated, packed = "true", tag = "17")]
    pub uint64_val: Vec<u64>,
    /// Field 18: float8 and float4 values, one byte (the bit pattern) per element. A single
    /// `bytes` field, not a repeated one.
    #[prost(bytes = "bytes", tag = "18")]
    pub float8_val: Bytes,
}

/// `tensorflow.VariantTensorDataProto` (`tensor.proto`): the serialized form of a variant value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct VariantTensorDataProto {
    /// Field 1: name of the C++ type stored in the variant.
    #[prost(string, tag = "1")]
    pub type_name: String,
    /// Field 2: type-specific serialized metadata.
    #[prost(bytes = "bytes", tag = "2")]
    pub metadata: Bytes,
    /// Field 3: tensors held by the variant.
    #[prost(message, repeated, tag = "3")]
    pub tensors: Vec<TensorProto>,
}

/// `tensorflow.ResourceHandleProto` (`resource_handle.proto`): a handle to a resource.
///
/// Field 7 is reserved upstream; if it appears on the wire it is skipped.
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct ResourceHandleProto {
    /// Field 1: device holding the resource.
    #[prost(string, tag = "1")]
    pub device: String,
    /// Field 2: container in which the resource lives.
    #[prost(string, tag = "2")]
    pub container: String,
    /// Field 3: unique name of the resource.
    #[prost(string, tag = "3")]
    pub name: String,
    /// Field 4: hash of the resource's type.
    #[prost(uint64, tag = "4")]
    pub hash_code: u64,
    /// Field 5: name of the resource's type, for debugging (may be empty).
    #[prost(string, tag = "5")]
    pub maybe_type_name: String,
    /// Field 6: dtypes and shapes of the resource's contents, if known.
    #[prost(message, repeated, tag = "6")]
    pub dtypes_and_shapes: Vec<resource_handle_proto::DtypeAndShape>,
}

/// Messages nested in [`ResourceHandleProto`].
pub mod resource_handle_proto {
    use super::{DataType, TensorShapeProto};

    /// `ResourceHandleProto.DtypeAndShape`: the dtype and shape of one value in a resource.
    #[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
    pub struct DtypeAndShape {
        /// Field 1: element type, a [`DataType`] number.
        #[prost(enumeration = "DataType", tag = "1")]
        pub dtype: i32,
        /// Field 2: shape.
        #[prost(message, optional, tag = "2")]
        pub shape: Option<TensorShapeProto>,
    }
}

/// `tensorflow.TensorDescription` (`tensor_description.proto`). There is no field 3.
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct TensorDescription {
    /// Field 1: element type, a [`DataType`] number.
    #[prost(enumeration = "DataType", tag = "1")]
    pub dtype: i32,
    /// Field 2: shape.
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
    /// Field 4: information about the tensor's memory.
    #[prost(message, optional, tag = "4")]
    pub allocation_description: Option<AllocationDescription>,
}

/// `tensorflow.AllocationDescription` (`allocation_description.proto`).
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct AllocationDescription {
    /// Field 1: bytes requested.
    #[prost(int64, tag = "1")]
    pub requested_bytes: i64,
    /// Field 2: bytes allocated, if known.
    #[prost(int64, tag = "2")]
    pub allocated_bytes: i64,
    /// Field 3: name of the allocator.
    #[prost(string, tag = "3")]
    pub allocator_name: String,
    /// Field 4: identifier of the allocated buffer, if known.
    #[prost(int64, tag = "4")]
    pub allocation_id: i64,
    /// Field 5: true if one tensor holds the only reference to the buffer.
    #[prost(bool, tag = "5")]
    pub has_single_reference: bool,
    /// Field 6: address of the allocation.
    #[prost(uint64, tag = "6")]
    pub ptr: u64,
}

/// `tensorflow.SerializedDType` (`types.proto`): a [`DataType`] wrapped in a message.
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct SerializedDType {
    /// Field 1: the data type, a [`DataType`] number.
    #[prost(enumeration = "DataType", tag = "1")]
    pub datatype: i32,
}
