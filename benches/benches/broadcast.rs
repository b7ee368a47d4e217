//! Criterion benches of `BroadcastTo`, each next to a memcpy and a fill of the same output
//! bytes into a fresh tensor (the baselines a memory-bound kernel is judged by): 64 MiB row,
//! column, scalar and middle-axis broadcasts, a small-run case, a 4 KiB output, and the
//! identity (which must not copy).

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use tensorcast::buffer::cpu_allocator;
use tensorcast::ops::broadcast::broadcast_to;
use tensorcast::{DataType, Tensor, TensorShape};

fn shape(d: &[i64]) -> TensorShape {
    TensorShape::new(d).expect("shape")
}

fn f32_tensor(dims: &[i64]) -> Tensor {
    let s = shape(dims);
    let n = s.num_elements() as usize;
    Tensor::from_vec((0..n).map(|i| i as f32).collect::<Vec<f32>>(), &s).expect("tensor")
}

fn group(c: &mut Criterion, name: &str, out_dims: &[i64], cases: &[(&str, &[i64])]) {
    let out = shape(out_dims);
    let bytes = out.num_elements() as u64 * 4;
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(20);
    let src = vec![7u8; bytes as usize];
    g.bench_function("memcpy", |b| {
        b.iter(|| {
            Tensor::from_writer(&cpu_allocator(), DataType::FLOAT, &out, |w| {
                w.put_slice(black_box(&src))
            })
        })
    });
    g.bench_function("fill", |b| {
        b.iter(|| {
            Tensor::from_writer(&cpu_allocator(), DataType::FLOAT, &out, |w| {
                w.par_chunks(4 << 20, |_, w| {
                    let k = w.remaining() / 4;
                    w.put_fill(&1.5f32.to_le_bytes(), k)
                })
            })
        })
    });
    for (label, in_dims) in cases {
        let x = f32_tensor(in_dims);
        g.bench_function(*label, |b| {
            b.iter(|| broadcast_to(black_box(&x), &out).expect("broadcast"))
        });
    }
    g.finish();
}

fn broadcast(c: &mut Criterion) {
    group(
        c,
        "broadcast_64MiB",
        &[4096, 4096],
        &[
            ("row", &[1, 4096]),
            ("col", &[4096, 1]),
            ("scalar", &[]),
            ("mid", &[16, 1, 1024]),
        ],
    );
    group(
        c,
        "broadcast_small_runs_12MiB",
        &[1 << 20, 3],
        &[("col3", &[1 << 20, 1]), ("row3", &[1, 3])],
    );
    group(
        c,
        "broadcast_4KiB",
        &[32, 32],
        &[("row", &[1, 32]), ("col", &[32, 1])],
    );
    let x = f32_tensor(&[1024, 1024]);
    let same = shape(&[1024, 1024]);
    c.bench_function("broadcast_identity_4MiB", |b| {
        b.iter(|| broadcast_to(black_box(&x), &same).expect("identity"))
    });
}

criterion_group!(benches, broadcast);
criterion_main!(benches);
