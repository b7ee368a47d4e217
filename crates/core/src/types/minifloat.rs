//! TensorFlow's 8-bit and 4-bit floating-point element types, and its sub-byte integers.
//!
//! Every type here is a `#[repr(transparent)]` newtype over one byte, so a tensor buffer of
//! these elements can be viewed in place (`bytemuck::Pod`). TensorFlow stores one element per
//! byte, also for the 4-bit and 2-bit types (they are not packed).
//!
//! The floating-point types follow the semantics of `ml_dtypes` (which TensorFlow uses):
//!
//! | type | exp | mantissa | bias | infinities | NaN encodings | negative zero | max finite |
//! |---|---|---|---|---|---|---|---|
//! | [`Float8E5M2`] | 5 | 2 | 15 | yes | exponent all ones, mantissa != 0 | yes | 57344 |
//! | [`Float8E4M3FN`] | 4 | 3 | 7 | no | `0x7f`, `0xff` | yes | 448 |
//! | [`Float8E4M3FNUZ`] | 4 | 3 | 8 | no | `0x80` only | no | 240 |
//! | [`Float8E4M3B11FNUZ`] | 4 | 3 | 11 | no | `0x80` only | no | 30 |
//! | [`Float8E5M2FNUZ`] | 5 | 2 | 16 | no | `0x80` only | no | 57344 |
//! | [`Float4E2M1FN`] | 2 | 1 | 1 | no | none | yes | 6 |
//!
//! All six are decoded and encoded by one generic routine parameterised by a format
//! description, rather than six hand-written copies. Decoding is exact. Encoding rounds to
//! nearest, ties to even, without saturation (as `ml_dtypes` does by default): a value whose
//! rounded magnitude exceeds the largest finite value becomes infinity where the format has
//! one, NaN where it has NaN but no infinity, and the largest finite value (with the input's
//! sign) for [`Float4E2M1FN`], which has neither.
//!
//! Equality (`PartialEq`) compares the stored bits, not the numeric values: NaN equals NaN
//! with the same bits, and `+0` differs from `-0`. For [`Float4E2M1FN`] and the sub-byte
//! integers, bytes that read as the same element compare equal even if their unused upper
//! bits differ (see each type).

use core::fmt;
use core::hash::{Hash, Hasher};

/// How a format encodes NaN (and so what it does on overflow).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NanStyle {
    /// IEEE 754 style: exponent all ones with a non-zero mantissa is NaN; with a zero
    /// mantissa it is infinity.
    Ieee,
    /// Finite only: the single magnitude with exponent and mantissa all ones is NaN
    /// (one NaN per sign); every other exponent value is finite.
    FiniteOnlyAllOnes,
    /// "Finite, unsigned zero": the pattern sign=1, rest zero (`0x80`) is the only NaN, and
    /// there is no negative zero.
    Fnuz,
    /// No NaN at all.
    None,
}

/// Shape of one small floating-point format. The sign is always the top bit of the used
/// width `1 + exp_bits + man_bits`, which sits in the low bits of the storage byte.
#[derive(Clone, Copy, Debug)]
struct MiniFormat {
    exp_bits: u32,
    man_bits: u32,
    bias: i32,
    has_infinity: bool,
    nan: NanStyle,
}

/// The result of taking an `f32` or `f64` apart: its class, and for finite non-zero values
/// the exact magnitude `sig * 2^exp2`.
#[derive(Clone, Copy, Debug)]
enum Decomposed {
    Nan,
    Infinity,
    Zero,
    Finite { sig: u64, exp2: i32 },
}

/// Quiet NaN bit patterns produced when decoding a NaN element (what `ml_dtypes` produces:
/// the sign of the element and the canonical quiet payload).
const F32_QNAN_POSITIVE: u32 = 0x7fc0_0000;
const F32_QNAN_NEGATIVE: u32 = 0xffc0_0000;

impl MiniFormat {
    const fn width(self) -> u32 {
        1 + self.exp_bits + self.man_bits
    }

    const fn sign_bit(self) -> u8 {
        1u8 << (self.exp_bits + self.man_bits)
    }

    const fn exp_field_max(self) -> u32 {
        (1 << self.exp_bits) - 1
    }

    const fn man_field_max(self) -> u32 {
        (1 << self.man_bits) - 1
    }

    /// All magnitude bits set (exponent and mantissa all ones).
    const fn magnitude_all_ones(self) -> u32 {
        (1 << (self.exp_bits + self.man_bits)) - 1
    }

    /// The largest magnitude code (exponent and mantissa fields read as one integer) that is
    /// a finite number. Codes are monotone in the value they encode.
    const fn max_finite_code(self) -> u32 {
        match self.nan {
            NanStyle::Ieee => (self.exp_field_max() << self.man_bits) - 1,
            NanStyle::FiniteOnlyAllOnes => self.magnitude_all_ones() - 1,
            NanStyle::Fnuz | NanStyle::None => self.magnitude_all_ones(),
        }
    }

    fn sign(self, negative: bool) -> u8 {
        if negative {
            self.sign_bit()
        } else {
            0
        }
    }

    /// Whether the element is a NaN.
    fn is_nan_bits(self, raw: u8) -> bool {
        let bits = self.canonical_bits(raw);
        let magnitude = u32::from(bits & !self.sign_bit());
        match self.nan {
            NanStyle::Ieee => {
                (magnitude >> self.man_bits) == self.exp_field_max()
                    && (magnitude & self.man_field_max()) != 0
            }
            NanStyle::FiniteOnlyAllOnes => magnitude == self.magnitude_all_ones(),
            NanStyle::Fnuz => bits == self.sign_bit(),
            NanStyle::None => false,
        }
    }

    /// Whether the element reads as negative. For a format narrower than the byte, any set
    /// bit from the sign position up counts as the sign, as in `ml_dtypes`' decoder.
    const fn is_negative_bits(self, raw: u8) -> bool {
        raw >> (self.width() - 1) != 0
    }

