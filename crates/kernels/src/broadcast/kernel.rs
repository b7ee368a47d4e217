//! TensorFlow's `BroadcastTo`, materialised: [`broadcast_to`], [`broadcast_to_op`] (the shape
//! as an int32/int64 tensor, as the op takes it), [`broadcast_to_in`] (with an allocator) and
//! [`TensorOps::broadcast_to`](crate::TensorOps::broadcast_to). The lazy form, which allocates nothing, is
//! [`TensorOps::broadcast_view`](crate::TensorOps::broadcast_view).
//!
//! # Semantics
//! The checks run in the order of TensorFlow's kernel (`broadcast_to_op.cc`), with its messages:
//! 1. the shape operand must be a vector (`shape must be a vector of {int32,int64}, got shape
//!    [..]`) of int32 or int64 (`shape must be a vector of {int32,int64}.`), and its values a
//!    valid shape (`Too many dimensions`, `Dimension -1 must be >= 0`, `Shape [..] would have
//!    more than 2**63 - 1 elements`);
//! 2. a target equal to the input's shape returns the input itself: the same buffer, no copy;
//! 3. `Rank of input (r) must be no greater than rank of output shape (s).`;
//! 4. a scalar input fills any shape (even one with no elements);
//! 5. the shapes must broadcast (`Incompatible shapes: [..] vs. [..]`; 0 is an ordinary size),
//! 6. to exactly the target (`Unable to broadcast tensor of shape [..] to tensor of shape [..]`);
//! 7. only then is an empty result returned, so validation is never skipped for empty outputs.
//!
//! TensorFlow allocates the output between steps 3 and 4, so an absurdly large *invalid*
//! target fails there with an out-of-memory error; tensorcast validates first and allocates
//! last, so it reports the shape error instead (and never allocates for a request that fails).
//!
//! # The kernel
//! Broadcasting is memory-bound: the output is written once and the input (at most as large)
//! is read from cache. The kernel first reduces the problem: output axes of size 1 are dropped
//! and neighbouring axes that are both broadcast (input size 1) or both copied (input size =
//! output size) are merged, so `[4096,1] -> [4096,16384]` becomes "4096 copies of a fill" and
//! `[2,1,3,2,2,2] -> [2,15,3,2,2,2]` becomes copy 2 / broadcast 15 / copy 24. It then writes the
//! output front to back through a [`Writer`] (no zero pass first): contiguous input runs are
//! copied with `memcpy` (streaming stores for large outputs), a broadcast innermost axis is a
//! fill built by doubling in an L1-sized block, a broadcast axis over a small inner block
//! builds that block once and repeats it, and pieces under 2 KiB are gathered in a 16 KiB
//! staging buffer so that tiny runs cost a few cached byte copies rather than a call each.
//! Outputs of 1 MiB and more are split into ~2 MiB chunks written in parallel on the rayon
//! pool; each chunk computes its own starting input position from its element range, so chunk
//! boundaries need not line up with rows.
//!
//! String, resource and variant tensors hold Rust objects; they are broadcast by cloning each
//! element (through the lazy view) and do not use the allocator.
//!
//! ```
//! use tensorcast_core::{Tensor, TensorShape};
//! use tensorcast_kernels::broadcast::broadcast_to_op;
//! use tensorcast_kernels::TensorOps;
//! // TensorFlow's documented example: [[1, 2, 3]] (shape [1, 3]) broadcast to [2, 3].
//! let x = Tensor::from_slice(&[1i32, 2, 3], &TensorShape::new(&[1, 3]).unwrap()).unwrap();
//! let y = broadcast_to_op(&x, &Tensor::vector(&[2i32, 3])).unwrap();
//! assert_eq!(y.shape().to_string(), "[2,3]");
//! assert_eq!(y.as_slice::<i32>().unwrap(), &[1, 2, 3, 1, 2, 3]);
//! // The same shape is the input itself.
//! let same = x.broadcast_to(&TensorShape::new(&[1, 3]).unwrap()).unwrap();
//! assert!(same.shares_buffer_with(&x));
//! // TensorFlow's messages.
//! let bad = broadcast_to_op(&Tensor::vector(&[1.0f32, 2.0, 3.0]), &Tensor::vector(&[2i64, 4]));
//! assert_eq!(bad.unwrap_err().to_string(), "Incompatible shapes: [3] vs. [2,4]");
//! ```

