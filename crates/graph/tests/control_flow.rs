//! TF1 control flow through the dataflow executor; TensorFlow's own loops, conditionals, TF2
//! `While`/`If` and TensorList loops are in `tests/tf_observed/graph_control_flow.jsonl`.

use tensorcast_core::{DataType, Tensor};
use tensorcast_graph::{import_graph_def, Error, Graph, Session};
use tensorcast_proto::attr_value::Value;
use tensorcast_proto::{AttrValue, NodeDef};

use tensorcast_testkit::graph_defs::{graph_def, node};

fn int32() -> AttrValue {
    AttrValue::of_type(DataType::INT32.number())
}

fn string(s: &str) -> AttrValue {
    AttrValue {
        value: Some(Value::S(s.as_bytes().to_vec().into())),
    }
}

fn placeholder_i32(name: &str) -> NodeDef {
    node(name, "Placeholder", &[], &[("dtype", int32())])
}

/// `i = 0; while i < n: i += step` as TF1 writes it (GraphDef order as TensorFlow writes it:
/// the `Merge` names its `NextIteration` before it is defined).
fn counter_loop() -> Vec<NodeDef> {
    let t = || ("T", int32());
    vec![
        placeholder_i32("i"),
        placeholder_i32("n"),
        placeholder_i32("step"),
        node(
            "w/Enter",
            "Enter",
            &["i"],
            &[t(), ("frame_name", string("w/ctx"))],
        ),
        node(
            "w/n",
            "Enter",
            &["n"],
            &[
                t(),
                ("frame_name", string("w/ctx")),
                ("is_constant", AttrValue::of_bool(true)),
            ],
        ),
        node(
            "w/step",
            "Enter",
            &["step"],
            &[
                t(),
                ("frame_name", string("w/ctx")),
                ("is_constant", AttrValue::of_bool(true)),
            ],
        ),
        node(
            "w/Merge",
            "Merge",
            &["w/Enter", "w/NextIteration"],
            &[t(), ("N", AttrValue::of_int(2))],
        ),
        node("w/Less", "Less", &["w/Merge", "w/n"], &[t()]),
        node("w/LoopCond", "LoopCond", &["w/Less"], &[]),
        node("w/Switch", "Switch", &["w/Merge", "w/LoopCond"], &[t()]),
        node("w/Identity", "Identity", &["w/Switch:1"], &[t()]),
        node("w/add", "AddV2", &["w/Identity", "w/step"], &[t()]),
        node("w/NextIteration", "NextIteration", &["w/add"], &[t()]),
        node("w/Exit", "Exit", &["w/Switch"], &[t()]),
    ]
}

fn run(g: &Graph, i: i32, n: i32, step: i32, fetch: &str) -> Result<Vec<Tensor>, Error> {
    Session::new(g).run(
        &[
            ("i", Tensor::scalar_of(i)),
            ("n", Tensor::scalar_of(n)),
            ("step", Tensor::scalar_of(step)),
        ],
        &[fetch],
        &[],
    )
}

#[test]
fn a_tf1_loop_imports_exports_and_runs_with_frames() {
    let g = Graph::new();
    import_graph_def(&g, &graph_def(counter_loop())).unwrap();
    // The back edge is kept by name on export.
    let merge = g.operation_by_name("w/Merge").unwrap();
    assert_eq!(merge.node().inputs(), ["w/Enter", "w/NextIteration"]);
    for (i, n, step, want) in [
        (0, 10, 1, 10),
        (0, 0, 1, 0),
        (5, 3, 1, 5),
        (1, 1000, 7, 1002),
    ] {
        let out = run(&g, i, n, step, "w/Exit").unwrap();
        assert_eq!(out[0].as_slice::<i32>().unwrap(), &[want], "{i} {n} {step}");
    }
}

#[test]
fn fetching_a_tensor_of_the_loop_frame_or_a_dead_one_fails_as_tensorflow_does() {
    let g = Graph::new();
    import_graph_def(&g, &graph_def(counter_loop())).unwrap();
    let e = run(&g, 0, 3, 1, "w/Identity").unwrap_err();
    assert_eq!(e.to_string(), "Retval[0] has already been set.");
    // A loop that never iterates: its body's tensors are dead.
    let e = run(&g, 0, 0, 1, "w/Identity").unwrap_err();
    assert_eq!(e.to_string(), "Retval[0] does not have value");
}

#[test]
fn a_cycle_not_through_next_iteration_is_still_refused() {
    let mut nodes = counter_loop();
    for n in &mut nodes {
        if n.name == "w/NextIteration" {
            n.op = "Identity".into();
        }
    }
    // TensorFlow counts the nodes it never processed: the Merge (now waiting for its input
    // from an Identity), everything after it, and the Identity.
    let e = import_graph_def(&Graph::new(), &graph_def(nodes)).unwrap_err();
    assert_eq!(e.to_string(), "8 nodes in a cycle");
}

#[test]
fn an_exit_without_its_enter_is_refused_before_running() {
    let g = Graph::new();
    let t = || ("T", int32());
    import_graph_def(
        &g,
        &graph_def(vec![
            placeholder_i32("x"),
            node("e", "Exit", &["x"], &[t()]),
        ]),
    )
    .unwrap();
    let e = Session::new(&g)
        .run(&[("x", Tensor::scalar_of(1i32))], &["e"], &[])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Invalid Exit op: Cannot find a corresponding Enter op."
    );
}
