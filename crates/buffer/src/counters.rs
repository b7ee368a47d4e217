//! The allocation bookkeeping every allocator of this crate keeps, written once: a live level
//! with its peak ([`Level`]), and TensorFlow's `AllocatorStats` counters on top ([`Counters`]).
//!
//! Updates are relaxed atomics: the numbers only count (each update is still one atomic step),
//! and a maximum is written only when it grows, so that a loop of small allocations pays for
//! one locked add and a plain load, not a locked read-modify-write per maximum.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::alloc::AllocatorStats;

/// Live bytes and the highest level they reached.
#[derive(Debug, Default)]
pub(crate) struct Level {
    live: AtomicUsize,
    peak: AtomicUsize,
}

impl Level {
    /// Zero, usable in a `static` (a global allocator's).
    #[cfg_attr(
        not(any(test, feature = "testing")),
        allow(dead_code, reason = "the counting global allocator's")
    )]
    pub(crate) const fn new() -> Self {
        Self {
            live: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        }
    }

    /// `bytes` more are live.
    #[inline]
    pub(crate) fn add(&self, bytes: usize) {
        let now = self.live.fetch_add(bytes, Ordering::Relaxed) + bytes;
        raise(&self.peak, now);
    }

    /// `bytes` fewer are live.
    #[inline]
    pub(crate) fn sub(&self, bytes: usize) {
        self.live.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Live bytes now.
    pub(crate) fn live(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    /// The highest live level since the start or the last [`Level::reset_peak`].
    pub(crate) fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// Starts a new peak measurement at the live level, which it returns.
    #[cfg_attr(
        not(any(test, feature = "testing")),
        allow(dead_code, reason = "the counting global allocator's")
    )]
    pub(crate) fn reset_peak(&self) -> usize {
        let now = self.live();
        self.peak.store(now, Ordering::Relaxed);
        now
    }
}

/// Raises `max` to `value` if it is larger (a plain load first: maxima rarely change).
#[inline]
fn raise(max: &AtomicUsize, value: usize) {
    if value > max.load(Ordering::Relaxed) {
        max.fetch_max(value, Ordering::Relaxed);
    }
}

/// TensorFlow's allocator counters: allocations made, bytes in use and their peak, and the
/// largest single request.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    level: Level,
    num_allocs: AtomicU64,
    largest: AtomicUsize,
}

impl Counters {
    /// An allocation of `bytes` was handed out.
    #[inline]
    pub(crate) fn allocated(&self, bytes: usize) {
        self.num_allocs.fetch_add(1, Ordering::Relaxed);
        self.level.add(bytes);
        raise(&self.largest, bytes);
    }

    /// An allocation of `bytes` came back.
    #[inline]
    pub(crate) fn freed(&self, bytes: usize) {
        self.level.sub(bytes);
    }

    /// The counters as `AllocatorStats` (the cache fields zero: a pooling allocator fills them).
    pub(crate) fn stats(&self) -> AllocatorStats {
        AllocatorStats {
            num_allocs: self.num_allocs.load(Ordering::Relaxed),
            bytes_in_use: self.level.live() as u64,
            peak_bytes_in_use: self.level.peak() as u64,
            largest_alloc_size: self.largest.load(Ordering::Relaxed) as u64,
            ..AllocatorStats::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_track_level_peak_and_largest() {
        let c = Counters::default();
        c.allocated(100);
        c.allocated(50);
        c.freed(100);
        c.allocated(10);
        let s = c.stats();
        assert_eq!(
            (
                s.num_allocs,
                s.bytes_in_use,
                s.peak_bytes_in_use,
                s.largest_alloc_size
            ),
            (3, 60, 150, 100)
        );
    }

    #[test]
    fn reset_peak_starts_at_the_live_level() {
        let l = Level::new();
        l.add(40);
        l.add(60);
        l.sub(60);
        assert_eq!((l.live(), l.peak()), (40, 100));
        assert_eq!(l.reset_peak(), 40);
        l.add(5);
        assert_eq!(l.peak(), 45);
    }
}
