//! Allocators: the [`Allocator`] trait, the pooling [`CpuAllocator`] and its statistics.

use std::alloc::Layout;
use std::collections::HashMap;
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::counters::Counters;
use crate::small;
use std::sync::{Arc, Mutex, OnceLock};

/// The alignment every tensorcast allocation has: TensorFlow's `Allocator::kAllocatorAlignment`
/// (and `EIGEN_MAX_ALIGN_BYTES`), 64 bytes.
pub const DEFAULT_ALIGNMENT: usize = 64;

/// Why an allocation failed. Allocation failure is always an error value, never an abort.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    /// The size cannot be represented as a valid layout (for example 2^60 bytes on a 64-bit host
    /// is representable but the system refuses it; `usize::MAX` is not representable at all).
    #[error("allocation of {size_bytes} bytes with alignment {alignment} is not a valid layout")]
    InvalidLayout {
        /// Requested size.
        size_bytes: usize,
        /// Requested alignment.
        alignment: usize,
    },
    /// The allocator (or the system behind it) had no memory to give.
    #[error("allocator {allocator} could not allocate {size_bytes} bytes")]
    OutOfMemory {
        /// Name of the allocator that failed.
        allocator: String,
        /// Requested size.
        size_bytes: usize,
    },
    /// The allocator returned memory not aligned for the typed elements to be placed in it.
    #[error("allocator {allocator} returned memory not aligned to {alignment} bytes")]
    Misaligned {
        /// Name of the allocator.
        allocator: String,
        /// The alignment the elements need.
        alignment: usize,
    },
}

/// Hints passed with an allocation, as TensorFlow's `AllocationAttributes`.
///
/// The CPU allocators here use only `retry_on_failure` (a failed system allocation is retried
/// once after the block cache is released); the others are recorded for allocators that care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocationAttributes {
    /// Retry a failed allocation after releasing cached memory (TensorFlow's default: true).
    pub retry_on_failure: bool,
    /// The caller will log this allocation itself (TensorFlow's `allocation_will_be_logged`).
    pub allocation_will_be_logged: bool,
    /// The caller promises the memory is short-lived (a scratch allocation).
    pub scratch: bool,
}

impl Default for AllocationAttributes {
    fn default() -> Self {
        Self {
            retry_on_failure: true,
            allocation_will_be_logged: false,
            scratch: false,
        }
    }
}

/// A snapshot of an allocator's counters, as TensorFlow's `AllocatorStats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllocatorStats {
    /// Number of allocations made so far.
    pub num_allocs: u64,
    /// Bytes handed out and not yet returned (requested sizes).
    pub bytes_in_use: u64,
    /// The highest `bytes_in_use` seen.
    pub peak_bytes_in_use: u64,
    /// The largest single allocation requested.
    pub largest_alloc_size: u64,
    /// Bytes of freed blocks kept for reuse (pooling allocators only).
    pub bytes_cached: u64,
    /// How many allocations were served from the cache of freed blocks.
    pub cache_hits: u64,
}

/// A source of aligned memory, as TensorFlow's `tensorflow::Allocator`.
///
/// Implementations provide [`Allocator::allocate_reporting_init`] and [`Allocator::deallocate`];
/// [`Allocator::allocate`] calls the first and drops its report.
///
/// # Safety
/// Implementations promise that a successful [`Allocator::allocate_reporting_init`] (and
/// [`Allocator::allocate`], where an implementation overrides it) returns a pointer to
/// `size_bytes` bytes of memory, valid for reads and writes and used by nobody else until it is
/// passed back to [`Allocator::deallocate`] or [`Allocator::deallocate_initialized`], and that
/// it reports a block as initialised only when every one of its first `size_bytes` bytes is:
/// [`crate::Buffer`] relies on this to hand out slices over the memory from safe code (over a
/// block reported initialised, without writing it first). The `alignment` is a request
/// that well-behaved allocators meet; nothing relies on it for soundness (typed views check
/// the real address), which is how `testing::OffsetAllocator` (feature `testing`) can hand out
/// odd addresses in tests.
pub unsafe trait Allocator: Send + Sync + fmt::Debug {
    /// The allocator's name (TensorFlow's `Name()`), reported in descriptions.
    fn name(&self) -> &str;

