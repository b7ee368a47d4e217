//! Tensor files (in progress).
#![forbid(unsafe_code)]
