//! TensorFlow's `TensorProto` and related protobuf messages, for tensorcast.
//!
//! # Design
//!
//! The messages are hand-written [`prost`] derives: no `protoc`, no `build.rs`, no generated code
//! checked in. TensorFlow's protos are small and stable, and writing them out lets every field carry
//! the documentation and the choices below.
//!
//! * **Byte-identical to TensorFlow.** Field numbers, types and packing follow
//!   `tensorflow/core/framework/*.proto`. Fields are declared in ascending tag order, because prost
//!   encodes in declaration order and TensorFlow's C++ serializer in tag order; repeated scalars are
//!   packed (proto3). The conformance test decodes every `SerializeTensor` output recorded from
//!   TensorFlow and re-encodes it to the same bytes.
//! * **Zero-copy `bytes` fields.** Every `bytes` field (`tensor_content`, `string_val`, `float8_val`,
//!   `metadata`) is a [`bytes::Bytes`]. Decoding from a `Bytes` input slices that input instead of
//!   copying, so a 256 MiB `tensor_content` decodes in constant time and can become a tensor buffer
//!   without a copy. Decoding from a `&[u8]` copies, as it must.
//! * **Unknown enum values survive.** Dtype fields are `i32` marked
//!   `#[prost(enumeration = "DataType")]`; prost adds typed accessors (`dtype()`, `set_dtype()`).
//!   A dtype number TensorFlow adds later round-trips unchanged.
//! * **Bounded decode.** A length prefix larger than the remaining input is a decode error before
//!   anything is allocated, so a tiny input cannot claim a huge buffer.
//!
//! Beware that `tensor_content` sits at whatever offset the encoding puts it (often odd), so a
//! zero-copy view of it is in general *not* aligned for its element type.
//!
//! # Example
//!
//! ```
//! use bytes::Bytes;
//! use tensorcast_proto::{tensor_shape_proto::Dim, DataType, Message, TensorProto, TensorShapeProto};
//!
//! // A float32 tensor of shape [2], as TensorFlow's SerializeTensor writes it.
//! let mut proto = TensorProto {
//!     tensor_shape: Some(TensorShapeProto {
//!         dim: vec![Dim { size: 2, name: String::new() }],
//!         unknown_rank: false,
//!     }),
//!     tensor_content: Bytes::from_static(&[0, 0, 0x80, 0x3f, 0, 0, 0, 0x40]), // 1.0, 2.0
//!     ..Default::default()
//! };
//! proto.set_dtype(DataType::DtFloat);
//! let wire = Bytes::from(proto.encode_to_vec());
//! assert_eq!(wire.as_ref(), b"\x08\x01\x12\x04\x12\x02\x08\x02\x22\x08\x00\x00\x80\x3f\x00\x00\x00\x40");
//!
//! // Decoding from `Bytes` shares the input's memory: no copy of the content.
//! let back = TensorProto::decode(wire.clone()).unwrap();
//! assert_eq!(back, proto);
//! assert_eq!(back.dtype(), DataType::DtFloat);
//! let range = wire.as_ptr_range();
//! assert!(range.contains(&back.tensor_content.as_ptr()));
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod messages;

pub use messages::{
    resource_handle_proto, tensor_shape_proto, AllocationDescription, DataType,
    ResourceHandleProto, SerializedDType, TensorDescription, TensorProto, TensorShapeProto,
    VariantTensorDataProto,
};

/// The `prost` items callers need to encode and decode these messages (`Message`, `DecodeError`,
/// `EncodeError`), re-exported so that users need not depend on the same `prost` version.
pub use prost::{DecodeError, EncodeError, Message};
