//! Ascend TIK's `Tensor.reinterpret_cast_to(dtype)`: the same bytes read as another dtype,
//! keeping the rank and scaling the last dimension, without copying.
//!
//! TIK defines a *factor* = bits of the source dtype / bits of the target dtype, and requires:
//! - factor > 0;
//! - factor > 1 must be an integer: the last dim is multiplied by it;
//! - factor < 1: `shape[-1] * factor` must be an integer, else the error
//!   `Last dimension can't be divided` (TIK's example: 128 float16 as shape `(128, 1)` read as
//!   float32 fails; as shape `(128,)` it gives 64 float32).
//!
//! tensorcast's choices where TIK says nothing:
//! - **Bits are storage bits**, `8 * DataType::size()`: int4, uint4, int2, uint2 and float4 hold
//!   one element per byte (as TensorFlow stores them), so they count as 8 bits here, not as
//!   their [`DataType::value_bits`].
//! - **Every memcpy-able dtype** is accepted on both sides: TIK's numeric list plus bfloat16,
//!   complex, quantized, float8, float4, the sub-byte integers and bool. A bool result may hold
//!   bytes other than 0 and 1; its typed views check every byte and refuse such data, so no
//!   invalid `bool` is ever created (view it as uint8 instead).
//! - **Non-memcpy dtypes** (string, resource, variant, invalid, refs, unknown numbers) are
//!   refused on either side with an [`Error::NotBytes`] naming the dtype.
//! - **A scalar** has no last dimension to scale. Between dtypes of the same size it stays a
//!   scalar; between dtypes of different sizes the rank cannot be kept, so it is an error
//!   (reshape it to `[1]` first if that is what is meant).
//!
//! The result shares the input's buffer ([`Tensor::bitcast_from`]): no byte is copied.
//!
//! ```
//! use tensorcast_core::{f16, DataType, Tensor, TensorShape};
//! use tensorcast_kernels::TensorOps;
//!
//! let a = Tensor::vector(&[f16::from_f32(1.0); 16]);
//! let b = a.reinterpret_cast_to(DataType::UINT32).unwrap(); // factor 16/32 = 0.5
//! assert_eq!(b.shape().dim_sizes(), &[8]);
//! assert!(b.shares_buffer_with(&a));
//! assert_eq!(b.as_slice::<u32>().unwrap()[0], 0x3c00_3c00);
//!
//! let tall = a.reshape(&TensorShape::new(&[16, 1]).unwrap()).unwrap();
//! let err = tall.reinterpret_cast_to(DataType::FLOAT).unwrap_err();
//! assert_eq!(err.to_string(), "Last dimension can't be divided");
//! ```

use crate::bitcast::shape_from_parts;
use tensorcast_core::{DataType, Tensor, TensorShape};
use tensorcast_core::{Error, Result};

/// The message TIK reports when the last dimension times the factor is not an integer.
pub const LAST_DIMENSION_ERROR: &str = "Last dimension can't be divided";

fn check_dtype(op: &'static str, dtype: DataType) -> Result<()> {
    if dtype.can_use_memcpy() && dtype.size() > 0 {
        Ok(())
    } else {
        Err(Error::NotBytes { op, dtype })
    }
}

/// The output shape of `reinterpret_cast_to` from `src` bytes per element to `dst`.
fn output_shape(shape: &TensorShape, src: DataType, dst: DataType) -> Result<TensorShape> {
    let (src_bits, dst_bits) = (8 * src.size(), 8 * dst.size());
    if src_bits == dst_bits {
        return Ok(shape.clone());
    }
    let dims = shape.dim_sizes();
    let Some((&last, outer)) = dims.split_last() else {
        return Err(Error::ReinterpretScalar { from: src, to: dst });
    };
    let new_last = if src_bits > dst_bits {
        // factor > 1: it must be an integer.
        if src_bits % dst_bits != 0 {
            return Err(Error::ReinterpretFactor {
                from_bits: src_bits,
                to_bits: dst_bits,
            });
        }
        let factor = (src_bits / dst_bits) as i64;
        last.checked_mul(factor).ok_or(Error::MultiplyOverflow {
            lhs: last,
            rhs: factor,
            result: None,
        })?
    } else {
        // factor < 1: shape[-1] * src_bits / dst_bits must be an integer.
        let bits = (last as i128) * (src_bits as i128);
        if bits % (dst_bits as i128) != 0 {
            return Err(Error::ReinterpretLastDimension);
        }
        // At most `last`, so it fits in an i64.
        (bits / dst_bits as i128) as i64
    };
    shape_from_parts(outer, Some(new_last))
}

