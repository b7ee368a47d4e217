//! TensorFlow's tensor-bundle (checkpoint V2) protos: `tensor_bundle.proto`,
//! `tensor_slice.proto` and `trackable_object_graph.proto` (proto3), written by hand as `prost`
//! derives.
//!
//! Field numbers and types are those of TensorFlow 2.21's generated descriptors (checked
//! against `tensor_bundle_pb2`, `tensor_slice_pb2` and `trackable_object_graph_pb2`); fields are
//! declared in ascending tag order so that the encoding is byte-identical to TensorFlow's
//! (prost encodes in declaration order, TensorFlow's C++ serializer in tag order). Note that
//! `TrackableObject.SerializedTensor` has no `optional_restore` field in 2.21: an unknown field
//! 4 is skipped on decode.
//!
//! ```
//! use tensorcast_proto::{BundleEntryProto, DataType, Message, TensorShapeProto};
//! let mut e = BundleEntryProto { size: 12, crc32c: 0x3849_1a83, ..Default::default() };
//! e.set_dtype(DataType::DtFloat);
//! e.shape = Some(TensorShapeProto { dim: vec![tensorcast_proto::tensor_shape_proto::Dim { size: 3, name: String::new() }], unknown_rank: false });
//! // dtype, shape, size, crc32c: shard_id and offset are 0 and not written (proto3).
//! assert_eq!(e.encode_to_vec(), b"\x08\x01\x12\x04\x12\x02\x08\x03\x28\x0c\x35\x83\x1a\x49\x38");
//! ```

use crate::graph::VersionDef;
use crate::messages::{DataType, TensorShapeProto};

/// `BundleHeaderProto.Endianness`: the byte order of the data files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum Endianness {
    /// `LITTLE` (0): what every little-endian host writes.
    Little = 0,
    /// `BIG` (1): written by big-endian hosts; readers byte-swap.
    Big = 1,
}

/// `tensorflow.BundleHeaderProto`: the value of the `.index` table's first entry (key `""`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct BundleHeaderProto {
    /// Field 1: the number of `.data-NNNNN-of-NNNNN` shards.
    #[prost(int32, tag = "1")]
    pub num_shards: i32,
    /// Field 2: the byte order of the data files, an [`Endianness`] number.
    #[prost(enumeration = "Endianness", tag = "2")]
    pub endianness: i32,
    /// Field 3: the bundle format version (`producer = 1`, `min_consumer = 0` today).
    #[prost(message, optional, tag = "3")]
    pub version: Option<VersionDef>,
}

/// `tensorflow.BundleEntryProto`: where one tensor (or one partitioned tensor's slices) lives.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BundleEntryProto {
    /// Field 1: the element type, a [`DataType`] number.
    #[prost(enumeration = "DataType", tag = "1")]
    pub dtype: i32,
    /// Field 2: the full tensor's shape.
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
    /// Field 3: the data shard holding the bytes.
    #[prost(int32, tag = "3")]
    pub shard_id: i32,
    /// Field 4: the first byte in the shard.
    #[prost(int64, tag = "4")]
    pub offset: i64,
    /// Field 5: the byte count in the shard.
    #[prost(int64, tag = "5")]
    pub size: i64,
    /// Field 6: the masked CRC32C of the bytes (see the string layout for strings).
    #[prost(fixed32, tag = "6")]
    pub crc32c: u32,
    /// Field 7: for a partitioned tensor, its slices (each stored under its own key); the
    /// location fields above are then unused.
    #[prost(message, repeated, tag = "7")]
    pub slices: Vec<TensorSliceProto>,
}

/// `tensorflow.TensorSliceProto`: a slice of a tensor, one extent per dimension.
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct TensorSliceProto {
    /// Field 1: the extents, one per dimension (a full dimension has no length).
    #[prost(message, repeated, tag = "1")]
    pub extent: Vec<tensor_slice_proto::Extent>,
}

