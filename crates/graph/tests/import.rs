//! GraphDef import: TensorFlow's validation and messages.

use tensorcast_core::{DataType, Tensor};
use tensorcast_graph::ops::{AddV2, Const, Placeholder};
use tensorcast_graph::{
    import_graph_def, import_graph_def_bytes, Code, Error, Graph, Scope, Session,
};
use tensorcast_proto::{AttrValue, GraphDef, NodeDef, VersionDef};

use tensorcast_testkit::graph_defs::node;

fn ty(d: DataType) -> AttrValue {
    AttrValue::of_type(d.number())
}

fn placeholder(name: &str) -> NodeDef {
    node(name, "Placeholder", &[], &[("dtype", ty(DataType::FLOAT))])
}

fn add(name: &str, a: &str, b: &str) -> NodeDef {
    node(name, "AddV2", &[a, b], &[("T", ty(DataType::FLOAT))])
}

fn import(nodes: Vec<NodeDef>) -> Result<Graph, Error> {
    let g = Graph::new();
    import_graph_def(
        &g,
        &GraphDef {
            node: nodes,
            ..Default::default()
        },
    )?;
    Ok(g)
}

fn err(nodes: Vec<NodeDef>) -> String {
    import(nodes).unwrap_err().to_string()
}

#[test]
fn import_nodes_in_reverse_order_are_accepted_in_tensorflows_import_order() {
    // TensorFlow's importer adds each node once its inputs are in, taking the first ready one
    // in GraphDef order; its graph (and `as_graph_def`) lists them so. TF1 conditionals are
    // written this way (`cond/mul` before `cond/mul/Switch`); the recorded re-exports in
    // tests/tf_observed/graph_control_flow.jsonl check it against TensorFlow.
    let g = import(vec![add("y", "x", "x"), placeholder("x")]).unwrap();
    let names: Vec<String> = g.nodes().iter().map(|n| n.name().to_string()).collect();
    assert_eq!(names, ["x", "y"]);
    assert_eq!(
        g.operation_by_name("x").unwrap().node().attrs().len(),
        2,
        "shape default added"
    );
}

#[test]
fn import_errors_carry_tensorflows_messages() {
    assert_eq!(
        err(vec![placeholder("a b")]),
        "Node 'a b': Node name contains invalid characters"
    );
    assert_eq!(
        err(vec![placeholder("_x")]),
        "Node '_x': Node name contains invalid characters"
    );
    assert!(import(vec![
        placeholder("a-b"),
        placeholder(".x"),
        placeholder("a/")
    ])
    .is_ok());
    assert_eq!(
        err(vec![placeholder("x"), placeholder("x")]),
        "Node 'x' is not unique"
    );
    assert_eq!(
        err(vec![placeholder("x"), add("y", "x", "zz")]),
        "Node 'y': Unknown input node 'zz'"
    );
    assert_eq!(
        err(vec![placeholder("c"), add("y", "c:1", "c")]),
        "Node 'y': Connecting to invalid output 1 of source node c which has 1 outputs."
    );
    assert_eq!(
        err(vec![placeholder("x"), add("y", "^x", "x")]),
        "Node 'y': Control dependencies must come after regular dependencies"
    );
    let mut three = add("y", "x", "x");
    three.input.push("x".into());
    let e = err(vec![placeholder("x"), three]);
    assert!(
        e.starts_with(
            "NodeDef expected inputs 'float, float' do not match 3 inputs specified; Op<name=AddV2"
        ),
        "{e}"
    );
    let no_t = node("y", "AddV2", &["x", "x"], &[]);
    assert!(err(vec![placeholder("x"), no_t])
        .starts_with("NodeDef missing attr 'T' from Op<name=AddV2"));
    let int = node("y", "AddV2", &["x", "x"], &[("T", ty(DataType::INT32))]);
    assert_eq!(
        err(vec![placeholder("x"), int]),
        "Input 0 of node y was passed float from x:0 incompatible with expected int32."
    );
}

#[test]
fn import_cycles_and_self_loops_are_refused() {
    assert_eq!(
        err(vec![add("a", "b", "b"), add("b", "a", "a")]),
        "2 nodes in a cycle"
    );
    assert_eq!(err(vec![add("a", "a", "a")]), "1 nodes in a cycle");
    let mut ctl = placeholder("p");
    ctl.input.push("^p".into());
    assert_eq!(err(vec![ctl]), "1 nodes in a cycle");
}

