//! The broadcasting loop shared by every binary element-wise op.
//!
//! Both inputs are strided [`Layout`]s over the output's dims (stride 0 on broadcast axes).
//! The axes of the two are [`coalesce`]d together, so that the work is a set of innermost
//! runs; each run is one of four tight loops that the compiler vectorises: both operands dense
//! along the run, one of them a single element repeated along the run (a broadcast axis
//! innermost, or a scalar), or a general strided read. Results go to an L1-sized staging
//! block and from there to the output through the buffer crate's [`Writer`] (streaming stores
//! for large outputs), so the output is written once and never zeroed first. Outputs of
//! 1 MiB of work and more are split into chunks written in parallel on the rayon pool; each
//! chunk finds its own starting position from its element range.

use std::sync::Arc;

use tensorcast_buffer::simd::{vectorize, vectorize_wide, Kernel as Loop};
use tensorcast_buffer::{Allocator, Writer};

use tensorcast_core::layout::{coalesce, Layout};
use tensorcast_core::Result;
use tensorcast_core::{DataType, Tensor, TensorShape};

/// Staging block size in bytes: small, so that reading the inputs, computing and streaming the
/// results out interleave finely (1 KiB ran large broadcasts 15-25% faster than 8 KiB here).
const BLOCK_BYTES: usize = 1024;
/// Work (bytes read or written, whichever is larger) from which chunks run in parallel.
const PARALLEL_MIN_BYTES: usize = 1 << 20;
/// Largest and smallest parallel chunk of output elements' work, in bytes.
const CHUNK_MAX_BYTES: usize = 4 << 20;
const CHUNK_MIN_BYTES: usize = 256 << 10;
/// Outputs up to this many 8-byte words stage on the stack.
const SMALL_WORDS: usize = 32;
/// A broadcast row of at least this many bytes is read in column tiles across bands of output
/// rows ([`Plan::bands`]): the row no longer fits in L1 beside the other operand's stream.
const ROW_BLOCK_MIN_BYTES: usize = 16 << 10;
/// Output rows per band, and elements per column tile (8 KiB of `float` row stays in L1
/// while [`BAND_ROWS`] rows of the other operand stream past it).
const BAND_ROWS: usize = 4;
const TILE_ELEMS: usize = 2048;

/// One input: its elements and how the output's index space reads them.
#[derive(Clone, Copy)]
pub(crate) struct Src<'a, T> {
    pub(crate) data: &'a [T],
    /// `None`: dense over the output's shape, or a single element (by `data.len()`).
    pub(crate) layout: Option<&'a Layout>,
}

/// The two functions of a kernel: `main` for most elements and `tail` for the last
/// `tail_len` elements of the output (TensorFlow's vectorised loops treat the remainder that
/// does not fill a SIMD packet with scalar code, which differs for `Maximum`/`Minimum` of
/// `0` and `-0`; for every other op the two are the same function).
///
/// `fast` and `special` are an optional shortcut: `fast` computes the plain result (no
/// DAZ/FTZ, hardware NaN rules) and `special(a, b, r)` says when that may differ from `main`
/// (a subnormal or zero operand or result, two NaNs...). A block whose elements are never
/// special keeps the fast results; otherwise it is recomputed with `main`. Kernels without a
/// shortcut pass `main` and [`never`].
pub(crate) struct Kernel<F, G, H, S> {
    pub(crate) main: F,
    pub(crate) tail: G,
    pub(crate) tail_len: usize,
    pub(crate) fast: H,
    pub(crate) special: S,
}

/// The `special` of kernels without a shortcut.
pub(crate) fn never<T, O>(_: &T, _: &T, _: &O) -> bool {
    false
}

/// What a kernel's `special` returns: a flag that is set when not zero. Its type chooses the
/// lane width of the OR reduction in the vectorised loop: a `bool` reduces in bytes (so a loop
/// over `f32` packs its comparison masks down to bytes on every iteration), a `u32` in the
/// loop's own 32-bit lanes.
pub(crate) trait Flag: Copy + Default + PartialEq + std::ops::BitOr<Output = Self> {}

