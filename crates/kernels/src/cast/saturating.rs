//! [`cast_saturating`]: TensorFlow's `tf.dtypes.saturate_cast`, and [`cast_clamped`], a cast
//! whose float-to-integer results are the same on every machine.
//!
//! **`cast_saturating`** is `saturate_cast` of TensorFlow 2.21 for every pair of dtypes, as
//! recorded from it (`tests/tf_observed/saturate_cast.jsonl`): the input is clipped
//! (`ClipByValue`) to limits computed the way TensorFlow's Python computes them, then cast with
//! [`crate::cast::cast`]. So:
//! - a complex input cast to a real type keeps its real part; complex128 -> complex64 clips
//!   both parts to float's range;
//! - float -> float clips infinities to the narrower type's finite range, and double -> float
//!   (or complex128 -> complex64) to +-3.4028235e38 rather than overflowing to infinity;
//! - a limit not representable in the input type moves one step toward zero (float -> int32
//!   clips to 2147483520);
//! - NaN passes the clip and casts as [`crate::cast::cast`] casts it;
//! - TensorFlow's quirks are kept: its upper limit for an int64 input is `float(2**63 - 1)`
//!   converted back to int64, which overflows to `-2**63`, so int64 -> int64, double, float
//!   and bfloat16 give `-2**63` for every element, and int64 -> uint64 gives 0;
//! - refusals are TensorFlow's: bool on either side (`Cannot find minimum value of ...`), an
//!   input `ClipByValue` does not take (float8, int4, ...: its type-list message), uint32 and
//!   uint64 inputs (no `ClipByValue` kernel), and pairs `Cast` does not take.
//!
//! **`cast_clamped`**: float (and complex, by its real part) to integer **saturates** - values
//! beyond the target's range become its minimum or maximum, NaN becomes 0, finite values
//! truncate toward zero (Rust's `as`) - where TensorFlow's `Cast` gives whatever the CPU's
//! conversion instruction gives. Every other pair converts exactly as `cast` does.

use half::{bf16, f16};
use num_complex::Complex;
use tensorcast_buffer::cpu_allocator;

use tensorcast_core::types::{Float8E4M3FN, Float8E5M2};
use tensorcast_core::Result;
use tensorcast_core::{DataType, Element, Tensor};

/// A target integer type: Rust's saturating `as` from `f64`.
trait SaturateFrom: bytemuck::NoUninit {
    fn saturate(x: f64) -> Self;
}

macro_rules! saturate_from {
    ($($t:ty),*) => {$(
        impl SaturateFrom for $t {
            #[inline]
            fn saturate(x: f64) -> Self {
                x as $t
            }
        }
    )*};
}
saturate_from!(i8, i16, i32, i64, u8, u16, u32, u64);

/// A float or complex source: its (real) value as `f64`, exactly.
trait RealValue: Element + Copy {
    fn real(self) -> f64;
}

macro_rules! real_value {
    ($($t:ty),*) => {$(
        impl RealValue for $t {
            #[inline]
            fn real(self) -> f64 {
                f64::from(self)
            }
        }
    )*};
}
real_value!(f32, f64, f16, bf16, Float8E4M3FN, Float8E5M2);

impl RealValue for Complex<f32> {
    #[inline]
    fn real(self) -> f64 {
        f64::from(self.re)
    }
}

impl RealValue for Complex<f64> {
    #[inline]
    fn real(self) -> f64 {
        self.re
    }
}

fn convert<S: RealValue, D: SaturateFrom>(input: &Tensor, dtype: DataType) -> Result<Tensor> {
    input.check_initialized()?;
    let src = input.unaligned_flat::<S>()?;
    let values: &[S] = src.as_slice().unwrap_or(&[]);
    Tensor::from_writer(&cpu_allocator(), dtype, input.shape(), |w| {
        w.put_map(values, |x| D::saturate(x.real()))
    })
}

