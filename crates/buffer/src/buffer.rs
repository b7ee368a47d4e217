//! [`Buffer`]: a reference-counted byte range over one root allocation.

use std::any::Any;
use std::cell::RefCell;
use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::alloc::{
    cpu_allocator_ref, default_cpu, AllocError, AllocationAttributes, Allocator, DEFAULT_ALIGNMENT,
};
use crate::small;
use crate::writer::Writer;

/// A zero-sized type whose alignment makes `NonNull::dangling()` 64-byte aligned.
#[repr(align(64))]
struct Align64;

fn dangling_aligned() -> NonNull<u8> {
    NonNull::<Align64>::dangling().cast()
}

/// Who owns a root allocation's memory, and so how it is released.
enum Owner {
    /// Memory from an [`Allocator`]; returned to it on drop (as initialised once every byte
    /// was written, which `Buffer::write_root` records).
    Allocated {
        allocator: AllocatorHandle,
        alignment: usize,
        initialized: bool,
    },
    /// Memory owned by a foreign object (a `Vec`, `bytes::Bytes`, a memory map...), which is
    /// dropped (and so frees it) when the root goes.
    Foreign {
        #[allow(
            dead_code,
            reason = "never read: held only so that dropping it frees the memory"
        )]
        owner: Box<dyn Any + Send + Sync>,
        kind: &'static str,
    },
    /// No memory (a zero-length root).
    Empty,
    /// A small block of the default CPU allocator's shelf (of [`small::class_layout`] for
    /// `class`), already counted as freed, kept with its cell for the next small buffer of
    /// this thread ([`SMALL_ROOTS`]); only roots on that list have this owner.
    Shelved { class: usize },
}

/// The allocator an allocated root returns its memory to: the process-wide default one
/// borrowed for the life of the process (no reference count to update on every small
/// tensor's creation and drop), or any other shared.
enum AllocatorHandle {
    Default(&'static Arc<dyn Allocator>),
    Shared(Arc<dyn Allocator>),
}

impl AllocatorHandle {
    fn of(allocator: &Arc<dyn Allocator>) -> Self {
        let default = cpu_allocator_ref();
        if Arc::ptr_eq(allocator, default) {
            AllocatorHandle::Default(default)
        } else {
            AllocatorHandle::Shared(allocator.clone())
        }
    }

