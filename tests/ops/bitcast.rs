//! `bitcast.jsonl`: TensorFlow's `Bitcast(input, type)`.
//!
//! A success must give the expected dtype, shape and bytes, and share the input's buffer (zero
//! copy) whenever the input has one. An error must be an invalid-argument error; its message
//! is compared exactly when TensorFlow's starts with `Cannot bitcast` (the type-list errors
//! carry TensorFlow's node context, which tensorcast does not print).

use serde_json::Value;
use tensorcast_core::Code;
use tensorcast_kernels::bitcast::bitcast;

use crate::{check_tensor, dtype_of, tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    let input = match tensor_of(&rec["input"]) {
        Ok(t) => t,
        Err(e) => return Outcome::Fail(format!("input: {e}")),
    };
    let dtype = match dtype_of(&rec["type"]) {
        Ok(d) => d,
        Err(e) => return Outcome::Fail(format!("type: {e}")),
    };
    let got = bitcast(&input, dtype);
    match (got, rec.get("expect"), rec.get("error")) {
        (Ok(out), Some(want), None) => {
            if let Err(e) = check_tensor(&out, want) {
                return Outcome::Fail(e);
            }
            if input.buffer().is_some() && !out.shares_buffer_with(&input) {
                return Outcome::Fail("the result does not share the input's buffer".into());
            }
            if out.data_ptr() != input.data_ptr() {
                return Outcome::Fail("the result does not start at the input's data".into());
            }
            Outcome::Pass
        }
        (Err(e), None, Some(want)) => {
            if e.code() != Code::InvalidArgument {
                return Outcome::Fail(format!("error {e:?} is not an invalid-argument error"));
            }
            let Some(msg) = want["message"].as_str() else {
                return Outcome::Fail("error record without a message".into());
            };
            if msg.starts_with("Cannot bitcast") && e.to_string() != msg {
                return Outcome::Fail(format!("message {:?} != expected {msg:?}", e.to_string()));
            }
            Outcome::Pass
        }
        (Ok(out), None, Some(want)) => Outcome::Fail(format!(
            "succeeded with {out:?}, expected error {}",
            want["message"]
        )),
        (Err(e), Some(_), None) => Outcome::Fail(format!("failed with {e:?}, expected success")),
        _ => Outcome::Fail("record has both or neither of expect and error".into()),
    }
}