    /// Allocates `size_bytes > 0` bytes aligned to `alignment` (a power of two), and tells
    /// whether the block's first `size_bytes` bytes are all initialised (stale bytes of an
    /// earlier block, given back through [`Allocator::deallocate_initialized`]): then a kernel
    /// that writes every byte of its output need not zero it first. `false` is always allowed,
    /// and what an allocator that does not keep freed blocks says. Either way the contents are
    /// unspecified: [`crate::Buffer`] never exposes bytes not reported initialised before they
    /// are written.
    ///
    /// # Errors
    /// [`AllocError::InvalidLayout`] for a size of 0 or one no layout can hold with that
    /// alignment; [`AllocError::OutOfMemory`] when the memory is not available.
    fn allocate_reporting_init(
        &self,
        size_bytes: usize,
        alignment: usize,
        attrs: &AllocationAttributes,
    ) -> Result<(NonNull<u8>, bool), AllocError>;

    /// [`Allocator::allocate_reporting_init`] without the report: `size_bytes > 0` bytes
    /// aligned to `alignment`, their contents unspecified.
    ///
    /// # Errors
    /// As [`Allocator::allocate_reporting_init`].
    fn allocate(
        &self,
        size_bytes: usize,
        alignment: usize,
        attrs: &AllocationAttributes,
    ) -> Result<NonNull<u8>, AllocError> {
        Ok(self
            .allocate_reporting_init(size_bytes, alignment, attrs)?
            .0)
    }

    /// Returns memory obtained from [`Allocator::allocate_reporting_init`] or
    /// [`Allocator::allocate`].
    ///
    /// # Safety
    /// `ptr` must have come from an allocation on this same allocator with this `size_bytes`
    /// and `alignment`, and must not be used after this call.
    unsafe fn deallocate(&self, ptr: NonNull<u8>, size_bytes: usize, alignment: usize);

    /// [`Allocator::deallocate`] of a block whose first `size_bytes` bytes are all
    /// initialised, so that an allocator that keeps freed blocks may report them as such
    /// ([`Allocator::allocate_reporting_init`]). The default forgets that they are.
    ///
    /// # Safety
    /// As [`Allocator::deallocate`]; and every one of the block's first `size_bytes` bytes has
    /// been written.
    unsafe fn deallocate_initialized(&self, ptr: NonNull<u8>, size_bytes: usize, alignment: usize) {
        // SAFETY: the caller's guarantee includes `deallocate`'s.
        unsafe { self.deallocate(ptr, size_bytes, alignment) }
    }

    /// True if this allocator records the size of each allocation (TensorFlow's
    /// `TracksAllocationSizes`); then `AllocatedBytes` reports it.
    fn tracks_allocation_sizes(&self) -> bool {
        false
    }

    /// The size requested for the live allocation at `ptr`, if tracked.
    fn requested_size(&self, _ptr: NonNull<u8>) -> Option<usize> {
        None
    }

    /// The size actually reserved for the live allocation at `ptr`, if tracked.
    fn allocated_size(&self, _ptr: NonNull<u8>) -> Option<usize> {
        None
    }

    /// A unique, positive id of the live allocation at `ptr`, if tracked.
    fn allocation_id(&self, _ptr: NonNull<u8>) -> Option<i64> {
        None
    }

    /// Counters, if this allocator keeps them.
    fn stats(&self) -> Option<AllocatorStats> {
        None
    }

    /// Returns cached free blocks to the system; gives the number of bytes released.
    fn release_cached_memory(&self) -> usize {
        0
    }
}

/// Checks a request and builds its layout.
pub(crate) fn layout_for(size_bytes: usize, alignment: usize) -> Result<Layout, AllocError> {
    // isize::MAX is the hard limit of any Rust allocation; refuse before asking the system.
    Layout::from_size_align(size_bytes, alignment).map_err(|_| AllocError::InvalidLayout {
        size_bytes,
        alignment,
    })
}

/// Small blocks with an alignment above the system allocator's own (16 bytes on x86-64 glibc)
/// come from a plain allocation `alignment` bytes larger, aligned by an offset stored in the
/// byte before the block: glibc's `memalign` path for a 64-byte-aligned request costs about
/// four plain small allocations (63 ns against 16 ns for 12 bytes, measured on the development
/// machine), and every small tensor pays it. Applies while the padded request stays within this
/// many bytes (glibc's per-thread cache serves those).
const SMALL_PADDED_MAX_BYTES: usize = 1024;

