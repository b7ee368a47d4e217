//! TensorFlow's SavedModel protos (`saved_model.proto`, `meta_graph.proto`,
//! `saved_object_graph.proto`, `fingerprint.proto`; proto3), the parts a reader needs to list a
//! SavedModel's tag sets, signatures and variables, written by hand as `prost` derives.
//!
//! Field numbers and types are those of TensorFlow 2.21's generated descriptors
//! (`meta_graph_pb2`, `saved_object_graph_pb2`, `fingerprint_pb2`). Sub-messages tensorcast does
//! not interpret (`SaverDef`, `CollectionDef`, `OpList`, `Any`, `SavedFunction`,
//! `SavedConcreteFunction`, `FunctionSpec`, ...) are declared as `bytes`: a nested message is
//! length-delimited on the wire exactly like `bytes`, so they are kept verbatim and nothing is
//! lost on the way back out. The graph is a [`GraphDef`], whose function library is itself kept
//! as bytes ([`GraphDef::library`]; decode it with [`crate::FunctionDefLibrary`]).
//!
//! ```
//! use tensorcast_proto::{meta_graph_def::MetaInfoDef, tensor_info, DataType, Message};
//! use tensorcast_proto::{MetaGraphDef, SavedModel, SignatureDef, TensorInfo};
//!
//! let mut x = TensorInfo { encoding: Some(tensor_info::Encoding::Name("serving_default_x:0".into())), ..Default::default() };
//! x.set_dtype(DataType::DtFloat);
//! let mut sig = SignatureDef { method_name: "tensorflow/serving/predict".into(), ..Default::default() };
//! sig.inputs.insert("x".into(), x);
//! let mut mg = MetaGraphDef {
//!     meta_info_def: Some(MetaInfoDef { tags: vec!["serve".into()], ..Default::default() }),
//!     ..Default::default()
//! };
//! mg.signature_def.insert("serving_default".into(), sig);
//! let sm = SavedModel { saved_model_schema_version: 1, meta_graphs: vec![mg] };
//! let back = SavedModel::decode(sm.encode_to_vec().as_slice())?;
//! assert_eq!(back, sm);
//! assert_eq!(back.meta_graphs[0].signature_def["serving_default"].inputs["x"].dtype(), DataType::DtFloat);
//! # Ok::<(), tensorcast_proto::DecodeError>(())
//! ```

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::bundle::trackable_object_graph::trackable_object::{
    ObjectReference, SlotVariableReference,
};
use crate::graph::{GraphDef, VersionDef};
use crate::messages::{DataType, TensorProto, TensorShapeProto};

/// `tensorflow.SavedModel`: the content of `saved_model.pb`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SavedModel {
    /// The schema version (1) TensorFlow writes as 1.
    #[prost(int64, tag = "1")]
    pub saved_model_schema_version: i64,
    /// One meta graph per tag set (2); TF2's `tf.saved_model.save` writes one, tagged `serve`.
    #[prost(message, repeated, tag = "2")]
    pub meta_graphs: Vec<MetaGraphDef>,
}

/// `tensorflow.MetaGraphDef`: a graph with its tags, signatures and object graph.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MetaGraphDef {
    /// Tags and versions (1).
    #[prost(message, optional, tag = "1")]
    pub meta_info_def: Option<meta_graph_def::MetaInfoDef>,
    /// The graph (2): in TF2 a thin shell calling functions of its library.
    #[prost(message, optional, tag = "2")]
    pub graph_def: Option<GraphDef>,
    /// An encoded `SaverDef` (3), kept verbatim.
    #[prost(bytes = "bytes", optional, tag = "3")]
    pub saver_def: Option<Bytes>,
    /// Encoded `CollectionDef`s by collection name (4), kept verbatim.
    #[prost(btree_map = "string, bytes", tag = "4")]
    pub collection_def: BTreeMap<String, Vec<u8>>,
    /// The signatures by key (5): `serving_default`, `__saved_model_init_op`, ...
    #[prost(btree_map = "string, message", tag = "5")]
    pub signature_def: BTreeMap<String, SignatureDef>,
    /// The assets (6).
    #[prost(message, repeated, tag = "6")]
    pub asset_file_def: Vec<AssetFileDef>,
    /// The TF2 object graph (7): what `tf.saved_model.load` rebuilds.
    #[prost(message, optional, tag = "7")]
    pub object_graph_def: Option<SavedObjectGraph>,
}

