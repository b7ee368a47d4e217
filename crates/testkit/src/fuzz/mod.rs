//! The bodies of the fuzz targets in `fuzz/`, here so that the corpora also replay as ordinary
//! tests (`crates/testkit/tests/fuzz_corpus.rs`). Each `run` must never panic, whatever the bytes.

pub mod arrow_read;
pub mod checkpoint_index;
pub mod event_file;
pub mod example_parse;
pub mod graph_import;
pub mod graph_text;
pub mod npy_header;
pub mod npz;
pub mod ops_array;
pub mod ops_bitcast;
pub mod ops_broadcast;
pub mod ops_cast;
pub mod ops_elementwise;
pub mod ops_math;
pub mod ops_nn;
pub mod ops_tensor_list;
pub mod proto_decode;
mod reader;
pub mod safetensors_header;
pub mod saved_model;
pub mod tfrecord_reader;

/// A fuzz target's body.
pub type Body = fn(&[u8]);

/// Every target: its name (the folder under `fuzz/corpus/`) and body.
pub const TARGETS: &[(&str, Body)] = &[
    ("arrow_read", arrow_read::run),
    ("checkpoint_index", checkpoint_index::run),
    ("event_file", event_file::run),
    ("example_parse", example_parse::run),
    ("graph_import", graph_import::run),
    ("graph_text", graph_text::run),
    ("npy_header", npy_header::run),
    ("npz", npz::run),
    ("ops_array", ops_array::run),
    ("ops_bitcast", ops_bitcast::run),
    ("ops_broadcast", ops_broadcast::run),
    ("ops_cast", ops_cast::run),
    ("ops_elementwise", ops_elementwise::run),
    ("ops_math", ops_math::run),
    ("ops_nn", ops_nn::run),
    ("ops_tensor_list", ops_tensor_list::run),
    ("proto_decode", proto_decode::run),
    ("safetensors_header", safetensors_header::run),
    ("tfrecord_reader", tfrecord_reader::run),
    ("saved_model", saved_model::run),
];
