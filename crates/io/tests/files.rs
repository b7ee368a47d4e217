//! Integration tests of tensorcast-io's public API: one test binary, one module per concern
//! (modules live in `tests/files/`).

#[path = "files/atomic.rs"]
mod atomic;
#[path = "files/common.rs"]
mod common;
#[path = "files/corrupt.rs"]
mod corrupt;
#[path = "files/detect.rs"]
mod detect;
#[path = "files/numpy_interop.rs"]
mod numpy_interop;
#[path = "files/roundtrip.rs"]
mod roundtrip;
#[path = "files/safetensors_interop.rs"]
mod safetensors_interop;
#[path = "files/samples.rs"]
mod samples;
#[path = "files/targets.rs"]
mod targets;
#[path = "files/zero_copy.rs"]
mod zero_copy;