    /// The element bits as they are read: the magnitude bits, and the sign bit set when
    /// [`is_negative_bits`](Self::is_negative_bits). Equal for any two bytes that read alike.
    const fn canonical_bits(self, raw: u8) -> u8 {
        let magnitude = raw & (self.sign_bit() - 1);
        if self.is_negative_bits(raw) {
            magnitude | self.sign_bit()
        } else {
            magnitude
        }
    }

    /// Exact value of an element.
    fn decode(self, raw: u8) -> f32 {
        let bits = self.canonical_bits(raw);
        let negative = self.is_negative_bits(raw);
        if self.is_nan_bits(bits) {
            return f32::from_bits(if negative {
                F32_QNAN_NEGATIVE
            } else {
                F32_QNAN_POSITIVE
            });
        }
        let magnitude = u32::from(bits & !self.sign_bit());
        let exp = magnitude >> self.man_bits;
        let man = magnitude & self.man_field_max();
        let value = if self.has_infinity && exp == self.exp_field_max() {
            f32::INFINITY
        } else if exp == 0 {
            // Subnormal (or zero): man * 2^(1 - bias - man_bits).
            man as f32 * pow2_f32(1 - self.bias - self.man_bits as i32)
        } else {
            let sig = man | (1 << self.man_bits);
            sig as f32 * pow2_f32(exp as i32 - self.bias - self.man_bits as i32)
        };
        if negative {
            -value
        } else {
            value
        }
    }

    /// The code a NaN input becomes.
    fn encode_nan(self, negative: bool) -> u8 {
        match self.nan {
            // Canonical quiet NaN: exponent all ones, top mantissa bit set.
            NanStyle::Ieee => {
                self.sign(negative)
                    | ((self.exp_field_max() << self.man_bits) | (1 << (self.man_bits - 1))) as u8
            }
            NanStyle::FiniteOnlyAllOnes => self.sign(negative) | self.magnitude_all_ones() as u8,
            NanStyle::Fnuz => self.sign_bit(),
            // ml_dtypes maps NaN to its stand-in "quiet NaN" (negative zero) and then applies
            // the input's sign to it, so +NaN becomes -0 and -NaN becomes +0.
            NanStyle::None => self.sign(!negative),
        }
    }

    /// The code a value too large for the format (or an infinity) becomes.
    fn encode_overflow(self, negative: bool) -> u8 {
        if self.has_infinity {
            return self.sign(negative) | (self.exp_field_max() << self.man_bits) as u8;
        }
        match self.nan {
            NanStyle::FiniteOnlyAllOnes | NanStyle::Fnuz => self.encode_nan(negative),
            // No infinity and no NaN: saturate to the largest finite magnitude.
            NanStyle::None | NanStyle::Ieee => self.sign(negative) | self.max_finite_code() as u8,
        }
    }

    fn encode_zero(self, negative: bool) -> u8 {
        if self.nan == NanStyle::Fnuz {
            0
        } else {
            self.sign(negative)
        }
    }

    /// Round an exactly decomposed value to this format: nearest, ties to even.
    fn encode(self, negative: bool, input: Decomposed) -> u8 {
        let (sig, exp2) = match input {
            Decomposed::Nan => return self.encode_nan(negative),
            Decomposed::Infinity => return self.encode_overflow(negative),
            Decomposed::Zero => return self.encode_zero(negative),
            Decomposed::Finite { sig, exp2 } => (sig, exp2),
        };
        let man_bits = self.man_bits as i32;
        // floor(log2(|x|)).
        let top = 63 - sig.leading_zeros() as i32 + exp2;
        // Exponent of the unit in the last place at |x|'s binade, clamped to the subnormal
        // range's spacing.
        let min_normal_exp = 1 - self.bias;
        let quantum = top.max(min_normal_exp) - man_bits;
        let shift = quantum - exp2;
        // n = |x| / 2^quantum rounded to an integer; n <= 2^(man_bits + 1).
        let n: u64 = if shift <= 0 {
            // Only when sig has fewer than man_bits + 1 significant bits: -shift <= man_bits.
            sig << (-shift) as u32
        } else if shift >= 64 {
            // sig < 2^53 <= half a quantum.
            0
        } else {
            round_shift_right_ties_even(sig, shift as u32)
        };
        // Biased exponent field of |x|'s binade (1 for the subnormal range). The magnitude
        // code ((e - 1) << man_bits) + n is right for both normal and subnormal n, and a
        // rounding carry into the next binade (n == 2^(man_bits+1)) lands on the next code.
        let biased = i64::from(quantum + man_bits + self.bias);
        let code = ((biased - 1) << man_bits) + n as i64;
        if code > i64::from(self.max_finite_code()) {
            self.encode_overflow(negative)
        } else if code == 0 {
            self.encode_zero(negative)
        } else {
            self.sign(negative) | code as u8
        }
    }
}

/// `2^e` for `e` in the normal `f32` exponent range (all the formats here stay inside it).
fn pow2_f32(e: i32) -> f32 {
    debug_assert!((-126..=127).contains(&e));
    f32::from_bits(((e + 127) as u32) << 23)
}

/// `x / 2^shift` rounded to the nearest integer, ties to even (`1 <= shift <= 63`).
fn round_shift_right_ties_even(x: u64, shift: u32) -> u64 {
    let quotient = x >> shift;
    let remainder = x & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    if remainder > half || (remainder == half && quotient & 1 == 1) {
        quotient + 1
    } else {
        quotient
    }
}

fn decompose_f32(v: f32) -> (bool, Decomposed) {
    let bits = v.to_bits();
    let negative = bits >> 31 != 0;
    let exp = (bits >> 23) & 0xff;
    let man = u64::from(bits & 0x7f_ffff);
    let class = match (exp, man) {
        (0xff, 0) => Decomposed::Infinity,
        (0xff, _) => Decomposed::Nan,
        (0, 0) => Decomposed::Zero,
        (0, _) => Decomposed::Finite {
            sig: man,
            exp2: -149,
        },
        _ => Decomposed::Finite {
            sig: man | (1 << 23),
            exp2: exp as i32 - 150,
        },
    };
    (negative, class)
}

