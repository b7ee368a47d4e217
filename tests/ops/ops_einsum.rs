//! `ops_einsum.jsonl` (tests/tf_observed/gen_ops_einsum.py): `Einsum` eagerly (integers bit
//! for bit, floating-point results within the bound `einsum`'s docs state: `2 * K * eps *
//! sum |x||y|` per element, `K` the number of products summed, plus one rounding of `half` /
//! `bfloat16` storage; errors exactly) and its shape function against TensorFlow's
//! graph-mode shapes.

use serde_json::Value;
use tensorcast_core::{DataType, PartialTensorShape, Tensor};
use tensorcast_kernels::linalg::{einsum, einsum_shape};

use super::ops_common::{check_close, check_error, inputs, values};
use super::ops_linalg::{check_shape, partial};
use crate::Outcome;

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

/// Each label's size in a subscript over `dims` (TensorFlow's reading: `.` starts an ellipsis
/// and swallows two more bytes; labels after it count from the end).
fn label_sizes(sub: &str, dims: &[i64], out: &mut Vec<(u8, i64)>) {
    let b = sub.as_bytes();
    let mut labels = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'.' {
            labels.push(None);
            i += 3;
        } else {
            labels.push(Some(b[i]));
            i += 1;
        }
    }
    let ell = labels.iter().position(Option::is_none);
    for (j, l) in labels.iter().enumerate() {
        let Some(c) = l else { continue };
        let axis = match ell {
            Some(e) if j > e => dims.len() as i64 - (labels.len() - j) as i64,
            _ => j as i64,
        };
        if let Some(&d) = usize::try_from(axis).ok().and_then(|a| dims.get(a)) {
            if !out.iter().any(|(x, _)| *x == *c) {
                out.push((*c, d));
            }
        }
    }
}

/// `K`: the product of the sizes of the labels the output lacks (the products summed per
/// output element).
fn summed_length(equation: &str, ins: &[Tensor]) -> usize {
    let (lhs, out) = equation.split_once("->").unwrap_or((equation, ""));
    let mut sizes = Vec::new();
    for (sub, t) in lhs.split(',').zip(ins) {
        label_sizes(sub, t.shape().dim_sizes(), &mut sizes);
    }
    sizes
        .iter()
        .filter(|(c, _)| !out.as_bytes().contains(c))
        .map(|&(_, d)| d.max(1) as usize)
        .product()
}

fn abs_double(t: &Tensor) -> Result<Tensor, String> {
    let v: Vec<f64> = values(t)?.iter().map(|v| v.0.hypot(v.1)).collect();
    Tensor::from_vec(v, t.shape().clone()).map_err(|e| e.to_string())
}

fn eager(rec: &Value) -> Result<(), String> {
    let equation = rec["equation"].as_str().ok_or("record without equation")?;
    let ins: Vec<Tensor> = inputs(rec)?.into_iter().map(|(_, t)| t).collect();
    let refs: Vec<&Tensor> = ins.iter().collect();
    let got = einsum(&refs, equation);
    if let Some(err) = rec.get("error") {
        return check_error(got, err);
    }
    let got = got.map_err(|e| format!("unexpected error: {e}"))?;
    let want = &rec["expect"];
    let dtype = got.dtype();
    if super::ops_common::eps(dtype).0 == 0.0 {
        return crate::check_tensor(&got, want);
    }
    // sum |x||y| per element: the same contraction of the magnitudes, in double.
    let mags: Vec<Tensor> = ins.iter().map(abs_double).collect::<Result<_, _>>()?;
    let mag_refs: Vec<&Tensor> = mags.iter().collect();
    let scale = einsum(&mag_refs, equation).map_err(|e| format!("scale: {e}"))?;
    let scale: Vec<f64> = scale.to_vec::<f64>().map_err(|e| e.to_string())?;
    let k = summed_length(equation, &ins);
    // TensorFlow accumulates `half` and `bfloat16` products in their own precision: the
    // bound scales with their epsilon (in units of `float`'s, which `check_close` uses).
    let c = match dtype {
        DataType::HALF => 2.0 * 2f64.powi(23 - 10),
        DataType::BFLOAT16 => 2.0 * 2f64.powi(23 - 7),
        _ => 2.0,
    };
    let worst = check_close(&got, want, k, &scale, c)?;
    super::ops_common::note_worst("Einsum", dtype, worst);
    Ok(())
}

fn shape(rec: &Value) -> Result<(), String> {
    let equation = rec["equation"].as_str().ok_or("record without equation")?;
    let ins = rec["inputs"].as_array().ok_or("no inputs")?;
    let shapes: Vec<PartialTensorShape> = ins
        .iter()
        .map(|i| partial(&i[2]))
        .collect::<Result<_, _>>()?;
    let refs: Vec<&PartialTensorShape> = shapes.iter().collect();
    check_shape(einsum_shape(&refs, equation), rec)
}
