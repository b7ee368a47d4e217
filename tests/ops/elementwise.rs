//! `elementwise.jsonl`: the binary op `op` on `x` and `y` gives `expect` (dtype, shape and
//! bytes, or strings) or fails with exactly `error.message`, an error of TensorFlow's
//! `error.code` (our own records name it: `InvalidArgumentError`, `NotFoundError`; the shared
//! ones are all invalid-argument errors). A record with `"incompatible_shape_error": false`
//! runs Equal/NotEqual with that attribute. Every successful record is also replayed with `x`
//! read through a lazy broadcast view of itself (the same shape), which must give the same
//! bytes.

use serde_json::Value;
use tensorcast_core::Code;
use tensorcast_kernels::elementwise::{binary, BinaryOp};
use tensorcast_kernels::TensorOps;

use crate::{check_tensor, tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    match check(rec) {
        Ok(()) => Outcome::Pass,
        Err(why) => Outcome::Fail(why),
    }
}

fn check(rec: &Value) -> Result<(), String> {
    let name = rec["op"].as_str().ok_or("record without op")?;
    let op = BinaryOp::from_name(name).ok_or_else(|| format!("unknown op {name}"))?;
    let x = tensor_of(&rec["x"]).map_err(|e| format!("x: {e}"))?;
    let y = tensor_of(&rec["y"]).map_err(|e| format!("y: {e}"))?;
    let shape_error = rec["incompatible_shape_error"].as_bool().unwrap_or(true);
    let got = binary(op, &x, &y, shape_error);
    if let Some(err) = rec.get("error") {
        let want = err["message"].as_str().unwrap_or_default();
        let code = match err["code"].as_str() {
            None | Some("InvalidArgumentError") => Code::InvalidArgument,
            Some("NotFoundError") => Code::NotFound,
            Some("UnimplementedError") => Code::Unimplemented,
            Some(other) => return Err(format!("unknown error code {other}")),
        };
        return match got {
            Ok(t) => Err(format!(
                "expected error {want:?}, got a {} tensor of shape {}",
                t.dtype(),
                t.shape()
            )),
            Err(e) if e.code() != code => Err(format!("error {e:?} is not of code {code:?}")),
            Err(e) if e.to_string() == want => Ok(()),
            Err(e) => Err(format!("error {:?} != expected {want:?}", e.to_string())),
        };
    }
    let want = &rec["expect"];
    let got = got.map_err(|e| format!("unexpected error: {e}"))?;
    check_tensor(&got, want)?;
    // The same through a lazy view of x (read in place, with layout metadata).
    let xv = x.broadcast_view(x.shape()).map_err(|e| e.to_string())?;
    let via_view = binary(op, &xv, &y, shape_error).map_err(|e| format!("via view: {e}"))?;
    check_tensor(&via_view, want).map_err(|e| format!("via view: {e}"))?;
    Ok(())
}
