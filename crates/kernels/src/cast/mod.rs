//! TensorFlow's `Cast`: element-wise conversion between the numeric dtypes and `bool`.
//!
//! Every pair of `bool`, `int8/16/32/64`, `uint8/16/32/64`, `half`, `bfloat16`, `float`,
//! `double`, `complex64` and `complex128` converts as TensorFlow 2.21's CPU kernel does (the
//! conformance vectors in `tests/conformance/cast.jsonl` are the judge). The quantized types
//! (`qint8`, `quint8`, `qint16`, `quint16`, `qint32`) convert as their underlying integers, as
//! TensorFlow's `CastOpBase` maps them.
//!
//! The rules, source by source:
//! - **integers** to integers wrap (two's complement, C++ `static_cast`); to `float`/`double`
//!   round to nearest even; to `half`/`bfloat16` go through `float` first (Eigen converts
//!   every non-float source to `float` first, so a large `int64` may round twice); to `bool`
//!   are `x != 0`; to complex give `(x, 0)`.
//! - **`bool`** gives 0 or 1 (any nonzero byte counts as true).
//! - **floats** to integers truncate toward zero. For NaN, infinities and values out of the
//!   target's range C++ defines no result, and TensorFlow gives whatever the x86 instructions
//!   give: this is **platform-defined** (another CPU, or another TensorFlow build, gives other
//!   numbers). tensorcast reproduces TensorFlow 2.21 on x86-64, because its conformance
//!   vectors pin those results down: the scalar code (`int32` and narrower: the low bits of
//!   a 32-bit `cvttss2si`, whose invalid result is `i32::MIN`; `int64`: `i64::MIN`; `uint32`:
//!   the low half of the 64-bit conversion; `uint64`: 2^63 for NaN and infinities) for the
//!   last `n % 8` (or `% 16`, `% 32`: see `vector_elems`) elements, and the vector code
//!   (saturating packs to 8- and 16-bit types for every source but `complex64`; `2^31` for
//!   invalid `uint32`) for the rest. The rules were fitted to TensorFlow 2.21 on this
//!   machine's CPU (every element of 4,200 recorded casts matches); a TensorFlow built for
//!   other vector instructions could differ. NaN never panics and nothing here is undefined
//!   behaviour. For results defined on every machine, use
//!   [`crate::cast::saturating::cast_clamped`], which saturates (NaN becomes 0).
//! - **Denormals**: TensorFlow runs its kernels with the SSE flags DAZ and FTZ set, so
//!   `float` to `double` reads a subnormal as zero, `double` to `float` (and to `bfloat16`,
//!   through `float`) flushes a subnormal result to zero, and `x != 0` (to `bool`) is false
//!   for a subnormal. Conversions done with bit operations (`float` to `bfloat16` and back,
//!   `half` through F16C) keep subnormals.
//! - `double` to `half` or `bfloat16` goes through `float` (Eigen's `half(double)` and
//!   `bfloat16(double)` convert to `float` first): two roundings, which can differ from one
//!   direct rounding (`1 + 2^-11 + 2^-40` becomes `1.0`, not `1 + 2^-10`).
//! - `float` to `bfloat16` rounds to nearest even; a NaN becomes the quiet NaN `0x7FC0`, or
//!   `0xFFC0` if negative, except in the vectorised part of a `float` tensor (all but its last
//!   `n % 8` elements), where TensorFlow makes every NaN `0x7FC0`. Overflow gives infinity.
//! - `float` to `half` rounds to nearest even (the `half` crate, which uses F16C when the CPU
//!   has it): overflow gives infinity, tiny values become subnormals or zero, NaN stays NaN
//!   (quiet, sign and the top payload bits kept, as F16C does).
//! - `bfloat16` to `float` is exact (the bits shifted left; NaN payloads kept as they are).
//! - **complex** to real keeps the real part (then converts it as above); to `bool` tests the
//!   real part only (`(0, 1)` is false, as TensorFlow gives); complex to complex converts
//!   both parts; real to complex gives an imaginary part of 0.
//! - Same dtype: the input itself is returned, sharing its buffer (TensorFlow forwards it).
//!   This holds for every dtype, strings included.
//!
//! `float8_e4m3fn` and `float8_e5m2` convert to every numeric dtype (as their exact `float`
//! value, with the rules above) and from `half`, `bfloat16`, `float`, `double` and each other
//! (rounding to nearest even as `ml_dtypes` does); `int4` and `uint4` convert from and to the
//! integer types and each other (their value; the low 4 bits going in). These are the pairs
//! TensorFlow 2.21 has kernels for. Anything else (string, resource, variant, the other
//! float8 and sub-byte types, `int4` to `float`...) is TensorFlow's `Unimplemented` error,
//! `Cast string to float is not supported`.
//!
//! Performance: each conversion is one loop over a slice ([`Writer::put_map`]) that the compiler
//! vectorises (the `bfloat16` rounding is integer arithmetic for that reason), written straight
//! into the output; `half` goes through the `half` crate's slice conversions (F16C at run time)
//! into an L1 block streamed out with non-temporal stores. Outputs of 1 MiB or more are split
//! over the rayon pool. Measured on the 2-core development machine, writing in place beat
//! staging through a streamed block for the element loops, and the reverse for `half`.
//! `float` to `int32` uses SSE2's packed `cvttps2dq` (through `tensorcast_buffer::simd`, which
//! gives exactly TensorFlow's x86 results). The other float-to-integer conversions stay scalar
//! (`cvttss2si` per element): safe Rust on baseline x86-64 cannot emit the packed form, so they
//! are compute-bound.