/// Messages nested in [`MetaGraphDef`].
pub mod meta_graph_def {
    use std::collections::BTreeMap;

    use bytes::Bytes;

    /// `MetaGraphDef.MetaInfoDef`: the tags and the versions that wrote the graph.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct MetaInfoDef {
        /// A user-given version string (1).
        #[prost(string, tag = "1")]
        pub meta_graph_version: String,
        /// An encoded `OpList` of the ops the graph uses (2), kept verbatim.
        #[prost(bytes = "bytes", optional, tag = "2")]
        pub stripped_op_list: Option<Bytes>,
        /// An encoded `google.protobuf.Any` (3), kept verbatim.
        #[prost(bytes = "bytes", optional, tag = "3")]
        pub any_info: Option<Bytes>,
        /// The tag set (4): `serve`, `train`, `gpu`, `tpu`...
        #[prost(string, repeated, tag = "4")]
        pub tags: Vec<String>,
        /// `tf.__version__` of the writer (5).
        #[prost(string, tag = "5")]
        pub tensorflow_version: String,
        /// `tf.__git_version__` of the writer (6).
        #[prost(string, tag = "6")]
        pub tensorflow_git_version: String,
        /// Whether default-valued attrs were stripped from the nodes (7).
        #[prost(bool, tag = "7")]
        pub stripped_default_attrs: bool,
        /// Function aliases (8).
        #[prost(btree_map = "string, string", tag = "8")]
        pub function_aliases: BTreeMap<String, String>,
    }
}

/// `tensorflow.SignatureDef`: a named entry point, its inputs and outputs by key.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SignatureDef {
    /// The inputs by key (1).
    #[prost(btree_map = "string, message", tag = "1")]
    pub inputs: BTreeMap<String, TensorInfo>,
    /// The outputs by key (2).
    #[prost(btree_map = "string, message", tag = "2")]
    pub outputs: BTreeMap<String, TensorInfo>,
    /// `tensorflow/serving/predict`, ... (3).
    #[prost(string, tag = "3")]
    pub method_name: String,
    /// Default values of optional inputs (4).
    #[prost(btree_map = "string, message", tag = "4")]
    pub defaults: BTreeMap<String, TensorProto>,
}

/// `tensorflow.TensorInfo`: how a signature's input or output is found in the graph.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorInfo {
    /// A tensor name, a sparse tensor's three names, or a composite tensor (1, 4, 5).
    #[prost(oneof = "tensor_info::Encoding", tags = "1, 4, 5")]
    pub encoding: Option<tensor_info::Encoding>,
    /// The dtype (2), a [`DataType`] number.
    #[prost(enumeration = "DataType", tag = "2")]
    pub dtype: i32,
    /// The shape (3), possibly partial or of unknown rank.
    #[prost(message, optional, tag = "3")]
    pub tensor_shape: Option<TensorShapeProto>,
}

/// Messages nested in [`TensorInfo`].
pub mod tensor_info {
    use bytes::Bytes;

    /// `TensorInfo.encoding`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Encoding {
        /// The tensor's name in the graph, `node:index` (1).
        #[prost(string, tag = "1")]
        Name(String),
        /// A `SparseTensor`'s three dense tensors (4).
        #[prost(message, tag = "4")]
        CooSparse(CooSparse),
        /// An encoded `TensorInfo.CompositeTensor` (5), kept verbatim.
        #[prost(bytes = "bytes", tag = "5")]
        CompositeTensor(Bytes),
    }

    /// `TensorInfo.CooSparse`: the names of a sparse tensor's components.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct CooSparse {
        /// The values tensor (1).
        #[prost(string, tag = "1")]
        pub values_tensor_name: String,
        /// The indices tensor (2).
        #[prost(string, tag = "2")]
        pub indices_tensor_name: String,
        /// The dense shape tensor (3).
        #[prost(string, tag = "3")]
        pub dense_shape_tensor_name: String,
    }
}

/// `tensorflow.AssetFileDef`: an asset file and the tensor that holds its path.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AssetFileDef {
    /// The tensor fed with the asset's path (1).
    #[prost(message, optional, tag = "1")]
    pub tensor_info: Option<TensorInfo>,
    /// The file name under `assets/` (2).
    #[prost(string, tag = "2")]
    pub filename: String,
}

