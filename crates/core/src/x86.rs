//! The x86 numeric rules TensorFlow's CPU kernels follow, written once.
//!
//! TensorFlow runs its kernels with the SSE flags DAZ (a denormal input reads as a zero of the
//! same sign) and FTZ set, and its float-to-integer conversions give whatever the x86
//! truncating instructions (`cvttss2si`, `cvttsd2si`, `cvttps2dq`) give where C++ leaves the
//! result undefined: the "integer indefinite" value, the most negative integer of the width.
//! `Cast`, the element-wise kernels and `SummarizeValue` all read numbers through these.

/// A `float` as SSE reads it with DAZ: a subnormal is a zero of the same sign; zeros,
/// normals, infinities and NaNs (payload included) are unchanged. Branch-free on the bits,
/// so that loops over it vectorise.
#[inline(always)]
pub(crate) fn daz32(x: f32) -> f32 {
    let b = x.to_bits();
    let keep = if b & 0x7f80_0000 == 0 {
        0x8000_0000
    } else {
        !0
    };
    f32::from_bits(b & keep)
}

/// [`daz32`] for `double`.
#[inline(always)]
pub(crate) fn daz64(x: f64) -> f64 {
    let b = x.to_bits();
    let keep = if b & 0x7ff0_0000_0000_0000 == 0 {
        0x8000_0000_0000_0000
    } else {
        !0
    };
    f64::from_bits(b & keep)
}

/// A float type as x86's truncating conversions see it.
pub(crate) trait X86Float: Copy {
    /// `cvttss2si`/`cvttsd2si` to 32 bits: truncation toward zero, or `i32::MIN` for NaN and
    /// values out of range.
    fn cvtt32(self) -> i32;
    /// The same to 64 bits (`i64::MIN` when invalid).
    fn cvtt64(self) -> i64;
    /// `self - 2^31`, in the type's own arithmetic.
    fn minus_2_31(self) -> Self;
    /// `self - 2^63`, in the type's own arithmetic.
    fn minus_2_63(self) -> Self;
}

impl X86Float for f32 {
    #[inline(always)]
    fn cvtt32(self) -> i32 {
        // The same rule as the packed conversion of the buffer crate uses.
        tensorcast_buffer::simd::cvtt_scalar(self)
    }
    #[inline(always)]
    fn cvtt64(self) -> i64 {
        if (-9223372036854775808.0..9223372036854775808.0).contains(&self) {
            self as i64
        } else {
            i64::MIN
        }
    }
    #[inline(always)]
    fn minus_2_31(self) -> Self {
        self - 2147483648.0
    }
    #[inline(always)]
    fn minus_2_63(self) -> Self {
        self - 9223372036854775808.0
    }
}

impl X86Float for f64 {
    #[inline(always)]
    fn cvtt32(self) -> i32 {
        // Truncation is in range exactly when -2^31 - 1 < x < 2^31.
        if self > -2147483649.0 && self < 2147483648.0 {
            self as i32
        } else {
            i32::MIN
        }
    }
    #[inline(always)]
    fn cvtt64(self) -> i64 {
        if (-9223372036854775808.0..9223372036854775808.0).contains(&self) {
            self as i64
        } else {
            i64::MIN
        }
    }
    #[inline(always)]
    fn minus_2_31(self) -> Self {
        self - 2147483648.0
    }
    #[inline(always)]
    fn minus_2_63(self) -> Self {
        self - 9223372036854775808.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The three forms DAZ had in this crate (bit mask, `abs() < MIN_POSITIVE`,
    /// `is_subnormal()`) are one function; this pins that down.
    #[test]
    fn daz_equals_the_subnormal_to_signed_zero_rule() {
        let mut bits: Vec<u32> = vec![0, 1, 0x007f_ffff, 0x0080_0000, 0x7f80_0000, 0x7fc0_0001];
        let mut x = 0x9e37_79b9u32;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            bits.push(x);
            bits.push(x & 0x807f_ffff);
        }
        for b in bits {
            let v = f32::from_bits(b);
            let rule = if v.is_subnormal() {
                0f32.copysign(v)
            } else {
                v
            };
            assert_eq!(daz32(v).to_bits(), rule.to_bits(), "{b:#x}");
            let d = f64::from_bits(u64::from(b) << 32 | u64::from(b));
            let rule = if d.is_subnormal() {
                0f64.copysign(d)
            } else {
                d
            };
            assert_eq!(daz64(d).to_bits(), rule.to_bits(), "{b:#x}");
        }
    }

    #[test]
    fn truncation_gives_integer_indefinite_out_of_range() {
        assert_eq!(2.9f32.cvtt32(), 2);
        assert_eq!((-2.9f64).cvtt32(), -2);
        assert_eq!(f32::NAN.cvtt32(), i32::MIN);
        assert_eq!(3e9f64.cvtt32(), i32::MIN);
        assert_eq!((-2147483648.5f64).cvtt32(), i32::MIN);
        assert_eq!(f64::INFINITY.cvtt64(), i64::MIN);
        assert_eq!(1e18f32.cvtt64(), 999999984306749440);
    }
}
