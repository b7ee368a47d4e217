//! `Range`.

use tensorcast_core::dtypes;
use tensorcast_core::{
    bf16, f16, DataType, Error, PartialTensorShape, Result, Tensor, TensorShape,
};

use super::common::{dt, invalid, no_kernel, oom, partial};

/// `Range`'s type list (its `OpDef`), in TensorFlow's order.
const RANGE_TYPES: &[DataType] =
    dtypes!("bfloat16, half, float, double, int8, int16, int32, int64, uint16, uint32, uint64");

/// C's `%.{prec}g`.
fn g_format(v: f64, prec: usize) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{:.*e}", prec - 1, v);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= prec as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mant), exp.abs())
    } else {
        let decimals = (prec as i32 - 1 - exp).max(0) as usize;
        strip(&format!("{v:.decimals$}"))
    }
}

/// A value as TensorFlow's `StrCat` prints it: integers plainly, floats shortest of 6 (float)
/// or 15 (double) significant digits that reads back exactly, else 9 or 17.
trait Num: Copy + PartialOrd + Send + Sync + tensorcast_core::Element + bytemuck::Pod {
    const INTEGRAL: bool;
    fn zero() -> Self;
    fn sub(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn abs(self) -> Self;
    fn ceil(self) -> Self;
    /// The value as an `f64` (for the size check) and as text.
    fn to_f64(self) -> f64;
    fn text(self) -> String;
    /// Integers: `divup(|limit - start|, |delta|)` in the type's own (wrapping) arithmetic.
    fn int_size(start: Self, limit: Self, delta: Self) -> i64;
    /// Element `i`: `start + i * delta`, in the type's arithmetic (TensorFlow 2.21 computes each
    /// element so, rather than accumulating).
    fn nth(start: Self, i: usize, delta: Self) -> Self;
}

macro_rules! int_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            const INTEGRAL: bool = true;
            fn zero() -> Self { 0 }
            fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            fn div(self, o: Self) -> Self { self.wrapping_div(o) }
            fn abs(self) -> Self { self.wrapping_abs() }
            fn ceil(self) -> Self { self }
            fn to_f64(self) -> f64 { self as f64 }
            fn text(self) -> String { self.to_string() }
            fn int_size(start: Self, limit: Self, delta: Self) -> i64 {
                // In 64 bits, unsigned: |limit - start| of int32 extremes fits, and that of
                // int64 ones wraps to 2^63 as TensorFlow's does.
                let span = (limit as i64).wrapping_sub(start as i64).unsigned_abs();
                let step = (delta as i64).unsigned_abs();
                if step == 0 { return 0; }
                // Eigen's divup: (x + y - 1) / y.
                (span.wrapping_add(step - 1) / step) as i64
            }
            fn nth(start: Self, i: usize, delta: Self) -> Self {
                start.wrapping_add((i as $t).wrapping_mul(delta))
            }
        }
    )*};
}
int_num!(i32, i64);

macro_rules! float_num {
    ($t:ty, $short:expr, $long:expr) => {
        impl Num for $t {
            const INTEGRAL: bool = false;
            fn zero() -> Self {
                0.0
            }
            fn sub(self, o: Self) -> Self {
                self - o
            }
            fn div(self, o: Self) -> Self {
                self / o
            }
            fn abs(self) -> Self {
                self.abs()
            }
            fn ceil(self) -> Self {
                self.ceil()
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn text(self) -> String {
                let s = g_format(self as f64, $short);
                if s.parse::<$t>().map_or(false, |r| r == self) {
                    s
                } else {
                    g_format(self as f64, $long)
                }
            }
            fn int_size(_: Self, _: Self, _: Self) -> i64 {
                0
            }
            fn nth(start: Self, i: usize, delta: Self) -> Self {
                start + (i as $t) * delta
            }
        }
    };
}
float_num!(f32, 6, 9);
float_num!(f64, 15, 17);

macro_rules! half_num {
    ($t:ty) => {
        impl Num for $t {
            const INTEGRAL: bool = false;
            fn zero() -> Self {
                <$t>::ZERO
            }
            fn sub(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() - o.to_f32())
            }
            fn div(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() / o.to_f32())
            }
            fn abs(self) -> Self {
                <$t>::from_f32(self.to_f32().abs())
            }
            fn ceil(self) -> Self {
                <$t>::from_f32(self.to_f32().ceil())
            }
            fn to_f64(self) -> f64 {
                self.to_f64()
            }
            fn text(self) -> String {
                self.to_f32().text()
            }
            fn int_size(_: Self, _: Self, _: Self) -> i64 {
                0
            }
            fn nth(start: Self, i: usize, delta: Self) -> Self {
                let m = <$t>::from_f32(<$t>::from_f32(i as f32).to_f32() * delta.to_f32());
                <$t>::from_f32(start.to_f32() + m.to_f32())
            }
        }
    };
}
half_num!(f16);
half_num!(bf16);

