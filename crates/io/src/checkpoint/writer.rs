//! [`write_checkpoint`]: tensor bundles byte-identical to TensorFlow's `SaveV2`.

use std::io::Write;
use std::path::Path;

use std::collections::BTreeMap;

use tensorcast_core::{DataType, TString, Tensor, TensorShape, Variant};
use tensorcast_proto::{
    shape_to_proto, variant_to_proto, BundleEntryProto, BundleHeaderProto, Message,
    TensorSliceProto, TrackableObjectGraph, VersionDef,
};

use super::commit::BundleFiles;
use super::crc;
use super::slices;
use super::table::{mask, put_varint, TableBuilder};
use super::OBJECT_GRAPH_KEY;
use crate::error::{IoError, Result};
use crate::{escaped, NamedTensor};

/// Options of [`write_checkpoint`].
#[derive(Debug, Clone, Default)]
pub struct CheckpointWriteOptions {
    /// An object graph to store as `_CHECKPOINTABLE_OBJECT_GRAPH` (after the tensors, where
    /// `tf.train.Checkpoint` puts it), which makes the bundle a TF2 object-based checkpoint
    /// that `tf.train.Checkpoint(...).restore` loads into objects. See
    /// [`super::ObjectGraph::from_keys`] to build one from TF2 keys.
    pub object_graph: Option<TrackableObjectGraph>,
    /// fsync the files before renaming them into place and the directory after (durable
    /// across a power loss). Off by default, as TensorFlow's `BundleWriter` (which closes
    /// and renames without syncing): the replacement is atomic for readers either way.
    pub sync: bool,
}

/// The piece a tensor's bytes are checksummed and written in: small enough to stay in the
/// core's L2 cache between the CRC and the copy into the file, and the data file's buffer
/// size, so that each piece goes to the file without a copy through the buffer.
pub(crate) const CHUNK: usize = 256 << 10;

/// One item of a bundle: a whole tensor, or one slice of a partitioned tensor (as
/// `SaveV2` with a `shape_and_slices` spec, or a TF1 partitioned variable, saves it).
#[derive(Debug, Clone, PartialEq)]
pub enum BundleItem {
    /// A tensor stored whole under its name.
    Tensor(NamedTensor),
    /// One slice of the partitioned tensor `name` of shape `full_shape`: `tensor` holds the
    /// elements of `slice` and is stored under the slice's own key; the entry `name` lists
    /// the slices in the order they are given.
    Slice {
        /// The full tensor's key.
        name: String,
        /// The full tensor's shape.
        full_shape: TensorShape,
        /// Where the slice lies (an extent without a length is a whole dimension).
        slice: TensorSliceProto,
        /// The slice's elements (its shape is the slice's extents).
        tensor: Tensor,
    },
}

/// Writes `tensors` as the tensor bundle `prefix.index` + `prefix.data-00000-of-00001`.
///
/// The bytes are those TensorFlow 2.21's `SaveV2` writes for the same names and tensors in the
/// same order: the data file holds the tensors in the order given (memcpy-able dtypes as their
/// little-endian bytes, strings and variants in their checksummed layouts), the index lists
/// them sorted by key after the header entry. Both files are written to temporary files first
/// and renamed into place only when both are complete: a failure leaves no new file and the old
/// checkpoint (if any) as it was. Each tensor's CRC32C is computed on the piece being written
/// while it is in the cache, so the tensors' memory is read once.
///
/// # Errors
/// [`crate::ErrorKind::Unsupported`] for an empty or repeated name, a tensor without a buffer,
/// or a dtype checkpoints cannot hold (resource, references); [`crate::ErrorKind::Io`] when a
/// file cannot be created, written, synced or renamed.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_io::checkpoint::{write_checkpoint, Checkpoint, CheckpointWriteOptions};
/// use tensorcast_io::{NamedTensor, ReadOptions};
/// let dir = tempfile::tempdir()?;
/// let prefix = dir.path().join("model.ckpt");
/// let ts = vec![NamedTensor::new("w", Tensor::vector(&[1.0f32, 2.0]))];
/// write_checkpoint(&prefix, &ts, &CheckpointWriteOptions::default())?;
/// let ckpt = Checkpoint::open(&prefix, &ReadOptions::default())?;
/// assert_eq!(ckpt.read("w")?, ts[0].tensor);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_checkpoint(
    prefix: &Path,
    tensors: &[NamedTensor],
    options: &CheckpointWriteOptions,
) -> Result<()> {
    write_bundle(prefix, &whole(tensors), options)
}

