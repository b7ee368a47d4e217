//! `tf.io.parse_example` and `tf.io.parse_single_example`: serialized `Example`s to tensors,
//! with TensorFlow's feature specs, results and error texts.

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;
use rayon::prelude::*;
use tensorcast_core::{DataType, TString, Tensor};

use crate::error::{RecordsError, Result};
use crate::wire::{
    decode_feature_into, single_packed, walk_example, ColumnBuf, Kind, VRef, Values,
};

/// A partition of a [`FeatureSpec::Ragged`] feature (`tf.io.RaggedFeature.*`).
#[derive(Debug, Clone, PartialEq)]
pub enum Partition {
    /// `RowLengths(key)`: the feature `key` holds the length of each row.
    RowLengths(String),
    /// `RowSplits(key)`: the feature `key` holds the row splits.
    RowSplits(String),
    /// `UniformRowLength(length)`: rows of `length` values each.
    UniformRowLength(i64),
    /// `RowStarts(key)`: the feature `key` holds where each row starts.
    RowStarts(String),
    /// `RowLimits(key)`: the feature `key` holds where each row ends.
    RowLimits(String),
    /// `ValueRowIds(key)`: the feature `key` holds the row of each value (sorted; a row past
    /// the last id cannot be expressed). At most [`MAX_VALUE_ROWID_ROWS`] rows in a batch.
    ValueRowIds(String),
}

impl Partition {
    /// The feature key holding the partition (`None` for `UniformRowLength`).
    pub fn key(&self) -> Option<&str> {
        match self {
            Partition::RowLengths(k)
            | Partition::RowSplits(k)
            | Partition::RowStarts(k)
            | Partition::RowLimits(k)
            | Partition::ValueRowIds(k) => Some(k),
            Partition::UniformRowLength(_) => None,
        }
    }
}

/// The most rows a batch's `ValueRowIds` partition may imply (its last id + 1): ids are
/// numbers, so one id can ask for any count of empty rows; past this bound the parse fails
/// instead of allocating the row splits.
pub const MAX_VALUE_ROWID_ROWS: i64 = 1 << 24;

/// A feature's spec, as `tf.io`'s classes.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureSpec {
    /// `tf.io.FixedLenFeature(shape, dtype, default_value)`: a dense `[batch] + shape` result.
    /// `default_value` holds the flattened default (one value is repeated over the shape);
    /// without it the feature is required.
    FixedLen {
        /// The shape of one example's value.
        shape: Vec<i64>,
        /// `FLOAT`, `INT64` or `STRING`.
        dtype: DataType,
        /// The default, flattened.
        default_value: Option<Tensor>,
    },
    /// `tf.io.VarLenFeature(dtype)`: a sparse result.
    VarLen {
        /// `FLOAT`, `INT64` or `STRING`.
        dtype: DataType,
    },
    /// `tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing, default_value)`: a dense
    /// `[batch, max_rows] + shape` result, padded with the default.
    FixedLenSequence {
        /// The shape of one row.
        shape: Vec<i64>,
        /// `FLOAT`, `INT64` or `STRING`.
        dtype: DataType,
        /// Whether an example may lack the feature (`parse_example` requires `true`).
        allow_missing: bool,
        /// The padding value (a scalar; zero or empty string without it).
        default_value: Option<Tensor>,
    },
    /// `tf.io.RaggedFeature(dtype, value_key, partitions, row_splits_dtype)`: a ragged result.
    Ragged {
        /// `FLOAT`, `INT64` or `STRING`.
        dtype: DataType,
        /// The feature holding the values (default: the spec's own name).
        value_key: Option<String>,
        /// Partitions, outermost first.
        partitions: Vec<Partition>,
        /// `INT32` or `INT64`.
        row_splits_dtype: DataType,
    },
}

/// One parsed feature, as TensorFlow returns it.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    /// A dense tensor.
    Dense(Tensor),
    /// A `tf.SparseTensor`.
    Sparse {
        /// `[n, rank]` int64.
        indices: Tensor,
        /// `[n]`.
        values: Tensor,
        /// `[rank]` int64.
        dense_shape: Tensor,
    },
    /// A `tf.RaggedTensor`: its flat values and its row splits, outermost first.
    Ragged {
        /// The values.
        flat_values: Tensor,
        /// Row splits, outermost first.
        row_splits: Vec<Tensor>,
    },
}

pub(crate) fn kind_of(dtype: DataType) -> Result<Kind> {
    match dtype {
        DataType::FLOAT => Ok(Kind::Float),
        DataType::INT64 => Ok(Kind::Int64),
        DataType::STRING => Ok(Kind::Bytes),
        d => Err(RecordsError::invalid(format!(
            "Unsupported dtype for an example feature: {}",
            d.name()
        ))),
    }
}

pub(crate) fn shape_string(dims: &[i64]) -> String {
    let inner: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", inner.join(","))
}

pub(crate) fn to_tensor(values: Values, shape: &[i64]) -> Result<Tensor> {
    let t = match values {
        Values::Float(v) => Tensor::from_vec(v, shape),
        Values::Int64(v) => Tensor::from_vec(v, shape),
        Values::Bytes(v) => Tensor::from_vec(own_strings(&v.iter().collect::<Vec<_>>()), shape),
    };
    t.map_err(|e| RecordsError::invalid(e.to_string()))
}

/// Strings shorter than this are copied into one block per output; longer ones stay views of
/// the records they came from.
const OWNED_STRING_BYTES: usize = 256;