impl Flag for bool {}
impl Flag for u16 {}
impl Flag for u32 {}
impl Flag for u64 {}

/// Computes `out[i] = f(a[i], b[i])` over the broadcast output of `out_shape`, as a new tensor
/// of `out_dtype` (whose element type is `O`) from `allocator`.
pub(crate) fn run<T, O, M, F, G, H, S>(
    allocator: &Arc<dyn Allocator>,
    a: Src<'_, T>,
    b: Src<'_, T>,
    out_shape: &TensorShape,
    out_dtype: DataType,
    k: Kernel<F, G, H, S>,
) -> Result<Tensor>
where
    T: Sync,
    O: bytemuck::Pod + Send,
    M: Flag,
    F: Fn(&T, &T) -> O + Sync,
    G: Fn(&T, &T) -> O + Sync,
    H: Fn(&T, &T) -> O + Sync,
    S: Fn(&T, &T, &O) -> M + Sync,
{
    let n = out_shape.num_elements_usize();
    // Dense operands of the output's shape, or single elements, need no layout work (the
    // common case, and the one where per-call overhead shows).
    let simple = |s: &Src<'_, T>| -> Option<usize> {
        match s.layout {
            None if s.data.len() == 1 => Some(0),
            None => Some(1),
            Some(l) if s.data.len() == n && l.is_contiguous() && l.offset() == 0 => Some(1),
            Some(l) if s.data.len() == 1 && l.offset() == 0 => Some(0),
            Some(_) => None,
        }
    };
    // Small outputs of dense or single-element operands (where per-call costs show): one
    // pass straight into the output, `main` and `tail` only (`fast` is a shortcut to `main`'s
    // results, worth its check only on long runs).
    let osize = std::mem::size_of::<O>().max(1);
    if n * osize <= SMALL_WORDS * 8 && std::mem::align_of::<O>() <= 8 {
        if let (Some(step_a), Some(step_b)) = (simple(&a), simple(&b)) {
            return small(
                allocator, a.data, step_a, b.data, step_b, n, out_shape, out_dtype, &k,
            );
        }
    }
    let offset = |s: &Src<'_, T>| s.layout.map_or(0, Layout::offset);
    let (strides, dims);
    let (one_a, one_b, one_d);
    let (sa, sb, dims_ref): (&[usize], &[usize], &[usize]) = match (simple(&a), simple(&b)) {
        (Some(x), Some(y)) => {
            (one_a, one_b, one_d) = ([x], [y], [n]);
            (&one_a, &one_b, &one_d)
        }
        _ => {
            let out_dims = out_shape.dims_usize();
            // An operand without a layout is dense over the output, or one element read
            // everywhere (stride 0).
            let full = |s: &Src<'_, T>| match s.layout {
                Some(l) => l.clone(),
                None if s.data.len() == 1 => Layout::contiguous(&[])
                    .broadcast_to(&out_dims)
                    .unwrap_or_else(|| Layout::contiguous(&out_dims)),
                None => Layout::contiguous(&out_dims),
            };
            let (la, lb) = (full(&a), full(&b));
            (dims, strides) = coalesce(la.dims(), &[la.strides(), lb.strides()]);
            (&strides[0], &strides[1], &dims)
        }
    };
    let plan = Plan {
        a: a.data,
        b: b.data,
        a0: offset(&a),
        b0: offset(&b),
        sa,
        sb,
        dims: dims_ref,
        tail_start: n - k.tail_len.min(n),
        k: &k,
        banded: false,
    };
    // A row broadcast against a matrix (`[R, W]` with one operand's rows all the same row),
    // wide enough that the row spills out of L1: read in tiles across bands of rows.
    let banded = dims_ref.len() == 2
        && sa[1] == 1
        && sb[1] == 1
        && (sa[0] == 0) != (sb[0] == 0)
        && dims_ref[1] * std::mem::size_of::<T>() >= ROW_BLOCK_MIN_BYTES;
    let plan = Plan { banded, ..plan };
    let work = n * osize.max(std::mem::size_of::<T>());
    Tensor::from_writer(allocator, out_dtype, out_shape, |w| {
        let threads = rayon::current_num_threads();
        if work >= PARALLEL_MIN_BYTES && threads > 1 {
            let per_elem = osize.max(std::mem::size_of::<T>());
            let target = (work / (threads * 4)).clamp(CHUNK_MIN_BYTES, CHUNK_MAX_BYTES);
            // Whole 4 KiB pages of output per chunk where possible.
            let chunk_elems = ((target / per_elem * osize / 4096).max(1) * 4096 / osize).max(1);
            w.par_chunks(chunk_elems * osize, |i, cw| {
                let lo = i * chunk_elems;
                plan.range(cw, lo, (lo + chunk_elems).min(n));
            });
        } else {
            plan.range(w, 0, n);
        }
    })
}

