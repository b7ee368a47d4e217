//! safetensors files: an 8-byte little-endian header length `N`, `N` bytes of JSON, then the
//! tensors' bytes back to back.
//!
//! The header maps each tensor name to `{"dtype": "F32", "shape": [2, 3], "data_offsets":
//! [begin, end]}` (offsets relative to the first data byte), plus an optional
//! `"__metadata__"` object of string to string.
//!
//! - **Reading is zero-copy**: each tensor is a [`Buffer`] slice of the input (the memory
//!   map, for [`crate::read_file`]) when its address suits the dtype; writers pad the header
//!   to a multiple of 8 and sort tensors by decreasing alignment, so in files written by the
//!   reference implementation (and by this one) every tensor is aligned. A misaligned tensor
//!   is copied into an aligned buffer. `F4` is the exception: safetensors packs two 4-bit
//!   values per byte, tensorcast keeps one per byte, so `F4` tensors are unpacked (a copy).
//! - **Validation** (the header is untrusted): `N` at most [`MAX_HEADER_BYTES`] (100 MB, as
//!   the reference implementation) and inside the file, UTF-8 JSON starting with `{`, every
//!   entry well-formed, offsets contiguous from 0 with no overlap or gap, `end` equal to the
//!   data length exactly, and `shape x dtype size == end - begin` for every tensor, with
//!   overflow checks.
//! - **dtypes**, by the current format's names: `BOOL`, `U8`, `I8`, `I16`, `U16`, `I32`,
//!   `U32`, `I64`, `U64`, `F16` (half), `BF16`, `F32`, `F64`, `C64` (complex64), `F8_E5M2`,
//!   `F8_E4M3` (float8_e4m3fn), `F8_E4M3FNUZ`, `F8_E5M2FNUZ`, `F4` (float4_e2m1fn, packed two
//!   per byte, first element in the low nibble). `F6_E2M3`, `F6_E3M2` and `F8_E8M0` are
//!   refused on read (tensorcast has no such dtype); tensorcast dtypes with no safetensors
//!   name (complex128, quantized, int4/int2, float8_e4m3b11fnuz, string, resource, variant)
//!   are refused on write.
//! - **Writing** follows the reference implementation: tensors are laid out by decreasing
//!   element size (stable, so tensors of equal size keep their order), the JSON is compact
//!   with `__metadata__` first, and padded with spaces to a multiple of 8 bytes.
//!
//! ```
//! use tensorcast_core::{bf16, Tensor};
//! use tensorcast_io::{safetensors, NamedTensor};
//! let ts = vec![
//!     NamedTensor::new("w", Tensor::vector(&[bf16::from_f32(1.0), bf16::from_f32(-2.0)])),
//!     NamedTensor::new("step", Tensor::scalar_of(7i64)),
//! ];
//! let bytes = safetensors::write(&ts, None).unwrap();
//! let buf = tensorcast_buffer::Buffer::from_vec(bytes);
//! let back = safetensors::read(buf.clone()).unwrap();
//! // File order is by decreasing element size: the int64 first.
//! assert_eq!(back[0].name, "step");
//! assert_eq!(back[1], ts[0]);
//! // The tensors are slices of the input: no copy.
//! assert!(back[1].tensor.buffer().unwrap().shares_root_with(&buf));
//! ```

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::Value;
use tensorcast_buffer::Buffer;
use tensorcast_core::{DataType, Tensor, TensorShape};

use crate::error::{IoError, Result};
use crate::{util, NamedTensor};

/// The longest header accepted, in bytes (the reference implementation's limit).
pub const MAX_HEADER_BYTES: usize = 100_000_000;

/// Every dtype name of the format, with the tensorcast dtype it maps to (`None`: no
/// counterpart, refused on read).
pub const DTYPES: &[(&str, Option<DataType>)] = &[
    ("BOOL", Some(DataType::BOOL)),
    ("F4", Some(DataType::FLOAT4_E2M1FN)),
    ("F6_E2M3", None),
    ("F6_E3M2", None),
    ("U8", Some(DataType::UINT8)),
    ("I8", Some(DataType::INT8)),
    ("F8_E5M2", Some(DataType::FLOAT8_E5M2)),
    ("F8_E4M3", Some(DataType::FLOAT8_E4M3FN)),
    ("F8_E8M0", None),
    ("F8_E4M3FNUZ", Some(DataType::FLOAT8_E4M3FNUZ)),
    ("F8_E5M2FNUZ", Some(DataType::FLOAT8_E5M2FNUZ)),
    ("I16", Some(DataType::INT16)),
    ("U16", Some(DataType::UINT16)),
    ("F16", Some(DataType::HALF)),
    ("BF16", Some(DataType::BFLOAT16)),
    ("I32", Some(DataType::INT32)),
    ("U32", Some(DataType::UINT32)),
    ("F32", Some(DataType::FLOAT)),
    ("C64", Some(DataType::COMPLEX64)),
    ("F64", Some(DataType::DOUBLE)),
    ("I64", Some(DataType::INT64)),
    ("U64", Some(DataType::UINT64)),
];

