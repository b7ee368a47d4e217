//! TensorFlow's numbers, element by element, written branch-free so that the loops vectorise.
//!
//! - TensorFlow runs its CPU kernels with the x86 flags DAZ (denormal inputs read as zero, with
//!   their sign) and FTZ (a result that is tiny, i.e. below the smallest normal number after
//!   rounding to the type's precision with an unbounded exponent, becomes zero with its sign).
//!   [`daz32`]/[`ftz32`] and the `f64` pair do that on the bits.
//! - `half` and `bfloat16` compute in `float` (with DAZ/FTZ there) and round once, to nearest
//!   even.
//! - Integers wrap.

use half::{bf16, f16};
use num_complex::Complex;

pub(crate) use tensorcast_core::x86::{daz32, daz64};

/// An exact result (sums and differences that are subnormal are exact) flushed with FTZ.
#[inline(always)]
pub(crate) fn ftz32(x: f32) -> f32 {
    daz32(x)
}

/// [`ftz32`] for `double`.
#[inline(always)]
pub(crate) fn ftz64(x: f64) -> f64 {
    daz64(x)
}

/// True for a subnormal `float` (not zero): what DAZ and FTZ change.
#[inline(always)]
pub(crate) fn subnormal32(x: f32) -> bool {
    (x.to_bits() << 1).wrapping_sub(1) < 0x00ff_ffff
}

/// True for `0 < |x| <= f32::MIN_POSITIVE`: a result that FTZ may have flushed had it been
/// computed exactly (a plain result that rounded to zero is zero either way).
#[inline(always)]
pub(crate) fn tiny32(x: f32) -> bool {
    (x.to_bits() << 1).wrapping_sub(1) < 0x0100_0000
}

/// True for a subnormal `bfloat16` (not zero), tested on its 16 bits (so that a loop over
/// `bfloat16`s tests 16 lanes per AVX2 instruction); the same as [`subnormal32`] of the
/// widened value.
#[inline(always)]
pub(crate) fn subnormal_bf16(x: bf16) -> bool {
    (x.to_bits() & 0x7fff).wrapping_sub(1) < 0x007f
}

/// [`tiny32`] of a `bfloat16` (`0 < |x| <= f32::MIN_POSITIVE`), on its 16 bits.
#[inline(always)]
pub(crate) fn tiny_bf16(x: bf16) -> bool {
    (x.to_bits() & 0x7fff).wrapping_sub(1) < 0x0080
}

/// True for a subnormal `double` (not zero).
#[inline(always)]
pub(crate) fn subnormal64(x: f64) -> bool {
    (x.to_bits() << 1).wrapping_sub(1) < 0x001f_ffff_ffff_ffff
}

/// `a == b` with DAZ: equal as floats, or both zero or subnormal.
#[inline(always)]
pub(crate) fn eq32(a: f32, b: f32) -> bool {
    (a == b) | ((a.abs() < f32::MIN_POSITIVE) & (b.abs() < f32::MIN_POSITIVE))
}

/// x86's NaN rule for a binary instruction: a NaN operand is the result (made quiet), the
/// first one when both are; otherwise `r`. Written out so that the compiler's freedom to
/// swap the operands of `+` and `*` cannot change which NaN comes out.
#[inline(always)]
fn nan_first32(a: f32, b: f32, r: f32) -> f32 {
    if a.is_nan() {
        f32::from_bits(a.to_bits() | 0x0040_0000)
    } else if b.is_nan() {
        f32::from_bits(b.to_bits() | 0x0040_0000)
    } else {
        r
    }
}

/// [`nan_first32`] for `double`.
#[inline(always)]
fn nan_first64(a: f64, b: f64, r: f64) -> f64 {
    if a.is_nan() {
        f64::from_bits(a.to_bits() | 0x0008_0000_0000_0000)
    } else if b.is_nan() {
        f64::from_bits(b.to_bits() | 0x0008_0000_0000_0000)
    } else {
        r
    }
}

/// `a + b` in `float` without DAZ/FTZ, with x86's NaN rule written out (see [`nan_first32`]):
/// for `half`, whose values and their sums are never `float` subnormals.
#[inline(always)]
pub(crate) fn add_plain32(a: f32, b: f32) -> f32 {
    nan_first32(a, b, a + b)
}