use std::sync::Arc;

use tensorcast_buffer::{cpu_allocator, Allocator, Writer};

use super::shape::{check_broadcast_to, shape_from_tensor};
use tensorcast_core::layout::{coalesce, Layout};
use tensorcast_core::{Element, Tensor, TensorShape};
use tensorcast_core::{Error, Result};

/// Pieces at least this large bypass the staging buffer and go straight to the writer.
const DIRECT_BYTES: usize = 2 * 1024;
/// The staging buffer that gathers small pieces (L1-sized).
const STAGE_BYTES: usize = 16 * 1024;
/// A fill of a small pattern is written from a block of whole patterns about this large.
const FILL_BLOCK_BYTES: usize = 8 * 1024;
/// A broadcast axis over an inner block up to this size builds the block once and repeats it.
const PATTERN_MAX_BYTES: usize = 32 * 1024;
/// Outputs at least this large are written in parallel.
const PARALLEL_MIN_BYTES: usize = 1 << 20;
/// Largest parallel chunk.
const CHUNK_MAX_BYTES: usize = 2 << 20;
/// Smallest parallel chunk.
const CHUNK_MIN_BYTES: usize = 256 << 10;

/// `BroadcastTo(input, shape)` with the shape as an int32 or int64 vector, as the op takes it
/// (TensorFlow's checks and messages, in its order; see the module docs). Output from the
/// default allocator.
///
/// # Errors
/// As [`shape_from_tensor`] for the shape operand, then as [`broadcast_to`].
///
/// ```
/// use tensorcast_core::{Tensor};
/// use tensorcast_kernels::broadcast::broadcast_to_op;
/// let y = broadcast_to_op(&Tensor::from(7u8), &Tensor::vector(&[2i32, 2]))?;
/// assert_eq!(y.as_slice::<u8>()?, &[7, 7, 7, 7]);
/// let err = broadcast_to_op(&Tensor::from(7u8), &Tensor::from(2i32)).unwrap_err();
/// assert_eq!(err.to_string(), "shape must be a vector of {int32,int64}, got shape []");
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn broadcast_to_op(input: &Tensor, shape: &Tensor) -> Result<Tensor> {
    broadcast_to_op_in(&cpu_allocator(), input, shape)
}

/// [`broadcast_to_op`] with the output's memory from `allocator`.
///
/// # Errors
/// As [`shape_from_tensor`] for the shape operand, then as [`broadcast_to_in`].
pub fn broadcast_to_op_in(
    allocator: &Arc<dyn Allocator>,
    input: &Tensor,
    shape: &Tensor,
) -> Result<Tensor> {
    let output_shape = shape_from_tensor(shape)?;
    broadcast_to_in(allocator, input, &output_shape)
}

/// `BroadcastTo(input, shape)`: a new tensor of `shape` whose element at each index is the
/// input's element with every broadcast axis read at 0 (numpy's `broadcast_to`, materialised).
/// The input itself (shared, not copied) when `shape` is its shape. Output from the default
/// allocator.
///
/// # Errors
/// As [`broadcast_to_in`] with the default allocator.
///
/// ```
/// use tensorcast_core::{Tensor, TensorShape};
/// use tensorcast_kernels::broadcast::broadcast_to;
/// let col = Tensor::from_slice(&[1.0f32, 2.0], &TensorShape::new(&[2, 1])?)?;
/// let y = broadcast_to(&col, &TensorShape::new(&[2, 3])?)?;
/// assert_eq!(y.as_slice::<f32>()?, &[1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn broadcast_to(input: &Tensor, shape: &TensorShape) -> Result<Tensor> {
    broadcast_to_in(&cpu_allocator(), input, shape)
}

