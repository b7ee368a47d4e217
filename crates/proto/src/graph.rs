//! TensorFlow's graph protos (`graph.proto`, `node_def.proto`, `attr_value.proto`,
//! `versions.proto`, `full_type.proto`; proto3), written by hand as `prost` derives.
//!
//! Byte-identical to TensorFlow's *deterministic* serialization (`SerializeToString(deterministic=True)`,
//! what `tf.io.write_graph(..., as_text=False)` writes): fields are declared in ascending tag order
//! (prost encodes in declaration order), and the two string-keyed maps (`NodeDef.attr`,
//! `NameAttrList.attr`) are [`BTreeMap`]s, so their entries come out sorted by key as TensorFlow's
//! deterministic mode sorts them. Every `AttrValue` case sits in a oneof, so a set default
//! (`b: false`) is still written, as TensorFlow writes it.
//!
//! Messages tensorcast does not interpret are kept as their encoded bytes: `GraphDef.library`
//! (a `FunctionDefLibrary`) and `GraphDef.debug_info` (a `GraphDebugInfo`) are length-delimited on
//! the wire exactly like a nested message, so holding them as `bytes` reads and rewrites them
//! unchanged.

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::messages::{TensorProto, TensorShapeProto};

/// `tensorflow.GraphDef`: a graph as a list of nodes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GraphDef {
    /// The nodes, in the order they were created.
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeDef>,
    /// An encoded `FunctionDefLibrary`, kept verbatim. TensorFlow's C++ `Graph::ToGraphDef`
    /// writes an empty one (`12 00`); Python's `as_graph_def()` omits it.
    #[prost(bytes = "bytes", optional, tag = "2")]
    pub library: Option<Bytes>,
    /// Deprecated single version number; never written by TensorFlow 2.
    #[prost(int32, tag = "3")]
    pub version: i32,
    /// Producer and consumer versions of the graph.
    #[prost(message, optional, tag = "4")]
    pub versions: Option<VersionDef>,
    /// An encoded `GraphDebugInfo`, kept verbatim.
    #[prost(bytes = "bytes", optional, tag = "5")]
    pub debug_info: Option<Bytes>,
}

/// `tensorflow.NodeDef`: one node of a graph.
///
/// `prost::Message` is implemented by hand (in `attr_map.rs`) so that `attr` is written in
/// TensorFlow's deterministic order, which is not plain byte order (see there).
#[derive(Clone, PartialEq, Default, Debug)]
pub struct NodeDef {
    /// The node's unique name (1).
    pub name: String,
    /// The op type (`Const`, `AddV2`, ...) (2).
    pub op: String,
    /// Data inputs (`"node"` for output 0, `"node:k"`), then control inputs (`"^node"`) (3).
    pub input: Vec<String>,
    /// The requested device (`/device:CPU:0`); empty when unset (4).
    pub device: String,
    /// Attributes by name (5).
    pub attr: BTreeMap<String, AttrValue>,
    /// Where the node came from, when a rewrite merged or renamed nodes (6).
    pub experimental_debug_info: Option<node_def::ExperimentalDebugInfo>,
    /// The node's full type (TensorFlow sets it for ops whose outputs carry one, such as `Shape`) (7).
    pub experimental_type: Option<FullTypeDef>,
}

/// Nested messages of [`NodeDef`].
pub mod node_def {
    /// `NodeDef.ExperimentalDebugInfo`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ExperimentalDebugInfo {
        /// Names of the nodes this node was made from.
        #[prost(string, repeated, tag = "1")]
        pub original_node_names: Vec<String>,
        /// Names of the functions those nodes lived in.
        #[prost(string, repeated, tag = "2")]
        pub original_func_names: Vec<String>,
    }
}

/// `tensorflow.AttrValue`: the value of one node attribute (a oneof).
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttrValue {
    /// The value; `None` is an attr with no case set.
    #[prost(oneof = "attr_value::Value", tags = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10")]
    pub value: Option<attr_value::Value>,
}

/// Nested types of [`AttrValue`].
pub mod attr_value {
    use bytes::Bytes;

    use super::NameAttrList;
    use crate::messages::{TensorProto, TensorShapeProto};

    /// The cases of `AttrValue.value`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    /// The large cases (lists, shapes, tensors, functions) are boxed: an attr value is a few
    /// words, so a graph of a million small nodes costs memory in proportion to its attrs, not
    /// to the size of the largest case.
    pub enum Value {
        /// `list` (1): a list of values of one kind.
        #[prost(message, boxed, tag = "1")]
        List(Box<ListValue>),
        /// `s` (2): bytes.
        #[prost(bytes = "bytes", tag = "2")]
        S(Bytes),
        /// `i` (3): an int64.
        #[prost(int64, tag = "3")]
        I(i64),
        /// `f` (4): a float.
        #[prost(float, tag = "4")]
        F(f32),
        /// `b` (5): a bool.
        #[prost(bool, tag = "5")]
        B(bool),
        /// `type` (6): a DataType number.
        #[prost(enumeration = "crate::DataType", tag = "6")]
        Type(i32),
        /// `shape` (7): a (partial) shape.
        #[prost(message, boxed, tag = "7")]
        Shape(Box<TensorShapeProto>),
        /// `tensor` (8): a tensor value.
        #[prost(message, boxed, tag = "8")]
        Tensor(Box<TensorProto>),
        /// `placeholder` (9): a function attr reference.
        #[prost(string, tag = "9")]
        Placeholder(String),
        /// `func` (10): a function name with attrs.
        #[prost(message, boxed, tag = "10")]
        Func(Box<NameAttrList>),
    }