/// `a * b` in `float` without DAZ/FTZ, with x86's NaN rule written out: for `half`.
#[inline(always)]
pub(crate) fn mul_plain32(a: f32, b: f32) -> f32 {
    nan_first32(a, b, a * b)
}

/// `a * b` in `float` with DAZ and FTZ. The product is tiny when rounding it to 24 bits with
/// an unbounded exponent stays below `f32::MIN_POSITIVE`: judged on `(a * 2^64) * b`, the same
/// rounding done where the scaled product is a normal number. All in `float`, so a vector of
/// it is as wide as the inputs. `a * 2^64` overflows only for `|a| >= 2^64`, whose product with
/// a normal `b` is far from tiny (and with a zero `b` is not flushed either way).
#[inline(always)]
pub(crate) fn mul32(a: f32, b: f32) -> f32 {
    const SCALE: f32 = 18_446_744_073_709_551_616.0;
    let (a, b) = (daz32(a), daz32(b));
    let r = a * b;
    let scaled = (a * SCALE) * b;
    let tiny = scaled.abs() < f32::MIN_POSITIVE * SCALE;
    let keep = if tiny { 0x8000_0000 } else { !0u32 };
    nan_first32(a, b, f32::from_bits(r.to_bits() & keep))
}

/// `a * b` in `double` with DAZ and FTZ (tininess judged on the rounded result).
#[inline(always)]
pub(crate) fn mul64(a: f64, b: f64) -> f64 {
    let (a, b) = (daz64(a), daz64(b));
    nan_first64(a, b, ftz64(a * b))
}

/// `a + b` in `float` with DAZ and FTZ.
#[inline(always)]
pub(crate) fn add32(a: f32, b: f32) -> f32 {
    let (a, b) = (daz32(a), daz32(b));
    nan_first32(a, b, ftz32(a + b))
}

/// `a - b` in `float` with DAZ and FTZ.
#[inline(always)]
pub(crate) fn sub32(a: f32, b: f32) -> f32 {
    let (a, b) = (daz32(a), daz32(b));
    nan_first32(a, b, ftz32(a - b))
}

/// `a + b` in `double` with DAZ and FTZ.
#[inline(always)]
pub(crate) fn add64(a: f64, b: f64) -> f64 {
    let (a, b) = (daz64(a), daz64(b));
    nan_first64(a, b, ftz64(a + b))
}

/// `a - b` in `double` with DAZ and FTZ.
#[inline(always)]
pub(crate) fn sub64(a: f64, b: f64) -> f64 {
    let (a, b) = (daz64(a), daz64(b));
    nan_first64(a, b, ftz64(a - b))
}

/// `a / b` in `float` with DAZ and FTZ: the quotient is tiny when rounding it to 24 bits with
/// an unbounded exponent stays below `f32::MIN_POSITIVE` (judged on `a` scaled by 2^64, exact
/// here: a tiny quotient needs `|b|` far above `|a|`, so the scaled `a` cannot overflow); an
/// invalid `0/0` or `inf/inf` is x86's negative default NaN.
#[inline(always)]
pub(crate) fn div32(a: f32, b: f32) -> f32 {
    let (a, b) = (daz32(a), daz32(b));
    let r = a / b;
    let r = if r.abs() <= f32::MIN_POSITIVE && r != 0.0 {
        let scaled = (a * 18_446_744_073_709_551_616.0) / b;
        if scaled.abs() < f32::MIN_POSITIVE * 18_446_744_073_709_551_616.0 {
            f32::from_bits(r.to_bits() & 0x8000_0000)
        } else {
            r
        }
    } else {
        r
    };
    nan_first32(a, b, indefinite32(a, b, r))
}

