//! [`Checkpoint`]: a tensor bundle opened for reading.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tensorcast_buffer::{cpu_allocator, AllocationAttributes, Buffer};
use tensorcast_core::{DataType, TString, Tensor, TensorShape, Variant};
use tensorcast_proto::{
    shape_from_proto, variant_from_proto_with, BundleEntryProto, BundleHeaderProto, DecodeOptions,
    Endianness, Message, TensorSliceProto, TrackableObjectGraph, VariantTensorDataProto,
};

use super::crc;
use super::object_graph::ObjectGraph;
use super::slices;
use super::table::{self, get_varint, unmask, TableError};
use super::{data_file_name, OBJECT_GRAPH_KEY, TF_VERSION};
use crate::error::{ErrorKind, IoError, Result};
use crate::options::{ReadMode, ReadOptions};
use crate::util;

/// The bundle format version this reader implements (`kTensorBundleVersion`).
const BUNDLE_VERSION: i32 = 1;
/// The oldest producer accepted (`kTensorBundleMinProducer`).
const MIN_PRODUCER: i32 = 0;
/// The piece tensors are read, checksummed and copied in: small enough to stay in a core's
/// L2 cache between the read, the CRC and the copy out.
const PIECE: usize = 256 << 10;
/// The largest `checkpoint` state file read (they hold a few lines).
const MAX_STATE_BYTES: u64 = 16 << 20;

/// Reads `buf.len()` bytes at `at`; a file that ends first is `UnexpectedEof`.
fn read_piece(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    f.read_exact_at(buf, at)
}

/// One tensor of a checkpoint, as its `.index` entry describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointEntry {
    /// The TensorFlow key (`dense/kernel`, `model/.../.ATTRIBUTES/VARIABLE_VALUE`).
    pub key: String,
    /// The element type.
    pub dtype: DataType,
    /// The full tensor's shape.
    pub shape: TensorShape,
    /// The data shard holding the bytes (0 for partitioned tensors).
    pub shard_id: i32,
    /// The first byte in the shard.
    pub offset: i64,
    /// The number of bytes in the shard (0 for partitioned tensors).
    pub size: i64,
    /// How many slices the tensor is stored in (0: stored whole).
    pub num_slices: usize,
}

#[derive(Debug)]
struct Stored {
    key: Vec<u8>,
    proto: BundleEntryProto,
    dtype: DataType,
    shape: TensorShape,
}

impl Stored {
    /// The entry `CheckpointReader` lists for it (its binary key made a string lossily).
    fn entry(&self) -> CheckpointEntry {
        CheckpointEntry {
            key: String::from_utf8_lossy(&self.key).into_owned(),
            dtype: self.dtype,
            shape: self.shape.clone(),
            shard_id: self.proto.shard_id,
            offset: self.proto.offset,
            size: self.proto.size,
            num_slices: self.proto.slices.len(),
        }
    }
}

/// A TensorFlow checkpoint (tensor bundle) opened for reading: its `.index` parsed, its data
/// shards opened when a tensor is read.
///
/// See the [module docs](super) for the format and the checks.
#[derive(Debug)]
pub struct Checkpoint {
    prefix: PathBuf,
    header: BundleHeaderProto,
    /// Every entry but the header, sorted by key bytes (slices included).
    stored: Vec<Stored>,
    /// The entries a user sees: everything but the header and the slices of partitioned
    /// tensors, in key order.
    listed: Vec<CheckpointEntry>,
    listed_index: Vec<usize>,
    options: ReadOptions,
    verify: bool,
    maps: Mutex<HashMap<i32, Buffer>>,
    /// The data shards opened for reading ([`ReadMode::Read`]), each opened once, so that
    /// every tensor comes from the same file even if the shard is replaced (renamed over)
    /// meanwhile, as TensorFlow replaces checkpoints.
    files: Mutex<HashMap<i32, Arc<std::fs::File>>>,
    /// Held in memory ([`Checkpoint::from_memory`]): shards not given are missing.
    in_memory: bool,
}

/// Resolves what a user names a checkpoint by to its prefix: the prefix itself, its `.index`,
/// one of its `.data-NNNNN-of-NNNNN` files, a directory holding a `checkpoint` state file (its
/// `model_checkpoint_path`), or a SavedModel directory (its `variables/variables`).
///
/// # Errors
/// [`ErrorKind::Io`] when a directory has neither a `checkpoint` file nor a SavedModel's
/// variables, or its state file cannot be read; [`ErrorKind::Corrupt`] when the state file
/// names no checkpoint.
pub fn resolve_prefix(path: &Path) -> Result<PathBuf> {
    if path.is_dir() {
        let state = path.join("checkpoint");
        if state.is_file() {
            // A state file is a few lines; through the one input layer, bounded.
            let bound = crate::source::Bound {
                known: MAX_STATE_BYTES,
                unknown: MAX_STATE_BYTES,
                name: "the limit of a checkpoint state file".to_string(),
            };
            let bytes = crate::source::read_path(&state, ReadMode::Read, &bound)
                .map_err(|e| e.context(format!("cannot read {}", state.display())))?;
            let text = String::from_utf8_lossy(bytes.as_slice());
            let name = checkpoint_state_path(&text).ok_or_else(|| {
                IoError::corrupt(format!(
                    "{} names no model_checkpoint_path",
                    state.display()
                ))
            })?;
            let p = PathBuf::from(name);
            return Ok(if p.is_absolute() { p } else { path.join(p) });
        }
        let vars = path.join("variables").join("variables");
        if vars.with_extension("index").is_file() {
            return Ok(vars);
        }
        return Err(IoError::io(
            format!("cannot open {}", path.display()),
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "a directory with no `checkpoint` state file and no SavedModel variables",
            ),
        ));
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if let Some(stem) = name.strip_suffix(".index") {
        return Ok(path.with_file_name(stem));
    }
    if let Some(i) = name.rfind(".data-") {
        let tail = &name[i + 6..];
        let b = tail.as_bytes();
        let shard_like = b.len() >= 13
            && tail.contains("-of-")
            && tail
                .chars()
                .all(|c| c.is_ascii_digit() || c == '-' || c == 'o' || c == 'f');
        if shard_like {
            return Ok(path.with_file_name(&name[..i]));
        }
    }
    Ok(path.to_path_buf())
}