/// A small output (at most [`SMALL_WORDS`] words) of operands that are dense over it
/// (`step` 1) or single elements (`step` 0): computed on the stack with `main` and `tail`
/// only (`fast` is a shortcut to `main`'s results, worth its check only on long runs), then
/// copied into the output in one piece.
#[allow(
    clippy::too_many_arguments,
    reason = "the two operands' (data, step) pairs, the output's description and the kernel"
)]
#[inline(always)]
fn small<T, O, F, G, H, S>(
    allocator: &Arc<dyn Allocator>,
    a: &[T],
    step_a: usize,
    b: &[T],
    step_b: usize,
    n: usize,
    out_shape: &TensorShape,
    out_dtype: DataType,
    k: &Kernel<F, G, H, S>,
) -> Result<Tensor>
where
    O: bytemuck::Pod,
    F: Fn(&T, &T) -> O,
    G: Fn(&T, &T) -> O,
{
    let mut words = [0u64; SMALL_WORDS];
    let out = &mut bytemuck::cast_slice_mut::<u64, O>(&mut words)[..n];
    let split = n - k.tail_len.min(n);
    let (main, tail) = out.split_at_mut(split);
    small_part(main, a, step_a, b, step_b, 0, &k.main);
    small_part(tail, a, step_a, b, step_b, split, &k.tail);
    let bytes: &[u8] = bytemuck::cast_slice(out);
    Tensor::from_writer(allocator, out_dtype, out_shape, |w| w.put_slice(bytes))
}

/// `out[i] = f(a[lo + i], b[lo + i])`, an operand of `step` 0 being one element read
/// everywhere.
#[inline(always)]
fn small_part<T, O: Copy>(
    out: &mut [O],
    a: &[T],
    step_a: usize,
    b: &[T],
    step_b: usize,
    lo: usize,
    f: &impl Fn(&T, &T) -> O,
) {
    let hi = lo + out.len();
    match (step_a, step_b) {
        (1, 1) => {
            for ((o, x), y) in out.iter_mut().zip(&a[lo..hi]).zip(&b[lo..hi]) {
                *o = f(x, y);
            }
        }
        (0, 1) => {
            for (o, y) in out.iter_mut().zip(&b[lo..hi]) {
                *o = f(&a[0], y);
            }
        }
        (1, 0) => {
            for (o, x) in out.iter_mut().zip(&a[lo..hi]) {
                *o = f(x, &b[0]);
            }
        }
        _ => out.fill(f(&a[0], &b[0])),
    }
}

struct Plan<'p, T, F, G, H, S> {
    a: &'p [T],
    b: &'p [T],
    a0: usize,
    b0: usize,
    sa: &'p [usize],
    sb: &'p [usize],
    dims: &'p [usize],
    tail_start: usize,
    k: &'p Kernel<F, G, H, S>,
    /// Whole output rows go through [`Plan::bands`] (see [`ROW_BLOCK_MIN_BYTES`]).
    banded: bool,
}

