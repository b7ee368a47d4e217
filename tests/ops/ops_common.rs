//! Helpers of the op-family runners (`ops_linalg`, `ops_nn`): a record's inputs and attrs,
//! error matching, and comparison of floating-point results within a per-element bound.

use serde_json::Value;
use tensorcast_core::{bf16, f16, Code, Complex32, Complex64, DataType, Error, Tensor};

use crate::{check_tensor, tensor_of};

/// The record's inputs by argument name, in order.
pub fn inputs(rec: &Value) -> Result<Vec<(String, Tensor)>, String> {
    rec["inputs"]
        .as_array()
        .ok_or("record without inputs")?
        .iter()
        .map(|pair| {
            let name = pair[0].as_str().ok_or("input without name")?.to_string();
            Ok((
                name,
                tensor_of(&pair[1]).map_err(|e| format!("input: {e}"))?,
            ))
        })
        .collect()
}

pub fn attr_bool(rec: &Value, name: &str) -> bool {
    rec["attrs"][name].as_bool().unwrap_or(false)
}

/// Checks an error against the record's `error` (code and exact text).
pub fn check_error(got: Result<Tensor, Error>, err: &Value) -> Result<(), String> {
    let want = err["message"].as_str().unwrap_or_default();
    let code = match err["code"].as_str() {
        None | Some("InvalidArgumentError") => Code::InvalidArgument,
        Some("NotFoundError") => Code::NotFound,
        Some("UnimplementedError") => Code::Unimplemented,
        Some("ResourceExhaustedError") => Code::ResourceExhausted,
        Some("AbortedError") => Code::Aborted,
        Some(other) => return Err(format!("unknown error code {other}")),
    };
    match got {
        Ok(t) => Err(format!(
            "expected error {want:?}, got a {} tensor of shape {}",
            t.dtype(),
            t.shape()
        )),
        Err(e) if e.code() != code => Err(format!("error {e:?} is not of code {code:?}")),
        Err(e) if e.to_string() == want => Ok(()),
        Err(e) => Err(format!("error {:?} != expected {want:?}", e.to_string())),
    }
}

/// A tensor's elements as (re, im) pairs of f64 (im 0 for real types).
pub fn values(t: &Tensor) -> Result<Vec<(f64, f64)>, String> {
    let e = |x: Error| x.to_string();
    Ok(match t.dtype() {
        DataType::FLOAT => t
            .to_vec::<f32>()
            .map_err(e)?
            .iter()
            .map(|&v| (f64::from(v), 0.0))
            .collect(),
        DataType::DOUBLE => t
            .to_vec::<f64>()
            .map_err(e)?
            .iter()
            .map(|&v| (v, 0.0))
            .collect(),
        DataType::HALF => t
            .to_vec::<f16>()
            .map_err(e)?
            .iter()
            .map(|&v| (v.to_f64(), 0.0))
            .collect(),
        DataType::BFLOAT16 => t
            .to_vec::<bf16>()
            .map_err(e)?
            .iter()
            .map(|&v| (v.to_f64(), 0.0))
            .collect(),
        DataType::COMPLEX64 => t
            .to_vec::<Complex32>()
            .map_err(e)?
            .iter()
            .map(|v| (f64::from(v.re), f64::from(v.im)))
            .collect(),
        DataType::COMPLEX128 => t
            .to_vec::<Complex64>()
            .map_err(e)?
            .iter()
            .map(|v| (v.re, v.im))
            .collect(),
        other => return Err(format!("values of {other}")),
    })
}

/// Machine epsilon of a floating-point dtype's arithmetic (float's for half and bfloat16, which
/// TensorFlow multiplies in float), and the unit roundoff of its storage.
pub fn eps(dtype: DataType) -> (f64, f64) {
    match dtype {
        DataType::DOUBLE | DataType::COMPLEX128 => (f64::EPSILON, 0.0),
        DataType::FLOAT | DataType::COMPLEX64 => (f64::from(f32::EPSILON), 0.0),
        DataType::HALF => (f64::from(f32::EPSILON), 2f64.powi(-10)),
        DataType::BFLOAT16 => (f64::from(f32::EPSILON), 2f64.powi(-7)),
        _ => (0.0, 0.0),
    }
}