/// The strings of an output. The parsed values are views of the records (often of one mapped
/// file, whose single reference count every view shares): short ones are copied into one block
/// of the output's own, so that an output does not keep a whole file alive for a few tags, and
/// so that building and dropping many small strings on different threads does not contend on
/// that one count. Long ones (images, nested records) stay views: copying them would cost more.
fn own_strings(values: &[&Bytes]) -> Vec<TString> {
    let short = |b: &Bytes| b.len() < OWNED_STRING_BYTES;
    let total: usize = values.iter().filter(|b| short(b)).map(|b| b.len()).sum();
    let mut block = Vec::with_capacity(total);
    for b in values.iter().filter(|b| short(b)) {
        block.extend_from_slice(b);
    }
    let block = Bytes::from(block);
    let mut at = 0;
    values
        .iter()
        .map(|&b| {
            if short(b) {
                at += b.len();
                TString::from(block.slice(at - b.len()..at))
            } else {
                TString::from(b.clone())
            }
        })
        .collect()
}

pub(crate) fn empty_values(kind: Kind) -> Values {
    match kind {
        Kind::Float => Values::Float(Vec::new()),
        Kind::Int64 => Values::Int64(Vec::new()),
        Kind::Bytes => Values::Bytes(Vec::new()),
    }
}

pub(crate) fn extend(dst: &mut Values, src: VRef<'_>, range: std::ops::Range<usize>) {
    match (dst, src) {
        (Values::Float(d), VRef::Float(s)) => d.extend_from_slice(&s[range]),
        (Values::Int64(d), VRef::Int64(s)) => d.extend_from_slice(&s[range]),
        (Values::Bytes(d), VRef::Bytes(s)) => d.extend_from_slice(&s[range]),
        _ => {}
    }
}

/// The values of a default tensor, checked to be of `kind`.
pub(crate) fn default_values(t: &Tensor, kind: Kind) -> Result<Values> {
    let bad = |e: tensorcast_core::Error| RecordsError::invalid(e.to_string());
    Ok(match kind {
        Kind::Float => Values::Float(t.as_slice::<f32>().map_err(bad)?.to_vec()),
        Kind::Int64 => Values::Int64(t.as_slice::<i64>().map_err(bad)?.to_vec()),
        Kind::Bytes => Values::Bytes(
            t.as_slice::<TString>()
                .map_err(bad)?
                .iter()
                .map(|s| Bytes::copy_from_slice(s.as_ref()))
                .collect(),
        ),
    })
}

/// What a `FixedLenSequence` feature pads short examples with: its default's values, or its
/// kind's zero.
pub(crate) fn sequence_padding(default_value: Option<&Tensor>, kind: Kind) -> Result<Values> {
    Ok(match default_value {
        Some(t) => default_values(t, kind)?,
        None => match kind {
            Kind::Float => Values::Float(vec![0.0]),
            Kind::Int64 => Values::Int64(vec![0]),
            Kind::Bytes => Values::Bytes(vec![Bytes::new()]),
        },
    })
}

/// Appends `n` values taken from `values` in turn (a default of one value fills a shape);
/// nothing when `values` is empty.
pub(crate) fn extend_cycled(out: &mut Values, values: &Values, n: usize) {
    let k = values.len();
    if k == 0 {
        return;
    }
    if k == n {
        extend(out, values.as_vref(), 0..n);
        return;
    }
    for i in 0..n {
        extend(out, values.as_vref(), i % k..i % k + 1);
    }
}

/// Reserves room for `n` more values, failing instead of aborting when memory runs out.
pub(crate) fn reserve(out: &mut Values, n: usize) -> Result<()> {
    let r = match out {
        Values::Float(v) => v.try_reserve(n),
        Values::Int64(v) => v.try_reserve(n),
        Values::Bytes(v) => v.try_reserve(n),
    };
    r.map_err(|_| RecordsError::ResourceExhausted(format!("cannot allocate {n} output values")))
}

/// What one example gave for each feature key: `None` where absent.
pub(crate) type Row = Vec<Option<Option<Values>>>;

/// Per-example access to the decoded features of a batch, whichever way it was decoded.
pub(crate) trait Columns: Sync {
    /// The number of examples.
    fn rows(&self) -> usize;
    /// Example `i`'s list for key `slot` (`None`: absent or with no list).
    fn get(&self, slot: usize, i: usize) -> Option<VRef<'_>>;
}

/// Rows of owned values (the sequence parser's context).
pub(crate) struct RowCols<'a>(pub(crate) &'a [Row]);

impl Columns for RowCols<'_> {
    fn rows(&self) -> usize {
        self.0.len()
    }

    fn get(&self, slot: usize, i: usize) -> Option<VRef<'_>> {
        match &self.0[i][slot] {
            Some(Some(v)) => Some(v.as_vref()),
            _ => None,
        }
    }
}

/// Chunks of examples decoded into flat column buffers (`parse_example`).
struct ChunkCols {
    /// Examples per chunk (the last may hold fewer).
    chunk: usize,
    /// Per chunk, per key slot.
    chunks: Vec<Vec<ColumnBuf>>,
    rows: usize,
}

impl Columns for ChunkCols {
    fn rows(&self) -> usize {
        self.rows
    }

    fn get(&self, slot: usize, i: usize) -> Option<VRef<'_>> {
        self.chunks[i / self.chunk][slot].get(i % self.chunk)
    }
}

