//! Reductions with `keep_dims` and negative or repeated axes: `Sum`, `Mean`, `Max`, `Min`,
//! `Prod` on `float`, `double`, `half`, `bfloat16`, `int32`, `int64`; `All`, `Any` on `bool`;
//! and their shape function.
//!
//! Floating sums accumulate in `double` for `float`/`half`/`bfloat16` and are rounded once
//! (TensorFlow sums `float` in a tree of `float`s): results agree with TensorFlow's within
//! `n * eps * sum|x|` for a reduction of `n` elements. Integer sums wrap; the integer `Mean`
//! divides with truncation, as TensorFlow's. `Max`/`Min` propagate NaN and are exact.
//!
//! ```
//! use tensorcast_core::{Tensor, TensorShape};
//! use tensorcast_kernels::reduce::{reduce, Reduction};
//! let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], TensorShape::new(&[2, 2])?)?;
//! let axis = Tensor::vector(&[-1i32]);
//! assert_eq!(reduce(Reduction::Sum, &x, &axis, false)?.to_vec::<f32>()?, vec![3.0, 7.0]);
//! assert_eq!(reduce(Reduction::Max, &x, &axis, true)?.shape().dim_sizes(), &[2, 1]);
//! # Ok::<(), tensorcast_core::Error>(())
//! ```

use half::{bf16, f16};
use tensorcast_core::{DataType, Error, PartialTensorShape, Result, Tensor, TensorShape};

/// The reductions of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// `Sum`.
    Sum,
    /// `Mean`.
    Mean,
    /// `Max`.
    Max,
    /// `Min`.
    Min,
    /// `Prod`.
    Prod,
    /// `All` (bool).
    All,
    /// `Any` (bool).
    Any,
}

impl Reduction {
    /// TensorFlow's op name.
    pub fn name(self) -> &'static str {
        match self {
            Reduction::Sum => "Sum",
            Reduction::Mean => "Mean",
            Reduction::Max => "Max",
            Reduction::Min => "Min",
            Reduction::Prod => "Prod",
            Reduction::All => "All",
            Reduction::Any => "Any",
        }
    }
}

/// The axes of `axes` (int32/int64, scalar or vector), normalised to `0..rank`, with
/// TensorFlow's error for one out of range.
fn axes_of(op: &'static str, axes: &Tensor, rank: usize) -> Result<Vec<bool>> {
    let values: Vec<i64> = match axes.dtype() {
        DataType::INT32 => axes
            .as_slice::<i32>()?
            .iter()
            .map(|&v| i64::from(v))
            .collect(),
        DataType::INT64 => axes.as_slice::<i64>()?.to_vec(),
        d => {
            return Err(Error::invalid_argument(
                op,
                format!(
                "Value for attr 'Tidx' of {} is not in the list of allowed values: int32, int64",
                d.name()
            ),
            ))
        }
    };
    if axes.dims() > 1 {
        return Err(Error::invalid_argument(
            op,
            format!(
                "reduction indices must be a scalar or vector, got {}",
                axes.shape()
            ),
        ));
    }
    let mut reduced = vec![false; rank];
    let r = rank as i64;
    for v in values {
        if v < -r || v >= r {
            return Err(Error::invalid_argument(
                op,
                format!("Invalid reduction dimension ({v} for input with {rank} dimension(s)"),
            ));
        }
        reduced[(if v < 0 { v + r } else { v }) as usize] = true;
    }
    Ok(reduced)
}

/// Output dims: reduced axes dropped (or kept as 1).
fn out_dims(dims: &[i64], reduced: &[bool], keep: bool) -> Vec<i64> {
    dims.iter()
        .zip(reduced)
        .filter_map(|(&d, &r)| match (r, keep) {
            (true, true) => Some(1),
            (true, false) => None,
            (false, _) => Some(d),
        })
        .collect()
}