/// Compares a floating-point result with TensorFlow's element by element: the same dtype and
/// shape; NaN where TensorFlow has NaN; the same infinities; else
/// `|ours - tf| <= c * K * eps * scale_i + storage_eps * |tf|` with `scale` from the caller
/// (`sum_p |a_ip| |b_pj|` for a product). Integers and other exact types compare bits.
/// Returns the largest `|ours - tf| / (K * eps * scale)` seen, for the report.
pub fn check_close(
    got: &Tensor,
    want: &Value,
    k: usize,
    scale: &[f64],
    c: f64,
) -> Result<f64, String> {
    let want_t = tensor_of(want)?;
    if !matches!(
        want_t.dtype(),
        DataType::FLOAT
            | DataType::DOUBLE
            | DataType::HALF
            | DataType::BFLOAT16
            | DataType::COMPLEX64
            | DataType::COMPLEX128
    ) {
        check_tensor(got, want)?;
        return Ok(0.0);
    }
    if got.dtype() != want_t.dtype() || got.shape() != want_t.shape() {
        return Err(format!(
            "{} {} != expected {} {}",
            got.dtype(),
            got.shape(),
            want_t.dtype(),
            want_t.shape()
        ));
    }
    let (g, w) = (values(got)?, values(&want_t)?);
    let (e, storage) = eps(want_t.dtype());
    let mut worst = 0.0f64;
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        for (x, y) in [(a.0, b.0), (a.1, b.1)] {
            if y.is_nan() {
                if !x.is_nan() {
                    return Err(format!("element {i}: {x} where TensorFlow has NaN"));
                }
                continue;
            }
            if y.is_infinite() || x.is_infinite() || x.is_nan() {
                // An infinity from an overflow may be a large finite value in another order.
                if x != y
                    && scale.get(i).is_some_and(|s| s.is_finite())
                    && !(x.is_infinite() && y.abs() > 1e30)
                    && !(y.is_infinite() && x.abs() > 1e30)
                {
                    return Err(format!("element {i}: {x} != {y}"));
                }
                continue;
            }
            let s = scale.get(i).copied().unwrap_or(0.0);
            let bound = c * (k.max(1) as f64) * e * s + 2.0 * storage * y.abs() + f64::MIN_POSITIVE;
            let d = (x - y).abs();
            if d > bound && s.is_finite() {
                return Err(format!(
                    "element {i}: |{x} - {y}| = {d:e} > bound {bound:e}"
                ));
            }
            if s > 0.0 && s.is_finite() && storage == 0.0 {
                worst = worst.max(d / ((k.max(1) as f64) * e * s));
            }
        }
    }
    Ok(worst)
}

/// The largest error measured per (op, dtype) over a run, in the unit each runner states.
static WORST: std::sync::Mutex<Vec<(String, DataType, f64)>> = std::sync::Mutex::new(Vec::new());

/// Notes an error measured for `op` on `dtype` (the runner prints the largest per file).
pub fn note_worst(op: &str, dtype: DataType, value: f64) {
    if let Ok(mut w) = WORST.lock() {
        match w.iter_mut().find(|(o, d, _)| o == op && *d == dtype) {
            Some(e) => e.2 = e.2.max(value),
            None => w.push((op.to_string(), dtype, value)),
        }
    }
}

/// Prints and clears the errors noted since the last call.
pub fn report_worst(file: &str) {
    if let Ok(mut w) = WORST.lock() {
        for (op, d, v) in w.drain(..) {
            println!("  {file}: largest error measured for {op} {d}: {v:.3}");
        }
    }
}

/// The elements (real and imaginary parts separately) of a floating-point or complex tensor
/// as their bit patterns mapped to an order-preserving integer, with a NaN flag.
fn ordered_parts(t: &Tensor) -> Result<Vec<(i64, bool)>, String> {
    let data = t.tensor_data().map_err(|e| e.to_string())?;
    let width = match t.dtype() {
        DataType::HALF | DataType::BFLOAT16 => 2,
        DataType::FLOAT | DataType::COMPLEX64 => 4,
        DataType::DOUBLE | DataType::COMPLEX128 => 8,
        d => return Err(format!("ordered parts of {d}")),
    };
    let (exp_bits, frac_bits): (u32, u32) = match t.dtype() {
        DataType::HALF => (5, 10),
        DataType::BFLOAT16 => (8, 7),
        DataType::FLOAT | DataType::COMPLEX64 => (8, 23),
        _ => (11, 52),
    };
    let bits = 1 + exp_bits + frac_bits;
    Ok(data
        .chunks_exact(width)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..width].copy_from_slice(c);
            let v = u64::from_le_bytes(b);
            let sign = v >> (bits - 1) & 1 == 1;
            let mag = v & ((1u64 << (bits - 1)) - 1);
            let nan = mag > (((1u64 << exp_bits) - 1) << frac_bits);
            // Sign-magnitude to a line: -0 and +0 both 0.
            (if sign { -(mag as i64) } else { mag as i64 }, nan)
        })
        .collect())
}

/// The largest distance in units in the last place (of the result's own type) between a
/// floating-point or complex result and TensorFlow's, part by part; a NaN must be NaN in
/// both (its payload and sign are not compared), an infinity is one ULP from the largest
/// finite value. Exact types compare bits (0 when equal).
pub fn max_ulps(got: &Tensor, want: &Tensor) -> Result<u64, String> {
    if got.dtype() != want.dtype() || got.shape() != want.shape() {
        return Err(format!(
            "{} {} != expected {} {}",
            got.dtype(),
            got.shape(),
            want.dtype(),
            want.shape()
        ));
    }
    let (a, b) = (ordered_parts(got)?, ordered_parts(want)?);
    let mut worst = 0u64;
    for (i, (&(x, xn), &(y, yn))) in a.iter().zip(&b).enumerate() {
        if xn || yn {
            if xn != yn {
                return Err(format!(
                    "part {i}: NaN in only one of ours ({}) and TensorFlow's ({})",
                    if xn { "NaN" } else { "number" },
                    if yn { "NaN" } else { "number" }
                ));
            }
            continue;
        }
        worst = worst.max(x.abs_diff(y));
    }
    Ok(worst)
}
