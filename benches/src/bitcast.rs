//! Workloads of the zero-copy ops: `Bitcast`, `reinterpret_cast_to` and `Tensor::slice`.
//!
//! They touch no element, so each must take the same constant time (target: under 100 ns)
//! whether the tensor holds 1 KiB or 256 MiB; `bytes` is the size of the tensor viewed, so the
//! table's GB/s column shows how far from a copy they are. The 1 KiB cases run next to
//! `memcpy_1KiB` (a copy of the same bytes into a new tensor) recorded in the same run.

use super::baseline::{self, MIB_256};
use super::Runner;
use tensorcast_core::{DataType, Tensor, TensorShape};
use tensorcast_kernels::TensorOps;

/// Calls per timed batch of a constant-time op.
const ITERS: u32 = 200_000;

fn tensor(dtype: DataType, dims: &[i64]) -> Option<Tensor> {
    let shape = TensorShape::new(dims).ok()?;
    Tensor::new(dtype, &shape).ok()
}

pub fn run(r: &mut Runner) {
    let n_f32 = (MIB_256 / 4) as i64;
    if r.wants("bitcast_f32_u8_256MiB") {
        if let Some(x) = tensor(DataType::FLOAT, &[n_f32]) {
            r.measure_tiny("bitcast_f32_u8_256MiB", MIB_256 as u64, ITERS, || {
                x.bitcast(DataType::UINT8)
            });
        }
    }
    small(r);
    if r.wants("reinterpret_f16_u32_256MiB") {
        if let Some(x) = tensor(DataType::HALF, &[(MIB_256 / 2) as i64]) {
            r.measure_tiny("reinterpret_f16_u32_256MiB", MIB_256 as u64, ITERS, || {
                x.reinterpret_cast_to(DataType::UINT32)
            });
        }
    }
    if r.wants("tensor_clone_256MiB") {
        // The floor these ops stand on: a Tensor clone is an Arc increment plus one shape
        // allocation; bitcast and reinterpret add one more (the new shape, which the tensor
        // then clones).
        if let Some(x) = tensor(DataType::FLOAT, &[n_f32]) {
            r.measure_tiny("tensor_clone_256MiB", MIB_256 as u64, ITERS, || x.clone());
        }
    }
    if r.wants("slice_256MiB") {
        // Rows 1..4095 of a [4096, 16384] f32 tensor: a sub-buffer, not the whole-tensor
        // shortcut.
        if let Some(x) = tensor(DataType::FLOAT, &[4096, 16384]) {
            r.measure_tiny("slice_256MiB", MIB_256 as u64, ITERS, || x.slice(1, 4095));
        }
    }
}

/// The same ops on 1 KiB tensors (the times must match the 256 MiB ones: nothing is copied),
/// with the shape-narrowing bitcast (`[256, 4]` u8 to `[256]` f32) and a same-size one.
fn small(r: &mut Runner) {
    let names = [
        "bitcast_f32_u8_1KiB",
        "bitcast_u8_f32_1KiB",
        "bitcast_i32_f32_1KiB",
        "reinterpret_f16_u32_1KiB",
        "tensor_clone_1KiB",
        "slice_1KiB",
    ];
    if !names.iter().any(|n| r.wants(n)) {
        return;
    }
    baseline::memcpy(r, "1KiB", 1024, ITERS);
    tiny(r, names[0], DataType::FLOAT, &[256], |x| {
        x.bitcast(DataType::UINT8)
    });
    tiny(r, names[1], DataType::UINT8, &[256, 4], |x| {
        x.bitcast(DataType::FLOAT)
    });
    tiny(r, names[2], DataType::INT32, &[256], |x| {
        x.bitcast(DataType::FLOAT)
    });
    tiny(r, names[3], DataType::HALF, &[512], |x| {
        x.reinterpret_cast_to(DataType::UINT32)
    });
    tiny(r, names[4], DataType::FLOAT, &[256], Tensor::clone);
    tiny(r, names[5], DataType::FLOAT, &[4, 64], |x| x.slice(1, 3));
}

/// Times `op` on a new 1 KiB tensor of `dtype` and `dims`, if `name` is wanted.
fn tiny<T>(r: &mut Runner, name: &str, dtype: DataType, dims: &[i64], op: impl Fn(&Tensor) -> T) {
    if r.wants(name) {
        if let Some(x) = tensor(dtype, dims) {
            r.measure_tiny(name, 1024, ITERS, || op(&x));
        }
    }
}
