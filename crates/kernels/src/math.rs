//! Activations and unary math on floating-point tensors (`float`, `double`, `half`,
//! `bfloat16`; `half` and `bfloat16` computed in `float` and rounded once, as TensorFlow's
//! CPU kernels do), plus `Neg`, `Abs`, `Sign`, `Square`, `Relu`, `Relu6` on `int32`/`int64`,
//! and `Softmax` / `LogSoftmax` over the last axis. Large tensors are split across the cores.
//!
//! Accuracy against TensorFlow 2.21 (Eigen's vectorised functions): exact for `Relu`, `Relu6`,
//! `Neg`, `Abs`, `Sign`, `Square`, `Floor`, `Ceil`, `Round` (half to even); within a few ULPs
//! for `Exp`, `Log`, `Log1p`, `Sqrt`, `Rsqrt`, `Tanh`, `Sigmoid`, `Erf`, `Erfc`, `Elu`, `Selu`,
//! `Softplus` (libm's correctly rounded or nearly so functions, where Eigen uses polynomial
//! approximations of a few ULPs); `Softmax` within `1e-6` relative per element (the sum's order
//! differs). The real-model tests bound what the composition gives.
//!
//! ```
//! use tensorcast_core::Tensor;
//! use tensorcast_kernels::math::{unary, UnaryOp};
//! let x = Tensor::vector(&[-1.0f32, 0.5, 7.0]);
//! assert_eq!(unary(UnaryOp::Relu6, &x)?.to_vec::<f32>()?, vec![0.0, 0.5, 6.0]);
//! # Ok::<(), tensorcast_core::Error>(())
//! ```

use half::{bf16, f16};
use rayon::prelude::*;
use tensorcast_core::{DataType, Error, Result, Tensor};

/// The unary ops of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `max(x, 0)`.
    Relu,
    /// `min(max(x, 0), 6)`.
    Relu6,
    /// `x` if `x > 0`, else `exp(x) - 1`.
    Elu,
    /// `scale * elu(x)` with `alpha`, TensorFlow's constants.
    Selu,
    /// `1 / (1 + exp(-x))`.
    Sigmoid,
    /// `tanh(x)`.
    Tanh,
    /// `log(exp(x) + 1)`.
    Softplus,
    /// `exp(x)`.
    Exp,
    /// `log(x)`.
    Log,
    /// `log(1 + x)`.
    Log1p,
    /// `sqrt(x)`.
    Sqrt,
    /// `1 / sqrt(x)`.
    Rsqrt,
    /// `x * x`.
    Square,
    /// `-x`.
    Neg,
    /// `|x|`.
    Abs,
    /// `-1`, `0` or `1` (NaN stays NaN).
    Sign,
    /// The error function.
    Erf,
    /// `1 - erf(x)`.
    Erfc,
    /// Round down.
    Floor,
    /// Round up.
    Ceil,
    /// Round half to even.
    Round,
    /// `1 / x`.
    Reciprocal,
}

impl UnaryOp {
    /// TensorFlow's op name.
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Relu => "Relu",
            UnaryOp::Relu6 => "Relu6",
            UnaryOp::Elu => "Elu",
            UnaryOp::Selu => "Selu",
            UnaryOp::Sigmoid => "Sigmoid",
            UnaryOp::Tanh => "Tanh",
            UnaryOp::Softplus => "Softplus",
            UnaryOp::Exp => "Exp",
            UnaryOp::Log => "Log",
            UnaryOp::Log1p => "Log1p",
            UnaryOp::Sqrt => "Sqrt",
            UnaryOp::Rsqrt => "Rsqrt",
            UnaryOp::Square => "Square",
            UnaryOp::Neg => "Neg",
            UnaryOp::Abs => "Abs",
            UnaryOp::Sign => "Sign",
            UnaryOp::Erf => "Erf",
            UnaryOp::Erfc => "Erfc",
            UnaryOp::Floor => "Floor",
            UnaryOp::Ceil => "Ceil",
            UnaryOp::Round => "Round",
            UnaryOp::Reciprocal => "Reciprocal",
        }
    }

    /// True for the ops this module also runs on `int32` / `int64`.
    fn integer(self) -> bool {
        matches!(
            self,
            UnaryOp::Relu
                | UnaryOp::Relu6
                | UnaryOp::Neg
                | UnaryOp::Abs
                | UnaryOp::Sign
                | UnaryOp::Square
        )
    }
}

const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
const SELU_SCALE: f64 = 1.050_700_987_355_480_5;

