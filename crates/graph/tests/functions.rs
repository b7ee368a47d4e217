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
fn a_function_that_calls_itself_is_refused_before_inlining() {
    for recursive in [1, 2] {
        let g = graph(Some(library(recursive)), "twice_square");
        let start = std::time::Instant::now();
        let e = Session::new(&g)
            .run(&[("x", Tensor::from(1.0f32))], &["y"], &[])
            .unwrap_err();
        assert!(matches!(e, Error::Function(_)), "{e}");
        assert!(
            e.to_string()
                .starts_with("function 'twice_square' calls itself (directly or through"),
            "{e}"
        );
        assert!(start.elapsed().as_secs() < 10);
    }
}

/// A graph calling `f0` on a float placeholder `x` (as `c`, read by `y`), through a library of
/// `levels` functions: `f<i>` calls `f<i+1>` `fanout` times (with `call_op`; results added) and
/// `f<levels-1>` doubles its argument.
fn nested_calls(levels: usize, fanout: usize, call_op: &str) -> GraphDef {
    let mut functions = Vec::with_capacity(levels);
    for i in 0..levels {
        let name = format!("f{i}");
        let nodes = if i + 1 == levels {
            vec![node("d", "AddV2", &["a", "a"], &[("T", float())])]
        } else {
            let callee = format!("f{}", i + 1);
            let mut nodes: Vec<_> = (0..fanout)
                .map(|k| node(&format!("c{k}"), call_op, &["a"], &[("f", func(&callee))]))
                .collect();
            let mut last = "c0:output:0".to_string();
            for k in 1..fanout {
                nodes.push(node(
                    &format!("s{k}"),
                    "AddV2",
                    &[&last, &format!("c{k}:output:0")],
                    &[("T", float())],
                ));
                last = format!("s{k}:z:0");
            }
            // The returned node first (`function` returns output 0 of the first node).
            if fanout > 1 {
                if let Some(ret) = nodes.pop() {
                    nodes.insert(0, ret);
                }
            }
            nodes
        };
        let mut f = function(&name, nodes);
        let first = &f.node_def[0];
        let out = if first.op == "AddV2" { "z" } else { "output" };
        f.ret = [("out".to_string(), format!("{}:{out}:0", first.name))]
            .into_iter()
            .collect();
        functions.push(f);
    }
    graph_def(
        vec![
            node("x", "Placeholder", &[], &[("dtype", float())]),
            node("c", "PartitionedCall", &["x"], &[("f", func("f0"))]),
            node("y", "Identity", &["c"], &[("T", float())]),
        ],
        Some(FunctionDefLibrary {
            function: functions,
        }),
    )
}

#[test]
fn function_calls_nested_500_deep_run() {
    // TensorFlow runs 100 and 500 nested calls; their inlined graph is 2 nodes a level.
    for levels in [100, 500] {
        let g = Graph::new();
        import_graph_def(&g, &nested_calls(levels, 1, "StatefulPartitionedCall")).unwrap();
        let out = Session::new(&g)
            .run(&[("x", Tensor::from(1.5f32))], &["y", "c"], &[])
            .unwrap();
        assert_eq!(out[0].as_slice::<f32>().unwrap(), &[3.0], "{levels} levels");
        assert_eq!(out[1], out[0]);
    }
}

#[test]
fn call_tree_inlining_to_2e40_nodes_is_refused_before_building() {
    // 40 levels of a function calling the next twice: 2^40 calls from a library of a few KB.
    let gd = nested_calls(40, 2, "PartitionedCall");
    assert!(gd.library.as_ref().unwrap().len() < 16 << 10);
    let g = Graph::new();
    import_graph_def(&g, &gd).unwrap();
    let start = std::time::Instant::now();
    let e = Session::new(&g)
        .run(&[("x", Tensor::from(1.0f32))], &["y"], &[])
        .unwrap_err();
    assert!(matches!(e, Error::Function(_)), "{e}");
    // Counted before anything is built: each of the 39 calling levels is two calls (a NoOp
    // and the callee's nodes each) and an add; the last level's body is one node.
    let size = (0..39).fold(1u64, |callee, _| 2 * (1 + callee) + 1);
    assert_eq!(
        e.to_string(),
        format!(
            "inlining the function calls would make a graph of {} nodes, more than 262144",
            size + 3
        )
    );
    assert!(start.elapsed().as_secs() < 5);
    // 9 levels (1,535 nodes) still run: 2^9 copies of x doubled.
    let g = Graph::new();
    import_graph_def(&g, &nested_calls(9, 2, "PartitionedCall")).unwrap();
    let out = Session::new(&g)
        .run(&[("x", Tensor::from(1.0f32))], &["y"], &[])
        .unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[512.0]);
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

fn float_list() -> AttrValue {
    AttrValue {
        value: Some(Value::List(Box::new(
            tensorcast_proto::attr_value::ListValue {
                r#type: vec![1],
                ..Default::default()
            },
        ))),
    }
}