/// [`broadcast_to`] with the output's memory from `allocator` (memcpy-able dtypes; string,
/// resource and variant elements are Rust objects and do not use it).
///
/// # Errors
/// [`check_broadcast_to`]'s errors when `input` does not broadcast to `shape`;
/// [`Error::Uninitialized`] when `input` has elements but no buffer; [`Error::Alloc`] when the
/// allocator fails, [`Error::OutOfMemory`] when the output's size does not fit in memory.
pub fn broadcast_to_in(
    allocator: &Arc<dyn Allocator>,
    input: &Tensor,
    shape: &TensorShape,
) -> Result<Tensor> {
    // Step 2: the identity forwards the input, before any other check.
    if input.shape() == shape {
        return Ok(input.clone());
    }
    check_broadcast_to(input.shape(), shape)?;
    let dtype = input.dtype();
    if shape.num_elements() == 0 {
        return Tensor::new_in(
            allocator,
            dtype,
            shape,
            &tensorcast_buffer::AllocationAttributes::default(),
        );
    }
    tensorcast_core::dispatch!(dtype, [object] T => broadcast_objects::<T>(input, shape),
        _ => broadcast_bytes(allocator, input, shape))
}

/// Objects (strings, handles, variants): one clone per output element, read through the lazy
/// view. The shapes were validated by the caller.
fn broadcast_objects<T: Element>(input: &Tensor, shape: &TensorShape) -> Result<Tensor> {
    let view = super::view::broadcast_view(input, shape)?;
    let view = view.array::<T>()?;
    let n = shape.num_elements_usize();
    let mut values = Vec::new();
    values
        .try_reserve_exact(n)
        .map_err(|_| Error::OutOfMemory {
            dtype: T::DTYPE,
            elements: n as u64,
        })?;
    values.extend(view.iter().cloned());
    Tensor::from_vec(values, shape)
}

/// Memcpy-able dtypes: the byte kernel.
fn broadcast_bytes(
    allocator: &Arc<dyn Allocator>,
    input: &Tensor,
    shape: &TensorShape,
) -> Result<Tensor> {
    input.check_initialized()?;
    let es = input.dtype().size();
    let src = input.tensor_data()?;
    if es == 0 || src.len() != input.shape().num_elements_usize() * es {
        return Err(Error::ByteCount {
            actual: src.len(),
            expected: input.num_elements() as u128 * es as u128,
        });
    }
    let plan = Plan::new(src, es, input.shape().dim_sizes(), shape.dim_sizes());
    Tensor::from_writer(allocator, input.dtype(), shape, |w| plan.write(w))
}

/// One axis of the reduced problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Axis {
    /// Output size along the axis (> 1, except for the single axis of a 1-element output).
    n: usize,
    /// True if the input has size 1 here (every index reads the same input position).
    bcast: bool,
    /// Input elements per step along the axis (0 when broadcast).
    stride: usize,
}

/// The reduced broadcast: alternating broadcast and copy axes over the input bytes.
struct Plan<'a> {
    src: &'a [u8],
    es: usize,
    axes: Vec<Axis>,
    /// `inner[d]`: output elements of one step along axis `d` (product of the sizes after it).
    inner: Vec<usize>,
}

/// The input's layout read as broadcast to `output` ([`Layout::broadcast_to`]), coalesced
/// ([`coalesce`]: size-1 output axes dropped, neighbours of the same kind merged), as axes.
/// `input` must broadcast to `output` (validated) and `output` must have elements.
fn reduce_axes(input: &[i64], output: &[i64]) -> Vec<Axis> {
    let to_usize = |d: &[i64]| d.iter().map(|&x| x as usize).collect::<Vec<_>>();
    let out = to_usize(output);
    let layout = Layout::contiguous(&to_usize(input))
        .broadcast_to(&out)
        .unwrap_or_else(|| Layout::contiguous(&out));
    let (dims, strides) = coalesce(layout.dims(), &[layout.strides()]);
    dims.iter()
        .zip(&strides[0])
        .map(|(&n, &stride)| Axis {
            n,
            bcast: stride == 0 && n > 1,
            stride,
        })
        .collect()
}

impl<'a> Plan<'a> {
    fn new(src: &'a [u8], es: usize, input: &[i64], output: &[i64]) -> Self {
        let axes = reduce_axes(input, output);
        let mut inner = vec![1usize; axes.len()];
        for d in (0..axes.len().saturating_sub(1)).rev() {
            inner[d] = inner[d + 1] * axes[d + 1].n;
        }
        Self {
            src,
            es,
            axes,
            inner,
        }
    }

