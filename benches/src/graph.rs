//! Graph workloads (`tensorcast_graph`), next to memcpy of the same bytes in the same run:
//!
//! - `graph_equal_broadcast_256MiB`: a session running `Equal(BroadcastTo(a, [4096,16384]), b)`
//!   with `a` f32 `[1,16384]` and `b` f32 `[4096,16384]` fed; the optimization pass keeps the
//!   BroadcastTo lazy, so no 256 MiB intermediate exists. With a peak counter installed (the
//!   `bench` example installs one) it also reports `peak_bytes` of one run.
//! - `graph_equal_broadcast_unoptimized_256MiB`: the same with the pass off (materialised, as
//!   TensorFlow's executor does).
//! - `eager_equal_row_256MiB`: the eager reference, `Equal(a, b)` with implicit broadcasting.
//! - `graph_chain_100_small`: one run of a chain of 100 `AddV2` nodes on f32 `[4]` (seconds per
//!   run; divide by 100 for the per-node overhead).
//! - `graph_chain_100_identity`: the same chain of 100 `Identity` nodes, whose kernel is a
//!   reference-count bump: what is left is the executor's own per-node cost.
//! - `graph_call_100_small`: the chain of `graph_chain_100_small` (100 `AddV2` and their
//!   constants) as a function, run through one `PartitionedCall` (a session inlines calls, so
//!   this should cost what the inlined chain costs).
//! - `graph_branches_2x8_800KB`: two independent chains of 8 element-wise nodes on f32
//!   `[200000]` (800 KB per node, below the size at which a kernel splits its own work), with
//!   independent branches run concurrently; `graph_branches_2x8_800KB_sequential` the same one
//!   node at a time. Bytes: the outputs written (16 x 800 KB).

use tensorcast_core::{DataType, PartialTensorShape, Tensor, TensorShape};
use tensorcast_graph::ops::{
    AddV2, BroadcastTo, Equal, Identity, Mul, Placeholder, PlaceholderAttrs,
};
use tensorcast_graph::{Scope, Session, SessionOptions};
use tensorcast_kernels::elementwise::equal;

use super::Runner;

const MIB_256: u64 = 256 << 20;

fn placeholder(root: &Scope, name: &str, dims: &[i64]) -> Placeholder {
    let shape = PartialTensorShape::new(dims).expect("shape");
    Placeholder::with_attrs(
        &root.with_op_name(name),
        DataType::FLOAT,
        PlaceholderAttrs::default().shape(shape),
    )
    .expect("placeholder")
}

fn f32_tensor(dims: &[i64], scale: f32) -> Tensor {
    let shape = TensorShape::new(dims).unwrap_or_default();
    let n = shape.num_elements() as usize;
    let v: Vec<f32> = (0..n)
        .map(|i| ((i % 1000) as f32 - 500.0) * scale)
        .collect();
    Tensor::from_vec(v, &shape).expect("input tensor")
}

/// The broadcast-then-Equal graph (also written to `samples/` by the CLI's sample generator).
pub fn equal_broadcast_graph(rows: i64, cols: i64) -> Scope {
    let root = Scope::new_root_scope();
    let a = placeholder(&root, "a", &[1, cols]);
    let b = placeholder(&root, "b", &[rows, cols]);
    let bt = BroadcastTo::new(
        &root.with_op_name("broadcast"),
        &a,
        [rows as i32, cols as i32],
    )
    .expect("broadcast");
    Equal::new(&root.with_op_name("eq"), &bt, &b).expect("equal");
    root
}

/// The 100-node chain of small `AddV2`s over a fed f32 `[4]` `x`; the last node is `chain_99`.
pub fn chain_graph(len: usize) -> Scope {
    let root = Scope::new_root_scope();
    let x = placeholder(&root, "x", &[4]);
    let mut cur = x.output;
    for i in 0..len {
        cur = AddV2::new(&root.with_op_name(format!("chain_{i}")), &cur, 1.0f32)
            .expect("add")
            .z;
    }
    root
}