/// `model_checkpoint_path` of a text `CheckpointState`.
fn checkpoint_state_path(text: &str) -> Option<String> {
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("model_checkpoint_path:") else {
            continue;
        };
        let rest = rest.trim();
        let inner = rest.strip_prefix('"')?.strip_suffix('"')?;
        return Some(unescape_c(inner));
    }
    None
}

/// Undoes protobuf text-format string escapes (`\"`, `\\`, `\n`, octal `\NNN`).
fn unescape_c(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            i += 1;
            match b[i] {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                d @ b'0'..=b'7' => {
                    let mut v = u32::from(d - b'0');
                    let mut k = 1;
                    while k < 3 && i + 1 < b.len() && (b'0'..=b'7').contains(&b[i + 1]) {
                        i += 1;
                        v = v * 8 + u32::from(b[i] - b'0');
                        k += 1;
                    }
                    out.push(v as u8);
                }
                c => out.push(c),
            }
        } else {
            out.push(b[i]);
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn data_loss(msg: impl Into<String>) -> IoError {
    IoError::corrupt(msg)
}

impl Checkpoint {
    /// Opens the checkpoint `path` names (see [`resolve_prefix`]), reading its `.index` only.
    ///
    /// With [`ReadMode::Map`] tensors are read from memory maps of the data shards (zero-copy
    /// where a tensor's offset suits its dtype); with [`ReadMode::Read`] each tensor's bytes
    /// are read from the file into an aligned buffer. [`ReadOptions::max_memory`] bounds what
    /// decoding may allocate beyond the files' own bytes (snappy index blocks, string element
    /// tables).
    ///
    /// # Errors
    /// [`ErrorKind::Io`] when the index cannot be read; [`ErrorKind::BadMagic`],
    /// [`ErrorKind::Truncated`] or [`ErrorKind::Corrupt`] with TensorFlow's message for a
    /// damaged index (`not an sstable (bad magic number)`, `block checksum mismatch`, ...);
    /// [`ErrorKind::Unsupported`] for a version this reader does not read (TensorFlow's
    /// `Checkpoint min consumer version ...` text).
    pub fn open(path: &Path, options: &ReadOptions) -> Result<Self> {
        let prefix = resolve_prefix(path)?;
        let mut index_path = prefix.clone().into_os_string();
        index_path.push(".index");
        let index_path = PathBuf::from(index_path);
        // Through the one input layer: a link to a procfs file (no size, any amount) is read
        // up to the memory limit, not until memory runs out.
        let bound = crate::source::Bound::metadata(options, false);
        // The operating system's error stays the cause (a missing index is NotFound).
        let bytes = crate::source::read_path(&index_path, options.mode, &bound).map_err(|e| {
            let message = e
                .message()
                .strip_prefix("cannot open: ")
                .unwrap_or(e.message());
            let message = format!("{}: {message}", index_path.display());
            e.with_message(message)
        })?;
        Self::from_index_bytes(&prefix, bytes.as_slice(), options)
    }

    /// Parses an `.index` file's bytes; the data shards are looked for beside `prefix`.
    ///
    /// # Errors
    /// As [`Checkpoint::open`], without the file-system errors.
    pub fn from_index_bytes(prefix: &Path, bytes: &[u8], options: &ReadOptions) -> Result<Self> {
        let index_name = format!("{}.index", prefix.display());
        let wrap = |e: IoError| {
            let kind = e.kind();
            IoError::new(
                kind,
                format!(
                    "Unable to read file ({index_name}). Perhaps the file is corrupt or was produced by \
                     a newer version of TensorFlow with format changes (failed to seek to header \
                     entry): {}",
                    e.message()
                ),
            )
        };
        let entries = match table::read_table(bytes, options.max_memory) {
            Ok(e) => e,
            Err(TableError::Open(e)) => return Err(e),
            Err(TableError::Data(e)) => return Err(wrap(e)),
        };
        let mut it = entries.into_iter();
        let header = match it.next() {
            Some((k, v)) if k.is_empty() => BundleHeaderProto::decode(v.as_slice())
                .map_err(|e| wrap(data_loss(format!("bad header entry ({e})"))))?,
            _ => return Err(wrap(data_loss("no header entry"))),
        };
        check_versions(&header)?;
        if header.endianness != Endianness::Little as i32
            && header.endianness != Endianness::Big as i32
        {
            return Err(data_loss(format!(
                "unknown endianness {} in the checkpoint's header",
                header.endianness
            )));
        }
        let mut stored = Vec::new();
        for (key, value) in it {
            let proto = BundleEntryProto::decode(value.as_slice()).map_err(|e| {
                data_loss(format!(
                    "bad entry for key '{}' ({e})",
                    crate::escaped(&String::from_utf8_lossy(&key))
                ))
            })?;
            let dtype = DataType::from_number(proto.dtype);
            let shape = shape_from_proto(proto.shape.as_ref()).map_err(|e| {
                data_loss(format!(
                    "bad shape for key '{}': {e}",
                    crate::escaped(&String::from_utf8_lossy(&key))
                ))
            })?;
            stored.push(Stored {
                key,
                proto,
                dtype,
                shape,
            });
        }
        // Slices of partitioned tensors are not listed.
        let mut slice_keys = BTreeSet::new();
        for s in &stored {
            for sl in &s.proto.slices {
                slice_keys.insert(slices::slice_key(&s.key, sl));
            }
        }
        let mut listed = Vec::new();
        let mut listed_index = Vec::new();
        for (i, s) in stored.iter().enumerate() {
            if slice_keys.contains(&s.key) {
                continue;
            }
            listed_index.push(i);
            listed.push(s.entry());
        }
        Ok(Self {
            prefix: prefix.to_path_buf(),
            header,
            stored,
            listed,
            listed_index,
            options: options.clone(),
            verify: true,
            maps: Mutex::new(HashMap::new()),
            files: Mutex::new(HashMap::new()),
            in_memory: false,
        })
    }

    /// A checkpoint held in memory: the `.index` bytes and the data shards in order (shard
    /// `i` is `shards[i]`). Tensors are slices of the shards where alignment allows. The prefix
    /// is `memory` (it appears in error messages).
    ///
    /// # Errors
    /// As [`Checkpoint::open`], without the file-system errors.
    pub fn from_memory(index: &[u8], shards: Vec<Buffer>, options: &ReadOptions) -> Result<Self> {
        let options = ReadOptions {
            mode: ReadMode::Map,
            ..options.clone()
        };
        let mut c = Self::from_index_bytes(Path::new("memory"), index, &options)?;
        c.in_memory = true;
        let maps = c.maps.get_mut().unwrap_or_else(|e| e.into_inner());
        for (i, b) in shards.into_iter().enumerate() {
            if let Ok(i) = i32::try_from(i) {
                maps.insert(i, b);
            }
        }
        Ok(c)
    }

    /// Turns checksum verification on (the default) or off. Off, a tensor's bytes are
    /// returned without computing their CRC32C (the string length table's checksum is not
    /// checked either).
    pub fn set_verify_checksums(&mut self, verify: bool) {
        self.verify = verify;
    }

    /// The prefix (`dir/ckpt-3`): the files are `prefix.index` and `prefix.data-*`.
    pub fn prefix(&self) -> &Path {
        &self.prefix
    }

    /// The header entry (shards, endianness, version).
    pub fn header(&self) -> &BundleHeaderProto {
        &self.header
    }

    /// The number of data shards.
    pub fn num_shards(&self) -> i32 {
        self.header.num_shards
    }

    /// Every tensor, in key order (the header and the slices of partitioned tensors left out,
    /// as TensorFlow's `list_variables` leaves them out).
    pub fn entries(&self) -> &[CheckpointEntry] {
        &self.listed
    }

    /// The keys of [`Checkpoint::entries`].
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.listed.iter().map(|e| e.key.as_str())
    }

    /// The entry under `key`, if there is one.
    pub fn entry(&self, key: &str) -> Option<&CheckpointEntry> {
        self.listed
            .binary_search_by(|e| e.key.as_bytes().cmp(key.as_bytes()))
            .ok()
            .map(|i| &self.listed[i])
    }

    /// TensorFlow's `BundleReader::DebugString()`, the text `inspect_checkpoint` prints: one
    /// line `<key> (<DT_NAME>) <shape>` per entry, partitioned tensors' own entries left out
    /// and their slices listed under their binary keys (as TensorFlow's code does).
    pub fn debug_string(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for s in &self.stored {
            if !s.proto.slices.is_empty() {
                continue;
            }
            out.extend_from_slice(&s.key);
            let dt = s
                .dtype
                .proto_name()
                .unwrap_or_else(|| format!("{}", s.proto.dtype));
            out.extend_from_slice(format!(" ({dt}) {}\n", s.shape.debug_string()).as_bytes());
        }
        out
    }

    fn find(&self, key: &[u8]) -> Option<&Stored> {
        self.stored
            .binary_search_by(|s| s.key.as_slice().cmp(key))
            .ok()
            .map(|i| &self.stored[i])
    }

    /// Reads the tensor under `key`: a partitioned tensor is reassembled from its slices.
    ///
    /// # Errors
    /// [`ErrorKind::Corrupt`] when there is no such key, or with TensorFlow's text for a
    /// checksum mismatch (`TensorBundle at P shard 0 (12 bytes): Checksum does not match:
    /// stored ... vs. calculated on the restored bytes ...`, `The length checksum does not
    /// match: ...`); [`ErrorKind::Io`] when the data shard cannot be opened (`P.data-00000-of-00001;
    /// No such file or directory`); [`ErrorKind::Truncated`] when the shard ends before the
    /// tensor (`Read less bytes than requested`); [`ErrorKind::Corrupt`] for entries that
    /// disagree with their dtype and shape or slices that do not tile their tensor;
    /// [`ErrorKind::TooLarge`] when a string tensor's element table (beyond the bytes of its
    /// entry) would pass what is left of the memory budget ([`ReadOptions::read_budget`]: the
    /// reads' shared one, or [`ReadOptions::max_memory`] for this read); [`ErrorKind::Unsupported`] for dtypes tensorcast has no
    /// tensors of, or byte-swapping variants.
    pub fn read(&self, key: &str) -> Result<Tensor> {
        let s = self.find(key.as_bytes()).ok_or_else(|| {
            IoError::new(
                ErrorKind::Corrupt,
                format!("Key {key} not found in checkpoint"),
            )
        })?;
        if s.proto.slices.is_empty() {
            self.read_stored(s)
        } else {
            self.read_partitioned(s)
        }
    }

    /// The slices a partitioned tensor is stored in (empty for a tensor stored whole), in
    /// the order its entry lists them; `None` when there is no such key.
    pub fn slices(&self, key: &str) -> Option<&[TensorSliceProto]> {
        self.find(key.as_bytes()).map(|s| s.proto.slices.as_slice())
    }

    /// The entry of one slice of the partitioned tensor `key` (its `key` field is the slice's
    /// binary key, made a string lossily), if stored.
    pub fn slice_entry(&self, key: &str, slice: &TensorSliceProto) -> Option<CheckpointEntry> {
        let s = self.find(&slices::slice_key(key.as_bytes(), slice))?;
        Some(s.entry())
    }

    /// Reads one slice of the partitioned tensor `key` as stored (shape: the slice's extents).
    ///
    /// # Errors
    /// [`ErrorKind::Corrupt`] when the slice is not stored; otherwise as [`Checkpoint::read`].
    pub fn read_slice(&self, key: &str, slice: &TensorSliceProto) -> Result<Tensor> {
        let s = self
            .find(&slices::slice_key(key.as_bytes(), slice))
            .filter(|s| s.proto.slices.is_empty())
            .ok_or_else(|| data_loss(format!("Key {key} has no such slice in the checkpoint")))?;
        self.read_stored(s)
    }

    /// Reads every listed tensor, in key order.
    ///
    /// # Errors
    /// As [`Checkpoint::read`].
    pub fn read_all(&self) -> Result<Vec<crate::NamedTensor>> {
        self.listed_index
            .iter()
            .map(|&i| {
                let s = &self.stored[i];
                let key = String::from_utf8_lossy(&s.key).into_owned();
                let t = if s.proto.slices.is_empty() {
                    self.read_stored(s)?
                } else {
                    self.read_partitioned(s)?
                };
                Ok(crate::NamedTensor::new(key, t))
            })
            .collect()
    }

    /// The decoded `_CHECKPOINTABLE_OBJECT_GRAPH` of a TF2 object-based checkpoint, or `None`
    /// for a checkpoint without one (TF1 name-based checkpoints, raw `SaveV2` bundles).
    ///
    /// # Errors
    /// As [`Checkpoint::read`], and [`ErrorKind::Corrupt`] when the string is not a
    /// `TrackableObjectGraph`.
    pub fn object_graph(&self) -> Result<Option<ObjectGraph>> {
        if self.find(OBJECT_GRAPH_KEY.as_bytes()).is_none() {
            return Ok(None);
        }
        let t = self.read(OBJECT_GRAPH_KEY)?;
        let strings = t.as_slice::<TString>()?;
        let [one] = strings else {
            return Err(data_loss(format!(
                "{OBJECT_GRAPH_KEY} is not a string scalar (shape {})",
                t.shape()
            )));
        };
        let proto = TrackableObjectGraph::decode(one.as_bytes()).map_err(|e| {
            data_loss(format!(
                "{OBJECT_GRAPH_KEY} is not a TrackableObjectGraph ({e})"
            ))
        })?;
        Ok(Some(ObjectGraph::new(proto)))
    }

    fn shard_path(&self, shard: i32) -> PathBuf {
        let mut p = self.prefix.clone().into_os_string();
        p.push(data_file_name("", shard, self.header.num_shards));
        PathBuf::from(p)
    }

    fn open_shard(&self, shard: i32) -> Result<std::fs::File> {
        let path = self.shard_path(shard);
        if self.in_memory {
            return Err(IoError::new(
                ErrorKind::Io,
                format!("{}; No such file or directory", path.display()),
            ));
        }
        std::fs::File::open(&path).map_err(|e| {
            let what = match e.kind() {
                std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
                _ => e.to_string(),
            };
            IoError::with_source(ErrorKind::Io, format!("{}; {what}", path.display()), e)
        })
    }

    /// The shard opened for reading, once per checkpoint (see `files`).
    fn shard_file(&self, shard: i32) -> Result<Arc<std::fs::File>> {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = files.get(&shard) {
            return Ok(f.clone());
        }
        let f = Arc::new(self.open_shard(shard)?);
        files.insert(shard, f.clone());
        Ok(f)
    }

    /// TensorFlow's text for a shard that ends before a tensor, naming the shard's file.
    fn short_read(&self, shard: i32) -> IoError {
        IoError::truncated_exact(format!(
            "{}: Read less bytes than requested",
            self.shard_path(shard).display()
        ))
    }

    /// The bytes `[offset, offset + size)` of a shard: a slice of its map, or read; with
    /// `crc`, also their CRC32C, computed on each piece as it is read (while it is in the
    /// cache) rather than in a second pass over memory.
    fn shard_bytes(
        &self,
        shard: i32,
        offset: i64,
        size: i64,
        crc: bool,
    ) -> Result<(Buffer, Option<u32>)> {
        let (offset, end) = self.shard_range(shard, offset, size)?;
        match self.options.mode {
            ReadMode::Map => {
                let map = self.shard_map(shard)?;
                if end > map.len() as u64 {
                    return Err(self.short_read(shard));
                }
                let bytes = map
                    .slice(offset as usize..end as usize)
                    .ok_or_else(|| self.short_read(shard))?;
                let sum = crc.then(|| crc::crc32c_parallel(bytes.as_slice()));
                Ok((bytes, sum))
            }
            ReadMode::Read => {
                let f = self.shard_file(shard)?;
                // Nothing is allocated for bytes the file does not have.
                let len = f
                    .metadata()
                    .map_err(|e| IoError::io("cannot stat", e))?
                    .len();
                if end > len {
                    return Err(self.short_read(shard));
                }
                let n = usize::try_from(end - offset).map_err(|_| self.short_read(shard))?;
                let mut failure = None;
                let mut sum = 0u32;
                let buf =
                    Buffer::new_with(&cpu_allocator(), n, &AllocationAttributes::default(), |w| {
                        let mut scratch = vec![0u8; PIECE.min(n)];
                        let mut at = offset;
                        while w.remaining() > 0 {
                            let k = w.remaining().min(scratch.len());
                            if let Err(e) = read_piece(&f, &mut scratch[..k], at) {
                                failure = Some(e);
                                return;
                            }
                            if crc {
                                sum = crc::crc32c_append(sum, &scratch[..k]);
                            }
                            w.put_slice(&scratch[..k]);
                            at += k as u64;
                        }
                    })?;
                match failure {
                    None => Ok((buf, crc.then_some(sum))),
                    Some(e) => Err(self.read_error(shard, e)),
                }
            }
        }
    }

    /// Checks a range of a shard: a shard the header has, a non-negative offset and size.
    fn shard_range(&self, shard: i32, offset: i64, size: i64) -> Result<(u64, u64)> {
        if shard < 0 || shard >= self.header.num_shards {
            return Err(data_loss(format!(
                "an entry names shard {shard}, but the checkpoint has {} shards",
                self.header.num_shards
            )));
        }
        let (Ok(offset), Ok(size)) = (u64::try_from(offset), u64::try_from(size)) else {
            return Err(data_loss(format!(
                "an entry has a negative offset ({offset}) or size ({size})"
            )));
        };
        let end = offset
            .checked_add(size)
            .ok_or_else(|| self.short_read(shard))?;
        Ok((offset, end))
    }

    /// The memory map of a shard, made once.
    fn shard_map(&self, shard: i32) -> Result<Buffer> {
        let mut maps = self.maps.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = maps.get(&shard) {
            return Ok(m.clone());
        }
        let f = self.open_shard(shard)?;
        let m = Buffer::map_file(&f).map_err(|e| IoError::io("cannot map", e))?;
        maps.insert(shard, m.clone());
        Ok(m)
    }

    /// A failed read of a shard: short (the file ends early, or was truncated meanwhile), or
    /// the system's error; both name the file.
    fn read_error(&self, shard: i32, e: std::io::Error) -> IoError {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            self.short_read(shard)
        } else {
            IoError::io(
                format!("cannot read {}", self.shard_path(shard).display()),
                e,
            )
        }
    }

    /// Whether [`Checkpoint::stream_bytes`] can copy the tensor under `key`: a tensor stored
    /// whole, of a fixed-size dtype, in a little-endian bundle (its stored bytes are then its
    /// `tensor_data()`).
    pub fn is_streamable(&self, key: &str) -> bool {
        let big = self.header.endianness == Endianness::Big as i32;
        self.find(key.as_bytes()).is_some_and(|s| {
            s.proto.slices.is_empty()
                && s.dtype.can_use_memcpy()
                && s.dtype.is_supported()
                && !s.dtype.is_ref()
                && (!big || s.dtype.size() <= 1)
        })
    }

    /// Copies the bytes of the tensor under `key` (its `tensor_data()`) to `out` without
    /// building the tensor: piece by piece, each checksummed while it is in the cache (unless
    /// verification is off) and written. A converter writes a checkpoint's tensors this way
    /// with memory for one piece. Returns the number of bytes written.
    ///
    /// On a checksum mismatch the bytes have been written already and the error is
    /// TensorFlow's (as [`Checkpoint::read`]): write to a file replaced atomically, as the
    /// io crate's writers do, so that the output is dropped.
    ///
    /// # Errors
    /// [`ErrorKind::Unsupported`] when the tensor is not streamable
    /// ([`Checkpoint::is_streamable`]); [`ErrorKind::Io`] when `out` fails; otherwise as
    /// [`Checkpoint::read`].
    ///
    /// ```
    /// use tensorcast_core::Tensor;
    /// use tensorcast_io::checkpoint::{write_checkpoint, Checkpoint, CheckpointWriteOptions};
    /// use tensorcast_io::{NamedTensor, ReadOptions};
    /// let dir = tempfile::tempdir()?;
    /// let prefix = dir.path().join("ckpt");
    /// let w = Tensor::vector(&[1.0f32, 2.0]);
    /// write_checkpoint(&prefix, &[NamedTensor::new("w", w.clone())], &Default::default())?;
    /// let ckpt = Checkpoint::open(&prefix, &ReadOptions::default())?;
    /// let mut out = Vec::new();
    /// assert_eq!(ckpt.stream_bytes("w", &mut out)?, 8);
    /// assert_eq!(out, w.tensor_data()?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stream_bytes(&self, key: &str, out: &mut dyn std::io::Write) -> Result<u64> {
        let s = self.find(key.as_bytes()).ok_or_else(|| {
            IoError::new(
                ErrorKind::Corrupt,
                format!("Key {key} not found in checkpoint"),
            )
        })?;
        if !self.is_streamable(key) {
            return Err(IoError::unsupported(format!(
                "tensor '{}' ({}, {}) cannot be copied as its bytes: read it instead",
                crate::escaped(key),
                s.dtype.name(),
                if s.proto.slices.is_empty() {
                    "stored whole"
                } else {
                    "partitioned"
                }
            )));
        }
        let want = util::data_len(s.dtype, &s.shape)?;
        if s.proto.size != want as i64 {
            return Err(data_loss(format!(
                "Invalid size in bundle entry: key {key}; stored size {}; expected size {want}",
                s.proto.size
            )));
        }
        let shard = s.proto.shard_id;
        let (offset, end) = self.shard_range(shard, s.proto.offset, s.proto.size)?;
        let io = |e| IoError::io("cannot write", e);
        // A bool is one byte, 0 or 1, as `read` checks (after the checksum, as `read`).
        let bools = s.dtype == DataType::BOOL;
        let mut bad = None;
        let mut sum = 0u32;
        match self.options.mode {
            ReadMode::Map => {
                let map = self.shard_map(shard)?;
                let bytes = map
                    .as_slice()
                    .get(offset as usize..end as usize)
                    .ok_or_else(|| self.short_read(shard))?;
                for piece in bytes.chunks(PIECE) {
                    if self.verify {
                        sum = crc::crc32c_append(sum, piece);
                    }
                    if bools && bad.is_none() {
                        bad = util::check_bools(piece).err();
                    }
                    out.write_all(piece).map_err(io)?;
                }
            }
            ReadMode::Read => {
                let f = self.shard_file(shard)?;
                let n = usize::try_from(end - offset).map_err(|_| self.short_read(shard))?;
                let mut scratch = vec![0u8; PIECE.min(n)];
                let mut at = offset;
                while at < end {
                    let k = usize::try_from(end - at)
                        .unwrap_or(usize::MAX)
                        .min(scratch.len());
                    read_piece(&f, &mut scratch[..k], at).map_err(|e| self.read_error(shard, e))?;
                    if self.verify {
                        sum = crc::crc32c_append(sum, &scratch[..k]);
                    }
                    if bools && bad.is_none() {
                        bad = util::check_bools(&scratch[..k]).err();
                    }
                    out.write_all(&scratch[..k]).map_err(io)?;
                    at += k as u64;
                }
            }
        }
        if self.verify {
            let stored = unmask(s.proto.crc32c);
            if sum != stored {
                return Err(self.checksum_error(s, stored, sum));
            }
        }
        if let Some(e) = bad {
            return Err(e);
        }
        Ok(end - offset)
    }

    fn checksum_error(&self, s: &Stored, stored: u32, actual: u32) -> IoError {
        data_loss(format!(
            "TensorBundle at {} shard {} ({} bytes): Checksum does not match: stored {:08} vs. \
             calculated on the restored bytes {}",
            self.prefix.display(),
            s.proto.shard_id,
            s.proto.size,
            stored,
            actual
        ))
    }

    /// Reads one stored (not partitioned) entry.
    fn read_stored(&self, s: &Stored) -> Result<Tensor> {
        let dtype = s.dtype;
        let key = String::from_utf8_lossy(&s.key);
        if dtype.is_ref() || !dtype.is_supported() || dtype == DataType::RESOURCE {
            return Err(IoError::unsupported(format!(
                "tensor '{}' has dtype {}, which a checkpoint tensor cannot have here",
                crate::escaped(&key),
                dtype.name()
            )));
        }
        let big = self.header.endianness == Endianness::Big as i32;
        if dtype.can_use_memcpy() {
            let want = util::data_len(dtype, &s.shape)?;
            if s.proto.size != want as i64 {
                return Err(data_loss(format!(
                    "Invalid size in bundle entry: key {key}; stored size {}; expected size {want}",
                    s.proto.size
                )));
            }
            let (bytes, sum) =
                self.shard_bytes(s.proto.shard_id, s.proto.offset, s.proto.size, self.verify)?;
            if let Some(actual) = sum {
                let stored = unmask(s.proto.crc32c);
                if actual != stored {
                    return Err(self.checksum_error(s, stored, actual));
                }
            }
            let bytes = if big && dtype.size() > 1 {
                let unit = match dtype {
                    DataType::COMPLEX64 => 4,
                    DataType::COMPLEX128 => 8,
                    d => d.size(),
                };
                util::byte_swapped(bytes.as_slice(), unit)?
            } else {
                bytes
            };
            return Ok(util::tensor_over(dtype, &s.shape, bytes)?.0);
        }
        let n = s.shape.num_elements_usize();
        // Every element takes at least one byte in the file, so a count past the entry's size
        // is a lie: refuse it before allocating anything for it.
        if n as u128 > s.proto.size.max(0) as u128 {
            return Err(data_loss(format!(
                "tensor '{}' claims {n} elements in {} bytes",
                crate::escaped(&key),
                s.proto.size
            )));
        }
        // The element table is what the file's bytes do not pay for: charged to the budget
        // (the reads' shared one, or this read's own of `max_memory`) before it is built.
        let per = std::mem::size_of::<TString>().max(std::mem::size_of::<Variant>()) as u128;
        let table = (n as u128 * per).saturating_sub(s.proto.size.max(0) as u128);
        let budget = self.options.read_budget();
        let what = || format!("the {n} elements of tensor '{}'", crate::escaped(&key));
        match u64::try_from(table) {
            Ok(t) => budget.charge(t, what())?,
            Err(_) => return Err(budget.exceeded(what(), table)),
        }
        let (bytes, _) = self.shard_bytes(s.proto.shard_id, s.proto.offset, s.proto.size, false)?;
        match dtype {
            DataType::STRING => self.read_strings(s, bytes, n),
            DataType::VARIANT => {
                if big {
                    return Err(IoError::unsupported(
                        "byte-swapping variant tensors is not supported",
                    ));
                }
                self.read_variants(s, bytes, n)
            }
            d => Err(IoError::unsupported(format!(
                "tensor '{}' has dtype {}, which checkpoints do not hold",
                crate::escaped(&key),
                d.name()
            ))),
        }
    }

    /// The string layout: varint64 lengths, the masked CRC of the lengths, the bytes.
    fn read_strings(&self, s: &Stored, bytes: Buffer, n: usize) -> Result<Tensor> {
        let data = bytes.as_slice();
        let short = || IoError::truncated_exact("Read less bytes than requested");
        let mut pos = 0;
        let mut lens = Vec::with_capacity(n);
        let mut crc = 0u32;
        for _ in 0..n {
            let len = get_varint(data, &mut pos, 10).ok_or_else(short)?;
            crc = if let Ok(l) = u32::try_from(len) {
                crc::crc32c_append(crc, &l.to_le_bytes())
            } else {
                crc::crc32c_append(crc, &len.to_le_bytes())
            };
            lens.push(len);
        }
        let raw = data.get(pos..pos + 4).ok_or_else(short)?;
        if self.verify {
            let expected = unmask(u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]));
            if expected != crc {
                return Err(data_loss(format!(
                    "The length checksum does not match: expected {expected:08} but actual is {crc:08}"
                )));
            }
        }
        crc = crc::crc32c_append(crc, raw);
        pos += 4;
        let all = util::buffer_to_bytes(bytes.clone());
        let mut starts = Vec::with_capacity(n);
        for &len in &lens {
            let end = usize::try_from(len)
                .ok()
                .and_then(|l| pos.checked_add(l))
                .filter(|&e| e <= data.len())
                .ok_or_else(short)?;
            starts.push((pos, end));
            pos = end;
        }
        if self.verify {
            crc = crc::crc32c_append(crc, &data[starts.first().map_or(pos, |s| s.0)..pos]);
            let stored = unmask(s.proto.crc32c);
            if stored != crc {
                return Err(self.checksum_error(s, stored, crc));
            }
        }
        let t = Tensor::from_objects_in(&cpu_allocator(), &s.shape, |i| {
            let (a, b) = starts[i];
            Ok::<_, IoError>(TString::from(all.slice(a..b)))
        })?;
        Ok(t)
    }

    /// The variant layout: per element `varint64 len`, a `VariantTensorDataProto`, the masked
    /// running CRC.
    fn read_variants(&self, s: &Stored, bytes: Buffer, n: usize) -> Result<Tensor> {
        let data = bytes.as_slice();
        let short = || IoError::truncated_exact("Read less bytes than requested");
        let mut pos = 0;
        let mut crc = 0u32;
        let mut values = Vec::with_capacity(n);
        // What the elements' nested tensors may claim beyond their bytes (values a proto
        // declares but does not carry) shares the memory limit.
        let share =
            usize::try_from(self.options.read_budget().remaining_bytes() / (n.max(1) as u64))
                .unwrap_or(usize::MAX);
        let fill = DecodeOptions::new().with_max_fill_bytes(share);
        for i in 0..n {
            let len = get_varint(data, &mut pos, 10).ok_or_else(short)?;
            crc = crc::crc32c_append(crc, &len.to_le_bytes());
            let end = usize::try_from(len)
                .ok()
                .and_then(|l| pos.checked_add(l))
                .filter(|&e| e <= data.len())
                .ok_or_else(short)?;
            let body = &data[pos..end];
            crc = crc::crc32c_append(crc, body);
            pos = end;
            let raw = data.get(pos..pos + 4).ok_or_else(short)?;
            let stored = unmask(u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]));
            if self.verify && stored != crc {
                return Err(data_loss(format!(
                    "The checksum after Variant {i} does not match. Expected: {stored} Actual: {crc}"
                )));
            }
            crc = crc::crc32c_append(crc, raw);
            pos += 4;
            let proto = VariantTensorDataProto::decode(body).map_err(|e| {
                data_loss(format!(
                    "variant element {i} is not a VariantTensorDataProto ({e})"
                ))
            })?;
            values.push(
                variant_from_proto_with(&proto, &fill)
                    .map_err(|e| data_loss(format!("variant element {i}: {e}")))?,
            );
        }
        if self.verify {
            let stored = unmask(s.proto.crc32c);
            if stored != crc {
                return Err(self.checksum_error(s, stored, crc));
            }
        }
        let mut values = values.into_iter();
        Tensor::from_objects_in(&cpu_allocator(), &s.shape, |_| {
            Ok::<_, IoError>(values.next().unwrap_or_default())
        })
    }

    /// Rebuilds a partitioned tensor from its slices, which must tile it exactly.
    fn read_partitioned(&self, full: &Stored) -> Result<Tensor> {
        let key = String::from_utf8_lossy(&full.key).into_owned();
        let dtype = full.dtype;
        if !dtype.can_use_memcpy() {
            return Err(IoError::unsupported(format!(
                "partitioned tensor '{}' has dtype {}: only fixed-size dtypes can be sliced",
                crate::escaped(&key),
                dtype.name()
            )));
        }
        let total = util::data_len(dtype, &full.shape)?;
        let dims = full.shape.dims_usize();
        let elem = dtype.size();
        // Check every slice before allocating the full tensor: its extents inside the shape,
        // its entry present with the slice's shape and dtype, and the slices' byte counts
        // adding up to the full tensor's.
        let mut plan = Vec::with_capacity(full.proto.slices.len());
        let mut sum: u128 = 0;
        for sl in &full.proto.slices {
            let ext = slices::resolve(sl, &full.shape)
                .map_err(|e| e.context(format!("partitioned tensor '{}'", crate::escaped(&key))))?;
            let skey = slices::slice_key(&full.key, sl);
            let part = self.find(&skey).ok_or_else(|| {
                data_loss(format!(
                    "partitioned tensor '{}': a slice's entry is missing",
                    crate::escaped(&key)
                ))
            })?;
            let want: Vec<usize> = ext.iter().map(|e| e.1).collect();
            if part.dtype != dtype
                || part.shape.dims_usize() != want
                || !part.proto.slices.is_empty()
            {
                return Err(data_loss(format!(
                    "partitioned tensor '{}': a slice's entry has dtype {} and shape {}, not {} and the slice's extents",
                    crate::escaped(&key),
                    part.dtype.name(),
                    part.shape,
                    dtype.name()
                )));
            }
            sum += want.iter().map(|&d| d as u128).product::<u128>() * elem as u128;
            plan.push((ext, part));
        }
        if sum != total as u128 {
            return Err(data_loss(format!(
                "the slices of partitioned tensor '{}' do not tile its shape {}: they hold {sum} bytes, the tensor {total}",
                crate::escaped(&key),
                full.shape
            )));
        }
        // The slices' bytes must exist in the shards before the full tensor is allocated.
        for (_, part) in &plan {
            let want = util::data_len(dtype, &part.shape)?;
            if part.proto.size != want as i64 {
                return Err(data_loss(format!(
                    "Invalid size in bundle entry: key {}; stored size {}; expected size {want}",
                    String::from_utf8_lossy(&part.key),
                    part.proto.size
                )));
            }
            self.check_in_shard(part)?;
        }
        // Slices may share bytes in a hostile file: the full tensor may not be larger than
        // the shards that hold its slices, unless the caller's memory limit allows it.
        let shards: BTreeSet<i32> = plan.iter().map(|(_, p)| p.proto.shard_id).collect();
        let mut on_disk = 0u64;
        for &sh in &shards {
            on_disk = on_disk.saturating_add(self.shard_len(sh)?);
        }
        if total as u64 > on_disk {
            self.options.read_budget().charge(
                total as u64 - on_disk,
                format_args!(
                    "partitioned tensor '{}' (of {total} bytes, its shards {on_disk})",
                    crate::escaped(&key)
                ),
            )?;
        }
        let n = full.shape.num_elements_usize();
        let mut out = Vec::new();
        out.try_reserve_exact(total)
            .map_err(|_| IoError::too_large(format!("cannot allocate {total} bytes")))?;
        out.resize(total, 0);
        let mut covered = vec![0u64; n.div_ceil(64)];
        for (ext, part) in &plan {
            let t = self.read_stored(part)?;
            slices::copy_slice(&mut out, &mut covered, &dims, ext, t.tensor_data()?, elem)
                .map_err(|e| e.context(format!("partitioned tensor '{}'", crate::escaped(&key))))?;
        }
        Ok(util::tensor_over(dtype, &full.shape, Buffer::from_vec(out))?.0)
    }

    /// The length of a shard: its map's, or the file's.
    fn shard_len(&self, shard: i32) -> Result<u64> {
        if shard < 0 || shard >= self.header.num_shards {
            return Err(data_loss(format!(
                "an entry names shard {shard}, but the checkpoint has {} shards",
                self.header.num_shards
            )));
        }
        let cached = self
            .maps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&shard)
            .map(|m| m.len() as u64);
        match cached {
            Some(l) => Ok(l),
            None => {
                let f = self.shard_file(shard)?;
                Ok(f.metadata()
                    .map_err(|e| IoError::io("cannot stat", e))?
                    .len())
            }
        }
    }

    /// Errors unless the entry's bytes lie inside its shard file.
    fn check_in_shard(&self, s: &Stored) -> Result<()> {
        let len = self.shard_len(s.proto.shard_id)?;
        let end = (s.proto.offset as i128) + (s.proto.size as i128);
        if s.proto.offset < 0 || s.proto.size < 0 || end > len as i128 {
            return Err(self.short_read(s.proto.shard_id));
        }
        Ok(())
    }
}