/// The tensorcast dtype of a safetensors dtype name.
///
/// # Errors
/// An [`IoError`] of kind [`Unsupported`](crate::ErrorKind::Unsupported) for a name safetensors
/// does not define or one tensorcast has no dtype for (`F8_E8M0`).
///
/// ```
/// use tensorcast_core::DataType;
/// use tensorcast_io::safetensors::dtype_from_name;
/// assert_eq!(dtype_from_name("F8_E4M3")?, DataType::FLOAT8_E4M3FN);
/// assert!(dtype_from_name("F8_E8M0").is_err());
/// # Ok::<(), tensorcast_io::IoError>(())
/// ```
pub fn dtype_from_name(name: &str) -> Result<DataType> {
    match DTYPES.iter().find(|(n, _)| *n == name) {
        Some((_, Some(d))) => Ok(*d),
        Some((_, None)) => Err(IoError::unsupported(format!(
            "unsupported dtype '{name}': tensorcast has no such dtype"
        ))),
        None => Err(IoError::unsupported(format!("unsupported dtype '{name}'"))),
    }
}

/// The safetensors name of a tensorcast dtype.
///
/// # Errors
/// An [`IoError`] of kind [`Unsupported`](crate::ErrorKind::Unsupported) for a dtype safetensors
/// has no name for (complex128, the quantized and sub-byte integers, string, resource...).
///
/// ```
/// use tensorcast_core::DataType;
/// use tensorcast_io::safetensors::dtype_name;
/// assert_eq!(dtype_name(DataType::BFLOAT16)?, "BF16");
/// assert!(dtype_name(DataType::COMPLEX128).is_err());
/// # Ok::<(), tensorcast_io::IoError>(())
/// ```
pub fn dtype_name(dtype: DataType) -> Result<&'static str> {
    DTYPES
        .iter()
        .find(|(_, d)| *d == Some(dtype))
        .map(|(n, _)| *n)
        .ok_or_else(|| {
            IoError::unsupported(format!(
                "unsupported dtype {} for safetensors: the format has no name for it",
                dtype.name()
            ))
        })
}

/// Bits per element in the file (4 for `F4`, else 8 x the dtype size).
fn bits_per_element(dtype: DataType) -> usize {
    if dtype == DataType::FLOAT4_E2M1FN {
        4
    } else {
        dtype.size() * 8
    }
}

/// One tensor entry of a safetensors header.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The tensor's name.
    pub name: String,
    /// The dtype name as written (`F32`).
    pub dtype_name: String,
    /// The tensorcast dtype.
    pub dtype: DataType,
    /// The shape.
    pub shape: TensorShape,
    /// `[begin, end)` relative to the first data byte.
    pub data_offsets: (usize, usize),
}

/// A parsed and validated safetensors header.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Header {
    /// The tensors, in file (data offset) order.
    pub entries: Vec<Entry>,
    /// `__metadata__` (empty if absent).
    pub metadata: BTreeMap<String, String>,
    /// Offset of the first data byte in the file (`8 + N`).
    pub data_start: usize,
    /// Bytes of tensor data the header accounts for (the last `end`).
    pub data_bytes: usize,
}

fn bad(msg: impl std::fmt::Display) -> IoError {
    IoError::corrupt(format!("bad safetensors header: {msg}"))
}

/// A size past what a tensor can have: `TooLarge`, saying "too large".
fn too_large(msg: impl std::fmt::Display) -> IoError {
    IoError::too_large(format!("bad safetensors header: too large: {msg}"))
}

/// One shape entry: a non-negative integer that fits a dimension (`i64`).
fn dimension(d: &Value) -> Result<i64> {
    match d {
        Value::Number(n) => {
            if let Some(d) = n.as_u64() {
                return i64::try_from(d).map_err(|_| {
                    too_large(format!(
                        "shape holds {d}, more than a dimension can be (2**63 - 1)"
                    ))
                });
            }
            if n.as_i64().is_some() {
                return Err(bad(format!("shape holds {n}, a negative dimension")));
            }
            match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f > 0.0 => Err(too_large(format!(
                    "shape holds {n}, more than a dimension can be (2**63 - 1)"
                ))),
                _ => Err(bad(format!("shape holds {n}, not an integer"))),
            }
        }
        other => Err(bad(format!("shape holds {other}, not a number"))),
    }
}

