//! [`Writer`]: fills a new buffer front to back without ever exposing uninitialised bytes.

use std::mem::MaybeUninit;

/// Outputs at least this large are written with non-temporal (streaming) stores where the
/// hardware has them: they bypass the cache, so a write-only output costs one pass over memory
/// instead of a read-for-ownership plus a write-back.
const STREAMING_MIN_TOTAL_BYTES: usize = 4 << 20;

/// Pieces at least this large are worth a streaming copy.
const STREAMING_MIN_PIECE_BYTES: usize = 1024;

/// Staging block for fills and conversions: small enough to stay in L1.
const BLOCK_BYTES: usize = 8 * 1024;

/// A cursor that initialises a buffer's bytes in order.
///
/// A kernel receives a `Writer` from [`crate::Buffer::new_with`] and appends to it: copies
/// ([`Writer::put_slice`]), fills ([`Writer::put_fill`]), repeats of what it already wrote
/// ([`Writer::repeat_last`]), element conversions ([`Writer::put_map`], [`Writer::put_with`]).
/// Whatever is left unwritten is zeroed when the kernel returns, so no stale or uninitialised
/// memory is ever visible, and no kernel needs `unsafe`. [`Writer::par_chunks`] splits the rest
/// of the output into pieces written in parallel.
///
/// Every `put_*` panics if it would write past the end: that is a bug in the calling kernel,
/// never a consequence of input data.
pub struct Writer<'a> {
    dst: &'a mut [MaybeUninit<u8>],
    filled: usize,
    streaming: bool,
    /// Every byte of `dst` is initialised (stale bytes of an earlier buffer).
    stale: bool,
}

impl std::fmt::Debug for Writer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("len", &self.dst.len())
            .field("filled", &self.filled)
            .field("streaming", &self.streaming)
            .finish()
    }
}

impl<'a> Writer<'a> {
    /// A writer over `dst`, all of whose bytes are initialised when `stale` (the allocator
    /// said so), else of unknown state.
    #[inline]
    pub(crate) fn new(dst: &'a mut [MaybeUninit<u8>], stale: bool) -> Self {
        let streaming = dst.len() >= STREAMING_MIN_TOTAL_BYTES && cfg!(not(miri));
        Self {
            dst,
            filled: 0,
            streaming,
            stale,
        }
    }

    /// Total size of the output in bytes.
    pub fn len(&self) -> usize {
        self.dst.len()
    }

    /// True if the output has no bytes.
    pub fn is_empty(&self) -> bool {
        self.dst.is_empty()
    }

    /// Bytes written so far.
    pub fn filled_len(&self) -> usize {
        self.filled
    }