/// TensorFlow's `CheckVersions(header.version, kTensorBundleVersion, kTensorBundleMinProducer,
/// "Checkpoint", "checkpoint")`.
fn check_versions(header: &BundleHeaderProto) -> Result<()> {
    let v = header.version.clone().unwrap_or_default();
    if v.producer < MIN_PRODUCER {
        return Err(IoError::unsupported(format!(
            "Checkpoint producer version {} below min producer {MIN_PRODUCER} supported by \
             TensorFlow {TF_VERSION}.  Please regenerate your checkpoint.",
            v.producer
        )));
    }
    if v.min_consumer > BUNDLE_VERSION {
        return Err(IoError::unsupported(format!(
            "Checkpoint min consumer version {} above current version {BUNDLE_VERSION} for \
             TensorFlow {TF_VERSION}.  Please upgrade TensorFlow.",
            v.min_consumer
        )));
    }
    if v.bad_consumers.contains(&BUNDLE_VERSION) {
        return Err(IoError::unsupported(format!(
            "Checkpoint disallows consumer version {BUNDLE_VERSION}.  Please upgrade \
             TensorFlow: this version is likely buggy."
        )));
    }
    if header.num_shards < 1 {
        return Err(data_loss(format!(
            "the checkpoint's header declares {} shards",
            header.num_shards
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_file_paths_are_unescaped() {
        let text = "model_checkpoint_path: \"ckpt-2\"\nall_model_checkpoint_paths: \"ckpt-1\"\n";
        assert_eq!(checkpoint_state_path(text).as_deref(), Some("ckpt-2"));
        assert_eq!(
            checkpoint_state_path("model_checkpoint_path: \"a\\\"b\\\\c\\303\\251\"").as_deref(),
            Some("a\"b\\cé")
        );
        assert_eq!(checkpoint_state_path("nothing"), None);
    }

    #[test]
    fn file_names_resolve_to_the_prefix() {
        let p = |s: &str| resolve_prefix(Path::new(s)).unwrap();
        assert_eq!(p("/x/ckpt-3.index"), Path::new("/x/ckpt-3"));
        assert_eq!(
            p("/x/model.ckpt.data-00000-of-00001"),
            Path::new("/x/model.ckpt")
        );
        assert_eq!(p("/x/model.ckpt"), Path::new("/x/model.ckpt"));
    }
}