    fn total_elements(&self) -> usize {
        self.axes[0].n * self.inner[0]
    }

    /// Writes the whole output.
    fn write(&self, w: &mut Writer<'_>) {
        let total = self.total_elements();
        let bytes = w.remaining();
        let threads = rayon::current_num_threads();
        if bytes >= PARALLEL_MIN_BYTES && threads > 1 {
            let target = (bytes / (threads * 4)).clamp(CHUNK_MIN_BYTES, CHUNK_MAX_BYTES);
            // Whole elements per chunk, and a multiple of 4 KiB where the element size allows,
            // so that chunks start on cache lines.
            let chunk_elems = ((target / 4096).max(1) * 4096 / self.es).max(1);
            w.par_chunks(chunk_elems * self.es, |i, cw| {
                let lo = i * chunk_elems;
                let hi = (lo + chunk_elems).min(total);
                let mut out = Out::new(Some(cw));
                self.range(&mut out, 0, 0, lo, hi);
                out.flush();
            });
        } else {
            let mut out = Out::new(Some(w));
            self.span(&mut out, 0, 0, 0, self.axes[0].n);
            out.flush();
        }
    }

    fn elems(&self, off: usize, n: usize) -> &'a [u8] {
        &self.src[off * self.es..(off + n) * self.es]
    }

    /// Output indices `lo..hi` along the last axis.
    fn piece(&self, out: &mut Out<'_, '_>, d: usize, off: usize, lo: usize, hi: usize) {
        if self.axes[d].bcast {
            out.fill(self.elems(off, 1), hi - lo);
        } else {
            out.slice(self.elems(off + lo, hi - lo));
        }
    }

    /// Whole steps `j0..j1` along axis `d`, whose step 0 reads input element `off`.
    fn span(&self, out: &mut Out<'_, '_>, d: usize, off: usize, j0: usize, j1: usize) {
        if j0 >= j1 {
            return;
        }
        let last = self.axes.len() - 1;
        if d == last {
            return self.piece(out, d, off, j0, j1);
        }
        let a = self.axes[d];
        let next_n = self.axes[d + 1].n;
        if !a.bcast {
            if d + 1 == last && next_n * self.es < DIRECT_BYTES {
                // Each input element of a contiguous run (the innermost copy axis has stride
                // 1) repeated `next_n` times: one tight loop instead of a fill per element.
                out.expand(self.elems(off + j0, j1 - j0), self.es, next_n);
                return;
            }
            for j in j0..j1 {
                self.span(out, d + 1, off + j * a.stride, 0, next_n);
            }
            return;
        }
        let count = j1 - j0;
        if count == 1 {
            self.span(out, d + 1, off, 0, next_n);
        } else if d + 1 == last {
            // Axes alternate, so the inner block is one contiguous input run: repeat it.
            out.fill(self.elems(off, next_n), count);
        } else if self.inner[d] * self.es <= PATTERN_MAX_BYTES {
            let mut block = Out::new(None);
            self.span(&mut block, d + 1, off, 0, next_n);
            out.fill(&block.buf, count);
        } else {
            for _ in 0..count {
                self.span(out, d + 1, off, 0, next_n);
            }
        }
    }

    /// Output elements `lo..hi` of the block of axis `d` (all its steps), reading from `off`.
    fn range(&self, out: &mut Out<'_, '_>, d: usize, off: usize, lo: usize, hi: usize) {
        if lo >= hi {
            return;
        }
        if d == self.axes.len() - 1 {
            return self.piece(out, d, off, lo, hi);
        }
        let a = self.axes[d];
        let e = self.inner[d];
        let at = |j: usize| if a.bcast { off } else { off + j * a.stride };
        let mut j = lo / e;
        if !lo.is_multiple_of(e) {
            let end = (hi - j * e).min(e);
            self.range(out, d + 1, at(j), lo - j * e, end);
            j += 1;
        }
        let full_end = hi / e;
        if j < full_end {
            self.span(out, d, off, j, full_end);
            j = full_end;
        }
        if j * e < hi {
            self.range(out, d + 1, at(j), 0, hi - j * e);
        }
    }
}