    fn get(&self) -> &Arc<dyn Allocator> {
        match self {
            AllocatorHandle::Default(a) => a,
            AllocatorHandle::Shared(a) => a,
        }
    }
}

/// One allocation. Every [`Buffer`] points into exactly one root.
///
/// Invariants: `ptr` is valid for reads of `len` bytes for as long as the root lives (and for
/// writes when `writable`); nothing outside this root reads or writes them except through a
/// `Buffer` that holds this root.
struct Root {
    ptr: NonNull<u8>,
    len: usize,
    writable: bool,
    owner: Owner,
}

// SAFETY: the raw `ptr` is what keeps `Root` from being `Send`/`Sync` automatically; the
// memory behind it is plain bytes with no thread affinity, released by `owner`. So `Root` may
// cross threads exactly when its owner may: the bound below restates that (the foreign owner
// is a `Box<dyn Any + Send + Sync>`, an allocator is `Send + Sync` by the trait), and a
// change that made the owner thread-bound would stop compiling here. Shared access only ever
// reads; writes need `&mut Buffer` on the only handle of the root (see
// `Buffer::as_mut_slice`), so there are no data races.
unsafe impl Send for Root where Owner: Send + Sync {}
// SAFETY: see `Send` above.
unsafe impl Sync for Root where Owner: Send + Sync {}

impl Root {
    /// A root over no memory.
    fn empty() -> Self {
        Root {
            ptr: dangling_aligned(),
            len: 0,
            writable: true,
            owner: Owner::Empty,
        }
    }
}

/// The most emptied root cells a thread keeps for reuse (see [`ROOT_CELLS`]).
const ROOT_CELLS_PER_THREAD: usize = 16;

thread_local! {
    /// Reference-counted cells of this thread's dropped buffers, each holding an empty root
    /// (its memory already released), reused by the next buffers the thread builds: creating
    /// and dropping a small tensor then skips the heap allocation and free of the cell (about
    /// a tenth of an element-wise op on three elements).
    static ROOT_CELLS: RefCell<Vec<Arc<Root>>> = const { RefCell::new(Vec::new()) };
}

/// A shared cell holding `root`: a recycled one when this thread has one.
fn root_cell(root: Root) -> Arc<Root> {
    let cached = ROOT_CELLS
        .try_with(|c| c.try_borrow_mut().ok().and_then(|mut c| c.pop()))
        .ok()
        .flatten();
    match cached {
        Some(mut cell) => match Arc::get_mut(&mut cell) {
            Some(slot) => {
                // The cell's old root is empty: replacing it releases nothing.
                *slot = root;
                cell
            }
            None => Arc::new(root),
        },
        None => Arc::new(root),
    }
}

/// Releases the root of `cell` if `cell` is its only handle, and keeps the emptied cell for
/// reuse; otherwise just drops this handle.
#[inline]
fn release_cell(mut cell: Arc<Root>) {
    let Some(root) = Arc::get_mut(&mut cell) else {
        return;
    };
    if let Owner::Allocated {
        allocator: AllocatorHandle::Default(_),
        ..
    } = root.owner
    {
        // The block came from `allocate(root.len, DEFAULT_ALIGNMENT)` of the default
        // allocator (`new_with` makes every allocated root, always with that alignment): for
        // a small length, a block of the shelf's class of that length.
        if let Some(class) = small::class_of(root.len, DEFAULT_ALIGNMENT) {
            if default_cpu().shelves_small_blocks() {
                // A small block of the default allocator: keep it with its cell.
                default_cpu().note_freed(root.len);
                root.owner = Owner::Shelved { class };
                keep_small_root(class, cell);
                return;
            }
        }
    }
    // Only handle: release the memory now (the owner's drop runs here, outside any borrow of
    // the cache, so it may itself build or drop buffers).
    drop(std::mem::replace(root, Root::empty()));
    let _ = ROOT_CELLS.try_with(|c| {
        if let Ok(mut c) = c.try_borrow_mut() {
            if c.len() < ROOT_CELLS_PER_THREAD {
                c.push(cell);
            }
        }
    });
}

/// The most small roots a thread keeps with their memory, per size class (see [`SMALL_ROOTS`]).
const SMALL_ROOTS_PER_CLASS: usize = 16;

thread_local! {
    /// Cells of this thread's dropped small buffers from the default CPU allocator, each still
    /// holding its memory (a block of the allocator's small-block shelf, by size class): the
    /// next small buffer of that class this thread builds takes one, so that creating and
    /// dropping a small tensor costs no allocator call, only the allocator's counters. The
    /// memory is counted as freed while it waits here, and goes to the allocator's shelf
    /// (and from there to the system) when the thread ends.
    static SMALL_ROOTS: RefCell<[Vec<Arc<Root>>; small::CLASSES]> =
        const { RefCell::new([Vec::new(), Vec::new(), Vec::new(), Vec::new()]) };
}

/// The size class of a `len`-byte buffer from `allocator` if it is served by
/// [`SMALL_ROOTS`]: the default CPU allocator, shelving small blocks, and a small length.
#[inline]
fn small_root_class(allocator: &Arc<dyn Allocator>, len: usize) -> Option<usize> {
    let class = small::class_of(len, DEFAULT_ALIGNMENT)?;
    (Arc::ptr_eq(allocator, cpu_allocator_ref()) && default_cpu().shelves_small_blocks())
        .then_some(class)
}

/// A kept small root of `class` (unique, with its memory), if this thread has one.
#[inline]
fn take_small_root(class: usize) -> Option<Arc<Root>> {
    SMALL_ROOTS
        .try_with(|c| c.try_borrow_mut().ok().and_then(|mut c| c[class].pop()))
        .ok()
        .flatten()
}

/// Keeps `cell` (unique; its root a small block of `class` from the default CPU allocator,
/// just counted as freed and marked [`Owner::Shelved`]) for reuse; or drops it, which returns
/// the memory to the allocator's shelf, when the thread keeps enough already.
#[inline]
fn keep_small_root(class: usize, cell: Arc<Root>) {
    let _ = SMALL_ROOTS.try_with(move |c| {
        if let Ok(mut c) = c.try_borrow_mut() {
            let list = &mut c[class];
            if list.len() < SMALL_ROOTS_PER_CLASS {
                if list.capacity() == 0 {
                    list.reserve_exact(SMALL_ROOTS_PER_CLASS);
                }
                list.push(cell);
            }
        }
    });
}

/// Drops this thread's kept small roots: their blocks go back to the CPU allocator's shelf
/// (which [`crate::Allocator::release_cached_memory`] frees next).
pub(crate) fn release_small_roots() {
    let kept = SMALL_ROOTS
        .try_with(|c| {
            c.try_borrow_mut()
                .map(|mut c| c.iter_mut().flat_map(std::mem::take).collect::<Vec<_>>())
                .unwrap_or_default()
        })
        .unwrap_or_default();
    // Dropped here, outside the borrow of the lists (each drop reaches the allocator's shelf).
    drop(kept);
}

impl Drop for Root {
    fn drop(&mut self) {
        match &self.owner {
            Owner::Allocated {
                allocator,
                alignment,
                initialized,
            } => {
                // `ptr` was returned by `allocator.allocate_reporting_init(self.len, *alignment,
                // ..)` when this root was built or last reused (roots of length 0 are
                // `Owner::Empty`), and the root is the only owner of the memory, so it is
                // returned exactly once, here.
                let a = allocator.get();
                if *initialized {
                    // SAFETY: as said above; and `initialized` is set only after a writer
                    // wrote all `len` bytes (`Buffer::write_root`).
                    unsafe { a.deallocate_initialized(self.ptr, self.len, *alignment) };
                } else {
                    // SAFETY: as said above.
                    unsafe { a.deallocate(self.ptr, self.len, *alignment) };
                }
            }
            Owner::Shelved { class } => {
                // SAFETY: a shelved root holds a block of `class` that the default CPU
                // allocator took from its shelf (`small::take`) and that is already counted as
                // freed; the root is its only owner, so it goes back exactly once, here.
                unsafe { small::give_back(*class, self.ptr) };
            }
            Owner::Foreign { .. } | Owner::Empty => {}
        }
    }
}

/// A reference-counted, immutable-by-default range of bytes over one root allocation.
///
/// - [`Clone`] and [`Buffer::slice`] are O(1): they share the root.
/// - Memory from an [`Allocator`] is 64-byte aligned; adopted memory ([`Buffer::from_vec`],
///   [`Buffer::from_bytes`], [`Buffer::from_owner`], [`Buffer::map_file`]) keeps the address it
///   has, and [`Buffer::address_alignment`] tells what that is.
/// - Mutation needs `&mut self` and a root that no other `Buffer` shares
///   ([`Buffer::as_mut_slice`]), or copies first ([`Buffer::make_mut`]).
///
/// ```
/// use tensorcast_buffer::Buffer;
/// let b = Buffer::copy_from_slice(&[1u8, 2, 3, 4]).unwrap();
/// let tail = b.slice(2..4).unwrap();
/// assert_eq!(tail.as_slice(), &[3, 4]);
/// assert!(tail.shares_root_with(&b));
/// assert_eq!(b.as_ptr() as usize % 64, 0);
/// ```
#[derive(Clone)]
pub struct Buffer {
    /// Dropped by hand (see `Drop for Buffer`), so that its cell can be reused.
    root: ManuallyDrop<Arc<Root>>,
    offset: usize,
    len: usize,
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("len", &self.len)
            .field("offset", &self.offset)
            .field("root_len", &self.root.len)
            .field("owner", &self.owner_name())
            .field("address_alignment", &self.address_alignment())
            .finish()
    }
}

