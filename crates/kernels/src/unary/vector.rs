//! `Exp`, `Tanh` and `Sigmoid` of `float` as loops the compiler vectorises: each element is
//! computed in `double` with branch-free arithmetic (selects, no calls, no table lookups) and
//! rounded once to `float`, so a loop over a slice compiles to SIMD code at every level of
//! [`tensorcast_buffer::simd`].
//!
//! `exp` reduces `t = k ln 2 + r` with `|r| <= ln 2 / 2` (`k` rounded to nearest with the
//! `1.5 * 2^52` addition, `ln 2` in two parts so that `k ln 2` is exact), takes `e^r` from its
//! Taylor polynomial to degree 11 (truncation error below `7e-15` relative on that interval)
//! and scales by `2^k` built from its bits. In `double` that is accurate to about `1e-14`
//! relative, so the `float` result is the correctly rounded one except when the exact value
//! lies within that distance of a rounding boundary: the same results as the C library's
//! `expf`, `tanhf` and a `double` sigmoid nearly everywhere. `tanh` is `1 - 2 / (e^{2|x|} + 1)`
//! with the sign restored, and its odd Taylor polynomial to degree 11 below `|x| = 1/8`
//! (where the subtraction would cancel); `sigmoid` is `1 / (1 + e^{-x})`.

/// `1.5 * 2^52`: adding and subtracting it rounds a `double` below `2^51` in magnitude to an
/// integer (ties to even), and the sum's low mantissa bits hold that integer.
const ROUND: f64 = 6_755_399_441_055_744.0;
/// `ln 2` in two parts: the high part has 21 trailing zero bits, so `k * LN2_HI` is exact.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);

/// `1 / n!` for `n` from 11 down to 0: the Taylor polynomial of `e^r` to degree 11, highest
/// coefficient first (Horner's order).
const EXP_TAYLOR: [f64; 12] = [
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
    1.0,
    1.0,
];

/// `e^t` for `t` in `[-700, 700]` (NaN gives NaN), to about `1e-14` relative.
#[inline(always)]
pub(crate) fn exp_f64(t: f64) -> f64 {
    let shifted = t * std::f64::consts::LOG2_E + ROUND;
    let k = shifted - ROUND;
    let r = t - k * LN2_HI - k * LN2_LO;
    // e^r = sum r^n / n!, n <= 11, by Horner's rule.
    let [highest, lower @ ..] = EXP_TAYLOR;
    let mut p = highest;
    for c in lower {
        p = p * r + c;
    }
    // 2^k from its bits: `k` is the low bits of `shifted`'s mantissa.
    let ki = (shifted.to_bits() as i64).wrapping_sub(ROUND.to_bits() as i64);
    let scale = f64::from_bits((ki.wrapping_add(1023) << 52) as u64);
    p * scale
}

/// `float` `exp` (before the caller's denormal flush): overflow gives infinity, underflow 0.
#[inline(always)]
pub(crate) fn exp32(x: f32) -> f32 {
    // Beyond these, the `float` result is infinity or below the smallest subnormal.
    exp_f64(f64::from(x).clamp(-110.0, 90.0)) as f32
}

/// `1.5 * 2^23`: [`ROUND`] for `float`.
const ROUND32: f32 = 12_582_912.0;
/// `ln 2` in two `float` parts: the high part has 12 trailing zero bits, so `k * LN2_HI32` is
/// exact for the `|k| <= 127` used here.
const LN2_HI32: f32 = f32::from_bits(0x3f31_7000);
const LN2_LO32: f32 = 3.194_618_5e-5;

/// [`EXP_TAYLOR`] from degree 7 down, in `float` (each the correctly rounded `1 / n!`).
const EXP_TAYLOR32: [f32; 8] = {
    let mut c = [0.0; 8];
    let mut i = 0;
    while i < c.len() {
        c[i] = EXP_TAYLOR[EXP_TAYLOR.len() - c.len() + i] as f32;
        i += 1;
    }
    c
};

