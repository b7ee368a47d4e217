//! TensorFlow's `Equal`: element-wise `a == b` with broadcasting, as a `bool` tensor.
//!
//! - Both inputs must have the same dtype; otherwise TensorFlow's message,
//!   `cannot compute Equal as input #1(zero-based) was expected to be a float tensor but is a
//!   int32 tensor`.
//! - The shapes broadcast as TensorFlow's `BCast` does ([`crate::ops::broadcast_shapes`]);
//!   otherwise `Incompatible shapes: [3] vs. [2]`.
//! - Floating types compare as IEEE numbers: NaN equals nothing, not even itself, and
//!   `0 == -0`; `half` and `bfloat16` too. Complex numbers are equal when both parts are.
//!   Strings compare byte for byte. `bool`, every integer type.
//! - TensorFlow runs kernels with the SSE flag DAZ (denormals are zero) set, so a subnormal
//!   `float`, `double` or `bfloat16` (compared as `float`) equals zero there, and so it does
//!   here. (`half` subnormals are normal numbers once widened to `float`, so they are not
//!   affected.)
//! - The quantized types compare as their integers (TensorFlow 2.21 has kernels for them).
//!   TensorFlow registers no `Equal` kernel for the float8, float4, int4/int2, resource and
//!   variant types (its `NotFoundError`, "Could not find device for node"); those are an
//!   `Unimplemented` error here.

use half::{bf16, f16};
use ndarray::Zip;
use num_complex::Complex;
use tensorcast_buffer::cpu_allocator;

use crate::error::{Error, Result};
use crate::ops::broadcast_shapes;
use crate::types::{QInt16, QInt32, QInt8, QUInt16, QUInt8};
use crate::{DataType, Element, TString, Tensor, TensorShape};

/// `Equal(a, b)`: `a == b` element by element, broadcasting, as a `bool` tensor of the
/// broadcast shape.
///
/// ```
/// use tensorcast_core::{ops::equal::equal, Tensor};
/// let a = Tensor::vector(&[1i32, 2, 3]);
/// let b = Tensor::vector(&[0i32, 2, 3]);
/// assert_eq!(equal(&a, &b).unwrap().to_vec::<bool>().unwrap(), vec![false, true, true]);
/// let nan = Tensor::vector(&[f32::NAN, 0.0]);
/// let z = Tensor::scalar_of(-0.0f32);
/// assert_eq!(equal(&nan, &z).unwrap().to_vec::<bool>().unwrap(), vec![false, true]);
/// let f = Tensor::vector(&[1.0f32]);
/// assert_eq!(
///     equal(&f, &a).unwrap_err().to_string(),
///     "cannot compute Equal as input #1(zero-based) was expected to be a float tensor but is a int32 tensor"
/// );
/// ```
pub fn equal(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.dtype() != b.dtype() {
        return Err(Error::invalid(format!(
            "cannot compute Equal as input #1(zero-based) was expected to be a {} tensor but is \
             a {} tensor",
            a.dtype().name(),
            b.dtype().name()
        )));
    }
    let out = broadcast_shapes(a.shape(), b.shape())?;
    match a.dtype() {
        DataType::BOOL => typed::<bool>(a, b, &out, |x, y| x == y),
        DataType::INT8 => typed::<i8>(a, b, &out, |x, y| x == y),
        DataType::INT16 => typed::<i16>(a, b, &out, |x, y| x == y),
        DataType::INT32 => typed::<i32>(a, b, &out, |x, y| x == y),
        DataType::INT64 => typed::<i64>(a, b, &out, |x, y| x == y),
        DataType::UINT8 => typed::<u8>(a, b, &out, |x, y| x == y),
        DataType::UINT16 => typed::<u16>(a, b, &out, |x, y| x == y),
        DataType::UINT32 => typed::<u32>(a, b, &out, |x, y| x == y),
        DataType::UINT64 => typed::<u64>(a, b, &out, |x, y| x == y),
        // The `half` crate's `==` is IEEE equality (NaN unequal, zeros equal).
        DataType::HALF => typed::<f16>(a, b, &out, |x, y| x == y),
        DataType::BFLOAT16 => {
            typed::<bf16>(a, b, &out, |x, y| daz32(x.to_f32()) == daz32(y.to_f32()))
        }
        DataType::FLOAT => typed::<f32>(a, b, &out, |x, y| daz32(*x) == daz32(*y)),
        DataType::DOUBLE => typed::<f64>(a, b, &out, |x, y| daz64(*x) == daz64(*y)),
        DataType::COMPLEX64 => typed::<Complex<f32>>(a, b, &out, |x, y| {
            daz32(x.re) == daz32(y.re) && daz32(x.im) == daz32(y.im)
        }),
        DataType::COMPLEX128 => typed::<Complex<f64>>(a, b, &out, |x, y| {
            daz64(x.re) == daz64(y.re) && daz64(x.im) == daz64(y.im)
        }),
        DataType::STRING => typed::<TString>(a, b, &out, |x, y| x == y),
        DataType::QINT8 => typed::<QInt8>(a, b, &out, |x, y| x.0 == y.0),
        DataType::QUINT8 => typed::<QUInt8>(a, b, &out, |x, y| x.0 == y.0),
        DataType::QINT16 => typed::<QInt16>(a, b, &out, |x, y| x.0 == y.0),
        DataType::QUINT16 => typed::<QUInt16>(a, b, &out, |x, y| x.0 == y.0),
        DataType::QINT32 => typed::<QInt32>(a, b, &out, |x, y| x.0 == y.0),
        other => Err(Error::Unimplemented(format!(
            "Equal is not supported for {} tensors (TensorFlow registers no Equal kernel for it)",
            other.name()
        ))),
    }
}