    /// Bytes still to write.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.dst.len() - self.filled
    }

    /// Chooses whether large copies use streaming stores (on by default for outputs of 4 MiB
    /// and more). Exposed so benchmarks can compare both, and so that tests (under Miri too)
    /// reach the streaming copy with small outputs.
    pub fn set_streaming(&mut self, on: bool) {
        self.streaming = on;
    }

    /// The bytes written so far.
    pub fn filled(&self) -> &[u8] {
        // SAFETY: the first `filled` bytes of `dst` were initialised by `put_*` calls (each
        // advances `filled` only over bytes it wrote), and `MaybeUninit<u8>` has the layout
        // of `u8`.
        unsafe { std::slice::from_raw_parts(self.dst.as_ptr().cast::<u8>(), self.filled) }
    }

    #[inline]
    fn reserve(&mut self, n: usize) -> *mut u8 {
        assert!(
            n <= self.remaining(),
            "Writer overflow: {n} bytes asked with {} remaining",
            self.remaining()
        );
        // In bounds: filled + n <= len.
        self.dst[self.filled..].as_mut_ptr().cast::<u8>()
    }

    /// Appends a copy of `src`.
    #[inline]
    pub fn put_slice(&mut self, src: &[u8]) {
        let n = src.len();
        let dst = self.reserve(n);
        if self.streaming && n >= STREAMING_MIN_PIECE_BYTES {
            // SAFETY: `dst` is valid for `n` bytes of writes (reserve checked the bounds), and
            // `src` cannot overlap it: `src` is a shared borrow while `self.dst` is borrowed
            // mutably by this writer.
            unsafe { copy_streaming(dst, src.as_ptr(), n) };
        } else {
            // SAFETY: as above.
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, n) };
        }
        self.filled += n;
    }

    /// Appends `n` zero bytes.
    #[inline]
    pub fn put_zeros(&mut self, n: usize) {
        let dst = self.reserve(n);
        // SAFETY: `dst` is valid for `n` bytes of writes (bounds checked in `reserve`).
        unsafe { std::ptr::write_bytes(dst, 0, n) };
        self.filled += n;
    }

    /// Appends `pattern` repeated `count` times (an element fill when `pattern` is one element).
    pub fn put_fill(&mut self, pattern: &[u8], count: usize) {
        let total = pattern
            .len()
            .checked_mul(count)
            .expect("fill size overflows usize");
        if total == 0 {
            return;
        }
        self.reserve(total);
        if pattern.iter().all(|&b| b == pattern[0]) && !self.streaming {
            let dst = self.reserve(total);
            // SAFETY: `dst` is valid for `total` bytes of writes (bounds checked in `reserve`).
            unsafe { std::ptr::write_bytes(dst, pattern[0], total) };
            self.filled += total;
            return;
        }
        // Build one staging block of whole patterns, then copy it out repeatedly: the source
        // stays in L1 and the output is written once.
        let per_block = (BLOCK_BYTES / pattern.len()).max(1);
        let mut block = Vec::with_capacity(per_block * pattern.len());
        for _ in 0..per_block.min(count) {
            block.extend_from_slice(pattern);
        }
        let mut left = count;
        while left > 0 {
            let k = left.min(per_block);
            self.put_slice(&block[..k * pattern.len()]);
            left -= k;
        }
    }

    /// Appends `times` further copies of the last `run_bytes` bytes written (copy-doubling:
    /// each pass copies everything repeated so far, so the number of copies is logarithmic).
    pub fn repeat_last(&mut self, run_bytes: usize, times: usize) {
        assert!(
            run_bytes <= self.filled,
            "repeat_last: run longer than what was written"
        );
        let total = run_bytes
            .checked_mul(times)
            .expect("repeat size overflows usize");
        if total == 0 {
            return;
        }
        self.reserve(total);
        let start = self.filled - run_bytes;
        let end = self.filled + total;
        // Double the repeated region until it is large; beyond a few blocks, copy the same
        // (cache-resident) block again instead of re-reading output from memory.
        let cap = (4 * BLOCK_BYTES).max(run_bytes);
        while self.filled < end {
            let have = self.filled - start;
            let src_len = if have >= cap {
                (cap / run_bytes).max(1) * run_bytes
            } else {
                have
            };
            let n = src_len.min(end - self.filled);
            let base = self.dst.as_mut_ptr().cast::<u8>();
            // SAFETY: source `[start, start + n)` lies inside the written prefix (n <= have and
            // start + have == filled); destination `[filled, filled + n)` lies inside the
            // reserved range and after the source, so they do not overlap. Both derive from
            // `base`, which covers the whole output.
            let src = base.wrapping_add(start).cast_const();
            let dst = base.wrapping_add(self.filled);
            if self.streaming && n >= STREAMING_MIN_PIECE_BYTES {
                // SAFETY: as above; `copy_streaming` asks no more than `copy_nonoverlapping`.
                unsafe { copy_streaming(dst, src, n) };
            } else {
                // SAFETY: as above.
                unsafe { std::ptr::copy_nonoverlapping(src, dst, n) };
            }
            self.filled += n;
        }
    }

    /// Appends `f(x)` for every `x` in `src`, element by element (the compiler vectorises simple
    /// conversions). `T`'s bytes are written in native order.
    pub fn put_map<S: Copy, T: bytemuck::NoUninit>(
        &mut self,
        src: &[S],
        mut f: impl FnMut(S) -> T,
    ) {
        let size = std::mem::size_of::<T>();
        let n = src
            .len()
            .checked_mul(size)
            .expect("map size overflows usize");
        let dst = self.reserve(n);
        if (dst as usize).is_multiple_of(std::mem::align_of::<T>()) {
            let out = dst.cast::<MaybeUninit<T>>();
            for (i, &x) in src.iter().enumerate() {
                // SAFETY: `out` is aligned for `T` (checked above) and `[out, out + len)` lies in
                // the reserved range of `n = len * size_of::<T>()` bytes; writing a `T` through a
                // `MaybeUninit<T>` pointer initialises it.
                unsafe { out.wrapping_add(i).write(MaybeUninit::new(f(x))) };
            }
            self.filled += n;
        } else {
            for &x in src {
                let v = f(x);
                self.put_slice(bytemuck::bytes_of(&v));
            }
        }
    }

    /// Appends `f(i)` for every `i` in `0..n_elems`: [`Writer::put_map`] by index, for
    /// elements computed from several sources (a small element-wise op's output, written
    /// without staging).
    pub fn put_indexed<T: bytemuck::NoUninit>(
        &mut self,
        n_elems: usize,
        mut f: impl FnMut(usize) -> T,
    ) {
        let size = std::mem::size_of::<T>();
        let n = n_elems
            .checked_mul(size)
            .expect("indexed size overflows usize");
        let dst = self.reserve(n);
        if (dst as usize).is_multiple_of(std::mem::align_of::<T>()) {
            let out = dst.cast::<MaybeUninit<T>>();
            for i in 0..n_elems {
                // SAFETY: `out` is aligned for `T` (checked above) and `[out, out + n_elems)`
                // lies in the reserved range of `n = n_elems * size_of::<T>()` bytes; writing a
                // `T` through a `MaybeUninit<T>` pointer initialises it.
                unsafe { out.wrapping_add(i).write(MaybeUninit::new(f(i))) };
            }
            self.filled += n;
        } else {
            for i in 0..n_elems {
                let v = f(i);
                self.put_slice(bytemuck::bytes_of(&v));
            }
        }
    }

    /// Appends `n_elems` elements of `T` produced by `fill`, which receives them (zeroed) a
    /// block at a time along with the index of the block's first element. For conversions that
    /// exist as slice functions (`half`'s F16C conversions, for example).
    pub fn put_with<T: bytemuck::Pod>(
        &mut self,
        n_elems: usize,
        mut fill: impl FnMut(usize, &mut [T]),
    ) {
        let size = std::mem::size_of::<T>().max(1);
        self.reserve(n_elems.checked_mul(size).expect("size overflows usize"));
        let per_block = (BLOCK_BYTES / size).max(1);
        let mut block = vec![T::zeroed(); per_block.min(n_elems)];
        let mut done = 0;
        while done < n_elems {
            let k = per_block.min(n_elems - done);
            let chunk = &mut block[..k];
            chunk.fill(T::zeroed());
            fill(done, chunk);
            self.put_slice(bytemuck::cast_slice(chunk));
            done += k;
        }
    }

    /// Appends `n_elems` elements of `T` that `fill` writes in place, and returns what `fill`
    /// returns. `fill` receives them as one slice: zeroed, or, when the allocator gave back
    /// memory it knew to be initialised (a block of an earlier buffer), holding that memory's
    /// stale values, so that a kernel which writes every element pays no zero fill first.
    /// Whatever `fill` leaves unwritten is part of the output as it is: a kernel must write
    /// every element (or fail, and drop the buffer).
    ///
    /// ```
    /// use tensorcast_buffer::Buffer;
    /// let b = Buffer::new_with(
    ///     tensorcast_buffer::cpu_allocator_ref(),
    ///     16,
    ///     &Default::default(),
    ///     |w| w.put_in_place::<u32, _>(4, |s| s.copy_from_slice(&[1, 2, 3, 4])),
    /// )?;
    /// assert_eq!(b.as_slice()[4], 2);
    /// # Ok::<(), tensorcast_buffer::AllocError>(())
    /// ```
    pub fn put_in_place<T: bytemuck::Pod, R>(
        &mut self,
        n_elems: usize,
        fill: impl FnOnce(&mut [T]) -> R,
    ) -> R {
        let n = n_elems
            .checked_mul(std::mem::size_of::<T>())
            .expect("size overflows usize");
        let dst = self.reserve(n);
        if !self.stale {
            // SAFETY: `dst` is valid for `n` bytes of writes (bounds checked in `reserve`).
            unsafe { std::ptr::write_bytes(dst, 0, n) };
        }
        // SAFETY: the `n` bytes at `dst` are in bounds (`reserve`), initialised (zeroed just
        // above, or all of `dst` was initialised when the writer was made: `stale`), and
        // borrowed mutably through `self` alone for the slice's life, which ends before this
        // function returns.
        let bytes: &mut [u8] = unsafe { std::slice::from_raw_parts_mut(dst, n) };
        self.filled += n;
        match bytemuck::try_cast_slice_mut::<u8, T>(bytes) {
            Ok(elems) => fill(elems),
            Err(_) => {
                // Not aligned for `T` (a writer part way into an odd offset): through a copy.
                let mut tmp = vec![T::zeroed(); n_elems];
                let r = fill(&mut tmp);
                bytes.copy_from_slice(bytemuck::cast_slice(&tmp));
                r
            }
        }
    }

    /// Splits what remains into pieces of `chunk_bytes` (the last may be shorter) and runs
    /// `f(index, writer)` on each, in parallel on the rayon pool. Afterwards the whole output
    /// counts as written (each piece's unwritten tail is zeroed).
    pub fn par_chunks(
        &mut self,
        chunk_bytes: usize,
        f: impl Fn(usize, &mut Writer<'_>) + Send + Sync,
    ) {
        use rayon::prelude::*;
        let chunk_bytes = chunk_bytes.max(1);
        let (streaming, stale) = (self.streaming, self.stale);
        let rest = &mut self.dst[self.filled..];
        let run = |(i, piece): (usize, &mut [MaybeUninit<u8>])| {
            let mut w = Writer {
                dst: piece,
                filled: 0,
                streaming,
                stale,
            };
            f(i, &mut w);
            w.finish();
        };
        // Under Miri the pieces run one after another: rayon's crossbeam-epoch trips Miri's
        // Stacked Borrows checker in its own code. The splitting is safe code either way, and
        // every piece's writes (the unsafe part) are still checked.
        if cfg!(miri) {
            rest.chunks_mut(chunk_bytes).enumerate().for_each(run);
        } else {
            rest.par_chunks_mut(chunk_bytes).enumerate().for_each(run);
        }
        self.filled = self.dst.len();
    }

    /// Zeroes whatever is still unwritten and fences streaming stores.
    #[inline]
    pub(crate) fn finish(&mut self) {
        let n = self.remaining();
        if n > 0 {
            self.put_zeros(n);
        }
        if self.streaming {
            store_fence();
        }
    }
}

