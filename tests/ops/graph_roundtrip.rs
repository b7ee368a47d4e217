//! `tf_observed/graph_functions.jsonl`: whole GraphDefs as TensorFlow 2.21 writes them beyond
//! single ops (frozen TF2 graphs with `NoOp` control outputs, control-only targets, function
//! libraries). Import + export must give TensorFlow's own re-export byte for byte (the function
//! library kept verbatim); where every op the fetches need has a kernel, the run must give
//! TensorFlow's outputs. A record whose run needs kernels tensorcast lacks is counted as
//! skipped for the run, never as passed: its round trip is still checked, and fails the record
//! when it is wrong.

use serde_json::Value;
use tensorcast::graph::{import_graph_def_bytes, Error, Graph, Session};

use crate::{check_tensor, hex_decode, hex_encode, tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    match check(rec) {
        Ok(true) => Outcome::Pass,
        Ok(false) => Outcome::Skip,
        Err(e) => Outcome::Fail(e),
    }
}

fn check(rec: &Value) -> Result<bool, String> {
    let bytes = hex_decode(rec["graphdef_hex"].as_str().ok_or("no graphdef_hex")?)?;
    let g = Graph::new();
    import_graph_def_bytes(&g, &bytes).map_err(|e| format!("import: {e}"))?;
    let back = hex_encode(&g.to_graph_def_bytes());
    if back != rec["reexport_hex"].as_str().unwrap_or_default() {
        return Err("export differs from TensorFlow's re-export".into());
    }
    let mut feeds = Vec::new();
    for (name, t) in rec["feeds"].as_object().ok_or("no feeds")? {
        feeds.push((name.clone(), tensor_of(t)?));
    }
    let feeds: Vec<(&str, tensorcast::Tensor)> =
        feeds.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    let names = |k: &str| -> Vec<String> {
        rec[k]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (fetches, targets) = (names("fetches"), names("targets"));
    let fetch: Vec<&str> = fetches.iter().map(String::as_str).collect();
    let target: Vec<&str> = targets.iter().map(String::as_str).collect();
    match Session::new(&g).run(&feeds, &fetch, &target) {
        Err(Error::MissingKernels(_)) if rec["needs_kernels"] == true => Ok(false),
        Err(e) => Err(format!("run: {e}")),
        Ok(out) => {
            for (name, t) in fetches.iter().zip(&out) {
                check_tensor(t, &rec["expect"][name.as_str()])
                    .map_err(|e| format!("{name}: {e}"))?;
            }
            Ok(true)
        }
    }
}
