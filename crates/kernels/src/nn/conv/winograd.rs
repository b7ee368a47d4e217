//! `float` `Conv2D` with a 3x3 window by Winograd's minimal filtering F(2x2, 3x3) (Lavin and
//! Gray, "Fast Algorithms for Convolutional Neural Networks", 2016): each 2x2 block of output
//! pixels comes from a 4x4 block of padded input through 16 products per channel pair instead
//! of 36, so the matrix products hold 2.25x fewer multiply-adds than im2col's.
//!
//! Per block of output tiles: the input tiles are transformed (`V = Bᵀ d B`, additions only),
//! then for each of the 16 transformed positions `s` the tiles' `V_s` (tiles x in) times the
//! transformed filter's `U_s` (in x out) is one `gemm` product, and each tile's 16 results are
//! transformed back (`Y = Aᵀ M A`, additions only) into its 2x2 output pixels.
//!
//! The sums differ from the taps' in order and in the rounding of the transforms, so the result
//! is not the direct sum's to the bit. Bound (first-order, derived from the transforms'
//! additions and the products' sum over `in`, checked against `f64` sums in
//! `tests/nn.rs`): `|y - exact| <= 2 * (K + 360) * eps * T`, `K = 9 * in`, `T = sum over
//! channels c of (the largest |x| among channel c of the output's 4x4 input tile) * (sum of
//! the 9 |w| of channel c for that output channel)`. On inputs of one magnitude that is within
//! the direct sum's own bound (`2 * K * eps * sum |x| |w|` over the output's taps); measured on
//! uniform data: 0.25% of it.
//!
//! Blocks whose input holds a NaN, an infinity or a value so large that a transform could
//! overflow are computed by the taps-in-place path instead (the same values TensorFlow's direct
//! sums give there: a NaN or infinity reaches only the outputs whose taps read it).

use rayon::prelude::*;
use tensorcast_buffer::gemm::{matmul, MatRef};
use tensorcast_buffer::simd::vectorized_wide;
use tensorcast_core::{DataType, Error, Result};

use super::{Block, BlockFn, Conv, Job};
use crate::linalg::util::try_vec;

/// Bytes of transformed inputs and products per block (16 x 4 bytes per tile and channel, in
/// and out): blocks of 56 tiles were the fastest of 28 to 392 on
/// the 8x56x56x64 benchmark.
const BLOCK_BYTES: usize = 512 << 10;

/// Tiles per block at the least (rows of the products): `gemm`'s widest kernel takes 64 rows.
const MIN_TILES: usize = 64;

/// Channels (`in` and `out` each) below which the transforms cost more than the products save.
const MIN_CHANNELS: usize = 16;

/// Output pixels below which the direct or in-place paths are as fast.
const MIN_PIXELS: usize = 1024;

/// Channel lanes of the transforms' inner loops (one 512-bit vector).
const LANES: usize = 16;

impl Conv {
    /// Whether the Winograd path applies: one group, a 3x3 window, stride and dilation 1,
    /// at least [`MIN_CHANNELS`] channels in and out and [`MIN_PIXELS`] output pixels, and
    /// `TENSORCAST_CONV_WINOGRAD` not set to `0` (read once: then every `Conv2D` sums its taps
    /// directly, the order TensorFlow's CPU kernels use).
    pub(super) fn winograd(&self) -> bool {
        let (h, w) = (&self.h, &self.w);
        self.groups == 1
            && (h.window, w.window) == (3, 3)
            && (h.stride, w.stride, h.dilation, w.dilation) == (1, 1, 1, 1)
            && self.cin >= MIN_CHANNELS
            && self.cout >= MIN_CHANNELS
            && self.batch * h.output * w.output >= MIN_PIXELS
            && enabled()
    }