use std::borrow::Cow;
use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};
use num_complex::Complex;
use tensorcast_buffer::{cpu_allocator, Allocator, Writer};

use tensorcast_core::types::{
    Float8E4M3FN, Float8E5M2, Int4, QInt16, QInt32, QInt8, QUInt16, QUInt8, UInt4,
};
use tensorcast_core::x86::{daz32, daz64};
use tensorcast_core::{DataType, Tensor};
use tensorcast_core::{Error, Result};
use x86::X86Float;

mod saturate;
pub mod saturating;
mod x86;

/// Runs `$body` with `$T` the element type of a dtype `Cast` reads: the dtypes TensorFlow
/// 2.21's CPU kernel converts (`$fallback` for the rest).
macro_rules! cast_sources {
    ($d:expr, $T:ident => $body:expr, _ => $fallback:expr) => {
        tensorcast_core::dispatch!($d, {
            BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64,
            QINT8, QUINT8, QINT16, QUINT16, QINT32,
            HALF, BFLOAT16, FLOAT, DOUBLE, COMPLEX64, COMPLEX128,
            FLOAT8_E4M3FN, FLOAT8_E5M2, INT4, UINT4
        } $T => $body, _ => $fallback)
    };
}

/// [`cast_sources!`] for a destination other than `half` (which converts by slices, see
/// [`to_f16`]).
macro_rules! cast_destinations_but_half {
    ($d:expr, $T:ident => $body:expr, _ => $fallback:expr) => {
        tensorcast_core::dispatch!($d, {
            BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64,
            QINT8, QUINT8, QINT16, QUINT16, QINT32,
            BFLOAT16, FLOAT, DOUBLE, COMPLEX64, COMPLEX128,
            FLOAT8_E4M3FN, FLOAT8_E5M2, INT4, UINT4
        } $T => $body, _ => $fallback)
    };
}

/// Outputs at least this large are split over the rayon pool.
const PARALLEL_MIN_OUT_BYTES: usize = 1 << 20;

/// Elements per parallel piece.
const PIECE_ELEMS: usize = 1 << 16;

/// Elements TensorFlow's CPU kernel converts per vector step from `src` to `dst`: the last
/// `n % vector_elems(..)` elements of a tensor are converted by scalar code, which on x86 gives
/// other results for out-of-range float-to-integer conversions. (Observed: 32 for `float` to
/// 8- and 16-bit integers, 16 for `double`, `complex128` and `half` to them, 8 otherwise; it
/// only matters where the vector and scalar rules differ.)
fn vector_elems(src: DataType, dst: DataType) -> usize {
    let narrow = matches!(
        dst,
        DataType::INT8
            | DataType::INT16
            | DataType::UINT8
            | DataType::UINT16
            | DataType::QINT8
            | DataType::QINT16
            | DataType::QUINT8
            | DataType::QUINT16
    );
    match src {
        DataType::FLOAT if narrow => 32,
        DataType::DOUBLE | DataType::COMPLEX128 | DataType::HALF if narrow => 16,
        _ => 8,
    }
}

/// Elements of a staging block (8 KiB of `float`).
const BLOCK_ELEMS: usize = 2048;

/// `Cast(input, dtype)` with the default CPU allocator. See the [module docs](self) for the
/// conversion rules.
///
/// # Errors
/// As [`cast_in`] with the default allocator.
///
/// ```
/// use tensorcast_core::{DataType, Tensor, bf16};
/// use tensorcast_kernels::cast::cast;
/// let x = Tensor::vector(&[1.5f32, -2.7, 3.0e38, f32::NAN]);
/// let i = cast(&x, DataType::INT32)?;
/// // Truncation toward zero; out of range and NaN give what x86 gives (platform-defined).
/// assert_eq!(i.to_vec::<i32>()?, vec![1, -2, i32::MIN, i32::MIN]);
/// let b = cast(&x, DataType::BFLOAT16)?;
/// assert_eq!(b.as_slice::<bf16>()?[0], bf16::from_f32(1.5));
/// assert_eq!(b.as_slice::<bf16>()?[3].to_bits(), 0x7fc0);
/// let s = Tensor::vector(&[tensorcast_core::TString::from("a")]);
/// assert_eq!(cast(&s, DataType::FLOAT).unwrap_err().to_string(), "Cast string to float is not supported");
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn cast(input: &Tensor, dtype: DataType) -> Result<Tensor> {
    cast_in(&cpu_allocator(), input, dtype)
}

