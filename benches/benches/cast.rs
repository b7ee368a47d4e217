//! Criterion benches of `Cast` and `Equal`: `float` to `bfloat16`, `half`, `int32` and `double`,
//! `half` to `float`, and `Equal` (same shape, and row-broadcast), on 64 Ki elements (in cache)
//! and 16 Mi elements (memory-bound), each next to a memcpy and a fill of the same output bytes
//! (the baselines throughput is compared with).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tensorcast::buffer::cpu_allocator;
use tensorcast::{f16, DataType, Tensor, TensorShape};

fn floats(n: usize) -> Tensor {
    let v: Vec<f32> = (0..n)
        .map(|i| ((i % 9973) as f32 - 4986.0) * 0.37)
        .collect();
    Tensor::from_vec(v, TensorShape::new(&[n as i64]).expect("shape")).expect("tensor")
}

fn baselines(c: &mut Criterion, group: &str, n: usize, out_size: usize) {
    let bytes = n * out_size;
    let src = vec![1u8; bytes];
    let shape = TensorShape::new(&[bytes as i64]).expect("shape");
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function(BenchmarkId::new("memcpy", bytes), |b| {
        b.iter(|| {
            Tensor::from_writer(&cpu_allocator(), DataType::UINT8, &shape, |w| {
                w.put_slice(black_box(&src))
            })
        })
    });
    g.bench_function(BenchmarkId::new("fill", bytes), |b| {
        b.iter(|| {
            Tensor::from_writer(&cpu_allocator(), DataType::UINT8, &shape, |w| {
                w.put_fill(&[7], bytes)
            })
        })
    });
    g.finish();
}

fn casts(c: &mut Criterion) {
    for n in [64 << 10, 16 << 20] {
        let x = floats(n);
        let h = x.cast(DataType::HALF).expect("half");
        for (dtype, out) in [
            (DataType::BFLOAT16, 2),
            (DataType::HALF, 2),
            (DataType::INT32, 4),
        ] {
            let group = format!("cast_f32_{}", dtype.name());
            baselines(c, &group, n, out);
            let mut g = c.benchmark_group(&group);
            g.throughput(Throughput::Bytes((n * out) as u64));
            g.bench_function(BenchmarkId::new("cast", n), |b| {
                b.iter(|| black_box(&x).cast(dtype))
            });
            g.finish();
        }
        let mut g = c.benchmark_group("cast_other");
        g.throughput(Throughput::Bytes((n * 4) as u64));
        g.bench_function(BenchmarkId::new("f16_to_f32", n), |b| {
            b.iter(|| black_box(&h).cast(DataType::FLOAT))
        });
        g.throughput(Throughput::Bytes((n * 8) as u64));
        g.bench_function(BenchmarkId::new("f32_to_f64", n), |b| {
            b.iter(|| black_box(&x).cast(DataType::DOUBLE))
        });
        g.finish();
        assert_eq!(h.as_slice::<f16>().expect("half view").len(), n);
    }
}

fn equal(c: &mut Criterion) {
    let n = 1 << 20;
    let x = floats(n);
    let y = floats(n);
    let rows = Tensor::from_vec(
        vec![1.0f32; 1024],
        TensorShape::new(&[1024]).expect("shape"),
    )
    .expect("row");
    let mat = x
        .reshape(TensorShape::new(&[1024, 1024]).expect("shape"))
        .expect("reshape");
    let mut g = c.benchmark_group("equal");
    g.throughput(Throughput::Bytes(n as u64));
    g.bench_function("same_shape_1Mi", |b| b.iter(|| black_box(&x).equal(&y)));
    g.bench_function("row_broadcast_1Mi", |b| {
        b.iter(|| black_box(&mat).equal(&rows))
    });
    g.finish();
}

criterion_group!(benches, casts, equal);
criterion_main!(benches);
