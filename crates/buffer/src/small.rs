//! A per-thread shelf of small freed blocks for [`crate::CpuAllocator`].
//!
//! Every small tensor (a scalar, a 3-element result) allocates and frees one block, and the
//! system allocator's round trip for it (`malloc` plus `free` of a padded block, 20-40 ns on
//! the development machine) was the largest single cost of an element-wise op on three
//! elements. Freed blocks of up to [`MAX_BYTES`] are therefore kept on a shelf of the thread
//! that frees them, by size class (multiples of 64 bytes, 64-byte aligned), at most
//! [`PER_CLASS`] blocks a class (at most 20 KiB a thread), and the next small request of that
//! thread takes one back: a thread-local pop and push instead of the system's two calls.
//!
//! A block is plain system memory of its class's layout, whichever allocator freed it, so any
//! `CpuAllocator` that uses the shelf may take it. A thread's shelf is freed when the thread
//! ends, or by [`release_this_thread`] ([`crate::Allocator::release_cached_memory`] calls it).
//! When the shelf cannot be reached (while a thread's locals are being destroyed, or from
//! inside the shelf's own drop), the system allocator serves the request directly.

use std::alloc::Layout;
use std::cell::RefCell;
use std::ptr::NonNull;

use crate::alloc::{system_alloc_block, system_free_block};

/// Size-class step and the alignment of every shelved block.
const CLASS_BYTES: usize = 64;
/// Number of classes: 64, 128, 192 and 256 bytes.
pub(crate) const CLASSES: usize = 4;
/// The largest request the shelf serves.
pub(crate) const MAX_BYTES: usize = CLASS_BYTES * CLASSES;
/// The most blocks a thread keeps per class.
pub(crate) const PER_CLASS: usize = 32;

/// The class of a request of `size_bytes` aligned to `alignment`, if the shelf serves it.
#[inline]
pub(crate) fn class_of(size_bytes: usize, alignment: usize) -> Option<usize> {
    if size_bytes == 0 || size_bytes > MAX_BYTES || alignment > CLASS_BYTES {
        return None;
    }
    Some((size_bytes - 1) / CLASS_BYTES)
}

/// The layout every block of `class` has (a multiple of 64 bytes, 64-byte aligned).
#[inline]
pub(crate) fn class_layout(class: usize) -> Layout {
    // `(class + 1) * 64` is at most 256 and 64 is a power of two: always a valid layout.
    Layout::from_size_align((class + 1) * CLASS_BYTES, CLASS_BYTES)
        .unwrap_or_else(|_| unreachable!("small class layouts are valid"))
}

/// A shelved block. It keeps the pointer itself (not an address), so the memory's provenance
/// survives the stay on the shelf.
struct Block(NonNull<u8>);

/// One thread's shelf.
struct Shelf {
    classes: [Vec<Block>; CLASSES],
}

impl Shelf {
    /// Empties the shelf, freeing every block; gives the bytes freed.
    fn release(&mut self) -> usize {
        let mut released = 0;
        for (class, blocks) in self.classes.iter_mut().enumerate() {
            let layout = class_layout(class);
            for block in blocks.drain(..) {
                // SAFETY: every shelved block came from `system_alloc_block(class_layout(class))`
                // (directly, or through a `CpuAllocator` that took it from the system with
                // that layout), and left the allocator's users when it was shelved; draining
                // removes it from the shelf, so it is freed exactly once.
                unsafe { system_free_block(block.0, layout) };
                released += layout.size();
            }
        }
        released
    }
}

impl Drop for Shelf {
    fn drop(&mut self) {
        self.release();
    }
}

thread_local! {
    static SHELF: RefCell<Shelf> = const {
        RefCell::new(Shelf { classes: [Vec::new(), Vec::new(), Vec::new(), Vec::new()] })
    };
}

/// A block of `class` (of [`class_layout`]): a shelved one, or a new one from the system.
/// `None` when the system has no memory.
#[inline]
pub(crate) fn take(class: usize) -> Option<NonNull<u8>> {
    let shelved = SHELF
        .try_with(|s| s.try_borrow_mut().ok()?.classes[class].pop())
        .ok()
        .flatten();
    match shelved {
        Some(block) => Some(block.0),
        None => system_alloc_block(class_layout(class)),
    }
}