fn decompose_f64(v: f64) -> (bool, Decomposed) {
    let bits = v.to_bits();
    let negative = bits >> 63 != 0;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let man = bits & 0x000f_ffff_ffff_ffff;
    let class = match (exp, man) {
        (0x7ff, 0) => Decomposed::Infinity,
        (0x7ff, _) => Decomposed::Nan,
        (0, 0) => Decomposed::Zero,
        (0, _) => Decomposed::Finite {
            sig: man,
            exp2: -1074,
        },
        _ => Decomposed::Finite {
            sig: man | (1 << 52),
            exp2: exp - 1075,
        },
    };
    (negative, class)
}

const E5M2: MiniFormat = MiniFormat {
    exp_bits: 5,
    man_bits: 2,
    bias: 15,
    has_infinity: true,
    nan: NanStyle::Ieee,
};
const E4M3FN: MiniFormat = MiniFormat {
    exp_bits: 4,
    man_bits: 3,
    bias: 7,
    has_infinity: false,
    nan: NanStyle::FiniteOnlyAllOnes,
};
const E4M3FNUZ: MiniFormat = MiniFormat {
    exp_bits: 4,
    man_bits: 3,
    bias: 8,
    has_infinity: false,
    nan: NanStyle::Fnuz,
};
const E4M3B11FNUZ: MiniFormat = MiniFormat {
    exp_bits: 4,
    man_bits: 3,
    bias: 11,
    has_infinity: false,
    nan: NanStyle::Fnuz,
};
const E5M2FNUZ: MiniFormat = MiniFormat {
    exp_bits: 5,
    man_bits: 2,
    bias: 16,
    has_infinity: false,
    nan: NanStyle::Fnuz,
};
const E2M1FN: MiniFormat = MiniFormat {
    exp_bits: 2,
    man_bits: 1,
    bias: 1,
    has_infinity: false,
    nan: NanStyle::None,
};

/// Everything a small float type has besides its struct definition and equality.
macro_rules! minifloat_impl {
    ($name:ident, $format:expr, $tf_name:literal) => {
        impl $name {
            /// Wraps a raw byte (no conversion).
            #[inline]
            pub const fn from_bits(bits: u8) -> Self {
                Self(bits)
            }

            /// The raw byte (no conversion).
            #[inline]
            pub const fn to_bits(self) -> u8 {
                self.0
            }

            /// The exact value as `f32`. A NaN element becomes a quiet NaN with the element's
            /// sign bit.
            #[inline]
            pub fn to_f32(self) -> f32 {
                $format.decode(self.0)
            }

            /// The exact value as `f64`.
            #[inline]
            pub fn to_f64(self) -> f64 {
                f64::from(self.to_f32())
            }

            #[doc = concat!("Rounds an `f32` to the nearest `", $tf_name, "`, ties to even, ")]
            /// without saturation (see the module documentation for overflow, infinities
            /// and NaN).
            #[inline]
            pub fn from_f32(v: f32) -> Self {
                let (negative, class) = decompose_f32(v);
                Self($format.encode(negative, class))
            }

            /// Rounds an `f64` directly (one rounding, no detour through `f32`), as the
            /// `ml_dtypes` C++ constructor from `double` does. NumPy array casts from
            /// float64 go through float32 and can differ from this in rare
            /// double-rounding cases.
            #[inline]
            pub fn from_f64(v: f64) -> Self {
                let (negative, class) = decompose_f64(v);
                Self($format.encode(negative, class))
            }

            /// Whether the element is a NaN.
            #[inline]
            pub fn is_nan(self) -> bool {
                $format.is_nan_bits(self.0)
            }
        }

        impl From<$name> for f32 {
            #[inline]
            fn from(v: $name) -> f32 {
                v.to_f32()
            }
        }

        impl From<$name> for f64 {
            #[inline]
            fn from(v: $name) -> f64 {
                v.to_f64()
            }
        }

        /// Prints the value as `f32` prints (Rust formatting; TensorFlow's own element
        /// printing lives in the summarize module).
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_f32(), f)
            }
        }

        /// Prints the value and the raw bits, e.g. `Float8E4M3FN(448.0, 0x7e)`.
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    concat!(stringify!($name), "({:?}, {:#04x})"),
                    self.to_f32(),
                    self.0
                )
            }
        }
    };
}

/// `float8_e5m2` (TensorFlow `DT_FLOAT8_E5M2`): 1 sign, 5 exponent and 2 mantissa bits,
/// bias 15, IEEE-like with infinities, NaNs, subnormals and signed zero. Max finite 57344.
///
/// Equality compares bits.
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Float8E5M2(pub u8);
minifloat_impl!(Float8E5M2, E5M2, "float8_e5m2");

/// `float8_e4m3fn` (TensorFlow `DT_FLOAT8_E4M3FN`): 1 sign, 4 exponent and 3 mantissa bits,
/// bias 7, finite only: no infinities, NaN only as `0x7f` / `0xff`. Max finite 448 (`0x7e`).
///
/// Equality compares bits.
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Float8E4M3FN(pub u8);
minifloat_impl!(Float8E4M3FN, E4M3FN, "float8_e4m3fn");

/// `float8_e4m3fnuz` (TensorFlow `DT_FLOAT8_E4M3FNUZ`): 1 sign, 4 exponent and 3 mantissa
/// bits, bias 8, no infinities, no negative zero; `0x80` is the only NaN. Max finite 240.
///
/// Equality compares bits.
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Float8E4M3FNUZ(pub u8);
minifloat_impl!(Float8E4M3FNUZ, E4M3FNUZ, "float8_e4m3fnuz");

