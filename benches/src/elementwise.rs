//! Element-wise workloads (`crate::ops::elementwise`), next to `memcpy_256MiB` (and
//! `memcpy_128MiB` for the 128 MiB one) measured in the same run. Each reports the bytes of
//! its largest operand, so the table's `/memcpy` column is memcpy's time over the workload's.
//!
//! - `equal_row_256MiB`: Equal f32 [4096,16384] vs [1,16384] -> bool
//! - `equal_view_row_256MiB`: Equal(row.broadcast_view([4096,16384]), x): the same, with the
//!   row read through a lazy view
//! - `add_row_256MiB`, `add_col_256MiB`: AddV2 f32 [4096,16384] + [1,16384] / [4096,1]
//! - `add_same_256MiB`: AddV2 of two f32 [4096,16384] (reads twice as much)
//! - `mul_bf16_scalar_128MiB`: Mul bf16 [64M] * scalar
//! - `add_f32_3`: AddV2 of two f32 [3], per call
//! - `read_256MiB`: the bandwidth of reading the 256 MiB input alone (every core, no output)
//! - `equal_same_4MiB`, `equal_row_4MiB`: Equal f32 [1Mi] vs [1Mi], and [1024,1024] vs
//!   [1024], in cache, next to `memcpy_4MiB` recorded in the same run
//! - `fused_bn_hswish_4.5MiB`: the session's fused batch-norm + hard-swish chain
//!   (`Mul`, `AddV2` by channel vectors, `AddV2` 3, `Relu6`, `RealDiv` 6, `Mul`) on f32
//!   [32,48,48,16] (MobileNetV3Small's first activation at batch 32), next to
//!   `mul_channel_4.5MiB` (its first step alone) and `memcpy_4MiB`

use super::{baseline, Runner};
use tensorcast_core::{bf16, buffer::cpu_allocator, DataType, Tensor, TensorShape};
use tensorcast_kernels::elementwise::{add, equal, mul};
use tensorcast_kernels::TensorOps;

const MIB_256: u64 = 256 << 20;

fn f32_tensor(dims: &[i64], scale: f32) -> Tensor {
    let shape = TensorShape::new(dims).unwrap_or_default();
    let n = shape.num_elements() as usize;
    Tensor::from_vec(
        (0..n)
            .map(|i| ((i % 1000) as f32 - 500.0) * scale)
            .collect::<Vec<f32>>(),
        &shape,
    )
    .expect("input tensor")
}

/// Reads every word of `t` once, split over the available cores; returns their wrapping sum.
fn read_all(t: &Tensor) -> u32 {
    let words = t.as_slice::<f32>().unwrap_or(&[]);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = words.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let parts: Vec<_> = words
            .chunks(chunk)
            .map(|c| s.spawn(move || c.iter().fold(0u32, |a, w| a.wrapping_add(w.to_bits()))))
            .collect();
        parts
            .into_iter()
            .map(|p| p.join().unwrap_or(0))
            .fold(0u32, u32::wrapping_add)
    })
}

