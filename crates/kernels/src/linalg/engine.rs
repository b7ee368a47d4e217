//! The batched matrix product every linear-algebra and convolution kernel ends in:
//! `out[i] = op(a[p_i]) x op(b[q_i])` over a list of batch pairs, on the `gemm` crate for
//! `f32`, `f64`, `complex64` and `complex128` (through `tensorcast_buffer::gemm`), in `f32`
//! for `half` and `bfloat16` (as TensorFlow's CPU kernels accumulate them: inputs widened,
//! one `f32` product, the result rounded once), and with wrapping integer arithmetic for the
//! integer types (Eigen's, which TensorFlow's integer kernels use).
//!
//! Large single products are split across the rayon pool by `gemm`; many small ones run one
//! per task.

use half::slice::HalfFloatSliceExt;
use rayon::prelude::*;
use tensorcast_buffer::gemm::{matmul, GemmError, MatRef, Scalar};
use tensorcast_core::{bf16, f16, Complex32, Complex64, DataType, Element, Error, Result};

use super::util::try_vec;

/// One product's geometry: `out` (`m x n`, row-major) `= op(a) x op(b)` with `op(a)` of
/// `m x k` (stored `m x k` row-major, or `k x m` when `trans_a`) and `op(b)` of `k x n`
/// (stored `k x n`, or `n x k` when `trans_b`); `conj_*` conjugates (complex only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    pub(crate) trans_a: bool,
    pub(crate) trans_b: bool,
    pub(crate) conj_a: bool,
    pub(crate) conj_b: bool,
}

impl Geometry {
    /// A plain product of row-major `m x k` and `k x n` matrices.
    #[allow(dead_code, reason = "used by the convolutions")]
    pub(crate) fn plain(m: usize, n: usize, k: usize) -> Self {
        Self {
            m,
            n,
            k,
            trans_a: false,
            trans_b: false,
            conj_a: false,
            conj_b: false,
        }
    }
}

/// Multiply-adds in one product from which `gemm` may split it across threads, and below which
/// a batch of products runs one product per rayon task instead.
const PARALLEL_MIN_FLOPS: usize = 1 << 18;

/// An element type with a batched matrix product.
pub(crate) trait GemmElement: Element + Copy + Send + Sync {
    /// `out[i*m*n..][..m*n] = op(a[p*m*k..]) x op(b[q*k*n..])` for each `(p, q) = pairs[i]`.
    fn batched(
        a: &[Self],
        b: &[Self],
        out: &mut [Self],
        g: &Geometry,
        pairs: &[(usize, usize)],
    ) -> Result<()>;
}

fn gemm_error(e: GemmError) -> Error {
    Error::Internal(e.to_string())
}

fn operands<'a, T>(
    a: &'a [T],
    b: &'a [T],
    g: &Geometry,
    p: usize,
    q: usize,
) -> (MatRef<'a, T>, MatRef<'a, T>) {
    let (sa, sb) = (g.m * g.k, g.k * g.n);
    let da = &a[p * sa..(p + 1) * sa];
    let db = &b[q * sb..(q + 1) * sb];
    let la = if g.trans_a {
        MatRef::col_major(da, g.m, g.k)
    } else {
        MatRef::row_major(da, g.m, g.k)
    };
    let lb = if g.trans_b {
        MatRef::col_major(db, g.k, g.n)
    } else {
        MatRef::row_major(db, g.k, g.n)
    };
    (la, lb)
}

fn check_lengths<T>(
    a: &[T],
    b: &[T],
    out: &[T],
    g: &Geometry,
    pairs: &[(usize, usize)],
) -> Result<()> {
    let (sa, sb, so) = (g.m * g.k, g.k * g.n, g.m * g.n);
    let fits = out.len() == so * pairs.len()
        && pairs
            .iter()
            .all(|&(p, q)| (p + 1) * sa <= a.len() && (q + 1) * sb <= b.len());
    if fits {
        Ok(())
    } else {
        Err(Error::Internal(format!(
            "batched matmul: operands of {} and {} elements do not fit {g:?} over {} pairs",
            a.len(),
            b.len(),
            pairs.len()
        )))
    }
}

