//! The eleven element-wise binary ops: comparisons (`z: bool`) and arithmetic (`z: T`).

use tensorcast_proto::AttrValue;

use super::single_output;
use crate::error::Result;
use crate::{Input, Operation, Scope};

/// Optional attrs of [`Equal`] and [`NotEqual`].
#[derive(Debug, Clone, Copy)]
pub struct EqualAttrs {
    /// `incompatible_shape_error` (default true): with false, incompatible shapes give a scalar
    /// `false` (Equal) / `true` (NotEqual) instead of an error.
    pub incompatible_shape_error: bool,
}

impl Default for EqualAttrs {
    fn default() -> Self {
        EqualAttrs {
            incompatible_shape_error: true,
        }
    }
}

impl EqualAttrs {
    /// Sets `incompatible_shape_error` (C++ `Equal::IncompatibleShapeError(false)`).
    pub fn incompatible_shape_error(mut self, value: bool) -> Self {
        self.incompatible_shape_error = value;
        self
    }
}

macro_rules! binary_op {
    ($ty:ident, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone)]
        pub struct $ty {
            /// The node.
            pub operation: Operation,
            /// The result.
            pub z: crate::Output,
        }
        single_output!($ty, z);

        impl $ty {
            #[doc = concat!("`", stringify!($ty), "(x, y)`, broadcasting.")]
            ///
            /// # Errors
            /// The scope's stored error; mismatched or disallowed dtypes; incompatible shapes.
            pub fn new(scope: &Scope, x: impl Into<Input>, y: impl Into<Input>) -> Result<$ty> {
                let operation =
                    scope.build_op(stringify!($ty), vec![x.into(), y.into()], Vec::new())?;
                Ok($ty {
                    z: operation.output(0),
                    operation,
                })
            }
        }
    };
}

macro_rules! equality_op {
    ($ty:ident, $doc:literal) => {
        binary_op!($ty, $doc);
        impl $ty {
            /// With optional attrs.
            ///
            /// # Errors
            /// As `new`.
            pub fn with_attrs(
                scope: &Scope,
                x: impl Into<Input>,
                y: impl Into<Input>,
                attrs: EqualAttrs,
            ) -> Result<$ty> {
                let operation = scope.build_op(
                    stringify!($ty),
                    vec![x.into(), y.into()],
                    vec![(
                        "incompatible_shape_error",
                        AttrValue::of_bool(attrs.incompatible_shape_error),
                    )],
                )?;
                Ok($ty {
                    z: operation.output(0),
                    operation,
                })
            }
        }
    };
}

equality_op!(
    Equal,
    "`Equal`: `x == y` element-wise, broadcasting (any dtype)."
);
equality_op!(
    NotEqual,
    "`NotEqual`: `x != y` element-wise, broadcasting (any dtype)."
);
binary_op!(Less, "`Less`: `x < y` element-wise, broadcasting.");
binary_op!(
    LessEqual,
    "`LessEqual`: `x <= y` element-wise, broadcasting."
);
binary_op!(Greater, "`Greater`: `x > y` element-wise, broadcasting.");
binary_op!(
    GreaterEqual,
    "`GreaterEqual`: `x >= y` element-wise, broadcasting."
);
binary_op!(AddV2, "`AddV2`: `x + y` element-wise, broadcasting.");
binary_op!(Sub, "`Sub`: `x - y` element-wise, broadcasting.");
binary_op!(Mul, "`Mul`: `x * y` element-wise, broadcasting.");
binary_op!(
    Maximum,
    "`Maximum`: the larger of `x` and `y` element-wise (NaN propagates)."
);
binary_op!(
    Minimum,
    "`Minimum`: the smaller of `x` and `y` element-wise (NaN propagates)."
);
