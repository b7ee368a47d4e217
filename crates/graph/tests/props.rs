//! Laws: export -> import -> export is the identity; optimized runs equal unoptimized ones.

use proptest::prelude::*;
use tensorcast_core::{DataType, PartialTensorShape, Tensor, TensorShape};
use tensorcast_graph::ops::{
    Bitcast, BroadcastTo, Cast, Const, Equal, Identity, Placeholder, PlaceholderAttrs, Reshape,
    Shape,
};
use tensorcast_graph::{import_graph_def_bytes, Graph, Output, Scope, Session, SessionOptions};

/// Builds a random chain over a float placeholder `x` of shape `dims`; returns the outputs.
fn build(root: &Scope, dims: &[i64], steps: &[(u8, u8)]) -> Vec<Output> {
    let shape = PartialTensorShape::new(dims).unwrap();
    let x = Placeholder::with_attrs(
        &root.with_op_name("x"),
        DataType::FLOAT,
        PlaceholderAttrs::default().shape(shape),
    )
    .unwrap()
    .output;
    let mut outs = vec![x.clone()];
    for &(op, pick) in steps {
        let src = outs[pick as usize % outs.len()].clone();
        let s = root.new_sub_scope("s");
        let r = match op % 7 {
            0 => Identity::new(&s, &src).map(|o| o.output),
            1 => {
                let mut target = vec![2i32];
                target.extend(dims.iter().map(|&d| d as i32));
                BroadcastTo::new(&s, &x, target).map(|o| o.output)
            }
            2 => Cast::new(&s, &x, DataType::INT32).map(|o| o.y),
            3 => Equal::new(&s, &src, &src).map(|o| o.z),
            4 => Bitcast::new(&s, &x, DataType::UINT32).map(|o| o.output),
            5 => Reshape::new(&s, &x, [-1i32]).map(|o| o.output),
            _ => Shape::new(&s, &src).map(|o| o.output),
        };
        match r {
            Ok(o) => outs.push(o),
            Err(_) => return outs,
        }
    }
    let _ = Const::new(root, 1.0f32);
    outs
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn export_import_export_is_identity(dims in prop::collection::vec(1i64..4, 0..3),
                                        steps in prop::collection::vec((any::<u8>(), any::<u8>()), 0..12)) {
        let root = Scope::new_root_scope();
        build(&root, &dims, &steps);
        prop_assume!(root.ok());
        let bytes = root.graph().to_graph_def_bytes();
        let g = Graph::new();
        import_graph_def_bytes(&g, &bytes).unwrap();
        prop_assert_eq!(g.to_graph_def_bytes(), bytes);
    }

    #[test]
    fn optimized_equals_unoptimized(dims in prop::collection::vec(1i64..4, 0..3),
                                    steps in prop::collection::vec((any::<u8>(), any::<u8>()), 0..12),
                                    seed in any::<u32>()) {
        let root = Scope::new_root_scope();
        let outs = build(&root, &dims, &steps);
        prop_assume!(root.ok());
        let shape = TensorShape::new(&dims).unwrap();
        let n = shape.num_elements_usize();
        let v: Vec<f32> = (0..n).map(|i| ((i as u32).wrapping_mul(seed) % 5) as f32 - 2.0).collect();
        let feeds = [("x", Tensor::from_vec(v, &shape).unwrap())];
        let names: Vec<String> = outs.iter().map(Output::name).collect();
        let fetch: Vec<&str> = names.iter().map(String::as_str).collect();
        let on = Session::new(root.graph()).run(&feeds, &fetch, &[]);
        let off = Session::with_options(root.graph(), SessionOptions { optimize: false, ..SessionOptions::default() }).run(&feeds, &fetch, &[]);
        prop_assert_eq!(on.map_err(|e| e.to_string()), off.map_err(|e| e.to_string()));
    }

    #[test]
    fn parallel_equals_sequential(dims in prop::collection::vec(1i64..4, 0..3),
                                  steps in prop::collection::vec((any::<u8>(), any::<u8>()), 0..12),
                                  optimize in any::<bool>()) {
        let root = Scope::new_root_scope();
        let outs = build(&root, &dims, &steps);
        prop_assume!(root.ok());
        let shape = TensorShape::new(&dims).unwrap();
        let v: Vec<f32> = (0..shape.num_elements_usize()).map(|i| i as f32 - 1.5).collect();
        let feeds = [("x", Tensor::from_vec(v, &shape).unwrap())];
        let names: Vec<String> = outs.iter().map(Output::name).collect();
        let fetch: Vec<&str> = names.iter().map(String::as_str).collect();
        let seq = Session::with_options(root.graph(), SessionOptions { optimize, parallel: false, ..SessionOptions::default() })
            .run(&feeds, &fetch, &[]);
        // Every node heavy: each round with two or more ready nodes goes to the pool.
        let all = SessionOptions { optimize, parallel: true, parallel_min_elements: 0, ..SessionOptions::default() };
        let par = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap()
            .install(|| Session::with_options(root.graph(), all).run(&feeds, &fetch, &[]));
        prop_assert_eq!(seq, par);
    }
}