impl<T, O, F, G, H, S> Plan<'_, T, F, G, H, S>
where
    O: bytemuck::Pod,
    F: Fn(&T, &T) -> O,
    G: Fn(&T, &T) -> O,
    H: Fn(&T, &T) -> O,
{
    /// Writes output elements `lo..hi`.
    fn range<M: Flag>(&self, w: &mut Writer<'_>, lo: usize, hi: usize)
    where
        S: Fn(&T, &T, &O) -> M,
    {
        if lo >= hi {
            return;
        }
        let osize = std::mem::size_of::<O>().max(1);
        let elems = (BLOCK_BYTES / osize).clamp(1, hi - lo);
        // Small outputs stage on the stack (no allocation besides the output's).
        let mut small = [0u64; SMALL_WORDS];
        let mut heap;
        let buf: &mut [O] = if elems * osize <= SMALL_WORDS * 8 && std::mem::align_of::<O>() <= 8 {
            &mut bytemuck::cast_slice_mut::<u64, O>(&mut small)[..elems]
        } else {
            heap = vec![O::zeroed(); elems];
            &mut heap
        };
        let mut stage = Stage { buf, used: 0 };
        // Banded: the whole rows below the tail go through `bands`, the rest as usual.
        let (mut b0, mut b1) = (hi, hi);
        if self.banded {
            let width = self.dims[1];
            let (r0, r1) = (lo.div_ceil(width), hi.min(self.tail_start) / width);
            if r0 < r1 {
                (b0, b1) = (r0 * width, r1 * width);
            }
        }
        self.plain(w, &mut stage, lo, b0);
        stage.flush(w);
        if b0 < b1 {
            self.bands(w, b0 / self.dims[1], b1 / self.dims[1]);
        }
        self.plain(w, &mut stage, b1, hi);
        stage.flush(w);
    }

    /// Elements `lo..hi` through the staging block: `main` (or `fast`) up to the tail, `tail`
    /// after.
    fn plain<M: Flag>(&self, w: &mut Writer<'_>, stage: &mut Stage<'_, O>, lo: usize, hi: usize)
    where
        S: Fn(&T, &T, &O) -> M,
    {
        let split = self.tail_start.clamp(lo, hi);
        self.walk(
            w,
            stage,
            lo,
            split,
            &self.k.main,
            &self.k.fast,
            &self.k.special,
        );
        self.walk(w, stage, split, hi, &self.k.tail, &self.k.tail, &never);
    }

    /// Output rows `r0..r1` of a banded plan (none in the tail): [`BAND_ROWS`] rows at a time,
    /// computed a column tile of [`TILE_ELEMS`] at a time across the band's rows (so the
    /// broadcast row's tile is read from L1 by all of them, and the other operand is read as
    /// that many streams at once) into a staging band, which is then written out in order.
    fn bands<M: Flag>(&self, w: &mut Writer<'_>, r0: usize, r1: usize)
    where
        S: Fn(&T, &T, &O) -> M,
    {
        let width = self.dims[1];
        let mut band = vec![O::zeroed(); BAND_ROWS.min(r1 - r0) * width];
        let mut r = r0;
        while r < r1 {
            let rows = BAND_ROWS.min(r1 - r);
            let band = &mut band[..rows * width];
            let mut c = 0;
            while c < width {
                let k = TILE_ELEMS.min(width - c);
                for i in 0..rows {
                    let pa = self.a0 + (r + i) * self.sa[0] + c;
                    let pb = self.b0 + (r + i) * self.sb[0] + c;
                    let out = &mut band[i * width + c..i * width + c + k];
                    let (x, y) = (&self.a[pa..pa + k], &self.b[pb..pb + k]);
                    if simd::<T, _>(Both::new(&mut *out, x, y, &self.k.fast, &self.k.special)) {
                        simd::<T, _>(Both::new(out, x, y, &self.k.main, &never));
                    }
                }
                c += k;
            }
            w.put_slice(bytemuck::cast_slice(band));
            r += rows;
        }
    }

    /// Elements `lo..hi`, computed with `f` (or `fast` where `special` allows).
    #[allow(clippy::too_many_arguments, reason = "the kernel's three functions")]
    fn walk<M: Flag>(
        &self,
        w: &mut Writer<'_>,
        stage: &mut Stage<'_, O>,
        lo: usize,
        hi: usize,
        f: &impl Fn(&T, &T) -> O,
        fast: &impl Fn(&T, &T) -> O,
        special: &impl Fn(&T, &T, &O) -> M,
    ) {
        if lo >= hi {
            return;
        }
        let nd = self.dims.len();
        let last = nd - 1;
        // Multi-index of `lo`, and the offsets of its row (inner index 0).
        let mut stack_index = [0usize; 8];
        let mut heap_index;
        let index: &mut [usize] = if nd <= 8 {
            &mut stack_index[..nd]
        } else {
            heap_index = vec![0usize; nd];
            &mut heap_index
        };
        let mut rem = lo;
        for d in (0..nd).rev() {
            index[d] = rem % self.dims[d];
            rem /= self.dims[d];
        }
        let (mut oa, mut ob) = (self.a0, self.b0);
        for ((&i, &sa), &sb) in index[..last].iter().zip(self.sa.iter()).zip(self.sb.iter()) {
            oa += i * sa;
            ob += i * sb;
        }
        let (inner, sa, sb) = (self.dims[last], self.sa[last], self.sb[last]);
        let mut j = index[last];
        let mut left = hi - lo;
        while left > 0 {
            let len = (inner - j).min(left);
            let (mut pa, mut pb) = (oa + j * sa, ob + j * sb);
            let mut todo = len;
            while todo > 0 {
                let out = stage.room(w);
                let k = todo.min(out.len());
                let out = &mut out[..k];
                match (sa, sb) {
                    (1, 1) => {
                        let (x, y) = (&self.a[pa..pa + k], &self.b[pb..pb + k]);
                        if simd::<T, _>(Both::new(&mut *out, x, y, fast, special)) {
                            simd::<T, _>(Both::new(out, x, y, f, &never));
                        }
                    }
                    (0, 1) => {
                        let (x, y) = (&self.a[pa], &self.b[pb..pb + k]);
                        if simd::<T, _>(LeftOne::new(&mut *out, x, y, fast, special)) {
                            simd::<T, _>(LeftOne::new(out, x, y, f, &never));
                        }
                    }
                    (1, 0) => {
                        let (x, y) = (&self.a[pa..pa + k], &self.b[pb]);
                        if simd::<T, _>(RightOne::new(&mut *out, x, y, fast, special)) {
                            simd::<T, _>(RightOne::new(out, x, y, f, &never));
                        }
                    }
                    (0, 0) => {
                        out.fill(f(&self.a[pa], &self.b[pb]));
                    }
                    _ => {
                        strided(out, self.a, pa, sa, self.b, pb, sb, f);
                    }
                }
                stage.used += k;
                pa += k * sa;
                pb += k * sb;
                todo -= k;
            }
            left -= len;
            j += len;
            if j == inner && left > 0 {
                j = 0;
                // Odometer over the outer axes.
                for d in (0..last).rev() {
                    index[d] += 1;
                    oa += self.sa[d];
                    ob += self.sb[d];
                    if index[d] < self.dims[d] {
                        break;
                    }
                    oa -= self.sa[d] * self.dims[d];
                    ob -= self.sb[d] * self.dims[d];
                    index[d] = 0;
                }
            }
        }
    }
}

/// The staging block: results gather here and go to the writer a block at a time.
struct Stage<'s, O> {
    buf: &'s mut [O],
    used: usize,
}

impl<O: bytemuck::Pod> Stage<'_, O> {
    /// The free part of the block, flushing it first when full.
    fn room(&mut self, w: &mut Writer<'_>) -> &mut [O] {
        if self.used == self.buf.len() {
            self.flush(w);
        }
        &mut self.buf[self.used..]
    }

    fn flush(&mut self, w: &mut Writer<'_>) {
        if self.used > 0 {
            w.put_slice(bytemuck::cast_slice(&self.buf[..self.used]));
            self.used = 0;
        }
    }
}

