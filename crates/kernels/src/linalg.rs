//! Linear algebra: `MatMul`, `BatchMatMulV2`, `Einsum`.