/// [`cast`] with the output allocated from `allocator`.
///
/// # Errors
/// [`Error::UnsupportedCast`] (`Cast string to float is not supported`, code `UNIMPLEMENTED`) for
/// a pair of dtypes TensorFlow has no `Cast` kernel for; [`Error::Uninitialized`] when `input` has
/// elements but no buffer; [`Error::Alloc`] when the allocator fails, [`Error::OutOfMemory`] when
/// the output's size does not fit in memory.
pub fn cast_in(allocator: &Arc<dyn Allocator>, input: &Tensor, dtype: DataType) -> Result<Tensor> {
    let src_dtype = input.dtype();
    if src_dtype == dtype && dtype.is_supported() {
        return Ok(input.clone());
    }
    if !pair_supported(src_dtype, dtype) {
        return Err(Error::UnsupportedCast {
            from: src_dtype,
            to: dtype,
        });
    }
    let n = input.shape().num_elements_usize();
    let bytes = input.tensor_data()?;
    if n > 0 && bytes.len() != n.saturating_mul(src_dtype.size()) {
        return Err(Error::Uninitialized {
            op: "Cast",
            dtype: src_dtype,
            elements: n as i64,
        });
    }
    let job = Job {
        allocator,
        shape: input.shape(),
        dtype,
        n,
        // TensorFlow's kernel converts all but the last few elements with vector code.
        head_len: n - n % vector_elems(src_dtype, dtype),
    };
    cast_sources!(src_dtype, S => job.run::<<S as Castable>::Repr>(bytes), _ => Err(Error::UnsupportedCast {
        from: src_dtype,
        to: dtype,
    }))
}

/// One cast: where the output goes and how the input splits into vector and scalar parts.
struct Job<'a> {
    allocator: &'a Arc<dyn Allocator>,
    shape: &'a tensorcast_core::TensorShape,
    dtype: DataType,
    n: usize,
    head_len: usize,
}

impl Job<'_> {
    /// Converts `bytes`, the input's elements as `S`, into the output (split over the rayon
    /// pool when large).
    fn run<S: Src>(&self, bytes: &[u8]) -> Result<Tensor> {
        let src = typed::<S>(bytes);
        let (n, head_len, dst) = (self.n, self.head_len, self.dtype);
        let run = |start: usize, end: usize, w: &mut Writer<'_>| {
            let mid = head_len.clamp(start, end);
            if mid > start {
                S::convert(&src[start..mid], dst, w, true);
            }
            if end > mid {
                S::convert(&src[mid..end], dst, w, false);
            }
        };
        let size = dst.size();
        Tensor::from_writer(self.allocator, dst, self.shape, |w| {
            if n.saturating_mul(size) >= PARALLEL_MIN_OUT_BYTES && rayon::current_num_threads() > 1
            {
                w.par_chunks(PIECE_ELEMS * size, |i, w| {
                    let start = i * PIECE_ELEMS;
                    run(start, (start + PIECE_ELEMS).min(n), w);
                });
            } else {
                run(0, n, w);
            }
        })
    }
}

/// `float` to `bfloat16` bits, rounding to nearest even; every NaN becomes `0x7FC0` (a quiet
/// NaN, as TensorFlow's vectorised conversion gives; its scalar code keeps the sign).
/// Branch-free, so loops over it vectorise.
#[inline(always)]
pub(crate) fn f32_to_bf16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    // Adding 0x7FFF plus the lowest kept bit carries into the kept bits exactly when the
    // dropped half is above one half, or exactly one half with an odd kept part. No finite
    // value or infinity overflows the u32 (the largest, -inf, is 0xFF80_0000).
    let rounded = (b.wrapping_add(0x7FFF + ((b >> 16) & 1)) >> 16) as u16;
    let nan = (b & 0x7FFF_FFFF) > 0x7F80_0000;
    if nan {
        0x7FC0
    } else {
        rounded
    }
}

/// [`f32_to_bf16_bits`] keeping a NaN's sign (`0xFFC0` for a negative NaN): what TensorFlow's
/// scalar code gives (every source but the vectorised part of a `float` tensor).
#[inline(always)]
fn f32_to_bf16_bits_signed_nan(x: f32) -> u16 {
    let sign = ((x.to_bits() >> 16) & 0x8000) as u16;
    let b = f32_to_bf16_bits(x);
    if x.is_nan() {
        b | sign
    } else {
        b
    }
}

/// `bfloat16` bits to `float`: exact, the bits shifted into the high half (NaN payloads kept).
#[inline(always)]
fn bf16_bits_to_f32(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}

/// The type `Cast` reads and writes an element of a dtype as: the element type itself, except
/// `bool` (read as its byte, [`B8`]) and the quantized types (their integers, as TensorFlow's
/// `CastOpBase` maps them).
trait Castable {
    type Repr: Src;
}

macro_rules! castable {
    ($($t:ty => $r:ty),* $(,)?) => {$( impl Castable for $t { type Repr = $r; } )*};
}
castable! {
    bool => B8, i8 => i8, i16 => i16, i32 => i32, i64 => i64,
    u8 => u8, u16 => u16, u32 => u32, u64 => u64,
    QInt8 => i8, QUInt8 => u8, QInt16 => i16, QUInt16 => u16, QInt32 => i32,
    f16 => f16, bf16 => bf16, f32 => f32, f64 => f64,
    Complex<f32> => Complex<f32>, Complex<f64> => Complex<f64>,
    Float8E4M3FN => Float8E4M3FN, Float8E5M2 => Float8E5M2, Int4 => Int4, UInt4 => UInt4,
}

