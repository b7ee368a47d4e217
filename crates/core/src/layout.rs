//! [`Layout`]: where the elements of an n-dimensional view sit in a flat buffer (dims, strides
//! in elements, offset), as pure metadata, and the contiguous runs a kernel walks.
//!
//! A dense row-major tensor has strides `[d1*d2*.., .., d_last, 1]`; a lazy broadcast reads an
//! axis the input does not have (or has with size 1) with stride 0. Kernels never walk a layout
//! element by element: they [`coalesce`] the axes first (drop size-1 axes, merge neighbours
//! whose strides line up, for every operand at once), so that `[4096,16384] + [1,16384]` becomes
//! "4096 runs of 16384", and then run a tight loop over each innermost run.

use crate::TensorShape;

/// The position of each element of an n-dimensional view in a flat buffer: element
/// `[i0, i1, ..]` is at `offset + i0*strides[0] + i1*strides[1] + ..` (in elements).
///
/// Pure metadata: a layout borrows nothing. A stride of 0 reads the same element along an axis
/// (a broadcast axis).
///
/// ```
/// use tensorcast_core::{layout::Layout, TensorShape};
/// let row = Layout::contiguous(&[1, 3]);
/// let b = row.broadcast_to(&[2, 3]).ok_or("does not broadcast")?;
/// assert_eq!(b.strides(), &[0, 1]);
/// // Two runs of 3 elements, both starting at element 0.
/// let runs: Vec<_> = b.runs().collect();
/// assert_eq!(runs.len(), 2);
/// assert_eq!((runs[1].offset, runs[1].len, runs[1].stride), (0, 3, 1));
/// # Ok::<(), &str>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    dims: Vec<usize>,
    strides: Vec<usize>,
    offset: usize,
}

/// One contiguous run of a [`Layout`]: `len` elements starting at `offset`, `stride` apart
/// (1 for a dense run, 0 for one element repeated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Element index of the run's first element.
    pub offset: usize,
    /// Number of elements in the run.
    pub len: usize,
    /// Elements between consecutive elements of the run.
    pub stride: usize,
}

impl Layout {
    /// The dense row-major layout of `dims`, at offset 0.
    pub fn contiguous(dims: &[usize]) -> Self {
        let mut strides = vec![0usize; dims.len()];
        let mut step = 1usize;
        for (s, &d) in strides.iter_mut().zip(dims).rev() {
            *s = step;
            step = step.saturating_mul(d);
        }
        Self {
            dims: dims.to_vec(),
            strides,
            offset: 0,
        }
    }

    /// The dense layout of a tensor shape.
    pub fn of_shape(shape: &TensorShape) -> Self {
        Self::contiguous(&shape.dims_usize())
    }

    /// A layout from its parts (no check that it fits any buffer; see [`Layout::max_offset`]).
    pub fn from_parts(dims: Vec<usize>, strides: Vec<usize>, offset: usize) -> Option<Self> {
        (dims.len() == strides.len()).then_some(Self {
            dims,
            strides,
            offset,
        })
    }

    /// Sizes of the axes.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// Element steps of the axes.
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// Element index of element `[0, 0, ..]`.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of elements (the product of the dims).
    pub fn num_elements(&self) -> usize {
        self.dims.iter().product()
    }

    /// True when the elements are dense and in row-major order (size-1 axes ignored).
    pub fn is_contiguous(&self) -> bool {
        let mut step = 1usize;
        for (&d, &s) in self.dims.iter().zip(&self.strides).rev() {
            if d != 1 && s != step {
                return false;
            }
            step = step.saturating_mul(d);
        }
        true
    }

    /// The largest element index the layout reads, or `None` when it has no elements.
    pub fn max_offset(&self) -> Option<usize> {
        if self.dims.contains(&0) {
            return None;
        }
        self.dims
            .iter()
            .zip(&self.strides)
            .try_fold(self.offset, |acc, (&d, &s)| {
                acc.checked_add((d - 1).checked_mul(s)?)
            })
    }

    /// This layout read as if broadcast to `out` (numpy's and TensorFlow's rule: align on the
    /// right; an axis of size 1, or a missing leading axis, is read with stride 0); `None` when
    /// the dims do not broadcast to exactly `out`.
    pub fn broadcast_to(&self, out: &[usize]) -> Option<Self> {
        if self.dims.len() > out.len() {
            return None;
        }
        let lead = out.len() - self.dims.len();
        let mut strides = vec![0usize; out.len()];
        for (i, (&d, &s)) in self.dims.iter().zip(&self.strides).enumerate() {
            let o = out[lead + i];
            if d == o {
                strides[lead + i] = if d == 1 { 0 } else { s };
            } else if d != 1 {
                return None;
            }
        }
        Some(Self {
            dims: out.to_vec(),
            strides,
            offset: self.offset,
        })
    }

    /// The contiguous runs of this layout, in row-major order of its elements: the axes are
    /// [`coalesce`]d, and each run is the innermost remaining axis.
    pub fn runs(&self) -> Runs {
        let (dims, strides) = coalesce(&self.dims, &[&self.strides]);
        let strides = strides.into_iter().next().unwrap_or_default();
        let total = dims.iter().product::<usize>();
        Runs {
            index: vec![0; dims.len()],
            dims,
            strides,
            offset: self.offset,
            left: if total == 0 { 0 } else { total },
        }
    }
}

/// Iterator over the [`Run`]s of a [`Layout`] (see [`Layout::runs`]).
#[derive(Debug, Clone)]
pub struct Runs {
    dims: Vec<usize>,
    strides: Vec<usize>,
    index: Vec<usize>,
    offset: usize,
    left: usize,
}

impl Iterator for Runs {
    type Item = Run;