/// [`write_checkpoint`] of whole tensors and slices of partitioned tensors, in the order given
/// (the data file's order), as `SaveV2` with `shape_and_slices` writes them.
///
/// # Errors
/// As [`write_checkpoint`], and [`crate::ErrorKind::Unsupported`] for a slice outside its full
/// shape, a slice tensor whose shape is not the slice's, slices of one name with different
/// dtypes or full shapes, or a name used both whole and sliced.
pub fn write_bundle(
    prefix: &Path,
    items: &[BundleItem],
    options: &CheckpointWriteOptions,
) -> Result<()> {
    write_sharded_bundle(prefix, std::slice::from_ref(&items.to_vec()), options)
}

/// The `.index` and `.data-00000-of-00001` bytes [`write_checkpoint`] writes, in memory.
///
/// # Errors
/// As [`write_checkpoint`], without the file-system errors.
pub fn checkpoint_bytes(
    tensors: &[NamedTensor],
    options: &CheckpointWriteOptions,
) -> Result<(Vec<u8>, Vec<u8>)> {
    bundle_bytes(&whole(tensors), options)
}

/// The bytes [`write_bundle`] writes, in memory.
///
/// # Errors
/// As [`write_bundle`], without the file-system errors.
pub fn bundle_bytes(
    items: &[BundleItem],
    options: &CheckpointWriteOptions,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let graph = graph_tensor(options)?;
    let all = with_graph(items, graph);
    let plan = Plan::new(&all)?;
    let mut data = Vec::new();
    let mut written = Vec::with_capacity(all.len());
    for item in &all {
        let offset = data.len() as u64;
        let (size, crc) = write_tensor(&mut data, item_tensor(item))?;
        written.push((offset, size, crc));
    }
    let entries = merged_entries(&[(&plan, &all, &written)])?;
    Ok((index_table(&entries, 1), data))
}

/// [`sharded_bundle_bytes`] written to `prefix.index` and `prefix.data-NNNNN-of-NNNNN`,
/// atomically: every file is written to a temporary file first, and they are renamed into
/// place (the index last) only when all are complete.
///
/// # Errors
/// As [`sharded_bundle_bytes`], and [`crate::ErrorKind::Io`] when a file cannot be created,
/// written, synced or renamed.
pub fn write_sharded_bundle(
    prefix: &Path,
    shards: &[Vec<BundleItem>],
    options: &CheckpointWriteOptions,
) -> Result<()> {
    let (alls, plans) = sharded_plans(shards, options)?;
    let mut files = BundleFiles::begin(prefix, alls.len() as i32, options)?;
    let mut writtens = Vec::with_capacity(alls.len());
    for all in &alls {
        let mut written = Vec::with_capacity(all.len());
        files.write_shard(|w| {
            let mut offset = 0u64;
            for item in all {
                let (size, crc) = write_tensor(w, item_tensor(item))?;
                written.push((offset, size, crc));
                offset += size;
            }
            Ok(())
        })?;
        writtens.push(written);
    }
    let parts: Vec<ShardPart<'_>> = plans
        .iter()
        .zip(&alls)
        .zip(&writtens)
        .map(|((p, a), w)| (p, a.as_slice(), w.as_slice()))
        .collect();
    files.commit(&merged_entries(&parts)?)
}

/// Each shard's items (the object graph at the end of the last) and their checked plans.
fn sharded_plans(
    shards: &[Vec<BundleItem>],
    options: &CheckpointWriteOptions,
) -> Result<(Vec<Vec<BundleItem>>, Vec<Plan>)> {
    let graph = graph_tensor(options)?;
    let n = shards.len().max(1);
    let mut alls = Vec::with_capacity(n);
    for i in 0..n {
        let items = shards.get(i).map(Vec::as_slice).unwrap_or(&[]);
        let g = if i + 1 == n { graph.clone() } else { None };
        alls.push(with_graph(items, g));
    }
    let plans = alls
        .iter()
        .map(|a| Plan::new(a))
        .collect::<Result<Vec<_>>>()?;
    Ok((alls, plans))
}