/// Decodes `examples` into one column buffer per key.
fn decode_chunk(
    plan: &Plan<'_>,
    examples: &[Bytes],
    fast: &mut [FastOut<'_>],
) -> Result<(Vec<ColumnBuf>, bool)> {
    let mut cols: Vec<ColumnBuf> = (0..plan.keys.len()).map(|_| ColumnBuf::default()).collect();
    let mut last: Vec<Option<(usize, usize)>> = vec![None; plan.keys.len()];
    // Per key slot, its fast output, if any; per fast output, whether this example's list was
    // written straight into it.
    let mut fast_of: Vec<Option<usize>> = vec![None; plan.keys.len()];
    for (i, f) in fast.iter().enumerate() {
        fast_of[f.slot] = Some(i);
    }
    let mut direct = vec![false; fast.len()];
    let mut anomaly = false;
    for (e, serialized) in examples.iter().enumerate() {
        last.iter_mut().for_each(|l| *l = None);
        walk_example(serialized, &mut |key, range| {
            if let Some(i) = plan.find(key) {
                last[i] = Some(range);
            }
        })
        .map_err(|_| unparsable(serialized))?;
        for (slot, (col, range)) in cols.iter_mut().zip(&last).enumerate() {
            match range {
                None => col.entries.push(None),
                Some(r) => {
                    if let Some(i) = fast_of[slot] {
                        if fast[i].write_direct(&serialized[r.0..r.1], e) {
                            col.entries.push(None);
                            direct[i] = true;
                            continue;
                        }
                    }
                    decode_feature_into(serialized, *r, col).map_err(|_| unparsable(serialized))?
                }
            }
        }
        for (f, d) in fast.iter_mut().zip(direct.iter_mut()) {
            if std::mem::take(d) {
                continue;
            }
            anomaly |= !f.take(&mut cols[f.slot], e);
        }
    }
    Ok((cols, anomaly))
}

/// A dense float or int64 feature decoded straight into its output: each example's list is
/// copied (while still in cache) from the chunk's column buffer into the output, and the
/// buffer is emptied again, so the buffer stays small and the output is written once.
struct FastOut<'a> {
    slot: usize,
    n: usize,
    default: Option<&'a Values>,
    out: FastSlice<'a>,
}

enum FastSlice<'a> {
    Float(&'a mut [f32]),
    Int64(&'a mut [i64]),
}

impl FastSlice<'_> {
    /// The output in consecutive parts of `step` elements (the last may be shorter).
    fn parts(&mut self, step: usize) -> Vec<FastSlice<'_>> {
        match self {
            FastSlice::Float(out) => out.chunks_mut(step).map(FastSlice::Float).collect(),
            FastSlice::Int64(out) => out.chunks_mut(step).map(FastSlice::Int64).collect(),
        }
    }
}

impl FastOut<'_> {
    /// Writes example `e`'s list straight from its `Feature` message when that is the one
    /// packed list of the right type and length (the common case: no copy through the chunk's
    /// column buffer); `false` for anything else, which [`FastOut::take`] then decides.
    fn write_direct(&mut self, feature: &[u8], e: usize) -> bool {
        let n = self.n;
        match &mut self.out {
            FastSlice::Float(out) => {
                let Some(packed) = single_packed(feature, Kind::Float) else {
                    return false;
                };
                if packed.len() != n * 4 {
                    return false;
                }
                let dst = &mut out[e * n..e * n + n];
                if cfg!(target_endian = "little") {
                    bytemuck::cast_slice_mut::<f32, u8>(dst).copy_from_slice(packed);
                } else {
                    for (d, c) in dst.iter_mut().zip(packed.chunks_exact(4)) {
                        *d = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    }
                }
                true
            }
            FastSlice::Int64(out) => {
                let Some(packed) = single_packed(feature, Kind::Int64) else {
                    return false;
                };
                let dst = &mut out[e * n..e * n + n];
                let mut c = crate::wire::Cursor::new(packed);
                for d in dst.iter_mut() {
                    match c.varint() {
                        Ok(v) => *d = v as i64,
                        Err(_) => return false,
                    }
                }
                // Exactly `n` values: more (or a malformed tail) goes to the general path.
                c.done()
            }
        }
    }

    /// Moves example `e`'s entry of `col` to the output; `false` where the general path must
    /// decide (a missing feature without default, another type, another length).
    fn take(&mut self, col: &mut ColumnBuf, e: usize) -> bool {
        let n = self.n;
        let entry = col.entries.pop().flatten();
        let ok = match (&mut self.out, entry, self.default) {
            (FastSlice::Float(out), Some((Kind::Float, start, len)), _) if len == n => {
                out[e * n..e * n + n].copy_from_slice(&col.floats[start..start + n]);
                true
            }
            (FastSlice::Int64(out), Some((Kind::Int64, start, len)), _) if len == n => {
                out[e * n..e * n + n].copy_from_slice(&col.ints[start..start + n]);
                true
            }
            (FastSlice::Float(out), None, Some(Values::Float(d))) if !d.is_empty() => {
                for (k, x) in out[e * n..e * n + n].iter_mut().enumerate() {
                    *x = d[k % d.len()];
                }
                true
            }
            (FastSlice::Int64(out), None, Some(Values::Int64(d))) if !d.is_empty() => {
                for (k, x) in out[e * n..e * n + n].iter_mut().enumerate() {
                    *x = d[k % d.len()];
                }
                true
            }
            _ => false,
        };
        col.floats.clear();
        col.ints.clear();
        col.bytes.clear();
        col.entries.push(None);
        ok
    }
}

/// The keys to read and, per spec, which of them it needs.
pub(crate) struct Plan<'a> {
    pub(crate) keys: Vec<&'a str>,
    pub(crate) index: HashMap<&'a [u8], usize>,
}

/// The feature keys spec `name` reads: its own name, or a ragged feature's value key (its
/// name by default) and its partitions' keys.
fn keys_read<'a>(name: &'a str, spec: &'a FeatureSpec) -> impl Iterator<Item = &'a str> {
    let (first, partitions): (&str, &[Partition]) = match spec {
        FeatureSpec::Ragged {
            value_key,
            partitions,
            ..
        } => (value_key.as_deref().unwrap_or(name), partitions),
        _ => (name, &[]),
    };
    std::iter::once(first).chain(partitions.iter().filter_map(Partition::key))
}

