//! `GraphDef` builders the graph tests share: nodes, graphs, constants, long chains (the graph
//! crate's tests and the CLI's).

use tensorcast_proto::{AttrValue, GraphDef, NodeDef, TensorProto};
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
    tensorcast_proto::dims_to_proto(dims)
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

/// `s = Shape(BroadcastTo(x, [16384, 65536]))` of a `[1, -1]` float placeholder `x` (the
/// broadcast would be 4 GiB), and a value of `x`.
pub fn shape_of_huge_broadcast(
    root: &tensorcast_graph::Scope,
) -> (tensorcast_graph::ops::Shape, tensorcast_core::Tensor) {
    use tensorcast_core::{DataType, PartialTensorShape, Tensor, TensorShape};
    use tensorcast_graph::ops::{BroadcastTo, Placeholder, PlaceholderAttrs, Shape};
    let x = Placeholder::with_attrs(
        &root.with_op_name("x"),
        DataType::FLOAT,
        PlaceholderAttrs::default().shape(PartialTensorShape::new(&[1, -1]).unwrap()),
    )
    .unwrap();
    let b = BroadcastTo::new(root, &x, [16384i32, 65536]).unwrap();
    let s = Shape::new(&root.with_op_name("s"), &b).unwrap();
    let xv = Tensor::from_vec(vec![1.0f32; 65536], TensorShape::new(&[1, 65536]).unwrap()).unwrap();
    (s, xv)
}
