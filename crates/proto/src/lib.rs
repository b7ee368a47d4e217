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
//! # Tensors
//!
//! [`tensor_from_proto`] is TensorFlow's `Tensor::FromProto`, rule for rule (content wins over
//! typed fields, repeat-last, exact content sizes, bool bytes 0/1, the string-list encoding,
//! half/bfloat16/int4/float8 fields, shape and dtype validation); [`as_proto_field`] and
//! [`as_proto_tensor_content`] are `AsProtoField` and `AsProtoTensorContent`;
//! [`serialize_tensor`] and [`parse_tensor`] are the `SerializeTensor` and `ParseTensor` ops,
//! byte for byte. Untrusted input is bounded: a proto may only claim elements it does not
//! carry up to a fill limit ([`DecodeOptions`]), so a few bytes cannot demand gigabytes.
//!
//! Zero copy both ways: [`decode_tensor`] of a `bytes::Bytes` shares `tensor_content` as the
//! tensor's buffer when the address suits the dtype (copying once otherwise: see
//! [`DecodeOptions`]), [`as_proto_tensor_content`] shares the tensor's buffer as
//! `tensor_content`, and [`encode_tensor`] lays the content out 64-byte aligned so that its
//! output decodes without a copy.
//!
//! ```
//! use tensorcast_core::{DataType, Tensor};
//! use tensorcast_proto::{decode_tensor, encode_tensor, parse_tensor, serialize_tensor};
//!
//! let t = Tensor::vector(&[1.0f64, 2.0, 3.0]);
//! let wire = serialize_tensor(&t)?; // what tf.io.serialize_tensor writes
//! assert_eq!(parse_tensor(wire.into(), DataType::DOUBLE)?, t);
//! let aligned = encode_tensor(&t)?; // same bytes, content 64-byte aligned
//! assert_eq!(aligned.as_ref(), serialize_tensor(&t)?);
//! let back = decode_tensor(aligned.clone())?; // shares `aligned`'s memory
//! assert!(aligned.as_ptr_range().contains(&back.data_ptr()));
//! # Ok::<(), tensorcast_proto::ProtoError>(())
//! ```
//!
//! # Messages
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
#![warn(unreachable_pub, missing_debug_implementations)]

mod attr_map;
mod budget;
mod bundle;
mod decode;
mod encode;
mod error;
pub mod example;
mod function;
mod graph;
mod handle;
mod messages;
mod options;
mod saved_model;
mod shape;
mod text;

pub use bundle::{
    tensor_slice_proto, trackable_object_graph, BundleEntryProto, BundleHeaderProto, Endianness,
    TensorSliceProto, TrackableObjectGraph,
};
pub use decode::{
    decode_tensor, decode_tensor_with, parse_tensor, parse_tensor_with, tensor_from_proto,
    tensor_from_proto_with,
};
pub use decode::{variant_from_proto, variant_from_proto_with};
pub use encode::variant_to_proto;
pub use encode::{
    as_proto_field, as_proto_tensor_content, bytes_from_buffer, encode_tensor, encode_tensor_in,
    serialize_tensor, serialize_tensor_header, serialize_tensor_into, tensor_description,
};
pub use error::ProtoError;
pub use function::{ArgDefProto, FunctionDef, FunctionDefLibrary, OpDefProto};
pub use graph::{
    attr_value, full_type_def, node_def, AttrValue, FullTypeDef, GraphDef, NameAttrList, NodeDef,
    VersionDef,
};
pub use handle::{resource_handle_from_proto, resource_handle_to_proto};
pub use options::{DecodeOptions, DEFAULT_MAX_FILL_BYTES, MAX_NESTING_DEPTH};
pub use saved_model::{
    meta_graph_def, saved_object, tensor_info, AssetFileDef, FingerprintDef, MetaGraphDef,
    SavedAsset, SavedConstant, SavedModel, SavedObject, SavedObjectGraph, SavedUserObject,
    SavedVariable, SignatureDef, TensorInfo,
};
pub use shape::{
    dims_to_proto, partial_shape_from_proto, partial_shape_to_proto, shape_from_proto,
    shape_proto_debug_string, shape_to_proto,
};
pub use text::{
    graph_def_binary_to_text, graph_def_from_text, graph_def_text_to_binary, graph_def_to_text,
    looks_like_graph_def_text, saved_model_binary_to_text, saved_model_text_to_binary,
};

pub use messages::{
    resource_handle_proto, tensor_shape_proto, AllocationDescription, DataType,
    ResourceHandleProto, SerializedDType, TensorDescription, TensorProto, TensorShapeProto,
    VariantTensorDataProto,
};

/// The `prost` items callers need to encode and decode these messages (`Message`, `DecodeError`,
/// `EncodeError`), re-exported so that users need not depend on the same `prost` version.
pub use prost::{DecodeError, EncodeError, Message};