/// Registers the element-wise workloads.
pub fn run(r: &mut Runner) {
    let big = [4096i64, 16384];
    let wants_big = [
        "equal_row_256MiB",
        "equal_view_row_256MiB",
        "add_row_256MiB",
        "add_col_256MiB",
        "add_same_256MiB",
        "read_256MiB",
    ]
    .iter()
    .any(|n| r.wants(n));
    if wants_big {
        let x = f32_tensor(&big, 0.5);
        let row = f32_tensor(&[1, 16384], 0.5);
        let col = f32_tensor(&[4096, 1], 0.25);
        // The machine's read bandwidth, for the ratios above: the same 256 MiB input read on
        // every core (a wrapping sum of its words), with no output written.
        r.measure("read_256MiB", MIB_256, || read_all(&x));
        r.measure("equal_row_256MiB", MIB_256, || {
            equal(&x, &row).expect("equal")
        });
        if r.wants("equal_view_row_256MiB") {
            let shape = TensorShape::new(&big).unwrap_or_default();
            let view = row.broadcast_view(&shape).expect("view");
            r.measure("equal_view_row_256MiB", MIB_256, || {
                equal(&view, &x).expect("equal")
            });
        }
        r.measure("add_row_256MiB", MIB_256, || add(&x, &row).expect("add"));
        r.measure("add_col_256MiB", MIB_256, || add(&x, &col).expect("add"));
        if r.wants("add_same_256MiB") {
            let y = f32_tensor(&big, 0.125);
            r.measure("add_same_256MiB", MIB_256, || add(&x, &y).expect("add"));
        }
    }
    if r.wants("mul_bf16_scalar_128MiB") || r.wants("memcpy_128MiB") {
        let n = 64usize << 20;
        let shape = TensorShape::new(&[n as i64]).unwrap_or_default();
        let v: Vec<bf16> = (0..n)
            .map(|i| bf16::from_f32((i % 1000) as f32 - 500.0))
            .collect();
        let x = Tensor::from_vec(v, &shape).expect("bf16 tensor");
        let bytes = x.tensor_data().unwrap_or(&[]).to_vec();
        r.measure("memcpy_128MiB", MIB_256 / 2, || {
            Tensor::from_writer(&cpu_allocator(), DataType::BFLOAT16, &shape, |w| {
                w.put_slice(&bytes)
            })
        });
        let s = Tensor::scalar_of(bf16::from_f32(1.5));
        r.measure("mul_bf16_scalar_128MiB", MIB_256 / 2, || {
            mul(&x, &s).expect("mul")
        });
    }
    if r.wants("equal_same_4MiB") || r.wants("equal_row_4MiB") {
        // Calls per timed batch: 256 MiB read.
        const ITERS: u32 = 32;
        let x = f32_tensor(&[1 << 20], 0.5);
        let y = f32_tensor(&[1 << 20], 0.5);
        let mat = f32_tensor(&[1024, 1024], 0.5);
        let row = f32_tensor(&[1024], 0.25);
        baseline::memcpy(r, "4MiB", 4 << 20, ITERS);
        r.measure_tiny("equal_same_4MiB", 4 << 20, ITERS, || {
            equal(&x, &y).expect("equal")
        });
        r.measure_tiny("equal_row_4MiB", 4 << 20, ITERS, || {
            equal(&mat, &row).expect("equal")
        });
    }
    if r.wants("fused_bn_hswish_4.5MiB") || r.wants("mul_channel_4.5MiB") {
        hard_swish(r);
    }
    if r.wants("add_f32_3") {
        let a = Tensor::vector(&[1.0f32, 2.0, 3.0]);
        let b = Tensor::vector(&[0.5f32, 0.25, 0.125]);
        r.measure_tiny("add_f32_3", 12, 100_000, || add(&a, &b).expect("add"));
    }
}

/// The fused batch-norm + hard-swish chain of a MobileNetV3 activation, and its first step
/// alone as an ordinary broadcasting `Mul`.
fn hard_swish(r: &mut Runner) {
    use tensorcast_kernels::elementwise::fused::{FusedArg, FusedChain, FusedStep};
    use tensorcast_kernels::elementwise::BinaryOp;
    use tensorcast_kernels::math::UnaryOp;
    const ITERS: u32 = 16;
    let dims = [32i64, 48, 48, 16];
    let x = f32_tensor(&dims, 0.01);
    let bytes = (x.num_elements() * 4) as u64;
    let scale: Vec<f32> = (0..16).map(|i| 0.5 + i as f32 * 0.125).collect();
    let shift: Vec<f32> = (0..16).map(|i| i as f32 * -0.0625).collect();
    let steps = vec![
        FusedStep::Binary(
            BinaryOp::Mul,
            FusedArg::Value(0),
            FusedArg::Channel(scale.clone().into()),
        ),
        FusedStep::Binary(
            BinaryOp::AddV2,
            FusedArg::Value(1),
            FusedArg::Channel(shift.into()),
        ),
        FusedStep::Binary(BinaryOp::AddV2, FusedArg::Value(2), FusedArg::Scalar(3.0)),
        FusedStep::Unary(UnaryOp::Relu6, 3),
        FusedStep::Binary(BinaryOp::RealDiv, FusedArg::Value(4), FusedArg::Scalar(6.0)),
        FusedStep::Binary(BinaryOp::Mul, FusedArg::Value(2), FusedArg::Value(5)),
    ];
    let Some(chain) = FusedChain::new(steps) else {
        return;
    };
    baseline::memcpy(r, "4MiB", 4 << 20, ITERS);
    r.measure_tiny("fused_bn_hswish_4.5MiB", bytes, ITERS, || {
        chain.run(&x).expect("fits").expect("fused")
    });
    let s = Tensor::vector(&scale);
    r.measure_tiny("mul_channel_4.5MiB", bytes, ITERS, || {
        mul(&x, &s).expect("mul")
    });
}
