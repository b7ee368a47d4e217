//! Wire-format tests for tensorcast-proto: TensorFlow's recorded encodings, packing, zero-copy
//! decode and bounded allocation, one module per concern.

mod conformance;
mod decode;
mod util;