/// `float8_e4m3b11fnuz` (TensorFlow `DT_FLOAT8_E4M3B11FNUZ`): 1 sign, 4 exponent and
/// 3 mantissa bits, bias 11, no infinities, no negative zero; `0x80` is the only NaN.
/// Max finite 30 (`0x7f`).
///
/// Equality compares bits.
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Float8E4M3B11FNUZ(pub u8);
minifloat_impl!(Float8E4M3B11FNUZ, E4M3B11FNUZ, "float8_e4m3b11fnuz");

/// `float8_e5m2fnuz` (TensorFlow `DT_FLOAT8_E5M2FNUZ`): 1 sign, 5 exponent and 2 mantissa
/// bits, bias 16, no infinities, no negative zero; `0x80` is the only NaN.
/// Max finite 57344 (`0x7f`).
///
/// Equality compares bits.
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Float8E5M2FNUZ(pub u8);
minifloat_impl!(Float8E5M2FNUZ, E5M2FNUZ, "float8_e5m2fnuz");

/// `float4_e2m1fn` (TensorFlow `DT_FLOAT4_E2M1FN`): 1 sign, 2 exponent and 1 mantissa bit,
/// bias 1, no infinities and no NaN; the values are ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}.
///
/// TensorFlow stores one element per byte, in the low 4 bits, and its conversions write the
/// upper 4 bits as zero (so do ours). A byte with upper bits set (after a bitcast from
/// `uint8`, say) is read as TensorFlow's `ml_dtypes` decoder reads it: the low 3 bits are the
/// magnitude and *any* set bit from bit 3 up makes the value negative, so `0x10` reads as
/// `-0` and `0x72` as `-1`. Equality and hashing compare the bits as read that way
/// (`0x18 == 0x08`); [`to_bits`](Self::to_bits) returns the byte as stored.
///
/// Conversion from `f32`/`f64` (as `ml_dtypes` does it): magnitudes beyond 6 after rounding,
/// and infinities, saturate to ±6; NaN has no encoding and becomes a zero whose sign is the
/// opposite of the NaN's sign bit (`+NaN` → `-0` = `0x8`, `-NaN` → `+0` = `0x0`), because
/// `ml_dtypes` uses `-0` as this type's stand-in "quiet NaN" and then applies the sign.
#[repr(transparent)]
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Float4E2M1FN(pub u8);
minifloat_impl!(Float4E2M1FN, E2M1FN, "float4_e2m1fn");

/// Compares the bits as read (see the type documentation), not the numeric values.
impl PartialEq for Float4E2M1FN {
    fn eq(&self, other: &Self) -> bool {
        E2M1FN.canonical_bits(self.0) == E2M1FN.canonical_bits(other.0)
    }
}

impl Eq for Float4E2M1FN {}

impl Hash for Float4E2M1FN {
    fn hash<H: Hasher>(&self, state: &mut H) {
        E2M1FN.canonical_bits(self.0).hash(state);
    }
}

/// Sub-byte integer types: one element per byte, value in the low bits.
macro_rules! subbyte_int {
    (
        $(#[$doc:meta])*
        $name:ident($repr:ty), bits = $bits:literal, signed = $signed:literal, extend = $extend:literal
    ) => {
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name(pub $repr);

        impl $name {
            const MASK: u8 = (1u8 << $bits) - 1;

            /// The smallest value.
            pub const MIN: i32 = if $signed { -(1 << ($bits - 1)) } else { 0 };
            /// The largest value.
            pub const MAX: i32 = if $signed { (1 << ($bits - 1)) - 1 } else { (1 << $bits) - 1 };

            #[doc = concat!("Stores the low ", stringify!($bits), " bits of `v` (two's complement ")]
            /// wrapping) with the upper bits zero, as `ml_dtypes` does.
            #[inline]
            pub const fn new(v: i32) -> Self {
                Self((v as u8 & Self::MASK) as $repr)
            }

            #[doc = concat!("The value: the low ", stringify!($bits), " bits of the byte, ", $extend, ".")]
            /// Stray upper bits are ignored: TensorFlow narrows `int_val` to a byte and only
            /// the low bits are meaningful.
            #[inline]
            pub const fn value(self) -> i32 {
                let shifted = (self.0 as u8) << (8 - $bits);
                if $signed {
                    ((shifted as i8) >> (8 - $bits)) as i32
                } else {
                    (shifted >> (8 - $bits)) as i32
                }
            }
        }

        /// Compares [`value`](Self::value)s: stray upper bits do not take part.
        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                self.value() == other.value()
            }
        }

        impl Eq for $name {}

        impl Hash for $name {
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.value().hash(state);
            }
        }

        impl From<$name> for i32 {
            #[inline]
            fn from(v: $name) -> i32 {
                v.value()
            }
        }

        /// Prints [`value`](Self::value) in decimal.
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.value(), f)
            }
        }

        /// Prints the value, e.g. `Int4(-3)`.
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), self.value())
            }
        }
    };
}

subbyte_int!(
    /// `int4` (TensorFlow `DT_INT4`): a signed 4-bit integer in -8..=7, one per byte in the
    /// low 4 bits. `Int4::new(-3).value() == -3`, `Int4::new(9).value() == -7`.
    Int4(i8), bits = 4, signed = true, extend = "sign-extended"
);
subbyte_int!(
    /// `uint4` (TensorFlow `DT_UINT4`): an unsigned 4-bit integer in 0..=15, one per byte in
    /// the low 4 bits.
    UInt4(u8), bits = 4, signed = false, extend = "zero-extended"
);
subbyte_int!(
    /// `int2` (TensorFlow `DT_INT2`): a signed 2-bit integer in -2..=1, one per byte in the
    /// low 2 bits.
    Int2(i8), bits = 2, signed = true, extend = "sign-extended"
);
subbyte_int!(
    /// `uint2` (TensorFlow `DT_UINT2`): an unsigned 2-bit integer in 0..=3, one per byte in
    /// the low 2 bits.
    UInt2(u8), bits = 2, signed = false, extend = "zero-extended"
);

