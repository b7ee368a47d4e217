//! Reductions with `keep_dims` and negative axes: `Sum`, `Mean`, `Prod` on the floating
//! types, the eight integer types and the complex ones; `Max`, `Min` on the floating and
//! integer types; `All`, `Any` on `bool`; `ArgMax` / `ArgMin` ([`arg_reduce`]); and their
//! shape functions. The axes are an `int32`/`int64` tensor of any rank; an axis out of range or
//! given twice is TensorFlow's error (`Invalid reduction dimension (2 for input with 2
//! dimension(s)`, `Invalid reduction arguments: Axes contains duplicate dimension: 1`), a
//! dtype outside an op's list its type-list text.
//!
//! Floating sums accumulate in `double` (complex in `complex128`) and are rounded once:
//! results agree with TensorFlow's within `2 * n * eps * sum|x|` for a reduction of `n`
//! elements (`Mean`: of the mean of `|x|`; `Prod`: of the product of `|x|`), `eps` the type's
//! machine epsilon (for `half` and `bfloat16`, which TensorFlow accumulates in their own
//! precision, theirs), asserted over `tests/tf_observed/ops_reduce.jsonl` (largest measured:
//! 0.30 of the bound). Integer sums and products wrap; the integer `Mean` divides with
//! truncation (the exact sum for 8- and 16-bit types, which TensorFlow accumulates wider; the
//! wrapped sum for 32- and 64-bit ones). `Max`/`Min` propagate NaN and are exact; an empty
//! `Max` is `-inf` (the type's lowest for integers).
//!
//! The loops (`engine`) bring the axes to their shortest form and run all-axes, along-rows
//! and along-columns reductions (and kept-reduced-kept ones) as vectorised loops at the CPU's
//! SIMD level (`TENSORCAST_SIMD` lowers it), split across the cores from 256 Ki elements; the
//! order of a floating sum's additions differs from TensorFlow's tree (and with the split),
//! which the `double` accumulator keeps well inside the bound above.
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

mod engine;

use engine::Fold;
use half::{bf16, f16};
use tensorcast_core::{
    Complex32, Complex64, DataType, Error, PartialTensorShape, Result, Tensor, TensorShape,
};

use crate::array::common::dims_text;

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

/// The `OpDef` text TensorFlow 2.21 quotes in a reduction's type-list errors.
fn op_def(op: Reduction) -> String {
    let types = match op {
        Reduction::Sum | Reduction::Mean | Reduction::Prod => "DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8, DT_COMPLEX64, DT_INT64, DT_QINT8, DT_QUINT8, DT_QINT32, DT_BFLOAT16, DT_QINT16, DT_QUINT16, DT_UINT16, DT_COMPLEX128, DT_HALF, DT_UINT32, DT_UINT64",
        _ => "DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8, DT_INT64, DT_BFLOAT16, DT_UINT16, DT_HALF, DT_UINT32, DT_UINT64, DT_QINT8, DT_QUINT8, DT_QINT32, DT_QINT16, DT_QUINT16",
    };
    format!(
        "Op<name={}; signature=input:T, reduction_indices:Tidx -> output:T; attr=keep_dims:bool,default=false; attr=T:type,allowed=[{types}]; attr=Tidx:type,default=DT_INT32,allowed=[DT_INT32, DT_INT64]>",
        op.name()
    )
}

/// The types `SummarizeOpDef` text `def` allows for type attr `attr`, as dtype names.
fn allowed_in(def: &str, attr: &str) -> Vec<String> {
    let key = format!("attr={attr}:type,");
    def.split(&key)
        .nth(1)
        .and_then(|r| r.split("allowed=[").nth(1))
        .and_then(|r| r.split(']').next())
        .map(|l| {
            l.split(", ")
                .map(|e| e.trim_start_matches("DT_").to_lowercase())
                .collect()
        })
        .unwrap_or_default()
}

/// TensorFlow's error for attr `attr` of `op` given `dtype`, outside the list `def` quotes.
fn attr_error(op: Reduction, attr: &str, dtype: DataType) -> Error {
    let def = op_def(op);
    let names = allowed_in(&def, attr);
    Error::invalid_argument(
        op.name(),
        format!(
            "Value for attr '{attr}' of {} is not in the list of allowed values: {}\n\t; NodeDef: {{{{node {}}}}}; {def}",
            dtype.name(),
            names.join(", "),
            op.name()
        ),
    )
}

