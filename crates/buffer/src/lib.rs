//! Memory for tensorcast: 64-byte-aligned, reference-counted byte buffers and the allocators
//! behind them. This is the only crate of the project that contains `unsafe` code; everything
//! above it (tensors, views, kernels, decoders) is safe Rust built on the API here.
//!
//! Why it is built this way:
//! - A [`Buffer`] is an `Arc`'d *root* allocation plus a byte range, as arrow's buffers and
//!   TensorFlow's `TensorBuffer`/`SubBuffer` are: clone and sub-range are O(1) and share the
//!   root, so tensors can be sliced, reshaped and bitcast without copying, and
//!   [`Buffer::shares_root_with`] answers TensorFlow's `SharesBufferWith`.
//! - Memory can come from an [`Allocator`] (64-byte aligned, as TensorFlow's
//!   `kAllocatorAlignment`), or be adopted without copying from a `Vec`, `bytes::Bytes`, any
//!   owner of bytes, or a memory-mapped file; the real address alignment is always queryable.
//! - New outputs are written through a [`Writer`], which never exposes uninitialised or stale
//!   bytes, so kernels can skip a zero fill and still be written in safe code.
//! - Allocation failure, including absurd sizes, is an [`AllocError`], never an abort.
//! - The default [`CpuAllocator`] keeps a bounded cache of freed large blocks, so repeated large
//!   outputs do not pay the page faults of fresh memory each time, and small ones on a shelf
//!   per thread (the default allocator's small buffers keep theirs with their cell), so a
//!   small tensor's creation and drop make no system allocator call.
//!
//! ```
//! use std::sync::Arc;
//! use tensorcast_buffer::{Allocator, AllocationAttributes, Buffer, CpuAllocator, TrackingAllocator};
//!
//! let tracking: Arc<dyn Allocator> = Arc::new(TrackingAllocator::new(Arc::new(CpuAllocator::new())));
//! let buf = Buffer::new_with(&tracking, 8, &AllocationAttributes::default(), |w| {
//!     w.put_fill(&1.5f32.to_le_bytes(), 2);
//! })
//! .unwrap();
//! assert_eq!(buf.as_slice(), [0, 0, 192, 63, 0, 0, 192, 63]);
//! assert_eq!(buf.allocated_bytes(), Some(64));
//! assert_eq!(tracking.stats().unwrap().bytes_in_use, 8);
//! drop(buf);
//! assert_eq!(tracking.stats().unwrap().bytes_in_use, 0);
//! ```
#![deny(missing_docs)]
#![warn(
    clippy::multiple_unsafe_ops_per_block,
    clippy::undocumented_unsafe_blocks
)]
#![warn(unreachable_pub, missing_debug_implementations)]

mod alloc;
mod buffer;
mod counters;
#[cfg(feature = "gemm")]
pub mod gemm;
mod objects;
pub mod simd;
mod small;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod tracking;
mod writer;

pub use alloc::{
    cpu_allocator, cpu_allocator_ref, AllocError, AllocationAttributes, Allocator, AllocatorStats,
    CpuAllocator, DEFAULT_ALIGNMENT,
};
pub use buffer::Buffer;
pub use objects::ObjectArray;
pub use tracking::TrackingAllocator;
pub use writer::Writer;

#[cfg(target_endian = "big")]
compile_error!(
    "tensorcast assumes a little-endian host, as TensorFlow's tensor_content wire format does"
);
