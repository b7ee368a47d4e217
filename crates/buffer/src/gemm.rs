//! Matrix multiplication on the [`gemm`](https://docs.rs/gemm) crate (the GEMM candle uses),
//! behind a safe function: `gemm::gemm` takes raw pointers and strides, so its preconditions
//! (every element it reads or writes lies inside its slice, the output's elements are
//! distinct, the element type is one it implements) are checked here, once, and the kernels
//! above stay `#![forbid(unsafe_code)]`.
//!
//! Chosen over `matrixmultiply` (ndarray's) by measurement on the development machine (a
//! 2-core AMD EPYC with AVX-512): f32 1024x1024x1024 took 20.1 ms with `gemm` against 21.4 ms
//! with `matrixmultiply` on one thread; `gemm` also has complex kernels and splits large
//! products on the rayon pool the rest of tensorcast uses. Its AVX-512 kernels (feature
//! `x86-v4`, chosen at run time where the CPU has them) took the same product on both cores
//! from 14.2 ms (its AVX2 kernels) to 10.0 ms.
//!
//! ```
//! use tensorcast_buffer::gemm::{matmul, MatRef};
//! // [[1, 2], [3, 4]] x [[5], [6]]
//! let a = [1.0f32, 2.0, 3.0, 4.0];
//! let b = [5.0f32, 6.0];
//! let mut c = [0.0f32; 2];
//! matmul(&mut c, MatRef::row_major(&a, 2, 2), MatRef::row_major(&b, 2, 1), false, false, true).unwrap();
//! assert_eq!(c, [17.0, 39.0]);
//! // The transpose of a, read through strides.
//! matmul(&mut c, MatRef::col_major(&a, 2, 2), MatRef::row_major(&b, 2, 1), false, false, false).unwrap();
//! assert_eq!(c, [23.0, 34.0]);
//! ```

use gemm::Parallelism;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for gemm::c32 {}
    impl Sealed for gemm::c64 {}
}

/// The element types `gemm` implements: `f32`, `f64`, `Complex32` and `Complex64`
/// (`num_complex`'s).
pub trait Scalar: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The multiplicative identity.
    const ONE: Self;
    /// The additive identity.
    const ZERO: Self;
}

impl Scalar for f32 {
    const ONE: Self = 1.0;
    const ZERO: Self = 0.0;
}
impl Scalar for f64 {
    const ONE: Self = 1.0;
    const ZERO: Self = 0.0;
}
impl Scalar for gemm::c32 {
    const ONE: Self = gemm::c32::new(1.0, 0.0);
    const ZERO: Self = gemm::c32::new(0.0, 0.0);
}
impl Scalar for gemm::c64 {
    const ONE: Self = gemm::c64::new(1.0, 0.0);
    const ZERO: Self = gemm::c64::new(0.0, 0.0);
}

/// A matrix operand: `rows x cols` elements of `data`, element `(i, j)` at
/// `i * row_stride + j * col_stride`.
#[derive(Debug, Clone, Copy)]
pub struct MatRef<'a, T> {
    /// The elements.
    pub data: &'a [T],
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Elements between one row and the next.
    pub row_stride: usize,
    /// Elements between one column and the next.
    pub col_stride: usize,
}

