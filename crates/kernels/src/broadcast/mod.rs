//! TensorFlow's `BroadcastTo` and the broadcasting rule the element-wise ops share.
//!
//! - [`shape`]: `BCast`'s rule ([`broadcast_shapes`]) and `BroadcastTo`'s checks;
//! - [`view`]: the lazy broadcast ([`TensorOps::broadcast_view`](crate::TensorOps::broadcast_view), a [`BroadcastView`]);
//! - [`kernel`]: the materialised broadcast ([`broadcast_to`] and friends).
//!
//! The three only depend downwards (`kernel` and `view` on `shape`; `kernel` on `view` for
//! object dtypes), and all describe strided reads with [`tensorcast_core::layout::Layout`].

pub mod kernel;
pub mod shape;
pub mod view;

pub use kernel::{broadcast_to, broadcast_to_in, broadcast_to_op, broadcast_to_op_in};
pub use shape::{broadcast_shapes, check_broadcast_to, shape_from_tensor};
pub use view::{broadcast_view, BroadcastView};