/// Parses and validates the header at the start of `bytes` (the whole file, or at least the
/// first `8 + N` bytes). The data length is checked by [`read()`], which has the whole file.
///
/// # Errors
/// An [`IoError`]: [`Truncated`](crate::ErrorKind::Truncated) when `bytes` end inside the header,
/// [`TooLarge`](crate::ErrorKind::TooLarge) for a header length or a shape past the bounds,
/// [`Corrupt`](crate::ErrorKind::Corrupt) for JSON that is not a valid header (bad shape, offsets
/// that disagree with it), [`Unsupported`](crate::ErrorKind::Unsupported) for an unknown dtype.
pub fn parse_header(bytes: &[u8]) -> Result<Header> {
    let Some(len_field) = bytes.get(..8) else {
        return Err(IoError::truncated(format!(
            "the file has {} bytes, fewer than the 8-byte safetensors header length",
            bytes.len()
        )));
    };
    let mut n8 = [0u8; 8];
    n8.copy_from_slice(len_field);
    let n = u64::from_le_bytes(n8);
    if n > MAX_HEADER_BYTES as u64 {
        return Err(IoError::too_large(format!(
            "header too long: {n} bytes (the limit is {MAX_HEADER_BYTES})"
        )));
    }
    let n = n as usize;
    let Some(text) = bytes.get(8..8 + n) else {
        return Err(IoError::truncated(format!(
            "the header declares {n} bytes, the file has {}",
            bytes.len() - 8
        )));
    };
    // UTF-8 first, as the reference implementation checks it: a header that is not text is a
    // damaged header, not another format.
    let text =
        std::str::from_utf8(text).map_err(|e| bad(format!("invalid UTF-8 in header ({e})")))?;
    if !text.starts_with('{') {
        return Err(IoError::bad_magic(
            "bad magic: not a safetensors file (the header does not start with '{')",
        ));
    }
    let mut header = Header {
        data_start: 8 + n,
        ..Header::default()
    };
    // Streamed: each entry becomes an `Entry` as soon as it is parsed, so the JSON is never
    // held as a whole tree (a tree costs tens of times the text).
    let mut failure = None;
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = serde::Deserializer::deserialize_map(
        &mut de,
        HeaderVisitor {
            header: &mut header,
            failure: &mut failure,
        },
    )
    .and_then(|()| de.end());
    if let Some(e) = failure {
        return Err(e);
    }
    parsed.map_err(|e| bad(format!("bad JSON ({e})")))?;
    // A name given twice: the last entry wins (as when the object is read into a map). After
    // the reversal the last one comes first among equals, the stable sort keeps it so, and
    // `dedup_by` keeps the first of each run.
    header.entries.reverse();
    header.entries.sort_by(|a, b| a.name.cmp(&b.name));
    header.entries.dedup_by(|a, b| a.name == b.name);
    // File order; zero-length tensors share offsets, so break ties by end, then name.
    header.entries.sort_by(|a, b| {
        a.data_offsets
            .cmp(&b.data_offsets)
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut expect = 0usize;
    for e in &header.entries {
        let (begin, end) = e.data_offsets;
        if begin != expect {
            return Err(bad(format!(
                "tensor '{}' starts at {begin}, expected {expect} (tensors must cover the data \
                 without gaps or overlaps)",
                e.name
            )));
        }
        expect = end;
    }
    header.data_bytes = expect;
    Ok(header)
}

/// Builds the header entry by entry as the JSON object is parsed. An error of ours (a bad
/// entry) goes to `failure`, and the parse is stopped with a placeholder serde error.
struct HeaderVisitor<'a> {
    header: &'a mut Header,
    failure: &'a mut Option<IoError>,
}

impl<'de> serde::de::Visitor<'de> for HeaderVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        use serde::de::Error;
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let info: Value = map.next_value()?;
            if name == "__metadata__" {
                let Value::Object(meta) = info else {
                    *self.failure = Some(bad("__metadata__ is not an object"));
                    return Err(A::Error::custom("stop"));
                };
                for (k, v) in meta {
                    let Value::String(v) = v else {
                        *self.failure = Some(bad(format!(
                            "__metadata__ value of '{}' is not a string",
                            crate::escaped(&k)
                        )));
                        return Err(A::Error::custom("stop"));
                    };
                    self.header.metadata.insert(k, v);
                }
                continue;
            }
            match parse_entry(&name, &info) {
                Ok(entry) => self.header.entries.push(entry),
                Err(e) => {
                    *self.failure = Some(e.context(format!("tensor '{}'", crate::escaped(&name))));
                    return Err(A::Error::custom("stop"));
                }
            }
        }
        Ok(())
    }
}

