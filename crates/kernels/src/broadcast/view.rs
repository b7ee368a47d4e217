//! Lazy broadcasts: [`broadcast_view`] gives a [`BroadcastView`], a tensor read as if
//! broadcast to a larger shape through stride-0 axes, with no allocation and no copy. The
//! element-wise ops ([`crate::elementwise`]) read it in place; [`BroadcastView::array`]
//! gives it as a typed `ndarray` view.

use ndarray::{ArrayViewD, IxDyn, ShapeBuilder};

use super::shape::check_broadcast_to;
use tensorcast_core::layout::Layout;
use tensorcast_core::{DataType, Element, Tensor, TensorShape};
use tensorcast_core::{Error, Result};

/// A tensor read as if broadcast to `shape`: element `[i0, i1, ..]` of the view is the
/// tensor's element with every broadcast axis read at 0 (numpy's `broadcast_to`, lazily).
/// Borrows the tensor; allocates nothing besides its [`Layout`] (a few words per axis).
#[derive(Debug, Clone)]
pub struct BroadcastView<'a> {
    tensor: &'a Tensor,
    shape: TensorShape,
    layout: Layout,
}

impl<'a> BroadcastView<'a> {
    /// The tensor read through the view.
    pub fn tensor(&self) -> &'a Tensor {
        self.tensor
    }

    /// The broadcast shape.
    pub fn shape(&self) -> &TensorShape {
        &self.shape
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.tensor.dtype()
    }

    /// Where each element of the view sits in the tensor's elements (stride 0 on broadcast
    /// axes).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The view as a typed `ndarray` view (stride 0 on broadcast axes), borrowing the tensor.
    ///
    /// # Errors
    /// When `T` is not the tensor's element type, or its memory is not aligned for `T`.
    ///
    /// ```
    /// use tensorcast_core::{Tensor, TensorShape};
    /// use tensorcast_kernels::TensorOps;
    /// let row = Tensor::vector(&[1i32, 2, 3]);
    /// let v = row.broadcast_view(&TensorShape::new(&[2, 3])?)?;
    /// let a = v.array::<i32>()?;
    /// assert_eq!(a[[1, 2]], 3);
    /// assert_eq!(a.strides()[0], 0);
    /// # Ok::<(), tensorcast_core::Error>(())
    /// ```
    pub fn array<T: Element>(&self) -> Result<ArrayViewD<'a, T>> {
        let data: &'a [T] = self.tensor.as_slice::<T>()?;
        // An empty view reads nothing: all-zero strides satisfy ndarray's bounds check even
        // when the tensor is empty too.
        let strides = if self.shape.num_elements() == 0 {
            vec![0; self.layout.dims().len()]
        } else {
            self.layout.strides().to_vec()
        };
        ArrayViewD::from_shape(
            IxDyn(self.layout.dims()).strides(IxDyn(&strides)),
            &data[self.layout.offset().min(data.len())..],
        )
        .map_err(|e| Error::Internal(format!("broadcast view of {}: {e}", self.tensor.shape())))
    }

    /// The view materialised as a new tensor ([`crate::broadcast::broadcast_to`]).
    ///
    /// # Errors
    /// When the output cannot be allocated.
    pub fn to_tensor(&self) -> Result<Tensor> {
        super::kernel::broadcast_to(self.tensor, &self.shape)
    }
}

/// A lazy broadcast: `input` read as if broadcast to `shape`, through stride-0 axes, with no
/// allocation and no copy (a materialised [`broadcast_to`](crate::broadcast::broadcast_to)
/// takes the full memory of the result; this does not). Same rule and messages as
/// `broadcast_to`. The element-wise ops accept it as an input. Also a method,
/// [`TensorOps::broadcast_view`](crate::TensorOps::broadcast_view).
///
/// # Errors
/// TensorFlow's `BroadcastTo` messages when the shapes do not broadcast (`Rank of input
/// ...`, `Incompatible shapes: ...`, `Unable to broadcast ...`).
///
/// ```
/// use tensorcast_core::{Tensor, TensorShape};
/// use tensorcast_kernels::broadcast::broadcast_view;
/// use tensorcast_kernels::TensorOps;
/// let row = Tensor::vector(&[1.0f32, 2.0, 3.0]);
/// let v = broadcast_view(&row, &TensorShape::new(&[2, 3])?)?;
/// assert_eq!(v.layout().strides(), &[0, 1]);
/// let twice = v.add(&Tensor::scalar_of(1.0f32))?;
/// assert_eq!(twice.to_vec::<f32>()?, vec![2.0, 3.0, 4.0, 2.0, 3.0, 4.0]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn broadcast_view<'a>(input: &'a Tensor, shape: &TensorShape) -> Result<BroadcastView<'a>> {
    // TensorFlow's checks, in its order and with its messages.
    check_broadcast_to(input.shape(), shape)?;
    let layout = Layout::of_shape(input.shape())
        .broadcast_to(&shape.dims_usize())
        .ok_or_else(|| {
            Error::Internal(format!(
                "broadcast view of {} to {shape}: layouts disagree",
                input.shape()
            ))
        })?;
    Ok(BroadcastView {
        tensor: input,
        shape: shape.clone(),
        layout,
    })
}