/// A bundle of several data shards, as TensorFlow's sharded saves write them (each device or
/// `MaxShardSizePolicy` shard written by its own `BundleWriter`, then `MergeBundles`): shard
/// `i` holds `shards[i]` in order, and the one index lists every entry with its shard id, a
/// partitioned tensor's slices listed shard by shard. `options.object_graph` goes at the end of
/// the last shard. Returns the index and the data shards' bytes.
///
/// # Errors
/// As [`bundle_bytes`]; a name stored whole in two shards is a duplicate.
pub fn sharded_bundle_bytes(
    shards: &[Vec<BundleItem>],
    options: &CheckpointWriteOptions,
) -> Result<(Vec<u8>, Vec<Vec<u8>>)> {
    let (alls, plans) = sharded_plans(shards, options)?;
    let mut datas = Vec::with_capacity(alls.len());
    let mut writtens = Vec::with_capacity(alls.len());
    for all in &alls {
        let mut data = Vec::new();
        let mut written = Vec::with_capacity(all.len());
        for item in all {
            let offset = data.len() as u64;
            let (size, crc) = write_tensor(&mut data, item_tensor(item))?;
            written.push((offset, size, crc));
        }
        datas.push(data);
        writtens.push(written);
    }
    let parts: Vec<ShardPart<'_>> = plans
        .iter()
        .zip(&alls)
        .zip(&writtens)
        .map(|((p, a), w)| (p, a.as_slice(), w.as_slice()))
        .collect();
    let n = parts.len() as i32;
    Ok((index_table(&merged_entries(&parts)?, n), datas))
}

/// The items of the checkpoint `ckpt` as [`write_sharded_bundle`] takes them to write the same
/// bundle again: every stored tensor (a whole tensor, or one slice of a partitioned one) read,
/// shard by shard, each shard's items in the order TensorFlow added them - the data file's
/// order, where a zero-element tensor (which takes no bytes) comes before the tensor that
/// starts at its offset, and a partitioned tensor's slices keep the order its entry lists
/// them in. For a checkpoint TensorFlow wrote, `write_sharded_bundle(prefix, &items, &
/// CheckpointWriteOptions::default())` writes its files back byte for byte (the object graph,
/// if any, is one of the items).
///
/// # Errors
/// As [`super::Checkpoint::read`].
pub fn stored_items(ckpt: &super::Checkpoint) -> Result<Vec<Vec<BundleItem>>> {
    // (shard, offset, takes bytes, position in its tensor's slice list): TensorFlow records
    // each tensor at the data size when it is added, so an empty one shares its offset with
    // the next tensor added and was added before it.
    type Order = (i32, i64, bool, usize);
    let mut items: Vec<(Order, BundleItem)> = Vec::new();
    for e in ckpt.entries() {
        let slices = ckpt.slices(&e.key).unwrap_or(&[]);
        if slices.is_empty() {
            let t = ckpt.read(&e.key)?;
            items.push((
                (e.shard_id, e.offset, e.size > 0, 0),
                BundleItem::Tensor(NamedTensor::new(e.key.clone(), t)),
            ));
            continue;
        }
        for (i, sl) in slices.iter().enumerate() {
            let se = ckpt.slice_entry(&e.key, sl).ok_or_else(|| {
                IoError::corrupt(format!(
                    "a slice of '{}' has no entry of its own",
                    escaped(&e.key)
                ))
            })?;
            items.push((
                (se.shard_id, se.offset, se.size > 0, i),
                BundleItem::Slice {
                    name: e.key.clone(),
                    full_shape: e.shape.clone(),
                    slice: sl.clone(),
                    tensor: ckpt.read_slice(&e.key, sl)?,
                },
            ));
        }
    }
    items.sort_by_key(|(order, _)| *order);
    let n = ckpt.num_shards().max(1) as usize;
    let mut shards: Vec<Vec<BundleItem>> = vec![Vec::new(); n];
    for ((shard, ..), item) in items {
        let shard = usize::try_from(shard)
            .ok()
            .filter(|&s| s < n)
            .ok_or_else(|| IoError::corrupt(format!("an entry names shard {shard} of {n}")))?;
        shards[shard].push(item);
    }
    Ok(shards)
}

