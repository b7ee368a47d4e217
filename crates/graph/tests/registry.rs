//! The op registry: TensorFlow's `OpDef`s validate imported nodes (list arguments, string
//! attrs with allowed values, minimums, every missing attr named), multi-output ops run, and
//! resource variables hold what a session assigns. Messages recorded from TensorFlow 2.21's
//! `import_graph_def` on the same GraphDefs.

use tensorcast_core::{DataType, Tensor};
use tensorcast_graph::{import_graph_def, Graph, Session};
use tensorcast_proto::attr_value::{ListValue, Value};
use tensorcast_proto::{AttrValue, NodeDef};

use tensorcast_testkit::graph_defs::{graph_def, node};

fn ty(d: DataType) -> AttrValue {
    AttrValue::of_type(d.number())
}

fn s(v: &str) -> AttrValue {
    AttrValue {
        value: Some(Value::S(v.as_bytes().to_vec().into())),
    }
}

fn ints(v: &[i64]) -> AttrValue {
    AttrValue {
        value: Some(Value::List(Box::new(ListValue {
            i: v.to_vec(),
            ..Default::default()
        }))),
    }
}

fn types(v: &[DataType]) -> AttrValue {
    AttrValue {
        value: Some(Value::List(Box::new(ListValue {
            r#type: v.iter().map(|d| d.number()).collect(),
            ..Default::default()
        }))),
    }
}

fn placeholder(name: &str, d: DataType) -> NodeDef {
    node(name, "Placeholder", &[], &[("dtype", ty(d))])
}

fn import_err(nodes: Vec<NodeDef>) -> String {
    let g = Graph::new();
    match import_graph_def(&g, &graph_def(nodes)) {
        Ok(()) => "imported".into(),
        Err(e) => e.to_string(),
    }
}

const CONV2D: &str = "Op<name=Conv2D; signature=input:T, filter:T -> output:T; attr=T:type,allowed=[DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE, DT_INT32]; attr=strides:list(int); attr=use_cudnn_on_gpu:bool,default=true; attr=padding:string,allowed=[\"SAME\", \"VALID\", \"EXPLICIT\"]; attr=explicit_paddings:list(int),default=[]; attr=data_format:string,default=\"NHWC\",allowed=[\"NHWC\", \"NCHW\"]; attr=dilations:list(int),default=[1, 1, 1, 1]>";
const CONCAT: &str = "Op<name=ConcatV2; signature=values:N*T, axis:Tidx -> output:T; attr=N:int,min=2; attr=T:type; attr=Tidx:type,default=DT_INT32,allowed=[DT_INT32, DT_INT64]>";

#[test]
fn every_missing_attr_is_named_sorted() {
    let e = import_err(vec![
        placeholder("a", DataType::FLOAT),
        node("c", "Conv2D", &["a", "a"], &[("T", ty(DataType::FLOAT))]),
    ]);
    assert_eq!(
        e,
        format!("NodeDef missing attrs 'padding', 'strides' from {CONV2D}")
    );
}

#[test]
fn a_string_attr_outside_its_list_is_refused() {
    let e = import_err(vec![
        placeholder("a", DataType::FLOAT),
        node(
            "c",
            "Conv2D",
            &["a", "a"],
            &[
                ("T", ty(DataType::FLOAT)),
                ("strides", ints(&[1, 1, 1, 1])),
                ("padding", s("FOO")),
            ],
        ),
    ]);
    assert_eq!(
        e,
        format!("Value for attr 'padding' of \"FOO\" is not in the list of allowed values: \"SAME\", \"VALID\", \"EXPLICIT\"\n\t; NodeDef: {{{{node c}}}}; {CONV2D}")
    );
}

fn axis() -> NodeDef {
    let mut n = node("ax", "Const", &[], &[("dtype", ty(DataType::INT32))]);
    n.attr.insert(
        "value".into(),
        AttrValue::of_tensor(tensorcast_proto::as_proto_field(&Tensor::from(0i32))),
    );
    n
}

#[test]
fn list_inputs_are_counted_by_their_attr() {
    let concat = |inputs: &[&str], n: i64| {
        import_err(vec![
            placeholder("a", DataType::FLOAT),
            axis(),
            node(
                "c",
                "ConcatV2",
                inputs,
                &[("T", ty(DataType::FLOAT)), ("N", AttrValue::of_int(n))],
            ),
        ])
    };
    assert_eq!(
        concat(&["a", "ax"], 1),
        format!("Value for attr 'N' of 1 must be at least minimum 2\n\t; NodeDef: {{{{node c}}}}; {CONCAT}")
    );
    assert_eq!(
        concat(&["a", "a", "ax"], 3),
        format!("NodeDef expected inputs 'float, float, float, int32' do not match 3 inputs specified; {CONCAT}; NodeDef: {{{{node c}}}}")
    );
    // A count no input list could justify is refused, not believed.
    let e = import_err(vec![
        placeholder("a", DataType::FLOAT),
        node(
            "u",
            "Unpack",
            &["a"],
            &[
                ("T", ty(DataType::FLOAT)),
                ("num", AttrValue::of_int(1 << 40)),
            ],
        ),
    ]);
    assert!(e.contains("more than 65536 outputs"), "{e}");
}

