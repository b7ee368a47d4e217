//! [`ObjectArray`]: a fixed-length array of owned objects (strings, handles, variants) in memory
//! from an [`Allocator`], as TensorFlow allocates the elements of a string tensor through the
//! tensor's allocator, so that a failing or limited allocator fails for them too and a tracking
//! allocator counts them.

use std::fmt;
use std::marker::PhantomData;
use std::mem::{align_of, size_of};
use std::ptr::NonNull;
use std::sync::Arc;

use crate::alloc::{AllocError, AllocationAttributes, Allocator};

/// `len` objects of type `T` in one block from an [`Allocator`], dropped and returned to it
/// together. Built element by element ([`ObjectArray::try_new`]); afterwards it is a slice.
pub struct ObjectArray<T> {
    ptr: NonNull<T>,
    len: usize,
    /// The block: `None` when nothing was allocated (no elements, or zero-sized `T`).
    block: Option<Block>,
    _owns: PhantomData<T>,
}

/// An allocation to give back.
struct Block {
    allocator: Arc<dyn Allocator>,
    ptr: NonNull<u8>,
    bytes: usize,
    align: usize,
}

impl Block {
    fn release(&self) {
        // SAFETY: `ptr` came from `allocate(bytes, align)` on this allocator and is released
        // exactly once (by the owner's `Drop`, after its elements were dropped).
        unsafe { self.allocator.deallocate(self.ptr, self.bytes, self.align) }
    }
}

/// The part of an array being built: on an early return (or a panic) it drops the elements
/// written so far and gives the block back.
struct Partial<T> {
    ptr: NonNull<T>,
    init: usize,
    block: Option<Block>,
}

impl<T> Drop for Partial<T> {
    fn drop(&mut self) {
        // SAFETY: the first `init` slots were written (and only those), are properly aligned,
        // and nothing else refers to them.
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(
                self.ptr.as_ptr(),
                self.init,
            ));
        }
        if let Some(b) = &self.block {
            b.release();
        }
    }
}

impl<T> ObjectArray<T> {
    /// Allocates room for `len` elements from `allocator` (aligned to 64 bytes, or `T`'s
    /// alignment if larger) and writes element `i` as `f(i)`. On an allocation failure, or
    /// the first error of `f`, the elements made so far are dropped, the block is returned and
    /// the error is passed on.
    ///
    /// # Errors
    /// [`AllocError`] (converted into `E`) when the allocator fails, the size overflows, or the
    /// allocator hands back memory not aligned for `T`; `f`'s first error.
    ///
    /// ```
    /// use tensorcast_buffer::{cpu_allocator, AllocError, ObjectArray};
    /// let a = ObjectArray::try_new(&cpu_allocator(), 3, |i| Ok::<_, AllocError>(format!("s{i}")))?;
    /// assert_eq!(a.as_slice(), ["s0", "s1", "s2"]);
    /// # Ok::<(), AllocError>(())
    /// ```
    pub fn try_new<E: From<AllocError>>(
        allocator: &Arc<dyn Allocator>,
        len: usize,
        mut f: impl FnMut(usize) -> Result<T, E>,
    ) -> Result<Self, E> {
        let align = align_of::<T>().max(crate::DEFAULT_ALIGNMENT);
        let (ptr, block) = if len == 0 || size_of::<T>() == 0 {
            (NonNull::dangling(), None)
        } else {
            let bytes = len
                .checked_mul(size_of::<T>())
                .ok_or(AllocError::InvalidLayout {
                    size_bytes: usize::MAX,
                    alignment: align,
                })?;
            let raw = allocator.allocate(bytes, align, &AllocationAttributes::default())?;
            let block = Block {
                allocator: allocator.clone(),
                ptr: raw,
                bytes,
                align,
            };
            if !(raw.as_ptr() as usize).is_multiple_of(align_of::<T>()) {
                // Typed slots need their type's alignment; an allocator may hand back less.
                block.release();
                return Err(AllocError::Misaligned {
                    allocator: allocator.name().to_string(),
                    alignment: align_of::<T>(),
                }
                .into());
            }
            (raw.cast::<T>(), Some(block))
        };
        let mut partial = Partial {
            ptr,
            init: 0,
            block,
        };
        for i in 0..len {
            let value = f(i)?;
            // SAFETY: slot `i < len` lies inside the block (or `T` is zero-sized and any
            // aligned non-null pointer will do), is aligned for `T`, and was not written yet.
            unsafe { ptr.as_ptr().wrapping_add(i).write(value) };
            partial.init += 1;
        }
        let block = partial.block.take();
        std::mem::forget(partial);
        Ok(Self {
            ptr,
            len,
            block,
            _owns: PhantomData,
        })
    }