fn whole(tensors: &[NamedTensor]) -> Vec<BundleItem> {
    tensors.iter().cloned().map(BundleItem::Tensor).collect()
}

fn with_graph(items: &[BundleItem], graph: Option<NamedTensor>) -> Vec<BundleItem> {
    let mut all = items.to_vec();
    all.extend(graph.map(BundleItem::Tensor));
    all
}

fn item_tensor(item: &BundleItem) -> &Tensor {
    match item {
        BundleItem::Tensor(nt) => &nt.tensor,
        BundleItem::Slice { tensor, .. } => tensor,
    }
}

/// The index keys of the items, checked: each item's own key (a slice's encoded key), and the
/// partitioned tensors' full entries with their slices in order.
struct Plan {
    keys: Vec<Vec<u8>>,
    full: BTreeMap<Vec<u8>, BundleEntryProto>,
}

impl Plan {
    fn new(all: &[BundleItem]) -> Result<Self> {
        let mut keys = Vec::with_capacity(all.len());
        let mut full: BTreeMap<Vec<u8>, BundleEntryProto> = BTreeMap::new();
        let mut named = Vec::with_capacity(all.len());
        for item in all {
            match item {
                BundleItem::Tensor(nt) => {
                    keys.push(nt.name.as_bytes().to_vec());
                    named.push((nt.name.as_str(), &nt.tensor));
                }
                BundleItem::Slice {
                    name,
                    full_shape,
                    slice,
                    tensor,
                } => {
                    let ext = slices::resolve(slice, full_shape)
                        .map_err(|e| IoError::unsupported(e.message().to_string()))?;
                    let dims: Vec<usize> = ext.iter().map(|e| e.1).collect();
                    if tensor.shape().dims_usize() != dims {
                        return Err(IoError::unsupported(format!(
                            "a slice of '{}' has shape {}, not its extents' {dims:?}",
                            escaped(name),
                            tensor.shape()
                        )));
                    }
                    let e =
                        full.entry(name.as_bytes().to_vec())
                            .or_insert_with(|| BundleEntryProto {
                                dtype: tensor.dtype().number(),
                                shape: Some(shape_to_proto(full_shape)),
                                ..BundleEntryProto::default()
                            });
                    if e.dtype != tensor.dtype().number()
                        || e.shape != Some(shape_to_proto(full_shape))
                    {
                        return Err(IoError::unsupported(format!(
                            "the slices of '{}' disagree on the dtype or the full shape",
                            escaped(name)
                        )));
                    }
                    let slice = canonical(slice);
                    keys.push(slices::slice_key(name.as_bytes(), &slice));
                    e.slices.push(slice);
                    named.push((name.as_str(), tensor));
                }
            }
        }
        check(&named, &keys, &full)?;
        Ok(Self { keys, full })
    }
}

/// One shard's part of a merged index: its plan, items and where each item's bytes went.
type ShardPart<'a> = (&'a Plan, &'a [BundleItem], &'a [(u64, u64, u32)]);

/// The index entries of one or more shards as `MergeBundles` merges them, sorted by key: each
/// whole tensor or slice with its shard id, and a partitioned tensor's full entry listing its
/// slices shard by shard.
fn merged_entries<'a>(parts: &[ShardPart<'a>]) -> Result<BTreeMap<&'a [u8], BundleEntryProto>> {
    let mut entries: BTreeMap<&'a [u8], BundleEntryProto> = BTreeMap::new();
    for (shard, &(plan, items, written)) in parts.iter().enumerate() {
        for ((key, item), &(offset, size, crc)) in
            plan.keys.iter().zip(items.iter()).zip(written.iter())
        {
            let mut e = entry(item_tensor(item), offset, size, crc);
            e.shard_id = shard as i32;
            if entries.insert(key, e).is_some() {
                return Err(IoError::unsupported(format!(
                    "Adding duplicate key: {}",
                    escaped(&String::from_utf8_lossy(key))
                )));
            }
        }
    }
    for &(plan, _, _) in parts {
        for (k, e) in &plan.full {
            match entries.get_mut(k.as_slice()) {
                None => {
                    entries.insert(k, e.clone());
                }
                Some(have)
                    if !have.slices.is_empty()
                        && have.dtype == e.dtype
                        && have.shape == e.shape =>
                {
                    have.slices.extend(e.slices.iter().cloned());
                }
                Some(_) => {
                    return Err(IoError::unsupported(format!(
                        "Adding duplicate key: {}",
                        escaped(&String::from_utf8_lossy(k))
                    )))
                }
            }
        }
    }
    Ok(entries)
}

