//! Reductions and unary functions (`tensorcast_kernels::reduce`, `tensorcast_kernels::math`)
//! on a 64 MiB `float` tensor [4096, 4096], next to `memcpy_64MiB` of the same bytes measured
//! in the same run (`scripts/tf_bench.py --math` times TensorFlow's eager ops on the same
//! shapes):
//!
//! - `sum_all_64MiB`, `sum_rows_64MiB`, `sum_cols_64MiB`: `Sum` over both axes, along rows
//!   (axis 1: 4096 outputs) and along columns (axis 0: 4096 outputs); `mean_*` the same for
//!   `Mean`;
//! - `exp_64MiB`, `tanh_64MiB`, `sigmoid_64MiB`: the unary ops, a new 64 MiB tensor each;
//! - `softmax_attention_2MiB`: `Softmax` of attention scores [8, 4, 128, 128] (the Transformer
//!   block's at batch 8: rows of 128), next to `memcpy_2MiB`.

use super::{baseline, Runner};
use tensorcast_core::{Tensor, TensorShape};
use tensorcast_kernels::math::{softmax, unary, UnaryOp};
use tensorcast_kernels::reduce::{reduce, Reduction};

const MIB_64: u64 = 64 << 20;

/// Registers the reduction and unary workloads.
pub fn run(r: &mut Runner) {
    let names = [
        "sum_all_64MiB",
        "sum_rows_64MiB",
        "sum_cols_64MiB",
        "mean_all_64MiB",
        "mean_rows_64MiB",
        "mean_cols_64MiB",
        "exp_64MiB",
        "tanh_64MiB",
        "sigmoid_64MiB",
        "softmax_attention_2MiB",
    ];
    if !names.iter().any(|n| r.wants(n)) {
        return;
    }
    let side = 4096usize;
    let shape = TensorShape::new(&[side as i64, side as i64]).unwrap_or_default();
    // Values in [-8, 8): the unary functions' interesting range, with no NaN.
    let x = Tensor::from_vec(
        (0..side * side)
            .map(|i| ((i.wrapping_mul(2_654_435_761) % 65_536) as f32 - 32_768.0) / 4096.0)
            .collect::<Vec<f32>>(),
        &shape,
    )
    .expect("input tensor");
    baseline::memcpy(r, "64MiB", MIB_64 as usize, 1);
    for (op, name) in [(Reduction::Sum, "sum"), (Reduction::Mean, "mean")] {
        for (axes, which) in [(&[0i32, 1][..], "all"), (&[1], "rows"), (&[0], "cols")] {
            let axis = Tensor::vector(axes);
            r.measure(&format!("{name}_{which}_64MiB"), MIB_64, || {
                reduce(op, &x, &axis, false).expect("reduce")
            });
        }
    }
    for (op, name) in [
        (UnaryOp::Exp, "exp_64MiB"),
        (UnaryOp::Tanh, "tanh_64MiB"),
        (UnaryOp::Sigmoid, "sigmoid_64MiB"),
    ] {
        r.measure(name, MIB_64, || unary(op, &x).expect("unary"));
    }
    if r.wants("softmax_attention_2MiB") {
        let n = 8 * 4 * 128 * 128;
        let scores = Tensor::from_vec(
            x.as_slice::<f32>().expect("float")[..n].to_vec(),
            TensorShape::new(&[8, 4, 128, 128]).unwrap_or_default(),
        )
        .expect("scores");
        baseline::memcpy(r, "2MiB", n * 4, 1);
        r.measure("softmax_attention_2MiB", (n * 4) as u64, || {
            softmax(&scores).expect("softmax")
        });
    }
}
