//! The eager operations on tensors: TensorFlow's `Bitcast`, Ascend TIK's
//! `reinterpret_cast_to`, `BroadcastTo` (materialised and lazy), `Cast` and `Equal`.
//!
//! Each is a free function here and a method on [`crate::Tensor`].

pub mod bitcast;
pub mod broadcast;
pub mod cast;
pub mod cast_saturating;
pub mod elementwise;
pub mod equal;
pub mod reinterpret;
mod saturate;

pub use broadcast::broadcast_shapes;