/// [`div32`] for `double` (scaled by 2^128).
#[inline(always)]
pub(crate) fn div64(a: f64, b: f64) -> f64 {
    let (a, b) = (daz64(a), daz64(b));
    let r = a / b;
    const SCALE: f64 = 340_282_366_920_938_463_463_374_607_431_768_211_456.0;
    let r = if r.abs() <= f64::MIN_POSITIVE && r != 0.0 {
        let scaled = (a * SCALE) / b;
        if scaled.abs() < f64::MIN_POSITIVE * SCALE {
            f64::from_bits(r.to_bits() & 0x8000_0000_0000_0000)
        } else {
            r
        }
    } else {
        r
    };
    nan_first64(a, b, indefinite64(a, b, r))
}

/// [`indefinite32`] for `double`.
#[inline(always)]
pub(crate) fn indefinite64(a: f64, b: f64, r: f64) -> f64 {
    if r.is_nan() && !a.is_nan() && !b.is_nan() {
        f64::from_bits(0xfff8_0000_0000_0000)
    } else {
        r
    }
}

/// TensorFlow's `FloorMod` of floats: `t = fmod(x, y)` (the C library's, exact; it tests the
/// divisor for zero under DAZ, so a subnormal divisor gives x86's negative default NaN, but a
/// subnormal dividend comes back unchanged),
/// then `t + y` where `t` is not zero and its sign differs from `y`'s (compared under DAZ,
/// added with DAZ/FTZ).
#[inline(always)]
pub(crate) fn floor_mod32(x: f32, y: f32) -> f32 {
    let t = if daz32(y) == 0.0 && !x.is_nan() {
        f32::from_bits(0xffc0_0000)
    } else {
        indefinite32(x, y, x % y)
    };
    let (t0, y0) = (daz32(t), daz32(y));
    if t0 != 0.0 && ((y0 < 0.0) != (t0 < 0.0)) {
        add32(t, y)
    } else {
        t
    }
}

/// [`floor_mod32`] for `double`.
#[inline(always)]
pub(crate) fn floor_mod64(x: f64, y: f64) -> f64 {
    let t = if daz64(y) == 0.0 && !x.is_nan() {
        f64::from_bits(0xfff8_0000_0000_0000)
    } else {
        indefinite64(x, y, x % y)
    };
    let (t0, y0) = (daz64(t), daz64(y));
    if t0 != 0.0 && ((y0 < 0.0) != (t0 < 0.0)) {
        add64(t, y)
    } else {
        t
    }
}

/// `x` to the power `y` in `float` as TensorFlow's `Pow` gives it: the operands read with DAZ,
/// IEEE's special cases for every NaN, signalling ones included (`pow(1, y) = 1`,
/// `pow(x, 0) = 1`: the C library's `powf` answers a signalling NaN with NaN, TensorFlow with
/// 1), the C library's `powf` otherwise, the result flushed with FTZ, and every NaN result the
/// positive default NaN. Finite results are within [`super::POW_ULPS`] of TensorFlow's
/// (Eigen's own `pow`).
#[inline(always)]
pub(crate) fn pow32(x: f32, y: f32) -> f32 {
    let (x, y) = (daz32(x), daz32(y));
    if x == 1.0 || y == 0.0 {
        return 1.0;
    }
    let r = ftz32(x.powf(y));
    if r.is_nan() {
        f32::from_bits(0x7fc0_0000)
    } else {
        r
    }
}

/// [`pow32`] for `double`.
#[inline(always)]
pub(crate) fn pow64(x: f64, y: f64) -> f64 {
    let (x, y) = (daz64(x), daz64(y));
    if x == 1.0 || y == 0.0 {
        return 1.0;
    }
    let r = ftz64(x.powf(y));
    if r.is_nan() {
        f64::from_bits(0x7ff8_0000_0000_0000)
    } else {
        r
    }
}

/// `pow` of the C library in `float` for `half` and `bfloat16` `Pow` (TensorFlow computes them
/// with `std::pow` element by element, in its threads' DAZ/FTZ mode: a `bfloat16` operand
/// that is subnormal in `float` reads as zero, a result subnormal in `float` is zero; for
/// `half` neither can happen), with x86's NaN: an invalid power (a negative base to a
/// non-integer power) is the negative default NaN.
#[inline(always)]
pub(crate) fn pow_scalar32(x: f32, y: f32) -> f32 {
    let r = ftz32(daz32(x).powf(daz32(y)));
    if r.is_nan() && !x.is_nan() && !y.is_nan() {
        f32::from_bits(0xffc0_0000)
    } else if r.is_nan() {
        nan_first32(x, y, r)
    } else {
        r
    }
}

