//! TensorFlow's `saturate_cast` (its Python `math_ops.saturate_cast`, 2.21): clip the input to
//! limits computed from the two dtypes' ranges, then `Cast`. See
//! [`crate::cast::saturating`] for the rules and quirks this reproduces.

use half::{bf16, f16};
use num_complex::Complex;

use crate::cast::cast;
use tensorcast_core::x86::{daz32, daz64};
use tensorcast_core::{DataType, Element, Tensor};
use tensorcast_core::{Error, Result};

/// `ClipByValue`'s type list (its op registration), in TensorFlow's order.
const CLIP_TYPES: &[DataType] = crate::type_lists::NUMBER_TYPES;

/// A real dtype's `(min, max)` as TensorFlow's `DType.min`/`.max` give them, in `f64`
/// (`float(max)` where TensorFlow's Python converts it; every minimum is exact in `f64`).
fn range(dtype: DataType) -> Option<(f64, f64)> {
    let sym = |m: f64| Some((-m, m));
    match dtype {
        DataType::INT8 => Some((-128.0, 127.0)),
        DataType::INT16 => Some((-32768.0, 32767.0)),
        DataType::INT32 => Some((-2147483648.0, 2147483647.0)),
        DataType::INT64 => Some((i64::MIN as f64, i64::MAX as f64)),
        DataType::UINT8 => Some((0.0, 255.0)),
        DataType::UINT16 => Some((0.0, 65535.0)),
        DataType::UINT32 => Some((0.0, 4294967295.0)),
        DataType::UINT64 => Some((0.0, u64::MAX as f64)),
        DataType::INT4 => Some((-8.0, 7.0)),
        DataType::UINT4 => Some((0.0, 15.0)),
        DataType::INT2 => Some((-2.0, 1.0)),
        DataType::UINT2 => Some((0.0, 3.0)),
        DataType::HALF => sym(f16::MAX.to_f64()),
        DataType::BFLOAT16 => sym(bf16::MAX.to_f64()),
        DataType::FLOAT => sym(f64::from(f32::MAX)),
        DataType::DOUBLE => sym(f64::MAX),
        DataType::FLOAT8_E4M3FN => sym(448.0),
        DataType::FLOAT8_E5M2 | DataType::FLOAT8_E5M2FNUZ => sym(57344.0),
        DataType::FLOAT8_E4M3FNUZ => sym(240.0),
        DataType::FLOAT8_E4M3B11FNUZ => sym(30.0),
        DataType::FLOAT4_E2M1FN => sym(6.0),
        _ => None,
    }
}

/// The real type of a complex dtype, the dtype itself otherwise.
fn real_of(dtype: DataType) -> DataType {
    match dtype {
        DataType::COMPLEX64 => DataType::FLOAT,
        DataType::COMPLEX128 => DataType::DOUBLE,
        d => d,
    }
}

/// An input type `ClipByValue` runs on, with TensorFlow's conversions of the limits into it.
trait Clip: Element + Copy + PartialOrd {
    /// `np_dtype(x)`: the nearest value (floats), or the integer (ints; an out-of-range value
    /// converts as numpy does on x86-64: to the minimum for int64).
    fn from_limit(x: f64) -> Self;
    /// `np.nextafter(x, 0)`: one step toward zero (floats); integers never need it.
    fn toward_zero(self) -> Self;
    fn to_f64(self) -> f64;
    /// The value `ClipByValue` gives back for `self` within the limits: TensorFlow's CPU
    /// kernels run with denormals-are-zero, so a float or double denormal comes out as a zero of
    /// its sign.
    fn daz(self) -> Self {
        self
    }
}

