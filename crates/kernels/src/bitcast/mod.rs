//! TensorFlow's `Bitcast` op: the same bytes read as another dtype, without copying.
//!
//! One family: [`Tensor::bitcast_from`] (TensorFlow's `BitcastFrom`: any dtype and shape with the
//! same byte count) is the only code that re-types a buffer; [`Tensor::bitcast_to`] is it as a
//! function, and the `Bitcast` op here and Ascend TIK's
//! [`reinterpret_cast_to`](crate::bitcast::reinterpret::reinterpret_cast_to) only decide the shape
//! (each by its own rules) and call `bitcast_to`.
//!
//! The rules (TensorFlow's `tensorflow/c/kernels/bitcast_op.cc` and its op registration, as
//! observed in TensorFlow 2.21):
//!
//! - Both the input dtype `T` and the target `type` must be one of the op's 19 types
//!   ([`BITCAST_TYPES`]); anything else (bool, string, float8, int4, refs, unknown numbers)
//!   fails with `Value for attr 'T' of bool is not in the list of allowed values: bfloat16,
//!   half, ...` (`'type'` for the target). `T` is checked first.
//! - With `in = sizeof(T)` and `out = sizeof(type)`:
//!   - `in == out`: the shape is kept;
//!   - `in > out`: a dim of `in / out` is appended (a scalar becomes `[in / out]`);
//!   - `in < out`: the input must have rank >= 1 and a last dim equal to `out / in`, which is
//!     dropped; otherwise the error is `Cannot bitcast from <T> to <type>`, with both dtypes
//!     printed as their enum numbers (`Cannot bitcast from 6 to 3`).
//! - The result shares the input's buffer ([`Tensor::bitcast_from`]): no byte is copied, and the
//!   cost does not depend on the tensor's size. Bytes are read in host order (little-endian).
//!
//! TensorFlow's type-list error carries a `\n\t; NodeDef: {{node Bitcast}}; Op<...>` suffix
//! that names the graph node; tensorcast has no node and stops before it.
//!
//! ```
//! use tensorcast_core::{DataType, Tensor};
//! use tensorcast_kernels::TensorOps;
//!
//! let x = Tensor::vector(&[0.0f32, 1.0, 1.0]);
//! let y = x.bitcast(DataType::UINT8).unwrap();
//! assert_eq!(y.shape().dim_sizes(), &[3, 4]);
//! assert!(y.shares_buffer_with(&x));
//! assert_eq!(y.as_slice::<u8>().unwrap(), &[0, 0, 0, 0, 0, 0, 128, 63, 0, 0, 128, 63]);
//!
//! let err = Tensor::vector(&[1.0f32, 2.0, 3.0]).bitcast(DataType::COMPLEX128).unwrap_err();
//! assert_eq!(err.to_string(), "Cannot bitcast from 1 to 18");
//! ```

use tensorcast_core::dtypes;
use tensorcast_core::{DataType, Tensor, TensorShape};
use tensorcast_core::{Error, Result};

pub mod reinterpret;

/// The dtypes the `Bitcast` op accepts for both `T` and `type`, in the order TensorFlow lists
/// them in its error messages.
pub const BITCAST_TYPES: [DataType; 19] = *dtypes!(
    "bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, uint64, int8, int16, \
     complex64, complex128, qint8, quint8, qint16, quint16, qint32"
);

/// True if `dtype` is one of [`BITCAST_TYPES`].
pub fn is_bitcast_type(dtype: DataType) -> bool {
    // The 19 types are exactly the numbers below: everything from 1 to 23 except string (7),
    // bool (10), resource (20) and variant (21).
    matches!(dtype.number(), 1..=6 | 8 | 9 | 11..=19 | 22 | 23)
}

fn check_attr(attr: &'static str, dtype: DataType) -> Result<()> {
    if is_bitcast_type(dtype) {
        Ok(())
    } else {
        Err(Error::NotInTypeList {
            op: "Bitcast",
            attr,
            dtype,
            allowed: &BITCAST_TYPES,
        })
    }
}