/// The pairs TensorFlow 2.21's `Cast` has kernels for. The 20 classic numeric dtypes (with
/// the quantized ones) convert between every pair; among those involving `float8` and 4-bit
/// integers (observed: `tests/tf_observed/cast_extra.jsonl`), a `float8` converts to every
/// numeric dtype and from the real floating types; `int4`/`uint4` convert from and to the
/// integer types (and each other).
fn pair_supported(src: DataType, dst: DataType) -> bool {
    let castable = |d: DataType| cast_sources!(d, T => true, _ => false);
    let f8 = |d: DataType| matches!(d, DataType::FLOAT8_E4M3FN | DataType::FLOAT8_E5M2);
    let i4 = |d: DataType| matches!(d, DataType::INT4 | DataType::UINT4);
    let int = |d: DataType| d.is_integer() || d.is_quantized();
    let real_float = |d: DataType| {
        matches!(
            d,
            DataType::HALF | DataType::BFLOAT16 | DataType::FLOAT | DataType::DOUBLE
        )
    };
    if !castable(src) || !castable(dst) {
        return false;
    }
    match (f8(src) || i4(src), f8(dst) || i4(dst)) {
        (false, false) => true,
        _ if f8(src) => !i4(dst),
        _ if f8(dst) => real_float(src) || f8(src),
        _ => int(src) && int(dst),
    }
}

/// A `bool` element as its byte (any nonzero byte reads as true; output is always 0 or 1).
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(transparent)]
struct B8(u8);

/// A `half` element already widened to `float` (exact): a source of its own, because
/// TensorFlow's vectorised `half` conversions treat out-of-range values differently.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(transparent)]
struct H32(f32);

// ----- x86 semantics ---------------------------------------------------------------------
//
// TensorFlow runs kernels with the SSE flags DAZ and FTZ set (denormal inputs read as zero,
// denormal results flushed to zero), and its float-to-integer conversions are whatever the x86
// instructions give for values C++ leaves undefined: the first is core's
// `tensorcast_core::x86`, the second `x86` here.

/// `double` to `float` as `cvtsd2ss` with DAZ and FTZ: a result below the normal range is a
/// zero of the same sign.
#[inline(always)]
fn f64_to_f32_ftz(x: f64) -> f32 {
    daz32(x as f32)
}

/// An integer destination: its range as `i32`, and wrapping conversions.
trait IntDst: Copy {
    const MIN32: i32;
    const MAX32: i32;
    fn wrap32(v: i32) -> Self;
    fn wrap64(v: i64) -> Self;
}

macro_rules! int_dst_consts {
    ($($t:ty: $min:expr, $max:expr);* $(;)?) => {$(
        impl IntDst for $t {
            const MIN32: i32 = $min;
            const MAX32: i32 = $max;
            #[inline(always)]
            fn wrap32(v: i32) -> Self { v as $t }
            #[inline(always)]
            fn wrap64(v: i64) -> Self { v as $t }
        }
    )*};
}
int_dst_consts! {
    i8: i8::MIN as i32, i8::MAX as i32;
    i16: i16::MIN as i32, i16::MAX as i32;
    i32: i32::MIN, i32::MAX;
    i64: i32::MIN, i32::MAX;
    u8: 0, u8::MAX as i32;
    u16: 0, u16::MAX as i32;
    u32: i32::MIN, i32::MAX;
    u64: i32::MIN, i32::MAX;
}

// The conversion rules, named for the code compilers emit for them.

/// Scalar `static_cast` to a type of at most 32 bits (`int32` or narrower): `cvtt*2si` to 32
/// bits, then the low bits.
#[inline(always)]
fn r_cvt32<T: IntDst, F: X86Float>(x: F) -> T {
    T::wrap32(x.cvtt32())
}

/// Scalar `static_cast` to `int64`, and to `uint32` (converted as 64 bits, then the low half).
#[inline(always)]
fn r_cvt64<T: IntDst, F: X86Float>(x: F) -> T {
    T::wrap64(x.cvtt64())
}

/// `uint64`: the branch-free x86-64 sequence `r | (cvtt(x - 2^63) & (r >> 63))`.
#[inline(always)]
fn r_u64<T: IntDst, F: X86Float>(x: F) -> T {
    let r = x.cvtt64();
    let hi = x.minus_2_63().cvtt64();
    T::wrap64(r | (hi & (r >> 63)))
}

/// Vectorised `uint32` (the AVX2 lowering): `r | (cvtt(x - 2^31) & (r >> 31))`.
#[inline(always)]
fn r_u32_vec<T: IntDst, F: X86Float>(x: F) -> T {
    let r = x.cvtt32();
    let hi = x.minus_2_31().cvtt32();
    T::wrap32(r | (hi & (r >> 31)))
}

/// Vectorised narrowing with saturating packs: `cvtt` to 32 bits, then clamped to the type.
#[inline(always)]
fn r_pack_sat<T: IntDst, F: X86Float>(x: F) -> T {
    T::wrap32(x.cvtt32().clamp(T::MIN32, T::MAX32))
}

/// Vectorised `uint8` through `packusdw` then `packuswb`: clamped to `[0, 65535]`, read as a
/// signed 16-bit value, clamped to `[0, 255]`.
#[inline(always)]
fn r_pack_u16_u8<T: IntDst, F: X86Float>(x: F) -> T {
    let v = x.cvtt32().clamp(0, 65535) as u16 as i16;
    T::wrap32(i32::from(v.clamp(0, 255)))
}

