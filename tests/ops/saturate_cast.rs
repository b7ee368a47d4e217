//! `tf_observed/saturate_cast.jsonl`: `tf.dtypes.saturate_cast(input, type)` for every pair of
//! dtypes, recorded from TensorFlow 2.21 (`gen_saturate_cast.py`). A result is compared byte
//! for byte; a refusal must be a refusal, with TensorFlow's text where TensorFlow's is an op
//! error (a type list, `Cast ... is not supported`) or its bool message. Its other refusals are
//! Python or placement errors (`expected number, got ml_dtypes.bfloat16`, `Could not find
//! device for node ... ClipByValue[T=DT_UINT32]`), whose text tensorcast does not copy.

use serde_json::Value;
use tensorcast_core::ops::cast_saturating::cast_saturating;

use crate::{check_tensor, dtype_of, tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    match check(rec) {
        Ok(()) => Outcome::Pass,
        Err(why) => Outcome::Fail(why),
    }
}

fn check(rec: &Value) -> Result<(), String> {
    let input = tensor_of(&rec["input"])?;
    let dtype = dtype_of(&rec["type"])?;
    let got = cast_saturating(&input, dtype);
    if let Some(err) = rec.get("error") {
        let kind = err["kind"].as_str().unwrap_or("");
        let message = err["message"].as_str().unwrap_or("");
        let text_is_tensorflows = matches!(kind, "InvalidArgumentError" | "UnimplementedError")
            || message.starts_with("Cannot find minimum value");
        return match got {
            Ok(t) => Err(format!("expected error {err}, got a {} tensor", t.dtype())),
            Err(e) if !text_is_tensorflows || e.to_string() == message => Ok(()),
            Err(e) => Err(format!("error {e} != expected {err}")),
        };
    }
    let got = got.map_err(|e| format!("unexpected error: {e}"))?;
    check_tensor(&got, &rec["expect"])
}