/// Eigen's vectorised complex quotient (`pdiv_complex`): the divisor is scaled by the larger
/// magnitude of its parts, `x * conj(y') / |y'|^2`, then scaled back; every real operation
/// with DAZ/FTZ.
macro_rules! complex_div {
    ($name:ident, $t:ty, $mul:ident, $add:ident, $sub:ident, $div:ident) => {
        #[inline(always)]
        pub(crate) fn $name(x: Complex<$t>, y: Complex<$t>) -> Complex<$t> {
            let m = max_nan(y.re.abs(), y.im.abs(), false);
            let (c, d) = ($div(y.re, m), $div(y.im, m));
            let denom = $add($mul(c, c), $mul(d, d));
            let re = $add($mul(x.re, c), $mul(x.im, d));
            let im = $sub($mul(x.im, c), $mul(x.re, d));
            Complex::new($div($div(re, denom), m), $div($div(im, denom), m))
        }
    };
}

complex_div!(cdiv32, f32, mul32, add32, sub32, div32);

/// The C runtime's complex quotient (`__divsc3`/`__divdc3`, Smith's method with C99's
/// recovery of infinities and zeros that come out NaN), which TensorFlow's scalar remainder
/// (the elements after the last whole vector packet) computes; every real operation with
/// DAZ/FTZ.
macro_rules! complex_div_c99 {
    ($name:ident, $t:ty, $mul:ident, $add:ident, $sub:ident, $div:ident) => {
        pub(crate) fn $name(x: Complex<$t>, y: Complex<$t>) -> Complex<$t> {
            let (mut a, mut b, mut c, mut d) = (x.re, x.im, y.re, y.im);
            let (mut re, mut im);
            if c.abs() < d.abs() {
                let ratio = $div(c, d);
                let denom = $add($mul(c, ratio), d);
                re = $div($add($mul(a, ratio), b), denom);
                im = $div($sub($mul(b, ratio), a), denom);
            } else {
                let ratio = $div(d, c);
                let denom = $add($mul(d, ratio), c);
                re = $div($add($mul(b, ratio), a), denom);
                im = $div($sub(b, $mul(a, ratio)), denom);
            }
            if re.is_nan() && im.is_nan() {
                let inf = <$t>::INFINITY;
                let boxed = |v: $t| (if v.is_infinite() { 1.0 } else { 0.0 } as $t).copysign(v);
                if c == 0.0 && d == 0.0 && (!a.is_nan() || !b.is_nan()) {
                    re = $mul(inf.copysign(c), a);
                    im = $mul(inf.copysign(c), b);
                } else if (a.is_infinite() || b.is_infinite()) && c.is_finite() && d.is_finite() {
                    (a, b) = (boxed(a), boxed(b));
                    re = $mul(inf, $add($mul(a, c), $mul(b, d)));
                    im = $mul(inf, $sub($mul(b, c), $mul(a, d)));
                } else if (c.is_infinite() || d.is_infinite()) && a.is_finite() && b.is_finite() {
                    (c, d) = (boxed(c), boxed(d));
                    re = $mul(0.0, $add($mul(a, c), $mul(b, d)));
                    im = $mul(0.0, $sub($mul(b, c), $mul(a, d)));
                }
            }
            Complex::new(re, im)
        }
    };
}

complex_div_c99!(cdiv_c99_32, f32, mul32, add32, sub32, div32);
complex_div_c99!(cdiv_c99_64, f64, mul64, add64, sub64, div64);
complex_div!(cdiv64, f64, mul64, add64, sub64, div64);

/// Integer power by squaring, wrapping (Eigen's `pow` of integers); `y >= 0` (TensorFlow
/// rejects negative exponents before computing).
#[inline(always)]
pub(crate) fn ipow<T: WrappingMul>(x: T, y: u64) -> T {
    let (mut base, mut e, mut acc) = (x, y, T::ONE);
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul_(base);
        }
        e >>= 1;
        if e > 0 {
            base = base.wrapping_mul_(base);
        }
    }
    acc
}