/// A destination element: how each kind of source value converts to it.
///
/// The `head_*` constructors are for elements in the part of a tensor that TensorFlow's CPU
/// kernel converts with vector instructions (all but the last few), where x86 gives
/// different results for out-of-range float-to-integer conversions than the scalar code does;
/// they differ from the plain constructors only for integer destinations.
trait Dst: Pod + Send + Sync {
    fn from_bool(b: bool) -> Self;
    fn from_i64(x: i64) -> Self;
    fn from_u64(x: u64) -> Self;
    fn from_f32(x: f32) -> Self;
    fn from_f64(x: f64) -> Self;
    /// From a `half` widened to `float` (exactly).
    #[inline(always)]
    fn from_f16(x: f32) -> Self {
        Self::from_f32(x)
    }
    /// From a `bfloat16` widened to `float` (exactly).
    #[inline(always)]
    fn from_bf16(x: f32) -> Self {
        Self::from_f32(x)
    }
    /// From a `complex64`: the real part unless the destination is complex.
    #[inline(always)]
    fn from_c64(re: f32, _im: f32) -> Self {
        Self::from_f32(re)
    }
    /// From a `complex128`: the real part unless the destination is complex.
    #[inline(always)]
    fn from_c128(re: f64, _im: f64) -> Self {
        Self::from_f64(re)
    }
    /// A `float` or `complex64` source in the vectorised part.
    #[inline(always)]
    fn head_f32(x: f32) -> Self {
        Self::from_f32(x)
    }
    /// A `double` or `complex128` source in the vectorised part.
    #[inline(always)]
    fn head_f64(x: f64) -> Self {
        Self::from_f64(x)
    }
    /// A `half` source (widened to `float`) in the vectorised part.
    #[inline(always)]
    fn head_f16(x: f32) -> Self {
        Self::from_f16(x)
    }
    /// A `bfloat16` source (widened to `float`) in the vectorised part.
    #[inline(always)]
    fn head_bf16(x: f32) -> Self {
        Self::from_bf16(x)
    }
    /// A `complex64` source in the vectorised part.
    #[inline(always)]
    fn head_c64(re: f32, im: f32) -> Self {
        Self::from_c64(re, im)
    }
    /// A `complex128` source in the vectorised part.
    #[inline(always)]
    fn head_c128(re: f64, im: f64) -> Self {
        Self::from_c128(re, im)
    }
}

/// A source element: converts itself through the matching [`Dst`] constructor.
trait Src: Pod + Send + Sync {
    fn to<D: Dst>(self) -> D;
    /// The conversion in the vectorised part of the tensor (see [`Dst`]).
    #[inline(always)]
    fn to_head<D: Dst>(self) -> D {
        self.to::<D>()
    }
    /// Appends every element converted to `dst` (serially); `head` says the elements lie in
    /// the part TensorFlow converts with vector instructions. Sources with a faster path for
    /// some destinations (`float`, `half`) override it.
    fn convert(src: &[Self], dst: DataType, w: &mut Writer<'_>, head: bool) {
        to_dst(src, dst, w, head);
    }
}

// Integer destinations. Columns: the scalar rule; then the vectorised rule for sources of
// `float`, `complex64`, `double`, `complex128`, `half` and `bfloat16`. Fitted to TensorFlow
// 2.21 on x86-64: the shared conformance vectors, plus 4,200 casts between every numeric pair
// at 20 sizes from 1 to 4,099 elements, recorded with TensorFlow on this machine; every element
// of them matches.
macro_rules! int_dst {
    ($($t:ty: $s:ident, $f32:ident, $c64:ident, $f64:ident, $c128:ident, $f16:ident, $bf16:ident;)*) => {$(
        impl Dst for $t {
            #[inline(always)]
            fn from_bool(b: bool) -> Self { <$t>::from(b) }
            #[inline(always)]
            fn from_i64(x: i64) -> Self { x as $t }
            #[inline(always)]
            fn from_u64(x: u64) -> Self { x as $t }
            #[inline(always)]
            fn from_f32(x: f32) -> Self { $s::<$t, f32>(x) }
            #[inline(always)]
            fn from_f64(x: f64) -> Self { $s::<$t, f64>(x) }
            #[inline(always)]
            fn head_f32(x: f32) -> Self { $f32::<$t, f32>(x) }
            #[inline(always)]
            fn head_f64(x: f64) -> Self { $f64::<$t, f64>(x) }
            #[inline(always)]
            fn head_f16(x: f32) -> Self { $f16::<$t, f32>(x) }
            #[inline(always)]
            fn head_bf16(x: f32) -> Self { $bf16::<$t, f32>(x) }
            #[inline(always)]
            fn head_c64(re: f32, _im: f32) -> Self { $c64::<$t, f32>(re) }
            #[inline(always)]
            fn head_c128(re: f64, _im: f64) -> Self { $c128::<$t, f64>(re) }
        }
    )*};
}
int_dst! {
    i8: r_cvt32, r_pack_sat, r_cvt32, r_pack_sat, r_pack_sat, r_pack_sat, r_pack_sat;
    i16: r_cvt32, r_pack_sat, r_cvt32, r_pack_sat, r_pack_sat, r_pack_sat, r_pack_sat;
    u8: r_cvt32, r_pack_sat, r_cvt32, r_pack_u16_u8, r_pack_u16_u8, r_pack_u16_u8, r_pack_sat;
    u16: r_cvt32, r_pack_sat, r_cvt32, r_pack_sat, r_pack_sat, r_pack_sat, r_pack_sat;
    i32: r_cvt32, r_cvt32, r_cvt32, r_cvt32, r_cvt32, r_cvt32, r_cvt32;
    i64: r_cvt64, r_cvt64, r_cvt64, r_cvt64, r_cvt64, r_cvt64, r_cvt64;
    u32: r_cvt64, r_u32_vec, r_u32_vec, r_u32_vec, r_cvt64, r_u32_vec, r_u32_vec;
    u64: r_u64, r_u64, r_u64, r_u64, r_u64, r_u64, r_u64;
}