/// Runs a loop over elements of `T` compiled for wider vectors: AVX-512 for 1- and 2-byte
/// elements (`bfloat16` and `half` convert each element to `float` and back, which makes
/// their loops bound by computation), AVX2 for wider ones (bound by memory, and slower with
/// 512-bit vectors on the development machine; see `tensorcast_buffer::simd::vectorized`).
/// The loop is a [`Loop`] (one of [`Both`], [`LeftOne`], [`RightOne`]), not a closure, so
/// that it is certain to be compiled for those vectors (see [`Loop`]).
#[inline(always)]
fn simd<T, K: Loop>(kernel: K) -> K::Output {
    if std::mem::size_of::<T>() <= 2 {
        vectorize_wide(kernel)
    } else {
        vectorize(kernel)
    }
}

/// The three loops below as [`Loop`]s: the output, the operands (`X` and `Y` a slice or one
/// element), the function and the special-case test.
macro_rules! loop_kernel {
    ($(#[$doc:meta])* $name:ident, $body:ident, $x:ty, $y:ty) => {
        $(#[$doc])*
        struct $name<'a, T, O, F, S, M> {
            out: &'a mut [O],
            x: $x,
            y: $y,
            f: &'a F,
            special: &'a S,
            flag: std::marker::PhantomData<M>,
        }

        impl<'a, T, O, F, S, M> $name<'a, T, O, F, S, M> {
            #[inline(always)]
            fn new(out: &'a mut [O], x: $x, y: $y, f: &'a F, special: &'a S) -> Self {
                Self { out, x, y, f, special, flag: std::marker::PhantomData }
            }
        }

        impl<T, O, F, S, M> Loop for $name<'_, T, O, F, S, M>
        where
            F: Fn(&T, &T) -> O,
            S: Fn(&T, &T, &O) -> M,
            M: Flag,
        {
            type Output = bool;
            #[inline(always)]
            fn run(self) -> bool {
                $body(self.out, self.x, self.y, self.f, self.special)
            }
        }
    };
}

loop_kernel!(
    /// [`both`] as a [`Loop`].
    Both, both, &'a [T], &'a [T]
);
loop_kernel!(
    /// [`left_one`] as a [`Loop`].
    LeftOne, left_one, &'a T, &'a [T]
);
loop_kernel!(
    /// [`right_one`] as a [`Loop`].
    RightOne, right_one, &'a [T], &'a T
);

// The three tight loops. Each returns whether any element was `special` (an OR reduction
// the compiler vectorises with the loop, and removes for `never`). They run through
// `simd`, so they are compiled for AVX-512 or AVX2 as well as for baseline SSE2.

#[inline(always)]
fn both<T, O, M: Flag>(
    out: &mut [O],
    a: &[T],
    b: &[T],
    f: &impl Fn(&T, &T) -> O,
    special: &impl Fn(&T, &T, &O) -> M,
) -> bool {
    let mut any = M::default();
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        let r = f(x, y);
        any = any | special(x, y, &r);
        *o = r;
    }
    any != M::default()
}

