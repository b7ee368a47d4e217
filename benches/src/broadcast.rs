//! BroadcastTo workloads: 256 MiB of f32 output each, fresh from the default allocator on every
//! run (as a user's call gets it), compared with `memcpy_256MiB` and `fill_256MiB`.
//!
//! - `broadcast_row_256MiB`: [1,16384] -> [4096,16384] (one 64 KiB row copied 4096 times)
//! - `broadcast_col_256MiB`: [4096,1] -> [4096,16384] (each row a fill of one value)
//! - `broadcast_scalar_256MiB`: [] -> [4096,16384] (one fill)
//! - `broadcast_mid_256MiB`: [64,1,1024] -> [64,1024,1024] (a middle axis broadcast)
//! - `broadcast_tiny_inner_64MiB`: [5592405,1] -> [5592405,3] (3-element fills: the
//!   small-run path)
//! - `broadcast_tiny_row_64MiB`: [1,3] -> [5592405,3] (a 3-element row repeated)
//! - `broadcast_row_4KiB`, `broadcast_col_4KiB`: [1,32] / [32,1] -> [32,32], in cache, next to
//!   `memcpy_4KiB` recorded in the same run
//! - `broadcast_identity_4MiB`: [1024,1024] -> [1024,1024], which shares the input (constant
//!   time), next to `memcpy_4MiB`

use super::{baseline, Runner};
use tensorcast_core::{Tensor, TensorShape};
use tensorcast_kernels::broadcast::broadcast_to;

fn f32_tensor(dims: &[i64]) -> Tensor {
    let shape = TensorShape::new(dims).unwrap_or_default();
    let n = shape.num_elements() as usize;
    Tensor::from_vec(
        (0..n).map(|i| (i as f32 + 1.0) * 0.5).collect::<Vec<f32>>(),
        &shape,
    )
    .expect("input tensor")
}

fn workload(r: &mut Runner, name: &str, input: &[i64], output: &[i64]) {
    if !r.wants(name) {
        return;
    }
    let x = f32_tensor(input);
    let shape = TensorShape::new(output).unwrap_or_default();
    let bytes = shape.num_elements() as u64 * 4;
    r.measure(name, bytes, || broadcast_to(&x, &shape).expect("broadcast"));
}

/// Registers the BroadcastTo workloads.
pub fn run(r: &mut Runner) {
    workload(r, "broadcast_row_256MiB", &[1, 16384], &[4096, 16384]);
    workload(r, "broadcast_col_256MiB", &[4096, 1], &[4096, 16384]);
    workload(r, "broadcast_scalar_256MiB", &[], &[4096, 16384]);
    workload(r, "broadcast_mid_256MiB", &[64, 1, 1024], &[64, 1024, 1024]);
    workload(
        r,
        "broadcast_tiny_inner_64MiB",
        &[5_592_405, 1],
        &[5_592_405, 3],
    );
    workload(r, "broadcast_tiny_row_64MiB", &[1, 3], &[5_592_405, 3]);
    small(r);
}

fn small(r: &mut Runner) {
    if r.wants("broadcast_row_4KiB") || r.wants("broadcast_col_4KiB") {
        // Calls per timed batch.
        const ITERS: u32 = 20_000;
        let out = TensorShape::new(&[32, 32]).unwrap_or_default();
        baseline::memcpy(r, "4KiB", 4096, ITERS);
        for (name, input) in [
            ("broadcast_row_4KiB", [1i64, 32]),
            ("broadcast_col_4KiB", [32, 1]),
        ] {
            let x = f32_tensor(&input);
            r.measure_tiny(name, 4096, ITERS, || {
                broadcast_to(&x, &out).expect("broadcast")
            });
        }
    }
    if r.wants("broadcast_identity_4MiB") {
        let x = f32_tensor(&[1024, 1024]);
        let same = TensorShape::new(&[1024, 1024]).unwrap_or_default();
        baseline::memcpy(r, "4MiB", 4 << 20, 32);
        r.measure_tiny("broadcast_identity_4MiB", 4 << 20, 100_000, || {
            broadcast_to(&x, &same).expect("identity")
        });
    }
}
