//! The graph layer under hostile and careless input (issue 17): each class of finding has its
//! regression tests here (memory bounds are in `tests/peak_memory.rs`, the CLI's in the CLI's
//! `tests/hostile.rs`).

use tensorcast_core::{DataType, Tensor, TensorShape};
use tensorcast_graph::ops::{AddV2, BroadcastTo, Identity, Mul, Placeholder};
use tensorcast_graph::{
    import_graph_def, optimize_graph_def, Error, Graph, Scope, Session, SessionOptions,
};
use tensorcast_proto::{AttrValue, GraphDef, NodeDef};

use tensorcast_testkit::graph_defs::{graph_def, node, shape_proto};
use tensorcast_testkit::graphs::placeholder_broadcast;

fn ty(d: i32) -> AttrValue {
    AttrValue::of_type(d)
}

fn import_err(gd: &GraphDef) -> String {
    import_graph_def(&Graph::new(), gd).unwrap_err().to_string()
}

fn shape_attr(dims: &[i64]) -> AttrValue {
    AttrValue::of_shape(shape_proto(dims))
}

fn placeholder(name: &str, dims: &[i64]) -> NodeDef {
    node(
        name,
        "Placeholder",
        &[],
        &[("dtype", ty(1)), ("shape", shape_attr(dims))],
    )
}

// ---- 13: import refuses what TensorFlow's import refuses, with its messages ----------------

#[test]
fn import_negative_producer_is_refused_as_tensorflow_refuses_it() {
    let mut gd = graph_def(vec![placeholder("x", &[1])]);
    gd.versions.as_mut().unwrap().producer = -1;
    assert_eq!(
        import_err(&gd),
        "GraphDef producer version -1 below min producer 0 supported by TensorFlow 2.21.0.  \
         Please regenerate your graph."
    );
}

#[test]
fn import_empty_op_type_is_refused() {
    let gd = graph_def(vec![node("y", "", &[], &[])]);
    assert_eq!(import_err(&gd), "Node 'y' does not specify an operation");
}

#[test]
fn import_dtype_enums_that_do_not_exist_or_are_refs_are_refused() {
    let summary = "Op<name=Placeholder; signature= -> output:dtype; attr=dtype:type; \
                   attr=shape:shape,default=<unknown>>";
    let gd = graph_def(vec![node("x", "Placeholder", &[], &[("dtype", ty(1000))])]);
    assert_eq!(
        import_err(&gd),
        format!(
            "AttrValue has invalid DataType enum: 1000\n\t for attr 'dtype'\n\t; NodeDef: \
             {{{{node x}}}}; {summary}"
        )
    );
    let gd = graph_def(vec![node("x", "Placeholder", &[], &[("dtype", ty(101))])]);
    assert_eq!(
        import_err(&gd),
        format!(
            "AttrValue must not have reference type value of float_ref\n\t for attr 'dtype'\n\t\
             ; NodeDef: {{{{node x}}}}; {summary}"
        )
    );
}

#[test]
fn import_shapes_beyond_tensorflows_limits_are_refused() {
    let too_many = vec![1i64; 255];
    let msg = import_err(&graph_def(vec![placeholder("x", &too_many)]));
    assert!(
        msg.starts_with("Shape [1,1,") && msg.ends_with(",1] has too many dimensions"),
        "{msg}"
    );
    assert!(import_graph_def(&Graph::new(), &graph_def(vec![placeholder("x", &[1; 254])])).is_ok());
    assert_eq!(
        import_err(&graph_def(vec![placeholder("x", &[1 << 62, 4])])),
        "Shape [4611686018427387904,4] is too large (more than 2**63 - 1 entries)"
    );
    assert_eq!(
        import_err(&graph_def(vec![placeholder("x", &[-5])])),
        "Shape [-5] has dimensions with values below -1 (where -1 means unknown)"
    );
}

