//! `broadcast_to.jsonl`: `BroadcastTo(input, shape)` with the shape operand built as an int32 or
//! int64 vector (`shape_dtype`), compared dtype, shape and bytes (or strings), or the error
//! message exactly.

use serde_json::Value;
use tensorcast_core::{Code, DataType, Tensor, TensorShape};
use tensorcast_kernels::broadcast::broadcast_to_op;

use crate::{check_tensor, dtype_of, tensor_of, Outcome};

/// The shape operand: a rank-1 tensor of `shape_dtype` holding the record's values.
fn shape_tensor(values: &Value, dtype: DataType) -> Result<Tensor, String> {
    let vals: Vec<i64> = values
        .as_array()
        .ok_or("shape is not an array")?
        .iter()
        .map(|d| d.as_i64().ok_or("shape value is not an integer"))
        .collect::<Result<_, _>>()?;
    let dims = TensorShape::new(&[vals.len() as i64]).map_err(|e| e.to_string())?;
    let t = match dtype {
        DataType::INT32 => {
            let v: Vec<i32> = vals
                .iter()
                .map(|&x| i32::try_from(x).map_err(|_| format!("{x} does not fit in int32")))
                .collect::<Result<_, _>>()?;
            Tensor::from_vec(v, &dims)
        }
        DataType::INT64 => Tensor::from_vec(vals, &dims),
        other => return Err(format!("shape_dtype {other} is not int32 or int64")),
    };
    t.map_err(|e| e.to_string())
}

pub fn run(rec: &Value) -> Outcome {
    let input = match tensor_of(&rec["input"]) {
        Ok(t) => t,
        Err(e) => return Outcome::Fail(format!("input: {e}")),
    };
    let shape = match dtype_of(&rec["shape_dtype"]).and_then(|d| shape_tensor(&rec["shape"], d)) {
        Ok(t) => t,
        Err(e) => return Outcome::Fail(format!("shape: {e}")),
    };
    let got = broadcast_to_op(&input, &shape);
    match (&rec["expect"], &rec["error"], got) {
        (want, Value::Null, Ok(t)) if !want.is_null() => {
            if let Err(e) = check_tensor(&t, want) {
                return Outcome::Fail(e);
            }
            // TensorFlow forwards the input when the shape is its own: no copy.
            if t.shape() == input.shape()
                && input.num_elements() > 0
                && !t.shares_buffer_with(&input)
            {
                return Outcome::Fail("same shape, but the result is a copy".into());
            }
            Outcome::Pass
        }
        (_, Value::Null, Err(e)) => Outcome::Fail(format!("unexpected error: {e}")),
        (_, err, Ok(t)) if !err.is_null() => Outcome::Fail(format!(
            "expected error {:?}, got a {} tensor of shape {}",
            err["message"],
            t.dtype(),
            t.shape()
        )),
        (_, err, Err(e)) => {
            let want = err["message"].as_str().unwrap_or_default();
            if e.code() != Code::InvalidArgument {
                Outcome::Fail(format!("error {e:?} is not an invalid-argument error"))
            } else if e.to_string() == want {
                Outcome::Pass
            } else {
                Outcome::Fail(format!("error {:?} != expected {want:?}", e.to_string()))
            }
        }
        _ => Outcome::Fail("record has neither expect nor error".into()),
    }
}