fn parse_entry(name: &str, info: &Value) -> Result<Entry> {
    let Value::Object(info) = info else {
        return Err(bad("entry is not an object"));
    };
    let dtype_name = match info.get("dtype") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(bad("dtype is not a string")),
        None => return Err(bad("no dtype")),
    };
    let dtype = dtype_from_name(&dtype_name)?;
    let dims = match info.get("shape") {
        Some(Value::Array(a)) => a.iter().map(dimension).collect::<Result<Vec<i64>>>()?,
        Some(_) => return Err(bad("shape is not an array")),
        None => return Err(bad("no shape")),
    };
    let offsets: Vec<usize> = match info.get("data_offsets") {
        Some(Value::Array(a)) if a.len() == 2 => a
            .iter()
            .map(|o| {
                o.as_u64()
                    .and_then(|o| usize::try_from(o).ok())
                    .ok_or_else(|| bad(format!("data offset {o} is not a non-negative integer")))
            })
            .collect::<Result<_>>()?,
        Some(_) => return Err(bad("data_offsets is not an array of two integers")),
        None => return Err(bad("no data_offsets")),
    };
    let (begin, end) = (offsets[0], offsets[1]);
    if end < begin {
        return Err(bad(format!(
            "data_offsets [{begin}, {end}] end before they begin"
        )));
    }
    let shape = TensorShape::new(&dims).map_err(|e| too_large(format!("bad shape: {e}")))?;
    let n = usize::try_from(shape.num_elements()).map_err(|_| {
        too_large(format!(
            "shape {shape} has more elements than memory can hold"
        ))
    })?;
    let bits = n.checked_mul(bits_per_element(dtype)).ok_or_else(|| {
        too_large(format!(
            "shape {shape} of {dtype_name}: overflow computing the buffer size"
        ))
    })?;
    if bits % 8 != 0 {
        return Err(bad(format!(
            "{n} elements of {dtype_name} do not fill whole bytes"
        )));
    }
    if bits / 8 != end - begin {
        return Err(bad(format!(
            "shape {shape} of {dtype_name} needs {} bytes, data_offsets [{begin}, {end}] hold {}",
            bits / 8,
            end - begin
        )));
    }
    Ok(Entry {
        name: name.to_string(),
        dtype_name,
        dtype,
        shape,
        data_offsets: (begin, end),
    })
}

/// Reads every tensor of a safetensors file held in `buf`, in file order.
///
/// # Errors
/// As [`read_with_metadata`].
pub fn read(buf: Buffer) -> Result<Vec<NamedTensor>> {
    read_with_metadata(buf).map(|(t, _)| t)
}

/// [`read()`], also returning `__metadata__`.
///
/// # Errors
/// As [`parse_header`]; [`Truncated`](crate::ErrorKind::Truncated) when a tensor's data lies past
/// the end of `buf`; [`TooLarge`](crate::ErrorKind::TooLarge) when memory for a copy runs out.
pub fn read_with_metadata(buf: Buffer) -> Result<(Vec<NamedTensor>, BTreeMap<String, String>)> {
    let (tensors, meta) = read_with_info(buf)?;
    Ok((tensors.into_iter().map(|(t, _)| t).collect(), meta))
}

/// Tensors with whether each was copied, and the metadata.
type ReadInfo = (Vec<(NamedTensor, bool)>, BTreeMap<String, String>);

/// The tensors (and whether each was copied) and the metadata.
pub(crate) fn read_with_info(buf: Buffer) -> Result<ReadInfo> {
    let h = parse_header(buf.as_slice())?;
    let available = buf.len() - h.data_start;
    if available < h.data_bytes {
        return Err(IoError::truncated(format!(
            "the header declares {} data bytes, the file has {available}",
            h.data_bytes
        )));
    }
    if available > h.data_bytes {
        return Err(bad(format!(
            "{} bytes after the last tensor (the tensors must cover the data)",
            available - h.data_bytes
        )));
    }
    let mut out = Vec::with_capacity(h.entries.len());
    for e in h.entries {
        let (begin, end) = e.data_offsets;
        let data = buf
            .slice(h.data_start + begin..h.data_start + end)
            .ok_or_else(|| IoError::truncated("tensor out of bounds"))?;
        let ctx = |err: IoError| err.context(format!("tensor '{}'", e.name));
        let (tensor, copied) = if e.dtype == DataType::FLOAT4_E2M1FN {
            (unpack_f4(&e.shape, data.as_slice()).map_err(ctx)?, true)
        } else {
            util::tensor_over(e.dtype, &e.shape, data).map_err(ctx)?
        };
        out.push((NamedTensor::new(e.name, tensor), copied));
    }
    Ok((out, h.metadata))
}

