//! Independent branches running concurrently: same results and errors as one node at a time,
//! and two heavy branches observed running at once.

use tensorcast_core::{DataType, PartialTensorShape, Tensor, TensorShape};
use tensorcast_graph::ops::{AddV2, Mul, Placeholder, PlaceholderAttrs, Reshape};
use tensorcast_graph::{Scope, Session, SessionOptions};

fn ph(s: &Scope, name: &str, dims: &[i64]) -> Placeholder {
    Placeholder::with_attrs(
        &s.with_op_name(name),
        DataType::FLOAT,
        PlaceholderAttrs::default().shape(PartialTensorShape::new(dims).unwrap()),
    )
    .unwrap()
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

fn sequential() -> SessionOptions {
    SessionOptions {
        parallel: false,
        ..SessionOptions::default()
    }
}

fn vector(n: usize, scale: f32) -> Tensor {
    let v: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * scale).collect();
    Tensor::from_vec(v, TensorShape::new(&[n as i64]).unwrap()).unwrap()
}

/// Two chains of 8 element-wise nodes on f32 [200000] (800 KB each: below the size at which a
/// kernel splits its own work, so any overlap is two nodes on two threads).
fn two_branches(n: i64) -> Scope {
    let root = Scope::new_root_scope();
    let a = ph(&root, "a", &[n]);
    let b = ph(&root, "b", &[n]);
    let (mut x, mut y) = (a.output.clone(), b.output.clone());
    for i in 0..8 {
        x = AddV2::new(&root.with_op_name(format!("left_{i}")), &x, &a)
            .unwrap()
            .z;
        y = Mul::new(&root.with_op_name(format!("right_{i}")), &y, &b)
            .unwrap()
            .z;
    }
    root
}

#[test]
fn parallel_heavy_independent_branches_overlap() {
    let n = 200_000;
    let root = two_branches(n as i64);
    let feeds = [("a", vector(n, 0.5)), ("b", vector(n, 1.0))];
    let fetches = ["left_7:0", "right_7:0"];
    let want = Session::with_options(root.graph(), sequential())
        .run(&feeds, &fetches, &[])
        .unwrap();
    // Unfused, so that the branches stay 16 nodes (fused, each chain is one step).
    let unfused = SessionOptions {
        fuse: false,
        ..SessionOptions::default()
    };
    let session = Session::with_options(root.graph(), unfused);
    // A loaded machine may let one thread finish both nodes of a round before the other picks
    // one up; over many rounds of many runs, two nodes are seen running at once.
    let overlapped = pool(2).install(|| {
        (0..50).any(|_| {
            let (out, stats) = session.run_with_stats(&feeds, &fetches, &[]).unwrap();
            assert_eq!(out, want);
            assert_eq!(stats.nodes_run, 16);
            assert!(stats.parallel_rounds >= 1, "{stats:?}");
            stats.max_concurrent_nodes >= 2
        })
    });
    assert!(overlapped, "no two nodes ever ran at once");
}

#[test]
fn parallel_small_nodes_stay_on_the_calling_thread() {
    let root = two_branches(4);
    let feeds = [("a", vector(4, 0.5)), ("b", vector(4, 1.0))];
    let (_, stats) = pool(2).install(|| {
        Session::new(root.graph())
            .run_with_stats(&feeds, &["left_7:0", "right_7:0"], &[])
            .unwrap()
    });
    assert_eq!(stats.parallel_rounds, 0);
    assert_eq!(stats.max_concurrent_nodes, 1);
}

#[test]
fn parallel_two_failing_branches_report_the_sequential_error() {
    // Two independent reshapes that both fail, each after a heavy node.
    let root = Scope::new_root_scope();
    let a = ph(&root, "a", &[-1]);
    let b = ph(&root, "b", &[-1]);
    let x = AddV2::new(&root.with_op_name("x"), &a, &a).unwrap();
    let y = AddV2::new(&root.with_op_name("y"), &b, &b).unwrap();
    Reshape::new(&root.with_op_name("rx"), &x, [7i32, -1]).unwrap();
    Reshape::new(&root.with_op_name("ry"), &y, [5i32, -1]).unwrap();
    let feeds = [("a", vector(60_001, 1.0)), ("b", vector(60_002, 1.0))];
    let fetches = ["ry:0", "rx:0"];
    let want = Session::with_options(root.graph(), sequential())
        .run(&feeds, &fetches, &[])
        .unwrap_err();
    assert_eq!(want.node(), Some("rx"));
    let forced = SessionOptions {
        parallel_min_elements: 0,
        ..SessionOptions::default()
    };
    pool(2).install(|| {
        for _ in 0..20 {
            for options in [SessionOptions::default(), forced] {
                let e = Session::with_options(root.graph(), options)
                    .run(&feeds, &fetches, &[])
                    .unwrap_err();
                assert_eq!(e, want);
            }
        }
    });
}
