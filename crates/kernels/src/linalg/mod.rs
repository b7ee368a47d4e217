//! Linear algebra: `MatMul`, `BatchMatMulV2`, `Einsum`.
//!
//! Every product ends in one batched engine on the `gemm` crate (measured against
//! `matrixmultiply` and chosen for speed: 20.1 ms against 21.4 ms for f32 1024^3 on one core
//! of the development machine), through `tensorcast_buffer::gemm`, which keeps the crate's
//! raw-pointer API behind checked bounds. `half` and `bfloat16` multiply in `float`, integers
//! wrap, as TensorFlow's CPU kernels do. `Einsum` reduces to strided copies and that engine.

mod einsum;
pub(crate) mod engine;
mod matmul;
pub(crate) mod util;

pub use einsum::{einsum, einsum_shape};
pub use matmul::{batch_mat_mul_v2, batch_mat_mul_v2_shape, mat_mul, mat_mul_shape};
