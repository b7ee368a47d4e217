//! The op classes: one struct per op, built from a scope, its inputs and attrs, exposing its
//! `operation`, its output field(s) (named after the op's output arg, as the C++ classes are)
//! and `node()`; each converts into [`Output`](crate::Output) and [`Input`](crate::Input) so
//! that ops chain.

mod array;
mod constant;
mod math;

pub use array::{
    Bitcast, BroadcastTo, Cast, CastAttrs, Identity, NoOp, Placeholder, PlaceholderAttrs, Reshape,
    Shape, ShapeAttrs,
};
pub use constant::Const;
pub use math::{
    AddV2, Equal, EqualAttrs, Greater, GreaterEqual, Less, LessEqual, Maximum, Minimum, Mul,
    NotEqual, Sub,
};

/// The shared parts of a single-output op class: `node()`, `as_output()`, and the conversions.
macro_rules! single_output {
    ($ty:ident, $field:ident) => {
        impl $ty {
            /// The node this op built.
            pub fn node(&self) -> std::sync::Arc<crate::Node> {
                self.operation.node()
            }
            /// The op's single output (Java's `asOutput()`).
            pub fn as_output(&self) -> crate::Output {
                self.$field.clone()
            }
        }
        impl From<$ty> for crate::Output {
            fn from(op: $ty) -> Self {
                op.$field
            }
        }
        impl From<&$ty> for crate::Output {
            fn from(op: &$ty) -> Self {
                op.$field.clone()
            }
        }
        impl From<$ty> for crate::Input {
            fn from(op: $ty) -> Self {
                crate::Input::from(op.$field)
            }
        }
        impl From<&$ty> for crate::Input {
            fn from(op: &$ty) -> Self {
                crate::Input::from(op.$field.clone())
            }
        }
    };
}
pub(crate) use single_output;
