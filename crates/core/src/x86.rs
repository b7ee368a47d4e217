//! The x86 rule for denormals TensorFlow's CPU kernels follow, written once.
//!
//! TensorFlow runs its kernels with the SSE flags DAZ (a denormal input reads as a zero of the
//! same sign) and FTZ set. `SummarizeValue` (here) and the kernels crate's `Cast`, element-wise
//! and unary kernels all read numbers through [`daz32`] and [`daz64`]; the kernels crate keeps
//! the other x86 rule, the truncating float-to-integer conversions, beside `Cast`.
//!
//! ```
//! use tensorcast_core::x86::{daz32, daz64};
//! assert_eq!(daz32(f32::from_bits(1)).to_bits(), 0);
//! assert_eq!(daz64(-f64::from_bits(1)).to_bits(), (-0.0f64).to_bits());
//! assert_eq!(daz32(1.5), 1.5);
//! ```

/// A `float` as SSE reads it with DAZ: a subnormal is a zero of the same sign; zeros,
/// normals, infinities and NaNs (payload included) are unchanged. Branch-free on the bits,
/// so that loops over it vectorise.
#[inline(always)]
pub fn daz32(x: f32) -> f32 {
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
pub fn daz64(x: f64) -> f64 {
    let b = x.to_bits();
    let keep = if b & 0x7ff0_0000_0000_0000 == 0 {
        0x8000_0000_0000_0000
    } else {
        !0
    };
    f64::from_bits(b & keep)
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
}