/// The alignment the system allocator gives every block; smaller requests need no offset.
const SYSTEM_MIN_ALIGN: usize = 16;

/// The padded layout of a small aligned request, if `layout` is one (see
/// [`SMALL_PADDED_MAX_BYTES`]).
fn padded(layout: Layout) -> Option<Layout> {
    let (size, align) = (layout.size(), layout.align());
    if align <= SYSTEM_MIN_ALIGN || align > 128 || size + align > SMALL_PADDED_MAX_BYTES {
        return None;
    }
    Layout::from_size_align(size + align, SYSTEM_MIN_ALIGN).ok()
}

/// Allocates `layout` (a small aligned one, `outer == padded(layout)`) inside a plain block of
/// `outer`.
fn padded_alloc(layout: Layout, outer: Layout) -> Option<NonNull<u8>> {
    // SAFETY: `outer` has a non-zero size (it is at least `layout.align() > 16` bytes).
    let base = NonNull::new(unsafe { std::alloc::alloc(outer) })?;
    // `base` is 16-aligned, so the offset to the next multiple of the alignment strictly above
    // it is in 16..=align: at least one byte before the block is free for the offset, and the
    // block's `size` bytes end within the `size + align` allocated.
    let offset = layout.align() - base.as_ptr().addr() % layout.align();
    debug_assert!((SYSTEM_MIN_ALIGN..=layout.align()).contains(&offset));
    // SAFETY: `offset <= align`, so `base + offset` lies within (or one past) the `size +
    // align` bytes just allocated: in bounds of one allocation.
    let p = unsafe { base.add(offset) };
    // SAFETY: the byte before `p` is `base + offset - 1` with `offset >= 16`: inside the
    // allocation, and not part of the block handed out.
    let slot = unsafe { p.sub(1) };
    // SAFETY: `slot` is valid for a one-byte write (just above). The offset fits a `u8`
    // (align <= 128, checked in `padded`).
    unsafe { slot.write(offset as u8) };
    Some(p)
}

/// Frees a block from [`padded_alloc`].
///
/// # Safety
/// `ptr` must come from `padded_alloc` with this `outer` layout and not be used afterwards.
unsafe fn padded_dealloc(ptr: NonNull<u8>, outer: Layout) {
    // SAFETY: the byte before the block is in the same allocation (`padded_alloc`'s offset
    // is at least 16).
    let slot = unsafe { ptr.sub(1) };
    // SAFETY: `padded_alloc` wrote the block's offset from its base there.
    let offset = usize::from(unsafe { slot.read() });
    // SAFETY: the base is `ptr - offset`, in the same allocation.
    let base = unsafe { ptr.sub(offset) };
    // SAFETY: `base` is the pointer `std::alloc::alloc(outer)` returned, freed once here.
    unsafe { std::alloc::dealloc(base.as_ptr(), outer) };
}

/// A block of `layout` (non-zero size) from the system allocator: a padded one for small
/// aligned layouts (see [`SMALL_PADDED_MAX_BYTES`]). `None` when the system has no memory.
pub(crate) fn system_alloc_block(layout: Layout) -> Option<NonNull<u8>> {
    if let Some(outer) = padded(layout) {
        return padded_alloc(layout, outer);
    }
    // SAFETY: `layout` has a non-zero size (no caller asks for 0 bytes: `CpuAllocator`'s
    // `allocate_reporting_init` refuses it and the small classes start at 64) and was built by
    // `Layout::from_size_align`.
    NonNull::new(unsafe { std::alloc::alloc(layout) })
}

/// Frees a block from [`system_alloc_block`].
///
/// # Safety
/// `ptr` must come from `system_alloc_block(layout)` with this same `layout`, and must not be
/// used after this call.
pub(crate) unsafe fn system_free_block(ptr: NonNull<u8>, layout: Layout) {
    if let Some(outer) = padded(layout) {
        // SAFETY: `system_alloc_block` took this block from `padded_alloc` with the same
        // layout (`padded` depends on the layout alone), per this function's contract.
        unsafe { padded_dealloc(ptr, outer) };
        return;
    }
    // SAFETY: `ptr` was returned by `std::alloc::alloc` with exactly `layout`, per this
    // function's contract, and is not used after this.
    unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) };
}