fn gemm_batched<T: Scalar + Element>(
    a: &[T],
    b: &[T],
    out: &mut [T],
    g: &Geometry,
    pairs: &[(usize, usize)],
) -> Result<()> {
    let so = g.m * g.n;
    if so == 0 || pairs.is_empty() {
        return Ok(());
    }
    check_lengths(a, b, out, g, pairs)?;
    let flops = g.m.saturating_mul(g.n).saturating_mul(g.k);
    if pairs.len() == 1 || flops >= PARALLEL_MIN_FLOPS {
        for (o, &(p, q)) in out.chunks_mut(so).zip(pairs) {
            let (la, lb) = operands(a, b, g, p, q);
            matmul(o, la, lb, g.conj_a, g.conj_b, true).map_err(gemm_error)?;
        }
        Ok(())
    } else {
        out.par_chunks_mut(so)
            .zip(pairs.par_iter())
            .try_for_each(|(o, &(p, q))| {
                let (la, lb) = operands(a, b, g, p, q);
                matmul(o, la, lb, g.conj_a, g.conj_b, false).map_err(gemm_error)
            })
    }
}

macro_rules! gemm_scalar {
    ($($t:ty),*) => {$(
        impl GemmElement for $t {
            fn batched(a: &[Self], b: &[Self], out: &mut [Self], g: &Geometry, pairs: &[(usize, usize)]) -> Result<()> {
                gemm_batched(a, b, out, g, pairs)
            }
        }
    )*};
}
gemm_scalar!(f32, f64, Complex32, Complex64);

macro_rules! gemm_half {
    ($($t:ty => $dtype:ident),*) => {$(
        impl GemmElement for $t {
            fn batched(a: &[Self], b: &[Self], out: &mut [Self], g: &Geometry, pairs: &[(usize, usize)]) -> Result<()> {
                check_lengths(a, b, out, g, pairs)?;
                let mut a32 = try_vec(a.len(), 0f32, DataType::FLOAT)?;
                let mut b32 = try_vec(b.len(), 0f32, DataType::FLOAT)?;
                let mut o32 = try_vec(out.len(), 0f32, DataType::FLOAT)?;
                a.convert_to_f32_slice(&mut a32);
                b.convert_to_f32_slice(&mut b32);
                gemm_batched(&a32, &b32, &mut o32, g, pairs)?;
                out.convert_from_f32_slice(&o32);
                Ok(())
            }
        }
    )*};
}
gemm_half!(f16 => HALF, bf16 => BFLOAT16);

/// Integer products with wrapping arithmetic, row by row (`out_row += a[i][p] * b_row[p]`, a
/// loop the compiler vectorises), rows split across the rayon pool.
macro_rules! gemm_int {
    ($($t:ty),*) => {$(
        impl GemmElement for $t {
            fn batched(a: &[Self], b: &[Self], out: &mut [Self], g: &Geometry, pairs: &[(usize, usize)]) -> Result<()> {
                let (m, n, k) = (g.m, g.n, g.k);
                if m * n == 0 || pairs.is_empty() {
                    return Ok(());
                }
                check_lengths(a, b, out, g, pairs)?;
                // b as row-major k x n, transposed once per distinct batch item where needed.
                let tb;
                let b_rows: &[Self] = if g.trans_b && k > 1 && n > 1 {
                    let mut t = try_vec(b.len(), 0 as $t, <$t as Element>::DTYPE)?;
                    for (src, dst) in b.chunks(k * n).zip(t.chunks_mut(k * n)) {
                        for j in 0..n {
                            for p in 0..k {
                                dst[p * n + j] = src[j * k + p];
                            }
                        }
                    }
                    tb = t;
                    &tb
                } else {
                    b
                };
                let rows_per_item = m;
                out.par_chunks_mut(n).enumerate().for_each(|(r, row)| {
                    let (item, i) = (r / rows_per_item, r % rows_per_item);
                    let (p, q) = pairs[item];
                    let a0 = p * m * k;
                    let b0 = q * k * n;
                    row.fill(0);
                    for pp in 0..k {
                        let av = if g.trans_a { a[a0 + pp * m + i] } else { a[a0 + i * k + pp] };
                        let brow = &b_rows[b0 + pp * n..b0 + (pp + 1) * n];
                        for (o, &bv) in row.iter_mut().zip(brow) {
                            *o = o.wrapping_add(av.wrapping_mul(bv));
                        }
                    }
                });
                Ok(())
            }
        }
    )*};
}
gemm_int!(i16, i32, i64);
