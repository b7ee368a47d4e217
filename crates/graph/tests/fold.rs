//! Constant folding when a session plans a run: folded plans compute what unfolded ones do, bit
//! for bit, run fewer nodes, and leave failing or oversized nodes to run time.

use tensorcast_core::Tensor;
use tensorcast_graph::{import_graph_def, Graph, RunStats, Session, SessionOptions};
use tensorcast_proto::{AttrValue, GraphDef, NodeDef, TensorProto};

use tensorcast_testkit::graph_defs::{fill_const, graph_def, node, shape_proto};

fn ty() -> (&'static str, AttrValue) {
    ("T", AttrValue::of_type(1))
}

fn const_f32(name: &str, dims: &[i64], values: &[f32]) -> NodeDef {
    let value = TensorProto {
        dtype: 1,
        tensor_shape: Some(shape_proto(dims)),
        float_val: values.to_vec(),
        ..Default::default()
    };
    node(
        name,
        "Const",
        &[],
        &[
            ("dtype", AttrValue::of_type(1)),
            ("value", AttrValue::of_tensor(value)),
        ],
    )
}

fn placeholder(name: &str, dims: &[i64]) -> NodeDef {
    node(
        name,
        "Placeholder",
        &[],
        &[
            ("dtype", AttrValue::of_type(1)),
            ("shape", AttrValue::of_shape(shape_proto(dims))),
        ],
    )
}

/// A frozen Keras batch normalisation as TensorFlow 2 writes it: `x * (Rsqrt(var + eps) *
/// gamma) + (beta - mean * (Rsqrt(var + eps) * gamma))`, the statistics behind `Identity`
/// nodes (what freezing leaves of `ReadVariableOp`).
fn batch_norm_graph() -> GraphDef {
    graph_def(vec![
        placeholder("x", &[2, 3]),
        const_f32("var", &[3], &[0.5, 1e-30, 3.0e7]),
        node("var/read", "Identity", &["var"], &[ty()]),
        const_f32("eps", &[], &[1e-3]),
        node("add", "AddV2", &["var/read", "eps"], &[ty()]),
        node("rsqrt", "Rsqrt", &["add"], &[ty()]),
        const_f32("gamma", &[3], &[1.5, -0.25, 7.0]),
        node("mul", "Mul", &["rsqrt", "gamma"], &[ty()]),
        const_f32("mean", &[3], &[0.1, -2.0, 1e5]),
        node("mul_2", "Mul", &["mean", "mul"], &[ty()]),
        const_f32("beta", &[3], &[0.0, 0.3, -1.0]),
        node("sub", "Sub", &["beta", "mul_2"], &[ty()]),
        node("mul_1", "Mul", &["x", "mul"], &[ty()]),
        node("y", "AddV2", &["mul_1", "sub"], &[ty()]),
    ])
}

fn session(gd: &GraphDef, optimize: bool) -> Session {
    let g = Graph::new();
    import_graph_def(&g, gd).unwrap();
    Session::with_options(
        &g,
        SessionOptions {
            optimize,
            ..SessionOptions::default()
        },
    )
}

/// Optimized (constants folded) but with nothing fused.
fn unfused_session(gd: &GraphDef) -> Session {
    let g = Graph::new();
    import_graph_def(&g, gd).unwrap();
    Session::with_options(
        &g,
        SessionOptions {
            fuse: false,
            ..SessionOptions::default()
        },
    )
}

fn run(s: &Session, feeds: &[(&str, Tensor)], fetch: &str) -> (Tensor, RunStats) {
    let (mut out, stats) = s.run_with_stats(feeds, &[fetch], &[]).unwrap();
    (out.remove(0), stats)
}

fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