    /// The convolution by F(2x2, 3x3) (see the module docs), `epi` run on each block's
    /// output rows as soon as they are made.
    pub(super) fn compute_winograd(&self, job: Job<'_, f32>) -> Result<()> {
        let Job { x, f, out, epi } = job;
        let (h, w) = (&self.h, &self.w);
        let (cin, cout) = (self.cin, self.cout);
        if !f.iter().all(|v| v.is_finite()) {
            // Infinities in the filter would meet the zeros of the padding in the transforms.
            return self.compute_in_place(Job { x, f, out, epi });
        }
        let wmax = f.iter().fold(0f32, |m, v| m.max(v.abs()));
        // No sum of the transforms can overflow below this input magnitude (each output is at
        // most 81 * in * |x| * |w| in size, the products 9 * in * |x| * |w|).
        let limit = f32::MAX / (128.0 * cin as f32 * wmax.max(1.0));
        let u = filter_transform(f, cin, cout)?;
        let (th, tw) = (h.output.div_ceil(2), w.output.div_ceil(2));
        let threads = rayon::current_num_threads();
        // Tile rows per block: within the budget, and blocks enough to share out.
        let tiles = (BLOCK_BYTES / (64 * (cin + cout))).max(MIN_TILES);
        let rows = (tiles / tw)
            .min((self.batch * th).div_ceil(4 * threads))
            .clamp(1, th);
        let mut parts = Vec::new();
        let mut rest = out;
        for n in 0..self.batch {
            for ty0 in (0..th).step_by(rows) {
                let b = Block {
                    n0: n,
                    images: 1,
                    oy0: 2 * ty0,
                    rows: (2 * rows).min(h.output - 2 * ty0),
                };
                let (head, tail) = rest.split_at_mut(b.rows * w.output * cout);
                parts.push((b, head));
                rest = tail;
            }
        }
        let wp = 2 * tw + 2;
        let per = parts.len().div_ceil(threads);
        parts.par_chunks_mut(per).try_for_each(|run| {
            let mut slab = try_vec((2 * rows + 2) * wp * cin, 0f32, DataType::FLOAT)?;
            let mut v = try_vec(rows * tw * 16 * cin, 0f32, DataType::FLOAT)?;
            let mut m = try_vec(16 * rows * tw * cout, 0f32, DataType::FLOAT)?;
            let mut fallback = (Vec::new(), Vec::new());
            run.iter_mut().try_for_each(|(b, o)| {
                let height = b.rows.div_ceil(2) * 2 + 2;
                let slab = &mut slab[..height * wp * cin];
                for (s, dst) in slab.chunks_mut(wp * cin).enumerate() {
                    let iy = (b.oy0 + s)
                        .checked_sub(h.pad_before)
                        .filter(|&iy| iy < h.input);
                    self.pad_row(iy.map(|iy| self.input_row(x, b.n0, iy)), dst);
                }
                let bad = vectorized_wide(|| {
                    slab.iter()
                        .fold(false, |b, v| b | (v.abs() > limit) | v.is_nan())
                });
                if bad {
                    return self.in_place_rows(x, f, b, &mut fallback, o, epi);
                }
                let tiles = b.rows.div_ceil(2) * tw;
                let v = &mut v[..tiles * 16 * cin];
                vectorized_wide(
                    #[inline(always)]
                    || input_transform(slab, wp, cin, tw, v),
                );
                let m = &mut m[..16 * tiles * cout];
                for (s, ms) in m.chunks_mut(tiles * cout).enumerate() {
                    let lhs = MatRef {
                        data: &v[s * cin..],
                        rows: tiles,
                        cols: cin,
                        row_stride: 16 * cin,
                        col_stride: 1,
                    };
                    let rhs = MatRef::row_major(&u[s * cin * cout..][..cin * cout], cin, cout);
                    matmul(ms, lhs, rhs, false, false, false)
                        .map_err(|e| Error::Internal(e.to_string()))?;
                }
                vectorized_wide(
                    #[inline(always)]
                    || output_transform(m, tiles, cout, tw, w.output, o),
                );
                if let Some(e) = epi {
                    e(o);
                }
                Ok(())
            })
        })
    }

    /// Output rows `b` by the taps-in-place path (blocks Winograd's transforms cannot take),
    /// into `out` (those rows), with `scratch` grown as needed.
    fn in_place_rows(
        &self,
        x: &[f32],
        f: &[f32],
        b: &Block,
        (slab, acc): &mut (Vec<f32>, Vec<f32>),
        out: &mut [f32],
        epi: BlockFn<'_, f32>,
    ) -> Result<()> {
        let wp = self.w.output + self.w.window - 1;
        let height = b.rows + self.h.dilation * (self.h.window - 1);
        let (ns, na) = (
            b.images * height * wp * self.cin,
            b.images * height * wp * self.cout,
        );
        if slab.len() < ns {
            *slab = try_vec(ns, 0f32, DataType::FLOAT)?;
        }
        if acc.len() < na {
            *acc = try_vec(na, 0f32, DataType::FLOAT)?;
        }
        self.block_in_place(x, f, b, slab, acc, out, false)?;
        if let Some(e) = epi {
            e(out);
        }
        Ok(())
    }
}

