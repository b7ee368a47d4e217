//! The lazy `BroadcastTo`: `Equal(BroadcastTo(a, [4096,16384]), b)` in a session allocates its
//! output and (almost) nothing else; without the optimization pass the 256 MiB broadcast is
//! materialised. Its own binary: it installs a counting global allocator.

use tensorcast_buffer::testing::CountingGlobalAlloc;
use tensorcast_core::{DataType, PartialTensorShape, Tensor, TensorShape};
use tensorcast_graph::ops::{BroadcastTo, Equal, Placeholder, PlaceholderAttrs};
use tensorcast_graph::{Scope, Session, SessionOptions};

#[global_allocator]
static COUNTING: CountingGlobalAlloc = CountingGlobalAlloc::new();

#[test]
fn lazy_broadcast_into_equal_allocates_only_the_output() {
    let (rows, cols) = (1024i64, 4096i64);
    let root = Scope::new_root_scope();
    let ph = |name: &str, dims: &[i64]| {
        let shape = PartialTensorShape::new(dims).unwrap();
        Placeholder::with_attrs(
            &root.with_op_name(name),
            DataType::FLOAT,
            PlaceholderAttrs::default().shape(shape),
        )
        .unwrap()
    };
    let a = ph("a", &[1, cols]);
    let b = ph("b", &[rows, cols]);
    let bt = BroadcastTo::new(&root, &a, [rows as i32, cols as i32]).unwrap();
    let eq = Equal::new(&root, &bt, &b).unwrap();
    let av: Vec<f32> = (0..cols).map(|i| i as f32).collect();
    let bv: Vec<f32> = (0..rows * cols)
        .map(|i| (i % cols) as f32 * ((i / cols) % 2) as f32)
        .collect();
    let feeds = [
        (
            "a",
            Tensor::from_vec(av, TensorShape::new(&[1, cols]).unwrap()).unwrap(),
        ),
        (
            "b",
            Tensor::from_vec(bv, TensorShape::new(&[rows, cols]).unwrap()).unwrap(),
        ),
    ];
    let fetch = [eq.z.name()];
    let fetch: Vec<&str> = fetch.iter().map(String::as_str).collect();
    let output_bytes = (rows * cols) as usize;
    let mut peaks = Vec::new();
    for optimize in [true, false] {
        tensorcast_buffer::cpu_allocator().release_cached_memory();
        let start = COUNTING.reset_peak();
        let out = Session::with_options(
            root.graph(),
            SessionOptions {
                optimize,
                ..SessionOptions::default()
            },
        )
        .run(&feeds, &fetch, &[])
        .unwrap();
        let peak = COUNTING.peak_bytes() - start;
        assert_eq!(out[0].total_bytes(), output_bytes);
        peaks.push(peak);
    }
    println!(
        "peak bytes: optimized {} / unoptimized {} (output {output_bytes})",
        peaks[0], peaks[1]
    );
    assert!(
        peaks[0] <= output_bytes + output_bytes / 100 + 64 * 1024,
        "optimized peak {}",
        peaks[0]
    );
    assert!(
        peaks[1] >= output_bytes * 4,
        "unoptimized run should materialise the broadcast"
    );
}
