//! Workloads of the linear-algebra and convolution kernels (issue 18, part 4), each next to
//! what it is measured against in the same run:
//!
//! - `matmul_f32_1024`: `MatMul` of two 1024x1024 `float` matrices through
//!   `tensorcast_kernels::linalg::mat_mul` (fresh output each run), and
//!   `gemm_crate_f32_1024`: the `gemm` crate called directly on the same data into a reused
//!   buffer (the target: the op at >= 0.8x its FLOP rate). TensorFlow's eager
//!   `tf.linalg.matmul` on the same shapes is `tf_matmul_f32_1024` in `scripts/tf_bench.py`.
//! - `conv2d_f32_8x56x56x64_3x3`: `Conv2D` SAME, stride 1, of an 8x56x56x64 input with a
//!   3x3x64x64 filter; TensorFlow's is `tf_conv2d_f32_8x56x56x64_3x3`.
//! - `depthwise_f32_8x56x56x64_3x3`, `maxpool_f32_8x56x56x64_3x3s2`: the direct kernels on the
//!   same input.
//! - `conv2d_f32_32x96x96x3_3x3s2` (16 out: MobileNetV3Small's first convolution at batch
//!   32, few taps) and `conv2d_f32_32x24x24x16_1x1` (72 out: one of its expansions).
//!
//! `bytes` is the output's size.

use tensorcast_buffer::gemm::{matmul, MatRef};
use tensorcast_core::Tensor;
use tensorcast_kernels::linalg::mat_mul;
use tensorcast_kernels::nn::{conv2d, depthwise_conv2d_native, max_pool, Padding};

use super::Runner;

fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            ((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8) as f32
                / (1u32 << 24) as f32
                - 0.5
        })
        .collect()
}

/// Registers the workloads.
pub fn run(r: &mut Runner) {
    const N: usize = 1024;
    if r.wants("matmul_f32_1024") || r.wants("gemm_crate_f32_1024") {
        let (a, b) = (values(N * N, 1), values(N * N, 2));
        let mut c = vec![0f32; N * N];
        r.measure("gemm_crate_f32_1024", (N * N * 4) as u64, || {
            matmul(
                &mut c,
                MatRef::row_major(&a, N, N),
                MatRef::row_major(&b, N, N),
                false,
                false,
                true,
            )
        });
        let shape = [N as i64, N as i64];
        if let (Ok(ta), Ok(tb)) = (
            Tensor::from_vec(a, shape.as_slice()),
            Tensor::from_vec(b, shape.as_slice()),
        ) {
            r.measure("matmul_f32_1024", (N * N * 4) as u64, || {
                mat_mul(&ta, &tb, false, false)
            });
        }
    }
    let conv_names = [
        "conv2d_f32_8x56x56x64_3x3",
        "depthwise_f32_8x56x56x64_3x3",
        "maxpool_f32_8x56x56x64_3x3s2",
    ];
    if conv_names.iter().any(|n| r.wants(n)) {
        let x = Tensor::from_vec(values(8 * 56 * 56 * 64, 3), [8i64, 56, 56, 64].as_slice());
        let w = Tensor::from_vec(values(3 * 3 * 64 * 64, 4), [3i64, 3, 64, 64].as_slice());
        let dw = Tensor::from_vec(values(3 * 3 * 64, 5), [3i64, 3, 64, 1].as_slice());
        let (Ok(x), Ok(w), Ok(dw)) = (x, w, dw) else {
            return;
        };
        let out = (8 * 56 * 56 * 64 * 4) as u64;
        let ones = [1i64, 1, 1, 1];
        r.measure("conv2d_f32_8x56x56x64_3x3", out, || {
            conv2d(&x, &w, (&ones, Padding::Same, &[], &ones))
        });
        r.measure("depthwise_f32_8x56x56x64_3x3", out, || {
            depthwise_conv2d_native(&x, &dw, (&ones, Padding::Same, &[], &ones))
        });
        r.measure("maxpool_f32_8x56x56x64_3x3s2", out / 4, || {
            max_pool(&x, &[1, 3, 3, 1], &[1, 2, 2, 1], Padding::Same)
        });
    }
    let small = [
        (
            "conv2d_f32_32x96x96x3_3x3s2",
            [32i64, 96, 96, 3],
            [3i64, 3, 3, 16],
            2,
        ),
        (
            "conv2d_f32_32x24x24x16_1x1",
            [32, 24, 24, 16],
            [1, 1, 16, 72],
            1,
        ),
    ];
    for (name, xs, ws, stride) in small {
        if !r.wants(name) {
            continue;
        }
        let (nx, nw) = (xs.iter().product::<i64>(), ws.iter().product::<i64>());
        let x = Tensor::from_vec(values(nx as usize, 6), xs.as_slice());
        let w = Tensor::from_vec(values(nw as usize, 7), ws.as_slice());
        let (Ok(x), Ok(w)) = (x, w) else {
            return;
        };
        let side = |d: i64| (d + stride - 1) / stride;
        let out = (xs[0] * side(xs[1]) * side(xs[2]) * ws[3] * 4) as u64;
        r.measure(name, out, || {
            conv2d(
                &x,
                &w,
                (&[1, stride, stride, 1], Padding::Same, &[], &[1, 1, 1, 1]),
            )
        });
    }
}