/// The `.index` table: the header entry (`num_shards` shards, little-endian, TensorFlow's
/// versions), then `entries` in key order.
pub(crate) fn index_table(entries: &BTreeMap<&[u8], BundleEntryProto>, num_shards: i32) -> Vec<u8> {
    let header = BundleHeaderProto {
        num_shards,
        endianness: 0,
        version: Some(VersionDef {
            producer: 1,
            min_consumer: 0,
            bad_consumers: Vec::new(),
        }),
    };
    let mut table = TableBuilder::new();
    table.add(b"", &header.encode_to_vec());
    let mut buf = Vec::new();
    for (k, e) in entries {
        buf.clear();
        e.encode(&mut buf).unwrap_or_default();
        table.add(k, &buf);
    }
    table.finish()
}

/// Computes the CRC32C of and counts the bytes written through it.
struct Checksummed<'a, W: Write + ?Sized> {
    inner: &'a mut W,
    crc: u32,
    n: u64,
}

impl<W: Write + ?Sized> Write for Checksummed<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let k = self.inner.write(buf)?;
        self.crc = crc::crc32c_append(self.crc, &buf[..k]);
        self.n += k as u64;
        Ok(k)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        for piece in buf.chunks(CHUNK) {
            self.crc = crc::crc32c_append(self.crc, piece);
            self.inner.write_all(piece)?;
            self.n += piece.len() as u64;
        }
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// [`write_checkpoint`] of tensors whose names, dtypes and shapes are known ahead
/// (`planned`) and whose bytes come one tensor at a time: `source(i, out)` either writes the
/// bytes of planned tensor `i` (its `tensor_data()`: a fixed-size dtype, exactly as many
/// bytes as its shape takes) to `out` and returns `None`, or returns the tensor to write. A
/// converter copies a file's tensors this way (a safetensors file read piece by piece into
/// the data file) with memory for one piece, not the whole file. The bytes written are
/// [`write_checkpoint`]'s for the same tensors, byte for byte, and as atomic.
///
/// # Errors
/// As [`write_checkpoint`]; `source`'s errors; [`crate::ErrorKind::Corrupt`] when a source
/// copies a byte count other than the planned tensor's, copies a dtype that is not of fixed
/// size, or returns a tensor unlike its plan.
///
/// ```
/// use tensorcast_core::{DataType, Tensor, TensorShape};
/// use tensorcast_io::checkpoint::{checkpoint_bytes, write_checkpoint_streamed, Checkpoint};
/// use tensorcast_io::safetensors::PlannedTensor;
/// use tensorcast_io::{NamedTensor, ReadOptions};
/// let dir = tempfile::tempdir()?;
/// let prefix = dir.path().join("ckpt");
/// let plan = [PlannedTensor { name: "w".into(), dtype: DataType::UINT8, shape: TensorShape::new(&[3])? }];
/// write_checkpoint_streamed(&prefix, &plan, &Default::default(), &mut |_, out| {
///     out.write_all(&[1, 2, 3]).map_err(|e| tensorcast_io::IoError::new(tensorcast_io::ErrorKind::Io, e.to_string()))?;
///     Ok(None)
/// })?;
/// let whole = checkpoint_bytes(&[NamedTensor::new("w", Tensor::vector(&[1u8, 2, 3]))], &Default::default())?;
/// assert_eq!(std::fs::read(dir.path().join("ckpt.index"))?, whole.0);
/// assert_eq!(std::fs::read(dir.path().join("ckpt.data-00000-of-00001"))?, whole.1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_checkpoint_streamed(
    prefix: &Path,
    planned: &[crate::safetensors::PlannedTensor],
    options: &CheckpointWriteOptions,
    source: &mut crate::safetensors::CopySource<'_>,
) -> Result<()> {
    let graph = graph_tensor(options)?;
    let mut names: Vec<&[u8]> = planned.iter().map(|p| p.name.as_bytes()).collect();
    names.extend(graph.as_ref().map(|g| g.name.as_bytes()));
    check_keys(names)?;
    for p in planned {
        let d = p.dtype;
        if d.is_ref() || d == DataType::RESOURCE || !d.is_supported() || d == DataType::INVALID {
            return Err(IoError::unsupported(format!(
                "tensor '{}': dtype {} cannot be stored in a checkpoint",
                escaped(&p.name),
                d.name()
            )));
        }
    }
    let mut files = BundleFiles::begin(prefix, 1, options)?;
    let mut entries: BTreeMap<&[u8], BundleEntryProto> = BTreeMap::new();
    files.write_shard(|w| {
        let mut offset = 0u64;
        for (i, p) in planned.iter().enumerate() {
            let mut out = Checksummed {
                inner: &mut *w,
                crc: 0,
                n: 0,
            };
            let fetched = source(i, &mut out)?;
            let (copied, copied_crc) = (out.n, out.crc);
            let (size, crc) = match fetched {
                None => {
                    let want = if p.dtype.can_use_memcpy() {
                        crate::util::data_len(p.dtype, &p.shape).ok()
                    } else {
                        None
                    };
                    if want != Some(copied as usize) {
                        return Err(IoError::corrupt(format!(
                            "tensor '{}': {copied} bytes were copied for {} {}",
                            escaped(&p.name),
                            p.dtype.name(),
                            p.shape
                        )));
                    }
                    (copied, copied_crc)
                }
                Some(t) => {
                    if copied != 0 || t.dtype() != p.dtype || t.shape() != &p.shape {
                        return Err(IoError::corrupt(format!(
                            "tensor '{}' is {} {} where {} {} was planned",
                            escaped(&p.name),
                            t.dtype().name(),
                            t.shape(),
                            p.dtype.name(),
                            p.shape
                        )));
                    }
                    if !t.is_initialized() {
                        return Err(IoError::unsupported(format!(
                            "tensor '{}' is not initialized",
                            escaped(&p.name)
                        )));
                    }
                    write_tensor(w, &t)?
                }
            };
            entries.insert(
                p.name.as_bytes(),
                BundleEntryProto {
                    dtype: p.dtype.number(),
                    shape: Some(shape_to_proto(&p.shape)),
                    shard_id: 0,
                    offset: offset as i64,
                    size: size as i64,
                    crc32c: mask(crc),
                    slices: Vec::new(),
                },
            );
            offset += size;
        }
        if let Some(g) = &graph {
            let (size, crc) = write_tensor(w, &g.tensor)?;
            entries.insert(
                OBJECT_GRAPH_KEY.as_bytes(),
                entry(&g.tensor, offset, size, crc),
            );
        }
        Ok(())
    })?;
    files.commit(&entries)
}

