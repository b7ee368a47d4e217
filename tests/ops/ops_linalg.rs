//! `ops_linalg.jsonl`: `MatMul` and `BatchMatMulV2` eagerly (results within the bound each
//! op's docs state, errors exactly) and their shape functions against TensorFlow's graph-mode
//! shapes.

use serde_json::Value;
use tensorcast_core::{PartialTensorShape, Tensor};
use tensorcast_kernels::linalg;

use super::ops_common::{attr_bool, check_close, check_error, inputs, values};
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

/// `sum_p |a_ip| |b_pj|` for each output element of a (batched, broadcast) product.
fn scale(a: &Tensor, b: &Tensor, ta: bool, tb: bool) -> Result<(usize, Vec<f64>), String> {
    let (va, vb) = (values(a)?, values(b)?);
    let abs = |v: &(f64, f64)| v.0.hypot(v.1);
    let (da, db) = (a.shape().dim_sizes(), b.shape().dim_sizes());
    let (ra, rb) = (da.len(), db.len());
    let (m, k) = if ta {
        (da[ra - 1], da[ra - 2])
    } else {
        (da[ra - 2], da[ra - 1])
    };
    let n = if tb { db[rb - 2] } else { db[rb - 1] };
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let (ba, bb) = (&da[..ra - 2], &db[..rb - 2]);
    let rank = ba.len().max(bb.len());
    let pad = |s: &[i64]| -> Vec<usize> {
        let mut v = vec![1usize; rank - s.len()];
        v.extend(s.iter().map(|&d| d as usize));
        v
    };
    let (pa, pb) = (pad(ba), pad(bb));
    let out: Vec<usize> = pa
        .iter()
        .zip(&pb)
        .map(|(&x, &y)| if x == 1 { y } else { x })
        .collect();
    let total: usize = out.iter().product();
    let mut res = Vec::with_capacity(total * m * n);
    for flat in 0..total {
        let (mut ia, mut ib, mut rem) = (0usize, 0usize, flat);
        let (mut sa, mut sb) = (1usize, 1usize);
        for d in (0..rank).rev() {
            let i = rem % out[d];
            rem /= out[d];
            if pa[d] > 1 {
                ia += i * sa;
            }
            if pb[d] > 1 {
                ib += i * sb;
            }
            sa *= pa[d];
            sb *= pb[d];
        }
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.0;
                for p in 0..k {
                    let x = if ta {
                        va[ia * m * k + p * m + i]
                    } else {
                        va[ia * m * k + i * k + p]
                    };
                    let y = if tb {
                        vb[ib * k * n + j * k + p]
                    } else {
                        vb[ib * k * n + p * n + j]
                    };
                    s += abs(&x) * abs(&y);
                }
                res.push(s);
            }
        }
    }
    Ok((k, res))
}

fn eager(rec: &Value) -> Result<(), String> {
    let op = rec["op"].as_str().unwrap_or_default();
    let ins = inputs(rec)?;
    let (a, b) = (&ins[0].1, &ins[1].1);
    let (ta, tb, got) = match op {
        "MatMul" => {
            let (ta, tb) = (attr_bool(rec, "transpose_a"), attr_bool(rec, "transpose_b"));
            (ta, tb, linalg::mat_mul(a, b, ta, tb))
        }
        "BatchMatMulV2" => {
            let (ta, tb) = (attr_bool(rec, "adj_x"), attr_bool(rec, "adj_y"));
            (ta, tb, linalg::batch_mat_mul_v2(a, b, ta, tb))
        }
        other => return Err(format!("unknown op {other}")),
    };
    if let Some(err) = rec.get("error") {
        return check_error(got, err);
    }
    let got = got.map_err(|e| format!("unexpected error: {e}"))?;
    let want = &rec["expect"];
    if super::ops_common::eps(got.dtype()).0 == 0.0 {
        return crate::check_tensor(&got, want);
    }
    let (k, s) = scale(a, b, ta, tb)?;
    check_close(&got, want, k, &s, 2.0).map(|_| ())
}

/// A record's partial shape: null is an unknown rank, -1 an unknown dim.
pub fn partial(v: &Value) -> Result<PartialTensorShape, String> {
    match v.as_array() {
        None => Ok(PartialTensorShape::unknown_rank()),
        Some(d) => {
            let dims: Vec<i64> = d.iter().map(|x| x.as_i64().unwrap_or(-1)).collect();
            PartialTensorShape::new(&dims).map_err(|e| e.to_string())
        }
    }
}

/// Compares a shape function's result with the record's `expect_shape` or `error`.
pub fn check_shape(
    got: Result<PartialTensorShape, tensorcast_core::Error>,
    rec: &Value,
) -> Result<(), String> {
    if let Some(err) = rec.get("error") {
        let want = err["message"].as_str().unwrap_or_default();
        return match got {
            Ok(s) => Err(format!("expected error {want:?}, got {s}")),
            Err(e) if e.to_string() == want => Ok(()),
            Err(e) => Err(format!("error {:?} != expected {want:?}", e.to_string())),
        };
    }
    let want = partial(&rec["expect_shape"])?;
    let got = got.map_err(|e| format!("unexpected error: {e}"))?;
    if got.dims() != want.dims() {
        return Err(format!("shape {got} != expected {want}"));
    }
    Ok(())
}

fn shape(rec: &Value) -> Result<(), String> {
    let ins = rec["inputs"].as_array().ok_or("no inputs")?;
    let a = partial(&ins[0][2])?;
    let b = partial(&ins[1][2])?;
    let got = match rec["op"].as_str() {
        Some("MatMul") => linalg::mat_mul_shape(
            &a,
            &b,
            attr_bool(rec, "transpose_a"),
            attr_bool(rec, "transpose_b"),
        ),
        Some("BatchMatMulV2") => {
            linalg::batch_mat_mul_v2_shape(&a, &b, attr_bool(rec, "adj_x"), attr_bool(rec, "adj_y"))
        }
        other => return Err(format!("unknown op {other:?}")),
    };
    check_shape(got, rec)
}