/// Blocks below this size go straight to the system allocator (which pools small blocks well
/// already); larger ones are kept in the free-block cache after they are freed.
const POOL_MIN_BYTES: usize = 64 * 1024;

/// Rounds a pooled request up to its size class: at most 1/8 larger than asked, so reuse across
/// nearby sizes is possible while the waste stays bounded.
fn size_class(size_bytes: usize) -> usize {
    if size_bytes < POOL_MIN_BYTES {
        return size_bytes;
    }
    let top = usize::BITS - 1 - size_bytes.leading_zeros();
    let granule = 1usize << top.saturating_sub(3);
    size_bytes.div_ceil(granule).saturating_mul(granule)
}

/// A freed block kept for reuse, and how many of its first bytes are initialised. It keeps the
/// pointer itself (not its address as an integer) so the memory's provenance survives the
/// round trip through the cache.
struct FreeBlock(NonNull<u8>, usize);

// SAFETY: a cached block is owned by the pool alone (nobody else holds its pointer once it
// was deallocated into the cache); moving that ownership between threads is fine for raw
// memory.
unsafe impl Send for FreeBlock {}

#[derive(Default)]
struct Pool {
    /// Free blocks by (size class, alignment).
    free: HashMap<(usize, usize), Vec<FreeBlock>>,
    cached_bytes: usize,
}

/// The default CPU allocator: 64-byte aligned system memory, with a bounded cache of freed large
/// blocks so that repeated large allocations do not pay the page faults again.
///
/// TensorFlow's CPU allocators (the BFC allocator, the pool allocator) keep freed memory for the
/// same reason: on this kind of machine a fresh 256 MiB allocation costs about 70 ms of page
/// faults, more than writing it. Blocks of 64 KiB and above are rounded up to a size class (at
/// most 12.5% larger), and on free are kept while the cache holds no more than its limit
/// (default: 1 GiB, or `TENSORCAST_ALLOCATOR_CACHE_BYTES`); [`Allocator::release_cached_memory`]
/// empties it.
///
/// Small blocks (up to 256 bytes: scalars, short vectors) are kept too, on a shelf of the
/// thread that frees them (64-byte size classes, at most 32 blocks each, 20 KiB a thread), so
/// that a small tensor's creation and drop skip the system allocator. A shelf is freed when its
/// thread ends; `release_cached_memory` also frees the calling thread's shelf. Shelved bytes
/// are not part of `bytes_cached`, and hits on a shelf are not part of `cache_hits`. An
/// allocator with a cache limit of 0 keeps nothing, small blocks included. The buffers of the
/// default allocator ([`cpu_allocator_ref`]) go one step further: a dropped small buffer keeps
/// its memory with its reference-counted cell, for the next small buffer of its thread (at
/// most 16 a size class, 10 KiB a thread). The counters are kept exact through all of this:
///
/// ```
/// use tensorcast_buffer::{cpu_allocator_ref, Buffer};
/// let stats = || cpu_allocator_ref().stats().unwrap();
/// let before = stats();
/// for i in 0..3u8 {
///     let b = Buffer::copy_from_slice(&[i; 12])?;
///     assert_eq!(b.as_slice(), &[i; 12]);
///     assert_eq!(stats().bytes_in_use, before.bytes_in_use + 12);
/// }
/// let after = stats();
/// assert_eq!(after.bytes_in_use, before.bytes_in_use);
/// assert_eq!(after.num_allocs, before.num_allocs + 3);
/// # Ok::<(), tensorcast_buffer::AllocError>(())
/// ```
pub struct CpuAllocator {
    name: String,
    cache_limit_bytes: usize,
    pool: Mutex<Pool>,
    counters: Counters,
    cache_hits: AtomicU64,
}

impl fmt::Debug for CpuAllocator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CpuAllocator")
            .field("name", &self.name)
            .field("cache_limit_bytes", &self.cache_limit_bytes)
            .finish_non_exhaustive()
    }
}

impl Default for CpuAllocator {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuAllocator {
    /// The default cache limit: 1 GiB.
    pub const DEFAULT_CACHE_LIMIT_BYTES: usize = 1 << 30;