/// `e^x` computed in `float` (16 lanes to an AVX-512 vector, against [`exp32`]'s 8 in
/// `double`), for the softmax kernel: within 2 ULPs of the correctly rounded result from
/// -87.33 up (checked against `double` on a sweep of the range; infinity where that
/// overflows), 0 below it (where the result would be subnormal, which TensorFlow's denormal
/// flush makes 0);
/// NaN gives NaN. The same reduction as [`exp_f64`], with Taylor's polynomial to degree 7
/// (truncation below `6e-9` relative, a tenth of a `float` ULP), evaluated with fused
/// multiply-adds (`mul_add`: one instruction where the caller is compiled for FMA, as
/// `simd::vectorized` does; the C library's correctly rounded `fmaf` elsewhere, so that every
/// level gives the same bits).
#[inline(always)]
pub(crate) fn exp32_fast(x: f32) -> f32 {
    // Above 88.73 the result overflows to infinity (as it does from the clamped value).
    let t = x.clamp(-88.0, 88.75);
    let shifted = t.mul_add(std::f32::consts::LOG2_E, ROUND32);
    let k = shifted - ROUND32;
    let r = (-k).mul_add(LN2_LO32, (-k).mul_add(LN2_HI32, t));
    let [highest, lower @ ..] = EXP_TAYLOR32;
    let mut p = highest;
    for c in lower {
        p = p.mul_add(r, c);
    }
    // `2^k` (`-127 <= k <= 128` here) as two normal powers of two built from their bits, so
    // that the ends of the range need no special case: both products are exact.
    let ki = (shifted.to_bits() as i32).wrapping_sub(ROUND32.to_bits() as i32);
    let half = ki >> 1;
    let pow2 = |e: i32| f32::from_bits(((e + 127) as u32) << 23);
    let e = p * pow2(half) * pow2(ki - half);
    if x < -87.33 {
        0.0
    } else {
        e
    }
}

/// `float` `erfc`, branch-free: for `z = |x|`, `t = 1 / (1 + z / 2)` and
/// `erfc(z) = t exp(-z^2 + P(t))` with the nine-term Chebyshev-fitted `P` of Numerical Recipes'
/// `erfcc` (relative error below `1.2e-7` for every `z >= 0`), computed in `double`;
/// `erfc(-z) = 2 - erfc(z)`. Within 3 ULPs of the correctly rounded result (checked against
/// `double` on a sweep), so that a loop over it vectorises where the C library's `erfcf` is a
/// call per element.
#[inline(always)]
pub(crate) fn erfc32(x: f32) -> f32 {
    let z = f64::from(x).abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let mut p = 0.170_872_77;
    for c in [
        -0.822_152_23,
        1.488_515_87,
        -1.135_203_98,
        0.278_868_07,
        -0.186_288_06,
        0.096_784_18,
        0.374_091_96,
        1.000_023_68,
        -1.265_512_23,
    ] {
        p = p * t + c;
    }
    // Past z = 27 the exponent is below -700 and the `float` result long since 0.
    let r = t * exp_f64((p - z * z).max(-700.0));
    let r = if x < 0.0 { 2.0 - r } else { r };
    r as f32
}

/// `float` `tanh`.
#[inline(always)]
pub(crate) fn tanh32(x: f32) -> f32 {
    let a = f64::from(x).abs();
    // tanh(20) rounds to 1 in `float`; the comparison keeps NaN (`min` would drop it).
    let t = if a > 20.0 { 40.0 } else { 2.0 * a };
    let big = 1.0 - 2.0 / (exp_f64(t) + 1.0);
    // The odd Taylor series a - a^3/3 + 2a^5/15 - 17a^7/315 + 62a^9/2835 - 1382a^11/155925.
    let a2 = a * a;
    let mut p = -1382.0 / 155_925.0;
    for c in [62.0 / 2835.0, -17.0 / 315.0, 2.0 / 15.0, -1.0 / 3.0, 1.0] {
        p = p * a2 + c;
    }
    let small = a * p;
    let r = if a < 0.125 { small } else { big };
    r.copysign(f64::from(x)) as f32
}