impl Drop for Buffer {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: `self.root` is taken once, here, and never used again: the buffer is being
        // dropped.
        let cell = unsafe { ManuallyDrop::take(&mut self.root) };
        release_cell(cell);
    }
}

impl AsRef<[u8]> for Buffer {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Default for Buffer {
    fn default() -> Self {
        Self::empty()
    }
}

impl Buffer {
    fn from_root(root: Root) -> Self {
        let len = root.len;
        Self {
            root: ManuallyDrop::new(root_cell(root)),
            offset: 0,
            len,
        }
    }

    /// A buffer of no bytes (its address is 64-byte aligned; nothing is allocated).
    pub fn empty() -> Self {
        Self::from_root(Root::empty())
    }

    /// Allocates `len` bytes from `allocator` without exposing their old contents: `init`
    /// receives a [`Writer`] over the whole range and whatever it leaves unwritten is zeroed.
    ///
    /// This is how kernels produce outputs without paying for a zero fill first.
    ///
    /// # Errors
    /// The allocator's [`AllocError`] when it cannot provide `len` bytes (`init` is not run).
    pub fn new_with(
        allocator: &Arc<dyn Allocator>,
        len: usize,
        attrs: &AllocationAttributes,
        init: impl FnOnce(&mut Writer<'_>),
    ) -> Result<Self, AllocError> {
        if len == 0 {
            let mut w = Writer::new(&mut [], false);
            init(&mut w);
            return Ok(Self::empty());
        }
        if let Some(class) = small_root_class(allocator, len) {
            if let Some(mut cell) = take_small_root(class) {
                if let Some(root) = Arc::get_mut(&mut cell) {
                    // A kept small root: its block holds `len` bytes (same class). Count it
                    // as allocated before `init` runs, so that a panic there (which drops the
                    // root and so deallocates it) leaves the counters even.
                    default_cpu().note_allocated(len);
                    root.len = len;
                    root.writable = true;
                    root.owner = Owner::Allocated {
                        allocator: AllocatorHandle::Default(cpu_allocator_ref()),
                        alignment: DEFAULT_ALIGNMENT,
                        initialized: false,
                    };
                    Self::write_root(root, init, false);
                    return Ok(Self {
                        root: ManuallyDrop::new(cell),
                        offset: 0,
                        len,
                    });
                }
            }
        }
        let (ptr, stale) = allocator.allocate_reporting_init(len, DEFAULT_ALIGNMENT, attrs)?;
        // Build the root first so the memory is returned to the allocator even if `init` panics.
        let mut root = Root {
            ptr,
            len,
            writable: true,
            owner: Owner::Allocated {
                allocator: AllocatorHandle::of(allocator),
                alignment: DEFAULT_ALIGNMENT,
                initialized: false,
            },
        };
        Self::write_root(&mut root, init, stale);
        Ok(Self::from_root(root))
    }

    /// Runs `init` on a writer over all of `root`'s bytes (an allocated root no buffer shares
    /// yet), then zeroes what it left unwritten and records the root as initialised.
    /// `stale`: the allocator reported every byte initialised already.
    #[inline]
    fn write_root(root: &mut Root, init: impl FnOnce(&mut Writer<'_>), stale: bool) {
        // SAFETY: `root` was just allocated (or taken back with its block, which holds at
        // least `len` bytes), so `ptr` is valid for writes of `len` bytes and owned by `root`
        // alone (Allocator contract); viewing possibly-uninitialised bytes as
        // `MaybeUninit<u8>` is always allowed. The slice borrows `root` mutably, so nothing
        // else touches it.
        let raw = unsafe {
            std::slice::from_raw_parts_mut(
                root.ptr.as_ptr().cast::<std::mem::MaybeUninit<u8>>(),
                root.len,
            )
        };
        let mut w = Writer::new(raw, stale);
        init(&mut w);
        w.finish();
        if let Owner::Allocated { initialized, .. } = &mut root.owner {
            *initialized = true;
        }
    }

    /// Allocates `len` zeroed bytes from `allocator`.
    ///
    /// # Errors
    /// As [`Buffer::new_with`].
    pub fn zeroed_in(
        allocator: &Arc<dyn Allocator>,
        len: usize,
        attrs: &AllocationAttributes,
    ) -> Result<Self, AllocError> {
        Self::new_with(allocator, len, attrs, |w| w.put_zeros(w.remaining()))
    }

    /// Allocates `len` zeroed bytes from the default CPU allocator.
    ///
    /// # Errors
    /// As [`Buffer::new_with`].
    pub fn zeroed(len: usize) -> Result<Self, AllocError> {
        Self::zeroed_in(cpu_allocator_ref(), len, &AllocationAttributes::default())
    }

    /// Copies `bytes` into a new 64-byte-aligned buffer from the default CPU allocator.
    ///
    /// # Errors
    /// As [`Buffer::new_with`].
    pub fn copy_from_slice(bytes: &[u8]) -> Result<Self, AllocError> {
        Self::copy_from_slice_in(cpu_allocator_ref(), bytes)
    }

    /// Copies `bytes` into a new 64-byte-aligned buffer from `allocator`.
    ///
    /// # Errors
    /// As [`Buffer::new_with`].
    pub fn copy_from_slice_in(
        allocator: &Arc<dyn Allocator>,
        bytes: &[u8],
    ) -> Result<Self, AllocError> {
        Self::new_with(
            allocator,
            bytes.len(),
            &AllocationAttributes::default(),
            |w| w.put_slice(bytes),
        )
    }

    /// Adopts a `Vec` without copying: the buffer covers its elements' bytes and frees the
    /// vector when the last handle goes. The vector is writable through [`Buffer::as_mut_slice`]
    /// (any byte pattern is a valid `T`, as `AnyBitPattern` promises).
    pub fn from_vec<T: bytemuck::Pod + Send + Sync>(v: Vec<T>) -> Self {
        let mut v = std::mem::ManuallyDrop::new(v);
        let len = v.len() * std::mem::size_of::<T>();
        if len == 0 {
            drop(std::mem::ManuallyDrop::into_inner(v));
            return Self::empty();
        }
        let ptr = NonNull::new(v.as_mut_ptr().cast::<u8>()).unwrap_or_else(dangling_aligned);
        let owner = VecOwner::<T> {
            ptr: v.as_mut_ptr(),
            len: v.len(),
            cap: v.capacity(),
        };
        Self::from_root(Root {
            ptr,
            len,
            writable: true,
            owner: Owner::Foreign {
                owner: Box::new(owner),
                kind: "vec",
            },
        })
    }

    /// Adopts a `bytes::Bytes` without copying (read-only: writes copy first).
    pub fn from_bytes(bytes: bytes::Bytes) -> Self {
        if bytes.is_empty() {
            return Self::empty();
        }
        let ptr = NonNull::new(bytes.as_ptr().cast_mut()).unwrap_or_else(dangling_aligned);
        let len = bytes.len();
        Self::from_root(Root {
            ptr,
            len,
            writable: false,
            owner: Owner::Foreign {
                owner: Box::new(bytes),
                kind: "bytes",
            },
        })
    }

    /// The range as a `bytes::Bytes`, without copying: the `Bytes` keeps this handle (and so
    /// the root allocation or mapping) alive, as [`Buffer::from_bytes`] does the other way.
    pub fn into_bytes(self) -> bytes::Bytes {
        bytes::Bytes::from_owner(self)
    }

    /// Adopts any owner of bytes without copying (read-only), as `bytes::Bytes::from_owner`:
    /// the owner is moved to the heap, asked for its bytes once, and dropped with the last handle.
    pub fn from_owner<O: AsRef<[u8]> + Send + Sync + 'static>(owner: O) -> Self {
        let owner = Box::new(owner);
        let bytes: &[u8] = (*owner).as_ref();
        let len = bytes.len();
        if len == 0 {
            return Self::empty();
        }
        let ptr = NonNull::new(bytes.as_ptr().cast_mut()).unwrap_or_else(dangling_aligned);
        Self::from_root(Root {
            ptr,
            len,
            writable: false,
            owner: Owner::Foreign {
                owner,
                kind: "owner",
            },
        })
    }

    /// Maps a whole file read-only into memory, without copying.
    ///
    /// # A safe function with a documented exception
    ///
    /// The map is private and read-only, but the file is not ours: another process (or this
    /// one, through another handle) may change it while it is mapped. This function stays safe
    /// because of what that can and cannot do to the `&[u8]` this buffer hands out:
    /// - **Bytes rewritten in place** may or may not show through the map (POSIX leaves it
    ///   unspecified for private maps). A reader then sees some mix of old and new bytes: every
    ///   byte pattern is a valid `u8`, and nothing in this crate or its users derives memory
    ///   safety from the *values* of mapped bytes (views check alignment, `bool` views check
    ///   every byte), so this is a data hazard, not undefined behaviour in safe code. The test
    ///   `map_file_sees_old_or_new_bytes_when_the_file_is_rewritten` checks it.
    /// - **Truncation** removes the pages: touching them raises `SIGBUS`, which kills the
    ///   process (no memory is corrupted or misread; the process ends). Callers that cannot
    ///   accept that, such as a tool reading files other programs may shorten, should read the
    ///   file into an aligned buffer instead ([`Buffer::copy_from_slice`], or the reading mode
    ///   of `tensorcast-io`), or handle the signal.
    ///
    /// # Errors
    ///
    /// The operating system's error for reading the file's metadata or mapping it.
    pub fn map_file(file: &std::fs::File) -> std::io::Result<Self> {
        let meta_len = file.metadata()?.len();
        if meta_len == 0 {
            return Ok(Self::empty());
        }
        // SAFETY: a read-only private mapping of a file we opened. memmap2's documented hazard
        // is that the file is changed or truncated by others while mapped; that cannot make
        // safe Rust observe anything but some bytes (or a SIGBUS, which is not memory
        // corruption), and the method's docs tell callers so.
        let map = unsafe { memmap2::Mmap::map(file)? };
        let ptr = NonNull::new(map.as_ptr().cast_mut()).unwrap_or_else(dangling_aligned);
        let len = map.len();
        Ok(Self::from_root(Root {
            ptr,
            len,
            writable: false,
            owner: Owner::Foreign {
                owner: Box::new(map),
                kind: "mmap",
            },
        }))
    }

    /// Number of bytes in this range.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the range has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `offset + len <= root.len` (checked in `slice`), the root's memory is valid for
        // reads for as long as `self` holds the `Arc`, and it was fully initialised when the root
        // was built (`new_with` writes or zeroes every byte; adopted owners hand us initialised
        // bytes). Writes happen only through `as_mut_slice`, which needs `&mut self` on the sole
        // handle, so no write can overlap this shared borrow.
        unsafe { std::slice::from_raw_parts(self.as_ptr(), self.len) }
    }

