//! Criterion benches of the zero-copy ops: `Bitcast`, `reinterpret_cast_to` and
//! `Tensor::slice`, on 1 KiB and 256 MiB tensors (the times must match: nothing is copied),
//! next to a memcpy of 1 MiB as the usual baseline.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use tensorcast::{DataType, Tensor, TensorShape};

const MIB_256: i64 = 256 << 20;

fn tensor(dtype: DataType, dims: &[i64]) -> Tensor {
    Tensor::new(dtype, TensorShape::new(dims).expect("shape")).expect("allocation")
}

fn baseline(c: &mut Criterion) {
    let src = vec![1u8; 1 << 20];
    let mut g = c.benchmark_group("baseline");
    g.throughput(Throughput::Bytes(src.len() as u64));
    g.bench_function("memcpy_1MiB", |b| b.iter(|| black_box(&src).clone()));
    g.finish();
}

fn zero_copy(c: &mut Criterion) {
    let mut g = c.benchmark_group("zero_copy");
    for (label, elems) in [("1KiB", 256), ("256MiB", MIB_256 / 4)] {
        let x = tensor(DataType::FLOAT, &[elems]);
        g.bench_function(format!("bitcast_f32_u8_{label}"), |b| {
            b.iter(|| black_box(&x).bitcast(black_box(DataType::UINT8)))
        });
        let bytes = tensor(DataType::UINT8, &[elems, 4]);
        g.bench_function(format!("bitcast_u8_f32_{label}"), |b| {
            b.iter(|| black_box(&bytes).bitcast(black_box(DataType::FLOAT)))
        });
        let same = tensor(DataType::INT32, &[elems]);
        g.bench_function(format!("bitcast_i32_f32_{label}"), |b| {
            b.iter(|| black_box(&same).bitcast(black_box(DataType::FLOAT)))
        });
        let h = tensor(DataType::HALF, &[elems * 2]);
        g.bench_function(format!("reinterpret_f16_u32_{label}"), |b| {
            b.iter(|| black_box(&h).reinterpret_cast_to(black_box(DataType::UINT32)))
        });
        let rows = tensor(DataType::FLOAT, &[elems / 64, 64]);
        g.bench_function(format!("slice_{label}"), |b| {
            b.iter(|| black_box(&rows).slice(1, elems / 64 - 1))
        });
        g.bench_function(format!("clone_{label}"), |b| {
            b.iter(|| black_box(&x).clone())
        });
    }
    g.finish();
}

criterion_group!(benches, baseline, zero_copy);
criterion_main!(benches);
