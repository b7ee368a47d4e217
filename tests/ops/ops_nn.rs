//! `ops_nn.jsonl`: `BiasAdd`, `Conv2D`, `DepthwiseConv2dNative`, `MaxPool`, `AvgPool` and
//! `FusedBatchNormV3` eagerly (exact where TensorFlow is exact, else within the bound each
//! op's docs state, errors exactly) and their shape functions against TensorFlow's
//! graph-mode shapes.

use serde_json::Value;
use tensorcast_core::{PartialTensorShape, Tensor};
use tensorcast_kernels::nn::{self, Padding};

use super::ops_common::{check_close, check_error, eps, inputs, values};
use super::ops_linalg::{check_shape, partial};
use crate::{check_tensor, Outcome};

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

fn ints(rec: &Value, name: &str) -> Vec<i64> {
    rec["attrs"][name]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default()
}

fn padding(rec: &Value) -> Padding {
    Padding::from_name(rec["attrs"]["padding"].as_str().unwrap_or("VALID"))
        .unwrap_or(Padding::Valid)
}

fn dilations(rec: &Value) -> Vec<i64> {
    if rec["attrs"].get("dilations").is_some() {
        ints(rec, "dilations")
    } else {
        vec![1, 1, 1, 1]
    }
}

/// A record's convolution attrs; [`ConvAttrLists::get`] lends them as the kernels take them.
struct ConvAttrLists {
    strides: Vec<i64>,
    padding: Padding,
    explicit_paddings: Vec<i64>,
    dilations: Vec<i64>,
}

impl ConvAttrLists {
    fn of(rec: &Value) -> Self {
        Self {
            strides: ints(rec, "strides"),
            padding: padding(rec),
            explicit_paddings: ints(rec, "explicit_paddings"),
            dilations: dilations(rec),
        }
    }

    fn get(&self) -> nn::ConvAttrs<'_> {
        (
            &self.strides,
            self.padding,
            &self.explicit_paddings,
            &self.dilations,
        )
    }
}

/// TensorFlow's window geometry along one axis (output size, padding before), for the
/// reference sums.
fn geometry(
    input: i64,
    window: i64,
    dilation: i64,
    stride: i64,
    p: Padding,
    ex: (i64, i64),
) -> (i64, i64) {
    let eff = (window - 1) * dilation + 1;
    match p {
        Padding::Valid => ((input - eff + stride) / stride, 0),
        Padding::Same => {
            let out = (input + stride - 1) / stride;
            (out, (((out - 1) * stride + eff - input).max(0)) / 2)
        }
        Padding::Explicit => ((input + ex.0 + ex.1 - eff + stride) / stride, ex.0),
    }
}

/// `sum_taps |x| |w|` for each output element of a (grouped or depthwise) convolution.
fn conv_scale(
    rec: &Value,
    x: &Tensor,
    f: &Tensor,
    depthwise: bool,
) -> Result<(usize, Vec<f64>), String> {
    let (xv, fv) = (values(x)?, values(f)?);
    let (xd, fd) = (
        x.shape().dim_sizes().to_vec(),
        f.shape().dim_sizes().to_vec(),
    );
    let (s, d, p) = (ints(rec, "strides"), dilations(rec), padding(rec));
    let ex = ints(rec, "explicit_paddings");
    let (eh, ew) = if p == Padding::Explicit {
        ((ex[2], ex[3]), (ex[4], ex[5]))
    } else {
        ((0, 0), (0, 0))
    };
    let (oh, ph) = geometry(xd[1], fd[0], d[1], s[1], p, eh);
    let (ow, pw) = geometry(xd[2], fd[1], d[2], s[2], p, ew);
    let (cin, fin, fout) = (xd[3], fd[2], fd[3]);
    let cout = if depthwise { cin * fout } else { fout };
    let groups = if depthwise { 1 } else { cin / fin };
    let mut res = Vec::new();
    for n in 0..xd[0] {
        for oy in 0..oh {
            for ox in 0..ow {
                for co in 0..cout {
                    let mut acc = 0.0;
                    for ky in 0..fd[0] {
                        for kx in 0..fd[1] {
                            let iy = oy * s[1] + ky * d[1] - ph;
                            let ix = ox * s[2] + kx * d[2] - pw;
                            if iy < 0 || ix < 0 || iy >= xd[1] || ix >= xd[2] {
                                continue;
                            }
                            let xi = |c: i64| (((n * xd[1] + iy) * xd[2] + ix) * cin + c) as usize;
                            if depthwise {
                                let (c, m) = (co / fout, co % fout);
                                let w = fv[(((ky * fd[1] + kx) * fin + c) * fout + m) as usize];
                                acc += xv[xi(c)].0.abs() * w.0.abs();
                            } else {
                                let g = co / (fout / groups);
                                for ci in 0..fin {
                                    let w =
                                        fv[(((ky * fd[1] + kx) * fin + ci) * fout + co) as usize];
                                    acc += xv[xi(g * fin + ci)].0.abs() * w.0.abs();
                                }
                            }
                        }
                    }
                    res.push(acc);
                }
            }
        }
    }
    let k = if depthwise {
        fd[0] * fd[1]
    } else {
        fd[0] * fd[1] * fin
    };
    Ok((k as usize, res))
}

