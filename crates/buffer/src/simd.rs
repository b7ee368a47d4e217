//! Vector instructions beyond baseline x86-64, behind safe functions: element conversions that
//! safe Rust cannot vectorise, and [`vectorized`] / [`vectorized_wide`], which run a kernel's
//! loop compiled for AVX2 or AVX-512 where the CPU has them ([`level`]; `TENSORCAST_SIMD` can
//! lower it).

use std::sync::atomic::{AtomicU8, Ordering};

/// Converts each `f32` to `i32` by truncation toward zero, with the x86 conversion
/// instruction's result for NaN, infinities and values out of range: `i32::MIN` (what
/// `cvttps2dq`/`cvttss2si` give, and so what TensorFlow's `Cast` gives on x86-64).
///
/// Safe Rust's `as` saturates instead, and on baseline x86-64 its vector form is slow; this
/// uses SSE2's packed `cvttps2dq`, four elements per instruction. Converts
/// `min(src.len(), dst.len())` elements.
///
/// ```
/// use tensorcast_buffer::simd::cvtt_f32_to_i32;
/// let mut out = [0i32; 6];
/// cvtt_f32_to_i32(&[1.9, -2.7, f32::NAN, f32::INFINITY, -3e9, 0.5], &mut out);
/// assert_eq!(out, [1, -2, i32::MIN, i32::MIN, i32::MIN, 0]);
/// ```
pub fn cvtt_f32_to_i32(src: &[f32], dst: &mut [i32]) {
    let n = src.len().min(dst.len());
    let (src, dst) = (&src[..n], &mut dst[..n]);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_cvttps_epi32, _mm_loadu_ps, _mm_storeu_si128};
        let (s4, s_tail) = src.as_chunks::<4>();
        let (d4, d_tail) = dst.as_chunks_mut::<4>();
        for (d, s) in d4.iter_mut().zip(s4) {
            // SAFETY: `s` is an array of exactly four `f32` (16 readable bytes), and the
            // unaligned load has no alignment requirement. SSE2 is part of the x86-64 baseline,
            // so the instruction always exists.
            let v = unsafe { _mm_loadu_ps(s.as_ptr()) };
            // SAFETY: SSE2 (the x86-64 baseline) is all the conversion needs.
            let r = unsafe { _mm_cvttps_epi32(v) };
            // SAFETY: `d` is an array of exactly four `i32` (16 writable bytes); the unaligned
            // store has no alignment requirement.
            unsafe { _mm_storeu_si128(d.as_mut_ptr().cast::<__m128i>(), r) };
        }
        for (d, &s) in d_tail.iter_mut().zip(s_tail) {
            *d = s.cvtt();
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = s.cvtt();
    }
}

/// An instruction set [`vectorized`] and [`vectorized_wide`] compile loops for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Baseline: SSE2 on x86-64, the target's own elsewhere.
    Baseline,
    /// AVX2 and FMA: 256-bit vectors.
    Avx2,
    /// AVX-512 (F, BW, VL, DQ) with FMA: 512-bit vectors.
    Avx512,
}

/// 0: not decided yet; otherwise `Level as u8 + 1`.
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The widest level [`vectorized_wide`] uses ([`vectorized`] stops at AVX2): the best the CPU
/// has, lowered by the environment variable `TENSORCAST_SIMD` (`baseline`, `avx2` or `avx512`;
/// a level the CPU lacks is never used), decided once per process. Tests set the variable to
/// run every code path on one machine.
///
/// ```
/// use tensorcast_buffer::simd::{level, Level};
/// assert!(level() >= Level::Baseline);
/// ```
#[inline]
pub fn level() -> Level {
    match LEVEL.load(Ordering::Relaxed) {
        1 => Level::Baseline,
        2 => Level::Avx2,
        3 => Level::Avx512,
        _ => decide_level(),
    }
}

#[cold]
fn decide_level() -> Level {
    let best = cpu_level();
    let wanted = match std::env::var_os("TENSORCAST_SIMD")
        .as_deref()
        .and_then(|v| v.to_str())
    {
        Some("baseline") => Level::Baseline,
        Some("avx2") => Level::Avx2,
        _ => Level::Avx512,
    };
    let l = best.min(wanted);
    LEVEL.store(l as u8 + 1, Ordering::Relaxed);
    l
}

/// The best level this CPU supports.
fn cpu_level() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if !(has!("avx2") && has!("fma")) {
            return Level::Baseline;
        }
        if has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("avx512dq") {
            return Level::Avx512;
        }
        Level::Avx2
    }
    #[cfg(not(target_arch = "x86_64"))]
    Level::Baseline
}

