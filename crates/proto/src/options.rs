//! [`DecodeOptions`]: the allocator, memory limit and alignment policy of a decode.

use std::fmt;
use std::sync::Arc;

use tensorcast_buffer::{cpu_allocator, Allocator};

/// Default of [`DecodeOptions::max_fill_bytes`]: 256 MiB.
pub const DEFAULT_MAX_FILL_BYTES: usize = 1 << 28;

/// How deep variants may nest tensors of variants before a decode gives up (TensorFlow has no
/// such limit; without one a small input could exhaust the stack).
pub const MAX_NESTING_DEPTH: usize = 32;

/// How a `TensorProto` becomes a tensor.
///
/// - **Allocator**: where copied and filled values go (default: [`cpu_allocator`]).
///   String, resource and variant elements are Rust objects and do not use it (they are
///   charged to the fill limit instead).
/// - **Fill limit** ([`DecodeOptions::with_max_fill_bytes`], default
///   [`DEFAULT_MAX_FILL_BYTES`]): a proto may declare more elements than it carries; TensorFlow
///   fills the rest by repeating the last value (or with zeros when it carries none). That memory
///   is not justified by the input, so it is capped: a decode refuses, with a `ResourceExhausted`
///   [`crate::ProtoError::FillLimit`] and before allocating, when the filled elements of all its
///   tensors (nested ones included) would take more bytes than this. A 20-byte proto claiming
///   2^62 floats fails at once. The same budget pays for what else is not proportional to the
///   input: string, resource and variant elements (Rust objects, [`crate::ProtoError::MemoryLimit`]
///   past it; surplus values a tensor ignores included) and, in `decode_tensor_with`, the
///   message structs the wire decodes into, charged before prost builds them. Everything else a
///   decode allocates is proportional to its input.
/// - **Alignment** ([`DecodeOptions::with_require_aligned`]): `tensor_content` decoded from a
///   `bytes::Bytes` is *shared* (no copy) when its address is a multiple of the element type's
///   `align_of` (1 for 8-bit types, 4 for float32...), and copied into a 64-byte-aligned buffer
///   otherwise. In TensorFlow's encodings the content usually sits at an odd offset, so 2-, 4- and
///   8-byte types are usually copied unless the bytes were written by
///   [`crate::encode_tensor`] (which places the content 64-byte aligned). With
///   `require_aligned(true)` the content is shared only when it is 64-byte aligned (TensorFlow's
///   `IsAligned`, which SIMD kernels like), and copied otherwise. [`tensorcast_core::Tensor::is_aligned`]
///   tells which a tensor got.
/// - **bfloat16 in `int_val`** ([`DecodeOptions::with_bfloat16_from_int_val`], default off):
///   TensorFlow once wrote bfloat16 values to `int_val`; TensorFlow 2.21 reads only `half_val`
///   (an `int_val`-only bfloat16 proto parses as zeros there, as observed). Turning this on reads
///   `int_val` (low 16 bits) when `half_val` is empty, for protos from such old writers.
///
/// ```
/// use tensorcast_proto::DecodeOptions;
/// let opts = DecodeOptions::new().with_max_fill_bytes(1 << 20).with_require_aligned(true);
/// assert_eq!(opts.max_fill_bytes(), 1 << 20);
/// assert!(opts.require_aligned());
/// ```
#[derive(Clone)]
pub struct DecodeOptions {
    allocator: Arc<dyn Allocator>,
    max_fill_bytes: usize,
    require_aligned: bool,
    bfloat16_from_int_val: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        Self {
            allocator: cpu_allocator(),
            max_fill_bytes: DEFAULT_MAX_FILL_BYTES,
            require_aligned: false,
            bfloat16_from_int_val: false,
        }
    }
}

impl fmt::Debug for DecodeOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecodeOptions")
            .field("allocator", &self.allocator.name())
            .field("max_fill_bytes", &self.max_fill_bytes)
            .field("require_aligned", &self.require_aligned)
            .field("bfloat16_from_int_val", &self.bfloat16_from_int_val)
            .finish()
    }
}

impl DecodeOptions {
    /// The defaults: CPU allocator, 256 MiB fill limit, share content when `align_of` is met,
    /// TensorFlow 2.21's bfloat16 rule.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allocate copied and filled values from `allocator`.
    pub fn with_allocator(mut self, allocator: Arc<dyn Allocator>) -> Self {
        self.allocator = allocator;
        self
    }

    /// Allow at most `bytes` of filled (repeat-last or zero) values per decode.
    pub fn with_max_fill_bytes(mut self, bytes: usize) -> Self {
        self.max_fill_bytes = bytes;
        self
    }

    /// Share `tensor_content` only when it is 64-byte aligned (copy otherwise).
    pub fn with_require_aligned(mut self, on: bool) -> Self {
        self.require_aligned = on;
        self
    }

    /// Read bfloat16 values from `int_val` when `half_val` is empty (old writers).
    pub fn with_bfloat16_from_int_val(mut self, on: bool) -> Self {
        self.bfloat16_from_int_val = on;
        self
    }

    /// The allocator.
    pub fn allocator(&self) -> &Arc<dyn Allocator> {
        &self.allocator
    }

    /// The fill limit in bytes.
    pub fn max_fill_bytes(&self) -> usize {
        self.max_fill_bytes
    }

    /// True if content is shared only when 64-byte aligned.
    pub fn require_aligned(&self) -> bool {
        self.require_aligned
    }

    /// True if bfloat16 values may come from `int_val`.
    pub fn bfloat16_from_int_val(&self) -> bool {
        self.bfloat16_from_int_val
    }
}