#[test]
fn import_input_names_are_reported_as_written() {
    let id = |input: &str| {
        node(
            "y",
            "Identity",
            &["x", input][usize::from(input.starts_with('^'))..],
            &[("T", ty(1))],
        )
    };
    // An index too large for TensorFlow's parser leaves the whole string as the node name.
    let gd = graph_def(vec![
        placeholder("x", &[1]),
        id("x:99999999999999999999999"),
    ]);
    assert_eq!(
        import_err(&gd),
        "Node 'y': Unknown input node 'x:99999999999999999999999'"
    );
    // A control input is named with its caret.
    let gd = graph_def(vec![
        placeholder("x", &[1]),
        node("y", "Identity", &["x", "^z"], &[("T", ty(1))]),
    ]);
    assert_eq!(import_err(&gd), "Node 'y': Unknown input node '^z'");
}

// ---- 3: the rewrite decides on the rewritten graph ------------------------------------------

/// Runs `gd` unoptimized (no session fusion either) and returns the fetched tensors.
fn run(gd: &GraphDef, feeds: &[(&str, Tensor)], fetches: &[&str]) -> Vec<Tensor> {
    let g = Graph::new();
    import_graph_def(&g, gd).unwrap();
    Session::with_options(
        &g,
        SessionOptions {
            optimize: false,
            ..SessionOptions::default()
        },
    )
    .run(feeds, fetches, &[])
    .unwrap()
}

fn small_broadcast_graph(two_broadcasts: bool) -> (GraphDef, Tensor) {
    let (root, x, b) = placeholder_broadcast();
    let other = if two_broadcasts {
        BroadcastTo::new(&root.with_op_name("b2"), &x, [2i32, 3])
            .unwrap()
            .output
    } else {
        b.clone()
    };
    AddV2::new(&root.with_op_name("y"), &b, &other).unwrap();
    let gd = root.to_graph_def().unwrap();
    let xv = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], TensorShape::new(&[1, 3]).unwrap()).unwrap();
    (gd, xv)
}

#[test]
fn optimize_add_of_one_broadcast_with_itself_keeps_the_output_shape() {
    let (gd, xv) = small_broadcast_graph(false);
    let (opt, removed) = optimize_graph_def(&gd, &[]).unwrap();
    assert!(removed.is_empty(), "removed {removed:?}");
    let a = run(&gd, &[("x", xv.clone())], &["y"]);
    let b = run(&opt, &[("x", xv)], &["y"]);
    assert_eq!(a, b);
    assert_eq!(b[0].shape().dim_sizes(), &[2, 3]);
}

#[test]
fn optimize_two_broadcasts_into_one_op_removes_only_what_keeps_the_shape() {
    let (gd, xv) = small_broadcast_graph(true);
    let (opt, removed) = optimize_graph_def(&gd, &[]).unwrap();
    assert_eq!(removed.len(), 1, "removed {removed:?}");
    let a = run(&gd, &[("x", xv.clone())], &["y"]);
    let b = run(&opt, &[("x", xv)], &["y"]);
    assert_eq!(a, b);
    assert_eq!(b[0].shape().dim_sizes(), &[2, 3]);
}

// ---- 8, 10, 11: building refuses foreign operations, missing outputs, invalid names ---------

#[test]
fn control_dependency_on_another_graphs_operation_is_refused() {
    let other = Scope::new_root_scope();
    let foreign = Placeholder::new(&other.with_op_name("f"), DataType::FLOAT).unwrap();
    let root = Scope::new_root_scope();
    let x = Placeholder::new(&root.with_op_name("x"), DataType::FLOAT).unwrap();
    let scoped = root.with_control_dependencies([&foreign.operation]);
    let e = Identity::new(&scoped, &x).unwrap_err();
    assert!(
        matches!(e, Error::ForeignOperation(ref n) if n == "f"),
        "{e}"
    );
    assert!(!root.ok(), "the scope's status records the error");
    // The graph has no node depending on the foreign one, so running it cannot go wrong.
    assert_eq!(root.graph().num_nodes(), 1);
}

