//! The kernels crate's integration tests: one module per op family.

mod array;
mod hostile;
mod linalg;
mod math;
mod nn;
mod select;
