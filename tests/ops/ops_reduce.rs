//! `ops_reduce.jsonl` (tests/tf_observed/gen_ops_reduce.py): the reductions and
//! `ArgMax`/`ArgMin` of `tensorcast_kernels::reduce` eagerly, and their shape functions,
//! against TensorFlow 2.21: errors exactly; `Max`, `Min`, `All`, `Any`, `ArgMax`, `ArgMin` and
//! every integer result bit for bit (any NaN matching any NaN); `Sum`, `Mean` and `Prod` of
//! floating-point types within `2 * n * eps * s` per element (`n` the elements reduced, `eps`
//! the type's machine epsilon - `float`'s for `half` and `bfloat16`, then one rounding of
//! theirs - and `s` the sum (mean, product) of the magnitudes), the bound the module's docs
//! state; the largest `|ours - tf| / (n * eps * s)` measured is printed.

use serde_json::Value;
use tensorcast_core::{DataType, Tensor};
use tensorcast_kernels::reduce::{self, ArgOp, Reduction};

use super::ops_common::{
    attr_bool, check_close, check_error, inputs, max_ulps, note_worst, values,
};
use super::ops_linalg::{check_shape, partial};
use crate::{tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    let r = match rec["kind"].as_str() {
        Some("eager") => eager(rec),
        Some("shape") => shape(rec),
        _ => return Outcome::Skip,
    };
    match r {
        Ok(()) => Outcome::Pass,
        Err(why) => Outcome::Fail(why),
    }
}

fn reduction(name: &str) -> Option<Reduction> {
    use Reduction::*;
    [Sum, Mean, Max, Min, Prod, All, Any]
        .into_iter()
        .find(|r| r.name() == name)
}

fn arg_op(name: &str) -> Option<ArgOp> {
    [ArgOp::ArgMax, ArgOp::ArgMin]
        .into_iter()
        .find(|r| r.name() == name)
}

fn output_type(rec: &Value) -> Result<DataType, String> {
    match rec["attrs"]["output_type"].as_str() {
        None => Ok(DataType::INT64),
        Some(n) => DataType::from_name(n).ok_or_else(|| format!("unknown dtype {n}")),
    }
}

fn eager(rec: &Value) -> Result<(), String> {
    let op = rec["op"].as_str().unwrap_or_default();
    let ins = inputs(rec)?;
    let (x, axis) = (&ins[0].1, &ins[1].1);
    if let Some(a) = arg_op(op) {
        let got = reduce::arg_reduce(a, x, axis, output_type(rec)?);
        return match rec.get("error") {
            Some(err) => check_error(got, err),
            None => crate::check_tensor(
                &got.map_err(|e| format!("unexpected error: {e}"))?,
                &rec["expect"],
            ),
        };
    }
    let r = reduction(op).ok_or_else(|| format!("unknown op {op}"))?;
    let keep = attr_bool(rec, "keep_dims");
    let got = reduce::reduce(r, x, axis, keep);
    if let Some(err) = rec.get("error") {
        return check_error(got, err);
    }
    let got = got.map_err(|e| format!("unexpected error: {e}"))?;
    let want = tensor_of(&rec["expect"])?;
    let dtype = want.dtype();
    let floating =
        dtype.is_floating() || matches!(dtype, DataType::COMPLEX64 | DataType::COMPLEX128);
    if !floating {
        return crate::check_tensor(&got, &rec["expect"]);
    }
    if matches!(r, Reduction::Max | Reduction::Min) {
        let u = max_ulps(&got, &want)?;
        return if u == 0 {
            Ok(())
        } else {
            Err(format!("{u} ULPs from TensorFlow's (exact expected)"))
        };
    }
    // The magnitudes reduced the same way, in double, and the count reduced.
    let mags: Vec<f64> = values(x)?.iter().map(|v| v.0.hypot(v.1)).collect();
    let mags = Tensor::from_vec(mags, x.shape().clone()).map_err(|e| e.to_string())?;
    let scale = reduce::reduce(r, &mags, axis, keep).map_err(|e| e.to_string())?;
    let scale = scale.to_vec::<f64>().map_err(|e| e.to_string())?;
    let n = (x.num_elements().max(1) as usize) / (got.num_elements().max(1) as usize);
    // TensorFlow accumulates `half` and `bfloat16` in their own precision: the bound scales
    // with their epsilon (in units of `float`'s, which `check_close` uses).
    let c = match dtype {
        DataType::HALF => 2.0 * 2f64.powi(23 - 10),
        DataType::BFLOAT16 => 2.0 * 2f64.powi(23 - 7),
        _ => 2.0,
    };
    let worst = check_close(&got, &rec["expect"], n, &scale, c)?;
    note_worst(op, dtype, worst);
    Ok(())
}

fn shape(rec: &Value) -> Result<(), String> {
    let ins = rec["inputs"].as_array().ok_or("no inputs")?;
    let x = partial(&ins[0][2])?;
    let op = rec["op"].as_str().unwrap_or_default();
    if arg_op(op).is_some() {
        let d = partial(&ins[1][2])?;
        return check_shape(reduce::arg_reduce_shape(&x, &d, None), rec);
    }
    let keep = attr_bool(rec, "keep_dims");
    check_shape(reduce::reduce_shape(&x, None, keep), rec)
}
