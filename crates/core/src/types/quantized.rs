//! TensorFlow's quantized integer types: plain integers with their own dtype.

use std::fmt;

macro_rules! quantized {
    ($(#[$doc:meta] $name:ident($inner:ty);)*) => {$(
        #[$doc]
        ///
        /// A `#[repr(transparent)]` wrapper: the same bytes as the integer, a different dtype.
        #[repr(transparent)]
        #[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name(pub $inner);

        impl $name {
            /// The integer value.
            pub const fn value(self) -> $inner {
                self.0
            }
        }

        impl From<$inner> for $name {
            fn from(v: $inner) -> Self {
                Self(v)
            }
        }

        impl From<$name> for $inner {
            fn from(v: $name) -> Self {
                v.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }
    )*};
}

quantized! {
    /// `qint8`: a quantized signed 8-bit integer.
    QInt8(i8);
    /// `quint8`: a quantized unsigned 8-bit integer.
    QUInt8(u8);
    /// `qint16`: a quantized signed 16-bit integer.
    QInt16(i16);
    /// `quint16`: a quantized unsigned 16-bit integer.
    QUInt16(u16);
    /// `qint32`: a quantized signed 32-bit integer.
    QInt32(i32);
}
