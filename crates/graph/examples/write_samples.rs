//! Writes the sample graphs in `samples/` (run from the repository root:
//! `cargo run -p tensorcast-graph --example write_samples`):
//!
//! - `graph_small.pb`: a placeholder `x` f32 [2,3], a row constant broadcast to [2,3], their
//!   Equal, a Cast and an AddV2 - small enough to look at with `tensorcast graph inspect|dot`
//!   and run with `tensorcast graph run samples/graph_small.pb --feed x=samples/graph_small_x.npy`.
//!   (`samples/graph_small_x.npy`, the feed, was written with numpy:
//!   `np.save("samples/graph_small_x.npy", np.array([[1,0,3],[1,2,0]], dtype=np.float32))`.)
//! - `graph_equal_broadcast_256MiB.pb`: `Equal(BroadcastTo(a, [4096,16384]), b)`, the benchmark
//!   graph that `scripts/tf_bench.py` runs in TensorFlow.
//! - `graph_chain_100.pb`: 100 chained `AddV2` on f32 [4] (`x` fed, `chain_99` fetched).
//! - `graph_chain_100_identity.pb`: 100 chained `Identity` on f32 [4] (`x` fed, `id_99` fetched).

use tensorcast_core::{DataType, PartialTensorShape};
use tensorcast_graph::ops::{
    AddV2, BroadcastTo, Cast, Const, Equal, Identity, Placeholder, PlaceholderAttrs,
};
use tensorcast_graph::{Result, Scope};

fn placeholder(root: &Scope, name: &str, dims: &[i64]) -> Result<Placeholder> {
    let shape = PartialTensorShape::new(dims)
        .map_err(|e| tensorcast_graph::Error::InvalidInput(e.to_string()))?;
    Placeholder::with_attrs(
        &root.with_op_name(name),
        DataType::FLOAT,
        PlaceholderAttrs::default().shape(shape),
    )
}

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all("samples")?;
    // The small sample.
    let root = Scope::new_root_scope();
    let x = placeholder(&root, "x", &[2, 3])?;
    let row = Const::new(&root.with_op_name("row"), [[1.0f32, 2.0, 3.0]])?;
    let b = BroadcastTo::new(&root.with_op_name("row_2x3"), &row, [2i32, 3])?;
    let eq = Equal::new(&root.with_op_name("eq"), &x, &b)?;
    Cast::new(&root.with_op_name("eq_as_float"), &eq, DataType::FLOAT)?;
    AddV2::new(&root.with_op_name("sum"), &x, &b)?;
    std::fs::write("samples/graph_small.pb", root.graph().to_graph_def_bytes())?;
    // The benchmark graph.
    let root = Scope::new_root_scope();
    let a = placeholder(&root, "a", &[1, 16384])?;
    let bb = placeholder(&root, "b", &[4096, 16384])?;
    let bt = BroadcastTo::new(&root.with_op_name("broadcast"), &a, [4096i32, 16384])?;
    Equal::new(&root.with_op_name("eq"), &bt, &bb)?;
    std::fs::write(
        "samples/graph_equal_broadcast_256MiB.pb",
        root.graph().to_graph_def_bytes(),
    )?;
    // The chain.
    let root = Scope::new_root_scope();
    let mut cur = placeholder(&root, "x", &[4])?.output;
    for i in 0..100 {
        cur = AddV2::new(&root.with_op_name(format!("chain_{i}")), &cur, 1.0f32)?.z;
    }
    std::fs::write(
        "samples/graph_chain_100.pb",
        root.graph().to_graph_def_bytes(),
    )?;
    // The Identity chain.
    let root = Scope::new_root_scope();
    let mut cur = placeholder(&root, "x", &[4])?.output;
    for i in 0..100 {
        cur = Identity::new(&root.with_op_name(format!("id_{i}")), &cur)?.output;
    }
    std::fs::write(
        "samples/graph_chain_100_identity.pb",
        root.graph().to_graph_def_bytes(),
    )?;
    Ok(())
}
