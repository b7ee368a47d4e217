//! The lazy `BroadcastTo`: `Equal(BroadcastTo(a, [4096,16384]), b)` in a session allocates its
//! output and (almost) nothing else; without the optimization pass the 256 MiB broadcast is
//! materialised. Its own binary: it installs a counting global allocator.

use tensorcast_buffer::testing::CountingGlobalAlloc;
use tensorcast_core::{DataType, PartialTensorShape, Tensor, TensorShape};
use tensorcast_graph::ops::{BroadcastTo, Equal, Placeholder, PlaceholderAttrs};
use tensorcast_graph::{Scope, Session, SessionOptions};

#[global_allocator]
static COUNTING: CountingGlobalAlloc = CountingGlobalAlloc::new();

/// The counter is global: the tests of this binary measure one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn lazy_broadcast_into_equal_allocates_only_the_output() {
    let _serial = serial();
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

// ---- issue 17: import and run memory bounded by the input and the limits set --------------

use tensorcast_graph::{import_graph_def, import_graph_def_bytes, Graph};
use tensorcast_proto::{GraphDef, Message, NodeDef};

use tensorcast_testkit::graph_defs::graph_def;

fn fill_const(name: &str, dtype: i32, elements: i64) -> NodeDef {
    tensorcast_testkit::graph_defs::fill_const(name, dtype, elements, false)
}

/// Peak bytes allocated by `f` (beyond what was live when it started).
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    tensorcast_buffer::cpu_allocator().release_cached_memory();
    let start = COUNTING.reset_peak();
    let out = f();
    (out, COUNTING.peak_bytes() - start)
}

#[test]
fn import_of_many_valueless_consts_decodes_nothing_big() {
    let _serial = serial();
    // 400 resource, int32 and float Consts of 65,536 elements that carry no values: a few KB.
    let nodes: Vec<NodeDef> = (0..400)
        .map(|i| fill_const(&format!("c{i}"), [20, 3, 1, 9][i % 4], 65536))
        .collect();
    let bytes = graph_def(nodes).encode_to_vec();
    let (graph, peak) = peak_of(|| {
        let g = Graph::new();
        import_graph_def_bytes(&g, &bytes).unwrap();
        g
    });
    println!(
        "400 valueless [65536] consts: {} bytes in, peak {peak}",
        bytes.len()
    );
    assert!(peak < 64 * bytes.len() + (2 << 20), "peak {peak}");
    drop(graph);
}

#[test]
fn import_of_many_small_nodes_is_a_small_multiple_of_the_input() {
    let _serial = serial();
    let bytes = tensorcast_testkit::graph_defs::identity_chain(50_000).encode_to_vec();
    let (graph, peak) = peak_of(|| {
        let g = Graph::new();
        import_graph_def_bytes(&g, &bytes).unwrap();
        g
    });
    let ratio = peak as f64 / bytes.len() as f64;
    println!(
        "50,001 small nodes: {} bytes in, import peak {peak} ({ratio:.1}x, {} bytes/node)",
        bytes.len(),
        peak / 50_001
    );
    // About 1.6 KiB a node whatever its size (the attr map's B-tree leaf is most of it): 45x for
    // these 36-byte nodes, near 1x for real graphs, whose nodes carry their weights.
    assert!(ratio < 48.0, "import peak {ratio:.1}x the input");
    drop(graph);
}

#[test]
fn run_needing_a_missing_kernel_decodes_no_constant() {
    let _serial = serial();
    // A 1 KB file: eight fill Consts of 2^27 floats (512 MiB each) feeding an unknown op.
    let mut nodes: Vec<NodeDef> = (0..8)
        .map(|i| fill_const(&format!("c{i}"), 1, 1 << 27))
        .collect();
    nodes.push(NodeDef {
        name: "y".into(),
        op: "NoSuchOp".into(),
        input: (0..8).map(|i| format!("c{i}")).collect(),
        ..Default::default()
    });
    let g = Graph::new();
    import_graph_def(&g, &graph_def(nodes)).unwrap();
    let (err, peak) = peak_of(|| Session::new(&g).run(&[], &["y"], &[]).unwrap_err());
    assert!(err.to_string().contains("NoSuchOp (1 node)"), "{err}");
    assert!(peak < 1 << 20, "peak {peak}");
    // Without the unknown op, the total is checked against the budget before any decode.
    let (err, peak) = peak_of(|| Session::new(&g).run(&[], &["c0", "c1"], &[]).unwrap_err());
    assert!(
        matches!(err, tensorcast_graph::Error::ConstantBudget { .. }),
        "{err}"
    );
    assert!(peak < 1 << 20, "peak {peak}");
}