/// Ascend TIK's `reinterpret_cast_to(dtype)`: `input`'s bytes as `dtype`, keeping the rank and
/// scaling the last dimension by `bits(input) / bits(dtype)`, sharing the buffer.
///
/// See the [module docs](self) for the rules, and what tensorcast decided where TIK is silent.
///
/// # Errors
/// [`Error::NotBytes`] when either dtype is not plain bytes (string, resource, variant, invalid);
/// [`Error::ReinterpretScalar`] for a scalar between dtypes of different sizes;
/// [`Error::ReinterpretLastDimension`] (TIK's `Last dimension can't be divided`) when the last
/// dimension times the factor is not whole; [`Error::MultiplyOverflow`] when scaling it overflows.
///
/// ```
/// use tensorcast_core::{DataType, Tensor, TensorShape};
/// use tensorcast_kernels::bitcast::reinterpret::reinterpret_cast_to;
///
/// let x = Tensor::from_vec(vec![1u32, 2, 3, 4], &TensorShape::new(&[2, 2])?)?;
/// let y = reinterpret_cast_to(&x, DataType::UINT8)?; // factor 4
/// assert_eq!(y.shape().dim_sizes(), &[2, 8]);
/// let z = reinterpret_cast_to(&y, DataType::UINT64)?; // factor 1/8
/// assert_eq!(z.shape().dim_sizes(), &[2, 1]);
/// assert!(z.shares_buffer_with(&x));
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn reinterpret_cast_to(input: &Tensor, dtype: DataType) -> Result<Tensor> {
    check_dtype("reinterpret_cast_to (source)", input.dtype())?;
    check_dtype("reinterpret_cast_to (target)", dtype)?;
    if input.dtype().size() == dtype.size() {
        return input.bitcast_to(dtype, input.shape());
    }
    let shape = output_shape(input.shape(), input.dtype(), dtype)?;
    input.bitcast_to(dtype, &shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[i64]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    #[test]
    fn factor_above_one_scales_the_last_dim() {
        let s = output_shape(&shape(&[3, 5]), DataType::COMPLEX128, DataType::INT8).unwrap();
        assert_eq!(s.dim_sizes(), &[3, 80]);
    }

    #[test]
    fn factor_below_one_needs_an_integral_last_dim() {
        let s = output_shape(&shape(&[3, 6]), DataType::HALF, DataType::DOUBLE);
        assert_eq!(s.unwrap_err().to_string(), LAST_DIMENSION_ERROR);
        let s = output_shape(&shape(&[3, 8]), DataType::HALF, DataType::DOUBLE).unwrap();
        assert_eq!(s.dim_sizes(), &[3, 2]);
        let s = output_shape(&shape(&[0]), DataType::INT8, DataType::COMPLEX128).unwrap();
        assert_eq!(s.dim_sizes(), &[0]);
    }

    #[test]
    fn scalars_keep_their_shape_only_between_equal_sizes() {
        let s = output_shape(&TensorShape::scalar(), DataType::FLOAT, DataType::QINT32);
        assert_eq!(s.unwrap().rank(), 0);
        assert!(output_shape(&TensorShape::scalar(), DataType::FLOAT, DataType::UINT8).is_err());
    }

    #[test]
    fn overflowing_last_dim_is_an_error() {
        let big = shape(&[i64::MAX / 2]);
        assert!(output_shape(&big, DataType::COMPLEX128, DataType::UINT8).is_err());
    }
}