/// The values of an `int32` or `int64` axes tensor, widened; `None` for another dtype.
fn axis_values(axes: &Tensor) -> Result<Option<Vec<i64>>> {
    Ok(match axes.dtype() {
        DataType::INT32 => Some(
            axes.as_slice::<i32>()?
                .iter()
                .map(|&v| i64::from(v))
                .collect(),
        ),
        DataType::INT64 => Some(axes.as_slice::<i64>()?.to_vec()),
        _ => None,
    })
}

/// The axes of `axes` (int32/int64, of any rank), normalised to `0..rank`, with TensorFlow's
/// errors for one out of range or repeated.
fn axes_of(op: Reduction, axes: &Tensor, rank: usize) -> Result<Vec<bool>> {
    let Some(values) = axis_values(axes)? else {
        return Err(attr_error(op, "Tidx", axes.dtype()));
    };
    let name = op.name();
    let mut reduced = vec![false; rank];
    let r = rank as i64;
    for v in values {
        if v < -r || v >= r {
            return Err(Error::invalid_argument(
                name,
                format!("Invalid reduction dimension ({v} for input with {rank} dimension(s)"),
            ));
        }
        let a = (if v < 0 { v + r } else { v }) as usize;
        if reduced[a] {
            return Err(Error::invalid_argument(
                name,
                format!("Invalid reduction arguments: Axes contains duplicate dimension: {a}"),
            ));
        }
        reduced[a] = true;
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

/// `Max`'s step: the larger, NaN once either is NaN (a tie keeps `a`).
#[inline(always)]
fn max_nan(a: f64, v: f64) -> f64 {
    if v > a || v.is_nan() {
        v
    } else {
        a
    }
}

/// `Min`'s step: the smaller, NaN once either is NaN (a tie keeps `a`).
#[inline(always)]
fn min_nan(a: f64, v: f64) -> f64 {
    if v < a || v.is_nan() {
        v
    } else {
        a
    }
}

/// `engine::run` of a fold whose step is its merge of the accumulator and the widened element
/// (`merge(a, wide(v))`), from `init`.
fn fold<T, A>(
    (x, dims, reduced): (&[T], &[i64], &[bool]),
    init: A,
    merge: impl Fn(A, A) -> A + Sync + Copy,
    wide: impl Fn(T) -> A + Sync + Copy,
) -> Vec<A>
where
    T: Copy + Sync,
    A: Copy + Send + Sync,
{
    let step = move |a: A, v: T| merge(a, wide(v));
    engine::run(x, dims, reduced, &Fold { init, step, merge })
}

/// A floating reduction of `x` (each element widened to `double` by `wide`) in `double`.
fn float_reduce<T: Copy + Sync>(
    op: Reduction,
    x: &[T],
    dims: &[i64],
    reduced: &[bool],
    count: i64,
    wide: impl Fn(T) -> f64 + Sync + Copy,
) -> Vec<f64> {
    let input = (x, dims, reduced);
    match op {
        Reduction::Sum | Reduction::Mean => {
            let s = fold(input, 0.0, |a, b| a + b, wide);
            if op == Reduction::Mean {
                s.into_iter().map(|s| s / count as f64).collect()
            } else {
                s
            }
        }
        Reduction::Prod => fold(input, 1.0, |a, b| a * b, wide),
        Reduction::Max => fold(input, f64::NEG_INFINITY, max_nan, wide),
        _ => fold(input, f64::INFINITY, min_nan, wide),
    }
}

/// A complex reduction (`Sum`, `Mean`, `Prod`) in `complex128`, each element widened by
/// `wide`.
fn complex_reduce<T: Copy + Sync>(
    op: Reduction,
    x: &[T],
    dims: &[i64],
    reduced: &[bool],
    count: i64,
    wide: impl Fn(T) -> (f64, f64) + Sync + Copy,
) -> Vec<(f64, f64)> {
    let cmul = |a: (f64, f64), v: (f64, f64)| (a.0 * v.0 - a.1 * v.1, a.0 * v.1 + a.1 * v.0);
    let cadd = |a: (f64, f64), v: (f64, f64)| (a.0 + v.0, a.1 + v.1);
    let input = (x, dims, reduced);
    match op {
        Reduction::Prod => fold(input, (1.0, 0.0), cmul, wide),
        _ => {
            let s = fold(input, (0.0, 0.0), cadd, wide);
            if op == Reduction::Mean {
                let c = count as f64;
                s.into_iter().map(|(re, im)| (re / c, im / c)).collect()
            } else {
                s
            }
        }
    }
}

/// An integer reduction: `Max`/`Min` in the type; sums and products in 64 bits, wrapping
/// (the low bits of a wrapped 64-bit sum or product are those of the type's own), then
/// truncated to the type.
macro_rules! int_case {
    ($op:expr, $x:expr, $dims:expr, $reduced:expr, $count:expr, $shape:expr, $t:ty) => {{
        let input: (&[$t], &[i64], &[bool]) = ($x.as_slice::<$t>()?, $dims, $reduced);
        let same = |v: $t| v;
        let wide = |v: $t| v as i64;
        let out: Vec<$t> = match $op {
            Reduction::Max => fold(input, <$t>::MIN, |a: $t, b| a.max(b), same),
            Reduction::Min => fold(input, <$t>::MAX, |a: $t, b| a.min(b), same),
            Reduction::Prod => fold(input, 1, |a: i64, b| a.wrapping_mul(b), wide)
                .into_iter()
                .map(|a| a as $t)
                .collect(),
            op => {
                let sums = fold(input, 0, |a: i64, b| a.wrapping_add(b), wide);
                sums.into_iter()
                    .map(|a| {
                        if op != Reduction::Mean {
                            a as $t
                        } else if $count == 0 {
                            0
                        } else if std::mem::size_of::<$t>() <= 2 {
                            // 8- and 16-bit types: the exact sum (64 bits hold it) divided by
                            // the count, truncated (TensorFlow accumulates them wider).
                            (a / $count) as $t
                        } else {
                            // 32- and 64-bit types: the sum wrapped in the type, then divided.
                            let c = $count as $t;
                            if c == 0 {
                                0
                            } else {
                                (a as $t).wrapping_div(c)
                            }
                        }
                    })
                    .collect()
            }
        };
        Tensor::from_vec(out, $shape)
    }};
}

/// `op` of `x` over `axes` (int32/int64 of any rank; negative axes count from the end).
///
/// # Errors
/// TensorFlow's texts: `Invalid reduction dimension (A for input with R dimension(s)`,
/// `Invalid reduction arguments: Axes contains duplicate dimension: A`, a dtype outside the
/// op's list (`All`/`Any`: not `bool`).
pub fn reduce(op: Reduction, x: &Tensor, axes: &Tensor, keep_dims: bool) -> Result<Tensor> {
    let name = op.name();
    let dims = x.shape().dim_sizes().to_vec();
    let dtype = x.dtype();
    // The input's type is checked before the axes, as TensorFlow's op construction does.
    let logical = matches!(op, Reduction::All | Reduction::Any);
    let summing = matches!(op, Reduction::Sum | Reduction::Mean | Reduction::Prod);
    let complex = matches!(dtype, DataType::COMPLEX64 | DataType::COMPLEX128);
    let real = matches!(
        dtype,
        DataType::FLOAT | DataType::DOUBLE | DataType::HALF | DataType::BFLOAT16
    ) || INTS.contains(&dtype);
    if logical {
        Error::check_input_type(name, 0, DataType::BOOL, dtype)?;
    }
    if !(logical || real || complex && summing) {
        return Err(attr_error(op, "T", dtype));
    }
    let reduced = axes_of(op, axes, dims.len())?;
    let shape = TensorShape::new(&out_dims(&dims, &reduced, keep_dims))?;
    let count: i64 = dims
        .iter()
        .zip(&reduced)
        .filter(|(_, &r)| r)
        .map(|(&d, _)| d)
        .product();
    // A float type reduced in `double` (`float_reduce` widens each element), the result
    // rounded once.
    macro_rules! via_f64 {
        ($T:ty, $to:expr, $from:expr) => {{
            let r = float_reduce(op, x.as_slice::<$T>()?, &dims, &reduced, count, $to);
            Tensor::from_vec(r.into_iter().map($from).collect::<Vec<$T>>(), shape)
        }};
    }
    // A complex type reduced in `complex128` parts (`complex_reduce`).
    macro_rules! via_c128 {
        ($T:ty, $to:expr, $from:expr) => {{
            let r = complex_reduce(op, x.as_slice::<$T>()?, &dims, &reduced, count, $to);
            Tensor::from_vec(r.into_iter().map($from).collect::<Vec<$T>>(), shape)
        }};
    }
    match dtype {
        DataType::BOOL => {
            let all = op == Reduction::All;
            let step = move |a: bool, b: bool| if all { a && b } else { a || b };
            let fold = Fold {
                init: all,
                step,
                merge: step,
            };
            Tensor::from_vec(
                engine::run(x.as_slice::<bool>()?, &dims, &reduced, &fold),
                shape,
            )
        }
        DataType::DOUBLE => Tensor::from_vec(
            float_reduce(op, x.as_slice::<f64>()?, &dims, &reduced, count, |v| v),
            shape,
        ),
        DataType::FLOAT => via_f64!(f32, f64::from, |a| a as f32),
        DataType::HALF => via_f64!(f16, f16::to_f64, f16::from_f64),
        DataType::BFLOAT16 => via_f64!(bf16, bf16::to_f64, bf16::from_f64),
        DataType::COMPLEX64 => via_c128!(
            Complex32,
            |c: Complex32| (f64::from(c.re), f64::from(c.im)),
            |(re, im)| Complex32::new(re as f32, im as f32)
        ),
        DataType::COMPLEX128 => via_c128!(Complex64, |c: Complex64| (c.re, c.im), |(re, im)| {
            Complex64::new(re, im)
        }),
        DataType::INT8 => int_case!(op, x, &dims, &reduced, count, shape, i8),
        DataType::INT16 => int_case!(op, x, &dims, &reduced, count, shape, i16),
        DataType::INT32 => int_case!(op, x, &dims, &reduced, count, shape, i32),
        DataType::INT64 => int_case!(op, x, &dims, &reduced, count, shape, i64),
        DataType::UINT8 => int_case!(op, x, &dims, &reduced, count, shape, u8),
        DataType::UINT16 => int_case!(op, x, &dims, &reduced, count, shape, u16),
        DataType::UINT32 => int_case!(op, x, &dims, &reduced, count, shape, u32),
        _ => int_case!(op, x, &dims, &reduced, count, shape, u64),
    }
}

/// The integer types the reductions take.
const INTS: &[DataType] = crate::type_lists::INTEGRAL_TYPES;

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
    let Some(values) = axis_values(axes)? else {
        return Ok(PartialTensorShape::unknown_rank());
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

/// `ArgMax` or `ArgMin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgOp {
    /// The index of the largest value.
    ArgMax,
    /// The index of the smallest value.
    ArgMin,
}

impl ArgOp {
    /// TensorFlow's op name.
    pub fn name(self) -> &'static str {
        match self {
            ArgOp::ArgMax => "ArgMax",
            ArgOp::ArgMin => "ArgMin",
        }
    }

    /// The `OpDef` text TensorFlow 2.21 quotes in its type-list errors.
    fn op_def(self) -> &'static str {
        match self {
            ArgOp::ArgMax => "Op<name=ArgMax; signature=input:T, dimension:Tidx -> output:output_type; attr=T:type,allowed=[DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8, DT_INT64, DT_BFLOAT16, DT_UINT16, DT_HALF, DT_UINT32, DT_UINT64, DT_QINT8, DT_QUINT8, DT_QINT32, DT_QINT16, DT_QUINT16, DT_BOOL]; attr=Tidx:type,default=DT_INT32,allowed=[DT_INT16, DT_INT32, DT_INT64]; attr=output_type:type,default=DT_INT64,allowed=[DT_INT16, DT_UINT16, DT_INT32, DT_INT64]>",
            ArgOp::ArgMin => "Op<name=ArgMin; signature=input:T, dimension:Tidx -> output:output_type; attr=T:type,allowed=[DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8, DT_INT64, DT_BFLOAT16, DT_UINT16, DT_HALF, DT_UINT32, DT_UINT64, DT_QINT8, DT_QUINT8, DT_QINT32, DT_QINT16, DT_QUINT16, DT_BOOL]; attr=Tidx:type,default=DT_INT32,allowed=[DT_INT32, DT_INT64]; attr=output_type:type,default=DT_INT64,allowed=[DT_INT32, DT_INT64]>",
        }
    }

    /// The types of attr `attr` in the `OpDef`, as its list prints them.
    fn allowed(self, attr: &str) -> Vec<String> {
        allowed_in(self.op_def(), attr)
    }

    fn check_attr(self, attr: &str, dtype: DataType) -> Result<()> {
        let allowed = self.allowed(attr);
        if allowed.iter().any(|a| *a == dtype.name()) {
            return Ok(());
        }
        Err(Error::invalid_argument(
            self.name(),
            format!(
                "Value for attr '{attr}' of {} is not in the list of allowed values: {}\n\t; NodeDef: {{{{node {}}}}}; {}",
                dtype.name(),
                allowed.join(", "),
                self.name(),
                self.op_def()
            ),
        ))
    }
}

