//! `tf_observed/saved_model_run.jsonl`: SavedModels TensorFlow 2.21 wrote
//! (`tf_observed/saved_models/<model>/`, see `gen_saved_model_run.py`) and what their
//! signatures returned. tensorcast loads each (variables restored by running the model's own
//! restore function), runs the signature on the same inputs and must return the same tensors,
//! bit for bit (the models use exact ops only).

use std::path::PathBuf;

use serde_json::Value;
use tensorcast::graph::SavedModel;

use crate::{check_tensor, tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    match check(rec) {
        Ok(()) => Outcome::Pass,
        Err(e) => Outcome::Fail(e),
    }
}

fn check(rec: &Value) -> Result<(), String> {
    let model = rec["model"].as_str().ok_or("record without model")?;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tf_observed/saved_models")
        .join(model);
    let sm = SavedModel::load(&dir, &["serve"]).map_err(|e| format!("load {model}: {e}"))?;
    let key = rec["signature"]
        .as_str()
        .ok_or("record without signature")?;
    let inputs: Vec<(String, tensorcast::Tensor)> = rec["inputs"]
        .as_object()
        .ok_or("record without inputs")?
        .iter()
        .map(|(k, v)| Ok((k.clone(), tensor_of(v)?)))
        .collect::<Result<_, String>>()?;
    let feeds: Vec<(&str, tensorcast::Tensor)> = inputs
        .iter()
        .map(|(k, t)| (k.as_str(), t.clone()))
        .collect();
    let out = sm
        .run(key, &feeds)
        .map_err(|e| format!("{model}/{key}: {}", e.full_message()))?;
    let want = rec["outputs"].as_object().ok_or("record without outputs")?;
    if out.len() != want.len() {
        return Err(format!("{} outputs, expected {}", out.len(), want.len()));
    }
    for (k, t) in &out {
        let w = want
            .get(k)
            .ok_or_else(|| format!("unexpected output {k}"))?;
        check_tensor(t, w).map_err(|e| format!("{model}/{key} output {k}: {e}"))?;
    }
    Ok(())
}
