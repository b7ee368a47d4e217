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

/// A `Const` holding `value`.
pub fn const_of(name: &str, value: &tensorcast_core::Tensor) -> NodeDef {
    node(
        name,
        "Const",
        &[],
        &[
            ("dtype", AttrValue::of_type(value.dtype().number())),
            (
                "value",
                AttrValue::of_tensor(tensorcast_proto::as_proto_field(value)),
            ),
        ],
    )
}

/// The TensorList ops' attrs: `element_dtype` float, and `extra`.
fn list_attrs<'a>(extra: &[(&'a str, AttrValue)]) -> Vec<(&'a str, AttrValue)> {
    let mut v = vec![("element_dtype", AttrValue::of_type(1))];
    v.extend(extra.iter().cloned());
    v
}

/// `list = TensorListReserve(element_shape, n)` of floats, with its two constants
/// (`element_shape` a vector of `dims`, or the scalar -1 for an unknown shape).
pub fn tensor_list_reserve(n: i32, dims: Option<&[i32]>) -> Vec<NodeDef> {
    use tensorcast_core::Tensor;
    let shape = match dims {
        Some(d) => Tensor::vector(d),
        None => Tensor::scalar_of(-1i32),
    };
    vec![
        const_of("element_shape", &shape),
        const_of("n", &Tensor::scalar_of(n)),
        node(
            "list",
            "TensorListReserve",
            &["element_shape", "n"],
            &list_attrs(&[("shape_type", AttrValue::of_type(3))]),
        ),
    ]
}

/// `set = TensorListSetItem(list, index, item)` (resizing when `resize`), item a float scalar.
pub fn tensor_list_set_item(index: i32, resize: bool) -> Vec<NodeDef> {
    use tensorcast_core::Tensor;
    vec![
        const_of("index", &Tensor::scalar_of(index)),
        const_of("item", &Tensor::scalar_of(1.0f32)),
        node(
            "set",
            "TensorListSetItem",
            &["list", "index", "item"],
            &list_attrs(&[("resize_if_index_out_of_bounds", AttrValue::of_bool(resize))]),
        ),
    ]
}

/// `stack = TensorListStack(input, element_shape)` and `get = TensorListGetItem(input, 0,
/// element_shape)`.
pub fn tensor_list_reads(input: &str) -> Vec<NodeDef> {
    use tensorcast_core::Tensor;
    vec![
        const_of("zero", &Tensor::scalar_of(0i32)),
        node(
            "stack",
            "TensorListStack",
            &[input, "element_shape"],
            &list_attrs(&[("num_elements", AttrValue::of_int(-1))]),
        ),
        node(
            "get",
            "TensorListGetItem",
            &[input, "zero", "element_shape"],
            &list_attrs(&[]),
        ),
    ]
}

/// Writes a SavedModel folder `dir` whose meta graph (tag `serve`) is `graph` and whose
/// `serving_default` signature has the given `(key, tensor name, dtype)` inputs and outputs (no
/// variables).
pub fn write_saved_model(
    dir: &std::path::Path,
    graph: GraphDef,
    inputs: &[(&str, &str, i32)],
    outputs: &[(&str, &str, i32)],
) -> std::io::Result<()> {
    use tensorcast_proto::meta_graph_def::MetaInfoDef;
    use tensorcast_proto::{tensor_info, MetaGraphDef, SavedModel, SignatureDef, TensorInfo};
    let infos = |list: &[(&str, &str, i32)]| {
        list.iter()
            .map(|(key, name, dtype)| {
                (
                    key.to_string(),
                    TensorInfo {
                        encoding: Some(tensor_info::Encoding::Name(name.to_string())),
                        dtype: *dtype,
                        tensor_shape: None,
                    },
                )
            })
            .collect()
    };
    let meta = MetaGraphDef {
        meta_info_def: Some(MetaInfoDef {
            tags: vec!["serve".into()],
            ..Default::default()
        }),
        graph_def: Some(graph),
        signature_def: [(
            "serving_default".to_string(),
            SignatureDef {
                inputs: infos(inputs),
                outputs: infos(outputs),
                method_name: "tensorflow/serving/predict".into(),
                defaults: Default::default(),
            },
        )]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    let sm = SavedModel {
        saved_model_schema_version: 1,
        meta_graphs: vec![meta],
    };
    std::fs::create_dir_all(dir)?;
    std::fs::write(
        dir.join("saved_model.pb"),
        tensorcast_proto::Message::encode_to_vec(&sm),
    )
}