/// `tensorflow.SavedObjectGraph`: the TF2 objects of a SavedModel; `nodes[0]` is the root.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SavedObjectGraph {
    /// The objects; references between them are indices into this list (1).
    #[prost(message, repeated, tag = "1")]
    pub nodes: Vec<SavedObject>,
    /// Encoded `SavedConcreteFunction`s by function name (2), kept verbatim.
    #[prost(btree_map = "string, bytes", tag = "2")]
    pub concrete_functions: BTreeMap<String, Vec<u8>>,
}

/// `tensorflow.SavedObject`: one object of a [`SavedObjectGraph`].
#[derive(Clone, PartialEq, prost::Message)]
pub struct SavedObject {
    /// The object's named children (1), as in a checkpoint's object graph.
    #[prost(message, repeated, tag = "1")]
    pub children: Vec<ObjectReference>,
    /// An optimizer's slot variables (3).
    #[prost(message, repeated, tag = "3")]
    pub slot_variables: Vec<SlotVariableReference>,
    /// What the object is (4-10, 12).
    #[prost(oneof = "saved_object::Kind", tags = "4, 5, 6, 7, 8, 9, 10, 12")]
    pub kind: Option<saved_object::Kind>,
    /// Encoded `SaveableObject`s by name (11), kept verbatim.
    #[prost(btree_map = "string, bytes", tag = "11")]
    pub saveable_objects: BTreeMap<String, Vec<u8>>,
    /// The registered class name, for registered objects (13).
    #[prost(string, tag = "13")]
    pub registered_name: String,
    /// An encoded `google.protobuf.Any` (14), kept verbatim.
    #[prost(bytes = "bytes", optional, tag = "14")]
    pub serialized_user_proto: Option<Bytes>,
    /// Dependencies other than children (15).
    #[prost(message, repeated, tag = "15")]
    pub dependencies: Vec<ObjectReference>,
    /// The registered saver's name (16).
    #[prost(string, tag = "16")]
    pub registered_saver: String,
}

/// Messages nested in [`SavedObject`].
pub mod saved_object {
    use bytes::Bytes;

    /// `SavedObject.kind`. Kinds tensorcast does not interpret are kept as their encoded bytes.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Kind {
        /// A user object: a `tf.Module`, a Keras layer or model (4).
        #[prost(message, tag = "4")]
        UserObject(super::SavedUserObject),
        /// An asset: an index into [`super::MetaGraphDef::asset_file_def`] (5).
        #[prost(message, tag = "5")]
        Asset(super::SavedAsset),
        /// An encoded `SavedFunction` (6), kept verbatim.
        #[prost(bytes = "bytes", tag = "6")]
        Function(Bytes),
        /// A variable (7).
        #[prost(message, tag = "7")]
        Variable(super::SavedVariable),
        /// An encoded `SavedBareConcreteFunction` (8), kept verbatim.
        #[prost(bytes = "bytes", tag = "8")]
        BareConcreteFunction(Bytes),
        /// A constant: the name of the graph node holding it (9).
        #[prost(message, tag = "9")]
        Constant(super::SavedConstant),
        /// An encoded `SavedResource` (10), kept verbatim.
        #[prost(bytes = "bytes", tag = "10")]
        Resource(Bytes),
        /// An encoded `CapturedTensor` (12), kept verbatim.
        #[prost(bytes = "bytes", tag = "12")]
        CapturedTensor(Bytes),
    }
}

/// `tensorflow.SavedUserObject`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SavedUserObject {
    /// The class identifier: `_generic_user_object`, `_tf_keras_layer`, ... (1).
    #[prost(string, tag = "1")]
    pub identifier: String,
    /// The object's version (2).
    #[prost(message, optional, tag = "2")]
    pub version: Option<VersionDef>,
    /// Deprecated metadata (Keras' JSON config in older files) (3).
    #[prost(string, tag = "3")]
    pub metadata: String,
}

/// `tensorflow.SavedAsset`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SavedAsset {
    /// An index into [`MetaGraphDef::asset_file_def`] (1).
    #[prost(int32, tag = "1")]
    pub asset_file_def_index: i32,
}