impl<'a> Plan<'a> {
    pub(crate) fn new(specs: &'a [(String, FeatureSpec)]) -> Self {
        let mut keys: Vec<&str> = Vec::new();
        let add = |k: &'a str, keys: &mut Vec<&'a str>| {
            if !keys.contains(&k) {
                keys.push(k);
            }
        };
        for (name, spec) in specs {
            for k in keys_read(name, spec) {
                add(k, &mut keys);
            }
        }
        let index = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.as_bytes(), i))
            .collect();
        Plan { keys, index }
    }

    /// The slot of `key`, if wanted: a linear scan for a few keys (cheaper than hashing
    /// every key of every example), the hash map past that.
    pub(crate) fn find(&self, key: &[u8]) -> Option<usize> {
        if self.keys.len() <= 8 {
            self.keys.iter().position(|k| same_key(k.as_bytes(), key))
        } else {
            self.index.get(key).copied()
        }
    }

    fn slot(&self, key: &str) -> usize {
        self.index[key.as_bytes()]
    }
}

/// `a == b`, byte by byte for short keys: a feature name is a few bytes, and a call to
/// `memcmp` per feature of every example cost 3% of parsing a batch (perf).
#[inline]
fn same_key(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() > 16 {
        return a == b;
    }
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= x ^ y;
    }
    diff == 0
}

pub(crate) fn unparsable(serialized: &[u8]) -> RecordsError {
    RecordsError::invalid(format!(
        "Could not parse example input, value: '{}'",
        String::from_utf8_lossy(serialized)
    ))
}

pub(crate) fn name_of(names: Option<&[String]>, i: usize) -> &str {
    names
        .and_then(|n| n.get(i))
        .map_or("<unknown>", |s| s.as_str())
}

/// Parses a batch of serialized `Example`s as `tf.io.parse_example` (its `ParseExampleV2`
/// kernel) does: one result per spec, in the order of `specs`. `names` (optional, one per
/// example) are used in error messages, as `example_names`. Large batches are decoded in
/// parallel (rayon).
///
/// ```
/// use tensorcast_core::{DataType, Tensor};
/// use tensorcast_proto::example::{feature::Kind, Example, Feature, Features, FloatList};
/// use tensorcast_proto::Message;
/// use tensorcast_records::{parse_example, FeatureSpec, Parsed};
///
/// let mut f = Features::default();
/// f.feature.insert("x".into(), Feature { kind: Some(Kind::FloatList(FloatList { value: vec![1.0, 2.0] })) });
/// let ex = bytes::Bytes::from(Example { features: Some(f) }.encode_to_vec());
/// let specs = vec![(
///     "x".to_string(),
///     FeatureSpec::FixedLen { shape: vec![2], dtype: DataType::FLOAT, default_value: None },
/// )];
/// let out = parse_example(&[ex.clone(), ex], None, &specs)?;
/// assert_eq!(out[0].1, Parsed::Dense(Tensor::from_vec(vec![1.0f32, 2.0, 1.0, 2.0], [2i64, 2].as_slice())?));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`RecordsError::InvalidArgument`] with TensorFlow's text: an example that does not parse
/// (`Could not parse example input, value: '...'`), a required feature missing (`Name:
/// <unknown>, Feature: x (data type: float) is required but could not be found.`), a list of
/// the wrong type (`... Data types don't match. ...`) or of the wrong length (`... Number of
/// float values != expected. ...`), an unsupported dtype.
pub fn parse_example(
    serialized: &[Bytes],
    names: Option<&[String]>,
    specs: &[(String, FeatureSpec)],
) -> Result<Vec<(String, Parsed)>> {
    let plan = Plan::new(specs);
    if let Some(out) = parse_dense_fast(serialized, names, specs, &plan)? {
        return Ok(out);
    }
    let (chunks, _) = decode_chunks(serialized, &plan, &mut [])?;
    let cols = ChunkCols {
        chunk: CHUNK,
        chunks,
        rows: serialized.len(),
    };
    specs
        .iter()
        .map(|(name, spec)| Ok((name.clone(), build(name, spec, &plan, &cols, names)?)))
        .collect()
}

/// Examples per chunk of a batch: chunks are decoded in parallel when there are several.
const CHUNK: usize = 512;

