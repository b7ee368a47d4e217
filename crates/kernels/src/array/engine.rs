//! The copy engine of the data-movement ops: an op describes its output as a sequence of
//! equal-sized *units* (a row, a slice, a gathered block) and says how to produce a range of
//! them from its inputs through a [`Sink`] (copy a run, fill, read with a stride). The engine
//! runs that description on every dtype: memcpy-able dtypes as fixed-size byte arrays (`[u8;
//! N]`, so that no input needs any alignment and the copies are plain loads and stores),
//! written once through the buffer crate's [`Writer`] (no zero fill first, streaming stores for
//! large outputs) and split across the rayon pool above 1 MiB; strings, resources and variants
//! as their objects, cloned into a vector reserved fallibly.
//!
//! [`strided`] is the general kernel most ops reduce to: a strided view of one input (signed
//! strides, so that reversed slices are views too), with adjacent axes merged, each innermost
//! run a memcpy, a fill (stride 0) or a strided read, and a blocked path for transposes (the
//! innermost output axis strided, the next one dense in the input: a band of rows is gathered
//! from cache-line reads into a small staging block). When the view is one dense run, the
//! result shares the input's buffer instead.

use std::ops::Range;

use tensorcast_buffer::{cpu_allocator_ref, Writer};
use tensorcast_core::{dispatch, Code, DataType, Error, Result, Tensor, TensorShape};

use super::common::oom;

/// Where a kernel writes its output, in order.
pub(crate) trait Sink<T> {
    /// Appends a copy of `s`.
    fn slice(&mut self, s: &[T]);
    /// Appends `n` copies of `v`.
    fn fill(&mut self, v: &T, n: usize);
    /// Appends `src[start + j * stride]` for `j` in `0..n` (every index in bounds).
    fn strided(&mut self, src: &[T], start: usize, stride: isize, n: usize);
}

/// What the array kernels move: elements that clone and cross threads.
pub(crate) trait Elem: Clone + Send + Sync {}
impl<T: Clone + Send + Sync> Elem for T {}

/// An op's output as units: [`Kernel::run`] appends units `units` of the output to `sink`,
/// exactly `unit` elements each.
pub(crate) trait Kernel: Sync {
    /// Produces the units in `units` from `inputs` (the op's data inputs, in its order).
    fn run<T: Elem, S: Sink<T>>(&self, inputs: &[&[T]], units: Range<usize>, sink: &mut S);
}

struct WriterSink<'a, 'b> {
    w: &'a mut Writer<'b>,
}

impl<const N: usize> Sink<[u8; N]> for WriterSink<'_, '_> {
    #[inline]
    fn slice(&mut self, s: &[[u8; N]]) {
        self.w.put_slice(s.as_flattened());
    }
    #[inline]
    fn fill(&mut self, v: &[u8; N], n: usize) {
        self.w.put_fill(v, n);
    }
    #[inline]
    fn strided(&mut self, src: &[[u8; N]], start: usize, stride: isize, n: usize) {
        let mut at = start as isize;
        self.w.put_indexed(n, |_| {
            let v = src[at as usize];
            at += stride;
            v
        });
    }
}

struct VecSink<'a, T> {
    v: &'a mut Vec<T>,
}

impl<T: Clone> Sink<T> for VecSink<'_, T> {
    fn slice(&mut self, s: &[T]) {
        self.v.extend_from_slice(s);
    }
    fn fill(&mut self, v: &T, n: usize) {
        self.v.extend(std::iter::repeat_n(v, n).cloned());
    }
    fn strided(&mut self, src: &[T], start: usize, stride: isize, n: usize) {
        let mut at = start as isize;
        for _ in 0..n {
            self.v.push(src[at as usize].clone());
            at += stride;
        }
    }
}

/// The largest output a data-movement op allocates (1 TiB): a larger one is TensorFlow's
/// `RESOURCE_EXHAUSTED` text at once, without asking the allocator (an input of a few bytes
/// asking for terabytes, through `Tile`, `Fill`, `Range`, `Pad`, never reaches it).
pub(crate) const MAX_OUTPUT_BYTES: u128 = 1 << 40;

/// TensorFlow's OOM error when `elements` of `dtype` exceed [`MAX_OUTPUT_BYTES`].
pub(crate) fn check_output(op: &'static str, dtype: DataType, dims: &[i64]) -> Result<()> {
    let elements = dims
        .iter()
        .fold(1u128, |a, &d| a.saturating_mul(d.max(0) as u128));
    let size = if dtype.can_use_memcpy() {
        dtype.size().max(1)
    } else {
        32
    } as u128;
    if elements.saturating_mul(size) > MAX_OUTPUT_BYTES {
        return Err(oom(op, dtype, dims));
    }
    Ok(())
}

