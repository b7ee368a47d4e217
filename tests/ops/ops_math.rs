//! `ops_math.jsonl` (tests/tf_observed/gen_ops_math.py): the unary math ops and activations
//! of `tensorcast_kernels::math` eagerly, against TensorFlow 2.21: errors exactly; integer and
//! `bool` results bit for bit; floating-point results within [`ulp_bound`] units in the last
//! place of the result's type (0 for the ops TensorFlow computes exactly), NaN where
//! TensorFlow has NaN. The bounds are the ones the kernels' docs state; the largest distance
//! measured per op and dtype is printed.

use serde_json::Value;
use tensorcast_core::DataType;
use tensorcast_kernels::math::{self, UnaryOp};

use super::ops_common::{check_error, inputs, max_ulps, note_worst, values};
use crate::{tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    match eager(rec) {
        Ok(()) => Outcome::Pass,
        Err(why) => Outcome::Fail(why),
    }
}

pub fn unary_op(name: &str) -> Option<UnaryOp> {
    use UnaryOp::*;
    [
        Relu, Relu6, Elu, Selu, Sigmoid, Tanh, Softplus, Exp, Log, Log1p, Sqrt, Rsqrt, Square, Neg,
        Abs, Sign, Erf, Erfc, Floor, Ceil, Round, Reciprocal,
    ]
    .into_iter()
    .find(|op| op.name() == name)
}

/// How far a result may be from TensorFlow's.
#[derive(Debug, Clone, Copy)]
pub enum Bound {
    /// At most this many ULPs of the result's type (0: bit for bit, NaN for NaN).
    Ulps(u64),
    /// `|ours - tf| <= k * eps * (1 + |tf|)` (`eps` the type's machine epsilon): ops whose
    /// result cancels (`exp(x) - 1`, `x - max - log(sum)`), where ULPs of tiny results say
    /// nothing.
    Abs(f64),
}

/// The bound for `op` on `dtype`: the kernels' stated bounds (`tensorcast_kernels::math`),
/// measured on these records.
pub fn bound(op: &str, dtype: DataType) -> Bound {
    let complex = matches!(dtype, DataType::COMPLEX64 | DataType::COMPLEX128);
    Bound::Ulps(match op {
        "Relu" | "Relu6" | "Neg" | "Abs" | "Floor" | "Ceil" | "Round" | "LeakyRelu"
        | "LogicalNot" => 0,
        "Sign" | "Square" | "Sqrt" if !complex => 0,
        "Exp" | "Reciprocal" | "Square" => 1,
        "Sign" | "Sqrt" | "Rsqrt" => 2,
        "Erf" => 3,
        "Sigmoid" | "Tanh" | "Log1p" => 4,
        "Erfc" | "Softplus" => 5,
        "Softmax" => 10,
        "Log" if complex => 128,
        "Log" => 1,
        "Elu" | "Selu" => return Bound::Abs(2.0),
        "LogSoftmax" => return Bound::Abs(4.0),
        _ => 0,
    })
}

fn eps_of(dtype: DataType) -> f64 {
    match dtype {
        DataType::HALF => 2f64.powi(-10),
        DataType::BFLOAT16 => 2f64.powi(-7),
        DataType::FLOAT | DataType::COMPLEX64 => f64::from(f32::EPSILON),
        _ => f64::EPSILON,
    }
}

fn eager(rec: &Value) -> Result<(), String> {
    let op = rec["op"].as_str().unwrap_or_default();
    let ins = inputs(rec)?;
    let x = &ins[0].1;
    let got = match op {
        "Softmax" => math::softmax(x),
        "LogSoftmax" => math::log_softmax(x),
        "LogicalNot" => math::logical_not(x),
        "LeakyRelu" => {
            let alpha = rec["attrs"]["alpha"].as_f64().unwrap_or(0.2) as f32;
            math::leaky_relu(x, alpha)
        }
        name => match unary_op(name) {
            Some(u) => math::unary(u, x),
            None => return Err(format!("unknown op {name}")),
        },
    };
    if let Some(err) = rec.get("error") {
        return check_error(got, err);
    }
    let got = got.map_err(|e| format!("unexpected error: {e}"))?;
    let want = tensor_of(&rec["expect"])?;
    let dtype = want.dtype();
    if !(dtype.is_floating() || matches!(dtype, DataType::COMPLEX64 | DataType::COMPLEX128)) {
        return crate::check_tensor(&got, &rec["expect"]);
    }
    match bound(op, dtype) {
        Bound::Ulps(b) => {
            let ulps = max_ulps(&got, &want)?;
            note_worst(op, dtype, ulps as f64);
            if ulps > b {
                return Err(format!("{ulps} ULPs from TensorFlow's > bound {b}"));
            }
        }
        Bound::Abs(k) => {
            // NaN placement as ULPs check it; then the absolute bound.
            max_ulps(&got, &want)?;
            let (g, w) = (values(&got)?, values(&want)?);
            let e = eps_of(dtype);
            let mut worst = 0.0f64;
            for (i, (a, b)) in g.iter().zip(&w).enumerate() {
                if b.0.is_nan() || (a.0 == b.0) {
                    continue;
                }
                let d = (a.0 - b.0).abs() / (e * (1.0 + b.0.abs()));
                worst = worst.max(d);
                if d > k {
                    return Err(format!(
                        "element {i}: {} vs TensorFlow's {}: {d:.2} eps > bound {k}",
                        a.0, b.0
                    ));
                }
            }
            note_worst(op, dtype, worst);
        }
    }
    Ok(())
}