/// Decodes a batch in chunks (in parallel when there are several), with the fast dense
/// outputs `fast` (each split into the chunks' parts); the chunks' columns and whether a fast
/// output met a case it leaves to the general path.
fn decode_chunks(
    serialized: &[Bytes],
    plan: &Plan<'_>,
    fast: &mut [FastOut<'_>],
) -> Result<(Vec<Vec<ColumnBuf>>, bool)> {
    if serialized.len() <= CHUNK {
        let (cols, anomaly) = decode_chunk(plan, serialized, fast)?;
        return Ok((vec![cols], anomaly));
    }
    // Split each fast output into per-chunk parts, then regroup them by chunk.
    let n_chunks = serialized.len().div_ceil(CHUNK);
    let mut per_chunk: Vec<Vec<FastOut<'_>>> = (0..n_chunks).map(|_| Vec::new()).collect();
    for f in fast.iter_mut() {
        let (slot, n, default) = (f.slot, f.n, f.default);
        let step = (CHUNK * n).max(1);
        for (c, out) in f.out.parts(step).into_iter().enumerate() {
            per_chunk[c].push(FastOut {
                slot,
                n,
                default,
                out,
            });
        }
    }
    let results: Vec<(Vec<ColumnBuf>, bool)> = serialized
        .par_chunks(CHUNK)
        .zip(per_chunk.into_par_iter())
        .map(|(c, mut f)| decode_chunk(plan, c, &mut f))
        .collect::<Vec<Result<_>>>()
        .into_iter()
        // The first failing chunk's error, as a serial decode would report it.
        .collect::<Result<_>>()?;
    let anomaly = results.iter().any(|r| r.1);
    Ok((results.into_iter().map(|r| r.0).collect(), anomaly))
}

/// `parse_example` where some specs are dense float/int64 features: those are decoded
/// straight into their outputs. `None` when a case needs the general path (which then gives
/// the same results, and the errors in TensorFlow's order).
fn parse_dense_fast(
    serialized: &[Bytes],
    names: Option<&[String]>,
    specs: &[(String, FeatureSpec)],
    plan: &Plan<'_>,
) -> Result<Option<Vec<(String, Parsed)>>> {
    // A key read by one spec only (emptying its buffer must not starve another).
    let mut uses = vec![0usize; plan.keys.len()];
    for (name, spec) in specs {
        for k in keys_read(name, spec) {
            uses[plan.slot(k)] += 1;
        }
    }
    let b = serialized.len();
    let mut defaults: Vec<Option<Values>> = Vec::new();
    let mut chosen: Vec<(usize, usize, usize, Kind)> = Vec::new(); // spec, slot, n, kind
    for (si, (name, spec)) in specs.iter().enumerate() {
        if let FeatureSpec::FixedLen {
            shape,
            dtype,
            default_value,
        } = spec
        {
            let kind = kind_of(*dtype)?;
            let slot = plan.slot(name);
            if kind == Kind::Bytes || uses[slot] != 1 {
                continue;
            }
            let n = checked_count(shape)?;
            if n == 0 || n.checked_mul(b).is_none_or(|t| t > (1 << 28)) {
                continue;
            }
            defaults.push(match default_value {
                Some(t) => Some(default_values(t, kind)?),
                None => None,
            });
            chosen.push((si, slot, n, kind));
        }
    }
    if chosen.is_empty() {
        return Ok(None);
    }
    // The outputs come from the CPU allocator, whose free-block cache hands a batch the blocks
    // of the batches before it: no fresh pages to fault in and clear for every batch.
    let mut outputs = Vec::with_capacity(chosen.len());
    for &(si, _, _, kind) in &chosen {
        let FeatureSpec::FixedLen { shape, .. } = &specs[si].1 else {
            unreachable!("only FixedLen specs are chosen")
        };
        let mut dims = vec![b as i64];
        dims.extend_from_slice(shape);
        let dtype = match kind {
            Kind::Float => DataType::FLOAT,
            _ => DataType::INT64,
        };
        // Every element is written below (or the outputs are dropped): no zero fill first.
        outputs.push(
            Tensor::for_overwrite(dtype, dims.as_slice())
                .map_err(|e| RecordsError::invalid(e.to_string()))?,
        );
    }
    let (chunks, anomaly) = {
        let mut fast: Vec<FastOut<'_>> = Vec::with_capacity(chosen.len());
        for ((&(_, slot, n, kind), d), t) in chosen.iter().zip(&defaults).zip(&mut outputs) {
            let fresh = |e: tensorcast_core::Error| RecordsError::invalid(e.to_string());
            let out = match kind {
                Kind::Float => FastSlice::Float(t.as_mut_slice::<f32>().map_err(fresh)?),
                _ => FastSlice::Int64(t.as_mut_slice::<i64>().map_err(fresh)?),
            };
            fast.push(FastOut {
                slot,
                n,
                default: d.as_ref(),
                out,
            });
        }
        decode_chunks(serialized, plan, &mut fast)?
    };
    if anomaly {
        return Ok(None);
    }
    let cols = ChunkCols {
        chunk: CHUNK,
        chunks,
        rows: b,
    };
    let mut fast_results: Vec<Option<Parsed>> = specs.iter().map(|_| None).collect();
    for (&(si, ..), t) in chosen.iter().zip(outputs) {
        fast_results[si] = Some(Parsed::Dense(t));
    }
    let mut out = Vec::with_capacity(specs.len());
    for ((name, spec), fast) in specs.iter().zip(fast_results) {
        let parsed = match fast {
            Some(p) => p,
            None => build(name, spec, plan, &cols, names)?,
        };
        out.push((name.clone(), parsed));
    }
    Ok(Some(out))
}

/// Parses one serialized `Example` as `tf.io.parse_single_example`: the results of
/// [`parse_example`] on a batch of one, without the batch dimension.
///
/// # Errors
/// As [`parse_example`], with the texts of TensorFlow's single-example parser (no `Name:`
/// prefix; `Key: v.  Can't parse serialized Example: Some int64_list slice was not parsed.`
/// for too many values).
pub fn parse_single_example(
    serialized: &Bytes,
    specs: &[(String, FeatureSpec)],
) -> Result<Vec<(String, Parsed)>> {
    let out =
        parse_example(std::slice::from_ref(serialized), None, specs).map_err(|e| match e {
            RecordsError::InvalidArgument(m) => RecordsError::InvalidArgument(single_text(m)),
            e => e,
        })?;
    out.into_iter()
        .map(|(name, p)| Ok((name, unbatch(p)?)))
        .collect()
}

/// TensorFlow's single-example parser words some errors differently.
fn single_text(m: String) -> String {
    let m = m
        .strip_prefix("Name: <unknown>, ")
        .map_or(m.clone(), str::to_string);
    let Some(rest) = m.strip_prefix("Key: ") else {
        return m;
    };
    let Some((key, tail)) = rest.split_once(", Index: 0.  ") else {
        return m;
    };
    if let Some(counts) = parse_count_text(tail) {
        // A dense feature of the wrong length: the single parser stops at the list.
        let list = if counts.ty == "string" {
            "bytes"
        } else {
            counts.ty
        };
        return format!(
            "Key: {key}.  Can't parse serialized Example: Some {list}_list slice was not parsed."
        );
    }
    if let Some(rest) = tail.strip_prefix("Number of ") {
        // "<type> values is not a multiple of stride length. Saw N values but output shape
        // is: [?,S]".
        if let Some((_, saw)) = rest.split_once(" values is not a multiple of stride length. Saw ")
        {
            if let Some((n, shape)) = saw.split_once(" values but output shape is: ") {
                let stride: i64 =
                    shape_product(shape.trim_start_matches("[?").trim_start_matches(','));
                return format!(
                    "Error while parsing feature with key {key}: number of elements should be divisible by {stride}, found {n} instead"
                );
            }
        }
    }
    format!("Key: {key}.  {tail}")
}

/// The product of the dims of a shape text (`[2,3]` -> 6, `[]` -> 1).
pub(crate) fn shape_product(shape: &str) -> i64 {
    shape
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<i64>().unwrap_or(0))
        .product()
}

