//! Memory owned by Python objects (numpy arrays, DLPack producers) adopted as tensorcast buffers
//! without copying. This module and `dlpack.rs` are the binding's only `unsafe` code.

use pyo3::prelude::*;
use std::ffi::c_void;

/// What keeps adopted memory alive.
pub(crate) enum Keeper {
    /// A Python object (a numpy array) whose memory it is: dropping the reference frees it.
    Object(#[allow(dead_code, reason = "held only to keep the object alive")] Py<PyAny>),
    /// A DLPack managed tensor whose deleter must run once, when the memory is no longer used.
    DlPack {
        /// The `DLManagedTensor` or `DLManagedTensorVersioned`.
        managed: *mut c_void,
        /// Its deleter.
        deleter: unsafe extern "C" fn(*mut c_void),
    },
}

/// A range of memory owned by someone else, kept alive by `keeper` until dropped.
pub(crate) struct Foreign {
    ptr: *const u8,
    len: usize,
    keeper: Keeper,
}

// SAFETY: `Foreign` is a read-only view of memory plus a way to release it. The memory is never
// written through this type. The keeper is either a `Py<PyAny>` (itself `Send + Sync`: PyO3
// defers its decref to a thread holding the GIL) or a DLPack deleter, which the DLPack standard
// requires to be callable from any thread (producers such as numpy take the GIL inside it).
unsafe impl Send for Foreign {}
// SAFETY: shared access only reads the memory (`as_ref`) and never touches the keeper.
unsafe impl Sync for Foreign {}

impl Foreign {
    /// Adopts `len` bytes at `ptr`.
    ///
    /// # Safety
    /// `ptr..ptr + len` must be readable and stay allocated, unmoved, for as long as `keeper`
    /// lives (until it is dropped or its deleter runs); `ptr` must be non-null when `len > 0`.
    pub(crate) unsafe fn new(ptr: *const u8, len: usize, keeper: Keeper) -> Self {
        Self { ptr, len, keeper }
    }
}

impl AsRef<[u8]> for Foreign {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `Foreign::new`'s contract: the range is readable and alive while `self` (and
        // so its keeper) lives, and `ptr` is non-null for a non-empty range. The bytes may be
        // written by their Python owner meanwhile (a numpy array the user writes to): every
        // byte pattern is a valid `u8`, and tensorcast derives no memory safety from the values
        // (the same documented hazard as a memory-mapped file another process rewrites).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Foreign {
    fn drop(&mut self) {
        if let Keeper::DlPack { managed, deleter } = self.keeper {
            // SAFETY: the producer handed us `managed` with this deleter, to be called exactly
            // once when we no longer use the memory; `Foreign` is dropped once, and the buffer
            // (the only reader of `ptr`) is gone by then.
            unsafe { deleter(managed) };
        }
    }
}