    /// The address of the first byte.
    pub fn as_ptr(&self) -> *const u8 {
        // `wrapping_add` keeps this free of unsafe; `offset <= root.len` so it stays in bounds.
        self.root
            .ptr
            .as_ptr()
            .cast_const()
            .wrapping_add(self.offset)
    }

    /// The largest power of two (up to 4096) that divides the address of the first byte.
    pub fn address_alignment(&self) -> usize {
        let addr = self.as_ptr() as usize;
        if addr == 0 {
            return 4096;
        }
        (1usize << addr.trailing_zeros().min(12)).min(4096)
    }

    /// True if the address is a multiple of `alignment` (a power of two).
    pub fn is_aligned_to(&self, alignment: usize) -> bool {
        alignment == 0 || (self.as_ptr() as usize).is_multiple_of(alignment)
    }

    /// A sub-range sharing this buffer's root, in O(1); `None` if the range is out of bounds.
    pub fn slice(&self, range: Range<usize>) -> Option<Self> {
        if range.start > range.end || range.end > self.len {
            return None;
        }
        Some(Self {
            root: self.root.clone(),
            offset: self.offset + range.start,
            len: range.len(),
        })
    }

    /// True if both buffers point into the same root allocation (TensorFlow's
    /// `SharesBufferWith`). Two empty buffers never share.
    pub fn shares_root_with(&self, other: &Buffer) -> bool {
        Arc::ptr_eq(&self.root, &other.root) && !matches!(self.root.owner, Owner::Empty)
    }

