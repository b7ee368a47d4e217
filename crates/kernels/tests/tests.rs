//! The kernels crate's integration tests: one module per op family.

mod array;
mod bitcast_ops;
mod broadcast_ops;
mod cast_ops;
mod elementwise;
mod hostile;
mod linalg;
mod math;
mod nn;
mod select;
