//! Data-movement workloads (`tensorcast_kernels::array`): 64 MiB of f32 output each, fresh from
//! the default allocator on every run, next to `memcpy_64MiB` (the same bytes copied into a
//! fresh tensor) recorded in the same run.
//!
//! - `transpose_2d_64MiB`: [4096,4096] perm [1,0] (the blocked path: bands of 16 rows)
//! - `transpose_batched_64MiB`: [16,1024,1024] perm [0,2,1] (last two axes, blocked)
//! - `transpose_general_64MiB`: [64,256,1024] perm [2,0,1] (the general strided path)
//! - `concat_axis1_64MiB`: two [4096,2048] joined on axis 1 (row pieces copied in turn)
//! - `gather_rows_64MiB`: 65536 rows of 1 KiB gathered from [65536,256] at random indices
//! - `strided_slice_step2_64MiB`: [4096,8192][:, ::2] (a strided read per row)
//! - `slice_rows_64MiB`: [8192,4096][1000:5096] (a view: constant time, no copy)

use super::{baseline, Runner};
use tensorcast_core::{Tensor, TensorShape};
use tensorcast_kernels::array as a;

const BYTES: u64 = 64 << 20;

fn f32_tensor(dims: &[i64]) -> Tensor {
    let shape = TensorShape::new(dims).unwrap_or_default();
    let n = shape.num_elements() as usize;
    Tensor::from_vec((0..n).map(|i| i as f32).collect::<Vec<f32>>(), &shape).expect("input")
}

/// Registers the data-movement workloads.
pub fn run(r: &mut Runner) {
    let names = [
        "transpose_2d_64MiB",
        "transpose_batched_64MiB",
        "transpose_general_64MiB",
        "concat_axis1_64MiB",
        "gather_rows_64MiB",
        "strided_slice_step2_64MiB",
        "slice_rows_64MiB",
    ];
    if !names.iter().any(|n| r.wants(n)) {
        return;
    }
    baseline::memcpy(r, "64MiB", BYTES as usize, 1);
    for (name, dims, perm) in [
        ("transpose_2d_64MiB", vec![4096i64, 4096], vec![1i32, 0]),
        (
            "transpose_batched_64MiB",
            vec![16, 1024, 1024],
            vec![0, 2, 1],
        ),
        (
            "transpose_general_64MiB",
            vec![64, 256, 1024],
            vec![2, 0, 1],
        ),
    ] {
        if r.wants(name) {
            let x = f32_tensor(&dims);
            let p = Tensor::vector(&perm);
            r.measure(name, BYTES, || a::transpose(&x, &p).expect("transpose"));
        }
    }
    if r.wants("concat_axis1_64MiB") {
        let (x, y) = (f32_tensor(&[4096, 2048]), f32_tensor(&[4096, 2048]));
        let axis = Tensor::from(1i32);
        r.measure("concat_axis1_64MiB", BYTES, || {
            a::concat_v2(&[&x, &y], &axis).expect("concat")
        });
    }
    if r.wants("gather_rows_64MiB") {
        let x = f32_tensor(&[65536, 256]);
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let idx: Vec<i32> = (0..65536)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s % 65536) as i32
            })
            .collect();
        let idx = Tensor::vector(&idx);
        let axis = Tensor::from(0i32);
        r.measure("gather_rows_64MiB", BYTES, || {
            a::gather_v2(&x, &idx, &axis, 0).expect("gather")
        });
    }
    if r.wants("strided_slice_step2_64MiB") {
        let x = f32_tensor(&[4096, 8192]);
        let (b, e, s) = (
            Tensor::vector(&[0i32, 0]),
            Tensor::vector(&[0i32, 0]),
            Tensor::vector(&[1i32, 2]),
        );
        let m = a::StridedSliceMasks {
            begin_mask: 3,
            end_mask: 3,
            ..Default::default()
        };
        r.measure("strided_slice_step2_64MiB", BYTES, || {
            a::strided_slice(&x, &b, &e, &s, m).expect("strided slice")
        });
    }
    if r.wants("slice_rows_64MiB") {
        let x = f32_tensor(&[8192, 4096]);
        let (b, size) = (
            Tensor::vector(&[1000i32, 0]),
            Tensor::vector(&[4096i32, -1]),
        );
        r.measure_tiny("slice_rows_64MiB", BYTES, 10_000, || {
            a::slice(&x, &b, &size).expect("slice")
        });
    }
}
