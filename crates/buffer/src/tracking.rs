//! A size-tracking allocator wrapper, for tests and for callers who want per-allocation records.

use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use crate::alloc::{AllocError, AllocationAttributes, Allocator, AllocatorStats};
use crate::counters::Counters;

#[derive(Debug, Clone, Copy)]
struct Record {
    requested: usize,
    allocated: usize,
    id: i64,
}

#[derive(Debug, Default)]
struct State {
    live: HashMap<usize, Record>,
}

/// Wraps another allocator and records every live allocation: requested and allocated size and a
/// unique id, as TensorFlow's `TrackingAllocator` does. [`Allocator::tracks_allocation_sizes`]
/// is true, so tensors built on it report `allocated_bytes` from here.
#[derive(Debug)]
pub struct TrackingAllocator {
    inner: Arc<dyn Allocator>,
    name: String,
    next_id: AtomicI64,
    state: Mutex<State>,
    counters: Counters,
}

impl TrackingAllocator {
    /// Tracks allocations made through `inner`.
    pub fn new(inner: Arc<dyn Allocator>) -> Self {
        let name = format!("tracking({})", inner.name());
        Self {
            inner,
            name,
            next_id: AtomicI64::new(1),
            state: Mutex::new(State::default()),
            counters: Counters::default(),
        }
    }

    /// Number of allocations currently live.
    pub fn live_allocations(&self) -> usize {
        self.state().live.len()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn record(&self, ptr: NonNull<u8>) -> Option<Record> {
        self.state().live.get(&(ptr.as_ptr() as usize)).copied()
    }
}

// SAFETY: memory and its initialisation report come unchanged from the wrapped allocator, which
// upholds the contract; this wrapper only records addresses and forwards deallocation with the
// same size and alignment.
unsafe impl Allocator for TrackingAllocator {
    fn name(&self) -> &str {
        &self.name
    }

    fn allocate_reporting_init(
        &self,
        size_bytes: usize,
        alignment: usize,
        attrs: &AllocationAttributes,
    ) -> Result<(NonNull<u8>, bool), AllocError> {
        let (p, initialized) = self
            .inner
            .allocate_reporting_init(size_bytes, alignment, attrs)?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let allocated = size_bytes.next_multiple_of(alignment.max(1));
        self.counters.allocated(size_bytes);
        self.state().live.insert(
            p.as_ptr() as usize,
            Record {
                requested: size_bytes,
                allocated,
                id,
            },
        );
        Ok((p, initialized))
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, size_bytes: usize, alignment: usize) {
        self.state().live.remove(&(ptr.as_ptr() as usize));
        self.counters.freed(size_bytes);
        // SAFETY: the caller's guarantee for this call is exactly the one the inner allocator
        // needs: `ptr` came from `self.inner.allocate_reporting_init(size_bytes, alignment, ..)`.
        unsafe { self.inner.deallocate(ptr, size_bytes, alignment) }
    }

    unsafe fn deallocate_initialized(&self, ptr: NonNull<u8>, size_bytes: usize, alignment: usize) {
        self.state().live.remove(&(ptr.as_ptr() as usize));
        self.counters.freed(size_bytes);
        // SAFETY: as `deallocate`, and the caller's promise of initialised bytes is passed on.
        unsafe {
            self.inner
                .deallocate_initialized(ptr, size_bytes, alignment)
        }
    }

    fn tracks_allocation_sizes(&self) -> bool {
        true
    }

    fn requested_size(&self, ptr: NonNull<u8>) -> Option<usize> {
        self.record(ptr).map(|r| r.requested)
    }

    fn allocated_size(&self, ptr: NonNull<u8>) -> Option<usize> {
        self.record(ptr).map(|r| r.allocated)
    }

    fn allocation_id(&self, ptr: NonNull<u8>) -> Option<i64> {
        self.record(ptr).map(|r| r.id)
    }

    fn stats(&self) -> Option<AllocatorStats> {
        Some(self.counters.stats())
    }

    fn release_cached_memory(&self) -> usize {
        self.inner.release_cached_memory()
    }
}