// Real floating destinations: integers round to nearest even, `double` to `float` flushes a
// subnormal result and `float` to `double` reads a subnormal as zero (DAZ/FTZ).
macro_rules! float_dst {
    ($($t:ty: from_f32 $f32:expr, from_f64 $f64:expr;)*) => {$(
        impl Dst for $t {
            #[inline(always)]
            fn from_bool(b: bool) -> Self { <$t>::from(u8::from(b)) }
            #[inline(always)]
            fn from_i64(x: i64) -> Self { x as $t }
            #[inline(always)]
            fn from_u64(x: u64) -> Self { x as $t }
            #[inline(always)]
            fn from_f32(x: f32) -> Self { $f32(x) }
            #[inline(always)]
            fn from_f64(x: f64) -> Self { $f64(x) }
        }
    )*};
}
float_dst! {
    f32: from_f32 |x| x, from_f64 f64_to_f32_ftz;
    f64: from_f32 |x| f64::from(daz32(x)), from_f64 |x| x;
}

/// A complex destination: each part converts as its real type does; a real source gives an
/// imaginary part of 0.
impl<R: Dst> Dst for Complex<R>
where
    Complex<R>: Pod,
{
    #[inline(always)]
    fn from_bool(b: bool) -> Self {
        Complex::new(R::from_bool(b), R::zeroed())
    }
    #[inline(always)]
    fn from_i64(x: i64) -> Self {
        Complex::new(R::from_i64(x), R::zeroed())
    }
    #[inline(always)]
    fn from_u64(x: u64) -> Self {
        Complex::new(R::from_u64(x), R::zeroed())
    }
    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        Complex::new(R::from_f32(x), R::zeroed())
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        Complex::new(R::from_f64(x), R::zeroed())
    }
    #[inline(always)]
    fn from_c64(re: f32, im: f32) -> Self {
        Complex::new(R::from_f32(re), R::from_f32(im))
    }
    #[inline(always)]
    fn from_c128(re: f64, im: f64) -> Self {
        Complex::new(R::from_f64(re), R::from_f64(im))
    }
}

impl Dst for B8 {
    #[inline(always)]
    fn from_bool(b: bool) -> Self {
        B8(u8::from(b))
    }
    #[inline(always)]
    fn from_i64(x: i64) -> Self {
        B8(u8::from(x != 0))
    }
    #[inline(always)]
    fn from_u64(x: u64) -> Self {
        B8(u8::from(x != 0))
    }
    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        // C++'s `x != 0` under DAZ: NaN is true, zeros and subnormals are false.
        B8(u8::from(daz32(x) != 0.0))
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        B8(u8::from(daz64(x) != 0.0))
    }
    #[inline(always)]
    fn from_bf16(x: f32) -> Self {
        // Eigen's `bfloat16` to `bool` tests the bits: only the two zeros are false.
        B8(u8::from(x != 0.0))
    }
}

impl Dst for bf16 {
    #[inline(always)]
    fn from_bool(b: bool) -> Self {
        bf16::from_bits(if b { 0x3F80 } else { 0 })
    }
    #[inline(always)]
    fn from_i64(x: i64) -> Self {
        Self::from_f32(x as f32)
    }
    #[inline(always)]
    fn from_u64(x: u64) -> Self {
        Self::from_f32(x as f32)
    }
    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        bf16::from_bits(f32_to_bf16_bits_signed_nan(x))
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        // NaN is decided on the `double` itself: after the narrowing, the optimiser is free to
        // treat the NaN's bits as unspecified (observed: the NaN test folded away).
        if x.is_nan() {
            let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
            bf16::from_bits(0x7FC0 | sign)
        } else {
            Self::from_f32(f64_to_f32_ftz(x))
        }
    }
    /// TensorFlow's vectorised `float` to `bfloat16` makes every NaN `0x7FC0`.
    #[inline(always)]
    fn head_f32(x: f32) -> Self {
        bf16::from_bits(f32_to_bf16_bits(x))
    }
}

macro_rules! signed_src {
    ($($t:ty),*) => {$(
        impl Src for $t {
            #[inline(always)]
            fn to<D: Dst>(self) -> D { D::from_i64(self as i64) }
        }
    )*};
}
signed_src!(i8, i16, i32, i64);

