//! One module per vector file: what each record asks and how to check it.

use serde_json::Value;

use crate::Outcome;

mod bitcast;
mod broadcast_to;
mod cast;
mod checkpoint;
mod elementwise;
mod example;
mod graph_common;
mod graph_def;
mod graph_import_error;
mod graph_roundtrip;
mod graph_run_error;
pub mod graph_shape_inference;
mod graph_text;
mod ops_array;
mod ops_binary;
mod ops_common;
mod ops_einsum;
mod ops_linalg;
mod ops_math;
mod ops_nn;
mod ops_reduce;
mod parse;
mod saved_model;
mod saved_model_run;
mod serialize;
mod summarize;

/// Prints what the runners measured over `file` (largest errors against TensorFlow).
pub fn finish(file: &str) {
    ops_common::report_worst(file);
}

/// Runs one record of `file`.
pub fn run(file: &str, rec: &Value) -> Outcome {
    match file {
        "bitcast.jsonl" => bitcast::run(rec),
        "broadcast_to.jsonl" => broadcast_to::run(rec),
        "cast.jsonl" => cast::run(rec),
        "elementwise.jsonl" => elementwise::run(rec),
        "graph_def.jsonl" => graph_def::run(rec),
        "graph_shape_inference.jsonl" => graph_shape_inference::run(rec),
        "tf_observed/ops_binary.jsonl" => ops_binary::run(rec),
        "parse.jsonl" => parse::run(rec),
        "serialize.jsonl" => serialize::run(rec),
        "summarize.jsonl" => summarize::run(rec),
        "tf_observed/ops_array.jsonl" => ops_array::run(rec),
        "tf_observed/ops_linalg.jsonl" => ops_linalg::run(rec),
        "tf_observed/ops_nn.jsonl" => ops_nn::run(rec),
        "tf_observed/ops_einsum.jsonl" => ops_einsum::run(rec),
        "tf_observed/ops_math.jsonl" => ops_math::run(rec),
        "tf_observed/ops_reduce.jsonl" => ops_reduce::run(rec),
        // Other files (tests/tf_observed/): dispatch on the record's op.
        _ => match rec["op"].as_str() {
            Some("bitcast") => bitcast::run(rec),
            Some("broadcast_to") => broadcast_to::run(rec),
            Some("cast") => cast::run(rec),
            Some("checkpoint" | "checkpoint_error") => checkpoint::run(rec),
            Some("saturate_cast") => cast::run_saturating(rec),
            Some(op) if tensorcast_kernels::elementwise::BinaryOp::from_name(op).is_some() => {
                elementwise::run(rec)
            }
            Some("graph_run_error") => graph_run_error::run(rec),
            Some("graph_import_error") => graph_import_error::run(rec),
            Some("graph_roundtrip") => graph_roundtrip::run(rec),
            Some("graph_text") => graph_text::run(rec),
            Some(
                "tfrecord_read"
                | "tfrecord_write"
                | "parse_example"
                | "parse_single_example"
                | "parse_sequence_example",
            ) => example::run(rec),
            Some("parse_tensor") => parse::run(rec),
            Some("saved_model") => saved_model::run(rec),
            None if rec.get("model").is_some() && rec.get("signature").is_some() => {
                saved_model_run::run(rec)
            }
            Some("serialize_tensor") => serialize::run(rec),
            Some("summarize") => summarize::run(rec),
            _ => Outcome::Skip,
        },
    }
}