/// For each `(outer, inner)` position, the index along the axis (of length `n`) of the first
/// element that beats every earlier one and the starting value `init` (`better(v, best)`);
/// `0` when none does (a row of NaNs, or of `init` itself).
fn arg_fold<T: Copy>(
    x: &[T],
    outer: usize,
    n: usize,
    inner: usize,
    init: T,
    better: impl Fn(T, T) -> bool,
) -> Vec<i64> {
    let mut idx = vec![0i64; outer * inner];
    let mut best = vec![init; inner];
    for o in 0..outer {
        best.fill(init);
        let out = &mut idx[o * inner..(o + 1) * inner];
        for j in 0..n {
            let row = &x[(o * n + j) * inner..(o * n + j + 1) * inner];
            for ((b, i), &v) in best.iter_mut().zip(out.iter_mut()).zip(row) {
                if better(v, *b) {
                    *b = v;
                    *i = j as i64;
                }
            }
        }
    }
    idx
}

macro_rules! arg_typed {
    ($op:expr, $x:expr, $o:expr, $n:expr, $i:expr, $t:ty, $lo:expr, $hi:expr) => {{
        let v = $x.as_slice::<$t>()?;
        match $op {
            ArgOp::ArgMax => arg_fold(v, $o, $n, $i, $lo, |a: $t, b: $t| a > b),
            ArgOp::ArgMin => arg_fold(v, $o, $n, $i, $hi, |a: $t, b: $t| a < b),
        }
    }};
}