/// Where the kernel's pieces go: a [`Writer`], through a staging buffer that gathers small
/// pieces; or, without a writer, only the buffer (to build a block that is then repeated).
struct Out<'w, 'a> {
    w: Option<&'w mut Writer<'a>>,
    buf: Vec<u8>,
    /// A block of whole copies of `blk_pat` bytes, for large fills of small patterns.
    blk: Vec<u8>,
    blk_pat: usize,
}

impl<'w, 'a> Out<'w, 'a> {
    fn new(w: Option<&'w mut Writer<'a>>) -> Self {
        let cap = w.as_ref().map_or(0, |w| w.remaining().min(STAGE_BYTES));
        Self {
            w,
            buf: Vec::with_capacity(cap),
            blk: Vec::new(),
            blk_pat: 0,
        }
    }

    fn flush(&mut self) {
        if let Some(w) = self.w.as_deref_mut() {
            if !self.buf.is_empty() {
                w.put_slice(&self.buf);
                self.buf.clear();
            }
        }
    }

    /// Appends a copy of `s`.
    fn slice(&mut self, s: &[u8]) {
        if s.len() >= DIRECT_BYTES || self.buf.len() + s.len() > STAGE_BYTES {
            if let Some(w) = self.w.as_deref_mut() {
                if !self.buf.is_empty() {
                    w.put_slice(&self.buf);
                    self.buf.clear();
                }
                if s.len() >= DIRECT_BYTES {
                    w.put_slice(s);
                    return;
                }
            }
        }
        self.buf.extend_from_slice(s);
    }

    /// Appends each `es`-byte element of `src` repeated `n` times (`n * es` is small).
    fn expand(&mut self, src: &[u8], es: usize, n: usize) {
        let row = es * n;
        let per_batch = (STAGE_BYTES / row).max(1);
        for batch in src.chunks(per_batch * es) {
            let need = batch.len() / es * row;
            if self.buf.len() + need > STAGE_BYTES {
                self.flush();
            }
            let start = self.buf.len();
            self.buf.resize(start + need, 0);
            let dst = &mut self.buf[start..];
            match (es, n) {
                (1, 2) => expand_const::<1, 2>(batch, dst),
                (1, 3) => expand_const::<1, 3>(batch, dst),
                (1, 4) => expand_const::<1, 4>(batch, dst),
                (2, 2) => expand_const::<2, 2>(batch, dst),
                (2, 3) => expand_const::<2, 3>(batch, dst),
                (2, 4) => expand_const::<2, 4>(batch, dst),
                (4, 2) => expand_const::<4, 2>(batch, dst),
                (4, 3) => expand_const::<4, 3>(batch, dst),
                (4, 4) => expand_const::<4, 4>(batch, dst),
                (8, 2) => expand_const::<8, 2>(batch, dst),
                (8, 3) => expand_const::<8, 3>(batch, dst),
                (8, 4) => expand_const::<8, 4>(batch, dst),
                (1, _) => expand_fixed::<1>(batch, dst, n),
                (2, _) => expand_fixed::<2>(batch, dst, n),
                (4, _) => expand_fixed::<4>(batch, dst, n),
                (8, _) => expand_fixed::<8>(batch, dst, n),
                (16, _) => expand_fixed::<16>(batch, dst, n),
                _ => {
                    for (d, s) in dst.chunks_exact_mut(row).zip(batch.chunks_exact(es)) {
                        for x in d.chunks_exact_mut(es) {
                            x.copy_from_slice(s);
                        }
                    }
                }
            }
        }
    }

    /// Appends `count` copies of `pat`.
    fn fill(&mut self, pat: &[u8], count: usize) {
        let p = pat.len();
        let total = p * count;
        if total == 0 {
            return;
        }
        if count == 1 {
            return self.slice(pat);
        }
        if total >= DIRECT_BYTES || self.buf.len() + total > STAGE_BYTES {
            if let Some(w) = self.w.as_deref_mut() {
                if !self.buf.is_empty() {
                    w.put_slice(&self.buf);
                    self.buf.clear();
                }
                if p >= DIRECT_BYTES {
                    for _ in 0..count {
                        w.put_slice(pat);
                    }
                    return;
                }
                if total >= DIRECT_BYTES {
                    let per = (FILL_BLOCK_BYTES / p).clamp(1, count);
                    if self.blk_pat != p || self.blk.len() != per * p || self.blk[..p] != *pat {
                        self.blk.clear();
                        repeat_into(&mut self.blk, pat, per);
                        self.blk_pat = p;
                    }
                    let mut left = count;
                    while left >= per {
                        w.put_slice(&self.blk);
                        left -= per;
                    }
                    if left > 0 {
                        w.put_slice(&self.blk[..left * p]);
                    }
                    return;
                }
            }
        }
        repeat_into(&mut self.buf, pat, count);
    }
}

