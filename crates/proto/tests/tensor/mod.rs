//! Tensor <-> TensorProto tests for tensorcast-proto: TensorFlow's `FromProto` rules and
//! `tensor_test.cc` round trips, memory limits, zero-copy decode, and property tests, one module
//! per concern.

mod copies;
mod from_proto;
mod limits;
mod props;
mod samples;
mod sub_byte;
mod zero_copy;