/// Work from which units are produced in parallel, and the smallest parallel chunk.
const PARALLEL_MIN_BYTES: usize = 1 << 20;
const CHUNK_MIN_BYTES: usize = 256 << 10;

/// Builds the output of `shape` and `dtype` (the dtype of every input) by running `kernel`
/// over `units` units of `unit` elements each (`units * unit` = the output's element count).
///
/// # Errors
/// [`Error::Uninitialized`](tensorcast_core::Error::Uninitialized)-style errors for inputs without data; TensorFlow's
/// `RESOURCE_EXHAUSTED` text when the output cannot be allocated.
pub(crate) fn produce<K: Kernel>(
    op: &'static str,
    dtype: DataType,
    shape: &TensorShape,
    inputs: &[&Tensor],
    unit: usize,
    kernel: &K,
) -> Result<Tensor> {
    let n = shape.num_elements_usize();
    if n == 0 {
        return Tensor::new(dtype, shape).map_err(|e| alloc_error(op, dtype, shape, e));
    }
    check_output(op, dtype, shape.dim_sizes())?;
    let units = n / unit.max(1);
    for t in inputs {
        if t.num_elements() > 0 && !t.is_initialized() {
            return Err(Error::Uninitialized {
                op: "read",
                dtype: t.dtype(),
                elements: t.num_elements(),
            });
        }
    }
    if dtype.can_use_memcpy() {
        return match dtype.size() {
            1 => bytes::<1, K>(op, dtype, shape, inputs, unit, units, kernel),
            2 => bytes::<2, K>(op, dtype, shape, inputs, unit, units, kernel),
            4 => bytes::<4, K>(op, dtype, shape, inputs, unit, units, kernel),
            8 => bytes::<8, K>(op, dtype, shape, inputs, unit, units, kernel),
            16 => bytes::<16, K>(op, dtype, shape, inputs, unit, units, kernel),
            _ => Err(Error::Internal(format!(
                "{op}: element size {}",
                dtype.size()
            ))),
        };
    }
    dispatch!(dtype, [object] T => {
        let srcs: Vec<&[T]> = inputs.iter().map(|t| t.as_slice::<T>()).collect::<Result<_>>()?;
        let mut v: Vec<T> = Vec::new();
        v.try_reserve_exact(n).map_err(|_| oom(op, dtype, shape.dim_sizes()))?;
        kernel.run(&srcs, 0..units, &mut VecSink { v: &mut v });
        Tensor::from_vec(v, shape)
    }, _ => Err(Error::InvalidDtype { dtype }))
}

fn alloc_error(op: &'static str, dtype: DataType, shape: &TensorShape, e: Error) -> Error {
    if e.code() == Code::ResourceExhausted {
        oom(op, dtype, shape.dim_sizes())
    } else {
        e
    }
}

fn bytes<const N: usize, K: Kernel>(
    op: &'static str,
    dtype: DataType,
    shape: &TensorShape,
    inputs: &[&Tensor],
    unit: usize,
    units: usize,
    kernel: &K,
) -> Result<Tensor> {
    let mut srcs: Vec<&[[u8; N]]> = Vec::with_capacity(inputs.len());
    for t in inputs {
        let data = t.tensor_data()?;
        let (chunks, rest) = data.as_chunks::<N>();
        if !rest.is_empty() {
            return Err(Error::Internal(format!("{op}: ragged input bytes")));
        }
        srcs.push(chunks);
    }
    let unit_bytes = unit * N;
    let total = units * unit_bytes;
    Tensor::from_writer(cpu_allocator_ref(), dtype, shape, |w| {
        if total >= PARALLEL_MIN_BYTES && units > 1 && rayon::current_num_threads() > 1 {
            let per = units.div_ceil(rayon::current_num_threads() * 4);
            let per = per.max(CHUNK_MIN_BYTES.div_ceil(unit_bytes.max(1))).max(1);
            w.par_chunks(per * unit_bytes, |i, w| {
                let start = i * per;
                let end = (start + per).min(units);
                kernel.run(&srcs, start..end, &mut WriterSink { w });
            });
        } else {
            kernel.run(&srcs, 0..units, &mut WriterSink { w });
        }
    })
    .map_err(|e| alloc_error(op, dtype, shape, e))
}