/// `TENSORCAST_CONV_WINOGRAD` is not `0` (read once).
fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("TENSORCAST_CONV_WINOGRAD").is_none_or(|v| v != "0"))
}

/// The filter `[3, 3, in, out]` transformed: `U_s = (G g Gᵀ)_s` for each channel pair, as 16
/// row-major `in x out` matrices, `G = [[1, 0, 0], [½, ½, ½], [½, -½, ½], [0, 0, 1]]`.
fn filter_transform(f: &[f32], cin: usize, cout: usize) -> Result<Vec<f32>> {
    let plane = cin * cout;
    let mut u = try_vec(16 * plane, 0f32, DataType::FLOAT)?;
    let tap = |ky: usize, kx: usize, i: usize| f[(ky * 3 + kx) * plane + i];
    for i in 0..plane {
        // G g: 4 rows of 3.
        let mut gg = [[0f32; 3]; 4];
        for (kx, col) in (0..3).map(|kx| (kx, [tap(0, kx, i), tap(1, kx, i), tap(2, kx, i)])) {
            let [g0, g1, g2] = col;
            gg[0][kx] = g0;
            gg[1][kx] = 0.5 * (g0 + g1 + g2);
            gg[2][kx] = 0.5 * (g0 - g1 + g2);
            gg[3][kx] = g2;
        }
        // (G g) Gᵀ.
        for (r, [a, b, c]) in gg.into_iter().enumerate() {
            let row = [a, 0.5 * (a + b + c), 0.5 * (a - b + c), c];
            for (j, v) in row.into_iter().enumerate() {
                u[(r * 4 + j) * plane + i] = v;
            }
        }
    }
    Ok(u)
}

/// `V = Bᵀ d B` of every tile of a block, `Bᵀ = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0],
/// [0, 1, 0, -1]]`: tile `(ty, tx)` reads padded pixels `2ty..2ty + 4` x `2tx..2tx + 4` of
/// `slab` (rows of `wp` pixels); its 16 values per channel go to `v[(tile * 16 + s) * in..]`.
#[inline(always)]
fn input_transform(slab: &[f32], wp: usize, cin: usize, tw: usize, v: &mut [f32]) {
    let whole = cin / LANES * LANES;
    for (tile, vt) in v.chunks_exact_mut(16 * cin).enumerate() {
        let (ty, tx) = (tile / tw, tile % tw);
        let base = (2 * ty * wp + 2 * tx) * cin;
        let row = wp * cin;
        for c0 in (0..whole).step_by(LANES) {
            input_lanes::<LANES>(slab, base + c0, row, cin, &mut vt[c0..]);
        }
        for c in whole..cin {
            input_lanes::<1>(slab, base + c, row, cin, &mut vt[c..]);
        }
    }
}

/// [`input_transform`] of `L` channels of one tile whose first pixel's channels start at
/// `slab[at..]`.
#[inline(always)]
fn input_lanes<const L: usize>(slab: &[f32], at: usize, row: usize, cin: usize, v: &mut [f32]) {
    let d = |i: usize, j: usize| -> [f32; L] { lanes(&slab[at + i * row + j * cin..]) };
    // Bᵀ d, a column at a time (`cols[j][i]` is its element (i, j)), then (Bᵀ d) B, a row at a
    // time: Bᵀ applied to the row.
    let col = |j: usize| by_bt([d(0, j), d(1, j), d(2, j), d(3, j)]);
    let cols = [col(0), col(1), col(2), col(3)];
    for i in 0..4 {
        let row = by_bt([cols[0][i], cols[1][i], cols[2][i], cols[3][i]]);
        for (j, o) in row.into_iter().enumerate() {
            v[(i * 4 + j) * cin..][..L].copy_from_slice(&o);
        }
    }
}

/// `Bᵀ [d0, d1, d2, d3]`, lane by lane.
#[inline(always)]
fn by_bt<const L: usize>([d0, d1, d2, d3]: [[f32; L]; 4]) -> [[f32; L]; 4] {
    [
        zip(d0, d2, |a, b| a - b),
        zip(d1, d2, |a, b| a + b),
        zip(d2, d1, |a, b| a - b),
        zip(d1, d3, |a, b| a - b),
    ]
}