/// Copies `n` bytes from `src` to `dst` with non-temporal stores where available.
///
/// # Safety
/// `src` must be valid for `n` bytes of reads, `dst` for `n` bytes of writes, and they must not
/// overlap.
unsafe fn copy_streaming(dst: *mut u8, src: *const u8, n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128};
        // Head: plain copy up to the first 16-byte-aligned destination address.
        let head = dst.align_offset(16).min(n);
        // SAFETY: the caller's contract covers the first `head <= n` bytes.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, head) };
        let mut i = head;
        while i + 64 <= n {
            // SAFETY: `i + 64 <= n`, so four 16-byte loads and stores stay inside both ranges;
            // `dst + i` is 16-byte aligned (the head made it so and `i` advances by 64), as
            // `_mm_stream_si128` requires; the loads are unaligned loads. SSE2 is part of the
            // x86_64 baseline, so the intrinsics are always available.
            let s = src.wrapping_add(i).cast::<__m128i>();
            let d = dst.wrapping_add(i).cast::<__m128i>();
            let v = [0, 1, 2, 3].map(|k| {
                // SAFETY: as above: 16 readable bytes at `s + k`, loaded unaligned.
                unsafe { _mm_loadu_si128(s.wrapping_add(k)) }
            });
            for (k, v) in v.into_iter().enumerate() {
                // SAFETY: as above: 16 writable, 16-byte-aligned bytes at `d + k`.
                unsafe { stream_store(d.wrapping_add(k), v) };
            }
            i += 64;
        }
        // SAFETY: the tail `[i, n)` is inside both ranges per the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(src.wrapping_add(i), dst.wrapping_add(i), n - i) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's contract is exactly `copy_nonoverlapping`'s.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, n)
    }
}