/// The parts of a dense count error's text (`Number of <ty> values != expected.  Values
/// size: <got> but output shape: <shape>`).
pub(crate) struct CountText<'a> {
    pub(crate) ty: &'a str,
    pub(crate) got: &'a str,
    pub(crate) shape: &'a str,
}

pub(crate) fn parse_count_text(tail: &str) -> Option<CountText<'_>> {
    let rest = tail.strip_prefix("Number of ")?;
    let (ty, sizes) = rest.split_once(" values != expected.  Values size: ")?;
    let (got, shape) = sizes.split_once(" but output shape: ")?;
    Some(CountText { ty, got, shape })
}

/// Drops the batch dimension of a batch-of-one result.
fn unbatch(p: Parsed) -> Result<Parsed> {
    let bad = |e: tensorcast_core::Error| RecordsError::invalid(e.to_string());
    Ok(match p {
        Parsed::Dense(t) => {
            let dims: Vec<i64> = t.shape().dim_sizes()[1..].to_vec();
            Parsed::Dense(t.reshape(dims.as_slice()).map_err(bad)?)
        }
        Parsed::Sparse {
            indices,
            values,
            dense_shape,
        } => {
            let idx = indices.as_slice::<i64>().map_err(bad)?;
            let n = values.shape().dim_sizes()[0];
            let col: Vec<i64> = idx.chunks_exact(2).map(|c| c[1]).collect();
            let ds = dense_shape.as_slice::<i64>().map_err(bad)?;
            Parsed::Sparse {
                indices: Tensor::from_vec(col, [n, 1].as_slice()).map_err(bad)?,
                values,
                dense_shape: Tensor::from_vec(ds[1..].to_vec(), [1i64].as_slice()).map_err(bad)?,
            }
        }
        Parsed::Ragged {
            flat_values,
            mut row_splits,
        } => {
            if row_splits.len() == 1 {
                Parsed::Dense(flat_values)
            } else {
                row_splits.remove(0);
                Parsed::Ragged {
                    flat_values,
                    row_splits,
                }
            }
        }
    })
}

fn type_mismatch_dense(name: &str, key: &str, i: usize, got: Kind, want: Kind) -> RecordsError {
    RecordsError::invalid(format!(
        "Name: {name}, Key: {key}, Index: {i}.  Data types don't match. Data type: {} but expected type: {}",
        got.tf_name(),
        want.tf_name()
    ))
}

fn type_mismatch_var(name: &str, key: &str, i: usize, got: Kind, want: Kind) -> RecordsError {
    RecordsError::invalid(format!(
        "Name: {name}, Key: {key}, Index: {i}.  Data types don't match. Expected type: {}, Actual type: {}",
        want.tf_name(),
        got.tf_name()
    ))
}

pub(crate) fn values_kind(v: &Values) -> Kind {
    match v {
        Values::Float(_) => Kind::Float,
        Values::Int64(_) => Kind::Int64,
        Values::Bytes(_) => Kind::Bytes,
    }
}

pub(crate) fn checked_count(dims: &[i64]) -> Result<usize> {
    let mut n: usize = 1;
    for &d in dims {
        let d = usize::try_from(d).map_err(|_| {
            RecordsError::invalid(format!("invalid dimension {d} in a feature shape"))
        })?;
        n = n
            .checked_mul(d)
            .ok_or_else(|| RecordsError::invalid("feature shape too large"))?;
    }
    Ok(n)
}

/// The values of feature `key` in each example (`None`: absent or with no list), checking
/// the kind with `mismatch`.
fn column<'r>(
    rows: &'r dyn Columns,
    slot: usize,
    key: &str,
    kind: Kind,
    names: Option<&[String]>,
    mismatch: fn(&str, &str, usize, Kind, Kind) -> RecordsError,
) -> Result<Vec<Option<VRef<'r>>>> {
    (0..rows.rows())
        .map(|i| match rows.get(slot, i) {
            Some(v) if v.kind() != kind => Err(mismatch(name_of(names, i), key, i, v.kind(), kind)),
            v => Ok(v),
        })
        .collect()
}