fn scalar_of<T: Num>(name: &str, t: &Tensor) -> Result<T> {
    if !(t.dims() == 0 || (t.dims() == 1 && t.num_elements() == 1)) {
        return Err(invalid(
            "Range",
            format!("{name} must be a scalar, not shape {}", t.shape()),
        ));
    }
    Ok(t.as_slice::<T>()?[0])
}

/// `$f::<T>($args)` for the element type `T` of `Range`'s dtype `$t` (one of
/// [`range_dtype`]'s).
macro_rules! by_dtype {
    ($t:expr, $f:ident($($arg:expr),*)) => {
        match $t {
            DataType::INT32 => $f::<i32>($($arg),*),
            DataType::INT64 => $f::<i64>($($arg),*),
            DataType::FLOAT => $f::<f32>($($arg),*),
            DataType::DOUBLE => $f::<f64>($($arg),*),
            DataType::HALF => $f::<f16>($($arg),*),
            _ => $f::<bf16>($($arg),*),
        }
    };
}

fn run<T: Num>(start: &Tensor, limit: &Tensor, delta: &Tensor) -> Result<Tensor> {
    const OP: &str = "Range";
    let (s, d, size) = checked_size::<T>(start, limit, delta)?;
    let shape = TensorShape::new(&[size]).map_err(|e| invalid(OP, e.to_string()))?;
    Tensor::from_writer(
        tensorcast_core::buffer::cpu_allocator_ref(),
        T::DTYPE,
        &shape,
        |w| {
            w.put_indexed(size as usize, |i| T::nth(s, i, d));
        },
    )
    .map_err(|e| match e {
        Error::Alloc(_) | Error::OutOfMemory { .. } => oom(OP, T::DTYPE, &[size]),
        other => other,
    })
}

/// `Range`'s checks and output length, without the output: `(start, delta, length)`.
#[allow(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "a NaN start, limit or size must fail these checks, as it does in TensorFlow"
)]
fn checked_size<T: Num>(start: &Tensor, limit: &Tensor, delta: &Tensor) -> Result<(T, T, i64)> {
    const OP: &str = "Range";
    let s: T = scalar_of("start", start)?;
    let l: T = scalar_of("limit", limit)?;
    let d: T = scalar_of("delta", delta)?;
    let zero = T::zero();
    if d == zero {
        return Err(invalid(OP, format!("Requires delta != 0: {}", d.text())));
    }
    if d > zero {
        if s.partial_cmp(&l)
            .is_none_or(|o| o == std::cmp::Ordering::Greater)
        {
            return Err(invalid(
                OP,
                format!(
                    "Requires start <= limit when delta > 0: {}/{}",
                    s.text(),
                    l.text()
                ),
            ));
        }
    } else if s
        .partial_cmp(&l)
        .is_none_or(|o| o == std::cmp::Ordering::Less)
    {
        return Err(invalid(
            OP,
            format!(
                "Requires start >= limit when delta < 0: {}/{}",
                s.text(),
                l.text()
            ),
        ));
    }
    let size = if T::INTEGRAL {
        T::int_size(s, l, d)
    } else {
        let auto = l.sub(s).div(d).abs().ceil().to_f64();
        if auto.is_nan() || auto > i64::MAX as f64 {
            return Err(invalid(
                OP,
                format!("Requires ((limit - start) / delta) <= {}", i64::MAX),
            ));
        }
        auto as i64
    };
    super::engine::check_output(OP, T::DTYPE, &[size])?;
    Ok((s, d, size))
}

