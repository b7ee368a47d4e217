//! TensorProto workloads: encode and decode of float32 `tensor_content`, 256 MiB (next to
//! memcpy of the same bytes, when the filter names it) and 1 KiB (next to `memcpy_1KiB`
//! recorded in the same run). TensorFlow 2.21 takes about 330 ms to serialize and 180 ms to
//! parse the 256 MiB one on the reference machine.
//!
//! For each size (`<size>` is `256MiB` or `1KiB`):
//! - `proto_encode_content_<size>`: [`encode_tensor`], the `SerializeTensor` bytes written into
//!   a buffer from the default (block-reusing) allocator with the content 64-byte aligned.
//! - `proto_serialize_vec_<size>`: [`serialize_tensor`], the same bytes into a fresh `Vec`
//!   (pays the page faults of new memory every time).
//! - `proto_serialize_into_reused_vec_<size>`: [`serialize_tensor_into`] a cleared, reused
//!   `Vec` (no fresh memory after the first call).
//! - `proto_decode_content_<size>`: [`decode_tensor`] of `encode_tensor`'s output: the content
//!   is shared, so this is constant time (timed per call over many calls).
//! - `proto_decode_misaligned_<size>`: [`decode_tensor`] of the same bytes placed so that the
//!   content is not 4-byte aligned (as in most real encodings), so it is copied once into an
//!   aligned buffer.

use bytes::Bytes;
use tensorcast_core::{Tensor, TensorShape};
use tensorcast_proto::{
    decode_tensor, encode_tensor, serialize_tensor, serialize_tensor_header, serialize_tensor_into,
};

use super::baseline::{self, MIB_256};
use super::Runner;

/// Registers the TensorProto workloads.
pub fn run(r: &mut Runner) {
    sized(r, "256MiB", MIB_256, 1);
    sized(r, "1KiB", 1024, 100_000);
}

/// The workloads of one size; `iters` is the batch of the timed calls (1: single calls).
fn sized(r: &mut Runner, label: &str, bytes: usize, iters: u32) {
    let names = [
        "proto_encode_content",
        "proto_serialize_vec",
        "proto_serialize_into_reused_vec",
        "proto_decode_content",
        "proto_decode_misaligned",
    ]
    .map(|n| format!("{n}_{label}"));
    if !names.iter().any(|n| r.wants(n)) {
        return;
    }
    let n = bytes / 4;
    let shape = TensorShape::new(&[n as i64]).unwrap_or_default();
    let Ok(t) = Tensor::from_vec((0..n).map(|i| i as f32).collect::<Vec<f32>>(), &shape) else {
        return;
    };
    let time = Timing { bytes, iters };
    if iters > 1 {
        baseline::memcpy(r, label, bytes, iters);
    }
    time.run(r, &names[0], || encode_tensor(&t));
    time.run(r, &names[1], || serialize_tensor(&t).expect("initialised"));
    let mut reused = Vec::new();
    time.run(r, &names[2], || {
        reused.clear();
        serialize_tensor_into(&t, &mut reused).expect("initialised");
        reused.len()
    });
    if r.wants(&names[3]) {
        if let Ok(wire) = encode_tensor(&t) {
            r.measure_tiny(&names[3], bytes as u64, 10_000, || {
                decode_tensor(wire.clone())
            });
        }
    }
    if r.wants(&names[4]) {
        let wire = misaligned_copy(&t);
        time.run(r, &names[4], || decode_tensor(wire.clone()));
    }
}

/// How one size's workloads are timed: single calls (`iters == 1`) or batches of `iters`.
#[derive(Clone, Copy)]
struct Timing {
    bytes: usize,
    iters: u32,
}

impl Timing {
    fn run<T>(self, r: &mut Runner, name: &str, f: impl FnMut() -> T) {
        if self.iters == 1 {
            r.measure(name, self.bytes as u64, f);
        } else {
            r.measure_tiny(name, self.bytes as u64, self.iters, f);
        }
    }
}

/// `serialize_tensor`'s bytes placed so that the content starts one byte past a 4-byte
/// boundary, so decoding must copy it.
fn misaligned_copy(t: &Tensor) -> Bytes {
    let wire = serialize_tensor(t).expect("initialised");
    let header = serialize_tensor_header(t)
        .expect("initialised")
        .map_or(0, |h| h.len());
    let mut backing = vec![0u8; wire.len() + 8];
    let base = backing.as_ptr() as usize;
    let start = (0..8).find(|s| (base + s + header) % 4 == 1).unwrap_or(0);
    backing[start..start + wire.len()].copy_from_slice(&wire);
    Bytes::from(backing).slice(start..start + wire.len())
}