/// One float4 per byte from two per byte (low nibble first).
fn unpack_f4(shape: &TensorShape, packed: &[u8]) -> Result<Tensor> {
    let len = util::data_len(DataType::FLOAT4_E2M1FN, shape)?;
    let buf = util::build_buffer(len, |start, block| {
        for (i, out) in block.iter_mut().enumerate() {
            let k = start + i;
            let byte = packed[k / 2];
            *out = if k % 2 == 0 { byte & 0x0f } else { byte >> 4 };
        }
    })?;
    Ok(Tensor::from_buffer(DataType::FLOAT4_E2M1FN, shape, buf)?)
}

/// Two float4 per byte (low nibble first) from one per byte; only the low 4 bits of each
/// byte are kept.
fn pack_f4(bytes: &[u8]) -> Vec<u8> {
    bytes
        .chunks(2)
        .map(|c| (c[0] & 0x0f) | (c.get(1).copied().unwrap_or(0) & 0x0f) << 4)
        .collect()
}

/// Writes `tensors` (and `metadata`, if given) as safetensors bytes.
///
/// # Errors
/// As [`write_to`].
pub fn write(
    tensors: &[NamedTensor],
    metadata: Option<&BTreeMap<String, String>>,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write_to(&mut out, tensors, metadata)?;
    Ok(out)
}

/// Streams `tensors` as safetensors to `w` (see [`write()`]). Every tensor is checked (dtype,
/// name, F4 element count) before anything is written.
///
/// # Errors
/// An [`IoError`]: [`Unsupported`](crate::ErrorKind::Unsupported) for a dtype safetensors has no
/// name for, the reserved name `__metadata__` or an odd F4 element count;
/// [`Corrupt`](crate::ErrorKind::Corrupt) for a duplicate name; [`Io`](crate::ErrorKind::Io) when
/// writing to `w` fails. Nothing is written when a tensor is refused.
pub fn write_to<W: Write + ?Sized>(
    w: &mut W,
    tensors: &[NamedTensor],
    metadata: Option<&BTreeMap<String, String>>,
) -> Result<()> {
    let planned: Vec<PlannedTensor> = tensors.iter().map(PlannedTensor::of).collect();
    // The checks in the order they always ran: names and dtypes first, then the data.
    plan_order(&planned)?;
    for nt in tensors {
        nt.tensor
            .tensor_data()
            .map_err(|e| IoError::from(e).context(format!("tensor '{}'", nt.name)))?;
    }
    write_to_streamed(w, &planned, metadata, &mut |i| {
        Ok(tensors[i].tensor.clone())
    })
}

/// A tensor [`write_to_streamed`] writes: its name, dtype and shape, known before its bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedTensor {
    /// The name stored in the header.
    pub name: String,
    /// The element type.
    pub dtype: DataType,
    /// The shape.
    pub shape: TensorShape,
}

impl PlannedTensor {
    /// The plan of a tensor in hand: its name, dtype and shape.
    pub fn of(t: &NamedTensor) -> Self {
        PlannedTensor {
            name: t.name.clone(),
            dtype: t.tensor.dtype(),
            shape: t.tensor.shape().clone(),
        }
    }
}

/// Streams safetensors to `w` whose header is made from `planned` alone, each tensor's bytes
/// fetched by `fetch(index into planned)` when its turn comes and dropped once written: a
/// converter (a checkpoint's tensors, read one at a time) holds one tensor in memory, not
/// all of them, and its reused buffers need no fresh pages. The checks are [`write_to`]'s,
/// made on `planned` before anything is written; a fetched tensor must have its planned
/// dtype and shape.
///
/// # Errors
/// As [`write_to`]; `fetch`'s errors; [`Corrupt`](crate::ErrorKind::Corrupt) when a fetched
/// tensor differs from its plan (the output is then incomplete: write it atomically).
pub fn write_to_streamed<W: Write + ?Sized>(
    w: &mut W,
    planned: &[PlannedTensor],
    metadata: Option<&BTreeMap<String, String>>,
    fetch: &mut dyn FnMut(usize) -> Result<Tensor>,
) -> Result<()> {
    let order = plan_order(planned)?;
    write_planned(w, &order, metadata, &mut |i, _| fetch(i).map(Some))
}

/// A tensor's place in the file: its index in the plan, its plan, its safetensors dtype name.
type Placed<'a> = (usize, &'a PlannedTensor, &'static str);