/// TensorFlow's `Range`: `start, start + delta, ...` up to `limit` (exclusive), each element
/// the previous plus `delta` in the dtype's own arithmetic (as TensorFlow accumulates, so float
/// results match bit for bit). The size is TensorFlow's: `ceil(|(limit - start) / delta|)` in
/// the dtype for floats, `divup(|limit - start|, |delta|)` for integers. `int32`, `int64`,
/// `float`, `double`, `half`, `bfloat16` (TensorFlow's CPU kernels); a size too large to
/// allocate is its OOM text, never an abort.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::array::range;
/// let r = range(&Tensor::from(5i32), &Tensor::from(0i32), &Tensor::from(-2i32))?;
/// assert_eq!(r.to_vec::<i32>()?, vec![5, 3, 1]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// `Requires delta != 0: D`, `Requires start <= limit when delta > 0: S/L` (and the converse),
/// `Requires ((limit - start) / delta) <= 9223372036854775807`, `start must be a scalar, not
/// shape [..]`, OOM; a dtype outside the type list ([`Error::NotInTypeList`](tensorcast_core::Error::NotInTypeList)) or without a CPU
/// kernel (`NOT_FOUND`); inputs of different dtypes ([`Error::InputTypeMismatch`](tensorcast_core::Error::InputTypeMismatch)).
pub fn range(start: &Tensor, limit: &Tensor, delta: &Tensor) -> Result<Tensor> {
    by_dtype!(range_dtype(start, limit, delta)?, run(start, limit, delta))
}

/// The length [`range`] gives, with its checks and errors, computed without the output.
fn range_len(start: &Tensor, limit: &Tensor, delta: &Tensor) -> Result<i64> {
    fn len<T: Num>(start: &Tensor, limit: &Tensor, delta: &Tensor) -> Result<i64> {
        Ok(checked_size::<T>(start, limit, delta)?.2)
    }
    by_dtype!(range_dtype(start, limit, delta)?, len(start, limit, delta))
}

/// `Range`'s dtype checks: the dtype of all three inputs, one with a CPU kernel.
fn range_dtype(start: &Tensor, limit: &Tensor, delta: &Tensor) -> Result<DataType> {
    const OP: &str = "Range";
    let t = start.dtype();
    for (i, x) in [(1, limit), (2, delta)] {
        Error::check_input_type(OP, i, t, x.dtype())?;
    }
    if !RANGE_TYPES.contains(&t) {
        return Err(Error::NotInTypeList {
            op: OP,
            attr: "Tidx",
            dtype: t,
            allowed: RANGE_TYPES,
        });
    }
    match t {
        DataType::INT32
        | DataType::INT64
        | DataType::FLOAT
        | DataType::DOUBLE
        | DataType::HALF
        | DataType::BFLOAT16 => Ok(t),
        other => Err(no_kernel(OP, &format!("Tidx={}", dt(other)))),
    }
}

/// `Range`'s shape function: a vector, of known length where all three values are known.
///
/// # Errors
/// `Requires delta != 0` and the start/limit order texts (without the values).
pub fn range_shape(
    start: Option<&Tensor>,
    limit: Option<&Tensor>,
    delta: Option<&Tensor>,
) -> Result<PartialTensorShape> {
    let (Some(s), Some(l), Some(d)) = (start, limit, delta) else {
        return partial(Some(vec![-1]));
    };
    // The length alone: a shape function never makes the output.
    match range_len(s, l, d) {
        Ok(n) => partial(Some(vec![n])),
        Err(Error::Op { message, .. }) if message.starts_with("Requires delta != 0") => {
            Err(invalid("Range", "Requires delta != 0"))
        }
        Err(Error::Op { message, .. }) if message.starts_with("Requires start") => Err(invalid(
            "Range",
            message.split(':').next().unwrap_or_default().to_string(),
        )),
        Err(e) if e.code() == tensorcast_core::Code::ResourceExhausted => partial(Some(vec![-1])),
        Err(e) => Err(e),
    }
}