/// Messages nested in [`TensorSliceProto`].
pub mod tensor_slice_proto {
    /// `TensorSliceProto.Extent`: the start and (unless the whole dimension) length of a slice
    /// in one dimension.
    #[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
    pub struct Extent {
        /// Field 1: the first index.
        #[prost(int64, tag = "1")]
        pub start: i64,
        /// Field 2 (in the oneof `has_length`): the length; `None` means the whole dimension.
        #[prost(int64, optional, tag = "2")]
        pub length: Option<i64>,
    }
}

/// `tensorflow.TrackableObjectGraph`: the objects of a TF2 object-based checkpoint, stored
/// serialized as the string scalar `_CHECKPOINTABLE_OBJECT_GRAPH`. `nodes[0]` is the root.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackableObjectGraph {
    /// Field 1: the objects; references between them are indices into this list.
    #[prost(message, repeated, tag = "1")]
    pub nodes: Vec<trackable_object_graph::TrackableObject>,
}

/// Messages nested in [`TrackableObjectGraph`].
pub mod trackable_object_graph {
    /// `TrackableObjectGraph.TrackableObject`: one object (a model, layer, variable, optimizer).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TrackableObject {
        /// Field 1: the object's named children.
        #[prost(message, repeated, tag = "1")]
        pub children: Vec<trackable_object::ObjectReference>,
        /// Field 2: the tensors the object saves (a variable's `VARIABLE_VALUE`).
        #[prost(message, repeated, tag = "2")]
        pub attributes: Vec<trackable_object::SerializedTensor>,
        /// Field 3: an optimizer's slot variables.
        #[prost(message, repeated, tag = "3")]
        pub slot_variables: Vec<trackable_object::SlotVariableReference>,
        /// Field 4: a registered saver that saves this object.
        #[prost(message, optional, tag = "4")]
        pub registered_saver: Option<RegisteredSaver>,
        /// Field 5: whether the object or its children have values in the checkpoint
        /// (`google.protobuf.BoolValue`).
        #[prost(message, optional, tag = "5")]
        pub has_checkpoint_values: Option<BoolValue>,
    }

    /// Messages nested in [`TrackableObject`].
    pub mod trackable_object {
        /// `TrackableObject.ObjectReference`: an edge to a child object.
        #[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
        pub struct ObjectReference {
            /// Field 1: the child's index in `nodes`.
            #[prost(int32, tag = "1")]
            pub node_id: i32,
            /// Field 2: the edge's name (an attribute name, a list index).
            #[prost(string, tag = "2")]
            pub local_name: String,
        }

        /// `TrackableObject.SerializedTensor`: a tensor an object saves.
        #[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
        pub struct SerializedTensor {
            /// Field 1: the attribute name (`VARIABLE_VALUE`).
            #[prost(string, tag = "1")]
            pub name: String,
            /// Field 2: the variable's graph name (`dense/kernel`), when it has one.
            #[prost(string, tag = "2")]
            pub full_name: String,
            /// Field 3: the bundle key holding the tensor.
            #[prost(string, tag = "3")]
            pub checkpoint_key: String,
        }

        /// `TrackableObject.SlotVariableReference`: a slot variable of an optimizer.
        #[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
        pub struct SlotVariableReference {
            /// Field 1: the variable the slot belongs to.
            #[prost(int32, tag = "1")]
            pub original_variable_node_id: i32,
            /// Field 2: the slot's name (`m`, `v`, `momentum`).
            #[prost(string, tag = "2")]
            pub slot_name: String,
            /// Field 3: the slot variable's node.
            #[prost(int32, tag = "3")]
            pub slot_variable_node_id: i32,
        }
    }

    /// `tensorflow.RegisteredSaver`: a saver registered with `tf.saved_model`'s registration.
    #[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
    pub struct RegisteredSaver {
        /// Field 1: the saver's registered name.
        #[prost(string, tag = "1")]
        pub name: String,
        /// Field 2: the object's name for the saver.
        #[prost(string, tag = "2")]
        pub object_name: String,
    }

    /// `google.protobuf.BoolValue`.
    #[derive(Clone, Copy, PartialEq, Eq, Hash, prost::Message)]
    pub struct BoolValue {
        /// Field 1: the value.
        #[prost(bool, tag = "1")]
        pub value: bool,
    }
}
