//! Broadcasting rules shared by the ops (TensorFlow's `BCast`), and lazy broadcast views.

use ndarray::{ArrayViewD, IxDyn};

use crate::error::{Error, Result};
use crate::{Element, Tensor, TensorShape};

/// The shape two shapes broadcast to, as TensorFlow's `BCast` (and numpy) define it: align on
/// the right, pad the shorter with leading 1s, and at each position all sizes other than 1 must
/// agree (0 is an ordinary size: `0` with `1` gives 0, `0` with `5` is an error). The error is
/// TensorFlow's `Incompatible shapes: [a] vs. [b]`.
///
/// ```
/// use tensorcast_core::{ops::broadcast_shapes, TensorShape};
/// let a = TensorShape::new(&[2, 1, 3]).unwrap();
/// let b = TensorShape::new(&[5, 1]).unwrap();
/// assert_eq!(broadcast_shapes(&a, &b).unwrap().to_string(), "[2,5,3]");
/// let c = TensorShape::new(&[2]).unwrap();
/// assert_eq!(broadcast_shapes(&a, &c).unwrap_err().to_string(), "Incompatible shapes: [2,1,3] vs. [2]");
/// ```
pub fn broadcast_shapes(a: &TensorShape, b: &TensorShape) -> Result<TensorShape> {
    let (da, db) = (a.dims(), b.dims());
    let rank = da.len().max(db.len());
    let mut out = vec![0i64; rank];
    for (i, o) in out.iter_mut().enumerate() {
        let x = if i + da.len() >= rank {
            da[i + da.len() - rank]
        } else {
            1
        };
        let y = if i + db.len() >= rank {
            db[i + db.len() - rank]
        } else {
            1
        };
        *o = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return Err(Error::invalid(format!("Incompatible shapes: {a} vs. {b}"))),
        };
    }
    TensorShape::new(&out)
}

impl Tensor {
    /// A lazy broadcast: the elements read as if broadcast to `shape`, through stride-0 axes,
    /// with no allocation and no copy (the seed notes that a materialised `broadcast_to` takes
    /// the full memory of the result; this does not). Same rule as
    /// [`crate::ops::broadcast::broadcast_to`]; for callers who only read.
    ///
    /// ```
    /// use tensorcast_core::{Tensor, TensorShape};
    /// let row = Tensor::vector(&[1i32, 2, 3]);
    /// let v = row.broadcast_view::<i32>(&TensorShape::new(&[2, 3]).unwrap()).unwrap();
    /// assert_eq!(v.shape(), &[2, 3]);
    /// assert_eq!(v[[1, 2]], 3);
    /// assert_eq!(v.strides()[0], 0);
    /// ```
    pub fn broadcast_view<T: Element>(&self, shape: &TensorShape) -> Result<ArrayViewD<'_, T>> {
        // TensorFlow's checks, in its order and with its messages (`Rank of input ...`,
        // `Incompatible shapes: ...`, `Unable to broadcast ...`).
        crate::ops::broadcast::check_broadcast_to(self.shape(), shape)?;
        let data = self.as_slice::<T>()?;
        let out = shape.dims_usize();
        // Row-major strides of the input, aligned on the right with the output; an input axis
        // of size 1 (or a missing leading axis) is read with stride 0. An empty output reads
        // nothing, so all of its strides are 0 (which also satisfies ndarray's bounds check
        // when the input is empty too).
        let mut strides = vec![0usize; out.len()];
        if shape.num_elements() > 0 {
            let inp = self.shape().dims_usize();
            let lead = out.len() - inp.len();
            let mut step = 1usize;
            for i in (0..inp.len()).rev() {
                if inp[i] == out[lead + i] && inp[i] != 1 {
                    strides[lead + i] = step;
                }
                step *= inp[i];
            }
        }
        use ndarray::ShapeBuilder;
        ArrayViewD::from_shape(IxDyn(&out).strides(IxDyn(&strides)), data)
            .map_err(|e| Error::Internal(format!("broadcast view of {}: {e}", self.shape())))
    }
}