/// Wrapping multiplication of the integer types, for [`ipow`].
pub(crate) trait WrappingMul: Copy {
    /// One.
    const ONE: Self;
    /// `self * other`, wrapping.
    fn wrapping_mul_(self, other: Self) -> Self;
}

macro_rules! wrapping_mul {
    ($($t:ty),*) => {$(
        impl WrappingMul for $t {
            const ONE: Self = 1;
            #[inline(always)]
            fn wrapping_mul_(self, other: Self) -> Self {
                self.wrapping_mul(other)
            }
        }
    )*};
}
wrapping_mul!(i8, i16, i32, i64, u8, u16, u32, u64);

/// TensorFlow's complex products, for `Complex<f32>` (`cmul_packet32`, `cmul_c99_32`) and
/// `Complex<f64>` (`..64`), with its DAZ/FTZ and x86's NaN rule in every real operation.
///
/// - `cmul_packet*`: Eigen's vectorised product (the elements in whole AVX packets):
///   `re = a*c - b*d`, `im = a*d + b*c`, with the factors of each product swapped when `x` is
///   the single element read against a larger `y` (recorded from TensorFlow 2.21:
///   `tests/tf_observed/gen_elementwise_nan_order.py`).
/// - `cmul_c99_*`: the scalar remainder after the packets, compiled C++ `std::complex`
///   multiplication, i.e. the compiler runtime's `__mulsc3`/`__muldc3` (C99 Annex G): the same
///   formula (the factors of `b*c` the other way round), and where both parts come out NaN,
///   infinities are recovered: an infinite operand is boxed to +-1 and +-0, NaNs become zeros,
///   and the parts are recomputed times infinity.
macro_rules! complex_mul {
    ($packet:ident, $c99:ident, $t:ty, $mul:ident, $add:ident, $sub:ident) => {
        #[inline(always)]
        pub(crate) fn $packet(x: Complex<$t>, y: Complex<$t>, swap: bool) -> Complex<$t> {
            let m = |p: $t, q: $t| if swap { $mul(q, p) } else { $mul(p, q) };
            let (a, b, c, d) = (x.re, x.im, y.re, y.im);
            Complex::new($sub(m(a, c), m(b, d)), $add(m(a, d), m(b, c)))
        }

        pub(crate) fn $c99(x: Complex<$t>, y: Complex<$t>) -> Complex<$t> {
            let (mut a, mut b, mut c, mut d) = (x.re, x.im, y.re, y.im);
            let (ac, bd, ad, bc) = ($mul(a, c), $mul(b, d), $mul(a, d), $mul(c, b));
            let (re, im) = ($sub(ac, bd), $add(ad, bc));
            if !(re.is_nan() && im.is_nan()) {
                return Complex::new(re, im);
            }
            // One for an infinity, zero otherwise, with the sign of `v`.
            let boxed = |v: $t| (if v.is_infinite() { 1.0 } else { 0.0 } as $t).copysign(v);
            let nan_to_zero = |v: $t| {
                if v.is_nan() {
                    (0.0 as $t).copysign(v)
                } else {
                    v
                }
            };
            let mut recalc = false;
            if a.is_infinite() || b.is_infinite() {
                (a, b) = (boxed(a), boxed(b));
                (c, d) = (nan_to_zero(c), nan_to_zero(d));
                recalc = true;
            }
            if c.is_infinite() || d.is_infinite() {
                (c, d) = (boxed(c), boxed(d));
                (a, b) = (nan_to_zero(a), nan_to_zero(b));
                recalc = true;
            }
            if !recalc
                && (ac.is_infinite() || bd.is_infinite() || ad.is_infinite() || bc.is_infinite())
            {
                (a, b, c, d) = (
                    nan_to_zero(a),
                    nan_to_zero(b),
                    nan_to_zero(c),
                    nan_to_zero(d),
                );
                recalc = true;
            }
            if !recalc {
                return Complex::new(re, im);
            }
            let inf = <$t>::INFINITY;
            Complex::new(
                $mul(inf, $sub($mul(a, c), $mul(b, d))),
                $mul(inf, $add($mul(a, d), $mul(c, b))),
            )
        }
    };
}