/// A shape of `prefix` dims followed by `last`, if given, built with a single allocation (a
/// stack copy for common ranks): the zero-copy ops are priced by their allocations.
pub(crate) fn shape_from_parts(prefix: &[i64], last: Option<i64>) -> Result<TensorShape> {
    const INLINE: usize = 8;
    let n = prefix.len() + usize::from(last.is_some());
    if n > INLINE || n > tensorcast_core::MAX_DIMENSIONS {
        // Rare: dim by dim, with TensorShape's own messages (`Too many dimensions in tensor`).
        let mut s = TensorShape::new(prefix)?;
        if let Some(l) = last {
            s.add_dim(l)?;
        }
        return Ok(s);
    }
    let mut dims = [0i64; INLINE];
    dims[..prefix.len()].copy_from_slice(prefix);
    if let Some(l) = last {
        dims[prefix.len()] = l;
    }
    TensorShape::make_shape(&dims[..n])
}

/// TensorFlow's `Bitcast` on validated dtypes: the new shape (`None`: the input's own), or the
/// `Cannot bitcast` error.
fn output_shape(input: &Tensor, dtype: DataType) -> Result<Option<TensorShape>> {
    let (in_size, out_size) = (input.dtype().size(), dtype.size());
    let dims = input.shape().dim_sizes();
    if in_size == out_size {
        Ok(None)
    } else if in_size > out_size {
        // Sizes are 1, 2, 4, 8 or 16: the ratio is a whole number (TensorFlow's construction
        // check "cannot convert between datatype" cannot trigger for these types).
        shape_from_parts(dims, Some((in_size / out_size) as i64)).map(Some)
    } else {
        let ratio = (out_size / in_size) as i64;
        match dims.split_last() {
            Some((&last, prefix)) if last == ratio => shape_from_parts(prefix, None).map(Some),
            _ => Err(Error::BitcastShape {
                from: input.dtype(),
                to: dtype,
            }),
        }
    }
}

/// TensorFlow's `Bitcast(input, type)`: `input`'s bytes as `dtype`, sharing its buffer.
///
/// See the [module docs](self) for the rules and messages.
///
/// # Errors
///
/// [`Error::NotInTypeList`] for a dtype outside [`BITCAST_TYPES`], [`Error::BitcastShape`]
/// when the last dimension does not match the size ratio (all `InvalidArgument`).
///
/// ```
/// use tensorcast_core::{DataType, Tensor, TensorShape};
/// use tensorcast_kernels::bitcast::bitcast;
///
/// // uint32 0xffffffff -> uint8 [255, 255, 255, 255].
/// let x = Tensor::from(0xffff_ffffu32);
/// let y = bitcast(&x, DataType::UINT8)?;
/// assert_eq!(y.shape().dim_sizes(), &[4]);
/// assert_eq!(y.as_slice::<u8>()?, &[255, 255, 255, 255]);
///
/// // The smaller type needs a last dim equal to the ratio, and drops it.
/// let bytes = Tensor::from_vec(vec![0u8; 8], &TensorShape::new(&[2, 4])?)?;
/// assert_eq!(bitcast(&bytes, DataType::FLOAT)?.shape().dim_sizes(), &[2]);
/// assert_eq!(
///     bitcast(&Tensor::vector(&[0i8]), DataType::INT32).unwrap_err().to_string(),
///     "Cannot bitcast from 6 to 3"
/// );
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn bitcast(input: &Tensor, dtype: DataType) -> Result<Tensor> {
    check_attr("T", input.dtype())?;
    check_attr("type", dtype)?;
    match output_shape(input, dtype)? {
        Some(shape) => input.bitcast_to(dtype, &shape),
        None => input.bitcast_to(dtype, input.shape()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitcast_types_match_the_predicate_and_the_printed_list() {
        let all: Vec<DataType> = DataType::all().filter(|&d| is_bitcast_type(d)).collect();
        assert_eq!(all.len(), 19);
        for d in BITCAST_TYPES {
            assert!(is_bitcast_type(d), "{d}");
        }
        // TensorFlow's printed list (`float`, not `float32`).
        let e = check_attr("T", DataType::BOOL).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Value for attr 'T' of bool is not in the list of allowed values: bfloat16, half, \
             float, double, int64, int32, uint8, uint16, uint32, uint64, int8, int16, complex64, \
             complex128, qint8, quint8, qint16, quint16, qint32"
        );
    }

    #[test]
    fn refs_and_unknown_numbers_fail_the_type_list() {
        for n in [0, 7, 10, 20, 21, 24, 33, 34, 101, 150, -1, i32::MAX] {
            assert!(!is_bitcast_type(DataType::from_number(n)), "{n}");
        }
    }
}