    /// How many `Buffer` handles (ranges included) share this root.
    pub fn root_ref_count(&self) -> usize {
        Arc::strong_count(&self.root)
    }

    /// True if this handle covers the whole root.
    pub fn is_whole_root(&self) -> bool {
        self.offset == 0 && self.len == self.root.len
    }

    /// Offset of this range inside its root allocation.
    pub fn root_offset(&self) -> usize {
        self.offset
    }

    /// Byte length of the root allocation.
    pub fn root_len(&self) -> usize {
        self.root.len
    }

    /// True if this is the only handle on its root, and it covers the whole root (TensorFlow's
    /// `RefCountIsOne`, which is false for sub-buffers).
    pub fn ref_count_is_one(&self) -> bool {
        self.root_ref_count() == 1 && self.is_whole_root()
    }

    /// True if this buffer's memory may be written through [`Buffer::as_mut_slice`] now: the
    /// root is writable (not adopted read-only memory) and no other handle shares it.
    pub fn is_mutable(&self) -> bool {
        self.root.writable && Arc::strong_count(&self.root) == 1
    }

    /// The bytes, writable, if this is the only handle on a writable root; `None` otherwise
    /// (use [`Buffer::make_mut`] to copy in that case).
    pub fn as_mut_slice(&mut self) -> Option<&mut [u8]> {
        let root = Arc::get_mut(&mut self.root)?;
        if !root.writable {
            return None;
        }
        let start = root.ptr.as_ptr().wrapping_add(self.offset);
        // SAFETY: `Arc::get_mut` proved this is the only handle on the root, and we hold it
        // mutably for the slice's lifetime, so no other reference to these bytes exists. The
        // root is writable (allocator memory or an adopted `Vec` of `Pod`), initialised, and
        // `offset + len <= root.len`, so `start` and the `len` bytes after it lie in the root.
        Some(unsafe { std::slice::from_raw_parts_mut(start, self.len) })
    }

