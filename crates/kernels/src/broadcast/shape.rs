//! Shapes: TensorFlow's `BCast` rule ([`broadcast_shapes`]), `BroadcastTo`'s checks
//! ([`check_broadcast_to`]) and its shape operand ([`shape_from_tensor`]).

use tensorcast_core::MAX_DIMENSIONS;
use tensorcast_core::{DataType, Tensor, TensorShape};
use tensorcast_core::{Error, Result};

/// The shape two shapes broadcast to, as TensorFlow's `BCast` (and numpy) define it: align on
/// the right, pad the shorter with leading 1s, and at each position all sizes other than 1 must
/// agree (0 is an ordinary size: `0` with `1` gives 0, `0` with `5` is an error). The error is
/// TensorFlow's `Incompatible shapes: [a] vs. [b]`.
///
/// # Errors
/// [`Error::IncompatibleShapes`] (`Incompatible shapes: [2,1,3] vs. [2]`) when a position holds
/// two sizes other than 1 that differ; [`Error::MultiplyOverflow`] when the result would hold more
/// than 2**63 - 1 elements.
///
/// ```
/// use tensorcast_core::{TensorShape};
/// use tensorcast_kernels::broadcast::broadcast_shapes;
/// let a = TensorShape::new(&[2, 1, 3])?;
/// let b = TensorShape::new(&[5, 1])?;
/// assert_eq!(broadcast_shapes(&a, &b)?.to_string(), "[2,5,3]");
/// let c = TensorShape::new(&[2])?;
/// assert_eq!(broadcast_shapes(&a, &c).unwrap_err().to_string(), "Incompatible shapes: [2,1,3] vs. [2]");
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn broadcast_shapes(a: &TensorShape, b: &TensorShape) -> Result<TensorShape> {
    let (da, db) = (a.dim_sizes(), b.dim_sizes());
    let rank = da.len().max(db.len());
    let mut out = vec![0i64; rank];
    for (i, o) in out.iter_mut().enumerate() {
        let (x, y) = (aligned_dim(da, i, rank), aligned_dim(db, i, rank));
        *o = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(Error::IncompatibleShapes {
                    op: "BCast",
                    lhs: da.to_vec(),
                    rhs: db.to_vec(),
                })
            }
        };
    }
    TensorShape::new(&out)
}

/// Dim `i` of `dims` aligned to the right of `rank` dims, as broadcasting aligns shapes: 1
/// where `dims` is shorter.
pub(crate) fn aligned_dim(dims: &[i64], i: usize, rank: usize) -> i64 {
    if i + dims.len() >= rank {
        dims[i + dims.len() - rank]
    } else {
        1
    }
}

/// Reads a shape operand as TensorFlow's `tensor::MakeShape` does: a rank-1 int32 or int64
/// tensor whose values pass `TensorShapeUtils::MakeShape`.
///
/// # Errors
/// [`Error::ShapeOperandNotVector`] unless `shape` is 1-D, [`Error::ShapeOperandDtype`] unless it
/// is int32 or int64, [`Error::Uninitialized`] when it has elements but no buffer; for values that
/// are not a shape, [`TensorShape::make_shape`]'s [`Error::TooManyDimensions`],
/// [`Error::NegativeDimension`] (`Dimension -1 must be >= 0`) and [`Error::TooManyElements`].
///
/// ```
/// use tensorcast_core::{Tensor};
/// use tensorcast_kernels::broadcast::shape_from_tensor;
/// assert_eq!(shape_from_tensor(&Tensor::vector(&[2i64, 3]))?.to_string(), "[2,3]");
/// assert_eq!(
///     shape_from_tensor(&Tensor::vector(&[2i32, -1])).unwrap_err().to_string(),
///     "Dimension -1 must be >= 0"
/// );
/// assert_eq!(
///     shape_from_tensor(&Tensor::vector(&[2.0f32])).unwrap_err().to_string(),
///     "shape must be a vector of {int32,int64}."
/// );
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn shape_from_tensor(shape: &Tensor) -> Result<TensorShape> {
    if shape.dims() != 1 {
        return Err(Error::ShapeOperandNotVector {
            shape: shape.shape().clone(),
        });
    }
    let width = match shape.dtype() {
        DataType::INT32 => 4,
        DataType::INT64 => 8,
        dtype => return Err(Error::ShapeOperandDtype { dtype }),
    };
    // TensorShapeUtils::MakeShape checks the count before reading any value; checking it here
    // also bounds what is read.
    let n = shape.shape().num_elements_usize();
    if n > MAX_DIMENSIONS {
        return Err(Error::TooManyDimensions { in_tensor: false });
    }
    shape.check_initialized()?;
    let bytes = shape.tensor_data()?;
    if bytes.len() != n * width {
        return Err(Error::ByteCount {
            actual: bytes.len(),
            expected: n as u128 * width as u128,
        });
    }
    let dims: Vec<i64> = if width == 4 {
        bytes
            .chunks_exact(4)
            .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect()
    } else {
        bytes
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect()
    };
    TensorShape::make_shape(&dims)
}

/// Checks that a tensor of shape `input` can be broadcast to `output`, with TensorFlow's
/// order and messages (kernel steps 3, 5 and 6): the rank, then `BCast`'s `Incompatible
/// shapes: [in] vs. [out]`, then `Unable to broadcast tensor of shape [in] to tensor of shape
/// [out]`. A scalar input broadcasts to every shape. (The identity case, which TensorFlow
/// accepts before any check, passes too.)
///
/// [`broadcast_view`](crate::broadcast::broadcast_view) runs this check first, so the lazy view and the materialised
/// broadcast fail alike.
///
/// # Errors
/// [`Error::BroadcastRank`] when `input` has the higher rank, [`broadcast_shapes`]'s errors when
/// the shapes do not broadcast, [`Error::BroadcastToShape`] when they broadcast to a shape other
/// than `output` (`[2]` to `[2,1]`).
///
/// ```
/// use tensorcast_core::{TensorShape};
/// use tensorcast_kernels::broadcast::check_broadcast_to;
/// let s = |d: &[i64]| TensorShape::new(d).unwrap();
/// assert!(check_broadcast_to(&s(&[3, 1]), &s(&[2, 3, 4])).is_ok());
/// assert_eq!(
///     check_broadcast_to(&s(&[3, 0, 5]), &s(&[3, 0, 3])).unwrap_err().to_string(),
///     "Incompatible shapes: [3,0,5] vs. [3,0,3]"
/// );
/// assert_eq!(
///     check_broadcast_to(&s(&[2]), &s(&[2, 1])).unwrap_err().to_string(),
///     "Unable to broadcast tensor of shape [2] to tensor of shape [2,1]"
/// );
/// ```
pub fn check_broadcast_to(input: &TensorShape, output: &TensorShape) -> Result<()> {
    if input == output {
        return Ok(());
    }
    if input.rank() > output.rank() {
        return Err(Error::BroadcastRank {
            input: input.rank(),
            output: output.rank(),
        });
    }
    if input.rank() == 0 {
        return Ok(());
    }
    let result = broadcast_shapes(input, output)?;
    if result != *output {
        return Err(Error::BroadcastToShape {
            input: Box::new(input.clone()),
            output: Box::new(output.clone()),
        });
    }
    Ok(())
}
