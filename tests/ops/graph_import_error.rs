//! `tf_observed/graph_import_errors.jsonl`: GraphDefs TensorFlow refuses (or accepts) at import,
//! with its message. tensorcast's import must refuse exactly those, with the same text (for
//! shape-function messages, the part before TensorFlow's ` for '{{node ...` context).

use serde_json::Value;
use tensorcast::graph::{import_graph_def_bytes, Graph};

use crate::{hex_decode, Outcome};

pub fn run(rec: &Value) -> Outcome {
    match check(rec) {
        Ok(()) => Outcome::Pass,
        Err(e) => Outcome::Fail(e),
    }
}

fn check(rec: &Value) -> Result<(), String> {
    let bytes = hex_decode(rec["graphdef_hex"].as_str().ok_or("no graphdef_hex")?)?;
    let got = import_graph_def_bytes(&Graph::new(), &bytes).err();
    match (rec["message"].as_str(), got) {
        (None, None) => Ok(()),
        (None, Some(e)) => Err(format!("TensorFlow imports it; tensorcast: {e}")),
        (Some(want), None) => Err(format!(
            "TensorFlow refuses it ({want}); tensorcast imports it"
        )),
        (Some(want), Some(e)) => {
            let want = want.find(" for '{{node ").map_or(want, |i| &want[..i]);
            let got = e.to_string();
            if got == want {
                Ok(())
            } else {
                Err(format!("message {got:?}, TensorFlow's {want:?}"))
            }
        }
    }
}