#[test]
fn identity_n_runs_every_output() {
    let g = Graph::new();
    import_graph_def(
        &g,
        &graph_def(vec![
            placeholder("a", DataType::FLOAT),
            placeholder("b", DataType::INT32),
            node(
                "c",
                "IdentityN",
                &["a", "b"],
                &[("T", types(&[DataType::FLOAT, DataType::INT32]))],
            ),
            node("s", "StopGradient", &["c:1"], &[("T", ty(DataType::INT32))]),
        ]),
    )
    .unwrap();
    let out = Session::new(&g)
        .run(
            &[("a", Tensor::from(1.5f32)), ("b", Tensor::from(2i32))],
            &["c:0", "c:1", "s"],
            &[],
        )
        .unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), [1.5]);
    assert_eq!(out[1].to_vec::<i32>().unwrap(), [2]);
    assert_eq!(out[2].to_vec::<i32>().unwrap(), [2]);
}

#[test]
fn placeholder_with_default_gives_its_input_unless_fed() {
    let g = Graph::new();
    let mut d = node("d", "Const", &[], &[("dtype", ty(DataType::FLOAT))]);
    d.attr.insert(
        "value".into(),
        AttrValue::of_tensor(tensorcast_proto::as_proto_field(&Tensor::from(3.0f32))),
    );
    import_graph_def(
        &g,
        &graph_def(vec![
            d,
            node(
                "p",
                "PlaceholderWithDefault",
                &["d"],
                &[
                    ("dtype", ty(DataType::FLOAT)),
                    (
                        "shape",
                        AttrValue::of_shape(tensorcast_testkit::graph_defs::shape_proto(&[])),
                    ),
                ],
            ),
        ]),
    )
    .unwrap();
    let s = Session::new(&g);
    assert_eq!(
        s.run(&[], &["p"], &[]).unwrap()[0].to_vec::<f32>().unwrap(),
        [3.0]
    );
    let fed = s.run(&[("p", Tensor::from(7.0f32))], &["p"], &[]).unwrap();
    assert_eq!(fed[0].to_vec::<f32>().unwrap(), [7.0]);
}

fn var_graph() -> Graph {
    let g = Graph::new();
    import_graph_def(
        &g,
        &graph_def(vec![
            node(
                "v",
                "VarHandleOp",
                &[],
                &[
                    ("dtype", ty(DataType::FLOAT)),
                    (
                        "shape",
                        AttrValue::of_shape(tensorcast_testkit::graph_defs::shape_proto(&[2])),
                    ),
                    ("shared_name", s("dense/kernel")),
                ],
            ),
            node(
                "r",
                "ReadVariableOp",
                &["v"],
                &[("dtype", ty(DataType::FLOAT))],
            ),
            placeholder("x", DataType::FLOAT),
            node(
                "assign",
                "AssignVariableOp",
                &["v", "x"],
                &[("dtype", ty(DataType::FLOAT))],
            ),
        ]),
    )
    .unwrap();
    g
}

#[test]
fn resource_variables_read_what_was_assigned() {
    let g = var_graph();
    let s = Session::new(&g);
    let e = s.run(&[], &["r"], &[]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Could not find variable dense/kernel."),
        "{e}"
    );
    assert_eq!(e.code(), tensorcast_graph::Code::FailedPrecondition);
    s.assign_variable("dense/kernel", Tensor::vector(&[1.0f32, 2.0]));
    assert_eq!(
        s.run(&[], &["r"], &[]).unwrap()[0].to_vec::<f32>().unwrap(),
        [1.0, 2.0]
    );
    // AssignVariableOp, run as a target, replaces the value.
    s.run(&[("x", Tensor::vector(&[5.0f32, 6.0]))], &[], &["assign"])
        .unwrap();
    assert_eq!(
        s.variable("dense/kernel").unwrap().to_vec::<f32>().unwrap(),
        [5.0, 6.0]
    );
    assert_eq!(s.num_variables(), 1);
    // A value of another dtype is refused with TensorFlow's text.
    let e = s
        .run(&[("x", Tensor::vector(&[1i32]))], &[], &["assign"])
        .unwrap_err();
    assert!(e.to_string().contains("float"), "{e}");
}

#[test]
fn registered_ops_without_a_kernel_are_reported_together() {
    let g = Graph::new();
    import_graph_def(
        &g,
        &graph_def(vec![
            placeholder("a", DataType::FLOAT),
            node("w", "Where", &["a"], &[("T", ty(DataType::FLOAT))]),
        ]),
    )
    .unwrap();
    let e = Session::new(&g)
        .run(&[("a", Tensor::from(1.0f32))], &["w"], &[])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "1 op this run needs has no kernel in tensorcast: Where (1 node)"
    );
}