/// `float` `sigmoid`, `1 / (1 + e^{-x})`.
#[inline(always)]
pub(crate) fn sigmoid32(x: f32) -> f32 {
    (1.0 / (1.0 + exp_f64((-f64::from(x)).clamp(-110.0, 110.0)))) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in ULPs between two `float`s of the same sign (or zeros).
    fn ulps(a: f32, b: f32) -> u32 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
    }

    /// Asserts that `f`'s `got` for `x` is NaN where the double result `want` (rounded to
    /// `float`) is, and within `max_ulps` of it elsewhere.
    fn assert_near(f: &str, x: f32, got: f32, want: f32, max_ulps: u32) {
        if want.is_nan() {
            assert!(got.is_nan(), "{f}({x:e}) = {got:e}, want NaN");
        } else {
            assert!(
                ulps(got, want) <= max_ulps,
                "{f}({x:e}) = {got:e}, want {want:e}"
            );
        }
    }

    /// Inputs across the whole range: a sweep of bit patterns of both signs and the edges.
    fn inputs() -> Vec<f32> {
        let mut v: Vec<f32> = (0..400_000u32)
            .map(|i| f32::from_bits(i.wrapping_mul(10_737)))
            .collect();
        v.extend([
            0.0,
            -0.0,
            1e-30,
            -1e-30,
            0.125,
            -0.125,
            0.124_999_99,
            20.0,
            -20.0,
            88.72,
            88.73,
            -87.33,
            -103.9,
            -104.0,
            1e30,
            -1e30,
        ]);
        v
    }

    #[test]
    fn exp_matches_the_correctly_rounded_double_result() {
        for x in inputs() {
            assert_near("exp", x, exp32(x), f64::from(x).exp() as f32, 1);
        }
        assert_eq!(exp32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp32(0.0), 1.0);
    }

    #[test]
    fn fast_exp_is_within_two_ulps_of_the_double_result() {
        let mut worst = 0;
        for x in inputs()
            .into_iter()
            .chain((0..200_000).map(|i| -(i as f32) * 4.4e-4))
        {
            let got = exp32_fast(x);
            if x.is_nan() {
                assert!(got.is_nan());
                continue;
            }
            if x < -87.33 {
                assert_eq!(got, 0.0, "{x}");
                continue;
            }
            let want = f64::from(x).exp() as f32;
            if want.is_infinite() {
                assert_eq!(got, f32::INFINITY, "{x}");
                continue;
            }
            let u = ulps(got, want);
            worst = worst.max(u);
            assert!(u <= 2, "exp({x:e}) = {got:e}, want {want:e}");
        }
        assert!(
            worst >= 1,
            "the sweep reaches inputs where float rounding shows"
        );
        assert_eq!(exp32_fast(0.0), 1.0);
        assert_eq!(exp32_fast(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp32_fast(f32::INFINITY), f32::INFINITY);
    }

    #[test]
    fn erfc_is_within_three_ulps_of_the_double_result() {
        let sweep = (0..400_000).map(|i| (i as f32 - 200_000.0) * 5.5e-5);
        for x in inputs().into_iter().chain(sweep) {
            let want = libm::erfc(f64::from(x)) as f32;
            let got = erfc32(x);
            if want.is_subnormal() || want == 0.0 {
                // Flushed by the caller either way; only the size matters.
                assert!(got.abs() < 2.0 * f32::MIN_POSITIVE, "erfc({x:e}) = {got:e}");
            } else {
                assert_near("erfc", x, got, want, 3);
            }
        }
    }

    #[test]
    fn tanh_and_sigmoid_match_the_double_results() {
        for x in inputs() {
            let d = f64::from(x);
            assert_near("tanh", x, tanh32(x), d.tanh() as f32, 1);
            let sigmoid = 1.0 / (1.0 + (-d).exp());
            assert_near("sigmoid", x, sigmoid32(x), sigmoid as f32, 1);
        }
        assert_eq!(tanh32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(tanh32(f32::INFINITY), 1.0);
        assert_eq!(sigmoid32(f32::NEG_INFINITY), 0.0);
    }
}
