//! Baselines: memcpy and fill of 256 MiB into fresh tensors from the default allocator, and
//! [`memcpy`] of a smaller workload's own bytes.

use super::Runner;
use tensorcast_core::{buffer::cpu_allocator, DataType, Tensor, TensorShape};

/// 256 MiB.
pub const MIB_256: usize = 256 << 20;

/// Records `memcpy_<label>`: `bytes` bytes copied into a fresh `uint8` tensor from the default
/// allocator, timed in batches of `iters` calls (single calls when `iters` is 1), once per run
/// whatever the filter (see [`Runner::measure_baseline`]). The in-cache workloads call it next
/// to themselves, with the bytes they write.
pub fn memcpy(r: &mut Runner, label: &str, bytes: usize, iters: u32) {
    let Ok(shape) = TensorShape::new(&[bytes as i64]) else {
        return;
    };
    let src: Vec<u8> = (0..bytes).map(|i| i as u8).collect();
    r.measure_baseline(&format!("memcpy_{label}"), bytes as u64, iters, || {
        Tensor::from_writer(&cpu_allocator(), DataType::UINT8, &shape, |w| {
            w.put_slice(&src)
        })
    });
}

pub fn run(r: &mut Runner) {
    let n = MIB_256 / 4;
    let shape = TensorShape::new(&[n as i64]).unwrap_or_default();
    if r.wants("memcpy_256MiB") {
        let src = Tensor::from_vec((0..n).map(|i| i as f32).collect::<Vec<f32>>(), &shape)
            .expect("source tensor");
        let bytes = src.tensor_data().unwrap_or(&[]).to_vec();
        r.measure("memcpy_256MiB", MIB_256 as u64, || {
            Tensor::from_writer(&cpu_allocator(), DataType::FLOAT, &shape, |w| {
                w.put_slice(&bytes)
            })
        });
    }
    // The machine's write bandwidth: a fill split over the rayon pool, as the kernels that
    // are compared with it may be.
    r.measure("fill_256MiB", MIB_256 as u64, || {
        Tensor::from_writer(&cpu_allocator(), DataType::FLOAT, &shape, |w| {
            w.par_chunks(4 << 20, |_, w| {
                let k = w.remaining() / 4;
                w.put_fill(&1.5f32.to_le_bytes(), k)
            })
        })
    });
    // The same fill from an allocator that keeps no freed blocks: every run pays the page
    // faults of fresh memory, which is what the default allocator's block cache saves.
    let uncached: std::sync::Arc<dyn tensorcast_core::buffer::Allocator> =
        std::sync::Arc::new(tensorcast_core::buffer::CpuAllocator::with_cache_limit(0));
    r.measure("fill_256MiB_uncached_allocator", MIB_256 as u64, || {
        Tensor::from_writer(&uncached, DataType::FLOAT, &shape, |w| {
            w.put_fill(&1.5f32.to_le_bytes(), n)
        })
    });
    r.measure("fill_serial_256MiB", MIB_256 as u64, || {
        Tensor::from_writer(&cpu_allocator(), DataType::FLOAT, &shape, |w| {
            w.put_fill(&1.5f32.to_le_bytes(), n)
        })
    });
}