/// One 16-byte non-temporal store (`movntdq`).
///
/// Under Miri the same 16 bytes are written with an ordinary unaligned store after checking
/// the alignment `movntdq` needs: Miri cannot interpret the inline assembly the intrinsic is
/// built from, and this way it still checks every address, bound and alignment of the
/// streaming copy's loop (the only thing it does not run is the store instruction itself).
///
/// # Safety
/// `d` must be valid for 16 bytes of writes and 16-byte aligned.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn stream_store(d: *mut std::arch::x86_64::__m128i, v: std::arch::x86_64::__m128i) {
    #[cfg(not(miri))]
    // SAFETY: the caller guarantees `d` is writable for 16 bytes and 16-byte aligned, as
    // `_mm_stream_si128` requires; SSE2 is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_stream_si128(d, v)
    }
    #[cfg(miri)]
    {
        assert!(d.is_aligned(), "movntdq needs a 16-byte-aligned address");
        // SAFETY: as above (an unaligned store has no alignment requirement at all).
        unsafe { std::arch::x86_64::_mm_storeu_si128(d, v) }
    }
}

/// Orders streaming stores before any later store (they are weakly ordered). Under Miri, whose
/// streaming stores are ordinary stores (see `stream_store`), there is nothing to order.
fn store_fence() {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `sfence` has no preconditions; SSE is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
}

#[cfg(test)]
mod tests {
    use crate::{cpu_allocator, AllocationAttributes, Buffer};