macro_rules! unsigned_src {
    ($($t:ty),*) => {$(
        impl Src for $t {
            #[inline(always)]
            fn to<D: Dst>(self) -> D { D::from_u64(self as u64) }
        }
    )*};
}
unsigned_src!(u8, u16, u32, u64);

impl Src for B8 {
    #[inline(always)]
    fn to<D: Dst>(self) -> D {
        D::from_bool(self.0 != 0)
    }
}

impl Src for f32 {
    #[inline(always)]
    fn to<D: Dst>(self) -> D {
        D::from_f32(self)
    }
    #[inline(always)]
    fn to_head<D: Dst>(self) -> D {
        D::head_f32(self)
    }
    fn convert(src: &[Self], dst: DataType, w: &mut Writer<'_>, head: bool) {
        match dst {
            DataType::INT32 | DataType::QINT32 => f32_to_i32(src, w),
            DataType::HALF => f32_to_f16(src, w),
            _ => to_dst(src, dst, w, head),
        }
    }
}

impl Src for f64 {
    #[inline(always)]
    fn to<D: Dst>(self) -> D {
        D::from_f64(self)
    }
    #[inline(always)]
    fn to_head<D: Dst>(self) -> D {
        D::head_f64(self)
    }
}

impl Src for H32 {
    #[inline(always)]
    fn to<D: Dst>(self) -> D {
        D::from_f16(self.0)
    }
    #[inline(always)]
    fn to_head<D: Dst>(self) -> D {
        D::head_f16(self.0)
    }
}

impl Src for f16 {
    /// Element by element; bulk `half` sources take the slice path (`from_f16`).
    #[inline(always)]
    fn to<D: Dst>(self) -> D {
        D::from_f16(self.to_f32())
    }
    #[inline(always)]
    fn to_head<D: Dst>(self) -> D {
        D::head_f16(self.to_f32())
    }
    fn convert(src: &[Self], dst: DataType, w: &mut Writer<'_>, head: bool) {
        match dst {
            DataType::FLOAT => f16_to_f32(src, w),
            _ => from_f16(src, dst, w, head),
        }
    }
}

impl Src for bf16 {
    #[inline(always)]
    fn to<D: Dst>(self) -> D {
        D::from_bf16(bf16_bits_to_f32(self.to_bits()))
    }
    #[inline(always)]
    fn to_head<D: Dst>(self) -> D {
        D::head_bf16(bf16_bits_to_f32(self.to_bits()))
    }
}

impl Src for Complex<f32> {
    #[inline(always)]
    fn to<D: Dst>(self) -> D {
        D::from_c64(self.re, self.im)
    }
    #[inline(always)]
    fn to_head<D: Dst>(self) -> D {
        D::head_c64(self.re, self.im)
    }
}

impl Src for Complex<f64> {
    #[inline(always)]
    fn to<D: Dst>(self) -> D {
        D::from_c128(self.re, self.im)
    }
    #[inline(always)]
    fn to_head<D: Dst>(self) -> D {
        D::head_c128(self.re, self.im)
    }
}

// `float8` and 4-bit integers: a `float8` source is its exact `float` value with the scalar rules; a `float8`
// destination rounds to nearest even the `ml_dtypes` way; 4-bit integers convert as their
// value and keep the low 4 bits.
macro_rules! float8 {
    ($($t:ty),*) => {$(
        impl Src for $t {
            #[inline(always)]
            fn to<D: Dst>(self) -> D {
                D::from_f32(self.to_f32())
            }
            /// Observed: the vector part follows `complex64`'s rules (only `uint32` differs).
            #[inline(always)]
            fn to_head<D: Dst>(self) -> D {
                D::head_c64(self.to_f32(), 0.0)
            }
        }
        impl Dst for $t {
            #[inline(always)]
            fn from_bool(b: bool) -> Self { Self::from_f32(f32::from(u8::from(b))) }
            #[inline(always)]
            fn from_i64(x: i64) -> Self { Self::from_f32(x as f32) }
            #[inline(always)]
            fn from_u64(x: u64) -> Self { Self::from_f32(x as f32) }
            #[inline(always)]
            fn from_f32(x: f32) -> Self { <$t>::from_f32(x) }
            #[inline(always)]
            fn from_f64(x: f64) -> Self { <$t>::from_f64(x) }
        }
    )*};
}
float8!(Float8E4M3FN, Float8E5M2);

macro_rules! int4 {
    ($($t:ty),*) => {$(
        impl Src for $t {
            #[inline(always)]
            fn to<D: Dst>(self) -> D {
                D::from_i64(i64::from(self.value()))
            }
        }
        impl Dst for $t {
            #[inline(always)]
            fn from_bool(b: bool) -> Self { <$t>::new(i32::from(b)) }
            #[inline(always)]
            fn from_i64(x: i64) -> Self { <$t>::new(x as i32) }
            #[inline(always)]
            fn from_u64(x: u64) -> Self { <$t>::new(x as i32) }
            #[inline(always)]
            fn from_f32(x: f32) -> Self { <$t>::new(r_cvt32::<i32, f32>(x)) }
            #[inline(always)]
            fn from_f64(x: f64) -> Self { <$t>::new(r_cvt32::<i32, f64>(x)) }
        }
    )*};
}
int4!(Int4, UInt4);