/// `TensorSlice::AsProto`: a whole dimension is an empty extent.
fn canonical(slice: &TensorSliceProto) -> TensorSliceProto {
    let mut s = slice.clone();
    for e in &mut s.extent {
        if e.length.is_none() || e.length == Some(-1) {
            e.start = 0;
            e.length = None;
        }
    }
    s
}

fn graph_tensor(options: &CheckpointWriteOptions) -> Result<Option<NamedTensor>> {
    Ok(options.object_graph.as_ref().map(|g| {
        NamedTensor::new(
            OBJECT_GRAPH_KEY,
            Tensor::scalar_of(TString::from(g.encode_to_vec())),
        )
    }))
}

fn check(
    named: &[(&str, &Tensor)],
    keys: &[Vec<u8>],
    full: &BTreeMap<Vec<u8>, BundleEntryProto>,
) -> Result<()> {
    let mut sorted: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    sorted.extend(full.keys().map(Vec::as_slice));
    check_keys(sorted)?;
    for (name, t) in named {
        let d = t.dtype();
        if d.is_ref() || d == DataType::RESOURCE || !d.is_supported() || d == DataType::INVALID {
            return Err(IoError::unsupported(format!(
                "tensor '{}': dtype {} cannot be stored in a checkpoint",
                escaped(name),
                d.name()
            )));
        }
        if !t.is_initialized() {
            return Err(IoError::unsupported(format!(
                "tensor '{}' is not initialized (it has no buffer for its {} elements)",
                escaped(name),
                t.num_elements()
            )));
        }
    }
    Ok(())
}