/// `ArgMax` / `ArgMin` of `input` along `dimension` (an `int32` or `int64` scalar, `int16` too
/// for `ArgMax`; negative counts from the end), as indices of `output_type` (`int32` or
/// `int64`; `int16` and `uint16` too for `ArgMax`, where larger indices wrap as TensorFlow's do).
///
/// Exactly TensorFlow's choices: the first of equal values; NaN never wins (a row of NaNs gives
/// 0); `-0.0` and `0.0` are equal. Types: the floating ones, the eight integer types, `bool`.
///
/// ```
/// use tensorcast_core::{DataType, Tensor};
/// use tensorcast_kernels::reduce::{arg_reduce, ArgOp};
/// let x = Tensor::vector(&[1.0f32, f32::NAN, 3.0, 3.0]);
/// let i = arg_reduce(ArgOp::ArgMax, &x, &Tensor::scalar_of(0i32), DataType::INT64)?;
/// assert_eq!(i.to_vec::<i64>()?, vec![2]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// TensorFlow's texts: a type outside the op's lists (`Value for attr 'T' of complex64 is not
/// in the list of allowed values: ...`), `dim must be a scalar, but received tensor of shape:
/// [1]`, `Expected dimension in the range [-2, 2), but got 2`, `Reduction axis 0 is empty in
/// shape [0,3]`.
pub fn arg_reduce(
    op: ArgOp,
    input: &Tensor,
    dimension: &Tensor,
    output_type: DataType,
) -> Result<Tensor> {
    let name = op.name();
    op.check_attr("T", input.dtype())?;
    op.check_attr("Tidx", dimension.dtype())?;
    op.check_attr("output_type", output_type)?;
    if dimension.dims() != 0 {
        return Err(Error::invalid_argument(
            name,
            format!(
                "dim must be a scalar, but received tensor of shape: {}",
                dims_text(dimension.shape().dim_sizes())
            ),
        ));
    }
    let dim = match dimension.dtype() {
        DataType::INT16 => i64::from(dimension.as_slice::<i16>()?[0]),
        DataType::INT32 => i64::from(dimension.as_slice::<i32>()?[0]),
        _ => dimension.as_slice::<i64>()?[0],
    };
    let dims = input.shape().dim_sizes().to_vec();
    let r = dims.len() as i64;
    if dim < -r || dim >= r {
        return Err(Error::invalid_argument(
            name,
            format!(
                "Expected dimension in the range [{}, {r}), but got {dim}",
                -r
            ),
        ));
    }
    let axis = (if dim < 0 { dim + r } else { dim }) as usize;
    if dims[axis] == 0 {
        return Err(Error::invalid_argument(
            name,
            format!(
                "Reduction axis {axis} is empty in shape {}",
                dims_text(&dims)
            ),
        ));
    }
    let outer: usize = dims[..axis].iter().map(|&d| d as usize).product();
    let inner: usize = dims[axis + 1..].iter().map(|&d| d as usize).product();
    let n = dims[axis] as usize;
    let out_dims: Vec<i64> = dims
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != axis)
        .map(|(_, &d)| d)
        .collect();
    let shape = TensorShape::new(&out_dims)?;
    let idx = if outer * inner == 0 {
        Vec::new()
    } else {
        match input.dtype() {
            DataType::FLOAT => arg_typed!(op, input, outer, n, inner, f32, f32::MIN, f32::MAX),
            DataType::DOUBLE => arg_typed!(op, input, outer, n, inner, f64, f64::MIN, f64::MAX),
            DataType::HALF => arg_typed!(op, input, outer, n, inner, f16, f16::MIN, f16::MAX),
            DataType::BFLOAT16 => {
                arg_typed!(op, input, outer, n, inner, bf16, bf16::MIN, bf16::MAX)
            }
            DataType::INT8 => arg_typed!(op, input, outer, n, inner, i8, i8::MIN, i8::MAX),
            DataType::INT16 => arg_typed!(op, input, outer, n, inner, i16, i16::MIN, i16::MAX),
            DataType::INT32 => arg_typed!(op, input, outer, n, inner, i32, i32::MIN, i32::MAX),
            DataType::INT64 => arg_typed!(op, input, outer, n, inner, i64, i64::MIN, i64::MAX),
            DataType::UINT8 => arg_typed!(op, input, outer, n, inner, u8, u8::MIN, u8::MAX),
            DataType::UINT16 => arg_typed!(op, input, outer, n, inner, u16, u16::MIN, u16::MAX),
            DataType::UINT32 => arg_typed!(op, input, outer, n, inner, u32, u32::MIN, u32::MAX),
            DataType::UINT64 => arg_typed!(op, input, outer, n, inner, u64, u64::MIN, u64::MAX),
            DataType::BOOL => arg_typed!(op, input, outer, n, inner, bool, false, true),
            d => {
                return Err(Error::Op {
                    op: name,
                    code: tensorcast_core::Code::NotFound,
                    message: format!(
                        "Could not find device for node: {{{{node {name}}}}} = {name}[T={}]",
                        d.name()
                    ),
                })
            }
        }
    };
    match output_type {
        DataType::INT32 => {
            Tensor::from_vec(idx.into_iter().map(|i| i as i32).collect::<Vec<_>>(), shape)
        }
        DataType::INT16 => {
            Tensor::from_vec(idx.into_iter().map(|i| i as i16).collect::<Vec<_>>(), shape)
        }
        DataType::UINT16 => {
            Tensor::from_vec(idx.into_iter().map(|i| i as u16).collect::<Vec<_>>(), shape)
        }
        _ => Tensor::from_vec(idx, shape),
    }
}