    /// `AttrValue.ListValue`. There is no field 1.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ListValue {
        /// `s` (2).
        #[prost(bytes = "bytes", repeated, tag = "2")]
        pub s: Vec<Bytes>,
        /// `i` (3, packed).
        #[prost(int64, repeated, tag = "3")]
        pub i: Vec<i64>,
        /// `f` (4, packed).
        #[prost(float, repeated, tag = "4")]
        pub f: Vec<f32>,
        /// `b` (5, packed).
        #[prost(bool, repeated, tag = "5")]
        pub b: Vec<bool>,
        /// `type` (6, packed DataType numbers).
        #[prost(enumeration = "crate::DataType", repeated, tag = "6")]
        pub r#type: Vec<i32>,
        /// `shape` (7).
        #[prost(message, repeated, tag = "7")]
        pub shape: Vec<TensorShapeProto>,
        /// `tensor` (8).
        #[prost(message, repeated, tag = "8")]
        pub tensor: Vec<TensorProto>,
        /// `func` (9).
        #[prost(message, repeated, tag = "9")]
        pub func: Vec<NameAttrList>,
    }
}

/// `tensorflow.NameAttrList`: a function name and its attrs (`prost::Message` by hand, as
/// [`NodeDef`], for the attr order).
#[derive(Clone, PartialEq, Default, Debug)]
pub struct NameAttrList {
    /// The function name (1).
    pub name: String,
    /// Its attrs (2).
    pub attr: BTreeMap<String, AttrValue>,
}

/// `tensorflow.VersionDef`: who wrote a graph and who may read it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct VersionDef {
    /// The `TF_GRAPH_DEF_VERSION` of the writer (2474 for TensorFlow 2.21).
    #[prost(int32, tag = "1")]
    pub producer: i32,
    /// The lowest consumer version that may read the graph.
    #[prost(int32, tag = "2")]
    pub min_consumer: i32,
    /// Consumer versions that must not read the graph.
    #[prost(int32, repeated, tag = "3")]
    pub bad_consumers: Vec<i32>,
}

/// `tensorflow.FullTypeDef`: a full (type-constructor) type.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FullTypeDef {
    /// The `FullTypeId` number (`TFT_PRODUCT` = 3, `TFT_SHAPE_TENSOR` = 1005, `TFT_INT32` = 207, ...).
    #[prost(int32, tag = "1")]
    pub type_id: i32,
    /// Type arguments.
    #[prost(message, repeated, tag = "2")]
    pub args: Vec<FullTypeDef>,
    /// The optional literal attribute.
    #[prost(oneof = "full_type_def::Attr", tags = "3, 4")]
    pub attr: Option<full_type_def::Attr>,
}

/// Nested types of [`FullTypeDef`].
pub mod full_type_def {
    /// The cases of `FullTypeDef.attr`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Attr {
        /// `s` (3).
        #[prost(string, tag = "3")]
        S(String),
        /// `i` (4).
        #[prost(int64, tag = "4")]
        I(i64),
    }
}

impl AttrValue {
    /// An attr holding a DataType (by its proto number).
    pub fn of_type(dtype: i32) -> Self {
        AttrValue {
            value: Some(attr_value::Value::Type(dtype)),
        }
    }
    /// An attr holding a bool.
    pub fn of_bool(b: bool) -> Self {
        AttrValue {
            value: Some(attr_value::Value::B(b)),
        }
    }
    /// An attr holding an int.
    pub fn of_int(i: i64) -> Self {
        AttrValue {
            value: Some(attr_value::Value::I(i)),
        }
    }
    /// An attr holding a shape.
    pub fn of_shape(shape: TensorShapeProto) -> Self {
        AttrValue {
            value: Some(attr_value::Value::Shape(Box::new(shape))),
        }
    }
    /// An attr holding a tensor.
    pub fn of_tensor(tensor: TensorProto) -> Self {
        AttrValue {
            value: Some(attr_value::Value::Tensor(Box::new(tensor))),
        }
    }
    /// An attr holding a list of byte strings.
    pub fn of_strings(list: Vec<Bytes>) -> Self {
        AttrValue {
            value: Some(attr_value::Value::List(Box::new(attr_value::ListValue {
                s: list,
                ..Default::default()
            }))),
        }
    }
}