complex_mul!(cmul_packet32, cmul_c99_32, f32, mul32, add32, sub32);
complex_mul!(cmul_packet64, cmul_c99_64, f64, mul64, add64, sub64);

/// `bfloat16` to `float`: the bits shifted (exact).
#[inline(always)]
pub(crate) fn bf16_to_f32(x: bf16) -> f32 {
    f32::from_bits(u32::from(x.to_bits()) << 16)
}

/// `float` to `bfloat16` as TensorFlow's 8-element packets convert: rounding to nearest even,
/// and every NaN becomes `0x7fc0` (so `inf - inf` is `+NaN` there, though `float`'s is `-NaN`;
/// the scalar remainder converts with [`f32_to_bf16_scalar`]).
#[inline(always)]
pub(crate) fn f32_to_bf16(x: f32) -> bf16 {
    let b = x.to_bits();
    let rounded = (b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16) as u16;
    bf16::from_bits(if x.is_nan() { 0x7fc0 } else { rounded })
}

/// `float` to `bfloat16` as Eigen's scalar conversion does it, which TensorFlow runs on the
/// scalar remainder of its loops (the elements after the last full 8-element packet): rounding
/// to nearest even, and a NaN becomes the quiet NaN of its sign (`0x7fc0` or `0xffc0`), where
/// the packet conversion ([`f32_to_bf16`]) always gives `0x7fc0`.
#[inline(always)]
pub(crate) fn f32_to_bf16_scalar(x: f32) -> bf16 {
    if x.is_nan() {
        bf16::from_bits(if x.is_sign_negative() { 0xffc0 } else { 0x7fc0 })
    } else {
        f32_to_bf16(x)
    }
}

/// The NaN x86 writes for an invalid operation of two non-NaN operands (`inf - inf`,
/// `0 * inf`): the "real indefinite", a negative quiet NaN; otherwise `r`. Written out because
/// Rust leaves the sign of such a NaN unspecified.
#[inline(always)]
pub(crate) fn indefinite32(a: f32, b: f32, r: f32) -> f32 {
    if r.is_nan() && !a.is_nan() && !b.is_nan() {
        f32::from_bits(0xffc0_0000)
    } else {
        r
    }
}

/// `Maximum` of two `half` or `bfloat16` values as TensorFlow computes it: a NaN operand is the
/// result, bit for bit (`x`'s when both are; signalling NaNs stay signalling); otherwise the
/// operands compare as floats (`wide`, with DAZ for `bfloat16`) and the larger one is the
/// result, `x` when they are equal (`0` and `-0`). Eigen selects the operand rather than
/// converting a result back, so its bits are kept.
#[inline(always)]
pub(crate) fn max_select<T: Copy>(x: T, y: T, wide: impl Fn(T) -> f32) -> T {
    let (a, b) = (wide(x), wide(y));
    if a.is_nan() || (!b.is_nan() && a >= b) {
        x
    } else {
        y
    }
}

/// `Minimum` of two `half` or `bfloat16` values; see [`max_select`].
#[inline(always)]
pub(crate) fn min_select<T: Copy>(x: T, y: T, wide: impl Fn(T) -> f32) -> T {
    let (a, b) = (wide(x), wide(y));
    if a.is_nan() || (!b.is_nan() && a <= b) {
        x
    } else {
        y
    }
}

/// `half` to `float` (exact; `half` subnormals are normal `float`s, so DAZ never applies).
#[inline(always)]
pub(crate) fn f16_to_f32(x: f16) -> f32 {
    x.to_f32()
}

/// `float` to `half`, rounding to nearest even.
#[inline(always)]
pub(crate) fn f32_to_f16(x: f32) -> f16 {
    f16::from_f32(x)
}

/// Maximum that propagates NaN (the first operand's when both are NaN). `x_on_tie` chooses
/// what equal operands (`0` and `-0`) give: TensorFlow's scalar code returns `x`, its vector
/// code `y`.
#[inline(always)]
pub(crate) fn max_nan<T: PartialOrd + Copy>(x: T, y: T, x_on_tie: bool) -> T {
    #[allow(clippy::eq_op, reason = "x != x is the NaN test for any float type")]
    let (xn, yn) = (x != x, y != y);
    if xn {
        x
    } else if yn {
        y
    } else if x > y || (x_on_tie && x == y) {
        x
    } else {
        y
    }
}

