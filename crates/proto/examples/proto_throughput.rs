//! Measures TensorProto decode and encode of a large float32 `tensor_content`, next to memcpy of
//! the same bytes in the same run.
//!
//! Run with `cargo run --release -p tensorcast-proto --example proto_throughput [MiB]`
//! (default 256 MiB).

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tensorcast_proto::{tensor_shape_proto::Dim, DataType, Message, TensorProto, TensorShapeProto};

/// A float32 vector proto with `content_bytes` of content.
fn float_proto(content_bytes: usize) -> TensorProto {
    let n = content_bytes / 4;
    let mut content = Vec::with_capacity(n * 4);
    for i in 0..n {
        content.extend_from_slice(&(i as f32).to_le_bytes());
    }
    let mut proto = TensorProto {
        tensor_shape: Some(TensorShapeProto {
            dim: vec![Dim {
                size: n as i64,
                name: String::new(),
            }],
            unknown_rank: false,
        }),
        tensor_content: Bytes::from(content),
        ..Default::default()
    };
    proto.set_dtype(DataType::DtFloat);
    proto
}

/// Minimum and median of `runs` timings of `f`.
fn time(runs: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    let mut t: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    t.sort();
    (t[0], t[runs / 2])
}

/// Average time of one call over `iters` calls.
fn per_call(iters: u32, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    start.elapsed() / iters
}

fn gbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e9
}

fn main() {
    let mib: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("size in MiB"))
        .unwrap_or(256);
    let big_bytes = mib << 20;
    let runs = 7;

    let small = float_proto(1024);
    let big = float_proto(big_bytes);
    let small_wire = Bytes::from(small.encode_to_vec());
    let big_wire = Bytes::from(big.encode_to_vec());
    println!(
        "content: 1 KiB and {mib} MiB float32; wire: {} and {} bytes",
        small_wire.len(),
        big_wire.len()
    );

    // --- decode ------------------------------------------------------------------------------
    let iters = 200_000;
    let d_small = per_call(iters, || {
        black_box(TensorProto::decode(black_box(small_wire.clone())).unwrap());
    });
    let d_big = per_call(iters, || {
        black_box(TensorProto::decode(black_box(big_wire.clone())).unwrap());
    });
    let decoded = TensorProto::decode(big_wire.clone()).unwrap();
    let shared = big_wire
        .as_ptr_range()
        .contains(&decoded.tensor_content.as_ptr());
    println!(
        "decode from Bytes:  1 KiB {:>8.0?}   {mib} MiB {:>8.0?}   ratio {:.2}   (content shared with input: {shared})",
        d_small,
        d_big,
        d_big.as_secs_f64() / d_small.as_secs_f64()
    );
    let (copy_min, copy_med) = time(runs, || {
        black_box(TensorProto::decode(black_box(&big_wire[..])).unwrap());
    });
    println!(
        "decode from &[u8] (copies content): {mib} MiB min {copy_min:.1?} median {copy_med:.1?} ({:.1} GB/s)",
        gbps(big_bytes, copy_min)
    );

    // --- encode vs memcpy --------------------------------------------------------------------
    let src: &[u8] = &big.tensor_content;
    // Fresh destination each time: allocation + page faults + copy.
    let (mc_fresh_min, mc_fresh_med) = time(runs, || {
        let mut dst = Vec::<u8>::with_capacity(src.len());
        dst.extend_from_slice(black_box(src));
        black_box(dst);
    });
    let (enc_fresh_min, enc_fresh_med) = time(runs, || {
        black_box(black_box(&big).encode_to_vec());
    });
    // Reused, already-faulted destination: the copy alone.
    let mut dst = vec![0u8; src.len()];
    let (mc_warm_min, mc_warm_med) = time(runs, || {
        dst.copy_from_slice(black_box(src));
        black_box(&dst);
    });
    let mut out = Vec::with_capacity(big.encoded_len());
    big.encode(&mut out).unwrap();
    let (enc_warm_min, enc_warm_med) = time(runs, || {
        out.clear();
        black_box(&big).encode(&mut out).unwrap();
        black_box(&out);
    });
    assert_eq!(out, big_wire);
    // The content lands `header` bytes into the output, so the copy's destination is shifted
    // against its source; time a plain memcpy with the same shift.
    let header = big_wire.len() - big_bytes;
    let (mc_shift_min, mc_shift_med) = time(runs, || {
        out.clear();
        out.extend_from_slice(&big_wire[..header]);
        out.extend_from_slice(black_box(src));
        black_box(&out);
    });
    // Encoding without copying the content: every field but `tensor_content`, then the key and
    // length of field 4, then the content itself as a second chunk (what a writev or a chained
    // `Buf` can send). Valid because no field after 4 is set when the content is used.
    let (zc_min, zc_med) = time(runs, || {
        let shell = TensorProto {
            tensor_content: Bytes::new(),
            ..black_box(&big).clone()
        };
        let mut head = shell.encode_to_vec();
        prost::encoding::encode_key(4, prost::encoding::WireType::LengthDelimited, &mut head);
        prost::encoding::encode_varint(big.tensor_content.len() as u64, &mut head);
        black_box((head, big.tensor_content.clone()));
    });
    {
        let shell = TensorProto {
            tensor_content: Bytes::new(),
            ..big.clone()
        };
        let mut head = shell.encode_to_vec();
        prost::encoding::encode_key(4, prost::encoding::WireType::LengthDelimited, &mut head);
        prost::encoding::encode_varint(big.tensor_content.len() as u64, &mut head);
        assert_eq!(head[..], big_wire[..header]);
        assert_eq!(big.tensor_content[..], big_wire[header..]);
    }
    println!("fresh buffer (alloc + faults + copy), min / median:");
    println!(
        "  memcpy        {mc_fresh_min:>8.1?} / {mc_fresh_med:>8.1?}  ({:.1} GB/s)",
        gbps(big_bytes, mc_fresh_min)
    );
    println!(
        "  encode_to_vec {enc_fresh_min:>8.1?} / {enc_fresh_med:>8.1?}  ({:.1} GB/s, {:.2}x memcpy)",
        gbps(big_bytes, enc_fresh_min),
        enc_fresh_min.as_secs_f64() / mc_fresh_min.as_secs_f64()
    );
    println!("reused buffer (copy only), min / median:");
    println!(
        "  memcpy        {mc_warm_min:>8.1?} / {mc_warm_med:>8.1?}  ({:.1} GB/s)",
        gbps(big_bytes, mc_warm_min)
    );
    println!(
        "  encode        {enc_warm_min:>8.1?} / {enc_warm_med:>8.1?}  ({:.1} GB/s, {:.2}x memcpy)",
        gbps(big_bytes, enc_warm_min),
        enc_warm_min.as_secs_f64() / mc_warm_min.as_secs_f64()
    );
    println!(
        "  memcpy, dst shifted {header} B (as in encode) {mc_shift_min:>8.1?} / {mc_shift_med:>8.1?}  ({:.1} GB/s; encode = {:.2}x this)",
        gbps(big_bytes, mc_shift_min),
        enc_warm_min.as_secs_f64() / mc_shift_min.as_secs_f64()
    );
    println!("encode as header + shared content (no copy): {zc_min:.1?} / {zc_med:.1?}");
}