pub(crate) fn build(
    name: &str,
    spec: &FeatureSpec,
    plan: &Plan<'_>,
    rows: &dyn Columns,
    names: Option<&[String]>,
) -> Result<Parsed> {
    let batch = rows.rows() as i64;
    let bad = |e: tensorcast_core::Error| RecordsError::invalid(e.to_string());
    // A dense feature's values in every example, each checked to be of `kind`.
    let dense_column = |kind: Kind| {
        column(
            rows,
            plan.slot(name),
            name,
            kind,
            names,
            type_mismatch_dense,
        )
    };
    match spec {
        FeatureSpec::FixedLen {
            shape,
            dtype,
            default_value,
        } => {
            let kind = kind_of(*dtype)?;
            let n = checked_count(shape)?;
            let default = match default_value {
                Some(t) => Some(default_values(t, kind)?),
                None => None,
            };
            let col = dense_column(kind)?;
            let mut out = empty_values(kind);
            let total = n.checked_mul(rows.rows()).ok_or_else(|| {
                RecordsError::ResourceExhausted(format!("{} examples of {n} values", rows.rows()))
            })?;
            reserve(&mut out, total)?;
            for (i, v) in col.iter().enumerate() {
                match (v, &default) {
                    (Some(v), _) if v.len() == n => extend(&mut out, *v, 0..n),
                    (Some(v), _) => {
                        return Err(RecordsError::invalid(format!(
                            "Name: {}, Key: {name}, Index: {i}.  Number of {} values != expected.  Values size: {} but output shape: {}",
                            name_of(names, i),
                            kind.tf_name(),
                            v.len(),
                            shape_string(shape)
                        )))
                    }
                    (None, Some(d)) => extend_cycled(&mut out, d, n),
                    (None, None) => {
                        return Err(RecordsError::invalid(format!(
                            "Name: {}, Feature: {name} (data type: {}) is required but could not be found.",
                            name_of(names, i),
                            kind.tf_name()
                        )))
                    }
                }
            }
            let mut dims = vec![batch];
            dims.extend_from_slice(shape);
            Ok(Parsed::Dense(to_tensor(out, &dims)?))
        }
        FeatureSpec::FixedLenSequence {
            shape,
            dtype,
            default_value,
            ..
        } => {
            let kind = kind_of(*dtype)?;
            let stride = checked_count(shape)?;
            let col = dense_column(kind)?;
            let mut max_rows = 0usize;
            for (i, v) in col.iter().enumerate() {
                let len = v.map_or(0, |v| v.len());
                if stride == 0 || len % stride != 0 {
                    return Err(RecordsError::invalid(format!(
                        "Name: {}, Key: {name}, Index: {i}.  Number of {} values is not a multiple of stride length. Saw {len} values but output shape is: {}",
                        name_of(names, i),
                        kind.tf_name(),
                        shape_string(shape).replacen('[', "[?,", 1).replace(",]", "]")
                    )));
                }
                max_rows = max_rows.max(len / stride);
            }
            let pad = sequence_padding(default_value.as_ref(), kind)?;
            let per = max_rows * stride;
            let mut out = empty_values(kind);
            for v in &col {
                let len = v.map_or(0, |v| v.len());
                if let Some(v) = v {
                    extend(&mut out, *v, 0..len);
                }
                extend_cycled(&mut out, &pad, per - len);
            }
            let mut dims = vec![batch, max_rows as i64];
            dims.extend_from_slice(shape);
            Ok(Parsed::Dense(to_tensor(out, &dims)?))
        }
        FeatureSpec::VarLen { dtype } => {
            let kind = kind_of(*dtype)?;
            let col = column(rows, plan.slot(name), name, kind, names, type_mismatch_var)?;
            let mut indices = Vec::new();
            let mut out = empty_values(kind);
            // Strings are gathered by reference and copied once, into the output.
            let mut strings: Vec<&Bytes> = Vec::new();
            let mut max_len = 0usize;
            for (i, v) in col.iter().enumerate() {
                if let Some(v) = v {
                    for j in 0..v.len() {
                        indices.push(i as i64);
                        indices.push(j as i64);
                    }
                    match v {
                        VRef::Bytes(s) => strings.extend(s.iter()),
                        _ => extend(&mut out, *v, 0..v.len()),
                    }
                    max_len = max_len.max(v.len());
                }
            }
            let n = (indices.len() / 2) as i64;
            let values = if kind == Kind::Bytes {
                Tensor::from_vec(own_strings(&strings), [n].as_slice()).map_err(bad)?
            } else {
                to_tensor(out, &[n])?
            };
            Ok(Parsed::Sparse {
                indices: Tensor::from_vec(indices, [n, 2].as_slice()).map_err(bad)?,
                values,
                dense_shape: Tensor::vector(&[batch, max_len as i64]),
            })
        }
        FeatureSpec::Ragged {
            dtype,
            value_key,
            partitions,
            row_splits_dtype,
        } => build_ragged(
            name,
            *dtype,
            value_key.as_deref().unwrap_or(name),
            partitions,
            *row_splits_dtype,
            plan,
            rows,
            names,
        ),
    }
}