macro_rules! clip_int {
    ($($t:ty),*) => {$(
        impl Clip for $t {
            fn from_limit(x: f64) -> Self {
                if x >= <$t>::MIN as f64 && x < <$t>::MAX as f64 + 1.0 {
                    x as $t
                } else {
                    <$t>::MIN
                }
            }
            fn toward_zero(self) -> Self {
                self
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}
clip_int!(i8, i16, i32, i64, u8, u16);

macro_rules! clip_float {
    ($t:ty, $bits:ty, $from:expr, $to:expr, $daz:expr) => {
        impl Clip for $t {
            fn daz(self) -> Self {
                $daz(self)
            }
            fn from_limit(x: f64) -> Self {
                $from(x)
            }
            fn toward_zero(self) -> Self {
                if self.to_bits() << 1 == 0 || self != self {
                    self
                } else {
                    <$t>::from_bits(self.to_bits() - 1)
                }
            }
            fn to_f64(self) -> f64 {
                $to(self)
            }
        }
    };
}
clip_float!(f32, u32, |x: f64| x as f32, f64::from, daz32);
clip_float!(f64, u64, |x: f64| x, |x: f64| x, daz64);
// half and bfloat16 are compared in float and the kernel returns the element it selected, not
// the float it compared: a denormal bfloat16 compares as zero but comes out unchanged (recorded).
clip_float!(f16, u16, f16::from_f64, f16::to_f64, |x| x);
clip_float!(bf16, u16, bf16::from_f64, bf16::to_f64, |x| x);

/// The limits `saturate_cast` clips a `T` input to for the output's real type `out`.
fn limits<T: Clip>(out: DataType) -> Option<(T, T)> {
    let (in_min, in_max) = range(T::DTYPE)?;
    let (out_min, out_max) = range(out)?;
    let mut lo = T::from_limit(in_min.max(out_min));
    if lo.to_f64() < out_min {
        lo = lo.toward_zero();
    }
    let mut hi = T::from_limit(in_max.min(out_max));
    if hi.to_f64() > out_max {
        hi = hi.toward_zero();
    }
    Some((lo, hi))
}

/// `ClipByValue(x, lo, hi)` as its CPU kernel computes it: `min(x, hi)` then `max(.., lo)`,
/// each keeping `x` unless the limit compares beyond it (so NaN passes through).
fn clip_value<T: PartialOrd + Copy>(x: T, lo: T, hi: T) -> T {
    let y = if hi < x { hi } else { x };
    if y < lo {
        lo
    } else {
        y
    }
}

fn clip_real<T: Clip>(input: &Tensor, out: DataType) -> Result<Tensor> {
    let (lo, hi) = limits::<T>(out).ok_or(Error::NoRange { dtype: out })?;
    let values = input.unaligned_flat::<T>()?;
    let clipped: Vec<T> = values
        .iter()
        .map(|&x| clip_value(x.daz(), lo, hi))
        .collect();
    Tensor::from_vec(clipped, input.shape())
}

/// complex128 -> complex64: both parts clipped to float's range.
fn clip_complex128_to_float(input: &Tensor) -> Result<Tensor> {
    let (lo, hi) = (f64::from(f32::MIN), f64::from(f32::MAX));
    let values = input.unaligned_flat::<Complex<f64>>()?;
    let clipped: Vec<Complex<f64>> = values
        .iter()
        .map(|z| {
            let part = |x: f64| clip_value(daz64(x), lo, hi);
            Complex::new(part(z.re), part(z.im))
        })
        .collect();
    Tensor::from_vec(clipped, input.shape())
}

/// The real part of a complex tensor.
fn real_part(input: &Tensor) -> Result<Tensor> {
    tensorcast_core::dispatch!(input.dtype(), [complex] T => {
        let v = input.unaligned_flat::<T>()?;
        Tensor::from_vec(v.iter().map(|z| z.re).collect::<Vec<_>>(), input.shape())
    }, _ => Err(Error::Internal(format!("{} is not complex", input.dtype()))))
}

pub(crate) fn saturate_cast(input: &Tensor, dtype: DataType) -> Result<Tensor> {
    for d in [input.dtype(), dtype] {
        if d == DataType::BOOL {
            return Err(Error::NoRange { dtype: d });
        }
    }
    input.check_initialized()?;
    let in_dtype = input.dtype();
    let is_complex = |d| matches!(d, DataType::COMPLEX64 | DataType::COMPLEX128);
    if is_complex(in_dtype) {
        if is_complex(dtype) {
            if in_dtype == DataType::COMPLEX128 && dtype == DataType::COMPLEX64 {
                return cast(&clip_complex128_to_float(input)?, dtype);
            }
            return cast(input, dtype);
        }
        // The real part goes on as a real input.
        return clip_then_cast(&real_part(input)?, dtype);
    }
    clip_then_cast(input, dtype)
}

fn clip_then_cast(input: &Tensor, dtype: DataType) -> Result<Tensor> {
    let in_dtype = input.dtype();
    if !CLIP_TYPES.contains(&in_dtype) {
        return Err(Error::NotInTypeList {
            op: "ClipByValue",
            attr: "T",
            dtype: in_dtype,
            allowed: CLIP_TYPES,
        });
    }
    let out = real_of(dtype);
    if range(out).is_none() {
        // No range to clip to: what remains is Cast's own refusal (string, ...).
        return cast(input, dtype);
    }
    // uint32, uint64 and the quantized types: in the type list, but no CPU kernel.
    let clipped = tensorcast_core::dispatch!(in_dtype, {
        FLOAT, DOUBLE, HALF, BFLOAT16, INT8, INT16, INT32, INT64, UINT8, UINT16
    } T => clip_real::<T>(input, out)?, _ => {
        return Err(Error::NoKernel {
            op: "ClipByValue",
            dtype: in_dtype,
            incompatible_shape_error: None,
        })
    });
    cast(&clipped, dtype)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_tensorflows() {
        let b = Tensor::vector(&[true]);
        assert_eq!(
            saturate_cast(&b, DataType::INT32).unwrap_err().to_string(),
            "Cannot find minimum value of <dtype: 'bool'> with type <dtype: 'bool'>."
        );
        let x = Tensor::vector(&[1u32]);
        assert!(matches!(
            saturate_cast(&x, DataType::INT8),
            Err(Error::NoKernel {
                op: "ClipByValue",
                ..
            })
        ));
        let f8 = Tensor::vector(&[tensorcast_core::types::Float8E5M2::from_f32(1.0)]);
        assert!(matches!(
            saturate_cast(&f8, DataType::FLOAT),
            Err(Error::NotInTypeList {
                op: "ClipByValue",
                ..
            })
        ));
    }

    #[test]
    fn int64_upper_limit_overflows_as_in_tensorflow() {
        let x = Tensor::vector(&[5i64, -7, i64::MAX]);
        let y = saturate_cast(&x, DataType::INT64).unwrap();
        assert_eq!(y.to_vec::<i64>().unwrap(), vec![i64::MIN; 3]);
        let y = saturate_cast(&x, DataType::UINT64).unwrap();
        assert_eq!(y.to_vec::<u64>().unwrap(), vec![0; 3]);
        let y = saturate_cast(&x, DataType::INT32).unwrap();
        assert_eq!(y.to_vec::<i32>().unwrap(), vec![5, -7, i32::MAX]);
    }

    #[test]
    fn limits_step_toward_zero_when_not_representable() {
        assert_eq!(
            limits::<f32>(DataType::INT32),
            Some((-2147483648.0, 2147483520.0))
        );
        assert_eq!(
            limits::<bf16>(DataType::HALF),
            Some((bf16::from_f32(-65280.0), bf16::from_f32(65280.0)))
        );
        assert_eq!(
            limits::<f64>(DataType::FLOAT).map(|l| l.1),
            Some(f64::from(f32::MAX))
        );
    }

    #[test]
    fn complex128_to_complex64_clips_both_parts() {
        let z = Tensor::vector(&[Complex::new(1e300, -1e300), Complex::new(f64::NAN, 2.0)]);
        let y = saturate_cast(&z, DataType::COMPLEX64).unwrap();
        let v = y.to_vec::<Complex<f32>>().unwrap();
        assert_eq!(v[0], Complex::new(f32::MAX, f32::MIN));
        assert!(v[1].re.is_nan() && v[1].im == 2.0);
    }
}