    /// A new allocator named `"cpu"` with the default cache limit (or the one set in the
    /// environment variable `TENSORCAST_ALLOCATOR_CACHE_BYTES`).
    pub fn new() -> Self {
        let limit = std::env::var("TENSORCAST_ALLOCATOR_CACHE_BYTES")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(Self::DEFAULT_CACHE_LIMIT_BYTES);
        Self::with_cache_limit(limit)
    }

    /// A new allocator that keeps at most `cache_limit_bytes` of freed blocks (0 disables reuse).
    pub fn with_cache_limit(cache_limit_bytes: usize) -> Self {
        Self {
            name: "cpu".to_string(),
            cache_limit_bytes,
            pool: Mutex::new(Pool::default()),
            counters: Counters::default(),
            cache_hits: AtomicU64::new(0),
        }
    }

    /// The most freed memory this allocator keeps for reuse.
    pub fn cache_limit_bytes(&self) -> usize {
        self.cache_limit_bytes
    }

    /// True when small blocks go through the per-thread shelf (see the type's docs).
    #[inline]
    pub(crate) fn shelves_small_blocks(&self) -> bool {
        self.cache_limit_bytes > 0
    }

    /// Records that a small block of the shelf was handed out for `size_bytes` without a call
    /// to `allocate` (the buffer crate's reuse of a small root with its memory).
    #[inline]
    pub(crate) fn note_allocated(&self, size_bytes: usize) {
        self.counters.allocated(size_bytes);
    }

    /// Records that a block of `size_bytes` came back without a call to `deallocate` (its
    /// memory kept with its root for reuse).
    #[inline]
    pub(crate) fn note_freed(&self, size_bytes: usize) {
        self.counters.freed(size_bytes);
    }

    fn pool(&self) -> std::sync::MutexGuard<'_, Pool> {
        // A panic while holding the lock cannot leave the pool inconsistent (every update is a
        // single push or pop plus a counter), so a poisoned lock is still usable.
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A block of at least `size_bytes` (not zero) at `alignment`: from the calling thread's
    /// shelf (small blocks), the cache of freed large blocks, or the system; `None` when none
    /// can be had. The caller counts it. Also whether its first `size_bytes` bytes are
    /// initialised (a cached block given back with at least that many).
    #[inline]
    fn take_block(
        &self,
        size_bytes: usize,
        alignment: usize,
        attrs: &AllocationAttributes,
    ) -> Result<Option<(NonNull<u8>, bool)>, AllocError> {
        if self.shelves_small_blocks() {
            if let Some(class) = small::class_of(size_bytes, alignment) {
                return Ok(small::take(class).map(|p| (p, false)));
            }
        }
        let class = size_class(size_bytes);
        let layout = layout_for(class, alignment)?;
        if class >= POOL_MIN_BYTES && self.cache_limit_bytes > 0 {
            let mut pool = self.pool();
            if let Some(block) = pool.free.get_mut(&(class, alignment)).and_then(Vec::pop) {
                pool.cached_bytes -= class;
                drop(pool);
                self.cache_hits.fetch_add(1, Ordering::Relaxed);
                return Ok(Some((block.0, block.1 >= size_bytes)));
            }
        }
        Ok(self.system_alloc(layout, attrs).map(|p| (p, false)))
    }

    /// Gives back a block of `size_bytes` whose first `initialized` bytes are written:
    /// [`Allocator::deallocate`]'s work.
    ///
    /// # Safety
    /// As [`Allocator::deallocate`], and `initialized` bytes of the block are initialised.
    unsafe fn give_back(
        &self,
        ptr: NonNull<u8>,
        size_bytes: usize,
        alignment: usize,
        initialized: usize,
    ) {
        self.counters.freed(size_bytes);
        if self.shelves_small_blocks() {
            if let Some(class) = small::class_of(size_bytes, alignment) {
                // SAFETY: `allocate_reporting_init` served this (size, alignment) from the
                // shelf's class (the same test, on a limit that never changes), and the caller
                // no longer uses the block.
                unsafe { small::give_back(class, ptr) };
                return;
            }
        }
        let class = size_class(size_bytes);
        if class >= POOL_MIN_BYTES {
            let mut pool = self.pool();
            if pool.cached_bytes + class <= self.cache_limit_bytes {
                pool.cached_bytes += class;
                pool.free
                    .entry((class, alignment))
                    .or_default()
                    .push(FreeBlock(ptr, initialized));
                return;
            }
        }
        // The caller guarantees (size, alignment) are those of the allocation, so this layout
        // is the one `allocate_reporting_init` built and validated.
        let Ok(layout) = layout_for(class, alignment) else {
            return;
        };
        // SAFETY: `allocate_reporting_init` took `ptr` from `system_alloc_block(layout)` (same
        // size class and alignment), per this function's contract, and it is not used after
        // this.
        unsafe { system_free_block(ptr, layout) };
    }