#[test]
fn folded_batch_norm_matches_unfolded_bit_for_bit_and_runs_fewer_nodes() {
    let gd = batch_norm_graph();
    let x = Tensor::from_vec(
        vec![1.0f32, -3.5, f32::NAN, 1e-40, f32::INFINITY, 2.5e6],
        [2i64, 3].as_slice(),
    )
    .unwrap();
    let feeds = [("x", x)];
    let (want, plain) = run(&session(&gd, false), &feeds, "y");
    let folded = session(&gd, true);
    let (got, stats) = run(&folded, &feeds, "y");
    assert_eq!(bits(&got), bits(&want));
    // Unfolded: 13 nodes besides the fed x. Folded: `mul` and `sub` become constants, and
    // `mul_1` and `y` (which read x and those constants) one fused step.
    assert_eq!(plain.nodes_run, 13);
    assert_eq!(stats.nodes_run, 1);
    // Twice through the cached plan: the same.
    let (again, _) = run(&folded, &feeds, "y");
    assert_eq!(bits(&again), bits(&want));
}

#[test]
fn fed_constants_are_not_folded() {
    let gd = batch_norm_graph();
    let x = Tensor::from_vec(vec![1.0f32; 6], [2i64, 3].as_slice()).unwrap();
    let var = Tensor::vector(&[4.0f32, 4.0, 4.0]);
    let feeds = [("x", x), ("var", var)];
    let (want, _) = run(&session(&gd, false), &feeds, "y");
    let (got, _) = run(&session(&gd, true), &feeds, "y");
    assert_eq!(bits(&got), bits(&want));
    // And folding does not leak into a run of the same session without the feed.
    let s = session(&gd, true);
    let (with_feed, _) = run(&s, &feeds, "y");
    let (without, _) = run(&s, &feeds[..1], "y");
    assert_ne!(bits(&with_feed), bits(&without));
}

#[test]
fn values_over_ten_mib_are_not_folded() {
    // 4Mi floats (16 MiB): AddV2 of two such constants stays a run-time step.
    let gd = graph_def(vec![
        fill_const("a", 1, 4 << 20, true),
        fill_const("b", 1, 4 << 20, true),
        node("big", "AddV2", &["a", "b"], &[ty()]),
        const_f32("c", &[], &[2.0]),
        node("small", "Mul", &["c", "c"], &[ty()]),
        placeholder("x", &[]),
        node("y", "Mul", &["small", "x"], &[ty()]),
        node("z", "AddV2", &["big", "y"], &[ty()]),
    ]);
    let s = session(&gd, true);
    let (out, stats) = run(&s, &[("x", Tensor::from(0.5f32))], "z");
    assert_eq!(out.num_elements(), 4 << 20);
    assert_eq!(out.to_vec::<f32>().unwrap()[7], 4.0);
    // a, b, big (not folded); small (folded: a constant step); y; z.
    assert_eq!(stats.nodes_run, 6);
}

/// A frozen Keras convolution block's tail: batch norm (scale and shift per channel), then
/// hard-swish `bn * relu6(bn + 3) / 6`, then a `BiasAdd` and `Relu` - all on the input `x`.
fn hard_swish_graph(x_dims: &[i64]) -> GraphDef {
    graph_def(vec![
        placeholder("x", x_dims),
        const_f32("scale", &[4], &[0.5, -1.25, 3.0, 1e-30]),
        const_f32("shift", &[4], &[0.0, 0.25, -7.5, 1e5]),
        node("bn/mul", "Mul", &["x", "scale"], &[ty()]),
        node("bn", "AddV2", &["bn/mul", "shift"], &[ty()]),
        const_f32("three", &[], &[3.0]),
        const_f32("six", &[], &[6.0]),
        node("hs/add", "AddV2", &["bn", "three"], &[ty()]),
        node("hs/relu6", "Relu6", &["hs/add"], &[ty()]),
        node("hs/div", "RealDiv", &["hs/relu6", "six"], &[ty()]),
        node("hs", "Mul", &["bn", "hs/div"], &[ty()]),
        const_f32("bias", &[4], &[1.0, 2.0, -3.0, 0.0]),
        node("biased", "BiasAdd", &["hs", "bias"], &[ty()]),
        node("y", "Relu", &["biased"], &[ty()]),
    ])
}

fn edge_values(n: usize) -> Vec<f32> {
    let special = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        1e-40,
        -3.0,
        6.0,
        f32::MAX,
    ];
    (0..n)
        .map(|i| {
            if i % 5 == 0 {
                special[(i / 5) % special.len()]
            } else {
                (i as f32 * 0.37).sin() * 8.0
            }
        })
        .collect()
}