/// Checks `planned` (names, dtypes, F4 counts) and orders it as the file stores it.
fn plan_order(planned: &[PlannedTensor]) -> Result<Vec<Placed<'_>>> {
    let mut seen = std::collections::HashSet::new();
    let mut order: Vec<Placed<'_>> = Vec::with_capacity(planned.len());
    for (i, p) in planned.iter().enumerate() {
        let ctx = |e: IoError| e.context(format!("tensor '{}'", p.name));
        if p.name == "__metadata__" {
            return Err(ctx(IoError::unsupported(
                "the name __metadata__ is reserved",
            )));
        }
        if !seen.insert(p.name.as_str()) {
            return Err(IoError::corrupt(format!(
                "duplicate tensor name '{}'",
                p.name
            )));
        }
        let name = dtype_name(p.dtype).map_err(ctx)?;
        if p.dtype == DataType::FLOAT4_E2M1FN && p.shape.num_elements() % 2 != 0 {
            return Err(ctx(IoError::unsupported(
                "safetensors F4 packs two values per byte: the element count must be even",
            )));
        }
        order.push((i, p, name));
    }
    // Decreasing element size (all powers of two) keeps every tensor aligned to its size
    // without padding between them; packed F4 goes last.
    order.sort_by_key(|(i, p, _)| {
        let size = match p.dtype {
            DataType::FLOAT4_E2M1FN => 0,
            d => d.size(),
        };
        (std::cmp::Reverse(size), *i)
    });
    Ok(order)
}

/// What [`write_file_copied`] asks of its source for each tensor.
pub type CopySource<'a> = dyn FnMut(usize, &mut dyn Write) -> Result<Option<Tensor>> + 'a;

/// Counts the bytes written through it.
struct Counted<'a, W: Write + ?Sized> {
    inner: &'a mut W,
    n: u64,
}