    /// The elements.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: all `len` slots were written by `try_new`, are aligned, and live as long as
        // `self`; shared access matches `&self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The elements, writable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as `as_slice`, and `&mut self` makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// Bytes taken from the allocator (0 when nothing was allocated).
    pub fn allocated_bytes(&self) -> usize {
        self.block.as_ref().map_or(0, |b| b.bytes)
    }
}

impl<T> Drop for ObjectArray<T> {
    fn drop(&mut self) {
        // A whole array is a finished `Partial`: dropping that drops every element and returns
        // the block, once.
        drop(Partial {
            ptr: self.ptr,
            init: self.len,
            block: self.block.take(),
        });
    }
}

// SAFETY: an `ObjectArray<T>` owns its elements as a `Vec<T>` does (the allocator handle is
// `Send + Sync`), so it can move to, or be shared with, another thread when `T` can.
unsafe impl<T: Send> Send for ObjectArray<T> {}
// SAFETY: as above; `&ObjectArray<T>` only gives `&[T]`.
unsafe impl<T: Sync> Sync for ObjectArray<T> {}

impl<T: fmt::Debug> fmt::Debug for ObjectArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FailingAllocator, OffsetAllocator};
    use crate::{CpuAllocator, TrackingAllocator};
    use std::rc::Rc;

    fn tracking() -> Arc<dyn Allocator> {
        Arc::new(TrackingAllocator::new(Arc::new(CpuAllocator::new())))
    }

    #[test]
    fn elements_are_counted_by_the_allocator_and_returned_on_drop() {
        let a = tracking();
        let arr = ObjectArray::try_new(&a, 4, |i| Ok::<_, AllocError>(vec![i; i])).unwrap();
        assert_eq!(arr.as_slice()[3], [3, 3, 3]);
        assert_eq!(
            a.stats().unwrap().bytes_in_use,
            4 * size_of::<Vec<usize>>() as u64
        );
        drop(arr);
        assert_eq!(a.stats().unwrap().bytes_in_use, 0);
    }

    #[test]
    fn failing_allocator_fails() {
        let a: Arc<dyn Allocator> = Arc::new(FailingAllocator::new());
        let r = ObjectArray::try_new(&a, 2, |_| Ok::<_, AllocError>(String::new()));
        assert!(matches!(r, Err(AllocError::OutOfMemory { .. })));
    }

    #[test]
    fn an_element_error_drops_what_was_built_and_returns_the_block() {
        let a = tracking();
        let live = Rc::new(());
        let r: Result<ObjectArray<Rc<()>>, AllocError> = ObjectArray::try_new(&a, 5, |i| {
            if i == 3 {
                Err(AllocError::OutOfMemory {
                    allocator: "element".into(),
                    size_bytes: 0,
                })
            } else {
                Ok(live.clone())
            }
        });
        assert!(r.is_err());
        assert_eq!(Rc::strong_count(&live), 1);
        assert_eq!(a.stats().unwrap().bytes_in_use, 0);
    }

    #[test]
    fn misaligned_memory_is_refused_and_returned() {
        let a: Arc<dyn Allocator> = Arc::new(OffsetAllocator::new(3));
        let r = ObjectArray::try_new(&a, 2, |_| Ok::<_, AllocError>(String::new()));
        assert!(matches!(r, Err(AllocError::Misaligned { .. })));
    }

    #[test]
    fn empty_zero_sized_and_mutable() {
        let a = tracking();
        let e = ObjectArray::try_new(&a, 0, |_| Ok::<String, AllocError>(String::new())).unwrap();
        assert!(e.as_slice().is_empty());
        let z = ObjectArray::try_new(&a, 7, |_| Ok::<(), AllocError>(())).unwrap();
        assert_eq!((z.as_slice().len(), z.allocated_bytes()), (7, 0));
        let mut s =
            ObjectArray::try_new(&a, 2, |_| Ok::<_, AllocError>(String::from("x"))).unwrap();
        s.as_mut_slice()[1].push('y');
        assert_eq!(s.as_slice(), ["x", "xy"]);
        assert_eq!(format!("{s:?}"), r#"["x", "xy"]"#);
        let t = std::thread::spawn(move || s.as_slice().len())
            .join()
            .unwrap();
        assert_eq!(t, 2);
    }

    #[test]
    fn absurd_length_is_an_error_not_an_abort() {
        let a = tracking();
        let r = ObjectArray::try_new(&a, usize::MAX / 2, |_| Ok::<_, AllocError>(0u64));
        assert!(r.is_err());
    }
}