#[test]
fn fused_element_wise_chains_match_unfused_bit_for_bit_and_run_one_step() {
    // Small and large (the parallel path) inputs.
    for dims in [[2i64, 3, 3, 4], [8, 64, 64, 4]] {
        let gd = hard_swish_graph(&dims);
        let n = dims.iter().product::<i64>() as usize;
        let x = Tensor::from_vec(edge_values(n), dims.as_slice()).unwrap();
        let feeds = [("x", x)];
        let (want, plain) = run(&session(&gd, false), &feeds, "y");
        let (got, stats) = run(&session(&gd, true), &feeds, "y");
        assert_eq!(bits(&got), bits(&want), "{dims:?}");
        assert_eq!(plain.nodes_run, 13, "five constants and eight ops");
        assert_eq!(
            stats.nodes_run, 1,
            "the eight element-wise nodes as one step"
        );
    }
}

#[test]
fn a_fetched_or_shared_inner_value_ends_the_chain() {
    let dims = [2i64, 2, 2, 4];
    let gd = hard_swish_graph(&dims);
    let x = Tensor::from_vec(edge_values(32), dims.as_slice()).unwrap();
    let feeds = [("x", x)];
    let plain = session(&gd, false);
    let fused = session(&gd, true);
    // `bn` fetched as well: it is computed and kept; the rest still matches.
    let (want, _) = plain.run_with_stats(&feeds, &["y", "bn"], &[]).unwrap();
    let (got, stats) = fused.run_with_stats(&feeds, &["y", "bn"], &[]).unwrap();
    assert_eq!(bits(&got[0]), bits(&want[0]));
    assert_eq!(bits(&got[1]), bits(&want[1]));
    // bn's chain (bn/mul, bn), then the rest reading bn.
    assert_eq!(stats.nodes_run, 2);
}

/// The error of fetching `y` with `feeds`, which the optimized session must give as the
/// unoptimized one does; asserted to name `node`.
fn same_error_at(gd: &GraphDef, feeds: &[(&str, Tensor)], node: &str) {
    let want = session(gd, false).run(feeds, &["y"], &[]).unwrap_err();
    let got = session(gd, true).run(feeds, &["y"], &[]).unwrap_err();
    let m = got.full_message();
    assert_eq!(m, want.full_message());
    assert!(m.contains(&format!("{{{{node {node}}}}}")), "{m}");
}

#[test]
fn an_input_the_chain_does_not_fit_runs_node_by_node_with_each_nodes_errors() {
    // x of unknown shape: fed with a last dimension of 1, the [4] constants broadcast it, so
    // the chain cannot run as one pass; the nodes run one by one and give the same bits.
    let gd = hard_swish_graph(&[-1, -1]);
    let x = Tensor::from_vec(edge_values(6), [6i64, 1].as_slice()).unwrap();
    let feeds = [("x", x)];
    let (want, _) = run(&session(&gd, false), &feeds, "y");
    let (got, _) = run(&session(&gd, true), &feeds, "y");
    assert_eq!(got.shape(), want.shape());
    assert_eq!(bits(&got), bits(&want));
    // A last dimension of 3: `bn/mul` fails, named as it is when nothing is fused.
    let x = Tensor::from_vec(vec![1.0f32; 6], [2i64, 3].as_slice()).unwrap();
    same_error_at(&gd, &[("x", x)], "bn/mul");
}

fn const_i32(name: &str, dims: &[i64], values: &[i32]) -> NodeDef {
    let value = TensorProto {
        dtype: 3,
        tensor_shape: Some(shape_proto(dims)),
        int_val: values.to_vec(),
        ..Default::default()
    };
    node(
        name,
        "Const",
        &[],
        &[
            ("dtype", AttrValue::of_type(3)),
            ("value", AttrValue::of_tensor(value)),
        ],
    )
}

fn ints_attr(v: &[i64]) -> AttrValue {
    let mut a = AttrValue::of_strings(Vec::new());
    if let Some(tensorcast_proto::attr_value::Value::List(l)) = &mut a.value {
        l.i = v.to_vec();
    }
    a
}