#[cfg(test)]
mod tests {
    use super::*;

    /// One row per float type, so a test can run over all of them.
    struct Kind {
        name: &'static str,
        to_f32: fn(u8) -> f32,
        from_f32: fn(f32) -> u8,
        from_f64: fn(f64) -> u8,
        is_nan: fn(u8) -> bool,
        format: MiniFormat,
    }

    macro_rules! kind {
        ($t:ident, $format:expr, $name:literal) => {
            Kind {
                name: $name,
                to_f32: |b| $t::from_bits(b).to_f32(),
                from_f32: |v| $t::from_f32(v).to_bits(),
                from_f64: |v| $t::from_f64(v).to_bits(),
                is_nan: |b| $t::from_bits(b).is_nan(),
                format: $format,
            }
        };
    }

    fn kinds() -> [Kind; 6] {
        [
            kind!(Float8E5M2, E5M2, "float8_e5m2"),
            kind!(Float8E4M3FN, E4M3FN, "float8_e4m3fn"),
            kind!(Float8E4M3FNUZ, E4M3FNUZ, "float8_e4m3fnuz"),
            kind!(Float8E4M3B11FNUZ, E4M3B11FNUZ, "float8_e4m3b11fnuz"),
            kind!(Float8E5M2FNUZ, E5M2FNUZ, "float8_e5m2fnuz"),
            kind!(Float4E2M1FN, E2M1FN, "float4_e2m1fn"),
        ]
    }

