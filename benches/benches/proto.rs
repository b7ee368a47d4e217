//! Criterion benches of TensorProto encode and decode (float32 `tensor_content`, 16 MiB and
//! 1 KiB), next to memcpy of the same bytes.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tensorcast::proto::{
    decode_tensor, encode_tensor, serialize_tensor, serialize_tensor_header, serialize_tensor_into,
};
use tensorcast::{Tensor, TensorShape};

fn float_tensor(bytes: usize) -> Tensor {
    let n = bytes / 4;
    let shape = TensorShape::new(&[n as i64]).expect("shape");
    Tensor::from_vec((0..n).map(|i| i as f32).collect::<Vec<f32>>(), &shape).expect("tensor")
}

/// `serialize_tensor`'s bytes placed so that the content is not 4-byte aligned (as it usually
/// is not in real encodings), so decoding must copy it.
fn misaligned_copy(t: &Tensor) -> Bytes {
    let wire = serialize_tensor(t).expect("initialised");
    let header = serialize_tensor_header(t)
        .expect("initialised")
        .expect("header")
        .len();
    let mut backing = vec![0u8; wire.len() + 8];
    let base = backing.as_ptr() as usize;
    let start = (0..8)
        .find(|s| (base + s + header) % 4 == 1)
        .expect("offset");
    backing[start..start + wire.len()].copy_from_slice(&wire);
    Bytes::from(backing).slice(start..start + wire.len())
}

fn proto(c: &mut Criterion) {
    for (label, bytes) in [("16MiB", 16usize << 20), ("1KiB", 1 << 10)] {
        let t = float_tensor(bytes);
        let src = t.tensor_data().expect("data").to_vec();
        let aligned = encode_tensor(&t).expect("encode");
        let misaligned = misaligned_copy(&t);
        let mut g = c.benchmark_group(format!("proto_{label}"));
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_function("memcpy", |b| b.iter(|| src.clone()));
        g.bench_function("encode_tensor", |b| b.iter(|| encode_tensor(&t)));
        g.bench_function("serialize_tensor_vec", |b| {
            b.iter(|| serialize_tensor(&t).expect("initialised"))
        });
        let mut reused = Vec::new();
        g.bench_function("serialize_tensor_into_reused", |b| {
            b.iter(|| {
                reused.clear();
                serialize_tensor_into(&t, &mut reused).expect("initialised");
                reused.len()
            })
        });
        g.bench_function("decode_aligned_zero_copy", |b| {
            b.iter(|| decode_tensor(aligned.clone()))
        });
        g.bench_function("decode_misaligned_copy", |b| {
            b.iter(|| decode_tensor(misaligned.clone()))
        });
        g.finish();
    }
}

criterion_group!(benches, proto);
criterion_main!(benches);