/// A float/bfloat16 convolution with a VALID window larger than its input.
fn onednn_uninitialised(rec: &Value, x: &Tensor, f: &Tensor) -> bool {
    let conv = matches!(rec["op"].as_str(), Some("Conv2D" | "DepthwiseConv2dNative"));
    let onednn = matches!(
        x.dtype(),
        tensorcast_core::DataType::FLOAT | tensorcast_core::DataType::BFLOAT16
    );
    if !conv || !onednn || padding(rec) != Padding::Valid || x.dims() != 4 || f.dims() != 4 {
        return false;
    }
    let d = dilations(rec);
    let (xd, fd) = (x.shape().dim_sizes(), f.shape().dim_sizes());
    xd[1] < (fd[0] - 1) * d[1] + 1 || xd[2] < (fd[1] - 1) * d[2] + 1
}

fn eager(rec: &Value) -> Result<(), String> {
    let op = rec["op"].as_str().unwrap_or_default();
    let ins = inputs(rec)?;
    let t = |i: usize| &ins[i].1;
    let got: Result<Vec<Tensor>, tensorcast_core::Error> = match op {
        "BiasAdd" => nn::bias_add(
            t(0),
            t(1),
            rec["attrs"]["data_format"].as_str().unwrap_or("NHWC"),
        )
        .map(|t| vec![t]),
        "Conv2D" => {
            let attrs = ConvAttrLists::of(rec);
            nn::conv2d(t(0), t(1), attrs.get()).map(|t| vec![t])
        }
        "DepthwiseConv2dNative" => {
            let attrs = ConvAttrLists::of(rec);
            nn::depthwise_conv2d_native(t(0), t(1), attrs.get()).map(|t| vec![t])
        }
        "MaxPool" => nn::max_pool(
            t(0),
            &ints(rec, "ksize"),
            &ints(rec, "strides"),
            padding(rec),
        )
        .map(|t| vec![t]),
        "AvgPool" => nn::avg_pool(
            t(0),
            &ints(rec, "ksize"),
            &ints(rec, "strides"),
            padding(rec),
        )
        .map(|t| vec![t]),
        "FusedBatchNormV3" => nn::fused_batch_norm_v3(
            t(0),
            t(1),
            t(2),
            t(3),
            t(4),
            rec["attrs"]["epsilon"].as_f64().unwrap_or(1e-4) as f32,
            "NHWC",
            rec["attrs"]["is_training"].as_bool().unwrap_or(true),
        ),
        other => return Err(format!("unknown op {other}")),
    };
    if let Some(err) = rec.get("error") {
        if err["code"].as_str() == Some("AbortedError") {
            // oneDNN's internal failure on negative explicit padding (float, bfloat16):
            // tensorcast reports Eigen's check, an invalid argument, instead.
            return match got {
                Err(e)
                    if e.to_string() == "All elements of explicit_paddings must be nonnegative" =>
                {
                    Ok(())
                }
                other => Err(format!("expected Eigen's padding error, got {other:?}")),
            };
        }
        return check_error(got.map(|mut v| v.swap_remove(0)), err);
    }
    let got = got.map_err(|e| format!("unexpected error: {e}"))?;
    let want = &rec["expect"];
    if ins.len() >= 2 && onednn_uninitialised(rec, t(0), t(1)) {
        // oneDNN (float, bfloat16) returns an uninitialised [N, H, W, C] tensor when a VALID
        // window is larger than the input; tensorcast returns Eigen's empty output.
        return if got[0].num_elements() == 0 {
            Ok(())
        } else {
            Err(format!("expected an empty output, got {}", got[0].shape()))
        };
    }
    let exact_type = eps(got[0].dtype()).0 == 0.0;
    match op {
        "BiasAdd" | "MaxPool" => check_tensor(&got[0], want),
        _ if exact_type => check_tensor(&got[0], want),
        "Conv2D" | "DepthwiseConv2dNative" => {
            let (k, s) = conv_scale(rec, t(0), t(1), op != "Conv2D")?;
            check_close(&got[0], want, k, &s, 2.0).map(|_| ())
        }
        "AvgPool" => {
            let ks = ints(rec, "ksize");
            let k = (ks[1] * ks[2]) as usize;
            let m = values(t(0))?.iter().fold(0.0f64, |a, v| a.max(v.0.abs()));
            let s = vec![m; got[0].num_elements() as usize];
            check_close(&got[0], want, k, &s, 2.0).map(|_| ())
        }
        "FusedBatchNormV3" => {
            let want = want.as_array().ok_or("expect is not a list")?;
            let (x, sc, of, mu, var) = (
                values(t(0))?,
                values(t(1))?,
                values(t(2))?,
                values(t(3))?,
                values(t(4))?,
            );
            let e = rec["attrs"]["epsilon"].as_f64().unwrap_or(1e-4);
            let c = sc.len().max(1);
            let scale: Vec<f64> = x
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let j = i % c;
                    let s = sc[j].0 / (var[j].0 + e).sqrt();
                    (v.0 * s).abs() + (mu[j].0 * s).abs() + of[j].0.abs()
                })
                .collect();
            check_close(&got[0], &want[0], 2, &scale, 2.0)?;
            let half = got[0].dtype() == tensorcast_core::DataType::HALF;
            for (i, w) in want.iter().enumerate().skip(1) {
                // Eigen's half kernel leaves reserve_space_1/_2 uninitialised.
                if half && (i == 3 || i == 4) {
                    if got[i].shape() != &crate::shape_of(&w["shape"])? {
                        return Err(format!("output {i}: shape {}", got[i].shape()));
                    }
                    continue;
                }
                check_tensor(&got[i], w).map_err(|e| format!("output {i}: {e}"))?;
            }
            Ok(())
        }
        other => Err(format!("no comparison for {other}")),
    }
}