    fn system_alloc(&self, layout: Layout, attrs: &AllocationAttributes) -> Option<NonNull<u8>> {
        let p = system_alloc_block(layout);
        if p.is_none() && attrs.retry_on_failure && self.release_cached_memory() > 0 {
            return system_alloc_block(layout);
        }
        p
    }
}

// SAFETY: every pointer handed out comes from `std::alloc::alloc` with a layout of at least the
// requested size and alignment (the size class is >= the size), either fresh or taken out of the
// free-block cache, from which it is removed before being returned, so no two callers share it.
// A block is reported initialised only when it came back through `deallocate_initialized` with
// at least the requested size, whose caller promised that many initialised bytes.
unsafe impl Allocator for CpuAllocator {
    fn name(&self) -> &str {
        &self.name
    }

    fn allocate_reporting_init(
        &self,
        size_bytes: usize,
        alignment: usize,
        attrs: &AllocationAttributes,
    ) -> Result<(NonNull<u8>, bool), AllocError> {
        if size_bytes == 0 {
            return Err(AllocError::InvalidLayout {
                size_bytes,
                alignment,
            });
        }
        let p = self
            .take_block(size_bytes, alignment, attrs)?
            .ok_or_else(|| AllocError::OutOfMemory {
                allocator: self.name.clone(),
                size_bytes,
            })?;
        self.counters.allocated(size_bytes);
        Ok(p)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, size_bytes: usize, alignment: usize) {
        // SAFETY: the caller's guarantee; no byte is claimed initialised.
        unsafe { self.give_back(ptr, size_bytes, alignment, 0) }
    }

    unsafe fn deallocate_initialized(&self, ptr: NonNull<u8>, size_bytes: usize, alignment: usize) {
        // SAFETY: the caller's guarantee: the block's first `size_bytes` bytes are written.
        unsafe { self.give_back(ptr, size_bytes, alignment, size_bytes) }
    }

    fn stats(&self) -> Option<AllocatorStats> {
        let cached = self.pool().cached_bytes;
        Some(AllocatorStats {
            bytes_cached: cached as u64,
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
            ..self.counters.stats()
        })
    }

    /// Frees the cache of large blocks and the calling thread's small blocks: its shelf, and
    /// the memory its dropped small buffers kept (other threads' are freed when those threads
    /// end). The count returned is of the blocks' sizes.
    fn release_cached_memory(&self) -> usize {
        crate::buffer::release_small_roots();
        let shelf = small::release_this_thread();
        let free = {
            let mut pool = self.pool();
            pool.cached_bytes = 0;
            std::mem::take(&mut pool.free)
        };
        let mut released = 0;
        for ((class, alignment), blocks) in free {
            let Ok(layout) = layout_for(class, alignment) else {
                continue;
            };
            for block in blocks {
                // SAFETY: every cached block was returned by `std::alloc::alloc` with this
                // size class and alignment and was removed from the cache above, so it is freed
                // exactly once.
                unsafe { std::alloc::dealloc(block.0.as_ptr(), layout) };
                released += class;
            }
        }
        released + shelf
    }
}

impl Drop for CpuAllocator {
    fn drop(&mut self) {
        self.release_cached_memory();
    }
}

/// The process-wide default CPU allocator (created on first use).
pub fn cpu_allocator() -> Arc<dyn Allocator> {
    cpu_allocator_ref().clone()
}

/// The process-wide default CPU allocator, borrowed: [`cpu_allocator`] without a reference
/// count update (two atomic operations), for paths that run per call on small tensors.
/// Buffers from it do not hold a count of their own either (the allocator lives as long as
/// the process).
#[inline]
pub fn cpu_allocator_ref() -> &'static Arc<dyn Allocator> {
    static DEFAULT: OnceLock<Arc<dyn Allocator>> = OnceLock::new();
    match DEFAULT.get() {
        Some(a) => a,
        None => DEFAULT.get_or_init(|| default_cpu().clone()),
    }
}