/// A strided view of input 0: element `idx` of the output (of dims `dims`) is input element
/// `offset + sum(idx[d] * strides[d])`. Built by [`StridedView::new`], which merges axes.
#[derive(Debug, Clone)]
pub(crate) struct StridedView {
    dims: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

/// Output rows gathered together on the blocked (transpose) path.
const BAND: usize = 64;

impl StridedView {
    /// The view of `dims` (the output's) with `strides` (in elements) from `offset`, its axes
    /// of size 1 dropped and adjacent axes merged where their strides line up.
    pub(crate) fn new(dims: &[usize], strides: &[isize], offset: usize) -> Self {
        let mut d: Vec<usize> = Vec::with_capacity(dims.len());
        let mut s: Vec<isize> = Vec::with_capacity(dims.len());
        for (&n, &st) in dims.iter().zip(strides) {
            if n == 1 {
                continue;
            }
            if let (Some(&ln), Some(&ls)) = (d.last(), s.last()) {
                if ls == st * n as isize {
                    *d.last_mut().unwrap_or(&mut 0) = ln * n;
                    *s.last_mut().unwrap_or(&mut 0) = st;
                    continue;
                }
            }
            d.push(n);
            s.push(st);
        }
        if d.is_empty() {
            d.push(1);
            s.push(1);
        }
        Self {
            dims: d,
            strides: s,
            offset,
        }
    }

    /// True when the view is one dense run of the input (a zero-copy result).
    pub(crate) fn is_dense(&self) -> bool {
        self.dims.len() == 1 && (self.strides[0] == 1 || self.dims[0] <= 1)
    }

    /// Elements per unit (the innermost merged axis).
    pub(crate) fn unit(&self) -> usize {
        self.dims[self.dims.len() - 1]
    }
}

impl Kernel for StridedView {
    fn run<T: Elem, S: Sink<T>>(&self, inputs: &[&[T]], units: Range<usize>, sink: &mut S) {
        let src = inputs[0];
        let rank = self.dims.len();
        let inner = self.dims[rank - 1];
        let is = self.strides[rank - 1];
        let outer_dims = &self.dims[..rank - 1];
        let mut idx = vec![0usize; rank - 1];
        let mut r = units.start;
        for d in (0..rank - 1).rev() {
            idx[d] = r % outer_dims[d];
            r /= outer_dims[d];
        }
        let banded = rank >= 2 && self.strides[rank - 2] == 1 && is != 1 && is != 0 && inner > 1;
        let mut band: Vec<T> = Vec::new();
        let mut r = units.start;
        while r < units.end {
            let off = idx
                .iter()
                .zip(&self.strides)
                .fold(self.offset as isize, |a, (&i, &s)| a + i as isize * s);
            let mut step = 1;
            if banded {
                let b = BAND
                    .min(outer_dims[rank - 2] - idx[rank - 2])
                    .min(units.end - r);
                if b > 1 {
                    // Band rows are staged `pitch` elements apart: a power-of-two row length
                    // would put every row's element `j` in one cache set.
                    let pitch = inner + 64 / std::mem::size_of::<T>().max(1) + 1;
                    band.clear();
                    band.resize(b * pitch, src[0].clone());
                    // Column tiles of 64: the reads of a tile touch 64 input rows, `b`
                    // elements each, and its writes 64 consecutive elements of each band row.
                    for jt in (0..inner).step_by(64) {
                        for j in jt..(jt + 64).min(inner) {
                            let base = (off + j as isize * is) as usize;
                            for (k, v) in src[base..base + b].iter().enumerate() {
                                band[k * pitch + j] = v.clone();
                            }
                        }
                    }
                    for k in 0..b {
                        sink.slice(&band[k * pitch..k * pitch + inner]);
                    }
                    step = b;
                }
            }
            if step == 1 {
                match is {
                    1 => sink.slice(&src[off as usize..off as usize + inner]),
                    0 => sink.fill(&src[off as usize], inner),
                    _ => sink.strided(src, off as usize, is, inner),
                }
            }
            r += step;
            // Advance the outer index by `step` (only the last outer axis moves by more than 1,
            // and never past its end).
            if rank >= 2 {
                let mut d = rank - 2;
                idx[d] += step;
                while idx[d] >= outer_dims[d] && d > 0 {
                    idx[d] = 0;
                    d -= 1;
                    idx[d] += 1;
                }
            }
        }
    }
}

/// The strided view `view` of `input` as a tensor of `shape`: the input's buffer shared when the
/// view is one dense run, a copy otherwise.
///
/// # Errors
/// As [`produce`].
pub(crate) fn strided(
    op: &'static str,
    input: &Tensor,
    shape: &TensorShape,
    view: &StridedView,
) -> Result<Tensor> {
    let n = shape.num_elements_usize();
    if n > 0 && view.is_dense() && input.is_initialized() {
        let flat = input.reshape(vec![input.num_elements()])?;
        let part = flat.slice(view.offset as i64, (view.offset + n) as i64)?;
        return part.reshape(shape);
    }
    produce(op, input.dtype(), shape, &[input], view.unit(), view)
}

/// Row-major strides (in elements) of `dims`.
pub(crate) fn dense_strides(dims: &[usize]) -> Vec<isize> {
    let mut s = vec![0isize; dims.len()];
    let mut acc = 1isize;
    for d in (0..dims.len()).rev() {
        s[d] = acc;
        acc = acc.saturating_mul(dims[d] as isize);
    }
    s
}
