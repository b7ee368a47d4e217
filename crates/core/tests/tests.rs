//! Integration tests of tensorcast-core (one binary, a module per concern).

mod bitcast_ops;
mod broadcast_ops;
mod cast_ops;
mod elementwise;
mod properties;
mod tensor_test;