/// Minimum that propagates NaN; see [`max_nan`].
#[inline(always)]
pub(crate) fn min_nan<T: PartialOrd + Copy>(x: T, y: T, x_on_tie: bool) -> T {
    #[allow(clippy::eq_op, reason = "x != x is the NaN test for any float type")]
    let (xn, yn) = (x != x, y != y);
    if xn {
        x
    } else if yn {
        y
    } else if x < y || (x_on_tie && x == y) {
        x
    } else {
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_scalar_conversion_keeps_a_nans_sign_the_packet_one_does_not() {
        let neg_nan = f32::from_bits(0xffc1_2345);
        assert_eq!(f32_to_bf16(neg_nan).to_bits(), 0x7fc0);
        assert_eq!(f32_to_bf16_scalar(neg_nan).to_bits(), 0xffc0);
        assert_eq!(
            f32_to_bf16_scalar(f32::from_bits(0x7f80_0001)).to_bits(),
            0x7fc0
        );
        assert_eq!(f32_to_bf16_scalar(1.0 + f32::EPSILON).to_bits(), 0x3f80);
        // inf - inf: x86's negative default NaN, whatever the compiler's own NaN.
        let (inf, ninf) = (f32::INFINITY, f32::NEG_INFINITY);
        assert_eq!(indefinite32(inf, ninf, f32::NAN).to_bits(), 0xffc0_0000);
        assert_eq!(
            indefinite32(f32::NAN, 1.0, f32::NAN).to_bits(),
            f32::NAN.to_bits()
        );
    }

    #[test]
    fn half_max_min_select_the_operands_bits() {
        let w = |v: f16| v.to_f32();
        let snan = f16::from_bits(0x7c03);
        let neg_nan = f16::from_bits(0xfe05);
        let one = f16::ONE;
        assert_eq!(max_select(one, snan, w).to_bits(), 0x7c03);
        assert_eq!(max_select(neg_nan, snan, w).to_bits(), 0xfe05);
        assert_eq!(min_select(snan, neg_nan, w).to_bits(), 0x7c03);
        // Equal operands: x.
        let (z, nz) = (f16::from_bits(0), f16::from_bits(0x8000));
        assert_eq!(max_select(nz, z, w).to_bits(), 0x8000);
        assert_eq!(min_select(z, nz, w).to_bits(), 0);
        assert_eq!(max_select(one, f16::from_bits(0x4000), w).to_bits(), 0x4000);
        assert_eq!(min_select(one, f16::from_bits(0x4000), w), one);
    }

    #[test]
    fn daz_keeps_sign_and_normals() {
        assert_eq!(daz32(f32::from_bits(0x8000_0001)).to_bits(), 0x8000_0000);
        assert_eq!(daz32(f32::from_bits(1)).to_bits(), 0);
        assert_eq!(daz32(1.5), 1.5);
        assert!(daz32(f32::NAN).is_nan());
        assert_eq!(daz64(f64::from_bits(5)).to_bits(), 0);
    }

    /// The product's tininess judged in `double` (exact there): the reference [`mul32`]
    /// must equal on every input.
    fn mul32_in_double(a: f32, b: f32) -> f32 {
        let (a, b) = (daz32(a), daz32(b));
        let p = f64::from(a) * f64::from(b);
        let r = p as f32;
        let scaled = (p * 18_446_744_073_709_551_616.0) as f32;
        let tiny = scaled.abs() < f32::MIN_POSITIVE * 18_446_744_073_709_551_616.0;
        let keep = if tiny { 0x8000_0000 } else { !0u32 };
        nan_first32(a, b, f32::from_bits(r.to_bits() & keep))
    }

    #[test]
    fn mul32_equals_the_product_judged_in_double() {
        // Products near the smallest normal from every side, with the edge values.
        let min = f32::MIN_POSITIVE;
        let mut xs = vec![
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            min,
            -min,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1e-40,
            2.0f32.powi(64),
            2.0f32.powi(-63),
            0.5,
            1.0 - f32::EPSILON / 2.0,
            1.0 + f32::EPSILON,
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            xs.push(f32::from_bits(state as u32));
            // Mantissas near 1 at exponents whose products land near 2^-126.
            let e = (state >> 40) as i32 % 40 - 20;
            let m = 1.0 + ((state >> 8) as u32 & 0xffff) as f32 * f32::EPSILON;
            xs.push(m * 2.0f32.powi(-63 + e));
        }
        for (i, &a) in xs.iter().enumerate() {
            for &b in xs.iter().skip(i % 97).step_by(97) {
                let (got, want) = (mul32(a, b), mul32_in_double(a, b));
                assert_eq!(got.to_bits(), want.to_bits(), "{a:e} * {b:e}");
                let near = min * (1.0 - f32::EPSILON / 4.0);
                let (x, y) = (a, near / a);
                assert_eq!(
                    mul32(x, y).to_bits(),
                    mul32_in_double(x, y).to_bits(),
                    "{x:e} * {y:e}"
                );
            }
        }
    }

    #[test]
    fn mul32_flushes_after_rounding() {
        let min = f32::MIN_POSITIVE;
        // Just below the smallest normal after rounding to 24 bits: flushed.
        assert_eq!(mul32(min, 1.0 - f32::EPSILON / 2.0).to_bits(), 0);
        // Rounds up to the smallest normal with an unbounded exponent: kept (TF 2.21 agrees).
        let a = f32::from_bits(min.to_bits() + 1);
        assert_eq!(mul32(a, 1.0 - f32::EPSILON), min);
        assert_eq!(mul32(-min, 0.25).to_bits(), 0x8000_0000);
        assert_eq!(mul32(3.0, 0.5), 1.5);
        assert_eq!(mul32(f32::MAX, 2.0), f32::INFINITY);
    }

    #[test]
    fn bf16_tests_on_bits_equal_the_float_tests() {
        for b in 0..=u16::MAX {
            let x = bf16::from_bits(b);
            let w = bf16_to_f32(x);
            assert_eq!(subnormal_bf16(x), subnormal32(w), "{b:#x}");
            assert_eq!(tiny_bf16(x), tiny32(w), "{b:#x}");
        }
    }

    #[test]
    fn c99_product_recovers_infinities() {
        let (inf, nan) = (f32::INFINITY, f32::NAN);
        // (inf + inf i)(1 + 0i): the plain formula gives NaN + NaN i, C99 gives inf + inf i.
        let p = cmul_c99_32(Complex::new(inf, inf), Complex::new(1.0, 0.0));
        assert_eq!((p.re, p.im), (inf, inf));
        let p = cmul_packet32(Complex::new(inf, inf), Complex::new(1.0, 0.0), false);
        assert!(p.re.is_nan() && p.im.is_nan());
        // (NaN + 0i)(1.5 + inf i): recovered to inf * 0 in both parts, the default NaN.
        // (black_box keeps the compiler from folding inf * 0 to a NaN of its own choice.)
        let p = cmul_c99_32(
            std::hint::black_box(Complex::new(nan, 0.0)),
            std::hint::black_box(Complex::new(1.5, inf)),
        );
        assert_eq!((p.re.to_bits(), p.im.to_bits()), (0xffc0_0000, 0xffc0_0000));
        let p = cmul_c99_64(Complex::new(2.0, 3.0), Complex::new(4.0, -5.0));
        assert_eq!((p.re, p.im), (23.0, 2.0));
    }

    #[test]
    fn bf16_rounding_is_nearest_even() {
        for x in [
            1.0f32,
            1.0 + 1.0 / 256.0,
            1.0 + 3.0 / 256.0,
            -f32::MAX,
            1e-40,
            f32::INFINITY,
        ] {
            assert_eq!(f32_to_bf16(x).to_bits(), bf16::from_f32(x).to_bits(), "{x}");
        }
        assert!(bf16_to_f32(f32_to_bf16(f32::NAN)).is_nan());
    }
}
