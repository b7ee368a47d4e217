//! TensorFlow checkpoints (V2 "tensor bundles"), read and written without TensorFlow.
//!
//! A checkpoint with prefix `P` is `P.index`, a table of entries, and one or more data shards
//! `P.data-NNNNN-of-NNNNN` holding the tensors' bytes (`tf.train.Checkpoint` writes
//! `ckpt-N.index` + `ckpt-N.data-00000-of-00001` and a text `checkpoint` state file naming the
//! latest).
//!
//! # Design
//! - **Lazy.** [`Checkpoint::open`] reads and checks the `.index` only (TensorFlow's LevelDB
//!   fork: see `table.rs`): listing a 100 GB checkpoint costs its index. A tensor's bytes are
//!   read by [`Checkpoint::read`], from a memory map of its shard (zero-copy where the offset
//!   suits the dtype: TensorFlow packs tensors densely, so a float tensor after an odd-sized
//!   string is copied) with [`ReadMode::Map`](crate::ReadMode::Map), or with positioned reads
//!   into an aligned buffer with [`ReadMode::Read`](crate::ReadMode::Read), which a shard
//!   truncated or replaced meanwhile cannot turn into a signal.
//! - **Verified.** Every tensor's masked CRC32C is checked by default (`crc.rs`: the
//!   `crc-fast` crate's carry-less-multiply folding, a large mapped tensor's halves on two
//!   threads), with TensorFlow's error text naming the bundle
//!   and shard; [`Checkpoint::set_verify_checksums`] skips it. Strings use their own layout
//!   (`varint64` lengths, a masked CRC of the lengths *as 4-byte integers* - not of the varints,
//!   the checksum trap -, then the bytes), variants theirs (per element length, proto, running
//!   CRC). Big-endian bundles are byte-swapped after the CRC check.
//! - **Bounded.** Nothing is allocated that the files do not justify: an entry's byte count
//!   must match its dtype and shape and lie inside its shard before anything is read; a string
//!   tensor cannot claim more elements than its bytes; a partitioned tensor's slices must add up
//!   to it and exist in the shards before the full tensor is allocated, and must tile it
//!   exactly (no overlap, no gap); a snappy index block cannot claim more than
//!   [`ReadOptions::max_memory`](crate::ReadOptions::max_memory). Every failure is an
//!   [`IoError`](crate::IoError), never a panic.
//! - **TensorFlow's words.** Where TensorFlow has a message for a failure (bad magic, a block
//!   or tensor checksum mismatch, a missing shard, a short shard, versions) the error's text is
//!   TensorFlow's, as `tests/tf_observed/checkpoint.jsonl` records it.
//! - **Object graphs.** [`Checkpoint::object_graph`] decodes a TF2 checkpoint's
//!   `_CHECKPOINTABLE_OBJECT_GRAPH` and gives every tensor its object path and, for optimizer
//!   slots, the variable they belong to ([`ObjectGraph`]).
//! - **Byte-identical writes.** [`write_checkpoint`] writes what TensorFlow 2.21's `SaveV2`
//!   writes for the same names and tensors in the same order, byte for byte (the conformance
//!   runner compares them with TensorFlow's own files), atomically: both files are written to
//!   temporary files and renamed only when both are complete.
//!
//! ```
//! use tensorcast_core::{TString, Tensor};
//! use tensorcast_io::checkpoint::{write_checkpoint, Checkpoint, CheckpointWriteOptions, ObjectGraph};
//! use tensorcast_io::{NamedTensor, ReadOptions};
//!
//! let dir = tempfile::tempdir()?;
//! let prefix = dir.path().join("ckpt-1");
//! let kernel = "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE";
//! let tensors = vec![
//!     NamedTensor::new(kernel, Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2i64, 2])?),
//!     NamedTensor::new("vocab", Tensor::vector(&[TString::from("a"), TString::from("bc")])),
//! ];
//! let options = CheckpointWriteOptions {
//!     object_graph: Some(ObjectGraph::from_keys([kernel])),
//!     ..CheckpointWriteOptions::default()
//! };
//! write_checkpoint(&prefix, &tensors, &options)?;
//!
//! // Open by prefix, `.index`, a `.data-*` file or the directory's `checkpoint` state file.
//! let ckpt = Checkpoint::open(&dir.path().join("ckpt-1.index"), &ReadOptions::default())?;
//! let keys: Vec<&str> = ckpt.keys().collect();
//! assert_eq!(keys, ["_CHECKPOINTABLE_OBJECT_GRAPH", kernel, "vocab"]);
//! assert_eq!(ckpt.entry(kernel).unwrap().shape.dim_sizes(), &[2, 2]);
//! assert_eq!(ckpt.read("vocab")?, tensors[1].tensor);
//! let graph = ckpt.object_graph()?.expect("a TF2 checkpoint");
//! assert_eq!(graph.tensor(kernel).unwrap().path, "model/dense/kernel");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod commit;
mod crc;
mod object_graph;
mod reader;
mod slices;
mod table;
mod writer;

pub use object_graph::{escape_local_name, unescape_local_name, ObjectGraph, ObjectTensor, SlotOf};
pub use reader::{resolve_prefix, Checkpoint, CheckpointEntry};
pub use writer::{
    bundle_bytes, checkpoint_bytes, sharded_bundle_bytes, stored_items, write_bundle,
    write_checkpoint, write_checkpoint_streamed, write_sharded_bundle, BundleItem,
    CheckpointWriteOptions,
};

/// The key of a TF2 checkpoint's object graph (`OBJECT_GRAPH_PROTO_KEY`).
pub const OBJECT_GRAPH_KEY: &str = "_CHECKPOINTABLE_OBJECT_GRAPH";

/// The TensorFlow version whose messages the errors quote.
pub(crate) const TF_VERSION: &str = "2.21.0";

/// A table in the `.index` format holding `entries` (sorted by key here, a repeated key kept
/// once, first given wins), written with TensorFlow's options: the raw table writer under
/// [`write_checkpoint`], for tools and tests that build indexes of their own.
pub fn table_bytes<'a>(entries: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> Vec<u8> {
    let mut v: Vec<(&[u8], &[u8])> = entries.into_iter().collect();
    v.sort_by(|a, b| a.0.cmp(b.0));
    v.dedup_by(|a, b| a.0 == b.0);
    let mut t = table::TableBuilder::new();
    for (k, val) in v {
        t.add(k, val);
    }
    t.finish()
}

/// `DataFilename(prefix, shard, num_shards)`: `prefix.data-00000-of-00001`.
pub fn data_file_name(prefix: &str, shard: i32, num_shards: i32) -> String {
    format!("{prefix}.data-{shard:05}-of-{num_shards:05}")
}

#[cfg(test)]
mod tests;