#[test]
fn shape_of_a_huge_broadcast_does_not_materialise_it() {
    let _serial = serial();
    let root = Scope::new_root_scope();
    let (s, xv) = tensorcast_testkit::graph_defs::shape_of_huge_broadcast(&root);
    let fetch = s.output.name();
    let (out, peak) = peak_of(|| {
        Session::new(root.graph())
            .run(&[("x", xv)], &[&fetch], &[])
            .unwrap()
    });
    assert_eq!(out[0].as_slice::<i32>().unwrap(), &[16384, 65536]);
    assert!(peak < 4 << 20, "peak {peak} (the broadcast would be 4 GiB)");
}

#[test]
fn optimize_of_many_small_nodes_is_a_small_multiple_of_the_input() {
    let _serial = serial();
    let bytes = tensorcast_testkit::graph_defs::identity_chain(50_000).encode_to_vec();
    let (out, peak) = peak_of(|| {
        let gd = GraphDef::decode(bytes.as_slice()).unwrap();
        tensorcast_graph::optimize_graph_def_owned(gd, &[]).unwrap()
    });
    let ratio = peak as f64 / bytes.len() as f64;
    println!(
        "optimize of 50,001 small nodes: {} bytes in, peak {peak} ({ratio:.1}x)",
        bytes.len()
    );
    // The decoded GraphDef (rewritten in place) and the imported graph the rewrite decides on.
    assert!(ratio < 96.0, "optimize peak {ratio:.1}x the input");
    drop(out);
}

// ---- issue 37: a size read from a value never makes a run allocate what it claims ----------

use tensorcast_graph::{Code, Error};
use tensorcast_testkit::graph_defs::{
    const_of, node, tensor_list_reads, tensor_list_reserve, tensor_list_set_item,
};

/// Runs `nodes` fetching `fetch` (in a session with `options`), returning the error and the
/// largest single allocation request the run made.
fn run_err(nodes: Vec<NodeDef>, fetch: &str, options: SessionOptions) -> (Error, usize) {
    let g = Graph::new();
    import_graph_def(&g, &graph_def(nodes)).unwrap();
    let (r, largest) = COUNTING.largest_request(|| {
        Session::with_options(&g, options)
            .run(&[], &[fetch], &[])
            .map(|_| ())
    });
    (r.expect_err(fetch), largest)
}

fn assert_refused(e: &Error, fetch_node: &str, what: &str) {
    assert!(
        matches!(e, Error::AllocationLimit { node, .. } if node == fetch_node),
        "{e:?}"
    );
    assert_eq!(e.code(), Code::ResourceExhausted);
    assert!(e.to_string().starts_with(what), "{e}");
    assert!(e
        .full_message()
        .contains(&format!("{{{{node {fetch_node}}}}}")));
}

#[test]
fn tensor_list_reserve_2e31_elements_is_an_error_not_an_abort() {
    let _serial = serial();
    let n = i32::MAX;
    // Reserve, and each op that reads the list: TensorFlow makes a vector of 2^31-1 tensors
    // (223 GB here) and aborts; the run refuses it before making anything.
    for (fetch, optimize) in [
        ("list", true),
        ("list", false),
        ("stack", true),
        ("get", false),
    ] {
        let mut nodes = tensor_list_reserve(n, Some(&[2]));
        nodes.extend(tensor_list_reads("list"));
        let options = SessionOptions {
            optimize,
            ..SessionOptions::default()
        };
        let (e, largest) = run_err(nodes, fetch, options);
        assert_refused(
            &e,
            "list",
            "TensorListReserve: a list of 2147483647 elements takes ",
        );
        assert!(largest < 1 << 20, "{fetch}: largest request {largest}");
    }
    // SetItem that resizes an empty list to 2^31 elements.
    let mut nodes = tensor_list_reserve(0, None);
    nodes.extend(tensor_list_set_item(n - 1, true));
    let (e, largest) = run_err(nodes, "set", SessionOptions::default());
    assert_refused(
        &e,
        "set",
        "TensorListSetItem: a list of 2147483647 elements takes ",
    );
    assert!(largest < 1 << 20, "largest request {largest}");
}

#[test]
fn tensor_list_stack_of_unset_elements_beyond_the_limit_is_refused_before_allocating() {
    let _serial = serial();
    // 2^20 unset elements of [1024, 1024] floats: the stack would be 4 TiB of zeros, one
    // unset element read alone 4 MiB.
    let mut nodes = tensor_list_reserve(1 << 20, Some(&[1024, 1024]));
    nodes.extend(tensor_list_reads("list"));
    let (e, largest) = run_err(nodes.clone(), "stack", SessionOptions::default());
    assert_refused(
        &e,
        "stack",
        "OOM when allocating tensor with shape[1048576,1024,1024] and type float on \
         /job:localhost/replica:0/task:0/device:CPU:0 by allocator mklcpu takes 4398046511104 \
         bytes, more than the 4294967296 bytes",
    );
    assert!(largest < 256 << 20, "largest request {largest}");
    // An unset element read alone: 4 MiB of zeros, past a 1 MiB limit.
    let mut small = tensor_list_reserve(4, Some(&[1024, 1024]));
    small.extend(tensor_list_reads("list"));
    let options = SessionOptions {
        max_allocation_bytes: 1 << 20,
        ..SessionOptions::default()
    };
    let (e, largest) = run_err(small, "get", options);
    assert_refused(
        &e,
        "get",
        "OOM when allocating tensor with shape[1024,1024]",
    );
    assert!(largest < 1 << 20, "largest request {largest}");
    // Within the limit, an unset element reads as zeros.
    let g = Graph::new();
    import_graph_def(&g, &graph_def(nodes)).unwrap();
    let out = Session::new(&g).run(&[], &["get"], &[]).unwrap();
    assert_eq!(out[0].shape().dim_sizes(), &[1024, 1024]);
    assert!(out[0].as_slice::<f32>().unwrap().iter().all(|&v| v == 0.0));
}

