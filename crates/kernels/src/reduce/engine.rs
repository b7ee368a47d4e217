//! The loops every reduction runs on: a [`Fold`] (start value, step, merge of two partial
//! results) applied over the reduced axes of a row-major input.
//!
//! The axes are first brought to their shortest form (axes of size 1 dropped, neighbours that
//! are both reduced or both kept merged), so that nearly every reduction is one of three
//! shapes, `[R]` (all), `[K, R]` (along rows) and `[R, K]` (along columns), or `[K1, R, K2]`
//! in general. Those run as vectorised loops compiled for the CPU's SIMD level
//! ([`tensorcast_buffer::simd::vectorized`]):
//! - a **contiguous run** (`K2 == 1`) folds into [`LANES`] independent partial results, one
//!   per vector lane, merged at the end;
//! - **columns** (`K2 > 1`) fold row after row into a tile of [`TILE`] partial results, one per
//!   column, small enough to stay in L1 while the rows stream past.
//!
//! Inputs of [`PARALLEL_MIN`] elements and more are split across the rayon pool: over the
//! output where it has enough elements, else along the reduced axis into parts whose partial
//! results are merged in order (so a result does not depend on the number of threads for
//! exact reductions, and moves only by rounding for floating sums). Other shapes (reduced and
//! kept axes interleaved more than once) fold element by element in row-major order.

use rayon::prelude::*;
use tensorcast_buffer::simd::vectorized;

/// Partial results per contiguous run, one per vector lane (16 `double`s: four AVX2 or two
/// AVX-512 registers, enough independent additions to hide their latency).
pub(crate) const LANES: usize = 16;
/// Columns folded together in the column loop (8 KiB of `double` partial results).
pub(crate) const TILE: usize = 1024;
/// Elements from which a reduction is split across threads.
pub(crate) const PARALLEL_MIN: usize = 1 << 18;
/// The smallest part of a reduced run one task folds, in elements.
const PART_MIN: usize = 1 << 15;

/// A reduction: `init`, then `step(acc, x)` for every element reduced, `merge(a, b)` to join
/// partial results (`a` from elements before `b`'s).
pub(crate) struct Fold<A, S, M> {
    pub(crate) init: A,
    pub(crate) step: S,
    pub(crate) merge: M,
}

/// The reduced shape in its shortest form: `(sizes, reduced)` with no size-1 axis and no two
/// neighbours alike. `None` when an axis has size 0 (nothing to read).
fn canonical(dims: &[i64], reduced: &[bool]) -> Option<(Vec<usize>, Vec<bool>)> {
    let (mut sizes, mut flags) = (Vec::new(), Vec::<bool>::new());
    for (&d, &r) in dims.iter().zip(reduced) {
        match d {
            0 => return None,
            1 => {}
            _ if flags.last() == Some(&r) => {
                if let Some(s) = sizes.last_mut() {
                    *s *= d as usize;
                }
            }
            _ => {
                sizes.push(d as usize);
                flags.push(r);
            }
        }
    }
    Some((sizes, flags))
}

/// `(K1, R, K2)` when the shortest form is kept-reduced-kept or a part of it.
fn three(sizes: &[usize], flags: &[bool]) -> Option<(usize, usize, usize)> {
    match (sizes, flags) {
        ([], []) => Some((1, 1, 1)),
        ([r], [true]) => Some((1, *r, 1)),
        ([k], [false]) => Some((1, 1, *k)),
        ([k, r], [false, true]) => Some((*k, *r, 1)),
        ([r, k], [true, false]) => Some((1, *r, *k)),
        ([k1, r, k2], [false, true, false]) => Some((*k1, *r, *k2)),
        _ => None,
    }
}

/// The partial results of `f` over `x` (row-major, of `dims`) along the axes flagged in
/// `reduced`: one per output element, in row-major order of the kept axes.
pub(crate) fn run<T, A, S, M>(x: &[T], dims: &[i64], reduced: &[bool], f: &Fold<A, S, M>) -> Vec<A>
where
    T: Copy + Sync,
    A: Copy + Send + Sync,
    S: Fn(A, T) -> A + Sync,
    M: Fn(A, A) -> A + Sync,
{
    let out_len: usize = dims
        .iter()
        .zip(reduced)
        .filter(|(_, &r)| !r)
        .map(|(&d, _)| d as usize)
        .product();
    let Some((sizes, flags)) = canonical(dims, reduced) else {
        return vec![f.init; out_len];
    };
    match three(&sizes, &flags) {
        Some((k1, r, 1)) => runs(x, k1, r, f),
        Some((k1, r, k2)) => columns(x, k1, r, k2, f),
        None => general(x, &sizes, &flags, out_len, f),
    }
}

