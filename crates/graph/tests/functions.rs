//! Function calls (`PartitionedCall` / `StatefulPartitionedCall`) run by inlining; TensorFlow's
//! own graphs with functions are in `tests/tf_observed/graph_functions.jsonl`.

use tensorcast_core::{DataType, Tensor};
use tensorcast_graph::{import_graph_def, Error, Graph, Session};
use tensorcast_proto::attr_value::Value;
use tensorcast_proto::{
    ArgDefProto, AttrValue, FunctionDef, FunctionDefLibrary, GraphDef, Message, NameAttrList,
    OpDefProto, VersionDef,
};

use tensorcast_testkit::graph_defs::node;

fn float() -> AttrValue {
    AttrValue::of_type(1)
}

fn func(name: &str) -> AttrValue {
    AttrValue {
        value: Some(Value::Func(Box::new(NameAttrList {
            name: name.into(),
            attr: Default::default(),
        }))),
    }
}

fn arg(name: &str) -> ArgDefProto {
    ArgDefProto {
        name: name.into(),
        r#type: 1,
        ..Default::default()
    }
}

/// `square(a) = a * a`, and `twice_square(a) = square(a) + square(a)` (a nested call).
fn library(recursive: u8) -> FunctionDefLibrary {
    let square = FunctionDef {
        signature: Some(OpDefProto {
            name: "square".into(),
            input_arg: vec![arg("a")],
            output_arg: vec![arg("out")],
            control_output: vec![],
        }),
        node_def: vec![node("m", "Mul", &["a", "a"], &[("T", float())])],
        ret: [("out".to_string(), "m:z:0".to_string())]
            .into_iter()
            .collect(),
        ..Default::default()
    };
    // 0: no recursion; 1: `s` calls the function itself; 2: `s` and `t` do.
    let callee = if recursive > 0 {
        "twice_square"
    } else {
        "square"
    };
    let callee_t = if recursive > 1 {
        "twice_square"
    } else {
        "square"
    };
    let twice = FunctionDef {
        signature: Some(OpDefProto {
            name: "twice_square".into(),
            input_arg: vec![arg("a")],
            output_arg: vec![arg("out")],
            control_output: vec![],
        }),
        node_def: vec![
            node("s", "PartitionedCall", &["a"], &[("f", func(callee))]),
            node(
                "t",
                "StatefulPartitionedCall",
                &["a"],
                &[("f", func(callee_t))],
            ),
            node(
                "sum",
                "AddV2",
                &["s:output:0", "t:output:0"],
                &[("T", float())],
            ),
        ],
        ret: [("out".to_string(), "sum:z:0".to_string())]
            .into_iter()
            .collect(),
        ..Default::default()
    };
    FunctionDefLibrary {
        function: vec![square, twice],
    }
}