/// Folds each output element's inputs: `init`, then `step(acc, x)` over the reduced
/// elements in row-major order, then `finish(acc, count)`.
fn fold<T: Copy, A: Copy>(
    x: &[T],
    dims: &[i64],
    reduced: &[bool],
    init: A,
    step: impl Fn(A, T) -> A,
) -> Vec<A> {
    let rank = dims.len();
    // Output strides over the kept dims, in input order.
    let mut out_len = 1usize;
    let mut out_stride = vec![0usize; rank];
    for d in (0..rank).rev() {
        if !reduced[d] {
            out_stride[d] = out_len;
            out_len *= dims[d] as usize;
        }
    }
    let mut acc = vec![init; out_len];
    if x.is_empty() {
        return acc;
    }
    let mut idx = vec![0usize; rank];
    let mut o = 0usize;
    for &v in x {
        acc[o] = step(acc[o], v);
        // Advance the row-major index and the output offset with it.
        for d in (0..rank).rev() {
            idx[d] += 1;
            o += out_stride[d];
            if idx[d] < dims[d] as usize {
                break;
            }
            o -= out_stride[d] * idx[d];
            idx[d] = 0;
        }
    }
    acc
}

fn float_reduce(op: Reduction, x: &[f64], dims: &[i64], reduced: &[bool]) -> Vec<f64> {
    let count: i64 = dims
        .iter()
        .zip(reduced)
        .filter(|(_, &r)| r)
        .map(|(&d, _)| d)
        .product();
    match op {
        Reduction::Sum => fold(x, dims, reduced, 0.0, |a, v| a + v),
        Reduction::Mean => fold(x, dims, reduced, 0.0, |a, v| a + v)
            .into_iter()
            .map(|s| s / count as f64)
            .collect(),
        Reduction::Prod => fold(x, dims, reduced, 1.0, |a, v| a * v),
        Reduction::Max => fold(x, dims, reduced, f64::NEG_INFINITY, |a: f64, v: f64| {
            if a.is_nan() || v.is_nan() {
                f64::NAN
            } else {
                a.max(v)
            }
        }),
        _ => fold(x, dims, reduced, f64::INFINITY, |a: f64, v: f64| {
            if a.is_nan() || v.is_nan() {
                f64::NAN
            } else {
                a.min(v)
            }
        }),
    }
}

fn int_reduce(
    op: Reduction,
    x: &[i64],
    dims: &[i64],
    reduced: &[bool],
    lo: i64,
    hi: i64,
) -> Vec<i64> {
    let count: i64 = dims
        .iter()
        .zip(reduced)
        .filter(|(_, &r)| r)
        .map(|(&d, _)| d)
        .product();
    match op {
        Reduction::Sum => fold(x, dims, reduced, 0i64, |a, v| a.wrapping_add(v)),
        Reduction::Mean => fold(x, dims, reduced, 0i64, |a, v| a.wrapping_add(v))
            .into_iter()
            .map(|s| if count == 0 { 0 } else { s / count })
            .collect(),
        Reduction::Prod => fold(x, dims, reduced, 1i64, |a, v| a.wrapping_mul(v)),
        Reduction::Max => fold(x, dims, reduced, lo, |a: i64, v| a.max(v)),
        _ => fold(x, dims, reduced, hi, |a: i64, v| a.min(v)),
    }
}

