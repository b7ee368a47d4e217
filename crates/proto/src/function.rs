//! TensorFlow's function library (`function.proto`, `op_def.proto`; proto3), the parts a
//! reader needs to list functions and to inline their bodies: each function's signature
//! (name, input and output args, control outputs), its body (`node_def`, with inputs named
//! `arg`, `node:out_arg:index` or `^node`) and its return maps. Fields not declared here are
//! skipped on decode; a GraphDef keeps its library as the encoded bytes it read
//! ([`crate::GraphDef::library`]), so nothing is lost on the way back out.

use std::collections::BTreeMap;

use crate::graph::{AttrValue, NodeDef};

/// `tensorflow.FunctionDefLibrary`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FunctionDefLibrary {
    /// The functions (1).
    #[prost(message, repeated, tag = "1")]
    pub function: Vec<FunctionDef>,
}

impl FunctionDefLibrary {
    /// Decodes a `GraphDef`'s encoded [`library`](crate::GraphDef::library); no bytes is the
    /// empty library.
    ///
    /// # Errors
    /// The decode error when the bytes are not a `FunctionDefLibrary`.
    pub fn decode_optional(
        bytes: Option<&bytes::Bytes>,
    ) -> Result<FunctionDefLibrary, prost::DecodeError> {
        bytes.map_or(Ok(FunctionDefLibrary::default()), |b| {
            <FunctionDefLibrary as prost::Message>::decode(b.clone())
        })
    }

    /// The functions with a signature, by name.
    pub fn by_name(&self) -> impl Iterator<Item = (&str, &FunctionDef)> {
        self.function
            .iter()
            .filter_map(|f| f.signature.as_ref().map(|s| (s.name.as_str(), f)))
    }
}

/// `tensorflow.FunctionDef`: a signature and a body of nodes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FunctionDef {
    /// The signature: name, input and output args (1).
    #[prost(message, optional, tag = "1")]
    pub signature: Option<OpDefProto>,
    /// The body (3).
    #[prost(message, repeated, tag = "3")]
    pub node_def: Vec<NodeDef>,
    /// Output arg name -> the tensor it returns (`node:out_arg:index`, or an input arg) (4).
    #[prost(btree_map = "string, string", tag = "4")]
    pub ret: BTreeMap<String, String>,
    /// The function's attrs (`_noinline`, ...) (5).
    #[prost(btree_map = "string, message", tag = "5")]
    pub attr: BTreeMap<String, AttrValue>,
    /// Control output name -> the node it waits for (6).
    #[prost(btree_map = "string, string", tag = "6")]
    pub control_ret: BTreeMap<String, String>,
}

/// `tensorflow.OpDef`, as a function's signature (or an op's registration).
#[derive(Clone, PartialEq, prost::Message)]
pub struct OpDefProto {
    /// The function's (or op's) name (1).
    #[prost(string, tag = "1")]
    pub name: String,
    /// Inputs (2).
    #[prost(message, repeated, tag = "2")]
    pub input_arg: Vec<ArgDefProto>,
    /// Outputs (3).
    #[prost(message, repeated, tag = "3")]
    pub output_arg: Vec<ArgDefProto>,
    /// Control outputs (20).
    #[prost(string, repeated, tag = "20")]
    pub control_output: Vec<String>,
}

/// `tensorflow.OpDef.ArgDef`: one input or output of a signature.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ArgDefProto {
    /// The arg's name (1).
    #[prost(string, tag = "1")]
    pub name: String,
    /// A fixed dtype (3), when the arg has one.
    #[prost(enumeration = "crate::DataType", tag = "3")]
    pub r#type: i32,
    /// The attr naming its dtype (4), when it has one.
    #[prost(string, tag = "4")]
    pub type_attr: String,
    /// The attr naming how many tensors it is (5), for a list of one dtype.
    #[prost(string, tag = "5")]
    pub number_attr: String,
    /// The attr naming its dtypes (6), for a list of several.
    #[prost(string, tag = "6")]
    pub type_list_attr: String,
}