fn string_attr(v: &'static str) -> AttrValue {
    AttrValue {
        value: Some(tensorcast_proto::attr_value::Value::S(v.into())),
    }
}

/// Keras' `ZeroPadding2D` then a `VALID` stride-2 convolution (`op`: `Conv2D` or
/// `DepthwiseConv2dNative`), as MobileNet's frozen graphs have them.
fn padded_conv_graph(op: &str, filter: &[f32], cout: i64) -> GraphDef {
    let (ints, s) = (ints_attr, string_attr);
    let (kh, kw, cin) = (3, 3, 4);
    graph_def(vec![
        placeholder("x", &[2, 9, 8, cin]),
        const_i32("paddings", &[4, 2], &[0, 0, 0, 1, 1, 1, 0, 0]),
        node(
            "pad",
            "Pad",
            &["x", "paddings"],
            &[ty(), ("Tpaddings", AttrValue::of_type(3))],
        ),
        const_f32("w", &[kh, kw, cin, cout], filter),
        node(
            "y",
            op,
            &["pad", "w"],
            &[
                ty(),
                ("strides", ints(&[1, 2, 2, 1])),
                ("padding", s("VALID")),
                ("dilations", ints(&[1, 1, 1, 1])),
            ],
        ),
    ])
}

#[test]
fn a_zero_pad_read_by_a_valid_convolution_alone_is_folded_into_it_with_the_same_bits() {
    for (op, cout) in [("DepthwiseConv2dNative", 2i64), ("Conv2D", 5)] {
        let n = (9 * cout * 4) as usize;
        let filter: Vec<f32> = (0..n).map(|i| (i as f32 * 0.71).cos() - 0.25).collect();
        let gd = padded_conv_graph(op, &filter, cout);
        let x = Tensor::from_vec(edge_values(2 * 9 * 8 * 4), [2i64, 9, 8, 4].as_slice()).unwrap();
        let feeds = [("x", x)];
        let (want, _) = run(&session(&gd, false), &feeds, "y");
        let (got, stats) = run(&session(&gd, true), &feeds, "y");
        assert_eq!(got.shape(), want.shape(), "{op}");
        assert_eq!(bits(&got), bits(&want), "{op}");
        let (_, unfused) = run(&unfused_session(&gd), &feeds, "y");
        let ops = |s: &Session| {
            let (_, times) = s.run_profiled(&feeds, &["y"], &[]).unwrap();
            times.into_iter().map(|t| t.op).collect::<Vec<_>>()
        };
        assert_eq!(ops(&unfused_session(&gd)), ["Const", "Pad", "Const", op]);
        assert_eq!(
            ops(&session(&gd, true)),
            ["Const", op],
            "the Pad and its paddings gone"
        );
        assert_eq!(unfused.nodes_run, stats.nodes_run + 2, "{op}");
        // Fetching the padded tensor as well keeps the Pad (and the same results).
        let fused = session(&gd, true);
        let (both, _) = fused.run_with_stats(&feeds, &["y", "pad"], &[]).unwrap();
        assert_eq!(bits(&both[0]), bits(&want), "{op}");
        assert_eq!(both[1].shape().dim_sizes(), [2, 10, 10, 4]);
        // A filter with an infinity: `0 * inf` is NaN at the padded taps, so nothing is folded.
        let mut inf = filter.clone();
        inf[0] = f32::INFINITY;
        let gd = padded_conv_graph(op, &inf, cout);
        let (want, _) = run(&session(&gd, false), &feeds, "y");
        let (got, stats) = run(&session(&gd, true), &feeds, "y");
        assert_eq!(bits(&got), bits(&want), "{op} with inf");
        assert_eq!(stats.nodes_run, 4, "{op} with inf: nothing folded");
    }
}

/// Attention's scaled scores: `Softmax(Mul(x, scale))` (or `Mul(scale, x)`).
fn scaled_softmax_graph(scale: f32, scale_first: bool, dims: &[i64]) -> GraphDef {
    let inputs = if scale_first {
        ["scale", "x"]
    } else {
        ["x", "scale"]
    };
    graph_def(vec![
        placeholder("x", dims),
        const_f32("scale", &[], &[scale]),
        node("mul", "Mul", &inputs, &[ty()]),
        node("y", "Softmax", &["mul"], &[ty()]),
    ])
}

