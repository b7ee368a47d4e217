//! [`ReadOptions`]: how reads get their bytes and how much memory an untrusted file may make
//! them spend.

use crate::budget::MemoryBudget;

/// Default of [`ReadOptions::max_memory`]: 256 MiB (TensorProto's default fill limit).
pub const DEFAULT_MAX_MEMORY: u64 = 1 << 28;

/// Default of [`ReadOptions::max_stream_bytes`]: 4 GiB.
pub const DEFAULT_MAX_STREAM_BYTES: u64 = 4 << 30;

/// How [`crate::read_file_contents_with`] gets a regular file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadMode {
    /// Memory-map the file: no copy, tensors share the map. Fast, but if another process
    /// truncates the file while its map is read, the reading process gets `SIGBUS` and dies
    /// (the hazard of every memory map; it cannot be turned into an error safely). Use it for
    /// files nothing else writes.
    #[default]
    Map,
    /// Read the file into a new 64-byte-aligned buffer. One copy, but a file that changes
    /// underneath gives at worst a decode error, never a signal.
    Read,
}

/// Options of the `*_with` readers.
///
/// - [`max_memory`](Self::max_memory): the most a decode may allocate beyond what the input's
///   own bytes justify - the decompressed bytes of all deflated `.npz` members together, and
///   for TensorProto files the fill budget (values a proto declares but does not carry, object
///   elements and the message structs they decode into; see `tensorcast_proto::DecodeOptions`).
///   Past it a read fails with [`crate::ErrorKind::TooLarge`] before allocating.
/// - [`mode`](Self::mode): map or read a regular file ([`ReadMode`]).
/// - [`budget`](Self::budget): a [`MemoryBudget`] that every read made with these options (or
///   a clone of them) charges what it allocates beyond its input, so that all they keep
///   together stays under one limit ([`ReadOptions::with_shared_budget`]). Without one (the
///   default) each read has `max_memory` of its own.
/// - [`max_stream_bytes`](Self::max_stream_bytes): the most read from a file whose size is not
///   known in advance: standard input, a FIFO, a pipe, a character device, or a regular file
///   that reports a size of 0 (procfs and sysfs files, which may hold any amount).
/// - [`max_npy_header_bytes`](Self::max_npy_header_bytes): the longest `.npy` header read (in
///   `.npy` files and `.npz` members); numpy's 10,000 by default.
///
/// ```
/// use tensorcast_io::{ReadMode, ReadOptions};
/// let opts = ReadOptions { max_memory: 64 << 20, mode: ReadMode::Read, ..ReadOptions::default() };
/// assert_eq!(opts.max_stream_bytes, tensorcast_io::DEFAULT_MAX_STREAM_BYTES);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    /// Memory a decode may spend beyond the input's size, in bytes
    /// ([`DEFAULT_MAX_MEMORY`] by default).
    pub max_memory: u64,
    /// Map or read regular files ([`ReadMode::Map`] by default).
    pub mode: ReadMode,
    /// The longest stream read, in bytes ([`DEFAULT_MAX_STREAM_BYTES`] by default).
    pub max_stream_bytes: u64,
    /// The budget the reads share, when they share one (`None` by default: each read has
    /// `max_memory` of its own). With a budget, its limit is what bounds the memory decodes
    /// spend beyond their input, and `max_memory` still bounds the size of the metadata files
    /// a reader holds whole (a SavedModel's `saved_model.pb`, say).
    pub budget: Option<MemoryBudget>,
    /// The longest `.npy` header read, in bytes ([`crate::npy::MAX_HEADER_BYTES`], numpy's
    /// `max_header_size`, by default).
    pub max_npy_header_bytes: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            max_memory: DEFAULT_MAX_MEMORY,
            mode: ReadMode::Map,
            max_stream_bytes: DEFAULT_MAX_STREAM_BYTES,
            max_npy_header_bytes: crate::npy::MAX_HEADER_BYTES,
            budget: None,
        }
    }
}

impl ReadOptions {
    /// These options with a new budget of [`max_memory`](Self::max_memory) bytes, named
    /// `name` in errors (`--max-memory`), that every read made with them or a clone of them
    /// charges: what those reads keep together stays under `max_memory`.
    ///
    /// ```
    /// use tensorcast_io::ReadOptions;
    /// let opts = ReadOptions { max_memory: 1 << 20, ..ReadOptions::default() }
    ///     .with_shared_budget("the limit");
    /// let other = opts.clone();
    /// opts.read_budget().charge(1 << 19, "a fill")?;
    /// assert_eq!(other.read_budget().remaining_bytes(), 1 << 19);
    /// # Ok::<(), tensorcast_io::IoError>(())
    /// ```
    pub fn with_shared_budget(self, name: impl Into<String>) -> Self {
        let budget = MemoryBudget::new(self.max_memory).with_name(name);
        Self {
            budget: Some(budget),
            ..self
        }
    }

    /// The budget a read charges: the shared [`budget`](Self::budget), or a new one of
    /// [`max_memory`](Self::max_memory) bytes for this read alone.
    pub fn read_budget(&self) -> MemoryBudget {
        self.budget
            .clone()
            .unwrap_or_else(|| MemoryBudget::new(self.max_memory))
    }
}