/// `Cast` with float-to-integer conversion that saturates the same way on every machine (see
/// the module docs); every other pair is exactly [`crate::cast::cast`].
///
/// # Errors
/// As [`crate::cast::cast`].
///
/// ```
/// use tensorcast_core::{DataType, Tensor};
/// use tensorcast_kernels::cast::saturating::cast_clamped;
/// let x = Tensor::vector(&[1.9f32, -2.7, f32::NAN, f32::INFINITY, -1e10, 300.0]);
/// let i = cast_clamped(&x, DataType::INT32)?;
/// assert_eq!(i.to_vec::<i32>()?, vec![1, -2, 0, i32::MAX, i32::MIN, 300]);
/// let u = cast_clamped(&x, DataType::UINT8)?;
/// assert_eq!(u.to_vec::<u8>()?, vec![1, 0, 0, 255, 0, 255]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn cast_clamped(input: &Tensor, dtype: DataType) -> Result<Tensor> {
    let cast = || crate::cast::cast(input, dtype);
    tensorcast_core::dispatch!(dtype, {INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64} D =>
        tensorcast_core::dispatch!(input.dtype(), {
            FLOAT, DOUBLE, HALF, BFLOAT16, FLOAT8_E4M3FN, FLOAT8_E5M2, COMPLEX64, COMPLEX128
        } S => convert::<S, D>(input, dtype), _ => cast()),
        _ => cast())
}

/// TensorFlow's `tf.dtypes.saturate_cast(input, dtype)`: clip to the limits TensorFlow
/// computes, then `Cast` (see the module docs for the rules, quirks included).
///
/// # Errors
/// TensorFlow's refusals: [`tensorcast_core::Error::NoRange`] for bool on either side,
/// [`tensorcast_core::Error::NotInTypeList`] for an input `ClipByValue` does not take, [`tensorcast_core::Error::NoKernel`] for
/// uint32/uint64/quantized inputs, and [`crate::cast::cast`]'s errors.
///
/// ```
/// use tensorcast_core::{DataType, Tensor};
/// use tensorcast_kernels::cast::saturating::cast_saturating;
/// let x = Tensor::vector(&[f64::INFINITY, -1e300, 1.5, 3e9]);
/// let f = cast_saturating(&x, DataType::FLOAT)?;
/// assert_eq!(f.to_vec::<f32>()?, vec![f32::MAX, f32::MIN, 1.5, 3e9]);
/// let i = cast_saturating(&Tensor::vector(&[3e9f32, -1.0]), DataType::INT32)?;
/// assert_eq!(i.to_vec::<i32>()?, vec![2147483520, -1]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn cast_saturating(input: &Tensor, dtype: DataType) -> Result<Tensor> {
    super::saturate::saturate_cast(input, dtype)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensorcast_core::dtypes;

    #[test]
    fn saturates_every_float_source_to_every_integer() {
        let x = Tensor::vector(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e30, -1e30, 7.9]);
        for src in *dtypes!("float, double, half, bfloat16") {
            let xs = crate::cast::cast(&x, src).unwrap();
            let y = cast_clamped(&xs, DataType::INT16).unwrap();
            // In half, 1e30 is already infinity: it saturates the same way.
            let want = vec![0, i16::MAX, i16::MIN, i16::MAX, i16::MIN, 7];
            assert_eq!(y.to_vec::<i16>().unwrap(), want, "{src}");
            let u = cast_clamped(&xs, DataType::UINT64).unwrap();
            assert_eq!(
                u.to_vec::<u64>().unwrap(),
                vec![0, u64::MAX, 0, u64::MAX, 0, 7],
                "{src}"
            );
        }
    }

    #[test]
    fn complex_uses_the_real_part_and_other_pairs_match_cast() {
        let z = Tensor::vector(&[Complex::new(-3.5f32, 9.0), Complex::new(1e20, 0.0)]);
        let y = cast_clamped(&z, DataType::INT8).unwrap();
        assert_eq!(y.to_vec::<i8>().unwrap(), vec![-3, 127]);
        let i = Tensor::vector(&[300i32, -5]);
        assert_eq!(
            cast_clamped(&i, DataType::UINT8).unwrap(),
            crate::cast::cast(&i, DataType::UINT8).unwrap()
        );
        let s = Tensor::vector(&[tensorcast_core::TString::from("x")]);
        assert!(cast_clamped(&s, DataType::INT32).is_err());
    }
}