#[test]
fn colocation_with_another_graphs_operation_is_refused() {
    let other = Scope::new_root_scope();
    let foreign = Placeholder::new(&other.with_op_name("f"), DataType::FLOAT).unwrap();
    let root = Scope::new_root_scope();
    let e = Placeholder::new(&root.colocate_with(&foreign.operation), DataType::FLOAT).unwrap_err();
    assert!(matches!(e, Error::ForeignOperation(_)), "{e}");
}

#[test]
fn session_refuses_outputs_of_another_graph() {
    let other = Scope::new_root_scope();
    let foreign = Placeholder::new(&other.with_op_name("x"), DataType::FLOAT).unwrap();
    let root = Scope::new_root_scope();
    let _x = Placeholder::new(&root.with_op_name("x"), DataType::FLOAT).unwrap();
    let e = Session::new(root.graph())
        .run_outputs(
            &[(&foreign.output, Tensor::from(1.0f32))],
            &[&foreign.output],
        )
        .unwrap_err();
    assert!(matches!(e, Error::ForeignOutput(_)), "{e}");
}

#[test]
fn building_on_an_output_index_the_producer_lacks_is_refused() {
    let root = Scope::new_root_scope();
    let x = Placeholder::new(&root.with_op_name("x"), DataType::FLOAT).unwrap();
    let e = Identity::new(&root.with_op_name("y"), x.operation.output(99)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Node 'y': Connecting to invalid output 99 of source node x which has 1 outputs."
    );
    assert_eq!(root.graph().num_nodes(), 1);
}

#[test]
fn op_names_tensorflow_rejects_are_refused() {
    for bad in ["", "a:0", "^a", "a\"b", "a\nb", "_a", "a b"] {
        let root = Scope::new_root_scope();
        let e = Placeholder::new(&root.with_op_name(bad), DataType::FLOAT).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("Node '{bad}': Node name contains invalid characters")
        );
    }
    let root = Scope::new_root_scope();
    for good in ["a", "A.b-c/d>e_f", ".x", "0"] {
        Placeholder::new(&root.with_op_name(good), DataType::FLOAT).unwrap();
    }
}

// ---- 5: the session checks kernels and constant bytes before decoding anything -------------

fn fill_const(name: &str, dtype: i32, elements: i64) -> NodeDef {
    tensorcast_testkit::graph_defs::fill_const(name, dtype, elements, true)
}

#[test]
fn session_reports_every_missing_kernel_before_running() {
    let gd = graph_def(vec![
        placeholder("x", &[1]),
        node("a", "Zorble", &["x", "x"], &[]),
        node("b", "Zorble", &["a", "x"], &[]),
        node("c", "Blorp", &["b"], &[]),
        fill_const("big", 1, 1 << 40),
        node("y", "Frobnicate", &["c", "big"], &[]),
    ]);
    let g = Graph::new();
    import_graph_def(&g, &gd).unwrap();
    let e = Session::new(&g)
        .run(&[("x", Tensor::from(1.0f32))], &["y"], &[])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "3 ops this run needs have no kernel in tensorcast: Blorp (1 node), Frobnicate (1 node), \
         Zorble (2 nodes)"
    );
    assert_eq!(e.code(), tensorcast_graph::Code::NotFound);
}

#[test]
fn session_refuses_constants_beyond_its_budget_before_decoding_them() {
    let gd = graph_def(vec![
        fill_const("a", 1, 1 << 18),
        fill_const("b", 1, 1 << 18),
        node("y", "AddV2", &["a", "b"], &[("T", ty(1))]),
    ]);
    let g = Graph::new();
    import_graph_def(&g, &gd).unwrap();
    let small = SessionOptions {
        max_constant_bytes: 1 << 20,
        ..SessionOptions::default()
    };
    let e = Session::with_options(&g, small)
        .run(&[], &["y"], &[])
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::ConstantBudget {
                needed: 2_097_152,
                limit: 1_048_576
            }
        ),
        "{e}"
    );
    let out = Session::new(&g).run(&[], &["y"], &[]).unwrap();
    assert_eq!(out[0].num_elements(), 1 << 18);
}

// ---- 16: a fed value for an unknown op's output is checked against its consumers ----------