/// Runs `f` and returns its result; on x86-64 CPUs with AVX2 and FMA (see [`level`]), `f` runs
/// inside a function compiled for them, so that loops inlined into `f` vectorise 8 `f32` lanes
/// wide instead of baseline SSE2's 4. Elsewhere `f` is called plainly. The result is the same
/// at every level (the instructions differ, not the arithmetic: Rust never fuses `a * b + c`
/// into an FMA on its own, and an element-wise loop computes each element alone).
///
/// AVX2 is the widest this uses, even where the CPU has AVX-512: on the development machine's
/// AVX-512 CPU, memory-bound `f32` loops ran 20-25% slower compiled for 512-bit vectors
/// (`AddV2` of two 256 MiB tensors: 9.8-10.2 ms against 7.6-8.2 ms). Loops that are bound by
/// computation use [`vectorized_wide`].
///
/// The compiler may decline to inline a closure that holds a large loop, which then runs as
/// baseline code on every CPU: such loops go through [`vectorize`] and a [`Kernel`] instead.
///
/// Only code that is inlined into `f` is compiled for the wider vectors: write the loop in
/// `f`'s body or in `#[inline(always)]` functions it calls. The level is a cached load, cheap
/// enough to check once per block of a few KiB.
///
/// ```
/// use tensorcast_buffer::simd::vectorized;
/// let (a, b) = ([1.0f32; 64], [2.0f32; 64]);
/// let mut out = [0.0f32; 64];
/// vectorized(|| {
///     for ((o, x), y) in out.iter_mut().zip(&a).zip(&b) {
///         *o = x + y;
///     }
/// });
/// assert_eq!(out, [3.0; 64]);
/// ```
#[inline(always)]
pub fn vectorized<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if level() >= Level::Avx2 {
        // SAFETY: `with_avx2_fma`'s only requirement is that the CPU supports AVX2 and FMA;
        // `level` gives `Avx2` or above only when `cpu_level` detected both.
        return unsafe { with_avx2_fma(f) };
    }
    f()
}

/// [`vectorized`] for loops bound by computation rather than memory (the `bfloat16` and
/// `half` kernels, which convert every element to `float` and back): compiled for AVX-512
/// where the CPU has it (and [`level`] allows), else as [`vectorized`]. On the development
/// machine, `Mul` of 64M `bfloat16`s by a scalar took 4.1 ms this way against 6.5 ms with AVX2.
///
/// ```
/// use tensorcast_buffer::simd::vectorized_wide;
/// let a = [3u16; 40];
/// let mut out = [0u32; 40];
/// vectorized_wide(|| out.iter_mut().zip(&a).for_each(|(o, x)| *o = u32::from(*x) << 16));
/// assert_eq!(out, [3 << 16; 40]);
/// ```
#[inline(always)]
pub fn vectorized_wide<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if level() == Level::Avx512 {
        // SAFETY: `with_avx512`'s only requirement is that the CPU supports the features it
        // enables; `level` gives `Avx512` only when `cpu_level` detected all of them.
        return unsafe { with_avx512(f) };
    }
    vectorized(f)
}