/// One contiguous run folded into [`LANES`] partial results, then merged.
#[inline(always)]
fn run_lanes<T: Copy, A: Copy, S, M>(x: &[T], f: &Fold<A, S, M>) -> A
where
    S: Fn(A, T) -> A,
    M: Fn(A, A) -> A,
{
    vectorized(
        #[inline(always)]
        || {
            let mut acc = [f.init; LANES];
            let chunks = x.chunks_exact(LANES);
            let rest = chunks.remainder();
            for c in chunks {
                for (a, &v) in acc.iter_mut().zip(c) {
                    *a = (f.step)(*a, v);
                }
            }
            // A pairwise merge of the lanes, then the remainder.
            let mut width = LANES;
            while width > 1 {
                width /= 2;
                for i in 0..width {
                    acc[i] = (f.merge)(acc[i], acc[i + width]);
                }
            }
            rest.iter().fold(acc[0], |a, &v| (f.step)(a, v))
        },
    )
}

/// `[K1, R]`: each output folds one contiguous run of `r` elements.
fn runs<T, A, S, M>(x: &[T], k1: usize, r: usize, f: &Fold<A, S, M>) -> Vec<A>
where
    T: Copy + Sync,
    A: Copy + Send + Sync,
    S: Fn(A, T) -> A + Sync,
    M: Fn(A, A) -> A + Sync,
{
    let threads = rayon::current_num_threads();
    if x.len() < PARALLEL_MIN || threads < 2 {
        return x.chunks(r.max(1)).map(|run| run_lanes(run, f)).collect();
    }
    if k1 >= 4 * threads {
        // Enough outputs: each task folds whole runs.
        let rows_per_task = (PART_MIN / r.max(1)).max(1);
        let mut out = vec![f.init; k1];
        out.par_chunks_mut(rows_per_task)
            .enumerate()
            .for_each(|(t, o)| {
                let first = t * rows_per_task;
                for (i, a) in o.iter_mut().enumerate() {
                    let s = (first + i) * r;
                    *a = run_lanes(&x[s..s + r], f);
                }
            });
        return out;
    }
    // Few long runs: each is split into parts, folded in parallel and merged in order.
    let parts = (4 * threads).div_ceil(k1).min(r / PART_MIN).max(1);
    let part_len = r.div_ceil(parts);
    let partial: Vec<A> = (0..k1 * parts)
        .into_par_iter()
        .map(|item| {
            let (row, p) = (item / parts, item % parts);
            let lo = (p * part_len).min(r);
            let hi = ((p + 1) * part_len).min(r);
            run_lanes(&x[row * r + lo..row * r + hi], f)
        })
        .collect();
    partial
        .chunks(parts)
        .map(|ps| {
            ps.iter()
                .copied()
                .reduce(|a, b| (f.merge)(a, b))
                .unwrap_or(f.init)
        })
        .collect()
}

/// Rows `rows` of the `[R, K2]` block starting at element `base`, folded into `acc` (the
/// partial results of columns `c0..c0 + acc.len()`).
#[inline(always)]
fn fold_rows<T: Copy, A: Copy, S, M>(
    acc: &mut [A],
    x: &[T],
    base: usize,
    rows: std::ops::Range<usize>,
    k2: usize,
    c0: usize,
    f: &Fold<A, S, M>,
) where
    S: Fn(A, T) -> A,
{
    vectorized(
        #[inline(always)]
        || {
            for j in rows {
                let s = base + j * k2 + c0;
                let row = &x[s..s + acc.len()];
                for (a, &v) in acc.iter_mut().zip(row) {
                    *a = (f.step)(*a, v);
                }
            }
        },
    )
}

/// `[K1, R, K2]` with `K2 > 1`: for each of the `k1` blocks, the columns fold row by row, a
/// [`TILE`] of columns at a time.
fn columns<T, A, S, M>(x: &[T], k1: usize, r: usize, k2: usize, f: &Fold<A, S, M>) -> Vec<A>
where
    T: Copy + Sync,
    A: Copy + Send + Sync,
    S: Fn(A, T) -> A + Sync,
    M: Fn(A, A) -> A + Sync,
{
    let mut out = vec![f.init; k1 * k2];
    let threads = rayon::current_num_threads();
    let block = r * k2;
    if x.len() < PARALLEL_MIN || threads < 2 {
        for (i, o) in out.chunks_mut(k2).enumerate() {
            for (t, tile) in o.chunks_mut(TILE).enumerate() {
                fold_rows(tile, x, i * block, 0..r, k2, t * TILE, f);
            }
        }
        return out;
    }
    let tiles = k2.div_ceil(TILE);
    let items = k1 * tiles;
    // Parts of the reduced axis per (block, tile), when there are too few of those to share.
    let parts = if items >= 4 * threads {
        1
    } else {
        (4 * threads)
            .div_ceil(items)
            .min((r * TILE.min(k2)) / PART_MIN)
            .max(1)
    };
    if parts == 1 {
        out.par_chunks_mut(k2).enumerate().for_each(|(i, o)| {
            o.par_chunks_mut(TILE).enumerate().for_each(|(t, tile)| {
                fold_rows(tile, x, i * block, 0..r, k2, t * TILE, f);
            });
        });
        return out;
    }
    let rows_per_part = r.div_ceil(parts);
    let partial: Vec<Vec<A>> = (0..items * parts)
        .into_par_iter()
        .map(|n| {
            let (item, p) = (n / parts, n % parts);
            let (i, t) = (item / tiles, item % tiles);
            let c0 = t * TILE;
            let mut acc = vec![f.init; TILE.min(k2 - c0)];
            let lo = (p * rows_per_part).min(r);
            let hi = ((p + 1) * rows_per_part).min(r);
            fold_rows(&mut acc, x, i * block, lo..hi, k2, c0, f);
            acc
        })
        .collect();
    for (item, ps) in partial.chunks(parts).enumerate() {
        let (i, t) = (item / tiles, item % tiles);
        let o = &mut out[i * k2 + t * TILE..];
        for p in ps {
            for (a, &b) in o.iter_mut().zip(p) {
                *a = (f.merge)(*a, b);
            }
        }
    }
    out
}

