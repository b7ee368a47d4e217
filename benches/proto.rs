//! Criterion benches (baseline only so far): memcpy of 1 MiB.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn baseline(c: &mut Criterion) {
    let src = vec![1u8; 1 << 20];
    let mut g = c.benchmark_group("baseline");
    g.throughput(Throughput::Bytes(src.len() as u64));
    g.bench_function("memcpy_1MiB", |b| b.iter(|| src.clone()));
    g.finish();
}

criterion_group!(benches, baseline);
criterion_main!(benches);
