//! Convolution, pooling and normalisation, NHWC: `Conv2D`, `DepthwiseConv2dNative`,
//! `MaxPool`, `AvgPool`, `BiasAdd`, `FusedBatchNormV3`.
//!
//! `Conv2D` runs on the `gemm` crate (the linear-algebra engine): taps read in place, im2col,
//! or Winograd's F(2x2, 3x3) for `float` 3x3 windows (see [`conv2d`]); depthwise convolution
//! and the pools are direct loops over output rows split across the rayon pool. TensorFlow's
//! CPU build runs `float` and `bfloat16` on oneDNN and the other types on Eigen, whose
//! argument checks and texts differ in places; each function reproduces the one that applies.

mod batch_norm;
mod bias;
mod conv;
mod pool;
mod window;

pub use batch_norm::{fused_batch_norm_v3, fused_batch_norm_v3_shape};
pub use bias::{bias_add, bias_add_shape};
pub use conv::{
    conv2d, conv2d_shape, conv_with, depthwise_conv2d_native, depthwise_conv2d_native_shape,
    ConvAttrs, ConvOp, Epilogue,
};
pub use pool::{avg_pool, max_pool, pool_shape};
pub use window::Padding;