/// Writes each `ES`-byte element of `src` `n` times into `dst` (`src.len() / ES * n * ES`
/// bytes).
fn expand_fixed<const ES: usize>(src: &[u8], dst: &mut [u8], n: usize) {
    for (d, s) in dst.chunks_exact_mut(ES * n).zip(src.chunks_exact(ES)) {
        let mut e = [0u8; ES];
        e.copy_from_slice(s);
        for x in d.chunks_exact_mut(ES) {
            x.copy_from_slice(&e);
        }
    }
}

/// [`expand_fixed`] with the repeat count known at compile time, so the copies unroll into
/// a few fixed-size stores.
fn expand_const<const ES: usize, const N: usize>(src: &[u8], dst: &mut [u8]) {
    for (d, s) in dst.chunks_exact_mut(ES * N).zip(src.chunks_exact(ES)) {
        let mut e = [0u8; ES];
        e.copy_from_slice(s);
        for k in 0..N {
            d[k * ES..(k + 1) * ES].copy_from_slice(&e);
        }
    }
}

/// Appends `count` copies of `pat` to `v` by doubling.
fn repeat_into(v: &mut Vec<u8>, pat: &[u8], count: usize) {
    let start = v.len();
    let total = pat.len() * count;
    v.reserve(total);
    if pat.len() <= 16 && count <= 16 {
        for _ in 0..count {
            v.extend_from_slice(pat);
        }
        return;
    }
    v.extend_from_slice(pat);
    while v.len() - start < total {
        let have = v.len() - start;
        let n = have.min(total - have);
        v.extend_from_within(start..start + n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ax(n: usize, bcast: bool, stride: usize) -> Axis {
        Axis { n, bcast, stride }
    }

    #[test]
    fn reduce_drops_ones_and_merges_same_kind() {
        // [2,1,3,2,2,2] -> [2,15,3,2,2,2]: copy 2 / broadcast 15 / copy 24.
        assert_eq!(
            reduce_axes(&[2, 1, 3, 2, 2, 2], &[2, 15, 3, 2, 2, 2]),
            vec![ax(2, false, 24), ax(15, true, 0), ax(24, false, 1)]
        );
        // Leading new axes are broadcast; size-1 output axes vanish.
        assert_eq!(
            reduce_axes(&[1, 3], &[4, 1, 5, 1, 3]),
            vec![ax(20, true, 0), ax(3, false, 1)]
        );
        assert_eq!(reduce_axes(&[1, 1], &[1, 1, 1]), vec![ax(1, false, 0)]);
        assert_eq!(reduce_axes(&[], &[7]), vec![ax(7, true, 0)]);
    }

    #[test]
    fn range_pieces_concatenate_to_the_whole() {
        let src: Vec<u8> = (0..24).collect();
        let plan = Plan::new(&src, 1, &[2, 1, 3, 1, 4], &[2, 3, 3, 2, 4]);
        let total = plan.total_elements();
        let mut whole = Out::new(None);
        plan.span(&mut whole, 0, 0, 0, plan.axes[0].n);
        for cut in [1, 5, 7, 24, 37, total - 1] {
            let mut a = Out::new(None);
            plan.range(&mut a, 0, 0, 0, cut);
            plan.range(&mut a, 0, 0, cut, total);
            assert_eq!(a.buf, whole.buf, "cut at {cut}");
        }
    }

    #[test]
    fn repeat_into_doubles_exactly() {
        let mut v = vec![9];
        repeat_into(&mut v, &[1, 2, 3], 37);
        assert_eq!(v.len(), 1 + 3 * 37);
        assert!(v[1..].chunks(3).all(|c| c == [1, 2, 3]));
    }
}
