//! The kernels crate's integration tests: one module per op family.

mod select;