/// `If(a, a)` calling `then` (and `otherwise`), as a function body's node `if`.
fn if_node(then: &str, otherwise: &str) -> tensorcast_proto::NodeDef {
    node(
        "if",
        "If",
        &["a", "a"],
        &[
            ("Tcond", float()),
            ("Tin", float_list()),
            ("Tout", float_list()),
            ("then_branch", func(then)),
            ("else_branch", func(otherwise)),
        ],
    )
}

/// A graph whose `y = If(x, x)` calls `f0`, each `f<i>` an `If` calling `f<i+1>` at run time
/// (`f<levels-1>` doubles its argument); with `recursive`, the last one calls `f0` again.
fn nested_ifs(levels: usize, recursive: bool) -> Graph {
    let mut functions: Vec<FunctionDef> = (0..levels)
        .map(|i| {
            let next = format!("f{}", (i + 1) % levels);
            if i + 1 < levels || recursive {
                function(&format!("f{i}"), vec![if_node(&next, &next)])
            } else {
                let mut f = function(
                    &format!("f{i}"),
                    vec![node("d", "AddV2", &["a", "a"], &[("T", float())])],
                );
                f.ret = [("out".to_string(), "d:z:0".to_string())]
                    .into_iter()
                    .collect();
                f
            }
        })
        .collect();
    functions.reverse();
    let mut top = if_node("f0", "f0");
    top.name = "y".into();
    top.input = vec!["x".into(), "x".into()];
    let gd = graph_def(
        vec![node("x", "Placeholder", &[], &[("dtype", float())]), top],
        Some(FunctionDefLibrary {
            function: functions,
        }),
    );
    let g = Graph::new();
    import_graph_def(&g, &gd).unwrap();
    g
}

#[test]
fn if_calls_nested_500_deep_run_on_a_small_stack() {
    // Each level is a run-time call (an `If` running a function that runs an `If`...): the
    // calls nest on stack grown on demand, not on the thread's 512 KiB.
    let run = |levels: usize| {
        let g = nested_ifs(levels, false);
        std::thread::Builder::new()
            .stack_size(512 << 10)
            .spawn(move || {
                Session::new(&g)
                    .run(&[("x", Tensor::from(1.5f32))], &["y"], &[])
                    .map(|o| o[0].as_slice::<f32>().unwrap().to_vec())
            })
            .unwrap()
            .join()
            .unwrap()
    };
    for levels in [100, 500] {
        assert_eq!(run(levels).unwrap(), vec![3.0], "{levels} levels");
    }
}

#[test]
fn if_calls_recursing_without_end_are_refused() {
    let g = nested_ifs(3, true);
    let e = Session::new(&g)
        .run(&[("x", Tensor::from(1.5f32))], &["y"], &[])
        .unwrap_err();
    assert!(matches!(e, Error::Function(_)), "{e}");
    assert!(
        e.to_string().ends_with(
            "calls itself (directly or through other functions) more than 64 levels deep"
        ),
        "{e}"
    );
}

#[test]
fn endless_while_loop_run_is_cancelled_with_a_cancelled_error() {
    // `While(x)` with `cond` always true and `body` adding one: it never ends by itself.
    let t = |name: &str, v: bool| {
        let mut n = node(name, "Const", &[], &[("dtype", AttrValue::of_type(10))]);
        n.attr.insert(
            "value".into(),
            AttrValue {
                value: Some(Value::Tensor(Box::new(tensorcast_proto::as_proto_field(
                    &Tensor::scalar_of(v),
                )))),
            },
        );
        n
    };
    let mut cond = function("cond", vec![t("t", true)]);
    cond.signature.as_mut().unwrap().output_arg[0].r#type = 10;
    cond.ret = [("out".to_string(), "t:output:0".to_string())]
        .into_iter()
        .collect();
    let mut body = function(
        "body",
        vec![node("d", "AddV2", &["a", "a"], &[("T", float())])],
    );
    body.ret = [("out".to_string(), "d:z:0".to_string())]
        .into_iter()
        .collect();
    let gd = graph_def(
        vec![
            node("x", "Placeholder", &[], &[("dtype", float())]),
            node(
                "w",
                "While",
                &["x"],
                &[
                    ("T", float_list()),
                    ("cond", func("cond")),
                    ("body", func("body")),
                ],
            ),
        ],
        Some(FunctionDefLibrary {
            function: vec![cond, body],
        }),
    );
    let g = Graph::new();
    import_graph_def(&g, &gd).unwrap();
    let session = Session::new(&g);
    let cancel = tensorcast_graph::Cancellation::new();
    let stop = cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        stop.cancel();
        std::time::Instant::now()
    });
    let e = session
        .run_cancellable(&[("x", Tensor::from(1.0f32))], &["w"], &[], &cancel)
        .unwrap_err();
    let stopped = std::time::Instant::now();
    let cancelled_at = canceller.join().unwrap();
    assert_eq!(e, Error::Cancelled);
    assert_eq!(e.code(), tensorcast_graph::Code::Cancelled);
    assert_eq!(e.to_string(), "Run call was cancelled");
    assert!(
        stopped.duration_since(cancelled_at) < std::time::Duration::from_secs(1),
        "stopped {:?} after the flag was set",
        stopped.duration_since(cancelled_at)
    );
}
