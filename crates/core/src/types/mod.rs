//! Element types for every TensorFlow dtype that has no standard Rust type.
//!
//! Numbers use `f32`, `f64`, the integer types, `bool`, [`half::f16`], [`half::bf16`] and
//! [`num_complex::Complex`]. The rest are defined here as `#[repr(transparent)]` newtypes, so a
//! buffer of them can be viewed in place: the quantized integers, the float8 and float4 kinds,
//! the sub-byte integers (one element per byte, as TensorFlow stores them), and the object
//! types [`TString`], [`ResourceHandle`] and [`Variant`].

mod minifloat;
mod objects;
mod quantized;

pub use minifloat::*;
pub use objects::{ResourceHandle, TString, Variant, VariantTensorData};
pub use quantized::{QInt16, QInt32, QInt8, QUInt16, QUInt8};
