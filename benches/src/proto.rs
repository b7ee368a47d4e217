//! TensorProto workloads: encode and decode of 256 MiB of float32 `tensor_content`, next to
//! memcpy of the same bytes. TensorFlow 2.21 takes about 330 ms to serialize and 180 ms to
//! parse these on the reference machine.
//!
//! - `proto_encode_content_256MiB`: [`encode_tensor`], the `SerializeTensor` bytes written into
//!   a buffer from the default (block-reusing) allocator with the content 64-byte aligned.
//! - `proto_serialize_vec_256MiB`: [`serialize_tensor`], the same bytes into a fresh `Vec`
//!   (pays the page faults of new memory every time).
//! - `proto_serialize_into_reused_vec_256MiB`: [`serialize_tensor_into`] a cleared, reused
//!   `Vec` (no fresh memory after the first call).
//! - `proto_decode_content_256MiB`: [`decode_tensor`] of `encode_tensor`'s output: the content
//!   is shared, so this is constant time (timed per call over many calls).
//! - `proto_decode_misaligned_256MiB`: [`decode_tensor`] of `serialize_tensor`'s `Vec`, where
//!   the content sits at an odd offset and is copied once into an aligned buffer.

use bytes::Bytes;
use tensorcast_core::{Tensor, TensorShape};
use tensorcast_proto::{decode_tensor, encode_tensor, serialize_tensor, serialize_tensor_into};

use super::baseline::MIB_256;
use super::Runner;

pub fn run(r: &mut Runner) {
    let names = [
        "proto_encode_content_256MiB",
        "proto_serialize_vec_256MiB",
        "proto_serialize_into_reused_vec_256MiB",
        "proto_decode_content_256MiB",
        "proto_decode_misaligned_256MiB",
    ];
    if !names.iter().any(|n| r.wants(n)) {
        return;
    }
    let n = MIB_256 / 4;
    let shape = TensorShape::new(&[n as i64]).unwrap_or_default();
    let Ok(t) = Tensor::from_vec((0..n).map(|i| i as f32).collect::<Vec<f32>>(), &shape) else {
        return;
    };
    r.measure("proto_encode_content_256MiB", MIB_256 as u64, || {
        encode_tensor(&t)
    });
    r.measure("proto_serialize_vec_256MiB", MIB_256 as u64, || {
        serialize_tensor(&t).expect("initialised")
    });
    let mut reused = Vec::new();
    r.measure(
        "proto_serialize_into_reused_vec_256MiB",
        MIB_256 as u64,
        || {
            reused.clear();
            serialize_tensor_into(&t, &mut reused).expect("initialised");
            reused.len()
        },
    );
    if r.wants("proto_decode_content_256MiB") {
        if let Ok(wire) = encode_tensor(&t) {
            r.measure_tiny(
                "proto_decode_content_256MiB",
                MIB_256 as u64,
                10_000,
                || decode_tensor(wire.clone()),
            );
        }
    }
    if r.wants("proto_decode_misaligned_256MiB") {
        let wire = Bytes::from(serialize_tensor(&t).expect("initialised"));
        r.measure("proto_decode_misaligned_256MiB", MIB_256 as u64, || {
            decode_tensor(wire.clone())
        });
    }
}
