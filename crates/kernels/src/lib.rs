//! TensorFlow's inference ops on tensorcast tensors, one module per family, each op an eager
//! function with TensorFlow's type lists, results and error texts (errors are
//! [`tensorcast_core::Error`]s; op-specific texts use [`tensorcast_core::Error::Op`]).
//!
//! The graph layer's registry (`tensorcast-graph`) names each op once and calls these functions
//! as its session kernels; the functions are also the eager API for Rust users.
//!
//! | module | ops |
//! |---|---|
//! | [`linalg`] | `MatMul`, `BatchMatMulV2`, `Einsum` |
//! | [`nn`] | `Conv2D`, `DepthwiseConv2dNative`, `MaxPool`, `AvgPool`, `BiasAdd`, `FusedBatchNormV3` |
//! | [`unary`] | activations and unary math (`Relu` ... `Reciprocal`), `Softmax`, `LogSoftmax` |
//! | [`reduce`] | `Sum`, `Mean`, `Max`, `Min`, `Prod`, `All`, `Any`, `ArgMax`, `ArgMin` |
//! | [`array`](mod@array) | data movement: `Transpose`, `ConcatV2`, `Pack`, `StridedSlice`, `GatherV2`, ... |

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub, missing_debug_implementations)]

pub mod array;
pub mod linalg;
pub mod nn;
pub mod reduce;
pub mod unary;