fn f64_op(op: UnaryOp, x: f64) -> f64 {
    match op {
        // NaN stays NaN, as Eigen's `max(x, 0)` keeps it.
        UnaryOp::Relu => {
            if x < 0.0 {
                0.0
            } else {
                x
            }
        }
        UnaryOp::Relu6 => x.clamp(0.0, 6.0),
        UnaryOp::Elu => {
            if x > 0.0 {
                x
            } else {
                x.exp_m1()
            }
        }
        UnaryOp::Selu => {
            if x > 0.0 {
                SELU_SCALE * x
            } else {
                SELU_SCALE * SELU_ALPHA * x.exp_m1()
            }
        }
        UnaryOp::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        UnaryOp::Tanh => x.tanh(),
        UnaryOp::Softplus => {
            if x > 0.0 {
                x + (-x).exp().ln_1p()
            } else {
                x.exp().ln_1p()
            }
        }
        UnaryOp::Exp => x.exp(),
        UnaryOp::Log => x.ln(),
        UnaryOp::Log1p => x.ln_1p(),
        UnaryOp::Sqrt => x.sqrt(),
        UnaryOp::Rsqrt => 1.0 / x.sqrt(),
        UnaryOp::Square => x * x,
        UnaryOp::Neg => -x,
        UnaryOp::Abs => x.abs(),
        UnaryOp::Sign => {
            if x.is_nan() {
                x
            } else if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            }
        }
        UnaryOp::Erf => libm::erf(x),
        UnaryOp::Erfc => libm::erfc(x),
        UnaryOp::Floor => x.floor(),
        UnaryOp::Ceil => x.ceil(),
        UnaryOp::Round => x.round_ties_even(),
        UnaryOp::Reciprocal => 1.0 / x,
    }
}

fn f32_op(op: UnaryOp, x: f32) -> f32 {
    match op {
        // NaN stays NaN, as Eigen's `max(x, 0)` keeps it.
        UnaryOp::Relu => {
            if x < 0.0 {
                0.0
            } else {
                x
            }
        }
        UnaryOp::Relu6 => x.clamp(0.0, 6.0),
        UnaryOp::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        UnaryOp::Tanh => x.tanh(),
        UnaryOp::Exp => x.exp(),
        UnaryOp::Log => x.ln(),
        UnaryOp::Log1p => x.ln_1p(),
        UnaryOp::Sqrt => x.sqrt(),
        UnaryOp::Rsqrt => 1.0 / x.sqrt(),
        UnaryOp::Square => x * x,
        UnaryOp::Neg => -x,
        UnaryOp::Abs => x.abs(),
        UnaryOp::Erf => libm::erff(x),
        UnaryOp::Erfc => libm::erfcf(x),
        UnaryOp::Floor => x.floor(),
        UnaryOp::Ceil => x.ceil(),
        UnaryOp::Round => x.round_ties_even(),
        UnaryOp::Reciprocal => 1.0 / x,
        // The rest in double, rounded once.
        other => f64_op(other, f64::from(x)) as f32,
    }
}

fn int_op(op: UnaryOp, x: i64) -> i64 {
    match op {
        UnaryOp::Relu => x.max(0),
        UnaryOp::Relu6 => x.clamp(0, 6),
        UnaryOp::Neg => x.wrapping_neg(),
        UnaryOp::Abs => x.wrapping_abs(),
        UnaryOp::Sign => x.signum(),
        _ => x.wrapping_mul(x),
    }
}

/// Applies `f` to every element, on both cores past 64 Ki elements.
fn map<T: Copy + Send + Sync, U: Send>(x: &[T], f: impl Fn(T) -> U + Sync + Send) -> Vec<U> {
    if x.len() >= 1 << 16 {
        x.par_iter().with_min_len(1 << 14).map(|&v| f(v)).collect()
    } else {
        x.iter().map(|&v| f(v)).collect()
    }
}

fn not_in_list(op: UnaryOp, dtype: DataType) -> Error {
    Error::invalid_argument(
        op.name(),
        format!(
            "Value for attr 'T' of {} is not in the list of allowed values for {}",
            dtype.name(),
            op.name()
        ),
    )
}

/// `op` on every element of `x`.
///
/// # Errors
/// A dtype the op has no kernel for here (strings, bool, complex; integers except for `Relu`,
/// `Relu6`, `Neg`, `Abs`, `Sign`, `Square`); an allocation failure.
pub fn unary(op: UnaryOp, x: &Tensor) -> Result<Tensor> {
    let shape = x.shape().clone();
    match x.dtype() {
        DataType::FLOAT => Tensor::from_vec(map(x.as_slice::<f32>()?, |v| f32_op(op, v)), shape),
        DataType::DOUBLE => Tensor::from_vec(map(x.as_slice::<f64>()?, |v| f64_op(op, v)), shape),
        DataType::HALF => Tensor::from_vec(
            map(x.as_slice::<f16>()?, |v| {
                f16::from_f32(f32_op(op, v.to_f32()))
            }),
            shape,
        ),
        DataType::BFLOAT16 => Tensor::from_vec(
            map(x.as_slice::<bf16>()?, |v| {
                bf16::from_f32(f32_op(op, v.to_f32()))
            }),
            shape,
        ),
        DataType::INT32 if op.integer() => Tensor::from_vec(
            map(x.as_slice::<i32>()?, |v| int_op(op, i64::from(v)) as i32),
            shape,
        ),
        DataType::INT64 if op.integer() => {
            Tensor::from_vec(map(x.as_slice::<i64>()?, |v| int_op(op, v)), shape)
        }
        d => Err(not_in_list(op, d)),
    }
}

