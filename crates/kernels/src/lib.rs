//! TensorFlow's inference ops on tensorcast tensors, one module per family, each op an eager
//! function with TensorFlow's type lists, results and error texts (errors are
//! [`tensorcast_core::Error`]s; op-specific texts use [`tensorcast_core::Error::Op`]).
//!
//! The graph layer's registry (`tensorcast-graph`) names each op once and calls these functions
//! as its session kernels; the functions are also the eager API for Rust users.
//!
//! | module | ops |
//! |---|---|
//! | [`bitcast`](mod@bitcast) | `Bitcast`; Ascend TIK's `reinterpret_cast_to` ([`bitcast::reinterpret`]) |
//! | [`broadcast`](mod@broadcast) | `BroadcastTo`, materialised and lazy ([`broadcast::BroadcastView`]); `BCast`'s shape rule |
//! | [`cast`](mod@cast) | `Cast`; `saturate_cast` and a clamping cast ([`cast::saturating`]) |
//! | [`elementwise`] | the broadcasting binary ops: `Equal` ... `Minimum`, `RealDiv`, `Pow`, `FloorMod`, ... |
//! | [`linalg`] | `MatMul`, `BatchMatMulV2`, `Einsum` |
//! | [`nn`] | `Conv2D`, `DepthwiseConv2dNative`, `MaxPool`, `AvgPool`, `BiasAdd`, `FusedBatchNormV3` |
//! | [`unary`] | activations and unary math (`Relu` ... `Reciprocal`), `Softmax`, `LogSoftmax` |
//! | [`reduce`] | `Sum`, `Mean`, `Max`, `Min`, `Prod`, `All`, `Any`, `ArgMax`, `ArgMin` |
//! | [`array`](mod@array) | data movement: `Transpose`, `ConcatV2`, `Pack`, `StridedSlice`, `GatherV2`, ... |
//!
//! **What is here and what is in core.** `tensorcast-core` holds the tensor and what
//! TensorFlow's C++ `Tensor` class holds: dtype, shape, buffer, typed views, `BitcastFrom`
//! ([`Tensor::bitcast_from`](tensorcast_core::Tensor::bitcast_from), the one place a buffer is
//! re-typed), slicing, reshaping and the debug text. Every op is here, one module per family, so
//! a reader finds an op in one place. This crate depends on core, never the reverse, so the
//! ops' method forms (`t.cast(..)`, `t.broadcast_to(..)`, `x.add(&y)`) are an extension trait,
//! [`TensorOps`], rather than inherent methods; `use tensorcast_kernels::prelude::*` (or the
//! facade's `tensorcast::prelude::*`) brings it in.
//!
//! ```
//! use tensorcast_core::{DataType, Tensor};
//! use tensorcast_kernels::prelude::*;
//!
//! let x = Tensor::vector(&[1.5f32, -2.5]);
//! assert_eq!(x.cast(DataType::INT32)?.to_vec::<i32>()?, vec![1, -2]);
//! let abs = tensorcast_kernels::math::unary(tensorcast_kernels::math::UnaryOp::Abs, &x)?;
//! assert_eq!(abs.to_vec::<f32>()?, vec![1.5, 2.5]);
//! # Ok::<(), tensorcast_core::Error>(())
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub, missing_debug_implementations)]

pub mod array;
pub mod bitcast;
pub mod broadcast;
pub mod cast;
mod chunks;
pub mod elementwise;
mod ext;
pub mod linalg;
pub mod math;
pub mod nn;
pub mod reduce;
mod type_lists;
pub mod unary;

pub use ext::TensorOps;

/// What most users of the ops import: the [`TensorOps`] method trait.
pub mod prelude {
    pub use crate::TensorOps;
}
