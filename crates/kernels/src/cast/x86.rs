//! The x86 rule for float-to-integer conversions that `Cast` follows: where C++ leaves the
//! result undefined, TensorFlow's conversions give whatever the x86 truncating instructions
//! (`cvttss2si`, `cvttsd2si`, `cvttps2dq`) give, the "integer indefinite" value, the most
//! negative integer of the width. (The denormal rule, DAZ, is core's
//! [`tensorcast_core::x86`].)

use tensorcast_buffer::simd::Cvtt;

/// A float type as x86's truncating conversions see it; the truncation rule itself is the
/// buffer crate's [`Cvtt`], shared with its packed conversion.
pub(crate) trait X86Float: Cvtt<i32> + Cvtt<i64> {
    /// `cvttss2si`/`cvttsd2si` to 32 bits: truncation toward zero, or `i32::MIN` for NaN and
    /// values out of range.
    #[inline(always)]
    fn cvtt32(self) -> i32 {
        Cvtt::<i32>::cvtt(self)
    }
    /// The same to 64 bits (`i64::MIN` when invalid).
    #[inline(always)]
    fn cvtt64(self) -> i64 {
        Cvtt::<i64>::cvtt(self)
    }
    /// `self - 2^31`, in the type's own arithmetic.
    fn minus_2_31(self) -> Self;
    /// `self - 2^63`, in the type's own arithmetic.
    fn minus_2_63(self) -> Self;
}

macro_rules! x86_float {
    ($($t:ty),*) => {$(
        impl X86Float for $t {
            #[inline(always)]
            fn minus_2_31(self) -> Self {
                self - 2147483648.0
            }
            #[inline(always)]
            fn minus_2_63(self) -> Self {
                self - 9223372036854775808.0
            }
        }
    )*};
}

x86_float!(f32, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_gives_integer_indefinite_out_of_range() {
        assert_eq!(2.9f32.cvtt32(), 2);
        assert_eq!((-2.9f64).cvtt32(), -2);
        assert_eq!(f32::NAN.cvtt32(), i32::MIN);
        assert_eq!(3e9f64.cvtt32(), i32::MIN);
        assert_eq!((-2147483648.5f64).cvtt32(), i32::MIN);
        assert_eq!((-2147483647.9f64).cvtt32(), -2147483647);
        assert_eq!(2147483647.9f64.cvtt32(), i32::MAX);
        assert_eq!(2147483648.0f64.cvtt32(), i32::MIN);
        assert_eq!(f64::INFINITY.cvtt64(), i64::MIN);
        assert_eq!(1e18f32.cvtt64(), 999999984306749440);
    }
}