/// `chain_graph(len)` as a function `chain(x)` called through a `PartitionedCall` named `call`
/// (its output `call:0` is the chain's end).
pub fn call_graph(len: usize) -> tensorcast_graph::Graph {
    use tensorcast_proto::{
        attr_value, ArgDefProto, AttrValue, FunctionDef, FunctionDefLibrary, GraphDef, Message,
        NameAttrList, NodeDef, OpDefProto,
    };
    let chain = chain_graph(len).graph().to_graph_def();
    let arg = |name: &str| ArgDefProto {
        name: name.into(),
        r#type: DataType::FLOAT.number(),
        ..Default::default()
    };
    // Body inputs name `node:out_arg:index`: AddV2's output is `z`, Const's `output`.
    let body: Vec<NodeDef> = chain
        .node
        .iter()
        .filter(|n| n.name != "x")
        .map(|n| {
            let mut n = n.clone();
            for i in &mut n.input {
                if i != "x" {
                    let out = if i.starts_with("chain_") {
                        "z"
                    } else {
                        "output"
                    };
                    *i = format!("{i}:{out}:0");
                }
            }
            n
        })
        .collect();
    let f = FunctionDef {
        signature: Some(OpDefProto {
            name: "chain".into(),
            input_arg: vec![arg("x")],
            output_arg: vec![arg("out")],
            control_output: vec![],
        }),
        node_def: body,
        ret: [("out".to_string(), format!("chain_{}:z:0", len - 1))]
            .into_iter()
            .collect(),
        ..Default::default()
    };
    let x = chain
        .node
        .iter()
        .find(|n| n.name == "x")
        .cloned()
        .expect("x");
    let call = NodeDef {
        name: "call".into(),
        op: "PartitionedCall".into(),
        input: vec!["x".into()],
        attr: [(
            "f".to_string(),
            AttrValue {
                value: Some(attr_value::Value::Func(Box::new(NameAttrList {
                    name: "chain".into(),
                    attr: Default::default(),
                }))),
            },
        )]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    let gd = GraphDef {
        node: vec![x, call],
        library: Some(
            FunctionDefLibrary { function: vec![f] }
                .encode_to_vec()
                .into(),
        ),
        versions: chain.versions.clone(),
        ..Default::default()
    };
    let g = tensorcast_graph::Graph::new();
    tensorcast_graph::import_graph_def(&g, &gd).expect("import");
    g
}

/// A chain of `len` `Identity` nodes over a fed f32 `[4]` `x`; the last node is `id_{len-1}`.
pub fn identity_chain_graph(len: usize) -> Scope {
    let root = Scope::new_root_scope();
    let x = placeholder(&root, "x", &[4]);
    let mut cur = x.output;
    for i in 0..len {
        cur = Identity::new(&root.with_op_name(format!("id_{i}")), &cur)
            .expect("identity")
            .output;
    }
    root
}

/// Two independent chains of `len` nodes over fed f32 `[n]` `a` and `b`: `left_*` adds `a`,
/// `right_*` multiplies by `b`.
pub fn branches_graph(n: i64, len: usize) -> Scope {
    let root = Scope::new_root_scope();
    let a = placeholder(&root, "a", &[n]);
    let b = placeholder(&root, "b", &[n]);
    let (mut x, mut y) = (a.output.clone(), b.output.clone());
    for i in 0..len {
        x = AddV2::new(&root.with_op_name(format!("left_{i}")), &x, &a)
            .expect("add")
            .z;
        y = Mul::new(&root.with_op_name(format!("right_{i}")), &y, &b)
            .expect("mul")
            .z;
    }
    root
}

/// Registers the graph workloads.
pub fn run(r: &mut Runner) {
    let (rows, cols) = (4096i64, 16384i64);
    let names = [
        "graph_equal_broadcast_256MiB",
        "graph_equal_broadcast_unoptimized_256MiB",
        "eager_equal_row_256MiB",
    ];
    if names.iter().any(|n| r.wants(n)) {
        let a = f32_tensor(&[1, cols], 0.5);
        let b = f32_tensor(&[rows, cols], 0.5);
        r.measure("eager_equal_row_256MiB", MIB_256, || {
            equal(&a, &b).expect("equal")
        });
        let root = equal_broadcast_graph(rows, cols);
        let feeds = [("a", a.clone()), ("b", b.clone())];
        for (name, optimize) in [(names[0], true), (names[1], false)] {
            let session = Session::with_options(
                root.graph(),
                SessionOptions {
                    optimize,
                    ..SessionOptions::default()
                },
            );
            r.measure(name, MIB_256, || {
                session.run(&feeds, &["eq:0"], &[]).expect("run")
            });
            if optimize {
                let peak = r.peak_of(|| session.run(&feeds, &["eq:0"], &[]).expect("run"));
                r.set_peak(name, peak);
            }
        }
    }
    if r.wants("graph_chain_100_small") {
        let root = chain_graph(100);
        let session = Session::new(root.graph());
        let feeds = [("x", Tensor::vector(&[1.0f32, 2.0, 3.0, 4.0]))];
        r.measure_tiny("graph_chain_100_small", 16, 200, || {
            session.run(&feeds, &["chain_99:0"], &[]).expect("run")
        });
    }
    if r.wants("graph_call_100_small") {
        let g = call_graph(100);
        let session = Session::new(&g);
        let feeds = [("x", Tensor::vector(&[1.0f32, 2.0, 3.0, 4.0]))];
        let out = session.run(&feeds, &["call:0"], &[]).expect("run");
        assert_eq!(
            out[0].as_slice::<f32>().expect("f32"),
            &[101.0, 102.0, 103.0, 104.0]
        );
        r.measure_tiny("graph_call_100_small", 16, 200, || {
            session.run(&feeds, &["call:0"], &[]).expect("run")
        });
    }
    if r.wants("graph_chain_100_identity") {
        let root = identity_chain_graph(100);
        let session = Session::new(root.graph());
        let feeds = [("x", Tensor::vector(&[1.0f32, 2.0, 3.0, 4.0]))];
        r.measure_tiny("graph_chain_100_identity", 16, 200, || {
            session.run(&feeds, &["id_99:0"], &[]).expect("run")
        });
    }
    let branch_names = [
        "graph_branches_2x8_800KB",
        "graph_branches_2x8_800KB_sequential",
    ];
    if branch_names.iter().any(|n| r.wants(n)) {
        let n = 200_000i64;
        let root = branches_graph(n, 8);
        let feeds = [
            ("a", f32_tensor(&[n], 0.001)),
            ("b", f32_tensor(&[n], 0.002)),
        ];
        for (name, parallel) in [(branch_names[0], true), (branch_names[1], false)] {
            let session = Session::with_options(
                root.graph(),
                SessionOptions {
                    parallel,
                    ..SessionOptions::default()
                },
            );
            r.measure_tiny(name, 16 * 800_000, 20, || {
                session
                    .run(&feeds, &["left_7:0", "right_7:0"], &[])
                    .expect("run")
            });
        }
    }
}