fn entry(t: &Tensor, offset: u64, size: u64, crc: u32) -> BundleEntryProto {
    BundleEntryProto {
        dtype: t.dtype().number(),
        shape: Some(shape_to_proto(t.shape())),
        shard_id: 0,
        offset: offset as i64,
        size: size as i64,
        crc32c: mask(crc),
        slices: Vec::new(),
    }
}

/// Writes one tensor's bytes; returns their count and unmasked CRC32C (TensorFlow's).
fn write_tensor(w: &mut impl Write, t: &Tensor) -> Result<(u64, u32)> {
    let io = |e| IoError::io("cannot write", e);
    match t.dtype() {
        DataType::STRING => {
            let strings: &[TString] = if t.num_elements() == 0 {
                &[]
            } else {
                t.as_slice::<TString>()?
            };
            let mut head = Vec::with_capacity(strings.len() + 4);
            let mut crc = 0u32;
            for s in strings {
                let len = s.len() as u64;
                put_varint(&mut head, len);
                crc = match u32::try_from(len) {
                    Ok(l) => crc::crc32c_append(crc, &l.to_le_bytes()),
                    Err(_) => crc::crc32c_append(crc, &len.to_le_bytes()),
                };
            }
            let lc = mask(crc).to_le_bytes();
            head.extend_from_slice(&lc);
            crc = crc::crc32c_append(crc, &lc);
            w.write_all(&head).map_err(io)?;
            let mut size = head.len() as u64;
            for s in strings {
                crc = crc::crc32c_append(crc, s.as_bytes());
                w.write_all(s.as_bytes()).map_err(io)?;
                size += s.len() as u64;
            }
            Ok((size, crc))
        }
        DataType::VARIANT => {
            let values: &[Variant] = if t.num_elements() == 0 {
                &[]
            } else {
                t.as_slice::<Variant>()?
            };
            let mut crc = 0u32;
            let mut size = 0u64;
            let mut buf = Vec::new();
            for v in values {
                let body = variant_to_proto(v).encode_to_vec();
                buf.clear();
                put_varint(&mut buf, body.len() as u64);
                crc = crc::crc32c_append(crc, &(body.len() as u64).to_le_bytes());
                crc = crc::crc32c_append(crc, &body);
                buf.extend_from_slice(&body);
                let m = mask(crc).to_le_bytes();
                buf.extend_from_slice(&m);
                crc = crc::crc32c_append(crc, &m);
                w.write_all(&buf).map_err(io)?;
                size += buf.len() as u64;
            }
            Ok((size, crc))
        }
        _ => {
            let bytes = if t.num_elements() == 0 {
                &[][..]
            } else {
                t.tensor_data()?
            };
            let mut crc = 0u32;
            for piece in bytes.chunks(CHUNK) {
                crc = crc::crc32c_append(crc, piece);
                w.write_all(piece).map_err(io)?;
            }
            Ok((bytes.len() as u64, crc))
        }
    }
}

/// Refuses a checkpoint's tensor names as TensorFlow's writer does: no empty name (the key of
/// the header entry), no name twice.
fn check_keys(mut names: Vec<&[u8]>) -> Result<()> {
    names.sort_unstable();
    if names.first() == Some(&&b""[..]) {
        return Err(IoError::unsupported(
            "a checkpoint tensor cannot have an empty name (the key of the header entry)",
        ));
    }
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(IoError::unsupported(format!(
            "Adding duplicate key: {}",
            escaped(&String::from_utf8_lossy(w[0]))
        )));
    }
    Ok(())
}
