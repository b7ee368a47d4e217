//! The kernels crate's integration tests: one module per op family.

mod array;
mod linalg;
mod math;
mod nn;
mod select;