/// The default CPU allocator as its concrete type (the same allocation as
/// [`cpu_allocator_ref`]), for the buffer crate's own small-block path.
#[inline]
pub(crate) fn default_cpu() -> &'static Arc<CpuAllocator> {
    static DEFAULT_CPU: OnceLock<Arc<CpuAllocator>> = OnceLock::new();
    match DEFAULT_CPU.get() {
        Some(a) => a,
        None => DEFAULT_CPU.get_or_init(|| Arc::new(CpuAllocator::new())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_reported_initialised_only_when_given_back_so_with_enough_bytes() {
        let a: Arc<dyn Allocator> = Arc::new(CpuAllocator::with_cache_limit(16 << 20));
        let attrs = AllocationAttributes::default();
        let size = (1 << 20) - 4096;
        // A fresh block, and one given back with `deallocate`: not initialised.
        let (p, init) = a.allocate_reporting_init(size, 64, &attrs).unwrap();
        assert!(!init);
        // SAFETY: `p` came from `a` with this size and alignment and is not used again.
        unsafe { a.deallocate(p, size, 64) };
        let (p, init) = a.allocate_reporting_init(size, 64, &attrs).unwrap();
        assert!(!init);
        // SAFETY: `p` is valid for `size` bytes of writes and owned here.
        unsafe { std::ptr::write_bytes(p.as_ptr(), 7, size) };
        // SAFETY: from `a` with this size and alignment, every byte written just above.
        unsafe { a.deallocate_initialized(p, size, 64) };
        // A larger request of the same size class gets the block, but not as initialised:
        // only `size` bytes were written.
        let larger = 1 << 20;
        assert_eq!(size_class(larger), size_class(size));
        let (q, init) = a.allocate_reporting_init(larger, 64, &attrs).unwrap();
        assert_eq!(q, p);
        assert!(!init);
        // SAFETY: as above, for `larger` bytes.
        unsafe { std::ptr::write_bytes(q.as_ptr(), 9, larger) };
        // SAFETY: from `a` with this size, all of it written.
        unsafe { a.deallocate_initialized(q, larger, 64) };
        // The same size or smaller: initialised, with the stale bytes.
        let (r, init) = a.allocate_reporting_init(size, 64, &attrs).unwrap();
        assert_eq!(r, p);
        assert!(init);
        // SAFETY: `r` is valid for `size` bytes, all initialised (reported so), and owned
        // here.
        let stale = unsafe { std::slice::from_raw_parts(r.as_ptr(), size) };
        assert_eq!(stale[size - 1], 9);
        // SAFETY: from `a` with this size and alignment.
        unsafe { a.deallocate(r, size, 64) };
    }

    #[test]
    fn a_buffer_written_in_place_into_a_reused_block_sees_stale_values_or_zeros() {
        use crate::Buffer;
        let a: Arc<dyn Allocator> = Arc::new(CpuAllocator::with_cache_limit(16 << 20));
        let attrs = AllocationAttributes::default();
        // The smallest pooled size (a quarter of a MiB is slow under Miri).
        let n = POOL_MIN_BYTES / 4;
        let seen = |a: &Arc<dyn Allocator>| {
            let mut first = None;
            let b = Buffer::new_with(a, n * 4, &attrs, |w| {
                w.put_in_place::<u32, _>(n, |s| {
                    first = Some(s[0]);
                    s.fill(5);
                });
            })
            .unwrap();
            assert!(b.as_slice().iter().all(|&v| v == 5 || v == 0));
            first.unwrap()
        };
        // A fresh block starts zeroed; the block of the dropped buffer comes back with its 5s.
        assert_eq!(seen(&a), 0);
        assert_eq!(seen(&a), 5);
        // A buffer whose writer panicked is not given back as initialised.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = Buffer::new_with(&a, n * 4, &attrs, |w| {
                w.put_zeros(4);
                panic!("a kernel bug");
            });
        }));
        assert!(r.is_err());
        assert_eq!(seen(&a), 0);
    }

    #[test]
    fn size_class_is_never_smaller_and_at_most_an_eighth_larger() {
        for s in [
            1usize,
            100,
            65535,
            65536,
            65537,
            100_000,
            1 << 20,
            (1 << 20) + 1,
            268_435_456,
        ] {
            let c = size_class(s);
            assert!(c >= s);
            assert!(c - s <= s / 8 + 1, "{s} -> {c}");
        }
    }

    /// A block of a [`CpuAllocator`]'s, given back when dropped: the tests' safe handle on
    /// `allocate` and `deallocate`.
    struct Block<'a> {
        allocator: &'a CpuAllocator,
        ptr: NonNull<u8>,
        size_bytes: usize,
        alignment: usize,
    }

    impl<'a> Block<'a> {
        fn new(allocator: &'a CpuAllocator, size_bytes: usize, alignment: usize) -> Self {
            let attrs = AllocationAttributes::default();
            let ptr = allocator.allocate(size_bytes, alignment, &attrs).unwrap();
            Self {
                allocator,
                ptr,
                size_bytes,
                alignment,
            }
        }
    }

    impl Drop for Block<'_> {
        fn drop(&mut self) {
            // SAFETY: `ptr` came from `allocator` with this size and alignment (`Block::new`),
            // and the block, its only owner, gives it back once.
            unsafe {
                self.allocator
                    .deallocate(self.ptr, self.size_bytes, self.alignment)
            };
        }
    }

    #[test]
    fn small_aligned_blocks_are_aligned_writable_and_freed() {
        let a = CpuAllocator::new();
        let mut live = Vec::new();
        for size in [
            1usize, 12, 15, 16, 17, 63, 64, 65, 200, 959, 960, 961, 1000, 4096,
        ] {
            for align in [1usize, 8, 16, 32, 64, 128, 256] {
                let b = Block::new(&a, size, align);
                assert_eq!(b.ptr.as_ptr().addr() % align, 0, "{size} {align}");
                // SAFETY: `b.ptr` is valid for `size` bytes of writes.
                unsafe { std::ptr::write_bytes(b.ptr.as_ptr(), 0xa5, size) };
                live.push(b);
            }
        }
        assert_eq!(a.stats().unwrap().largest_alloc_size, 4096);
        assert_eq!(
            a.stats().unwrap().bytes_in_use as usize,
            live.iter().map(|b| b.size_bytes).sum::<usize>()
        );
        drop(live);
        assert_eq!(a.stats().unwrap().bytes_in_use, 0);
    }

    #[test]
    fn pooled_block_is_reused_and_release_empties_cache() {
        let a = CpuAllocator::with_cache_limit(1 << 24);
        let p = Block::new(&a, 1 << 20, 64);
        let first = p.ptr;
        drop(p);
        assert_eq!(a.stats().unwrap().bytes_cached, 1 << 20);
        let q = Block::new(&a, 1 << 20, 64);
        assert_eq!(q.ptr, first);
        assert_eq!(a.stats().unwrap().cache_hits, 1);
        drop(q);
        assert_eq!(a.release_cached_memory(), 1 << 20);
        assert_eq!(a.stats().unwrap().bytes_cached, 0);
    }

    #[test]
    fn cache_limit_bounds_memory_kept() {
        let a = CpuAllocator::with_cache_limit(1 << 20);
        drop([Block::new(&a, 1 << 20, 64), Block::new(&a, 1 << 20, 64)]);
        assert_eq!(a.stats().unwrap().bytes_cached, 1 << 20);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "Miri stops at an allocation this large instead of failing it"
    )]
    fn absurd_sizes_are_errors_not_aborts() {
        let a = CpuAllocator::with_cache_limit(0);
        let attrs = AllocationAttributes {
            retry_on_failure: false,
            ..Default::default()
        };
        assert!(a.allocate(1 << 60, 64, &attrs).is_err());
        assert!(a.allocate(usize::MAX, 64, &attrs).is_err());
        assert!(a.allocate(0, 64, &attrs).is_err());
    }

    #[test]
    fn stats_track_use_and_peak() {
        let a = CpuAllocator::with_cache_limit(0);
        let blocks = [Block::new(&a, 1000, 64), Block::new(&a, 3000, 64)];
        let s = a.stats().unwrap();
        assert_eq!(
            (s.num_allocs, s.bytes_in_use, s.largest_alloc_size),
            (2, 4000, 3000)
        );
        drop(blocks);
        let s = a.stats().unwrap();
        assert_eq!((s.bytes_in_use, s.peak_bytes_in_use), (0, 4000));
    }
}