#[allow(
    clippy::too_many_arguments,
    reason = "one call site, the spec's fields"
)]
fn build_ragged(
    name: &str,
    dtype: DataType,
    value_key: &str,
    partitions: &[Partition],
    splits_dtype: DataType,
    plan: &Plan<'_>,
    rows: &dyn Columns,
    names: Option<&[String]>,
) -> Result<Parsed> {
    let kind = kind_of(dtype)?;
    if splits_dtype != DataType::INT32 && splits_dtype != DataType::INT64 {
        return Err(RecordsError::invalid(
            "row_splits_dtype must be int32 or int64",
        ));
    }
    let col = column(
        rows,
        plan.slot(value_key),
        value_key,
        kind,
        names,
        type_mismatch_var,
    )?;
    // As TensorFlow builds the ragged tensor: the values of every example in one list, then
    // each partition applied from the innermost out over the whole batch. `outer[i]` is where
    // example `i`'s items of the current level start; `levels` the splits below it.
    let mut flat = empty_values(kind);
    let mut outer: Vec<i64> = Vec::with_capacity(rows.rows() + 1);
    outer.push(0);
    for v in &col {
        let n = v.map_or(0, |v| v.len());
        if let Some(v) = v {
            extend(&mut flat, *v, 0..n);
        }
        outer.push(outer[outer.len() - 1].wrapping_add(n as i64));
    }
    let mut inner_dims: Vec<i64> = Vec::new();
    let mut levels: Vec<Vec<i64>> = Vec::new();
    for p in partitions.iter().rev() {
        let total = outer[outer.len() - 1];
        let Some(key) = p.key() else {
            let Partition::UniformRowLength(k) = p else {
                unreachable!("only UniformRowLength has no key")
            };
            let k = *k;
            if k <= 0 {
                return Err(RecordsError::invalid("UniformRowLength must be positive"));
            }
            if levels.is_empty() {
                // The flat values become `[-1, k, inner...]`.
                let inner: i64 = inner_dims.iter().product();
                if total % k != 0 {
                    return Err(RecordsError::invalid(format!(
                        "Input to reshape is a tensor with {} values, but the requested shape requires a multiple of {}",
                        total.wrapping_mul(inner),
                        k.wrapping_mul(inner)
                    )));
                }
                inner_dims.insert(0, k);
            } else {
                levels.insert(0, (0..=total / k).map(|r| r * k).collect());
            }
            for o in &mut outer {
                *o /= k;
            }
            continue;
        };
        let pc = column(
            rows,
            plan.slot(key),
            key,
            Kind::Int64,
            names,
            type_mismatch_var,
        )?;
        let vals = |i: usize| -> &[i64] {
            match pc[i] {
                Some(VRef::Int64(v)) => v,
                _ => &[],
            }
        };
        let mut next: Vec<i64> = Vec::with_capacity(outer.len());
        next.push(0);
        let mut level: Vec<i64> = Vec::new();
        match p {
            Partition::RowLengths(_) => {
                level.push(0);
                let mut acc = 0i64;
                for i in 0..pc.len() {
                    for l in vals(i) {
                        acc = acc.wrapping_add(*l);
                        level.push(acc);
                    }
                    next.push(next[i].wrapping_add(vals(i).len() as i64));
                }
            }
            Partition::RowSplits(_) | Partition::RowLimits(_) => {
                // Limits (splits without their first entry), moved by where the example's
                // items start.
                level.push(0);
                for i in 0..pc.len() {
                    let v = vals(i);
                    let limits = if matches!(p, Partition::RowSplits(_)) {
                        v.get(1..).unwrap_or(&[])
                    } else {
                        v
                    };
                    level.extend(limits.iter().map(|x| x.wrapping_add(outer[i])));
                    next.push(next[i].wrapping_add(limits.len() as i64));
                }
            }
            Partition::RowStarts(_) => {
                for i in 0..pc.len() {
                    level.extend(vals(i).iter().map(|x| x.wrapping_add(outer[i])));
                    next.push(next[i].wrapping_add(vals(i).len() as i64));
                }
                level.push(total);
            }
            Partition::ValueRowIds(_) => {
                // Each example has (its largest id + 1) rows; its ids move past the rows of
                // the examples before it. The rows of the batch are counted up to the last id.
                let mut ids: Vec<i64> = Vec::new();
                let mut offset = 0i64;
                for i in 0..pc.len() {
                    let v = vals(i);
                    let n = v
                        .iter()
                        .map(|x| x.wrapping_add(1))
                        .max()
                        .map_or(0, |m| m.max(0));
                    ids.extend(v.iter().map(|x| x.wrapping_add(offset)));
                    offset = offset.wrapping_add(n);
                    next.push(next[i].wrapping_add(n));
                }
                if ids.iter().any(|x| *x < 0) {
                    return Err(RecordsError::invalid("Input arr must be non-negative!"));
                }
                let nrows = ids.last().map_or(0, |x| x.wrapping_add(1));
                if !(0..=MAX_VALUE_ROWID_ROWS).contains(&nrows) {
                    return Err(RecordsError::invalid(format!(
                        "Feature {name}: value row ids ask for {nrows} rows, more than the {MAX_VALUE_ROWID_ROWS} tensorcast allows"
                    )));
                }
                let mut counts = vec![0i64; nrows as usize];
                for x in ids {
                    if let Some(c) = counts.get_mut(x as usize) {
                        *c += 1;
                    }
                }
                level.push(0);
                let mut acc = 0i64;
                for c in counts {
                    acc += c;
                    level.push(acc);
                }
            }
            Partition::UniformRowLength(_) => unreachable!("handled above"),
        }
        levels.insert(0, level);
        outer = next;
    }
    levels.insert(0, outer);
    let mut row_splits = Vec::with_capacity(levels.len());
    for s in levels {
        let len = s.len() as i64;
        let t = if splits_dtype == DataType::INT32 {
            Tensor::from_vec(
                s.into_iter().map(|x| x as i32).collect::<Vec<_>>(),
                [len].as_slice(),
            )
        } else {
            Tensor::from_vec(s, [len].as_slice())
        };
        row_splits.push(t.map_err(|e| RecordsError::invalid(e.to_string()))?);
    }
    let count = flat.len() as i64;
    let inner: i64 = inner_dims.iter().product();
    let mut shape = vec![count / inner];
    shape.extend(inner_dims);
    let flat_values = to_tensor(flat, &shape)?;
    Ok(Parsed::Ragged {
        flat_values,
        row_splits,
    })
}

/// The specs as a map, for callers that look results up by name.
pub fn by_name(parsed: Vec<(String, Parsed)>) -> BTreeMap<String, Parsed> {
    parsed.into_iter().collect()
}