    /// The bytes, writable: if the root is shared or read-only, first copies this range into a
    /// new buffer from the default allocator (copy-on-write).
    ///
    /// # Errors
    /// The default allocator's [`AllocError`] when the copy cannot be allocated (`self` is
    /// left as it was).
    pub fn make_mut(&mut self) -> Result<&mut [u8], AllocError> {
        if !self.is_mutable() {
            *self = Self::copy_from_slice(self.as_slice())?;
        }
        // A fresh copy is always unique and writable.
        Ok(self.as_mut_slice().unwrap_or(&mut []))
    }

    /// Who owns the memory: the allocator's name, or `"vec"`, `"bytes"`, `"owner"`, `"mmap"`
    /// for adopted memory, `"empty"` for none.
    pub fn owner_name(&self) -> &str {
        match &self.root.owner {
            Owner::Allocated { allocator, .. } => allocator.get().name(),
            Owner::Foreign { kind, .. } => kind,
            Owner::Empty | Owner::Shelved { .. } => "empty",
        }
    }

    /// The allocator the memory came from, if it came from one.
    pub fn allocator(&self) -> Option<&Arc<dyn Allocator>> {
        match &self.root.owner {
            Owner::Allocated { allocator, .. } => Some(allocator.get()),
            _ => None,
        }
    }

    /// The allocator's recorded size for the root allocation, if it tracks sizes.
    pub fn allocated_bytes(&self) -> Option<usize> {
        let a = self.allocator()?;
        if !a.tracks_allocation_sizes() {
            return None;
        }
        a.allocated_size(self.root.ptr)
    }