impl<W: Write + ?Sized> Write for Counted<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let k = self.inner.write(buf)?;
        self.n += k as u64;
        Ok(k)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.inner.write_all(buf)?;
        self.n += buf.len() as u64;
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn write_planned<W: Write + ?Sized>(
    w: &mut W,
    order: &[Placed<'_>],
    metadata: Option<&BTreeMap<String, String>>,
    fetch: &mut CopySource<'_>,
) -> Result<()> {
    let json = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let mut header = String::from("{");
    if let Some(meta) = metadata.filter(|m| !m.is_empty()) {
        header.push_str("\"__metadata__\":{");
        let items: Vec<String> = meta
            .iter()
            .map(|(k, v)| format!("{}:{}", json(k), json(v)))
            .collect();
        header.push_str(&items.join(","));
        header.push_str("},");
    }
    let mut offset = 0usize;
    let mut items = Vec::with_capacity(order.len());
    for (_, p, dtype) in order {
        let data_len = (p.shape.num_elements().max(0) as usize).saturating_mul(p.dtype.size());
        let len = if p.dtype == DataType::FLOAT4_E2M1FN {
            data_len / 2
        } else {
            data_len
        };
        let dims: Vec<String> = p.shape.dim_sizes().iter().map(i64::to_string).collect();
        items.push(format!(
            "{}:{{\"dtype\":\"{dtype}\",\"shape\":[{}],\"data_offsets\":[{offset},{}]}}",
            json(&p.name),
            dims.join(","),
            offset + len
        ));
        offset += len;
    }
    header.push_str(&items.join(","));
    if header.ends_with(',') {
        header.pop();
    }
    header.push('}');
    let pad = (8 - header.len() % 8) % 8;
    header.extend(std::iter::repeat_n(' ', pad));
    let io = |e| IoError::io("cannot write", e);
    w.write_all(&(header.len() as u64).to_le_bytes())
        .map_err(io)?;
    w.write_all(header.as_bytes()).map_err(io)?;
    for (i, p, _) in order {
        let want = (p.shape.num_elements().max(0) as u64).saturating_mul(p.dtype.size() as u64);
        let mut counted = Counted { inner: w, n: 0 };
        let fetched = fetch(*i, &mut counted)?;
        let copied = counted.n;
        let Some(t) = fetched else {
            if copied != want || p.dtype == DataType::FLOAT4_E2M1FN {
                return Err(IoError::corrupt(format!(
                    "tensor '{}': {copied} bytes were copied where {} {} takes {want}",
                    p.name,
                    p.dtype.name(),
                    p.shape
                )));
            }
            continue;
        };
        if copied != 0 {
            return Err(IoError::corrupt(format!(
                "tensor '{}': both copied and fetched",
                p.name
            )));
        }
        if t.dtype() != p.dtype || t.shape() != &p.shape {
            return Err(IoError::corrupt(format!(
                "tensor '{}' is {} {} where {} {} was planned",
                p.name,
                t.dtype().name(),
                t.shape(),
                p.dtype.name(),
                p.shape
            )));
        }
        let data = t.tensor_data()?;
        if p.dtype == DataType::FLOAT4_E2M1FN {
            w.write_all(&pack_f4(data)).map_err(io)?;
        } else {
            w.write_all(data).map_err(io)?;
        }
    }
    Ok(())
}

/// [`write_file_streamed`] whose source may copy a tensor's bytes itself: `source(i, out)`
/// either writes the bytes of planned tensor `i` (its `tensor_data()`, exactly as many as
/// its dtype and shape take) to `out` and returns `None`, or returns the tensor to write.
/// A converter copies a checkpoint's tensors this way without building them
/// ([`crate::checkpoint::Checkpoint::stream_bytes`]). With `sync` false the file is not
/// fsynced (as `cp` and TensorFlow's writers do not): the replacement stays atomic for
/// readers.
///
/// # Errors
/// As [`write_file_streamed`]; [`Corrupt`](crate::ErrorKind::Corrupt) when a source copies
/// a byte count other than the tensor's.
///
/// ```
/// use tensorcast_core::{DataType, Tensor, TensorShape};
/// use tensorcast_io::safetensors::{write_file_copied, PlannedTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("w.safetensors");
/// let plan = [PlannedTensor { name: "w".into(), dtype: DataType::UINT8, shape: TensorShape::new(&[3])? }];
/// write_file_copied(&path, &plan, None, false, &mut |_, out| {
///     out.write_all(&[1, 2, 3]).map_err(|e| tensorcast_io::IoError::new(tensorcast_io::ErrorKind::Io, e.to_string()))?;
///     Ok(None)
/// })?;
/// let t = tensorcast_io::safetensors::read(tensorcast_buffer::Buffer::from_vec(std::fs::read(&path)?))?;
/// assert_eq!(t[0].tensor, Tensor::vector(&[1u8, 2, 3]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_file_copied(
    path: &std::path::Path,
    planned: &[PlannedTensor],
    metadata: Option<&BTreeMap<String, String>>,
    sync: bool,
    source: &mut CopySource<'_>,
) -> Result<()> {
    let order = plan_order(planned)?;
    match crate::atomic::resolve_target(path)? {
        crate::atomic::Target::Replace(p) => {
            let options = crate::atomic::PrepareOptions {
                sync,
                buffer: 256 << 10,
            };
            crate::atomic::prepare_with(&p, options, |w| {
                write_planned(w, &order, metadata, source)
            })?
            .commit()
        }
        crate::atomic::Target::Stream(p) => {
            let mut bytes = Vec::new();
            write_planned(&mut bytes, &order, metadata, source)?;
            crate::atomic::write_stream(&p, &bytes)
        }
    }
}