#[test]
fn a_softmax_of_a_mul_by_a_scalar_runs_as_one_kernel_with_the_same_bits() {
    let dims = [2i64, 3, 37];
    // Rows with NaN and infinities (softmax makes them NaN and zeros), and finite rows with
    // subnormals, so that most results are ordinary numbers.
    let finite: Vec<f32> = (0..2 * 3 * 37)
        .map(|i| match i % 11 {
            0 => 1e-40,
            1 => -0.0,
            _ => (i as f32 * 0.37).sin() * 30.0,
        })
        .collect();
    for values in [edge_values(2 * 3 * 37), finite] {
        let x = Tensor::from_vec(values, dims.as_slice()).unwrap();
        scaled_softmax_cases(&[("x", x)], &dims);
    }
}

fn scaled_softmax_cases(feeds: &[(&str, Tensor)], dims: &[i64]) {
    let ops = |s: &Session| {
        let (_, times) = s.run_profiled(feeds, &["y"], &[]).unwrap();
        times.into_iter().map(|t| t.op).collect::<Vec<_>>()
    };
    // A scale that makes products subnormal (flushed) or infinite, a negative zero, and one.
    for scale in [0.125f32, 1e-38, -0.0, 3e37, 1.0] {
        for scale_first in [false, true] {
            let gd = scaled_softmax_graph(scale, scale_first, dims);
            let (want, _) = run(&unfused_session(&gd), feeds, "y");
            let (got, stats) = run(&session(&gd, true), feeds, "y");
            assert_eq!(got.shape(), want.shape());
            assert_eq!(
                bits(&got),
                bits(&want),
                "scale {scale}, first {scale_first}"
            );
            assert_eq!(ops(&session(&gd, true)), ["Fused(Mul,Softmax)"]);
            assert_eq!(ops(&unfused_session(&gd)), ["Const", "Mul", "Softmax"]);
            assert_eq!(stats.nodes_run, 1);
            // Fetching the product as well keeps the Mul (and the same results).
            let (both, _) = session(&gd, true)
                .run_with_stats(feeds, &["y", "mul"], &[])
                .unwrap();
            assert_eq!(bits(&both[0]), bits(&want));
        }
    }
    // A NaN scale is left to the two kernels.
    let gd = scaled_softmax_graph(f32::NAN, false, dims);
    assert_eq!(ops(&session(&gd, true)), ["Const", "Mul", "Softmax"]);
    // A scalar input: the unfused ops' error.
    let gd = scaled_softmax_graph(0.5, false, &[]);
    let feeds = [("x", Tensor::scalar_of(1.0f32))];
    let want = unfused_session(&gd)
        .run(&feeds, &["y"], &[])
        .unwrap_err()
        .to_string();
    let got = session(&gd, true)
        .run(&feeds, &["y"], &[])
        .unwrap_err()
        .to_string();
    assert_eq!(got, want);
}

/// A convolution geometry: op, input `[n, h, w, in]`, filter `[kh, kw, in, out or
/// multiplier]`, stride, padding.
type ConvCase = (&'static str, [i64; 4], [i64; 4], i64, &'static str);

/// `x` through the convolution of `case`, then [`hard_swish_graph`]'s chain (4 channels) as
/// `y`.
fn conv_chain_graph((op, x_dims, w_dims, stride, padding): ConvCase) -> GraphDef {
    let mut gd = hard_swish_graph(&x_dims);
    let n = w_dims.iter().product::<i64>() as usize;
    let filter: Vec<f32> = (0..n).map(|i| (i as f32 * 0.71).cos() - 0.25).collect();
    for nd in &mut gd.node {
        if nd.name == "bn/mul" {
            nd.input[0] = "conv".into();
        }
    }
    gd.node.push(const_f32("w", &w_dims, &filter));
    gd.node.push(node(
        "conv",
        op,
        &["x", "w"],
        &[
            ty(),
            ("strides", ints_attr(&[1, stride, stride, 1])),
            ("padding", string_attr(padding)),
            ("dilations", ints_attr(&[1, 1, 1, 1])),
        ],
    ));
    gd
}

