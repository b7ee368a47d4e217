//! Fuzz target body: arbitrary bytes as a TensorFlow checkpoint held in memory. The input is
//! `[u16 LE n][n bytes of .index][the rest: data shard 0]`: the index table (footer, handles,
//! blocks, checksums, snappy), the header and entries (dtypes, shapes, offsets, sizes, slices,
//! shard ids), the string and variant layouts and the object graph are all under the fuzzer's
//! control. When the top bit of `n` is set, the index part is instead a list of entries
//! `[u8 key length][key][u16 LE value length][value]` written into a valid table (so that
//! mutations reach the bundle entries past the block checksums) and tensor checksums are not
//! verified (so that they reach the string and variant layouts). Bad input must be an error, never a panic or an allocation the input does not
//! justify (run with `-malloc_limit_mb`); a tensor copied as bytes (`stream_bytes`) must give
//! the bytes `read` gives, or fail where it fails; what reads must write back to a checkpoint
//! that reads again to the same tensors.

use tensorcast_buffer::Buffer;
use tensorcast_core::Tensor;
use tensorcast_io::checkpoint::{
    checkpoint_bytes, table_bytes, Checkpoint, CheckpointWriteOptions,
};
use tensorcast_io::ReadOptions;

fn same(a: &Tensor, b: &Tensor) -> bool {
    a == b
        || (a.dtype() == b.dtype()
            && a.shape() == b.shape()
            && a.dtype().can_use_memcpy()
            && a.tensor_data().ok() == b.tensor_data().ok())
}

/// `[u8 key length][key][u16 LE value length][value]...`, as far as the bytes go.
fn entries(mut b: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    while let Some((&kl, rest)) = b.split_first() {
        let kl = usize::from(kl);
        let Some(key) = rest.get(..kl) else { break };
        let Some(vl) = rest.get(kl..kl + 2) else {
            break;
        };
        let vl = usize::from(u16::from_le_bytes([vl[0], vl[1]]));
        let Some(value) = rest.get(kl + 2..kl + 2 + vl) else {
            break;
        };
        out.push((key, value));
        b = &rest[kl + 2 + vl..];
    }
    out
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let Some(head) = data.get(..2) else {
        return;
    };
    let rest = &data[2..];
    let raw = u16::from_le_bytes([head[0], head[1]]);
    let structured = raw & 0x8000 != 0;
    let n = usize::from(raw & 0x7fff).min(rest.len());
    let (index, shard) = rest.split_at(n);
    let built;
    let index = if structured {
        built = table_bytes(entries(index));
        built.as_slice()
    } else {
        index
    };
    let options = ReadOptions {
        max_memory: 16 << 20,
        ..ReadOptions::default()
    };
    let Ok(shard) = Buffer::copy_from_slice(shard) else {
        return;
    };
    let Ok(mut ckpt) = Checkpoint::from_memory(index, vec![shard], &options) else {
        return;
    };
    ckpt.set_verify_checksums(!structured);
    let _ = ckpt.debug_string();
    let _ = ckpt.object_graph();
    let keys: Vec<String> = ckpt.keys().map(String::from).collect();
    let mut read = Vec::new();
    for k in keys.iter().take(256) {
        let got = ckpt.read(k);
        // Copied as bytes: the same bytes as read, or the same refusal.
        if ckpt.is_streamable(k) {
            let mut out = Vec::new();
            let streamed = ckpt.stream_bytes(k, &mut out);
            match &got {
                Ok(t) => {
                    assert!(streamed.is_ok(), "{k}: read but not streamed");
                    assert_eq!(t.tensor_data().ok(), Some(out.as_slice()), "{k}");
                }
                Err(_) => assert!(streamed.is_err(), "{k}: streamed but not read"),
            }
        }
        if let Ok(t) = got {
            read.push(tensorcast_io::NamedTensor::new(k.clone(), t));
        }
    }
    // What reads writes back and reads again the same (names that are not valid UTF-8 may
    // collide once made strings: then the writer refuses the duplicate).
    let Ok((index, data)) = checkpoint_bytes(&read, &CheckpointWriteOptions::default()) else {
        return;
    };
    let back = Checkpoint::from_memory(&index, vec![Buffer::from_vec(data)], &options)
        .expect("a written checkpoint opens");
    for nt in &read {
        let t = back.read(&nt.name).expect("a written tensor reads");
        assert!(same(&t, &nt.tensor), "{} changed in a round trip", nt.name);
    }
}
