//! `tf_observed/graph_run_errors.jsonl`: TensorFlow's full run-time error text for a failing
//! node of an imported GraphDef. The session's error must carry the kernel's message
//! (`Display`), the failing node (`Error::node`), and TensorFlow's full text with the
//! node-context suffix (`Error::full_message`, the runtime's status message).

use serde_json::Value;
use tensorcast::graph::{import_graph_def_bytes, Graph, Session, SessionOptions};

use crate::{hex_decode, tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    match check(rec) {
        Ok(()) => Outcome::Pass,
        Err(e) => Outcome::Fail(e),
    }
}

fn check(rec: &Value) -> Result<(), String> {
    let bytes = hex_decode(rec["graphdef_hex"].as_str().ok_or("no graphdef_hex")?)?;
    let graph = Graph::new();
    import_graph_def_bytes(&graph, &bytes).map_err(|e| format!("import: {e}"))?;
    let mut feeds = Vec::new();
    for (name, t) in rec["feeds"].as_object().ok_or("no feeds")? {
        feeds.push((name.as_str(), tensor_of(t)?));
    }
    let fetches: Vec<&str> = rec["fetches"]
        .as_array()
        .ok_or("no fetches")?
        .iter()
        .map(|f| f.as_str().unwrap_or(""))
        .collect();
    for optimize in [true, false] {
        let options = SessionOptions {
            optimize,
            ..SessionOptions::default()
        };
        let e = match Session::with_options(&graph, options).run(&feeds, &fetches, &[]) {
            Ok(_) => return Err("ran, expected an error".into()),
            Err(e) => e,
        };
        if e.to_string() != rec["message"].as_str().unwrap_or("") {
            return Err(format!(
                "message {:?}, expected {}",
                e.to_string(),
                rec["message"]
            ));
        }
        if let Some(node) = rec["node"].as_str() {
            if e.node() != Some(node) {
                return Err(format!("error at {:?}, expected {node}", e.node()));
            }
        }
        let full = rec["full_message"].as_str().unwrap_or("");
        if e.full_message() != full {
            return Err(format!(
                "full message {:?}, expected {full:?}",
                e.full_message()
            ));
        }
    }
    Ok(())
}