/// Takes back a block of `class`: onto this thread's shelf if it has room, else to the system.
///
/// # Safety
/// `ptr` must be a block of `class` (from [`take`] with this class), no longer used by anyone.
#[inline]
pub(crate) unsafe fn give_back(class: usize, ptr: NonNull<u8>) {
    let kept = SHELF
        .try_with(|s| {
            let Ok(mut s) = s.try_borrow_mut() else {
                return false;
            };
            let blocks = &mut s.classes[class];
            if blocks.len() >= PER_CLASS {
                return false;
            }
            if blocks.capacity() == 0 {
                // One allocation for the class's whole shelf (never grown again).
                blocks.reserve_exact(PER_CLASS);
            }
            blocks.push(Block(ptr));
            true
        })
        .unwrap_or(false);
    if !kept {
        // SAFETY: per this function's contract, `ptr` is a block of `class`, which `take`
        // got from `system_alloc_block(class_layout(class))`, and nobody uses it any more.
        unsafe { system_free_block(ptr, class_layout(class)) };
    }
}

/// Frees this thread's shelf; gives the bytes released.
pub(crate) fn release_this_thread() -> usize {
    SHELF
        .try_with(|s| s.try_borrow_mut().map_or(0, |mut s| s.release()))
        .unwrap_or(0)
}

/// The bytes on this thread's shelf.
#[cfg(test)]
pub(crate) fn shelved_bytes() -> usize {
    SHELF.with(|s| {
        let s = s.borrow();
        s.classes
            .iter()
            .enumerate()
            .map(|(class, blocks)| blocks.len() * class_layout(class).size())
            .sum()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_cover_small_requests_up_to_64_byte_alignment() {
        assert_eq!(class_of(0, 64), None);
        assert_eq!(class_of(1, 64), Some(0));
        assert_eq!(class_of(64, 8), Some(0));
        assert_eq!(class_of(65, 64), Some(1));
        assert_eq!(class_of(MAX_BYTES, 64), Some(CLASSES - 1));
        assert_eq!(class_of(MAX_BYTES + 1, 64), None);
        assert_eq!(class_of(8, 128), None);
        for class in 0..CLASSES {
            let l = class_layout(class);
            assert_eq!((l.size(), l.align()), ((class + 1) * 64, 64));
        }
    }

    #[test]
    fn a_given_back_block_is_taken_again_and_release_frees_the_shelf() {
        release_this_thread();
        let p = take(1).expect("memory");
        assert_eq!(p.as_ptr().addr() % 64, 0);
        // SAFETY: 128 bytes of class 1 are ours to write.
        unsafe { p.as_ptr().write_bytes(0xAB, 128) };
        // SAFETY: a class-1 block from `take`, not used after this.
        unsafe { give_back(1, p) };
        assert_eq!(shelved_bytes(), 128);
        let q = take(1).expect("memory");
        assert_eq!(q, p);
        assert_eq!(shelved_bytes(), 0);
        // SAFETY: as above.
        unsafe { give_back(1, q) };
        assert_eq!(release_this_thread(), 128);
        assert_eq!(shelved_bytes(), 0);
    }

    #[test]
    fn a_full_class_frees_what_it_cannot_keep() {
        release_this_thread();
        let blocks: Vec<_> = (0..PER_CLASS + 3)
            .map(|_| take(0).expect("memory"))
            .collect();
        for p in blocks {
            // SAFETY: class-0 blocks from `take`, each given back once.
            unsafe { give_back(0, p) };
        }
        assert_eq!(shelved_bytes(), PER_CLASS * 64);
        assert_eq!(release_this_thread(), PER_CLASS * 64);
    }

    #[test]
    fn a_thread_frees_its_shelf_when_it_ends() {
        // Under Miri, a block left on an ended thread's shelf would be reported as a leak.
        std::thread::spawn(|| {
            let p = take(3).expect("memory");
            // SAFETY: a class-3 block from `take`, not used after this.
            unsafe { give_back(3, p) };
            assert_eq!(shelved_bytes(), 256);
        })
        .join()
        .expect("thread");
    }
}