/// Any other shape: element by element in row-major order, each added to its output.
fn general<T, A, S, M>(
    x: &[T],
    sizes: &[usize],
    flags: &[bool],
    out_len: usize,
    f: &Fold<A, S, M>,
) -> Vec<A>
where
    T: Copy,
    A: Copy,
    S: Fn(A, T) -> A,
{
    let rank = sizes.len();
    let mut out_stride = vec![0usize; rank];
    let mut n = 1usize;
    for d in (0..rank).rev() {
        if !flags[d] {
            out_stride[d] = n;
            n *= sizes[d];
        }
    }
    let mut acc = vec![f.init; out_len];
    let mut idx = vec![0usize; rank];
    let mut o = 0usize;
    for &v in x {
        acc[o] = (f.step)(acc[o], v);
        for d in (0..rank).rev() {
            idx[d] += 1;
            o += out_stride[d];
            if idx[d] < sizes[d] {
                break;
            }
            o -= out_stride[d] * idx[d];
            idx[d] = 0;
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum() -> Fold<f64, impl Fn(f64, f64) -> f64 + Sync, impl Fn(f64, f64) -> f64 + Sync> {
        Fold {
            init: 0.0,
            step: |a: f64, v: f64| a + v,
            merge: |a: f64, b: f64| a + b,
        }
    }

    /// The naive row-major fold every shape must agree with (exactly, for integer-valued
    /// sums).
    fn reference(x: &[f64], dims: &[i64], reduced: &[bool]) -> Vec<f64> {
        let sizes: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
        let out_len = dims
            .iter()
            .zip(reduced)
            .filter(|(_, &r)| !r)
            .map(|(&d, _)| d as usize)
            .product();
        general(x, &sizes, reduced, out_len, &sum())
    }

    #[test]
    fn every_shape_agrees_with_the_row_major_fold() {
        let shapes: &[&[i64]] = &[
            &[7],
            &[3, 5],
            &[1, 6, 1],
            &[4, 1, 3, 2],
            &[2, 3, 4, 5],
            &[300, 1100],
            &[5, 700, 300],
            &[3000, 3],
            &[2, 0, 3],
        ];
        for dims in shapes {
            let n: i64 = dims.iter().product();
            let x: Vec<f64> = (0..n).map(|i| (i % 97) as f64 - 40.0).collect();
            for mask in 0..(1u32 << dims.len()) {
                let reduced: Vec<bool> = (0..dims.len()).map(|d| mask >> d & 1 == 1).collect();
                let got = run(&x, dims, &reduced, &sum());
                assert_eq!(got, reference(&x, dims, &reduced), "{dims:?} {reduced:?}");
            }
        }
    }

    #[test]
    fn large_inputs_split_across_threads_agree() {
        // Shapes past PARALLEL_MIN in each form: all, rows, columns, few long runs, blocks.
        let shapes: &[(&[i64], &[bool])] = &[
            (&[1 << 19], &[true]),
            (&[2, 1 << 18], &[false, true]),
            (&[1 << 9, 1 << 10], &[false, true]),
            (&[1 << 10, 1 << 9], &[true, false]),
            (&[1 << 17, 3], &[true, false]),
            (&[3, 1 << 8, 1500], &[false, true, false]),
            (&[1 << 16, 5], &[false, true]),
        ];
        for (dims, reduced) in shapes {
            let n: i64 = dims.iter().product();
            let x: Vec<f64> = (0..n).map(|i| (i % 89) as f64 - 44.0).collect();
            assert_eq!(
                run(&x, dims, reduced, &sum()),
                reference(&x, dims, reduced),
                "{dims:?} {reduced:?}"
            );
        }
    }
}