#[test]
fn a_chain_reading_a_convolution_alone_runs_on_its_output_blocks_with_the_same_bits() {
    let cases: [ConvCase; 6] = [
        // Few taps (the direct path), a network's first convolution.
        ("Conv2D", [2, 17, 15, 3], [3, 3, 3, 4], 2, "SAME"),
        // Taps read in place (stride 1).
        ("Conv2D", [2, 9, 11, 8], [3, 3, 8, 4], 1, "SAME"),
        // im2col (stride 2, many taps).
        ("Conv2D", [2, 9, 11, 8], [3, 3, 8, 4], 2, "VALID"),
        // 1x1, several blocks of output rows.
        ("Conv2D", [2, 90, 80, 5], [1, 1, 5, 4], 1, "VALID"),
        (
            "DepthwiseConv2dNative",
            [2, 13, 12, 4],
            [3, 3, 4, 1],
            2,
            "SAME",
        ),
        (
            "DepthwiseConv2dNative",
            [1, 7, 6, 2],
            [3, 3, 2, 2],
            1,
            "SAME",
        ),
    ];
    for case in cases {
        let (op, x_dims, ..) = case;
        let gd = conv_chain_graph(case);
        let n = x_dims.iter().product::<i64>() as usize;
        let x = Tensor::from_vec(edge_values(n), x_dims.as_slice()).unwrap();
        let feeds = [("x", x)];
        let (want, _) = run(&session(&gd, false), &feeds, "y");
        let (got, stats) = run(&session(&gd, true), &feeds, "y");
        assert_eq!(got.shape(), want.shape(), "{case:?}");
        assert_eq!(bits(&got), bits(&want), "{case:?}");
        assert_eq!(
            stats.nodes_run, 2,
            "{case:?}: the filter, then the convolution and its chain"
        );
        let (_, times) = session(&gd, true)
            .run_profiled(&feeds, &["y"], &[])
            .unwrap();
        let ops: Vec<String> = times.into_iter().map(|t| t.op).collect();
        let fused = format!("Fused({op},Mul,AddV2,AddV2,Relu6,RealDiv,Mul,BiasAdd,Relu)");
        assert_eq!(ops, ["Const".to_string(), fused]);
        // Fetching the convolution's output as well keeps it apart (same results).
        let (both, stats) = session(&gd, true)
            .run_with_stats(&feeds, &["y", "conv"], &[])
            .unwrap();
        assert_eq!(bits(&both[0]), bits(&want), "{case:?}");
        assert_eq!(stats.nodes_run, 3, "{case:?}: filter, convolution, chain");
    }
}

#[test]
fn a_fused_convolution_fails_as_the_unfused_one_and_an_unfitting_chain_runs_apart() {
    // The placeholder's shape unknown, so the plan fuses whatever is fed.
    let unknown: ConvCase = ("Conv2D", [-1, -1, -1, -1], [2, 2, 3, 4], 1, "VALID");
    let gd = conv_chain_graph(unknown);
    // An input of the wrong depth: the convolution's error, naming it.
    let x = Tensor::from_vec(vec![1.0f32; 18], [1i64, 3, 3, 2].as_slice()).unwrap();
    same_error_at(&gd, &[("x", x)], "conv");
    // A filter (fed) of 5 outputs against the chain's 4 channels: the chain runs apart (and
    // fails at `bn/mul`, as unfused).
    let mut gd = conv_chain_graph(unknown);
    for nd in &mut gd.node {
        if nd.name == "w" {
            *nd = placeholder("w", &[-1, -1, -1, -1]);
        }
    }
    let feeds = [
        (
            "x",
            Tensor::from_vec(vec![1.0f32; 12], [1i64, 2, 2, 3].as_slice()).unwrap(),
        ),
        (
            "w",
            Tensor::from_vec(vec![0.5f32; 15], [1i64, 1, 3, 5].as_slice()).unwrap(),
        ),
    ];
    same_error_at(&gd, &feeds, "bn/mul");
}