/// Calls `f` in a function compiled with AVX2 and FMA (see [`vectorized`]); the caller must
/// have checked that the CPU has both.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
fn with_avx2_fma<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Calls `f` in a function compiled with AVX-512 F, BW, VL and DQ, AVX2 and FMA (see
/// [`vectorized`]); the caller must have checked that the CPU has them all.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")]
#[inline]
fn with_avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// A loop for [`vectorize`]: its data in the fields, the loop in [`Kernel::run`], which must be
/// `#[inline(always)]`.
///
/// Why not a closure: [`vectorized`] compiles its closure for AVX2 only if the compiler inlines
/// the closure into the function compiled for AVX2, and it is free not to. A closure has one
/// call per level (the AVX2 call and the plain one), so once a loop is inlined into it, it is
/// too large to be inlined into either and is compiled as a function of its own, for baseline
/// SSE2, whatever the CPU (found in 2026-11: 44 of the release binary's 1,004 AVX2 entries
/// were a jump to such a closure, among them the element-wise engine's broadcast-row loops).
/// A trait method marked `#[inline(always)]` is inlined into each level's function every time.
///
/// ```
/// use tensorcast_buffer::simd::{vectorize, Kernel};
///
/// struct Sum<'a>(&'a [f32]);
/// impl Kernel for Sum<'_> {
///     type Output = f32;
///     #[inline(always)]
///     fn run(self) -> f32 {
///         let mut lanes = [0f32; 8];
///         for c in self.0.chunks(8) {
///             for (l, x) in lanes.iter_mut().zip(c) {
///                 *l += x;
///             }
///         }
///         lanes.iter().sum()
///     }
/// }
/// assert_eq!(vectorize(Sum(&[1.0; 100])), 100.0);
/// ```
pub trait Kernel {
    /// What the loop gives.
    type Output;
    /// The loop. Mark it `#[inline(always)]`, and every function it calls in the loop.
    fn run(self) -> Self::Output;
}

/// Runs `kernel` compiled for AVX2 and FMA where the CPU has them (as [`vectorized`] runs a
/// closure, but certain to be compiled so: see [`Kernel`]), else plainly.
#[inline(always)]
pub fn vectorize<K: Kernel>(kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    if level() >= Level::Avx2 {
        // SAFETY: `run_avx2_fma`'s only requirement is that the CPU supports AVX2 and FMA;
        // `level` gives `Avx2` or above only when `cpu_level` detected both.
        return unsafe { run_avx2_fma(kernel) };
    }
    kernel.run()
}

/// [`vectorize`] for loops bound by computation: AVX-512 where the CPU has it and [`level`]
/// allows (as [`vectorized_wide`]), else as [`vectorize`].
#[inline(always)]
pub fn vectorize_wide<K: Kernel>(kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    if level() == Level::Avx512 {
        // SAFETY: `run_avx512`'s only requirement is that the CPU supports the features it
        // enables; `level` gives `Avx512` only when `cpu_level` detected all of them.
        return unsafe { run_avx512(kernel) };
    }
    vectorize(kernel)
}

/// Runs `kernel` in a function compiled with AVX2 and FMA; the caller must have checked that
/// the CPU has both.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
fn run_avx2_fma<K: Kernel>(kernel: K) -> K::Output {
    kernel.run()
}

/// Runs `kernel` in a function compiled with AVX-512 F, BW, VL and DQ, AVX2 and FMA; the
/// caller must have checked that the CPU has them all.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")]
#[inline]
fn run_avx512<K: Kernel>(kernel: K) -> K::Output {
    kernel.run()
}

/// x86's truncating conversion of one float to a signed integer (`cvttss2si`, `cvttsd2si`,
/// one lane of `cvttps2dq`): toward zero, or the "integer indefinite" value, the integer
/// type's `MIN`, for NaN, infinities and values out of range. The one statement of the rule,
/// for `f32` and `f64` to `i32` and `i64`: the reference (and the fallback off x86-64) of
/// [`cvtt_f32_to_i32`], and what TensorFlow's `Cast` gives one element at a time.
///
/// ```
/// use tensorcast_buffer::simd::Cvtt;
/// assert_eq!(Cvtt::<i32>::cvtt(-2.9f64), -2);
/// assert_eq!(Cvtt::<i32>::cvtt(3e9f64), i32::MIN);
/// assert_eq!(Cvtt::<i64>::cvtt(f32::NAN), i64::MIN);
/// ```
pub trait Cvtt<I>: Copy {
    /// Truncates toward zero, or gives `I::MIN` when `self` is NaN or the result does not fit.
    fn cvtt(self) -> I;
}

macro_rules! cvtt {
    ($($f:ty => $i:ty),*) => {$(
        impl Cvtt<$i> for $f {
            #[inline(always)]
            fn cvtt(self) -> $i {
                // `MIN` is minus a power of two, exact in both float types. A value below it
                // either truncates to `MIN` itself or is out of range, `MIN` both ways, so the
                // rule is: in range exactly when `MIN <= x < -MIN` (NaN fails both).
                const MIN: $f = <$i>::MIN as $f;
                if (MIN..-MIN).contains(&self) {
                    self as $i
                } else {
                    <$i>::MIN
                }
            }
        }
    )*};
}

cvtt!(f32 => i32, f32 => i64, f64 => i32, f64 => i64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_never_exceeds_the_cpu_or_the_override() {
        let l = level();
        assert!(l <= cpu_level());
        assert_eq!(level(), l, "decided once");
        match std::env::var("TENSORCAST_SIMD").as_deref() {
            Ok("baseline") => assert_eq!(l, Level::Baseline),
            Ok("avx2") => assert!(l <= Level::Avx2),
            _ => assert_eq!(l, cpu_level()),
        }
    }

    #[test]
    fn vectorized_returns_the_closures_result_bit_for_bit() {
        // Finite values only: Miri picks NaN payloads at random, so NaNs would not compare.
        let xs: Vec<f32> = (0..1003u32)
            .map(|i| f32::from_bits(i.wrapping_mul(2_654_435_761) & 0xbf7f_ffff))
            .collect();
        let plain: Vec<u32> = xs.iter().map(|x| (x * 1.5 + x).to_bits()).collect();
        let mut out = vec![0u32; xs.len()];
        let n = vectorized(|| {
            for (o, x) in out.iter_mut().zip(&xs) {
                *o = (x * 1.5 + x).to_bits();
            }
            xs.len()
        });
        assert_eq!(n, 1003);
        assert_eq!(out, plain);
    }

    #[test]
    fn packed_matches_the_scalar_rule_on_edges_and_a_sweep() {
        let mut xs = vec![
            0.0f32,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            2147483520.0,
            2147483648.0,
            -2147483648.0,
            -2147483904.0,
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            f32::MIN,
            1e-45,
            -1e-45,
            123_456.79,
            -98_765.43,
        ];
        let mut bits = 0x1234_5678u32;
        for _ in 0..4099 {
            bits = bits.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            xs.push(f32::from_bits(bits));
        }
        let mut out = vec![0i32; xs.len()];
        cvtt_f32_to_i32(&xs, &mut out);
        for (x, o) in xs.iter().zip(&out) {
            assert_eq!(*o, x.cvtt(), "{x:e}");
        }
        assert_eq!(Cvtt::<i32>::cvtt(-2147483648.0f32), i32::MIN);
        assert_eq!(Cvtt::<i32>::cvtt(2147483520.0f32), 2147483520);
    }
}