/// `ArgMax` / `ArgMin`'s shape function: the input's shape without the dimension `dimension`
/// names (when known; else the input's rank minus one of unknown dims).
///
/// # Errors
/// `Expected dimension in the range [-2, 2), but got 2`; `dimension` not a scalar.
pub fn arg_reduce_shape(
    input: &PartialTensorShape,
    dimension_shape: &PartialTensorShape,
    dimension: Option<&Tensor>,
) -> Result<PartialTensorShape> {
    if let Some(d) = dimension_shape.dims() {
        if !d.is_empty() {
            return Err(Error::invalid_argument(
                "shape",
                format!("Shape must be rank 0 but is rank {}", d.len()),
            ));
        }
    }
    let Some(dims) = input.dims() else {
        return Ok(PartialTensorShape::unknown_rank());
    };
    let r = dims.len() as i64;
    let value = dimension.and_then(|t| match t.dtype() {
        DataType::INT16 => t.as_slice::<i16>().ok().map(|v| i64::from(v[0])),
        DataType::INT32 => t.as_slice::<i32>().ok().map(|v| i64::from(v[0])),
        DataType::INT64 => t.as_slice::<i64>().ok().map(|v| v[0]),
        _ => None,
    });
    let Some(dim) = value else {
        return PartialTensorShape::new(&vec![-1; dims.len().saturating_sub(1)]);
    };
    if dim < -r || dim >= r {
        return Err(Error::invalid_argument(
            "shape",
            format!(
                "Expected dimension in the range [{}, {r}), but got {dim}",
                -r
            ),
        ));
    }
    let axis = (if dim < 0 { dim + r } else { dim }) as usize;
    let out: Vec<i64> = dims
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != axis)
        .map(|(_, &d)| d)
        .collect();
    PartialTensorShape::new(&out)
}
