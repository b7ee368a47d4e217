//! GraphDef builders the graph tests share (both test binaries include this file).

#![allow(dead_code, reason = "each test binary uses its own subset")]

use tensorcast_proto::{tensor_shape_proto::Dim, AttrValue, GraphDef, NodeDef, TensorProto};
use tensorcast_proto::{TensorShapeProto, VersionDef};

/// A `NodeDef` with these inputs and attrs.
pub fn node(name: &str, op: &str, inputs: &[&str], attrs: &[(&str, AttrValue)]) -> NodeDef {
    NodeDef {
        name: name.into(),
        op: op.into(),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        attr: attrs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        ..Default::default()
    }
}

/// A `GraphDef` of `nodes`, producer 2474.
pub fn graph_def(nodes: Vec<NodeDef>) -> GraphDef {
    GraphDef {
        node: nodes,
        versions: Some(VersionDef {
            producer: 2474,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A shape proto of `dims`.
pub fn shape_proto(dims: &[i64]) -> TensorShapeProto {
    TensorShapeProto {
        dim: dims
            .iter()
            .map(|&size| Dim {
                size,
                name: String::new(),
            })
            .collect(),
        unknown_rank: false,
    }
}

/// A `Const` of `elements` values of `dtype` that carries at most one value (`float_val: 1`
/// when `one_value`): TensorFlow fills the rest.
pub fn fill_const(name: &str, dtype: i32, elements: i64, one_value: bool) -> NodeDef {
    let value = TensorProto {
        dtype,
        tensor_shape: Some(shape_proto(&[elements])),
        float_val: if one_value { vec![1.0] } else { Vec::new() },
        ..Default::default()
    };
    node(
        name,
        "Const",
        &[],
        &[
            ("dtype", AttrValue::of_type(dtype)),
            ("value", AttrValue::of_tensor(value)),
        ],
    )
}

/// A float placeholder `x` and a chain of `len` `Identity` nodes `n0`..: the smallest nodes a
/// GraphDef can hold.
pub fn identity_chain(len: usize) -> GraphDef {
    let mut nodes = vec![node(
        "x",
        "Placeholder",
        &[],
        &[("dtype", AttrValue::of_type(1))],
    )];
    for i in 0..len {
        let prev = if i == 0 {
            "x".to_string()
        } else {
            format!("n{}", i - 1)
        };
        nodes.push(node(
            &format!("n{i}"),
            "Identity",
            &[&prev],
            &[("T", AttrValue::of_type(1))],
        ));
    }
    graph_def(nodes)
}
