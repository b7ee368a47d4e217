//! Element conversions that safe Rust cannot vectorise on baseline x86-64, as safe functions.

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
            *d = cvtt_scalar(s);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = cvtt_scalar(s);
    }
}

/// The same rule one element at a time (the reference, and the fallback off x86-64).
pub fn cvtt_scalar(x: f32) -> i32 {
    // In range exactly when -2^31 <= x < 2^31 (NaN fails both comparisons).
    if (-2147483648.0..2147483648.0).contains(&x) {
        x as i32
    } else {
        i32::MIN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_eq!(*o, cvtt_scalar(*x), "{x:e}");
        }
        assert_eq!(cvtt_scalar(-2147483648.0), i32::MIN);
        assert_eq!(cvtt_scalar(2147483520.0), 2147483520);
    }
}