#[test]
fn value_sized_ops_beyond_the_allocation_limit_are_refused_before_allocating() {
    let _serial = serial();
    let i32s = |v: &[i32]| Tensor::vector(v);
    let m = 1 << 24; // 64 MiB of floats, past a 1 MiB limit
    let one = || const_of("one", &Tensor::scalar_of(1.0f32));
    let t =
        |name: &str, op: &str, inputs: &[&str], attrs: &[(&str, tensorcast_proto::AttrValue)]| {
            node(name, op, inputs, attrs)
        };
    let float = || tensorcast_proto::AttrValue::of_type(1);
    let int32 = || tensorcast_proto::AttrValue::of_type(3);
    let cases: Vec<(&str, Vec<NodeDef>, String)> = vec![
        (
            "Fill",
            vec![
                one(),
                const_of("dims", &i32s(&[m, 1])),
                t(
                    "y",
                    "Fill",
                    &["dims", "one"],
                    &[("T", float()), ("index_type", int32())],
                ),
            ],
            format!("[{m},1] and type float"),
        ),
        (
            "Range",
            vec![
                const_of("a", &Tensor::scalar_of(0i32)),
                const_of("b", &Tensor::scalar_of(m)),
                const_of("d", &Tensor::scalar_of(1i32)),
                t("y", "Range", &["a", "b", "d"], &[("Tidx", int32())]),
            ],
            format!("[{m}] and type int32"),
        ),
        (
            "Tile",
            vec![
                const_of("x", &Tensor::vector(&[1.0f32])),
                const_of("mult", &i32s(&[m])),
                t(
                    "y",
                    "Tile",
                    &["x", "mult"],
                    &[("T", float()), ("Tmultiples", int32())],
                ),
            ],
            format!("[{m}] and type float"),
        ),
        (
            "Pad",
            vec![
                const_of("x", &Tensor::vector(&[1.0f32])),
                const_of(
                    "pads",
                    &Tensor::from_vec(vec![0i32, m - 1], TensorShape::new(&[1, 2]).unwrap())
                        .unwrap(),
                ),
                t(
                    "y",
                    "Pad",
                    &["x", "pads"],
                    &[("T", float()), ("Tpaddings", int32())],
                ),
            ],
            format!("[{m}] and type float"),
        ),
        (
            "OneHot",
            vec![
                const_of("idx", &i32s(&[0])),
                const_of("depth", &Tensor::scalar_of(m)),
                one(),
                const_of("off", &Tensor::scalar_of(0.0f32)),
                t(
                    "y",
                    "OneHot",
                    &["idx", "depth", "one", "off"],
                    &[
                        ("T", float()),
                        ("TI", int32()),
                        ("axis", tensorcast_proto::AttrValue::of_int(-1)),
                    ],
                ),
            ],
            format!("[1,{m}] and type float"),
        ),
        (
            "BroadcastTo",
            vec![
                one(),
                const_of("shape", &i32s(&[m])),
                t(
                    "b",
                    "BroadcastTo",
                    &["one", "shape"],
                    &[("T", float()), ("Tidx", int32())],
                ),
                // A consumer that cannot read the broadcast lazily materialises it.
                t(
                    "y",
                    "Cumsum",
                    &["b", "axis"],
                    &[("T", float()), ("Tidx", int32())],
                ),
                const_of("axis", &Tensor::scalar_of(0i32)),
            ],
            format!("[{m}] and type float"),
        ),
    ];
    let options = SessionOptions {
        max_allocation_bytes: 1 << 20,
        ..SessionOptions::default()
    };
    for (op, nodes, shape) in cases {
        for optimize in [true, false] {
            let (e, largest) = run_err(
                nodes.clone(),
                "y",
                SessionOptions {
                    optimize,
                    ..options
                },
            );
            // A materialised broadcast fails at `b`, or at its consumer `y` when it stays lazy.
            assert!(
                matches!(&e, Error::AllocationLimit { node, .. } if node == "y" || node == "b"),
                "{op}: {e:?}"
            );
            assert!(
                e.to_string()
                    .starts_with(&format!("OOM when allocating tensor with shape{shape}")),
                "{op}: {e}"
            );
            assert!(largest < 1 << 20, "{op}: largest request {largest}");
        }
    }
}