/// A GraphDef of `nodes` with `library`.
fn graph_def(
    nodes: Vec<tensorcast_proto::NodeDef>,
    library: Option<FunctionDefLibrary>,
) -> GraphDef {
    GraphDef {
        node: nodes,
        library: library.map(|l| l.encode_to_vec().into()),
        versions: Some(VersionDef {
            producer: 2474,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn graph(library: Option<FunctionDefLibrary>, f: &str) -> Graph {
    let gd = graph_def(
        vec![
            node("x", "Placeholder", &[], &[("dtype", float())]),
            node("c", "PartitionedCall", &["x"], &[("f", func(f))]),
            node("y", "Identity", &["c", "^c"], &[("T", float())]),
        ],
        library,
    );
    let g = Graph::new();
    import_graph_def(&g, &gd).unwrap();
    // The library goes back out as it came in.
    assert_eq!(g.to_graph_def().library, gd.library);
    g
}

#[test]
fn a_call_runs_its_function_and_nested_calls_theirs() {
    let g = graph(Some(library(0)), "twice_square");
    let out = Session::new(&g)
        .run(
            &[("x", Tensor::vector(&[1.0f32, -2.0, 3.0]))],
            &["y", "c:0"],
            &["c"],
        )
        .unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[2.0, 8.0, 18.0]);
    assert_eq!(out[1], out[0]);
    assert_eq!(out[0].dtype(), DataType::FLOAT);
}

#[test]
fn a_call_to_a_function_the_library_lacks_is_a_clear_error() {
    let g = graph(Some(library(0)), "cube");
    let e = Session::new(&g)
        .run(&[("x", Tensor::from(1.0f32))], &["y"], &[])
        .unwrap_err();
    assert!(matches!(e, Error::Function(_)), "{e}");
    assert_eq!(
        e.to_string(),
        "node 'c' calls function 'cube', which the graph's library does not define"
    );
    let g = graph(None, "square");
    assert!(Session::new(&g).run(&[], &["y"], &[]).is_err());
}

#[test]
fn a_function_that_calls_itself_stops_at_the_nesting_limit() {
    let g = graph(Some(library(1)), "twice_square");
    let e = Session::new(&g)
        .run(&[("x", Tensor::from(1.0f32))], &["y"], &[])
        .unwrap_err();
    assert!(e.to_string().contains("nest deeper than 64"), "{e}");
}

#[test]
fn a_function_that_calls_itself_twice_stops_at_the_node_limit() {
    let g = graph(Some(library(2)), "twice_square");
    let start = std::time::Instant::now();
    let e = Session::new(&g)
        .run(&[("x", Tensor::from(1.0f32))], &["y"], &[])
        .unwrap_err();
    // Each level calls itself twice: the node limit stops it long before 2^64 nodes.
    assert!(e.to_string().contains("more than 262144 nodes"), "{e}");
    assert!(start.elapsed().as_secs() < 10);
}

/// A function of `nodes` from `a` (float) to `out` (the first node's output 0).
fn function(name: &str, nodes: Vec<tensorcast_proto::NodeDef>) -> FunctionDef {
    let ret = format!("{}:output:0", nodes[0].name);
    FunctionDef {
        signature: Some(OpDefProto {
            name: name.into(),
            input_arg: vec![arg("a")],
            output_arg: vec![arg("out")],
            control_output: vec![],
        }),
        node_def: nodes,
        ret: [("out".to_string(), ret)].into_iter().collect(),
        ..Default::default()
    }
}

#[test]
fn ops_without_a_kernel_inside_called_functions_are_listed_before_anything_runs() {
    // `w = While(x)`: its `cond` and `body` are functions; `body` runs an `If` whose branches are
    // functions, one of which calls a third through `StatefulPartitionedCall`, and so does the
    // other branch (`deep` counts once). `OpA`/`OpB`/`OpC` have no kernel; `Mul` has one.
    let f = |name: &str, op: &str| node(name, op, &["a"], &[("T", float())]);
    let call = |name: &str, op: &str, callee: &str| node(name, op, &["a"], &[("f", func(callee))]);
    let library = FunctionDefLibrary {
        function: vec![
            function("cond", vec![f("c", "OpC")]),
            function(
                "body",
                vec![
                    f("b1", "OpA"),
                    f("b2", "OpA"),
                    node(
                        "if",
                        "If",
                        &["a", "a"],
                        &[
                            ("then_branch", func("inner")),
                            ("else_branch", func("inner2")),
                        ],
                    ),
                ],
            ),
            function(
                "inner",
                vec![f("i", "OpB"), call("d", "StatefulPartitionedCall", "deep")],
            ),
            function(
                "inner2",
                vec![f("j", "OpC"), call("d", "PartitionedCall", "deep")],
            ),
            function("deep", vec![f("k", "OpA"), f("m", "Mul")]),
            // Not called by anything: not counted.
            function("unused", vec![f("u", "OpD")]),
        ],
    };
    let types = AttrValue {
        value: Some(Value::List(Box::new(
            tensorcast_proto::attr_value::ListValue {
                r#type: vec![1],
                ..Default::default()
            },
        ))),
    };
    let gd = graph_def(
        vec![
            node("x", "Placeholder", &[], &[("dtype", float())]),
            node(
                "w",
                "While",
                &["x"],
                &[("T", types), ("cond", func("cond")), ("body", func("body"))],
            ),
        ],
        Some(library),
    );
    let g = Graph::new();
    import_graph_def(&g, &gd).unwrap();
    let want = vec![
        ("OpA".to_string(), 3),
        ("OpB".to_string(), 1),
        ("OpC".to_string(), 2),
    ];
    assert_eq!(tensorcast_graph::ops_without_kernel(&g).unwrap(), want);
    let e = Session::new(&g)
        .run(&[("x", Tensor::scalar_of(1.0f32))], &["w"], &[])
        .unwrap_err();
    assert!(matches!(&e, Error::MissingKernels(m) if *m == want), "{e}");
    assert_eq!(
        e.to_string(),
        "3 ops this run needs have no kernel in tensorcast: OpA (3 nodes), OpB (1 node), \
         OpC (2 nodes)"
    );
}
