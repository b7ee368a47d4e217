//! `tf_observed/graph_text.jsonl`: GraphDefs in the text format, as `tf.io.write_graph(...,
//! as_text=True)` writes them (every whole graph of the vectors, function libraries included)
//! and in the other forms protobuf's text parser takes. tensorcast's parser must give
//! TensorFlow's deterministic binary of what TensorFlow parses, byte for byte; and tensorcast's
//! own text of that GraphDef must parse back to it.

use serde_json::Value;
use tensorcast::proto::{
    graph_def_binary_to_text, graph_def_text_to_binary, looks_like_graph_def_text,
};

use crate::{hex_decode, hex_encode, Outcome};

pub fn run(rec: &Value) -> Outcome {
    match check(rec) {
        Ok(()) => Outcome::Pass,
        Err(e) => Outcome::Fail(e),
    }
}

fn check(rec: &Value) -> Result<(), String> {
    let text = rec["pbtxt"].as_str().ok_or("no pbtxt")?;
    let want = hex_decode(rec["graphdef_hex"].as_str().ok_or("no graphdef_hex")?)?;
    if !looks_like_graph_def_text(text.as_bytes()) {
        return Err("not detected as a text GraphDef".into());
    }
    let got = graph_def_text_to_binary(text).map_err(|e| format!("parse: {e}"))?;
    if got != want {
        return Err(format!(
            "binary differs from TensorFlow's:\n  ours   {}\n  theirs {}",
            hex_encode(&got),
            hex_encode(&want)
        ));
    }
    let ours = graph_def_binary_to_text(&want).map_err(|e| format!("print: {e}"))?;
    let again = graph_def_text_to_binary(&ours).map_err(|e| format!("reparse: {e}"))?;
    if again != want {
        return Err("our text does not parse back to the same GraphDef".into());
    }
    Ok(())
}