/// [`write_to_streamed`] into the file `path`, atomically as [`crate::write_file`] writes
/// (temporary file, fsync, rename; a FIFO or device written as a stream).
///
/// # Errors
/// As [`write_to_streamed`] and [`crate::write_file`].
pub fn write_file_streamed(
    path: &std::path::Path,
    planned: &[PlannedTensor],
    metadata: Option<&BTreeMap<String, String>>,
    fetch: &mut dyn FnMut(usize) -> Result<Tensor>,
) -> Result<()> {
    match crate::atomic::resolve_target(path)? {
        crate::atomic::Target::Replace(p) => {
            crate::atomic::write_atomic(&p, |w| write_to_streamed(w, planned, metadata, fetch))
        }
        crate::atomic::Target::Stream(p) => {
            let mut bytes = Vec::new();
            write_to_streamed(&mut bytes, planned, metadata, fetch)?;
            crate::atomic::write_stream(&p, &bytes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_writes_equal_whole_writes_and_refuse_a_tensor_unlike_its_plan() {
        let ts = vec![
            NamedTensor::new("b", Tensor::vector(&[1u8, 2, 3])),
            NamedTensor::new("a", Tensor::vector(&[1.5f64, -2.0])),
        ];
        let planned: Vec<PlannedTensor> = ts.iter().map(PlannedTensor::of).collect();
        let mut streamed = Vec::new();
        let mut fetched = vec![];
        write_to_streamed(&mut streamed, &planned, None, &mut |i| {
            fetched.push(i);
            Ok(ts[i].tensor.clone())
        })
        .unwrap();
        assert_eq!(streamed, write(&ts, None).unwrap());
        assert_eq!(fetched, [1, 0], "in file order, widest dtype first");
        let err = write_to_streamed(&mut Vec::new(), &planned, None, &mut |_| {
            Ok(Tensor::vector(&[0u8]))
        })
        .unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Corrupt);
    }

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut v = (header.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(header.as_bytes());
        v.extend_from_slice(data);
        v
    }

    fn read_err(header: &str, data: &[u8]) -> String {
        read(Buffer::from_vec(file(header, data)))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn validation_names_each_problem() {
        let table = include_str!("../tests/data/safetensors_bad_headers.tsv");
        let cases = table
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty());
        let mut n_cases = 0;
        for line in cases {
            let mut cols = line.splitn(3, '\t');
            let (n, want, h) = (cols.next(), cols.next(), cols.next());
            let (Some(n), Some(want), Some(h)) = (n, want, h) else {
                panic!("a row of three columns: {line}");
            };
            let err = read_err(h, &vec![0u8; n.parse().unwrap()]);
            assert!(err.contains(want), "{h}: {err}");
            n_cases += 1;
        }
        assert_eq!(n_cases, 15);
    }

    #[test]
    fn header_length_past_limit_or_file_is_refused() {
        let mut v = (MAX_HEADER_BYTES as u64 + 1).to_le_bytes().to_vec();
        v.push(b'{');
        assert!(read(Buffer::from_vec(v))
            .unwrap_err()
            .to_string()
            .starts_with("header too long"));
        let mut v = 100u64.to_le_bytes().to_vec();
        v.extend_from_slice(b"{}");
        assert!(read(Buffer::from_vec(v))
            .unwrap_err()
            .to_string()
            .starts_with("truncated data"));
        assert!(read(Buffer::from_vec(vec![1u8, 2]))
            .unwrap_err()
            .to_string()
            .starts_with("truncated"));
    }

    #[test]
    fn f4_packs_low_nibble_first_and_round_trips() {
        let t = Tensor::from_buffer(
            DataType::FLOAT4_E2M1FN,
            &TensorShape::new(&[4]).unwrap(),
            Buffer::copy_from_slice(&[1, 2, 3, 15]).unwrap(),
        )
        .unwrap();
        let bytes = write(&[NamedTensor::new("f", t.clone())], None).unwrap();
        assert_eq!(&bytes[bytes.len() - 2..], &[0x21, 0xf3]);
        let back = read(Buffer::from_vec(bytes)).unwrap();
        assert_eq!(back[0].tensor, t);
    }

    #[test]
    fn writer_matches_reference_layout() {
        // The reference implementation's own test vector: attn.0, F32 [1,2,3] of 0..6.
        let t = Tensor::from_slice(
            &[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0],
            TensorShape::new(&[1, 2, 3]).unwrap(),
        )
        .unwrap();
        let out = write(&[NamedTensor::new("attn.0", t)], None).unwrap();
        let header = r#"{"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}}"#;
        assert_eq!(&out[..8], &64u64.to_le_bytes());
        assert_eq!(&out[8..8 + header.len()], header.as_bytes());
        let empty = write(&[], None).unwrap();
        assert_eq!(empty, b"\x08\0\0\0\0\0\0\0{}      ");
    }

    #[test]
    fn errors_say_what_is_wrong_as_the_reference_does() {
        // Not UTF-8: a damaged header, not "bad magic".
        let mut f = 4u64.to_le_bytes().to_vec();
        f.extend_from_slice(&[b'{', 0xff, 0xfe, b'}']);
        let e = parse_header(&f).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Corrupt);
        assert!(e.to_string().contains("invalid UTF-8 in header"), "{e}");
        // An impossible dimension is too large, not "not a non-negative integer"; so is a size
        // that overflows. (dtype, shape, what the error says)
        let cases: [(&str, &str, &[&str]); 5] = [
            ("F32", "[18446744073709551615]", &["too large", "2**63 - 1"]),
            ("F32", "[1e30]", &["too large"]),
            ("F32", "[-1]", &["negative dimension"]),
            ("F32", "[1.5]", &["not an integer"]),
            ("F64", "[4294967296,4294967296]", &["too large"]),
        ];
        for (dtype, shape, said) in cases {
            let header =
                format!(r#"{{"a":{{"dtype":"{dtype}","shape":{shape},"data_offsets":[0,0]}}}}"#);
            let e = read_err(&header, &[]);
            assert!(said.iter().all(|s| e.contains(s)), "{shape}: {e}");
        }
        let buf = file(
            r#"{"a":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,0]}}"#,
            &[],
        );
        let err = read(Buffer::from_vec(buf)).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::TooLarge, "{err}");
    }
}