/// `op` of `x` over `axes` (int32/int64, scalar or vector; negative and repeated axes allowed).
///
/// # Errors
/// TensorFlow's `Invalid reduction dimension (A for input with R dimension(s)`; a dtype the
/// op has no kernel for here.
pub fn reduce(op: Reduction, x: &Tensor, axes: &Tensor, keep_dims: bool) -> Result<Tensor> {
    let name = op.name();
    let dims = x.shape().dim_sizes().to_vec();
    let reduced = axes_of(name, axes, dims.len())?;
    let shape = TensorShape::new(&out_dims(&dims, &reduced, keep_dims))?;
    let floats = |v: Vec<f64>| v;
    match (op, x.dtype()) {
        (Reduction::All | Reduction::Any, DataType::BOOL) => {
            let all = op == Reduction::All;
            let v = fold(x.as_slice::<bool>()?, &dims, &reduced, all, |a, b| {
                if all {
                    a && b
                } else {
                    a || b
                }
            });
            Tensor::from_vec(v, shape)
        }
        (Reduction::All | Reduction::Any, d) | (_, d @ DataType::BOOL) => {
            Err(Error::invalid_argument(
                name,
                format!(
                    "Value for attr 'T' of {} is not in the list of allowed values for {name}",
                    d.name()
                ),
            ))
        }
        (_, DataType::DOUBLE) => Tensor::from_vec(
            float_reduce(op, x.as_slice::<f64>()?, &dims, &reduced),
            shape,
        ),
        (_, DataType::FLOAT) => {
            let v: Vec<f64> = x.as_slice::<f32>()?.iter().map(|&a| f64::from(a)).collect();
            let r = float_reduce(op, &floats(v), &dims, &reduced);
            Tensor::from_vec(r.into_iter().map(|a| a as f32).collect::<Vec<f32>>(), shape)
        }
        (_, DataType::HALF) => {
            let v: Vec<f64> = x.as_slice::<f16>()?.iter().map(|a| a.to_f64()).collect();
            let r = float_reduce(op, &v, &dims, &reduced);
            Tensor::from_vec(
                r.into_iter().map(f16::from_f64).collect::<Vec<f16>>(),
                shape,
            )
        }
        (_, DataType::BFLOAT16) => {
            let v: Vec<f64> = x.as_slice::<bf16>()?.iter().map(|a| a.to_f64()).collect();
            let r = float_reduce(op, &v, &dims, &reduced);
            Tensor::from_vec(
                r.into_iter().map(bf16::from_f64).collect::<Vec<bf16>>(),
                shape,
            )
        }
        (_, DataType::INT32) => {
            let v: Vec<i64> = x.as_slice::<i32>()?.iter().map(|&a| i64::from(a)).collect();
            let r = int_reduce(
                op,
                &v,
                &dims,
                &reduced,
                i64::from(i32::MIN),
                i64::from(i32::MAX),
            );
            Tensor::from_vec(r.into_iter().map(|a| a as i32).collect::<Vec<i32>>(), shape)
        }
        (_, DataType::INT64) => Tensor::from_vec(
            int_reduce(
                op,
                x.as_slice::<i64>()?,
                &dims,
                &reduced,
                i64::MIN,
                i64::MAX,
            ),
            shape,
        ),
        (_, d) => Err(Error::invalid_argument(
            name,
            format!(
                "Value for attr 'T' of {} is not in the list of allowed values for {name}",
                d.name()
            ),
        )),
    }
}

/// The reductions' shape function (TensorFlow's `ReductionShape`): with the axes known, the
/// reduced dims dropped (or 1 with `keep_dims`); with them unknown, a shape of the input's rank
/// of unknown dims when `keep_dims`, else unknown rank.
///
/// # Errors
/// `Invalid reduction dimension A for input with R dimensions.` for an axis out of range.
pub fn reduce_shape(
    input: &PartialTensorShape,
    axes: Option<&Tensor>,
    keep_dims: bool,
) -> Result<PartialTensorShape> {
    let Some(dims) = input.dims() else {
        return Ok(PartialTensorShape::unknown_rank());
    };
    let Some(axes) = axes else {
        return if keep_dims {
            PartialTensorShape::new(&vec![-1; dims.len()])
        } else {
            Ok(PartialTensorShape::unknown_rank())
        };
    };
    let values: Vec<i64> = match axes.dtype() {
        DataType::INT32 => axes
            .as_slice::<i32>()?
            .iter()
            .map(|&v| i64::from(v))
            .collect(),
        DataType::INT64 => axes.as_slice::<i64>()?.to_vec(),
        _ => return Ok(PartialTensorShape::unknown_rank()),
    };
    let r = dims.len() as i64;
    let mut reduced = vec![false; dims.len()];
    for v in values {
        if v < -r || v >= r {
            return Err(Error::invalid_argument(
                "shape",
                format!("Invalid reduction dimension {v} for input with {r} dimensions."),
            ));
        }
        reduced[(if v < 0 { v + r } else { v }) as usize] = true;
    }
    PartialTensorShape::new(&out_dims(dims, &reduced, keep_dims))
}
