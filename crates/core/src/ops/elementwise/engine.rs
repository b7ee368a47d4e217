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

use tensorcast_buffer::{cpu_allocator, Writer};

use crate::error::Result;
use crate::layout::{coalesce, Layout};
use crate::{DataType, Tensor, TensorShape};

/// Staging block size in bytes (fits L1 with the inputs' lines).
const BLOCK_BYTES: usize = 8 * 1024;
/// Work (bytes read or written, whichever is larger) from which chunks run in parallel.
const PARALLEL_MIN_BYTES: usize = 1 << 20;
/// Largest and smallest parallel chunk of output elements' work, in bytes.
const CHUNK_MAX_BYTES: usize = 4 << 20;
const CHUNK_MIN_BYTES: usize = 256 << 10;

/// One input: its elements and how the output's index space reads them.
#[derive(Clone, Copy)]
pub(crate) struct Src<'a, T> {
    pub(crate) data: &'a [T],
    pub(crate) layout: &'a Layout,
}

/// The two functions of a kernel: `main` for most elements and `tail` for the last
/// `tail_len` elements of the output (TensorFlow's vectorised loops treat the remainder that
/// does not fill a SIMD packet with scalar code, which differs for `Maximum`/`Minimum` of
/// `0` and `-0`; for every other op the two are the same function).
pub(crate) struct Kernel<F, G> {
    pub(crate) main: F,
    pub(crate) tail: G,
    pub(crate) tail_len: usize,
}

/// Computes `out[i] = f(a[i], b[i])` over the broadcast output of `out_shape`, as a new tensor
/// of `out_dtype` (whose element type is `O`) from the default allocator.
pub(crate) fn run<T, O, F, G>(
    a: Src<'_, T>,
    b: Src<'_, T>,
    out_shape: &TensorShape,
    out_dtype: DataType,
    k: Kernel<F, G>,
) -> Result<Tensor>
where
    T: Sync,
    O: bytemuck::Pod + Send,
    F: Fn(&T, &T) -> O + Sync,
    G: Fn(&T, &T) -> O + Sync,
{
    let n = out_shape.num_elements_usize();
    let (dims, strides) = coalesce(a.layout.dims(), &[a.layout.strides(), b.layout.strides()]);
    let plan = Plan {
        a: a.data,
        b: b.data,
        a0: a.layout.offset(),
        b0: b.layout.offset(),
        sa: &strides[0],
        sb: &strides[1],
        dims: &dims,
        tail_start: n - k.tail_len.min(n),
        k: &k,
    };
    let osize = std::mem::size_of::<O>().max(1);
    let work = n * osize.max(std::mem::size_of::<T>());
    Tensor::from_writer(&cpu_allocator(), out_dtype, out_shape, |w| {
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

struct Plan<'p, T, F, G> {
    a: &'p [T],
    b: &'p [T],
    a0: usize,
    b0: usize,
    sa: &'p [usize],
    sb: &'p [usize],
    dims: &'p [usize],
    tail_start: usize,
    k: &'p Kernel<F, G>,
}

impl<T, O, F, G> Plan<'_, T, F, G>
where
    O: bytemuck::Pod,
    F: Fn(&T, &T) -> O,
    G: Fn(&T, &T) -> O,
{
    /// Writes output elements `lo..hi`.
    fn range(&self, w: &mut Writer<'_>, lo: usize, hi: usize) {
        if lo >= hi {
            return;
        }
        let osize = std::mem::size_of::<O>().max(1);
        let mut stage = Stage {
            buf: vec![O::zeroed(); (BLOCK_BYTES / osize).clamp(1, hi - lo)],
            used: 0,
        };
        let split = self.tail_start.clamp(lo, hi);
        self.walk(w, &mut stage, lo, split, &self.k.main);
        self.walk(w, &mut stage, split, hi, &self.k.tail);
        stage.flush(w);
    }

    /// Elements `lo..hi`, all computed with `f`.
    fn walk(
        &self,
        w: &mut Writer<'_>,
        stage: &mut Stage<O>,
        lo: usize,
        hi: usize,
        f: &impl Fn(&T, &T) -> O,
    ) {
        if lo >= hi {
            return;
        }
        let nd = self.dims.len();
        let last = nd - 1;
        // Multi-index of `lo`, and the offsets of its row (inner index 0).
        let mut index = vec![0usize; nd];
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
                    (1, 1) => both(out, &self.a[pa..pa + k], &self.b[pb..pb + k], f),
                    (0, 1) => left_one(out, &self.a[pa], &self.b[pb..pb + k], f),
                    (1, 0) => right_one(out, &self.a[pa..pa + k], &self.b[pb], f),
                    (0, 0) => out.fill(f(&self.a[pa], &self.b[pb])),
                    _ => strided(out, self.a, pa, sa, self.b, pb, sb, f),
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
struct Stage<O> {
    buf: Vec<O>,
    used: usize,
}

impl<O: bytemuck::Pod> Stage<O> {
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

#[inline(always)]
fn both<T, O>(out: &mut [O], a: &[T], b: &[T], f: &impl Fn(&T, &T) -> O) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
}

#[inline(always)]
fn left_one<T, O>(out: &mut [O], a: &T, b: &[T], f: &impl Fn(&T, &T) -> O) {
    for (o, y) in out.iter_mut().zip(b) {
        *o = f(a, y);
    }
}

#[inline(always)]
fn right_one<T, O>(out: &mut [O], a: &[T], b: &T, f: &impl Fn(&T, &T) -> O) {
    for (o, x) in out.iter_mut().zip(a) {
        *o = f(x, b);
    }
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
