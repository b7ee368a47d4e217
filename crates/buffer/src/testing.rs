//! Allocators that misbehave on purpose, for tests of the layers above: one that always fails
//! and one that hands out addresses offset from any alignment.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::alloc::{layout_for, AllocError, AllocationAttributes, Allocator};
use crate::counters::Level;

/// An allocator whose every allocation fails (as TensorFlow's test `FailureToAllocate` uses),
/// optionally after a number of successful ones.
#[derive(Debug, Default)]
pub struct FailingAllocator {
    successes_left: AtomicUsize,
}

impl FailingAllocator {
    /// Fails every allocation.
    pub fn new() -> Self {
        Self::default()
    }

    /// Lets `n` allocations succeed (from the system), then fails the rest.
    pub fn after(n: usize) -> Self {
        Self {
            successes_left: AtomicUsize::new(n),
        }
    }
}

// SAFETY: successful allocations come straight from `std::alloc::alloc` with a validated layout
// of the requested size and alignment; failures return an error and hand out nothing.
unsafe impl Allocator for FailingAllocator {
    fn name(&self) -> &str {
        "failing"
    }

    fn allocate_reporting_init(
        &self,
        size_bytes: usize,
        alignment: usize,
        _attrs: &AllocationAttributes,
    ) -> Result<(NonNull<u8>, bool), AllocError> {
        let fail = || AllocError::OutOfMemory {
            allocator: "failing".into(),
            size_bytes,
        };
        let ok = self
            .successes_left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok();
        if !ok || size_bytes == 0 {
            return Err(fail());
        }
        let layout = layout_for(size_bytes, alignment)?;
        // SAFETY: `layout` has a non-zero size (checked above).
        let p = NonNull::new(unsafe { std::alloc::alloc(layout) }).ok_or_else(fail)?;
        Ok((p, false))
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, size_bytes: usize, alignment: usize) {
        let Ok(layout) = layout_for(size_bytes, alignment) else {
            return;
        };
        // SAFETY: per the caller's contract `ptr` came from `allocate_reporting_init` above,
        // which allocated it with exactly this layout.
        unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) };
    }
}

/// An allocator that returns addresses exactly `offset` bytes past a 64-byte boundary (an odd
/// offset makes every address odd), so tests can check that misaligned memory is detected and
/// handled soundly rather than assumed aligned.
#[derive(Debug)]
pub struct OffsetAllocator {
    offset: usize,
}

impl OffsetAllocator {
    /// Addresses will be `offset` (taken modulo 64) bytes past a 64-byte boundary.
    pub fn new(offset: usize) -> Self {
        Self {
            offset: offset % 64,
        }
    }
}

// SAFETY: each allocation is a fresh system block of `size_bytes + offset` bytes; the pointer
// handed out is `offset` bytes into it, so `size_bytes` bytes are valid and exclusively owned.
unsafe impl Allocator for OffsetAllocator {
    fn name(&self) -> &str {
        "offset"
    }

    fn allocate_reporting_init(
        &self,
        size_bytes: usize,
        _alignment: usize,
        _attrs: &AllocationAttributes,
    ) -> Result<(NonNull<u8>, bool), AllocError> {
        let fail = || AllocError::OutOfMemory {
            allocator: "offset".into(),
            size_bytes,
        };
        let total = size_bytes.checked_add(self.offset).ok_or_else(fail)?;
        if total == 0 {
            return Err(fail());
        }
        let layout = layout_for(total, 64)?;
        // SAFETY: `layout` has a non-zero size (checked above).
        let base = NonNull::new(unsafe { std::alloc::alloc(layout) }).ok_or_else(fail)?;
        // SAFETY: `offset < total`-or-equal, so the result stays inside (or one past) the block.
        Ok((unsafe { base.add(self.offset) }, false))
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, size_bytes: usize, _alignment: usize) {
        let Ok(layout) = layout_for(size_bytes + self.offset, 64) else {
            return;
        };
        // SAFETY: per the caller's contract `ptr` is `offset` bytes into a block allocated above
        // with exactly this layout.
        unsafe { std::alloc::dealloc(ptr.as_ptr().wrapping_sub(self.offset), layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Buffer;
    use std::sync::Arc;

    #[test]
    fn failing_allocator_fails_cleanly() {
        let a: Arc<dyn Allocator> = Arc::new(FailingAllocator::after(1));
        assert!(Buffer::zeroed_in(&a, 10, &Default::default()).is_ok());
        let e = Buffer::zeroed_in(&a, 10, &Default::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "allocator failing could not allocate 10 bytes"
        );
    }

    #[test]
    fn offset_allocator_gives_odd_addresses() {
        let a: Arc<dyn Allocator> = Arc::new(OffsetAllocator::new(3));
        let b = Buffer::copy_from_slice_in(&a, &[1, 2, 3, 4, 5]).unwrap();
        assert_eq!(b.as_ptr() as usize % 64, 3);
        assert_eq!(b.address_alignment(), 1);
        assert_eq!(b.as_slice(), &[1, 2, 3, 4, 5]);
    }
}

/// A global allocator that forwards to [`std::alloc::System`] and counts live heap bytes and
/// their peak, for test and benchmark binaries that measure a computation's peak memory
/// (`#[global_allocator] static A: CountingGlobalAlloc = CountingGlobalAlloc::new();`). The
/// counts cover every allocation of the process.
#[derive(Debug)]
pub struct CountingGlobalAlloc {
    level: Level,
}

impl CountingGlobalAlloc {
    /// A counter at zero.
    pub const fn new() -> Self {
        Self {
            level: Level::new(),
        }
    }

    /// Live heap bytes now.
    pub fn live_bytes(&self) -> usize {
        self.level.live()
    }

    /// Resets the peak to the live level and returns that level.
    pub fn reset_peak(&self) -> usize {
        self.level.reset_peak()
    }

    /// The highest live level since the last [`CountingGlobalAlloc::reset_peak`].
    pub fn peak_bytes(&self) -> usize {
        self.level.peak()
    }

    /// Runs `f` and returns its result with the largest single allocation request (bytes) made
    /// on this thread while it ran: how a test checks that a tiny input never makes a decoder
    /// ask for a huge block, unaffected by other test threads.
    pub fn largest_request<R>(&self, f: impl FnOnce() -> R) -> (R, usize) {
        LARGEST_REQUEST.with(|l| l.set(0));
        let r = f();
        (r, LARGEST_REQUEST.with(std::cell::Cell::get))
    }

    fn note(&self, size: usize) {
        self.level.add(size);
        // `try_with` fails only while the thread is being torn down: nothing to record then.
        let _ = LARGEST_REQUEST.try_with(|l| l.set(l.get().max(size)));
    }
}

thread_local! {
    // `const` init: no lazy initialisation and no destructor, so the allocator can touch it
    // without allocating or recursing.
    static LARGEST_REQUEST: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Default for CountingGlobalAlloc {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the counters
// are only bookkeeping and never affect the returned pointers.
unsafe impl std::alloc::GlobalAlloc for CountingGlobalAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: forwarded as is (the caller upholds `alloc`'s contract).
        let p = unsafe { std::alloc::System.alloc(layout) };
        if !p.is_null() {
            self.note(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { std::alloc::System.alloc_zeroed(layout) };
        if !p.is_null() {
            self.note(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        self.level.sub(layout.size());
        // SAFETY: forwarded as is (the caller passes a block this allocator returned).
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { std::alloc::System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            self.level.sub(layout.size());
            self.note(new_size);
        }
        p
    }
}