    fn fnv1a64(bytes: impl IntoIterator<Item = u8>) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h
    }

    #[test]
    fn formats_has_infinity_iff_ieee_nan_style() {
        for k in kinds() {
            assert_eq!(
                k.format.has_infinity,
                k.format.nan == NanStyle::Ieee,
                "{}",
                k.name
            );
        }
    }

    #[test]
    fn round_trip_every_byte_every_type_is_identity() {
        for k in kinds() {
            let width = k.format.width();
            for b in 0..=255u8 {
                let v = (k.to_f32)(b);
                if (k.is_nan)(b) {
                    assert!(v.is_nan(), "{} {b:#04x}", k.name);
                    assert!((k.is_nan)((k.from_f32)(v)), "{} {b:#04x}", k.name);
                    assert!(
                        (k.is_nan)((k.from_f64)(f64::from(v))),
                        "{} {b:#04x}",
                        k.name
                    );
                    continue;
                }
                assert!(!v.is_nan(), "{} {b:#04x}", k.name);
                // Bytes above the format's width read as their canonical element.
                let want = if width == 8 {
                    b
                } else {
                    k.format.canonical_bits(b)
                };
                assert_eq!((k.from_f32)(v), want, "{} {b:#04x} = {v}", k.name);
                assert_eq!((k.from_f64)(f64::from(v)), want, "{} {b:#04x}", k.name);
            }
        }
    }

    #[test]
    fn nan_encodings_are_exactly_the_documented_ones() {
        let nans = |k: &Kind| (0..=255u8).filter(|&b| (k.is_nan)(b)).collect::<Vec<_>>();
        let k = kinds();
        assert_eq!(nans(&k[0]), [0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff]);
        assert_eq!(nans(&k[1]), [0x7f, 0xff]);
        assert_eq!(nans(&k[2]), [0x80]);
        assert_eq!(nans(&k[3]), [0x80]);
        assert_eq!(nans(&k[4]), [0x80]);
        assert_eq!(nans(&k[5]), Vec::<u8>::new());
        // Decoded NaNs are the canonical quiet NaN with the element's sign.
        assert_eq!(Float8E5M2(0x7d).to_f32().to_bits(), 0x7fc0_0000);
        assert_eq!(Float8E5M2(0xff).to_f32().to_bits(), 0xffc0_0000);
        assert_eq!(Float8E4M3FN(0x7f).to_f32().to_bits(), 0x7fc0_0000);
        assert_eq!(Float8E4M3FNUZ(0x80).to_f32().to_bits(), 0xffc0_0000);
    }

    #[test]
    fn known_values_match_ml_dtypes() {
        assert_eq!(Float8E4M3FN(0x7e).to_f32(), 448.0);
        assert_eq!(Float8E4M3FN(0xfe).to_f32(), -448.0);
        assert_eq!(Float8E4M3FN(0x38).to_f32(), 1.0);
        assert_eq!(Float8E5M2(0x7b).to_f32(), 57344.0);
        assert_eq!(Float8E5M2(0x3c).to_f32(), 1.0);
        assert_eq!(Float8E5M2(0x7c).to_f32(), f32::INFINITY);
        assert_eq!(Float8E5M2(0xfc).to_f32(), f32::NEG_INFINITY);
        assert_eq!(Float8E4M3FNUZ(0x7f).to_f32(), 240.0);
        assert_eq!(Float8E4M3FNUZ(0x40).to_f32(), 1.0);
        assert_eq!(Float8E4M3B11FNUZ(0x7f).to_f32(), 30.0);
        assert_eq!(Float8E4M3B11FNUZ(0x58).to_f32(), 1.0);
        assert_eq!(Float8E5M2FNUZ(0x7f).to_f32(), 57344.0);
        assert_eq!(Float8E5M2FNUZ(0x40).to_f32(), 1.0);
        assert_eq!(Float4E2M1FN(0x7).to_f32(), 6.0);
        assert_eq!(Float4E2M1FN(0x2).to_f32(), 1.0);
        let f4: Vec<f32> = (0..16).map(|b| Float4E2M1FN(b).to_f32()).collect();
        assert_eq!(
            f4,
            [
                0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0,
                -6.0
            ]
        );
        assert!(Float4E2M1FN(0x8).to_f32().is_sign_negative());
        // Smallest subnormals: 2^(1 - bias - man_bits).
        assert_eq!(Float8E5M2(0x01).to_f32(), 2f32.powi(-16));
        assert_eq!(Float8E4M3FN(0x01).to_f32(), 2f32.powi(-9));
        assert_eq!(Float8E4M3FNUZ(0x01).to_f32(), 2f32.powi(-10));
        assert_eq!(Float8E4M3B11FNUZ(0x01).to_f32(), 2f32.powi(-13));
        assert_eq!(Float8E5M2FNUZ(0x01).to_f32(), 2f32.powi(-17));
        assert_eq!(Float4E2M1FN(0x01).to_f32(), 0.5);
        // Largest subnormal and smallest normal.
        assert_eq!(Float8E4M3FN(0x07).to_f32(), 7.0 * 2f32.powi(-9));
        assert_eq!(Float8E4M3FN(0x08).to_f32(), 2f32.powi(-6));
        // Zeros.
        assert!(Float8E5M2(0x80).to_f32() == 0.0 && Float8E5M2(0x80).to_f32().is_sign_negative());
        assert!(Float8E4M3FN(0x00).to_f32().is_sign_positive());
        assert_eq!(Float8E4M3FN::from_f32(448.0), Float8E4M3FN(0x7e));
        assert_eq!(Float8E5M2::from_f32(-57344.0), Float8E5M2(0xfb));
    }

    #[test]
    fn from_f32_ties_round_to_even() {
        // E4M3FN near 1: spacing 0.125.
        assert_eq!(Float8E4M3FN::from_f32(1.0625).to_f32(), 1.0);
        assert_eq!(Float8E4M3FN::from_f32(1.1875).to_f32(), 1.25);
        assert_eq!(Float8E4M3FN::from_f32(1.0626).to_f32(), 1.125);
        assert_eq!(Float8E4M3FN::from_f32(-1.0625).to_f32(), -1.0);
        // E5M2 near 1: spacing 0.25.
        assert_eq!(Float8E5M2::from_f32(1.125).to_f32(), 1.0);
        assert_eq!(Float8E5M2::from_f32(1.375).to_f32(), 1.5);
        // A tie that carries into the next binade: 1.875 + 0.0625 -> 2.0.
        assert_eq!(Float8E4M3FN::from_f32(1.9375).to_f32(), 2.0);
        // Subnormal ties (E4M3FN unit 2^-9): 0.5 unit -> 0, 1.5 units -> 2 units.
        let unit = 2f32.powi(-9);
        assert_eq!(Float8E4M3FN::from_f32(0.5 * unit), Float8E4M3FN(0x00));
        assert_eq!(Float8E4M3FN::from_f32(-0.5 * unit), Float8E4M3FN(0x80));
        assert_eq!(Float8E4M3FN::from_f32(1.5 * unit), Float8E4M3FN(0x02));
        assert_eq!(Float8E4M3FN::from_f32(2.5 * unit), Float8E4M3FN(0x02));
        assert_eq!(Float8E4M3FN::from_f32(0.500_001 * unit), Float8E4M3FN(0x01));
        // The top of the subnormal range rounds up into the first normal.
        assert_eq!(Float8E4M3FN::from_f32(7.5 * unit), Float8E4M3FN(0x08));
        // Float4: 0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 2.5 -> 2, 3.5 -> 4, 5 -> 4.
        let f4 = |v: f32| Float4E2M1FN::from_f32(v).to_f32();
        assert_eq!(
            [
                f4(0.25),
                f4(0.75),
                f4(1.25),
                f4(1.75),
                f4(2.5),
                f4(3.5),
                f4(5.0)
            ],
            [0.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0]
        );
        // Far below half the smallest subnormal.
        assert_eq!(Float8E5M2::from_f32(f32::from_bits(1)), Float8E5M2(0x00));
        assert_eq!(Float8E5M2::from_f64(-5e-324), Float8E5M2(0x80));
    }

    #[test]
    fn from_f64_rounds_once_not_through_f32() {
        // 1.0625 + 2^-40 is above the tie, but rounds to the tie 1.0625 in f32.
        let v = 1.0625 + 2f64.powi(-40);
        assert_eq!(Float8E4M3FN::from_f64(v).to_f32(), 1.125);
        assert_eq!(Float8E4M3FN::from_f32(v as f32).to_f32(), 1.0);
        assert_eq!(Float4E2M1FN::from_f64(1.25 + 2f64.powi(-40)).to_f32(), 1.5);
        assert_eq!(Float8E5M2::from_f64(1e300), Float8E5M2(0x7c));
        assert_eq!(Float8E4M3FNUZ::from_f64(-1e-300), Float8E4M3FNUZ(0x00));
    }

    #[test]
    fn from_f32_overflow_gives_inf_nan_or_saturates_by_type() {
        // E5M2: max 57344; the midpoint to the next binade step (61440) rounds to even = inf.
        assert_eq!(Float8E5M2::from_f32(61439.0), Float8E5M2(0x7b));
        assert_eq!(Float8E5M2::from_f32(61440.0), Float8E5M2(0x7c));
        assert_eq!(Float8E5M2::from_f32(-1e6), Float8E5M2(0xfc));
        // E4M3FN: 464 is the tie between 448 and 480 -> 448 (even); above it, NaN.
        assert_eq!(Float8E4M3FN::from_f32(464.0), Float8E4M3FN(0x7e));
        assert_eq!(Float8E4M3FN::from_f32(465.0), Float8E4M3FN(0x7f));
        assert_eq!(Float8E4M3FN::from_f32(-1e6), Float8E4M3FN(0xff));
        // FNUZ types: overflow to the single NaN 0x80.
        assert_eq!(Float8E4M3FNUZ::from_f32(247.0), Float8E4M3FNUZ(0x7f));
        assert_eq!(Float8E4M3FNUZ::from_f32(248.0), Float8E4M3FNUZ(0x80));
        assert_eq!(Float8E4M3B11FNUZ::from_f32(30.5), Float8E4M3B11FNUZ(0x7f));
        assert_eq!(Float8E4M3B11FNUZ::from_f32(31.0), Float8E4M3B11FNUZ(0x80));
        assert_eq!(Float8E4M3B11FNUZ::from_f32(-31.0), Float8E4M3B11FNUZ(0x80));
        assert_eq!(Float8E5M2FNUZ::from_f32(61439.0), Float8E5M2FNUZ(0x7f));
        assert_eq!(Float8E5M2FNUZ::from_f32(61440.0), Float8E5M2FNUZ(0x80));
        // Float4 saturates.
        assert_eq!(Float4E2M1FN::from_f32(6.5), Float4E2M1FN(0x7));
        assert_eq!(Float4E2M1FN::from_f32(7.0), Float4E2M1FN(0x7));
        assert_eq!(Float4E2M1FN::from_f32(-100.0), Float4E2M1FN(0xf));
        assert_eq!(Float4E2M1FN::from_f64(1e300), Float4E2M1FN(0x7));
    }

    #[test]
    fn from_f32_nan_inf_and_zero_follow_each_type() {
        let (nan, neg_nan) = (f32::from_bits(0x7fc0_0000), f32::from_bits(0xffc0_0000));
        let (inf, ninf) = (f32::INFINITY, f32::NEG_INFINITY);
        let snan = f32::from_bits(0x7f80_0001);
        // E5M2: canonical quiet NaN with sign; infinities kept.
        assert_eq!(Float8E5M2::from_f32(nan).0, 0x7e);
        assert_eq!(Float8E5M2::from_f32(neg_nan).0, 0xfe);
        assert_eq!(Float8E5M2::from_f32(snan).0, 0x7e);
        assert_eq!(Float8E5M2::from_f32(inf).0, 0x7c);
        assert_eq!(Float8E5M2::from_f32(ninf).0, 0xfc);
        // E4M3FN: NaN and infinities become the NaN of the same sign.
        assert_eq!(Float8E4M3FN::from_f32(nan).0, 0x7f);
        assert_eq!(Float8E4M3FN::from_f32(neg_nan).0, 0xff);
        assert_eq!(Float8E4M3FN::from_f32(inf).0, 0x7f);
        assert_eq!(Float8E4M3FN::from_f32(ninf).0, 0xff);
        // FNUZ: everything non-finite is 0x80; there is no negative zero.
        for v in [nan, neg_nan, inf, ninf] {
            assert_eq!(Float8E4M3FNUZ::from_f32(v).0, 0x80);
            assert_eq!(Float8E4M3B11FNUZ::from_f32(v).0, 0x80);
            assert_eq!(Float8E5M2FNUZ::from_f32(v).0, 0x80);
        }
        assert_eq!(Float8E4M3FNUZ::from_f32(-0.0).0, 0x00);
        assert_eq!(Float8E5M2FNUZ::from_f32(-1e-30).0, 0x00);
        assert_eq!(Float8E4M3B11FNUZ::from_f64(-0.0).0, 0x00);
        assert_eq!(Float8E5M2::from_f32(-0.0).0, 0x80);
        assert_eq!(Float8E4M3FN::from_f32(-1e-30).0, 0x80);
        // Float4 (no NaN, no inf): ±inf saturate; NaN becomes a zero of the opposite sign.
        assert_eq!(Float4E2M1FN::from_f32(inf).0, 0x7);
        assert_eq!(Float4E2M1FN::from_f32(ninf).0, 0xf);
        assert_eq!(Float4E2M1FN::from_f32(nan).0, 0x8);
        assert_eq!(Float4E2M1FN::from_f32(neg_nan).0, 0x0);
        assert_eq!(Float4E2M1FN::from_f64(f64::NAN.copysign(1.0)).0, 0x8);
        assert_eq!(Float4E2M1FN::from_f32(-0.0).0, 0x8);
    }

    #[test]
    fn float4_upper_bits_read_as_sign_like_ml_dtypes() {
        assert_eq!(Float4E2M1FN(0x10).to_f32().to_bits(), (-0.0f32).to_bits());
        assert_eq!(Float4E2M1FN(0x72).to_f32(), -1.0);
        assert_eq!(Float4E2M1FN(0xf7).to_f32(), -6.0);
        assert_eq!(Float4E2M1FN(0x18), Float4E2M1FN(0x08));
        assert_ne!(Float4E2M1FN(0x18), Float4E2M1FN(0x00));
        assert_eq!(Float4E2M1FN(0x18).to_bits(), 0x18);
        assert!(!Float4E2M1FN(0xff).is_nan());
    }

    /// FNV-1a hashes of tables made with ml_dtypes 0.6.0 (numpy 2.4): for each type, (1) the
    /// f32 bits of all 256 bytes, (2) the byte `from_f32` gives for 327,680 f32 inputs (every
    /// 16-bit prefix with low halves 0x0000/0x0001/0x8000/0xffff, which covers every tie,
    /// near-tie, overflow and subnormal boundary of these formats, plus 65,536 scattered bit
    /// patterns), (3) the byte `from_f64` gives (via the ml_dtypes C++ scalar constructor)
    /// for 262,144 f64 inputs built the same way from 16-bit prefixes. During development
    /// every one of the 2^32 f32 inputs was also compared for all six types.
    #[test]
    fn conversions_match_ml_dtypes_reference_hashes() {
        let expected: [(u64, u64, u64); 6] = [
            (0xa4c9f019470b0385, 0xb2f144d4ffe17d1e, 0xd51b64cd55a43cf5),
            (0xdad259c50f757625, 0x50b0ca459daaa379, 0xe360891ca521a325),
            (0x10b52e1689fa0f98, 0xee1712879ce816e2, 0x263eb15ded5105a5),
            (0x61e7e67bf2b586d8, 0x628af727fc192cc3, 0x8451ea26da18f9a5),
            (0x5bcfa8edcce2bf98, 0x8022fffeb08f8e52, 0xae51d30877483d15),
            (0xdbb49de4de702825, 0x0fea2cf49af71d89, 0x7e536e0f0e259a35),
        ];
        let inputs32: Vec<u32> = [0u32, 1, 0x8000, 0xffff]
            .iter()
            .flat_map(|&low| (0..65536u32).map(move |k| (k << 16) | low))
            .chain((0..65536u32).map(|i| i.wrapping_mul(0x9E37_79B9)))
            .collect();
        let inputs64: Vec<u64> = [0u64, 1, 1 << 47, (1 << 48) - 1]
            .iter()
            .flat_map(|&low| (0..65536u64).map(move |k| (k << 48) | low))
            .collect();
        for (k, want) in kinds().iter().zip(expected) {
            let table = fnv1a64((0..=255u8).flat_map(|b| (k.to_f32)(b).to_bits().to_le_bytes()));
            let from32 = fnv1a64(inputs32.iter().map(|&x| (k.from_f32)(f32::from_bits(x))));
            let from64 = fnv1a64(inputs64.iter().map(|&x| (k.from_f64)(f64::from_bits(x))));
            assert_eq!((table, from32, from64), want, "{}", k.name);
        }
    }

    #[test]
    fn types_are_one_byte_pod() {
        assert_eq!(core::mem::size_of::<Float8E5M2>(), 1);
        assert_eq!(core::mem::align_of::<Float4E2M1FN>(), 1);
        assert_eq!(core::mem::size_of::<Int4>(), 1);
        let raw = [0x38u8, 0x7e, 0xfe];
        let view: &[Float8E4M3FN] = bytemuck::cast_slice(&raw);
        assert_eq!(
            view.iter().map(|v| v.to_f32()).collect::<Vec<_>>(),
            [1.0, 448.0, -448.0]
        );
        let ints: &[Int4] = bytemuck::cast_slice(&raw);
        assert_eq!(ints[0].value(), -8);
        assert_eq!(Float8E5M2::default().to_f32(), 0.0);
    }

    #[test]
    fn equality_compares_bits_not_values() {
        assert_eq!(Float8E5M2(0x7e), Float8E5M2(0x7e));
        assert_ne!(Float8E5M2(0x7e), Float8E5M2(0x7d));
        assert_ne!(Float8E5M2(0x00), Float8E5M2(0x80));
        assert_eq!(Float8E4M3FN::from_f32(1.0), Float8E4M3FN::from_f64(1.0));
    }

    #[test]
    fn display_and_debug_print_the_value() {
        assert_eq!(Float8E4M3FN(0x7e).to_string(), "448");
        assert_eq!(Float8E5M2(0x7c).to_string(), "inf");
        assert_eq!(format!("{:.2}", Float4E2M1FN(0x3)), "1.50");
        assert_eq!(
            format!("{:?}", Float8E4M3FN(0x7e)),
            "Float8E4M3FN(448.0, 0x7e)"
        );
        assert_eq!(f32::from(Float8E5M2(0x3c)), 1.0);
        assert_eq!(f64::from(Float8E4M3FNUZ(0x7f)), 240.0);
    }

    #[test]
    fn subbyte_ints_wrap_on_new_and_ignore_upper_bits_on_read() {
        assert_eq!(Int4::new(-3).value(), -3);
        assert_eq!(Int4::new(9).value(), -7);
        assert_eq!(Int4::new(-3).0, 0x0d);
        assert_eq!(Int4::new(-8).value(), -8);
        assert_eq!(Int4::new(8).value(), -8);
        assert_eq!(Int4::new(7).value(), 7);
        assert_eq!(Int4(0x72).value(), 2);
        assert_eq!(Int4(-1).value(), -1);
        assert_eq!(Int4(0x7e).value(), -2);
        assert_eq!((Int4::MIN, Int4::MAX), (-8, 7));
        assert_eq!(UInt4::new(-1).value(), 15);
        assert_eq!(UInt4::new(16).value(), 0);
        assert_eq!(UInt4(0xf2).value(), 2);
        assert_eq!((UInt4::MIN, UInt4::MAX), (0, 15));
        assert_eq!(Int2::new(-2).value(), -2);
        assert_eq!(Int2::new(2).value(), -2);
        assert_eq!(Int2::new(3).value(), -1);
        assert_eq!(Int2::new(-3).value(), 1);
        assert_eq!(Int2(0x7e).value(), -2);
        assert_eq!((Int2::MIN, Int2::MAX), (-2, 1));
        assert_eq!(UInt2::new(-1).value(), 3);
        assert_eq!(UInt2::new(5).value(), 1);
        assert_eq!(UInt2(0xfe).value(), 2);
        assert_eq!((UInt2::MIN, UInt2::MAX), (0, 3));
        // Every value survives new -> value; every byte reads in range.
        for v in Int4::MIN..=Int4::MAX {
            assert_eq!(Int4::new(v).value(), v);
        }
        for v in Int2::MIN..=Int2::MAX {
            assert_eq!(Int2::new(v).value(), v);
        }
        for b in 0..=255u8 {
            assert!((Int4::MIN..=Int4::MAX).contains(&Int4(b as i8).value()));
            assert!((UInt2::MIN..=UInt2::MAX).contains(&UInt2(b).value()));
        }
    }

    #[test]
    fn subbyte_ints_compare_and_print_values() {
        assert_eq!(Int4(0x72), Int4(0x02));
        assert_ne!(Int4(0x01), Int4(0x02));
        assert_eq!(UInt2(0xfe), UInt2::new(2));
        assert_eq!(Int4::new(-3).to_string(), "-3");
        assert_eq!(UInt4::new(15).to_string(), "15");
        assert_eq!(Int2::new(-1).to_string(), "-1");
        assert_eq!(UInt2::new(3).to_string(), "3");
        assert_eq!(format!("{:?}", Int4::new(-3)), "Int4(-3)");
        assert_eq!(i32::from(UInt4::new(9)), 9);
        let hash = |v: Int4| {
            use std::collections::hash_map::DefaultHasher;
            let mut h = DefaultHasher::new();
            v.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(Int4(0x72)), hash(Int4(0x02)));
    }
}