fn shape(rec: &Value) -> Result<(), String> {
    let ins = rec["inputs"].as_array().ok_or("no inputs")?;
    let p = |i: usize| partial(&ins[i][2]);
    let op = rec["op"].as_str().unwrap_or_default();
    let got: Result<PartialTensorShape, tensorcast_core::Error> = match op {
        "Conv2D" => nn::conv2d_shape(&p(0)?, &p(1)?, ConvAttrLists::of(rec).get()),
        "DepthwiseConv2dNative" => {
            nn::depthwise_conv2d_native_shape(&p(0)?, &p(1)?, ConvAttrLists::of(rec).get())
        }
        "MaxPool" | "AvgPool" => nn::pool_shape(
            &p(0)?,
            &ints(rec, "ksize"),
            &ints(rec, "strides"),
            padding(rec),
        ),
        "BiasAdd" => nn::bias_add_shape(&p(0)?, &p(1)?),
        "FusedBatchNormV3" => {
            let out = rec["output"].as_u64().unwrap_or(0) as usize;
            nn::fused_batch_norm_v3_shape(&p(0)?, &[p(1)?, p(2)?, p(3)?, p(4)?])
                .map(|mut v| v.swap_remove(out))
        }
        other => return Err(format!("unknown op {other}")),
    };
    check_shape(got, rec)
}
