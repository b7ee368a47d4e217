//! `cast.jsonl`: `Cast(input, type)` gives `expect` byte for byte. Records marked
//! `"platform_specific": true` (float to integer for NaN, infinities and out-of-range values,
//! where TensorFlow gives whatever the x86 instruction gives and tensorcast saturates) are
//! checked for success, dtype and shape only.

use serde_json::Value;
use tensorcast_core::ops::cast::cast;

use crate::{check_tensor, dtype_of, shape_of, tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    match check(rec) {
        Ok(()) => Outcome::Pass,
        Err(why) => Outcome::Fail(why),
    }
}

fn check(rec: &Value) -> Result<(), String> {
    let input = tensor_of(&rec["input"])?;
    let dtype = dtype_of(&rec["type"])?;
    let got = cast(&input, dtype);
    if let Some(err) = rec.get("error") {
        return match got {
            Ok(t) => Err(format!("expected error {err}, got a {} tensor", t.dtype())),
            Err(e) if err["message"].as_str() == Some(&e.to_string()) => Ok(()),
            Err(e) => Err(format!("error {e:?} != expected {err}")),
        };
    }
    let got = got.map_err(|e| format!("unexpected error: {e}"))?;
    let want = &rec["expect"];
    if rec["platform_specific"].as_bool() == Some(true) {
        let (want_dtype, want_shape) = (dtype_of(&want["dtype"])?, shape_of(&want["shape"])?);
        if got.dtype() != want_dtype || got.shape() != &want_shape {
            return Err(format!(
                "got {} {} != expected {} {}",
                got.dtype(),
                got.shape(),
                want_dtype,
                want_shape
            ));
        }
        return Ok(());
    }
    check_tensor(&got, want)
}
