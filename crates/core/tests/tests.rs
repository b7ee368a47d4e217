//! Integration tests of tensorcast-core (one binary, a module per concern).

mod properties;
mod tensor_test;
