//! Workloads of `Cast`: 64M `float` elements (256 MiB read) to `bfloat16`, `half` (128 MiB
//! written) and `int32` (256 MiB written), each into a fresh output from the default allocator.
//! `bytes` is the output size, so the table's ratios compare with memcpy and fill of the same
//! run. TensorFlow 2.21's `Cast` takes about 7 ms for the first two on this machine (numpy:
//! 39 ms and 178 ms).

use super::Runner;
use tensorcast_core::{DataType, Tensor, TensorShape};

/// 64M elements.
const N: usize = 64 << 20;

pub fn run(r: &mut Runner) {
    let names = ["cast_f32_bf16_64M", "cast_f32_f16_64M", "cast_f32_i32_64M"];
    if !names.iter().any(|n| r.wants(n)) {
        return;
    }
    let Ok(shape) = TensorShape::new(&[N as i64]) else {
        return;
    };
    // Values spread over many magnitudes and signs, with fractions (so rounding matters), all
    // within int32 range.
    let values: Vec<f32> = (0..N)
        .map(|i| {
            let x = (i % 1_000_003) as f32 * 0.731;
            if i % 2 == 0 {
                x
            } else {
                -x / 7.0
            }
        })
        .collect();
    let Ok(src) = Tensor::from_vec(values, &shape) else {
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
}
