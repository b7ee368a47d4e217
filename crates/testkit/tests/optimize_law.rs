//! The law of the BroadcastTo rewrite (`tensorcast graph optimize`): on random graphs of
//! broadcasts and element-wise ops, the optimized GraphDef computes exactly what the original
//! computes (values, dtypes and shapes of every fetch), both run without the session's own
//! fusion. TensorFlow checks the same graphs in the root crate's interop tests.

use proptest::prelude::*;
use tensorcast_graph::{import_graph_def, optimize_graph_def, Graph, Session, SessionOptions};
use tensorcast_testkit::graphs::broadcast_graph;

fn run(
    g: &Graph,
    feeds: &[(String, tensorcast_core::Tensor)],
    fetches: &[String],
) -> Vec<tensorcast_core::Tensor> {
    let feeds: Vec<(&str, tensorcast_core::Tensor)> =
        feeds.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    let fetches: Vec<&str> = fetches.iter().map(String::as_str).collect();
    Session::with_options(
        g,
        SessionOptions {
            optimize: false,
            ..SessionOptions::default()
        },
    )
    .run(&feeds, &fetches, &[])
    .expect("the graph runs")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn optimized_graph_def_computes_what_the_original_computes(seed in any::<u64>(), steps in 1usize..12) {
        let case = broadcast_graph(seed, steps);
        prop_assume!(!case.fetches.is_empty());
        let gd = case.scope.graph().to_graph_def();
        let (optimized, _removed) = optimize_graph_def(&gd, &[]).unwrap();
        let g2 = Graph::new();
        import_graph_def(&g2, &optimized).unwrap();
        let before = run(case.scope.graph(), &case.feeds, &case.fetches);
        let after = run(&g2, &case.feeds, &case.fetches);
        prop_assert_eq!(before, after);
    }
}

#[test]
fn some_random_graphs_lose_broadcasts() {
    // The law above is not vacuous: the rewrite does remove broadcasts from these graphs.
    let removed: usize = (0..200u64)
        .map(|seed| {
            let case = broadcast_graph(seed, 10);
            let gd = case.scope.graph().to_graph_def();
            optimize_graph_def(&gd, &[]).unwrap().1.len()
        })
        .sum();
    println!("broadcasts removed from 200 random graphs: {removed}");
    assert!(removed > 20, "{removed}");
}