    /// The allocator's id for the root allocation, if it tracks them.
    pub fn allocation_id(&self) -> Option<i64> {
        self.allocator()?.allocation_id(self.root.ptr)
    }
}

/// Keeps an adopted `Vec<T>`'s allocation alive; frees it on drop.
struct VecOwner<T> {
    ptr: *mut T,
    len: usize,
    cap: usize,
}

// SAFETY: the owner only frees the allocation on drop; `T: Send + Sync` is required by
// `Buffer::from_vec`, so moving or sharing the owner across threads is as safe as for `Vec<T>`.
unsafe impl<T: Send> Send for VecOwner<T> {}
// SAFETY: see `Send`; the owner has no `&self` methods that touch the memory.
unsafe impl<T: Sync> Sync for VecOwner<T> {}

impl<T> Drop for VecOwner<T> {
    fn drop(&mut self) {
        // SAFETY: (ptr, len, cap) are exactly those of a `Vec<T>` that was put in `ManuallyDrop`
        // in `Buffer::from_vec`, never dropped, and reconstituted only here, once.
        drop(unsafe { Vec::from_raw_parts(self.ptr, self.len, self.cap) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_is_send_sync_and_small() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Buffer>();
        assert_eq!(
            std::mem::size_of::<Buffer>(),
            3 * std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn allocated_buffers_are_64_byte_aligned() {
        for n in [1usize, 3, 64, 1000, 100_000] {
            let b = Buffer::zeroed(n).unwrap();
            assert_eq!(b.as_ptr() as usize % 64, 0);
            assert!(b.as_slice().iter().all(|&x| x == 0));
        }
        assert_eq!(Buffer::empty().as_ptr() as usize % 64, 0);
    }

    #[test]
    fn dropped_buffers_release_their_memory_and_their_cells_are_reused_unshared() {
        let alloc: Arc<dyn Allocator> = Arc::new(crate::CpuAllocator::new());
        let attrs = AllocationAttributes::default();
        let a = Buffer::new_with(&alloc, 3, &attrs, |w| w.put_slice(&[1, 2, 3])).unwrap();
        let a2 = a.clone();
        drop(a);
        // Another handle remains: nothing released.
        assert_eq!(a2.as_slice(), &[1, 2, 3]);
        assert_eq!(alloc.stats().map(|s| s.bytes_in_use), Some(3));
        drop(a2);
        // The memory goes back at the last drop even though the cell is kept.
        assert_eq!(alloc.stats().map(|s| s.bytes_in_use), Some(0));
        let b = Buffer::new_with(&alloc, 2, &attrs, |w| w.put_slice(&[4, 5])).unwrap();
        let c = Buffer::copy_from_slice(&[6]).unwrap();
        assert_eq!((b.as_slice(), c.as_slice()), (&[4u8, 5][..], &[6u8][..]));
        assert!(!b.shares_root_with(&c));
        assert_eq!((b.root_ref_count(), c.root_ref_count()), (1, 1));
        assert_eq!(b.owner_name(), "cpu");
        let many: Vec<Buffer> = (0..40u8)
            .map(|i| Buffer::copy_from_slice(&[i]).unwrap())
            .collect();
        drop(many);
        let d = Buffer::from_vec(vec![7u16]);
        assert_eq!(d.as_slice(), &[7, 0]);
        assert_eq!(d.owner_name(), "vec");
    }

    #[test]
    fn a_small_default_buffer_reuses_its_dropped_memory_without_exposing_old_bytes() {
        // Run on a fresh thread: its kept roots start empty, and are freed when it ends (Miri
        // would report a block left behind as a leak).
        std::thread::spawn(|| {
            let a = Buffer::new_with(
                cpu_allocator_ref(),
                200,
                &AllocationAttributes::default(),
                |w| w.put_fill(&[0xEE], 200),
            )
            .unwrap();
            let addr = a.as_ptr();
            drop(a);
            // Same size class (193..=256 bytes): the same memory, rewritten; the bytes the
            // writer leaves are zeroed, not the old 0xEE.
            let b = Buffer::new_with(
                cpu_allocator_ref(),
                250,
                &AllocationAttributes::default(),
                |w| w.put_slice(&[1, 2, 3]),
            )
            .unwrap();
            assert_eq!(b.as_ptr(), addr);
            assert_eq!(b.len(), 250);
            assert_eq!(&b.as_slice()[..3], &[1, 2, 3]);
            assert!(b.as_slice()[3..].iter().all(|&x| x == 0));
            assert_eq!((b.root_ref_count(), b.owner_name()), (1, "cpu"));
            assert_eq!(b.as_ptr().addr() % DEFAULT_ALIGNMENT, 0);
            // Another class, or a shared handle, does not take it.
            let c = Buffer::copy_from_slice(&[9; 20]).unwrap();
            assert_ne!(c.as_ptr(), addr);
            let b2 = b.clone();
            drop(b);
            assert_eq!(b2.as_slice()[..3], [1, 2, 3]);
            drop((b2, c));
            // More small buffers than a thread keeps: the rest go back to the allocator.
            let many: Vec<Buffer> = (0..SMALL_ROOTS_PER_CLASS + 4)
                .map(|i| Buffer::copy_from_slice(&[i as u8; 100]).unwrap())
                .collect();
            for (i, b) in many.iter().enumerate() {
                assert_eq!(b.as_slice(), &[i as u8; 100]);
            }
            drop(many);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn releasing_cached_memory_frees_the_threads_kept_small_buffers() {
        std::thread::spawn(|| {
            let kept = || SMALL_ROOTS.with(|c| c.borrow().iter().map(Vec::len).sum::<usize>());
            drop(Buffer::copy_from_slice(&[3; 40]).unwrap());
            assert_eq!(kept(), 1);
            // The kept block goes back to the shelf and from there to the system.
            cpu_allocator_ref().release_cached_memory();
            assert_eq!(kept(), 0);
            assert_eq!(small::release_this_thread(), 0);
            let b = Buffer::copy_from_slice(&[4; 40]).unwrap();
            assert_eq!(b.as_slice(), &[4; 40]);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_panic_while_writing_a_reused_small_buffer_returns_its_memory() {
        std::thread::spawn(|| {
            drop(Buffer::copy_from_slice(&[1; 10]).unwrap());
            let r = std::panic::catch_unwind(|| {
                Buffer::new_with(
                    cpu_allocator_ref(),
                    10,
                    &AllocationAttributes::default(),
                    |w| {
                        w.put_slice(&[5]);
                        panic!("init fails");
                    },
                )
            });
            assert!(r.is_err());
            // The thread's state is intact: the next small buffers work.
            let b = Buffer::copy_from_slice(&[7; 10]).unwrap();
            assert_eq!(b.as_slice(), &[7; 10]);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn slice_of_slice_shares_root() {
        let b = Buffer::copy_from_slice(&(0..100u8).collect::<Vec<_>>()).unwrap();
        let s = b.slice(10..50).unwrap().slice(5..10).unwrap();
        assert_eq!(s.as_slice(), &[15, 16, 17, 18, 19]);
        assert!(s.shares_root_with(&b));
        assert!(b.slice(50..101).is_none());
        assert!(!s.ref_count_is_one());
    }

    #[test]
    fn mutation_requires_unique_handle() {
        let mut b = Buffer::copy_from_slice(&[1, 2, 3]).unwrap();
        assert!(b.ref_count_is_one());
        b.as_mut_slice().unwrap()[0] = 9;
        let c = b.clone();
        assert!(b.as_mut_slice().is_none());
        b.make_mut().unwrap()[1] = 7;
        assert_eq!(b.as_slice(), &[9, 7, 3]);
        assert_eq!(c.as_slice(), &[9, 2, 3]);
        assert!(!b.shares_root_with(&c));
    }

    #[test]
    fn adopted_vec_is_zero_copy_and_writable() {
        let v: Vec<u32> = (0..10).collect();
        let addr = v.as_ptr() as usize;
        let mut b = Buffer::from_vec(v);
        assert_eq!(b.as_ptr() as usize, addr);
        assert_eq!(b.len(), 40);
        b.as_mut_slice().unwrap()[0] = 0xff;
        assert_eq!(b.as_slice()[..4], [0xff, 0, 0, 0]);
        assert_eq!(b.owner_name(), "vec");
    }

    #[test]
    fn adopted_bytes_is_read_only_and_copy_on_write() {
        let bytes = bytes::Bytes::from(vec![1u8, 2, 3, 4, 5]);
        let mut b = Buffer::from_bytes(bytes.slice(1..));
        assert_eq!(b.as_ptr(), bytes.as_ptr().wrapping_add(1));
        assert!(b.as_mut_slice().is_none());
        b.make_mut().unwrap()[0] = 0;
        assert_eq!(b.as_slice(), &[0, 3, 4, 5]);
        assert_eq!(&bytes[..], &[1, 2, 3, 4, 5]);
    }

    #[test]
    fn from_owner_keeps_owner_alive() {
        let b = Buffer::from_owner(String::from("hello"));
        let s = b.slice(1..3).unwrap();
        drop(b);
        assert_eq!(s.as_slice(), b"el");
    }

    #[test]
    fn empty_buffers_never_share() {
        let a = Buffer::empty();
        let b = a.clone();
        assert!(!a.shares_root_with(&b));
        assert!(Buffer::from_vec(Vec::<u8>::new()).is_empty());
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "Miri cannot map a file (no file-backed mmap): this path runs natively here and in crates/io's zero-copy tests"
    )]
    fn map_file_reads_without_copying() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("tcbuf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.bin");
        std::fs::File::create(&path)
            .unwrap()
            .write_all(b"mapped bytes")
            .unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let b = Buffer::map_file(&f).unwrap();
        assert_eq!(b.as_slice(), b"mapped bytes");
        assert_eq!(b.owner_name(), "mmap");
        assert_eq!(b.address_alignment(), 4096);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    #[cfg_attr(miri, ignore = "miri does not support mmap")]
    fn map_file_sees_old_or_new_bytes_when_the_file_is_rewritten() {
        use std::io::{Seek, Write};
        let dir = std::env::temp_dir().join(format!("tcbuf-rw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.bin");
        let old = vec![0x11u8; 8192];
        std::fs::write(&path, &old).unwrap();
        let b = Buffer::map_file(&std::fs::File::open(&path).unwrap()).unwrap();
        // Rewrite every byte in place through another handle, same length.
        let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        w.seek(std::io::SeekFrom::Start(0)).unwrap();
        w.write_all(&[0x22u8; 8192]).unwrap();
        w.sync_all().unwrap();
        // Each byte read is an old or a new one: a data hazard, never anything else.
        assert_eq!(b.len(), 8192);
        assert!(b.as_slice().iter().all(|&x| x == 0x11 || x == 0x22));
        let clone = b.clone();
        drop(b);
        assert!(clone.as_slice().iter().all(|&x| x == 0x11 || x == 0x22));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