    fn next(&mut self) -> Option<Run> {
        if self.left == 0 {
            return None;
        }
        let last = self.dims.len() - 1;
        let run = Run {
            offset: self.offset,
            len: self.dims[last],
            stride: self.strides[last],
        };
        self.left -= run.len;
        // Odometer over the outer axes.
        for d in (0..last).rev() {
            self.index[d] += 1;
            self.offset += self.strides[d];
            if self.index[d] < self.dims[d] {
                break;
            }
            self.offset -= self.strides[d] * self.dims[d];
            self.index[d] = 0;
        }
        Some(run)
    }
}

/// Reduces the axes of several operands that share `dims` (each with its own strides): axes
/// of size 1 are dropped and neighbours `d, d+1` are merged when, for every operand,
/// `stride[d] == stride[d+1] * dims[d+1]` (so stride-0 broadcast axes merge with each other,
/// and dense axes with dense axes). Returns the reduced dims and each operand's strides; there
/// is always at least one axis (a single `[1]` axis for a one-element view, `[0]` when empty).
///
/// ```
/// use tensorcast_core::layout::coalesce;
/// // [4096,16384] dense, against a row [1,16384] read with stride 0 on axis 0.
/// let (dims, strides) = coalesce(&[4096, 16384], &[&[16384, 1], &[0, 1]]);
/// assert_eq!(dims, vec![4096, 16384]);
/// assert_eq!(strides, vec![vec![16384, 1], vec![0, 1]]);
/// // Two dense operands merge into one run.
/// let (dims, _) = coalesce(&[2, 3, 4], &[&[12, 4, 1], &[12, 4, 1]]);
/// assert_eq!(dims, vec![24]);
/// ```
pub fn coalesce(dims: &[usize], strides: &[&[usize]]) -> (Vec<usize>, Vec<Vec<usize>>) {
    if dims.contains(&0) {
        return (vec![0], vec![vec![0]; strides.len()]);
    }
    let mut out_dims: Vec<usize> = Vec::with_capacity(dims.len());
    let mut out_strides: Vec<Vec<usize>> = vec![Vec::with_capacity(dims.len()); strides.len()];
    for (d, &n) in dims.iter().enumerate() {
        if n == 1 {
            continue;
        }
        let merge = match out_dims.last() {
            None => false,
            Some(_) => strides.iter().zip(&out_strides).all(|(s, os)| {
                let prev = *os.last().unwrap_or(&0);
                prev == s[d].wrapping_mul(n)
            }),
        };
        if merge {
            if let Some(last) = out_dims.last_mut() {
                *last *= n;
            }
            for (s, os) in strides.iter().zip(out_strides.iter_mut()) {
                if let Some(l) = os.last_mut() {
                    *l = s[d];
                }
            }
        } else {
            out_dims.push(n);
            for (s, os) in strides.iter().zip(out_strides.iter_mut()) {
                os.push(s[d]);
            }
        }
    }
    if out_dims.is_empty() {
        out_dims.push(1);
        for os in out_strides.iter_mut() {
            os.push(0);
        }
    }
    (out_dims, out_strides)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesce_drops_ones_and_merges_lined_up_axes() {
        // [2,1,3,2,2,2] -> [2,15,3,2,2,2]: copy 2 / broadcast 15 / copy 24.
        let l = Layout::contiguous(&[2, 1, 3, 2, 2, 2])
            .broadcast_to(&[2, 15, 3, 2, 2, 2])
            .unwrap_or_else(|| Layout::contiguous(&[]));
        let (dims, s) = coalesce(l.dims(), &[l.strides()]);
        assert_eq!(dims, vec![2, 15, 24]);
        assert_eq!(s, vec![vec![24, 0, 1]]);
        let (dims, s) = coalesce(&[1, 1, 1], &[&[0, 0, 0]]);
        assert_eq!((dims, s), (vec![1], vec![vec![0]]));
        let (dims, _) = coalesce(&[3, 0, 2], &[&[0, 2, 1]]);
        assert_eq!(dims, vec![0]);
    }

    #[test]
    fn runs_walk_row_major_order() {
        let l = Layout::contiguous(&[2, 1, 3])
            .broadcast_to(&[2, 4, 3])
            .unwrap_or_else(|| Layout::contiguous(&[]));
        let offsets: Vec<usize> = l.runs().map(|r| r.offset).collect();
        assert_eq!(offsets, vec![0, 0, 0, 0, 3, 3, 3, 3]);
        assert!(l.runs().all(|r| r.len == 3 && r.stride == 1));
        assert_eq!(Layout::contiguous(&[0, 5]).runs().count(), 0);
        assert_eq!(Layout::contiguous(&[]).runs().collect::<Vec<_>>().len(), 1);
    }

    #[test]
    fn broadcast_to_rejects_mismatches() {
        assert!(Layout::contiguous(&[3]).broadcast_to(&[2, 4]).is_none());
        assert!(Layout::contiguous(&[2, 3]).broadcast_to(&[3]).is_none());
        let l = Layout::contiguous(&[3, 1]).broadcast_to(&[2, 3, 5]);
        assert_eq!(l.map(|l| l.strides().to_vec()), Some(vec![0, 1, 0]));
    }

    #[test]
    fn contiguity_and_max_offset() {
        assert!(Layout::contiguous(&[2, 3]).is_contiguous());
        let b = Layout::contiguous(&[1, 3]).broadcast_to(&[2, 3]);
        assert_eq!(b.as_ref().map(Layout::is_contiguous), Some(false));
        assert_eq!(b.and_then(|b| b.max_offset()), Some(2));
        assert_eq!(Layout::contiguous(&[0]).max_offset(), None);
    }
}