/// `Y = Aᵀ M A` of every tile of a block, `Aᵀ = [[1, 1, 1, 0], [0, 1, -1, -1]]`: `m` holds
/// the 16 products `s` as `tiles x out` matrices; tile `(ty, tx)`'s 2x2 pixels go to rows
/// `2ty..` and columns `2tx..` of `out` (rows of `width` pixels), those inside it.
#[inline(always)]
fn output_transform(
    m: &[f32],
    tiles: usize,
    cout: usize,
    tw: usize,
    width: usize,
    out: &mut [f32],
) {
    let whole = cout / LANES * LANES;
    let size = (out.len() / (width * cout), width);
    for tile in 0..tiles {
        let at = (2 * (tile / tw), 2 * (tile % tw));
        for k0 in (0..whole).step_by(LANES) {
            let y = output_lanes::<LANES>(m, tiles * cout, tile * cout + k0);
            store(y, at, k0, size, cout, out);
        }
        for k in whole..cout {
            let y = output_lanes::<1>(m, tiles * cout, tile * cout + k);
            store(y, at, k, size, cout, out);
        }
    }
}

/// A tile's 2x2 pixels `y` (`L` channels from `k` on) into `out`, rows `(rows, width)` of
/// `cout` channels, from pixel `(oy, ox)` on: those inside it (a tile at the last row or
/// column of an odd-sized output has pixels past it).
#[inline(always)]
fn store<const L: usize>(
    y: [[f32; L]; 4],
    (oy, ox): (usize, usize),
    k: usize,
    (rows, width): (usize, usize),
    cout: usize,
    out: &mut [f32],
) {
    for (q, v) in y.into_iter().enumerate() {
        let (r, c) = (oy + q / 2, ox + q % 2);
        if r < rows && c < width {
            out[(r * width + c) * cout + k..][..L].copy_from_slice(&v);
        }
    }
}

/// [`output_transform`] of `L` output channels of one tile whose products start at `m[at..]`
/// (`stride` between the products of consecutive `s`): its pixels `(0,0), (0,1), (1,0), (1,1)`.
#[inline(always)]
fn output_lanes<const L: usize>(m: &[f32], stride: usize, at: usize) -> [[f32; L]; 4] {
    let p = |s: usize| -> [f32; L] { lanes(&m[s * stride + at..]) };
    // Aᵀ M a column at a time (`cols[j][r]` is its element (r, j)), then (Aᵀ M) A a row at a
    // time.
    let col = |j: usize| by_at([p(j), p(4 + j), p(8 + j), p(12 + j)]);
    let cols = [col(0), col(1), col(2), col(3)];
    let [y0, y1] = by_at([cols[0][0], cols[1][0], cols[2][0], cols[3][0]]);
    let [y2, y3] = by_at([cols[0][1], cols[1][1], cols[2][1], cols[3][1]]);
    [y0, y1, y2, y3]
}

/// `Aᵀ [m0, m1, m2, m3]`, lane by lane.
#[inline(always)]
fn by_at<const L: usize>([m0, m1, m2, m3]: [[f32; L]; 4]) -> [[f32; L]; 2] {
    let plus = |a: f32, b: f32| a + b;
    let minus = |a: f32, b: f32| a - b;
    [
        zip(zip(m0, m1, plus), m2, plus),
        zip(zip(m1, m2, minus), m3, minus),
    ]
}

// `std::array::from_fn` is not always inlined into the vectorised callers; these loops are.
#[inline(always)]
fn lanes<const L: usize>(s: &[f32]) -> [f32; L] {
    let mut a = [0f32; L];
    a.copy_from_slice(&s[..L]);
    a
}

#[inline(always)]
fn zip<const L: usize>(a: [f32; L], b: [f32; L], f: impl Fn(f32, f32) -> f32) -> [f32; L] {
    let mut out = [0f32; L];
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::super::window::{axis, Padding};
    use super::*;

    fn conv(batch: usize, (h, w): (usize, usize), cin: usize, cout: usize) -> Conv {
        let axis = |n: usize| axis("Conv2D", n as i64, 3, 1, 1, Padding::Same, (0, 0)).unwrap();
        Conv {
            batch,
            h: axis(h),
            w: axis(w),
            cin,
            cout,
            groups: 1,
        }
    }

    /// The geometries `tests/nn.rs` checks the path on take it (so that a change of the
    /// thresholds cannot leave those tests checking another path), and smaller ones do not.
    #[test]
    fn the_tested_geometries_take_the_winograd_path() {
        assert!(conv(2, (25, 23), 20, 18).winograd());
        assert!(conv(2, (25, 23), 17, 18).winograd());
        assert!(conv(8, (56, 56), 64, 64).winograd());
        assert!(!conv(2, (25, 23), 15, 18).winograd());
        assert!(!conv(1, (14, 14), 256, 256).winograd());
    }
}
