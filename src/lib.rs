//! tensorcast: TensorFlow's tensor core in pure Rust.
//!
//! This umbrella crate re-exports [`tensorcast_core`] (tensors, dtypes, shapes, views, debug
//! text), the ops of [`tensorcast_kernels`] (as [`ops`] and [`kernels`], and as methods on
//! `Tensor` through [`prelude`]), the wire format as [`proto`], tensor files as [`io`] and
//! graphs as [`graph`]. Depending on it compiles no command-line crates: the `tensorcast` tool
//! is the `tensorcast-cli` package.
//!
//! The ops' methods (`t.cast(..)`, `t.broadcast_to(..)`, `x.add(&y)`) come from the kernels
//! crate's [`TensorOps`](prelude::TensorOps) trait: the tensor is core's and the ops are the
//! kernels crate's, which depends on core, so the methods are an extension trait, and
//! `use tensorcast::prelude::*` brings them in.
//!
//! ```
//! use tensorcast::prelude::*;
//! use tensorcast::{DataType, Tensor, TensorShape};
//!
//! let x = Tensor::vector(&[0.0f32, 1.0, 1.0]);
//! let y = x.bitcast(DataType::UINT8)?;
//! assert_eq!(y.shape().dim_sizes(), &[3, 4]);
//! let grid = x.broadcast_to(&TensorShape::new(&[2, 3])?)?;
//! assert_eq!(tensorcast::ops::cast::cast(&grid, DataType::INT32)?.to_vec::<i32>()?, vec![0, 1, 1, 0, 1, 1]);
//! # Ok::<(), tensorcast::Error>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// Tensors and parsed Examples to and from Arrow, Arrow IPC and Parquet (the optional `arrow`
/// feature).
#[cfg(feature = "arrow")]
pub use tensorcast_arrow as arrow;
pub use tensorcast_buffer as buffer;
pub use tensorcast_core::*;
pub use tensorcast_graph as graph;
pub use tensorcast_io as io;
pub use tensorcast_kernels as kernels;
pub use tensorcast_proto as proto;

/// The eager ops, one module per family (the [`tensorcast_kernels`] crate), plus the module
/// paths they had when they lived in the core crate (`ops::reinterpret`, `ops::cast_saturating`,
/// `ops::equal`, `ops::broadcast_shapes`), kept so that existing code keeps compiling.
pub mod ops {
    pub use tensorcast_kernels::bitcast::reinterpret;
    pub use tensorcast_kernels::broadcast::broadcast_shapes;
    pub use tensorcast_kernels::cast::saturating as cast_saturating;
    pub use tensorcast_kernels::elementwise::equal;
    pub use tensorcast_kernels::*;
}

/// What most users import: the ops as methods on `Tensor` ([`TensorOps`](prelude::TensorOps)).
pub mod prelude {
    pub use tensorcast_kernels::prelude::*;
}