/// `LeakyRelu`: `x` if `x > 0`, else `alpha * x`.
///
/// # Errors
/// A dtype other than `float`, `double`, `half`, `bfloat16`.
pub fn leaky_relu(x: &Tensor, alpha: f32) -> Result<Tensor> {
    let shape = x.shape().clone();
    let f = |v: f32| if v > 0.0 { v } else { alpha * v };
    match x.dtype() {
        DataType::FLOAT => Tensor::from_vec(map(x.as_slice::<f32>()?, f), shape),
        DataType::DOUBLE => {
            let a = f64::from(alpha);
            Tensor::from_vec(
                map(x.as_slice::<f64>()?, |v| if v > 0.0 { v } else { a * v }),
                shape,
            )
        }
        DataType::HALF => Tensor::from_vec(
            map(x.as_slice::<f16>()?, |v| f16::from_f32(f(v.to_f32()))),
            shape,
        ),
        DataType::BFLOAT16 => Tensor::from_vec(
            map(x.as_slice::<bf16>()?, |v| bf16::from_f32(f(v.to_f32()))),
            shape,
        ),
        d => Err(Error::invalid_argument(
            "LeakyRelu",
            format!(
                "Value for attr 'T' of {} is not in the list of allowed values for LeakyRelu",
                d.name()
            ),
        )),
    }
}

/// Softmax (or log-softmax) of each row over the last axis, in `f64` for `double` and `f32`
/// otherwise: `exp(x - max) / sum`, as TensorFlow's kernel computes it.
fn softmax_rows(x: &[f64], width: usize, log: bool) -> Vec<f64> {
    let mut out = vec![0.0; x.len()];
    out.par_chunks_mut(width.max(1))
        .zip(x.par_chunks(width.max(1)))
        .for_each(|(o, row)| {
            let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = row.iter().map(|&v| (v - m).exp()).sum();
            for (o, &v) in o.iter_mut().zip(row) {
                *o = if log {
                    v - m - sum.ln()
                } else {
                    (v - m).exp() / sum
                };
            }
        });
    out
}

fn softmax_any(x: &Tensor, log: bool) -> Result<Tensor> {
    let op = if log { "LogSoftmax" } else { "Softmax" };
    if x.dims() < 1 {
        return Err(Error::invalid_argument(
            op,
            format!("logits must have >= 1 dimension, got {}", x.shape()),
        ));
    }
    let width = x.shape().dim_sizes().last().copied().unwrap_or(1) as usize;
    let shape = x.shape().clone();
    match x.dtype() {
        DataType::DOUBLE => Tensor::from_vec(softmax_rows(x.as_slice::<f64>()?, width, log), shape),
        DataType::FLOAT => {
            let v: Vec<f64> = x.as_slice::<f32>()?.iter().map(|&a| f64::from(a)).collect();
            let r = softmax_rows(&v, width, log);
            Tensor::from_vec(r.into_iter().map(|a| a as f32).collect::<Vec<f32>>(), shape)
        }
        DataType::HALF => {
            let v: Vec<f64> = x.as_slice::<f16>()?.iter().map(|a| a.to_f64()).collect();
            let r = softmax_rows(&v, width, log);
            Tensor::from_vec(
                r.into_iter().map(f16::from_f64).collect::<Vec<f16>>(),
                shape,
            )
        }
        DataType::BFLOAT16 => {
            let v: Vec<f64> = x.as_slice::<bf16>()?.iter().map(|a| a.to_f64()).collect();
            let r = softmax_rows(&v, width, log);
            Tensor::from_vec(
                r.into_iter().map(bf16::from_f64).collect::<Vec<bf16>>(),
                shape,
            )
        }
        d => Err(Error::invalid_argument(
            op,
            format!(
                "Value for attr 'T' of {} is not in the list of allowed values for {op}",
                d.name()
            ),
        )),
    }
}

/// `Softmax` over the last axis.
///
/// # Errors
/// A scalar (`logits must have >= 1 dimension`); a dtype other than the floating ones.
pub fn softmax(x: &Tensor) -> Result<Tensor> {
    softmax_any(x, false)
}

/// `LogSoftmax` over the last axis.
///
/// # Errors
/// As [`softmax`].
pub fn log_softmax(x: &Tensor) -> Result<Tensor> {
    softmax_any(x, true)
}