#[test]
fn import_versions_are_checked() {
    let g = Graph::new();
    let mut gd = GraphDef {
        node: vec![placeholder("x")],
        ..Default::default()
    };
    gd.versions = Some(VersionDef {
        producer: 2474,
        min_consumer: 3000,
        bad_consumers: vec![],
    });
    assert_eq!(
        import_graph_def(&g, &gd).unwrap_err().to_string(),
        "GraphDef min consumer version 3000 above current version 2474 for TensorFlow 2.21.0.  Please upgrade TensorFlow."
    );
    gd.versions = Some(VersionDef {
        producer: 2474,
        min_consumer: 0,
        bad_consumers: vec![2474],
    });
    assert_eq!(
        import_graph_def(&g, &gd).unwrap_err().to_string(),
        "GraphDef disallows consumer version 2474.  Please upgrade TensorFlow: this version is likely buggy."
    );
    gd.versions = Some(VersionDef {
        producer: 21,
        ..Default::default()
    });
    gd.node[0]
        .attr
        .insert("shape".into(), AttrValue::of_shape(Default::default()));
    import_graph_def(&g, &gd).unwrap();
    assert_eq!(g.versions().producer, 21);
    // Legacy rule: producer <= 21 reads a dimensionless shape attr as unknown rank.
    assert_eq!(
        g.operation_by_name("x")
            .unwrap()
            .output(0)
            .shape()
            .to_string(),
        "<unknown>"
    );
}

#[test]
fn unknown_attrs_are_kept_and_unknown_ops_fail_only_when_run() {
    let mut p = placeholder("x");
    p.attr.insert("foo".into(), AttrValue::of_int(3));
    p.attr.insert("_bar".into(), AttrValue::of_bool(true));
    let other = node("n", "NoSuchOp", &["x"], &[]);
    let y = add("y", "x", "x");
    let g = import(vec![p, other, y]).unwrap();
    let bytes = g.to_graph_def_bytes();
    let again = Graph::new();
    import_graph_def_bytes(&again, &bytes).unwrap();
    assert_eq!(again.to_graph_def_bytes(), bytes);
    assert!(g
        .operation_by_name("x")
        .unwrap()
        .node()
        .attrs()
        .contains_key("foo"));
    let s = Session::new(&g);
    let e = s
        .run(&[("x", Tensor::from(1.0f32))], &["n:0"], &[])
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    assert_eq!(
        e.to_string(),
        "1 op this run needs has no kernel in tensorcast: NoSuchOp (1 node)"
    );
}

#[test]
fn import_of_a_deep_chain_needs_no_stack_and_runs() {
    let mut nodes = vec![node(
        "n0",
        "Const",
        &[],
        &[
            ("dtype", ty(DataType::INT32)),
            (
                "value",
                AttrValue::of_tensor(tensorcast_proto::as_proto_field(&Tensor::from(7i32))),
            ),
        ],
    )];
    for i in 1..20_000 {
        nodes.push(node(
            &format!("n{i}"),
            "Identity",
            &[&format!("n{}", i - 1)],
            &[("T", ty(DataType::INT32))],
        ));
    }
    nodes.reverse();
    let g = import(nodes).unwrap();
    let out = Session::new(&g).run(&[], &["n19999:0"], &[]).unwrap();
    assert_eq!(out[0], Tensor::from(7i32));
}

#[test]
fn export_import_export_is_identity_for_built_graphs() {
    let root = Scope::new_root_scope();
    let x = Placeholder::new(&root.with_op_name("x"), DataType::FLOAT).unwrap();
    let c = Const::new(&root.with_device("/device:CPU:0"), [1.0f32, 2.0]).unwrap();
    AddV2::new(&root.with_control_dependencies([&c.operation]), &x, &c).unwrap();
    let bytes = root.graph().to_graph_def_bytes();
    let g = Graph::new();
    import_graph_def_bytes(&g, &bytes).unwrap();
    assert_eq!(g.to_graph_def_bytes(), bytes);
}

#[test]
fn garbage_bytes_are_a_decode_error() {
    let g = Graph::new();
    assert!(matches!(
        import_graph_def_bytes(&g, &[0x0a, 0xff, 0xff]),
        Err(Error::Decode(_))
    ));
    assert_eq!(g.num_nodes(), 0);
}