#[test]
fn fed_value_for_an_unknown_ops_output_is_checked_against_the_consumer() {
    let gd = graph_def(vec![
        node("u", "SomethingUnknown", &[], &[]),
        node("y", "Identity", &["u"], &[("T", ty(1))]),
    ]);
    let g = Graph::new();
    import_graph_def(&g, &gd).unwrap();
    let s = Session::new(&g);
    let e = s
        .run(&[("u", Tensor::vector(&[1i32, 2]))], &["y"], &[])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Input 0 of node y was passed int32 from u:0 incompatible with expected float."
    );
    let ok = s
        .run(&[("u", Tensor::vector(&[1.0f32, 2.0]))], &["y"], &[])
        .unwrap();
    assert_eq!(ok[0].dtype(), DataType::FLOAT);
}

// ---- 15: Shape of a broadcast reads its shape, not its values ------------------------------

#[test]
fn shape_of_a_huge_lazy_broadcast_is_computed_without_materialising_it() {
    let root = Scope::new_root_scope();
    let (s, xv) = tensorcast_testkit::graph_defs::shape_of_huge_broadcast(&root);
    let m = Mul::new(&root.with_op_name("m"), &s, 2i32).unwrap();
    let start = std::time::Instant::now();
    let out = Session::new(root.graph())
        .run(&[("x", xv)], &[&m.z.name()], &[])
        .unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), &[32768, 131072]);
    assert!(start.elapsed().as_secs_f64() < 5.0);
}

// ---- issue 22 groundwork: NoOp and control-only targets -----------------------------------

#[test]
fn noop_runs_as_a_target_and_as_a_control_input() {
    let root = Scope::new_root_scope();
    let x = Placeholder::new(&root.with_op_name("x"), DataType::FLOAT).unwrap();
    let init = tensorcast_graph::ops::NoOp::new(&root.with_op_name("init")).unwrap();
    let y = Identity::new(
        &root
            .with_op_name("y")
            .with_control_dependencies([&init.operation]),
        &x,
    )
    .unwrap();
    assert_eq!(y.node().inputs(), ["x", "^init"]);
    assert_eq!(init.operation.num_outputs(), 0);
    let s = Session::new(root.graph());
    let out = s
        .run(&[("x", Tensor::from(2.0f32))], &["y"], &["init"])
        .unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[2.0]);
    let e = s.run(&[], &["init"], &[]).unwrap_err();
    assert!(e.to_string().contains("only has 0 outputs"), "{e}");
}

// ---- issue 18: an op whose output no allocator could give fails with TensorFlow's text -----

#[test]
fn session_matmul_of_a_terabyte_output_is_tensorflows_oom_text_at_its_node() {
    let f = AttrValue::of_type(1);
    let gd = graph_def(vec![
        placeholder("a", &[1_000_000, 1]),
        placeholder("b", &[1, 1_000_000]),
        node(
            "mm",
            "MatMul",
            &["a", "b"],
            &[
                ("T", f),
                ("transpose_a", AttrValue::of_bool(false)),
                ("transpose_b", AttrValue::of_bool(false)),
            ],
        ),
    ]);
    let g = Graph::new();
    import_graph_def(&g, &gd).unwrap();
    let col = Tensor::new(DataType::FLOAT, TensorShape::new(&[1_000_000, 1]).unwrap()).unwrap();
    let row = Tensor::new(DataType::FLOAT, TensorShape::new(&[1, 1_000_000]).unwrap()).unwrap();
    let e = Session::new(&g)
        .run(&[("a", col), ("b", row)], &["mm"], &[])
        .unwrap_err();
    assert_eq!(e.code(), tensorcast_graph::Code::ResourceExhausted);
    assert!(
        e.to_string().starts_with(
            "OOM when allocating tensor with shape[1000000,1000000] and type float on \
             /job:localhost/replica:0/task:0/device:CPU:0 by allocator mklcpu"
        ),
        "{e}"
    );
    assert!(
        e.full_message().contains("{{node mm}}"),
        "{}",
        e.full_message()
    );
}