#[inline(always)]
fn left_one<T, O, M: Flag>(
    out: &mut [O],
    a: &T,
    b: &[T],
    f: &impl Fn(&T, &T) -> O,
    special: &impl Fn(&T, &T, &O) -> M,
) -> bool {
    let mut any = M::default();
    for (o, y) in out.iter_mut().zip(b) {
        let r = f(a, y);
        any = any | special(a, y, &r);
        *o = r;
    }
    any != M::default()
}

#[inline(always)]
fn right_one<T, O, M: Flag>(
    out: &mut [O],
    a: &[T],
    b: &T,
    f: &impl Fn(&T, &T) -> O,
    special: &impl Fn(&T, &T, &O) -> M,
) -> bool {
    let mut any = M::default();
    for (o, x) in out.iter_mut().zip(a) {
        let r = f(x, b);
        any = any | special(x, b, &r);
        *o = r;
    }
    any != M::default()
}

#[allow(
    clippy::too_many_arguments,
    reason = "the two operands' (data, start, stride) triples of one strided run"
)]
fn strided<T, O>(
    out: &mut [O],
    a: &[T],
    pa: usize,
    sa: usize,
    b: &[T],
    pb: usize,
    sb: usize,
    f: &impl Fn(&T, &T) -> O,
) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = f(&a[pa + i * sa], &b[pb + i * sb]);
    }
}
