//! Fuzz target body: GraphDef import on arbitrary bytes. Import must never panic, hang, recurse
//! without bound or allocate beyond what the bytes justify; cycles and self-loops are errors.
//! Whatever imports must export to bytes that import again and export identically, and the
//! optimization rewrite must give a GraphDef that imports too, in which every node that stays
//! has the output dtypes and shapes it had (the rewrite never changes what a node computes).

use tensorcast_graph::{import_graph_def_bytes, optimize_graph_def, Graph};
use tensorcast_proto::{GraphDef, Message};

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let graph = Graph::new();
    if import_graph_def_bytes(&graph, data).is_err() {
        assert_eq!(graph.num_nodes(), 0, "a failed import left nodes behind");
        return;
    }
    let bytes = graph.to_graph_def_bytes();
    let again = Graph::new();
    import_graph_def_bytes(&again, &bytes)
        .unwrap_or_else(|e| panic!("an exported graph does not import: {e}"));
    assert_eq!(
        again.to_graph_def_bytes(),
        bytes,
        "export -> import -> export changed the bytes"
    );
    let gd = GraphDef::decode(bytes.as_slice()).expect("own export decodes");
    let (optimized, _) = optimize_graph_def(&gd, &[]).expect("an imported graph optimizes");
    let rewritten = Graph::new();
    import_graph_def_bytes(&rewritten, &optimized.encode_to_vec())
        .unwrap_or_else(|e| panic!("the optimized graph does not import: {e}"));
    for n in rewritten.nodes() {
        let before = graph
            .operation_by_name(n.name())
            .expect("the rewrite adds no node")
            .node();
        assert_eq!(n.output_types(), before.output_types(), "{}", n.name());
        for i in 0..n.num_outputs() {
            assert_eq!(
                n.output_shape(i),
                before.output_shape(i),
                "the rewrite changed the shape of {}:{i}",
                n.name()
            );
        }
    }
}
