//! Workloads of `Cast`, each into a fresh output from the default allocator; `bytes` is the
//! output size, so the table's ratios compare with memcpy of the same bytes.
//!
//! - `cast_f32_{bf16,f16,i32}_64M`: 64M `float` elements (256 MiB read) to `bfloat16`, `half`
//!   (128 MiB written) and `int32` (256 MiB written), next to memcpy and fill of the same run.
//!   TensorFlow 2.21's `Cast` takes about 7 ms for the first two on this machine (numpy: 39 ms
//!   and 178 ms).
//! - `cast_f16_f32_64M`: the widening direction, 64M `half` to `float` (256 MiB written).
//! - `cast_{f32_bf16,f32_f16,f32_i32,f32_f64,f16_f32}_64Ki`: the same kernels on 64Ki elements,
//!   in cache, each next to `memcpy_<output size>` recorded in the same run.

use super::baseline;
use super::Runner;
use tensorcast_core::{DataType, Tensor, TensorShape};
use tensorcast_kernels::TensorOps;

/// 64M elements.
const N: usize = 64 << 20;

/// 64Ki elements (256 KiB of `float`).
const N_SMALL: usize = 64 << 10;

/// `n` floats spread over many magnitudes and signs, with fractions (so rounding matters), all
/// within int32 range.
fn floats(n: usize) -> Option<Tensor> {
    let shape = TensorShape::new(&[n as i64]).ok()?;
    let values: Vec<f32> = (0..n)
        .map(|i| {
            let x = (i % 1_000_003) as f32 * 0.731;
            if i % 2 == 0 {
                x
            } else {
                -x / 7.0
            }
        })
        .collect();
    Tensor::from_vec(values, &shape).ok()
}

/// Registers the `Cast` workloads.
pub fn run(r: &mut Runner) {
    large(r);
    small(r);
}

fn large(r: &mut Runner) {
    let names = [
        "cast_f32_bf16_64M",
        "cast_f32_f16_64M",
        "cast_f32_i32_64M",
        "cast_f16_f32_64M",
    ];
    if !names.iter().any(|n| r.wants(n)) {
        return;
    }
    let Some(src) = floats(N) else {
        return;
    };
    for (name, dtype) in [
        ("cast_f32_bf16_64M", DataType::BFLOAT16),
        ("cast_f32_f16_64M", DataType::HALF),
        ("cast_f32_i32_64M", DataType::INT32),
    ] {
        let bytes = (N * dtype.size()) as u64;
        r.measure(name, bytes, || src.cast(dtype));
    }
    if r.wants("cast_f16_f32_64M") {
        let Ok(half) = src.cast(DataType::HALF) else {
            return;
        };
        drop(src);
        r.measure("cast_f16_f32_64M", (N * 4) as u64, || {
            half.cast(DataType::FLOAT)
        });
    }
}

fn small(r: &mut Runner) {
    let cases = [
        ("cast_f32_bf16_64Ki", DataType::FLOAT, DataType::BFLOAT16),
        ("cast_f32_f16_64Ki", DataType::FLOAT, DataType::HALF),
        ("cast_f32_i32_64Ki", DataType::FLOAT, DataType::INT32),
        ("cast_f32_f64_64Ki", DataType::FLOAT, DataType::DOUBLE),
        ("cast_f16_f32_64Ki", DataType::HALF, DataType::FLOAT),
    ];
    if !cases.iter().any(|(n, _, _)| r.wants(n)) {
        return;
    }
    let Some(f32s) = floats(N_SMALL) else {
        return;
    };
    let Ok(f16s) = f32s.cast(DataType::HALF) else {
        return;
    };
    for (name, from, to) in cases {
        if !r.wants(name) {
            continue;
        }
        let src = if from == DataType::HALF { &f16s } else { &f32s };
        let bytes = N_SMALL * to.size();
        // 128 MiB written per timed batch (1024 calls of 128 KiB ... 256 of 512 KiB).
        let iters = ((128 << 20) / bytes) as u32;
        baseline::memcpy(r, &format!("{}KiB", bytes >> 10), bytes, iters);
        r.measure_tiny(name, bytes as u64, iters, || src.cast(to));
    }
}