    fn build(len: usize, f: impl FnOnce(&mut super::Writer<'_>)) -> Vec<u8> {
        Buffer::new_with(&cpu_allocator(), len, &AllocationAttributes::default(), f)
            .unwrap()
            .as_slice()
            .to_vec()
    }

    #[test]
    fn streaming_copy_of_small_pieces_is_exact() {
        // The streaming-store copy (SSE2 non-temporal stores and the fence) on outputs small
        // enough for Miri, which interprets those intrinsics: a misaligned start (plain head),
        // whole 64-byte blocks, and a tail, at every offset of the first 16 bytes.
        let src: Vec<u8> = (0..1200u32).map(|i| (i * 7 + 3) as u8).collect();
        for offset in 0..16 {
            let n = super::STREAMING_MIN_PIECE_BYTES + 100;
            let got = build(offset + n + 5, |w| {
                w.put_slice(&src[..offset]);
                w.set_streaming(true);
                w.put_slice(&src[offset..offset + n]);
            });
            assert_eq!(&got[..offset + n], &src[..offset + n], "offset {offset}");
            assert_eq!(&got[offset + n..], &[0; 5]);
        }
    }

    #[test]
    fn unwritten_tail_is_zeroed() {
        assert_eq!(build(5, |w| w.put_slice(&[1, 2])), vec![1, 2, 0, 0, 0]);
    }

    #[test]
    fn fill_and_repeat_match_naive() {
        let got = build(3 * 7 + 6, |w| {
            w.put_fill(&[1, 2, 3], 7);
            w.put_slice(&[9, 8]);
            w.repeat_last(2, 2);
        });
        let mut want: Vec<u8> = [1, 2, 3].repeat(7);
        want.extend_from_slice(&[9, 8, 9, 8, 9, 8]);
        assert_eq!(got, want);
    }

    #[test]
    #[cfg_attr(miri, ignore = "5 MiB is slow under the interpreter")]
    fn large_streaming_fill_and_repeat_are_exact() {
        let n = 5 << 20;
        let got = build(n, |w| {
            assert!(w.streaming || cfg!(miri));
            w.put_fill(&[7, 0, 1], (n / 2) / 3);
            let left = w.remaining();
            w.put_slice(&[5; 1000]);
            w.repeat_last(1000, (left - 1000) / 1000);
        });
        let third = (n / 2) / 3;
        assert!(got[..third * 3].chunks(3).all(|c| c == [7, 0, 1]));
        let written = third * 3 + 1000 + ((n - third * 3 - 1000) / 1000) * 1000;
        assert!(got[third * 3..written].iter().all(|&b| b == 5));
        assert!(got[written..].iter().all(|&b| b == 0));
    }

    #[test]
    fn put_map_and_put_with_write_native_bytes() {
        let got = build(12, |w| {
            w.put_map(&[1u8, 2], |x| x as u32 * 256);
            w.put_with::<u16>(2, |start, out| {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = (start + i) as u16 + 1;
                }
            });
        });
        assert_eq!(got, vec![0, 1, 0, 0, 0, 2, 0, 0, 1, 0, 2, 0]);
    }

    #[test]
    fn put_indexed_writes_each_index_once_aligned_or_not() {
        let got = build(13, |w| {
            w.put_indexed(2, |i| (i as u32 + 1) * 256);
            w.put_slice(&[9]);
            // At offset 9: not aligned for `u16`, so the byte-wise path.
            w.put_indexed(2, |i| 0x0102u16 + i as u16);
        });
        assert_eq!(got, vec![0, 1, 0, 0, 0, 2, 0, 0, 9, 2, 1, 3, 1]);
    }

    #[test]
    fn par_chunks_cover_everything() {
        let got = build(10_000, |w| {
            w.put_slice(&[3]);
            w.par_chunks(1000, |i, w| w.put_fill(&[i as u8], w.len() / 2));
        });
        assert_eq!(got[0], 3);
        assert_eq!(got[1..501], [0u8; 500]);
        assert_eq!(got[501..1001], [0u8; 500]); // chunk 0: 500 written as 0, 500 zeroed
        assert_eq!(got[1001..1501], [1u8; 500]);
        assert_eq!(got[9001..9500], [9u8; 499]); // last chunk: 999 bytes
        assert_eq!(got[9500..], [0u8; 500]);
    }

    #[test]
    #[should_panic(expected = "Writer overflow")]
    fn writing_past_the_end_panics() {
        build(2, |w| w.put_slice(&[1, 2, 3]));
    }
}