impl<'a, T> MatRef<'a, T> {
    /// A dense row-major `rows x cols` matrix at the start of `data`.
    pub fn row_major(data: &'a [T], rows: usize, cols: usize) -> Self {
        Self {
            data,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// A dense column-major `rows x cols` matrix at the start of `data` (the transpose of a
    /// row-major `cols x rows` one).
    pub fn col_major(data: &'a [T], rows: usize, cols: usize) -> Self {
        Self {
            data,
            rows,
            cols,
            row_stride: 1,
            col_stride: rows,
        }
    }

    /// Whether every element lies inside `data`, and the strides fit in `isize`.
    fn in_bounds(&self) -> bool {
        if isize::try_from(self.row_stride).is_err() || isize::try_from(self.col_stride).is_err() {
            return false;
        }
        if self.rows == 0 || self.cols == 0 {
            return true;
        }
        let last = (self.rows - 1)
            .checked_mul(self.row_stride)
            .and_then(|r| (self.cols - 1).checked_mul(self.col_stride).map(|c| (r, c)))
            .and_then(|(r, c)| r.checked_add(c));
        matches!(last, Some(l) if l < self.data.len() && isize::try_from(l).is_ok())
    }
}

/// Operands that [`matmul`] refuses (a caller's bug: the kernels check shapes first).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GemmError {
    /// `lhs.cols != rhs.rows`.
    #[error("gemm: inner dimensions differ ({lhs_cols} vs. {rhs_rows})")]
    InnerDims {
        /// Columns of the left operand.
        lhs_cols: usize,
        /// Rows of the right operand.
        rhs_rows: usize,
    },
    /// An operand whose strides reach past its slice, or an output slice shorter than
    /// `rows x cols`.
    #[error("gemm: {0} reaches past its data")]
    OutOfBounds(&'static str),
}

/// `dst = op(lhs) x op(rhs)`, where `op` conjugates when `conj_lhs`/`conj_rhs` is set (a
/// no-op for real types); `dst` is dense row-major `lhs.rows x rhs.cols` (its first
/// `rows * cols` elements; any before are overwritten, never read). `parallel` lets `gemm`
/// split a large product across the rayon pool (it decides from the size whether it pays).
///
/// # Errors
/// [`GemmError::InnerDims`] when `lhs.cols != rhs.rows`; [`GemmError::OutOfBounds`] when an
/// operand's strides reach past its data or `dst` is too short.
pub fn matmul<T: Scalar>(
    dst: &mut [T],
    lhs: MatRef<'_, T>,
    rhs: MatRef<'_, T>,
    conj_lhs: bool,
    conj_rhs: bool,
    parallel: bool,
) -> Result<(), GemmError> {
    product(dst, lhs, rhs, (conj_lhs, conj_rhs), parallel, false)
}

/// `dst += lhs x rhs`, `dst` dense row-major `lhs.rows x rhs.cols` as in [`matmul`]: how a
/// product over a long inner dimension is taken in parts whose operands are strided views
/// (a convolution's taps read in place from its input, for one).
///
/// ```
/// use tensorcast_buffer::gemm::{matmul_add, MatRef};
/// let a = [1.0f32, 2.0, 3.0, 4.0];
/// let mut c = [10.0f32, 20.0];
/// // Rows that overlap: [[1, 2], [2, 3]] x [[1], [1]], added to c.
/// let lhs = MatRef { data: &a, rows: 2, cols: 2, row_stride: 1, col_stride: 1 };
/// matmul_add(&mut c, lhs, MatRef::row_major(&[1.0, 1.0], 2, 1), false).unwrap();
/// assert_eq!(c, [13.0, 25.0]);
/// ```
///
/// # Errors
/// As [`matmul`]'s.
pub fn matmul_add<T: Scalar>(
    dst: &mut [T],
    lhs: MatRef<'_, T>,
    rhs: MatRef<'_, T>,
    parallel: bool,
) -> Result<(), GemmError> {
    product(dst, lhs, rhs, (false, false), parallel, true)
}

fn product<T: Scalar>(
    dst: &mut [T],
    lhs: MatRef<'_, T>,
    rhs: MatRef<'_, T>,
    (conj_lhs, conj_rhs): (bool, bool),
    parallel: bool,
    accumulate: bool,
) -> Result<(), GemmError> {
    if lhs.cols != rhs.rows {
        return Err(GemmError::InnerDims {
            lhs_cols: lhs.cols,
            rhs_rows: rhs.rows,
        });
    }
    let (m, n, k) = (lhs.rows, rhs.cols, lhs.cols);
    if !lhs.in_bounds() {
        return Err(GemmError::OutOfBounds("lhs"));
    }
    if !rhs.in_bounds() {
        return Err(GemmError::OutOfBounds("rhs"));
    }
    let out = MatRef::row_major(&*dst, m, n);
    if !out.in_bounds() || m.checked_mul(n).is_none_or(|e| e > dst.len()) {
        return Err(GemmError::OutOfBounds("dst"));
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    let parallelism = if parallel {
        Parallelism::Rayon(0)
    } else {
        Parallelism::None
    };
    // `in_bounds` checked that every stride fits in isize.
    let is = |s: usize| s as isize;
    // SAFETY: `gemm::gemm` requires (1) every element it reads, `lhs` at `i*rs + p*cs` for
    // i < m, p < k and `rhs` at `p*rs + j*cs` for p < k, j < n, to lie inside valid memory:
    // `in_bounds` checked the largest such offset is below each slice's length (no element
    // when a dimension is 0); overlapping rows or columns are reads only, which it allows;
    // (2) every element it writes (and, with `read_dst`, reads), `dst` at `i*n + j`, to be
    // valid and distinct: `dst` is an exclusive borrow of at least `m*n` elements (checked
    // above), initialised, and the row-major layout maps (i, j) to distinct offsets, so the
    // threads it splits the work over write disjoint elements; (3) the output not to alias
    // the inputs: `dst` is `&mut` and the inputs are `&`, which Rust keeps apart; (4) `T` to
    // be one of f32, f64, c32, c64 (it panics otherwise): `Scalar` is sealed to those four.
    // With `read_dst` false `dst`'s old values are never read (alpha is ignored); with it
    // true the result is `1 * dst + 1 * product`.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            is(n),
            accumulate,
            lhs.data.as_ptr(),
            is(lhs.col_stride),
            is(lhs.row_stride),
            rhs.data.as_ptr(),
            is(rhs.col_stride),
            is(rhs.row_stride),
            T::ONE,
            T::ONE,
            false,
            conj_lhs,
            conj_rhs,
            parallelism,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Vec<f64> {
        let mut out = vec![0.0; a.rows * b.cols];
        for i in 0..a.rows {
            for j in 0..b.cols {
                let mut s = 0.0;
                for p in 0..a.cols {
                    s += a.data[i * a.row_stride + p * a.col_stride]
                        * b.data[p * b.row_stride + j * b.col_stride];
                }
                out[i * b.cols + j] = s;
            }
        }
        out
    }

    #[test]
    fn matmul_strided_operands_match_naive() {
        for &(m, n, k) in &[
            (1, 1, 1),
            (3, 5, 7),
            (17, 9, 33),
            (64, 65, 66),
            (4, 0, 3),
            (2, 3, 0),
        ] {
            let a: Vec<f64> = (0..m * k).map(|i| (i % 7) as f64 - 3.0).collect();
            let b: Vec<f64> = (0..k * n).map(|i| (i % 5) as f64 * 0.5).collect();
            for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                let la = if ta {
                    MatRef::col_major(&a, m, k)
                } else {
                    MatRef::row_major(&a, m, k)
                };
                let lb = if tb {
                    MatRef::col_major(&b, k, n)
                } else {
                    MatRef::row_major(&b, k, n)
                };
                let mut c = vec![f64::NAN; m * n];
                matmul(&mut c, la, lb, false, false, true).unwrap();
                assert_eq!(c, naive(la, lb), "{m}x{n}x{k} {ta} {tb}");
            }
        }
    }

    #[test]
    fn matmul_out_of_bounds_operands_are_refused() {
        let a = [1.0f32; 6];
        let mut c = [0.0f32; 4];
        let bad = MatRef {
            data: &a,
            rows: 2,
            cols: 3,
            row_stride: 4,
            col_stride: 1,
        };
        assert_eq!(
            matmul(
                &mut c,
                bad,
                MatRef::row_major(&a, 3, 2),
                false,
                false,
                false
            ),
            Err(GemmError::OutOfBounds("lhs"))
        );
        assert_eq!(
            matmul(
                &mut c[..3],
                MatRef::row_major(&a, 2, 3),
                MatRef::row_major(&a, 3, 2),
                false,
                false,
                false
            ),
            Err(GemmError::OutOfBounds("dst"))
        );
        assert!(matches!(
            matmul(
                &mut c,
                MatRef::row_major(&a, 2, 3),
                MatRef::row_major(&a, 2, 3),
                false,
                false,
                false
            ),
            Err(GemmError::InnerDims { .. })
        ));
        let huge = MatRef {
            data: &a,
            rows: 2,
            cols: 2,
            row_stride: usize::MAX,
            col_stride: 1,
        };
        assert!(matmul(
            &mut c,
            huge,
            MatRef::row_major(&a, 2, 2),
            false,
            false,
            false
        )
        .is_err());
    }

    #[test]
    fn matmul_conjugates_complex_operands() {
        let a = [gemm::c32::new(1.0, 2.0)];
        let b = [gemm::c32::new(3.0, -1.0)];
        let mut c = [gemm::c32::new(0.0, 0.0)];
        matmul(
            &mut c,
            MatRef::row_major(&a, 1, 1),
            MatRef::row_major(&b, 1, 1),
            true,
            false,
            false,
        )
        .unwrap();
        // (1 - 2i)(3 - i) = 3 - i - 6i + 2i^2 = 1 - 7i
        assert_eq!(c[0], gemm::c32::new(1.0, -7.0));
    }

    #[test]
    fn matmul_add_accumulates_over_overlapping_rows() {
        // A convolution's taps read in place: row i of lhs starts at element 2 * i and
        // spans 4, so consecutive rows share two elements.
        let (m, n, k) = (9, 5, 4);
        let x: Vec<f64> = (0..2 * m + 2).map(|i| (i % 11) as f64 - 4.0).collect();
        let lhs = MatRef {
            data: &x,
            rows: m,
            cols: k,
            row_stride: 2,
            col_stride: 1,
        };
        let b: Vec<f64> = (0..k * n).map(|i| (i % 3) as f64 + 0.25).collect();
        let rhs = MatRef::row_major(&b, k, n);
        let start: Vec<f64> = (0..m * n).map(|i| i as f64).collect();
        let mut c = start.clone();
        matmul_add(&mut c, lhs, rhs, true).unwrap();
        let want: Vec<f64> = naive(lhs, rhs)
            .iter()
            .zip(&start)
            .map(|(p, s)| p + s)
            .collect();
        assert_eq!(c, want);
        let past = MatRef { rows: m + 1, ..lhs };
        assert_eq!(
            matmul_add(&mut c, past, rhs, false),
            Err(GemmError::OutOfBounds("lhs"))
        );
    }
}