/// `tensorflow.SavedVariable`: a variable's dtype, shape and name; its value lives in the
/// `variables/variables` bundle under `<object path>/.ATTRIBUTES/VARIABLE_VALUE`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SavedVariable {
    /// The dtype (1), a [`DataType`] number.
    #[prost(enumeration = "DataType", tag = "1")]
    pub dtype: i32,
    /// The shape (2).
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
    /// Whether it is trainable (3).
    #[prost(bool, tag = "3")]
    pub trainable: bool,
    /// `VariableSynchronization` number (4).
    #[prost(int32, tag = "4")]
    pub synchronization: i32,
    /// `VariableAggregation` number (5).
    #[prost(int32, tag = "5")]
    pub aggregation: i32,
    /// The variable's name (`w:0` without the `:0`) (6).
    #[prost(string, tag = "6")]
    pub name: String,
    /// The device (7).
    #[prost(string, tag = "7")]
    pub device: String,
    /// The components of a distributed variable (8).
    #[prost(message, repeated, tag = "8")]
    pub experimental_distributed_variable_components: Vec<SavedVariable>,
}

/// `tensorflow.SavedConstant`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SavedConstant {
    /// The graph node holding the constant (1).
    #[prost(string, tag = "1")]
    pub operation: String,
}

/// `tensorflow.FingerprintDef`: the content of `fingerprint.pb`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FingerprintDef {
    /// Fingerprint64 of the serialized SavedModel (1).
    #[prost(uint64, tag = "1")]
    pub saved_model_checksum: u64,
    /// Hash of the regularized graph_def (2).
    #[prost(uint64, tag = "2")]
    pub graph_def_program_hash: u64,
    /// Hash of the signatures (3).
    #[prost(uint64, tag = "3")]
    pub signature_def_hash: u64,
    /// Hash of the object graph (4).
    #[prost(uint64, tag = "4")]
    pub saved_object_graph_hash: u64,
    /// Fingerprint64 of `variables/variables.index`, or 0 (5).
    #[prost(uint64, tag = "5")]
    pub checkpoint_hash: u64,
    /// The fingerprint format version (6).
    #[prost(message, optional, tag = "6")]
    pub version: Option<VersionDef>,
    /// A UUID, when the writer was asked for one (7).
    #[prost(string, tag = "7")]
    pub uuid: String,
}

impl FingerprintDef {
    /// TensorFlow's `Singleprint()`: `"#2/#3/#4/#5"`, the four hashes after the checksum.
    pub fn singleprint(&self) -> String {
        format!(
            "{}/{}/{}/{}",
            self.graph_def_program_hash,
            self.signature_def_hash,
            self.saved_object_graph_hash,
            self.checkpoint_hash
        )
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;

    #[test]
    fn saved_object_unknown_kinds_round_trip_verbatim() {
        let obj = SavedObject {
            children: vec![ObjectReference {
                node_id: 1,
                local_name: "w".into(),
            }],
            kind: Some(saved_object::Kind::Function(Bytes::from_static(
                b"\x0a\x03abc",
            ))),
            ..Default::default()
        };
        let wire = obj.encode_to_vec();
        let back = SavedObject::decode(wire.as_slice()).unwrap();
        assert_eq!(back, obj);
        assert_eq!(back.encode_to_vec(), wire);
    }

    #[test]
    fn saved_variable_decodes_tf_field_numbers() {
        // dtype=1 (float), shape=[2], trainable, name "w".
        let wire = b"\x08\x01\x12\x04\x12\x02\x08\x02\x18\x01\x32\x01w";
        let v = SavedVariable::decode(&wire[..]).unwrap();
        assert_eq!(v.dtype(), DataType::DtFloat);
        assert_eq!(v.shape.unwrap().dim[0].size, 2);
        assert!(v.trainable);
        assert_eq!(v.name, "w");
    }

    #[test]
    fn fingerprint_singleprint_joins_hashes_two_to_five() {
        let f = FingerprintDef {
            saved_model_checksum: 1,
            graph_def_program_hash: 2,
            signature_def_hash: 3,
            saved_object_graph_hash: 4,
            checkpoint_hash: 5,
            ..Default::default()
        };
        assert_eq!(f.singleprint(), "2/3/4/5");
    }
}