impl Tensor {
    /// `Equal(self, other)`: see [`crate::ops::equal`].
    ///
    /// ```
    /// use tensorcast_core::{DataType, Tensor};
    /// // seed 000/003, example 3: tf.cast(tf.equal([1, 2, 3], [0, 2, 3]), tf.float32)
    /// let e = Tensor::vector(&[1i32, 2, 3]).equal(&Tensor::vector(&[0i32, 2, 3])).unwrap();
    /// assert_eq!(e.cast(DataType::FLOAT).unwrap().to_vec::<f32>().unwrap(), vec![0.0, 1.0, 1.0]);
    /// ```
    pub fn equal(&self, other: &Tensor) -> Result<Tensor> {
        equal(self, other)
    }
}

/// A `float` as SSE reads it with DAZ set: subnormals are zero.
#[inline(always)]
fn daz32(x: f32) -> f32 {
    if x.abs() < f32::MIN_POSITIVE {
        0.0
    } else {
        x
    }
}

/// A `double` with DAZ.
#[inline(always)]
fn daz64(x: f64) -> f64 {
    if x.abs() < f64::MIN_POSITIVE {
        0.0
    } else {
        x
    }
}

/// The input itself when its elements can be viewed as `T`, else an aligned copy (a tensor
/// adopted from foreign memory may be unaligned for `T`).
fn viewable<T: Element>(t: &Tensor) -> Result<std::borrow::Cow<'_, Tensor>> {
    match t.as_slice::<T>() {
        Ok(_) => Ok(std::borrow::Cow::Borrowed(t)),
        Err(Error::Misaligned { .. }) => Ok(std::borrow::Cow::Owned(t.deep_copy()?)),
        Err(e) => Err(e),
    }
}

fn typed<T: Element>(
    a: &Tensor,
    b: &Tensor,
    out: &TensorShape,
    eq: fn(&T, &T) -> bool,
) -> Result<Tensor> {
    if out.num_elements() == 0 {
        return Tensor::new(DataType::BOOL, out);
    }
    let (a, b) = (viewable::<T>(a)?, viewable::<T>(b)?);
    let (sa, sb) = (a.as_slice::<T>()?, b.as_slice::<T>()?);
    let n = out.num_elements_usize();
    let write = |f: &(dyn Fn(usize) -> bool + Sync)| {
        Tensor::from_writer(&cpu_allocator(), DataType::BOOL, out, |w| {
            w.put_with::<u8>(n, |start, block| {
                for (i, o) in block.iter_mut().enumerate() {
                    *o = u8::from(f(start + i));
                }
            })
        })
    };
    // Fast paths: same shapes, or one side a single element broadcast over the other.
    if sa.len() == n && sb.len() == n {
        return write(&|i| eq(&sa[i], &sb[i]));
    }
    if sa.len() == 1 && sb.len() == n {
        return write(&|i| eq(&sa[0], &sb[i]));
    }
    if sb.len() == 1 && sa.len() == n {
        return write(&|i| eq(&sa[i], &sb[0]));
    }
    // General broadcast: lazy stride-0 views of both, compared in row-major order.
    let va = a.broadcast_view::<T>(out)?;
    let vb = b.broadcast_view::<T>(out)?;
    let result = Zip::from(&va).and(&vb).map_collect(eq);
    let (values, _) = result.into_raw_vec_and_offset();
    Tensor::from_vec(values, out)
}
