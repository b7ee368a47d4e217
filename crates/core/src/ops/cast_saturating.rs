//! [`cast_saturating`]: `Cast` with defined results where TensorFlow's are platform-defined.
//!
//! TensorFlow converts a float to an integer with whatever the CPU's conversion instruction
//! gives for NaN, infinities and out-of-range values; [`crate::ops::cast::cast`] reproduces
//! TensorFlow 2.21 on x86-64 exactly (its conformance vectors require it). Code that must give
//! the same answer on every machine can use this function instead: float (and complex, by its
//! real part) to integer **saturates** — values beyond the target's range become its minimum or
//! maximum, NaN becomes 0, finite values truncate toward zero — which is Rust's `as`. Every
//! other pair converts exactly as [`crate::ops::cast::cast`] does.

use half::{bf16, f16};
use num_complex::Complex;
use tensorcast_buffer::cpu_allocator;

use crate::error::Result;
use crate::types::{Float8E4M3FN, Float8E5M2};
use crate::{DataType, Element, Tensor};

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

fn convert<S: Element + Copy, D: SaturateFrom>(
    input: &Tensor,
    dtype: DataType,
    to_f64: fn(S) -> f64,
) -> Result<Tensor> {
    input.check_initialized()?;
    let src = input.unaligned_flat::<S>()?;
    let values: &[S] = src.as_slice().unwrap_or(&[]);
    Tensor::from_writer(&cpu_allocator(), dtype, input.shape(), |w| {
        w.put_map(values, |x| D::saturate(to_f64(x)))
    })
}

fn to_integer<D: SaturateFrom>(input: &Tensor, dtype: DataType) -> Result<Tensor> {
    match input.dtype() {
        DataType::FLOAT => convert::<f32, D>(input, dtype, f64::from),
        DataType::DOUBLE => convert::<f64, D>(input, dtype, |x| x),
        DataType::HALF => convert::<f16, D>(input, dtype, f64::from),
        DataType::BFLOAT16 => convert::<bf16, D>(input, dtype, f64::from),
        DataType::FLOAT8_E4M3FN => convert::<Float8E4M3FN, D>(input, dtype, f64::from),
        DataType::FLOAT8_E5M2 => convert::<Float8E5M2, D>(input, dtype, f64::from),
        DataType::COMPLEX64 => convert::<Complex<f32>, D>(input, dtype, |z| f64::from(z.re)),
        DataType::COMPLEX128 => convert::<Complex<f64>, D>(input, dtype, |z| z.re),
        _ => crate::ops::cast::cast(input, dtype),
    }
}

/// `Cast` with saturating float-to-integer conversion (see the module docs); every other pair
/// is exactly [`crate::ops::cast::cast`].
///
/// ```
/// use tensorcast_core::{ops::cast_saturating::cast_saturating, DataType, Tensor};
/// let x = Tensor::vector(&[1.9f32, -2.7, f32::NAN, f32::INFINITY, -1e10, 300.0]);
/// let i = cast_saturating(&x, DataType::INT32).unwrap();
/// assert_eq!(i.to_vec::<i32>().unwrap(), vec![1, -2, 0, i32::MAX, i32::MIN, 300]);
/// let u = cast_saturating(&x, DataType::UINT8).unwrap();
/// assert_eq!(u.to_vec::<u8>().unwrap(), vec![1, 0, 0, 255, 0, 255]);
/// ```
pub fn cast_saturating(input: &Tensor, dtype: DataType) -> Result<Tensor> {
    let float_source = matches!(
        input.dtype(),
        DataType::FLOAT
            | DataType::DOUBLE
            | DataType::HALF
            | DataType::BFLOAT16
            | DataType::FLOAT8_E4M3FN
            | DataType::FLOAT8_E5M2
            | DataType::COMPLEX64
            | DataType::COMPLEX128
    );
    if !float_source {
        return crate::ops::cast::cast(input, dtype);
    }
    match dtype {
        DataType::INT8 => to_integer::<i8>(input, dtype),
        DataType::INT16 => to_integer::<i16>(input, dtype),
        DataType::INT32 => to_integer::<i32>(input, dtype),
        DataType::INT64 => to_integer::<i64>(input, dtype),
        DataType::UINT8 => to_integer::<u8>(input, dtype),
        DataType::UINT16 => to_integer::<u16>(input, dtype),
        DataType::UINT32 => to_integer::<u32>(input, dtype),
        DataType::UINT64 => to_integer::<u64>(input, dtype),
        _ => crate::ops::cast::cast(input, dtype),
    }
}

impl Tensor {
    /// [`cast_saturating`] as a method.
    pub fn cast_saturating(&self, dtype: DataType) -> Result<Tensor> {
        cast_saturating(self, dtype)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturates_every_float_source_to_every_integer() {
        let x = Tensor::vector(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e30, -1e30, 7.9]);
        for src in [
            DataType::FLOAT,
            DataType::DOUBLE,
            DataType::HALF,
            DataType::BFLOAT16,
        ] {
            let xs = crate::ops::cast::cast(&x, src).unwrap();
            let y = cast_saturating(&xs, DataType::INT16).unwrap();
            // In half, 1e30 is already infinity: it saturates the same way.
            let want = vec![0, i16::MAX, i16::MIN, i16::MAX, i16::MIN, 7];
            assert_eq!(y.to_vec::<i16>().unwrap(), want, "{src}");
            let u = cast_saturating(&xs, DataType::UINT64).unwrap();
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
        let y = cast_saturating(&z, DataType::INT8).unwrap();
        assert_eq!(y.to_vec::<i8>().unwrap(), vec![-3, 127]);
        let i = Tensor::vector(&[300i32, -5]);
        assert_eq!(
            cast_saturating(&i, DataType::UINT8).unwrap(),
            crate::ops::cast::cast(&i, DataType::UINT8).unwrap()
        );
        let s = Tensor::vector(&[crate::TString::from("x")]);
        assert!(cast_saturating(&s, DataType::INT32).is_err());
    }
}