/// The input's elements, typed (borrowed when the bytes are aligned for the type, copied
/// otherwise: a tensor adopted from foreign memory may be unaligned).
fn typed<T: Pod>(bytes: &[u8]) -> Cow<'_, [T]> {
    match bytemuck::try_cast_slice(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(bytemuck::pod_collect_to_vec(bytes)),
    }
}

/// `float` to `int32`: truncation, and `i32::MIN` for NaN, infinities and out-of-range values
/// in both TensorFlow's scalar and vector code, which is exactly SSE2's packed `cvttps2dq`
/// (`tensorcast_buffer::simd`, four elements per instruction; safe Rust's `as` saturates, and
/// its vector form is slow on baseline x86-64).
fn f32_to_i32(src: &[f32], w: &mut Writer<'_>) {
    w.put_with::<i32>(src.len(), |start, out| {
        tensorcast_buffer::simd::cvtt_f32_to_i32(&src[start..start + out.len()], out)
    });
}

/// Converts `src` to the element type of `dst`.
fn to_dst<S: Src>(src: &[S], dst: DataType, w: &mut Writer<'_>, head: bool) {
    if dst == DataType::HALF {
        return to_f16(src, w);
    }
    cast_destinations_but_half!(dst, D => {
        type R = <D as Castable>::Repr;
        if head {
            w.put_map(src, |x| x.to_head::<R>())
        } else {
            w.put_map(src, |x| x.to::<R>())
        }
    }, _ => {
        // `pair_supported` admitted only dtypes of the lists; nothing else reaches here.
    })
}

/// `float` to `half` with the `half` crate's slice conversion (F16C when present).
fn f32_to_f16(src: &[f32], w: &mut Writer<'_>) {
    let mut block = vec![f16::ZERO; BLOCK_ELEMS.min(src.len())];
    for piece in src.chunks(BLOCK_ELEMS) {
        let out = &mut block[..piece.len()];
        out.convert_from_f32_slice(piece);
        w.put_slice(bytemuck::cast_slice(out));
    }
}

/// `half` to `float` with the `half` crate's slice conversion (F16C when present).
fn f16_to_f32(src: &[f16], w: &mut Writer<'_>) {
    let mut block = vec![0f32; BLOCK_ELEMS.min(src.len())];
    for piece in src.chunks(BLOCK_ELEMS) {
        let out = &mut block[..piece.len()];
        piece.convert_to_f32_slice(out);
        w.put_slice(bytemuck::cast_slice(out));
    }
}

/// Any source to `half`: first to `float` (exactly what Eigen's `half(T)` does), then the
/// slice conversion.
fn to_f16<S: Src>(src: &[S], w: &mut Writer<'_>) {
    let n = BLOCK_ELEMS.min(src.len());
    let mut tmp = vec![0f32; n];
    let mut block = vec![f16::ZERO; n];
    for piece in src.chunks(BLOCK_ELEMS) {
        let t = &mut tmp[..piece.len()];
        for (o, &x) in t.iter_mut().zip(piece) {
            *o = x.to::<f32>();
        }
        let out = &mut block[..piece.len()];
        out.convert_from_f32_slice(t);
        w.put_slice(bytemuck::cast_slice(out));
    }
}

/// `half` to anything but `half` and `float`: widened to `float` exactly a block at a time
/// (F16C), then converted as a `half` source.
fn from_f16(src: &[f16], dst: DataType, w: &mut Writer<'_>, head: bool) {
    let mut tmp = vec![H32(0.0); BLOCK_ELEMS.min(src.len())];
    for piece in src.chunks(BLOCK_ELEMS) {
        let t = &mut tmp[..piece.len()];
        piece.convert_to_f32_slice(bytemuck::cast_slice_mut(t));
        to_dst::<H32>(t, dst, w, head);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_to_bf16_bits_rounds_to_even_and_quiets_nan() {
        assert_eq!(f32_to_bf16_bits(1.0), 0x3f80);
        assert_eq!(f32_to_bf16_bits(f32::from_bits(0x3f80_8000)), 0x3f80);
        assert_eq!(f32_to_bf16_bits(f32::from_bits(0x3f81_8000)), 0x3f82);
        assert_eq!(f32_to_bf16_bits(f32::MAX), 0x7f80);
        assert_eq!(f32_to_bf16_bits(-f32::NAN), 0x7fc0);
    }

    #[test]
    fn bf16_bits_match_half_crate_except_nan() {
        for bits in (0u32..=u32::MAX).step_by(9973) {
            let x = f32::from_bits(bits);
            let want = if x.is_nan() {
                0x7FC0
            } else {
                bf16::from_f32(x).to_bits()
            };
            assert_eq!(f32_to_bf16_bits(x), want, "{bits:#x}");
        }
    }

    #[test]
    fn cast_reprs_have_the_dtypes_sizes() {
        for d in DataType::all() {
            let size = cast_sources!(d, T => Some(std::mem::size_of::<<T as Castable>::Repr>()), _ => None);
            if let Some(size) = size {
                assert_eq!(size, d.size(), "{}", d.name());
            }
        }
    }
}
