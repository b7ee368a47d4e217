//! `cast.jsonl`: `Cast(input, type)` gives `expect` byte for byte. Records marked
//! `"platform_specific": true` (float to integer for NaN, infinities and out-of-range values,
//! where TensorFlow gives whatever the x86 instruction gives and tensorcast saturates) are
//! checked for success, dtype and shape only.
//!
//! `tf_observed/saturate_cast.jsonl` (op `saturate_cast`): `tf.dtypes.saturate_cast(input,
//! type)` for every pair of dtypes, recorded from TensorFlow 2.21 (`gen_saturate_cast.py`). A
//! refusal must be a refusal, with TensorFlow's text where TensorFlow's is an op error (a type
//! list, `Cast ... is not supported`) or its bool message; its other refusals are Python or
//! placement errors (`expected number, got ml_dtypes.bfloat16`, `Could not find device for node
//! ... ClipByValue[T=DT_UINT32]`), whose text tensorcast does not copy.

use serde_json::Value;
use tensorcast_core::{DataType, Tensor};
use tensorcast_kernels::cast::cast;
use tensorcast_kernels::cast::saturating::cast_saturating;

use crate::{check_tensor, dtype_of, shape_of, tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    outcome(check(rec, cast))
}

pub fn run_saturating(rec: &Value) -> Outcome {
    outcome(check(rec, cast_saturating))
}

fn outcome(r: Result<(), String>) -> Outcome {
    match r {
        Ok(()) => Outcome::Pass,
        Err(why) => Outcome::Fail(why),
    }
}

type CastFn = fn(&Tensor, DataType) -> tensorcast_core::Result<Tensor>;

fn check(rec: &Value, op: CastFn) -> Result<(), String> {
    let input = tensor_of(&rec["input"])?;
    let dtype = dtype_of(&rec["type"])?;
    let got = op(&input, dtype);
    if let Some(err) = rec.get("error") {
        let kind = err["kind"].as_str().unwrap_or("");
        let message = err["message"].as_str().unwrap_or("");
        // The recorded text is TensorFlow's own unless it is a Python-side refusal.
        let text_is_tensorflows = !matches!(kind, "TypeError" | "NotFoundError")
            || message.starts_with("Cannot find minimum value");
        return match got {
            Ok(t) => Err(format!("expected error {err}, got a {} tensor", t.dtype())),
            Err(e) if !text_is_tensorflows || e.to_string() == message => Ok(()),
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
