//! `.npy` files: numpy's array format, versions 1.0, 2.0 and 3.0.
//!
//! # Layout
//! `\x93NUMPY`, a major and minor version byte, the header length (u16 little-endian in 1.0,
//! u32 in 2.0 and 3.0), then the header: a Python dict literal
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` padded with spaces and a
//! newline so that the data starts at a multiple of 64 bytes. The data follows, raw.
//!
//! # Choices
//! - **dtypes**: every dtype numpy has a code for and tensorcast a counterpart: `|b1` (bool),
//!   `|i1 <i2 <i4 <i8`, `|u1 <u2 <u4 <u8`, `<f2` (half), `<f4`, `<f8`, `<c8` (complex64),
//!   `<c16` (complex128), and numpy's fixed-width bytes `|S<n>` as `string` tensors (each
//!   element's trailing NUL bytes dropped, as numpy drops them; written with `n` the longest
//!   element, at least 1). Others (`<U10`, `|O`, `<M8[ns]`, `<f16`, structured dtypes,
//!   and the `|V2`/`|V1` void types that numpy writes for `ml_dtypes`' bfloat16 and float8
//!   arrays) are refused with `unsupported dtype '<U10'`. Writing a tensor whose dtype has no
//!   numpy code (bfloat16, float8, float4, int4/int2, quantized, resource, variant)
//!   is refused too: numpy would read such a file back as untyped void bytes, losing the dtype,
//!   so tensorcast points to safetensors or TensorProto instead of writing one.
//! - **Big-endian data** (`>i4`, `>f8`...) is read by byte-swapping into a new buffer (a
//!   copy). Writing is always little-endian.
//! - **`fortran_order: True`** is read by transposing into a new row-major buffer (a copy);
//!   tensors are row-major, so the result equals numpy's array element by element.
//! - **Zero copy**: otherwise the tensor is a slice of the input buffer (of the memory map, for
//!   [`crate::read_file`]) when the data address suits the dtype; numpy pads headers so data
//!   starts at a multiple of 64, so that is the usual case. Misaligned data is copied.
//! - **Untrusted input**: the header is at most [`MAX_HEADER_BYTES`] (10,000 bytes, numpy's
//!   `max_header_size` default since its CVE-2019-6446 follow-up; [`parse_header_with`] and
//!   [`read_with`] take a higher limit from a caller who trusts the file), parsed by a small
//!   literal parser (no evaluation), the shape's element count and byte size are checked for
//!   overflow, and the data length must equal what the header declares (a shorter file is
//!   `truncated data: ...`, a longer one is refused as trailing bytes).
//! - `bool` data must be bytes 0 and 1 (anything else is refused rather than becoming an
//!   invalid Rust `bool`).
//!
//! ```
//! use tensorcast_core::Tensor;
//! use tensorcast_io::npy;
//! let t = Tensor::vector(&[1.5f32, -2.0]);
//! let bytes = npy::write(&t).unwrap();
//! assert_eq!(&bytes[..10], b"\x93NUMPY\x01\x00\x76\x00");
//! assert_eq!(bytes.len(), 128 + 8);
//! let header = npy::parse_header(&bytes).unwrap();
//! assert_eq!(header.descr, "<f4");
//! let back = npy::read(tensorcast_buffer::Buffer::from_vec(bytes)).unwrap();
//! assert_eq!(back, t);
//! ```

mod literal;

use std::io::Write;

use tensorcast_buffer::Buffer;
use tensorcast_core::{DataType, Tensor, TensorShape};

use crate::error::{IoError, Result};
use crate::util;
use literal::{Encoding, Value};

/// The magic string every `.npy` file starts with.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// The longest header accepted by default when reading, in bytes: numpy's `_MAX_HEADER_SIZE`
/// (`np.load(..., max_header_size=10000)`). numpy's own writer never needs more than a few
/// kilobytes (a 64-dimensional shape with 20-digit sizes); [`parse_header_with`] and
/// [`read_with`] accept longer headers from files the caller trusts.
pub const MAX_HEADER_BYTES: usize = 10_000;

/// The highest limit [`parse_header_with`] accepts (the u32 length field allows 4 GiB; no real
/// header comes near 256 MiB).
pub const MAX_HEADER_LIMIT: usize = 256 << 20;

/// numpy's `ARRAY_ALIGN`: headers are padded so the data starts at a multiple of this.
const ARRAY_ALIGN: usize = 64;

/// numpy's `GROWTH_AXIS_MAX_DIGITS`: spare spaces numpy adds after the dict.
const GROWTH_AXIS_MAX_DIGITS: usize = 21;

/// A parsed `.npy` header.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// Format version `(major, minor)`: `(1, 0)`, `(2, 0)` or `(3, 0)`.
    pub version: (u8, u8),
    /// The `descr` string as written (`<f4`, `|b1`, `>i8`).
    pub descr: String,
    /// The tensorcast dtype of `descr` (`string` for `|S<n>`).
    pub dtype: DataType,
    /// Bytes of one element in the file: the dtype's size, or `n` for `|S<n>`.
    pub item_bytes: usize,
    /// True if the data is big-endian (`descr` starts with `>` and elements are wider than a
    /// byte); it is then byte-swapped on read.
    pub big_endian: bool,
    /// True if the data is in column-major (Fortran) order; it is then transposed on read.
    pub fortran_order: bool,
    /// The shape.
    pub shape: TensorShape,
    /// Where the data starts: magic, version, length field and header.
    pub data_offset: usize,
    /// How many data bytes the header declares.
    pub data_bytes: usize,
}

fn hex_prefix(bytes: &[u8]) -> String {
    bytes
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parses a header from the start of `bytes` (the whole file, or at least the header).
///
/// Every failure is an error naming it: `bad magic: ...`, `truncated data: ...`,
/// `header too long: ...`, `unsupported npy format version 4.0`, `bad npy header: ...`,
/// `unsupported dtype '<U10'`.
///
/// # Errors
/// An [`IoError`] of kind [`BadMagic`](crate::ErrorKind::BadMagic), `Truncated`, `TooLarge`,
/// `Corrupt` (a header that does not parse) or `Unsupported` (a version or `descr` this library
/// does not read), with the messages above.
///
/// ```
/// use tensorcast_io::npy::parse_header;
/// let h = parse_header(b"\x93NUMPY\x01\x00\x39\x00{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3)}\n")?;
/// assert_eq!(h.shape.dim_sizes(), &[2, 3]);
/// assert!(h.big_endian && h.fortran_order);
/// assert_eq!(h.data_bytes, 12);
/// # Ok::<(), tensorcast_io::IoError>(())
/// ```
pub fn parse_header(bytes: &[u8]) -> Result<Header> {
    parse_header_with(bytes, MAX_HEADER_BYTES)
}

/// [`parse_header`] accepting headers of up to `max_header_bytes` (numpy's `max_header_size`;
/// at most [`MAX_HEADER_LIMIT`], larger values are lowered to it).
///
/// # Errors
/// As [`parse_header`]. A longer header is a [`TooLarge`](crate::ErrorKind::TooLarge) error
/// with numpy's text: `Header info length (10158) is large and may not be safe to load
/// securely. To allow loading, adjust ...`.
///
/// ```
/// use tensorcast_io::npy::{parse_header, parse_header_with};
/// let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': (), }}{}\n", " ".repeat(12_000));
/// let mut file = b"\x93NUMPY\x01\x00".to_vec();
/// file.extend_from_slice(&(dict.len() as u16).to_le_bytes());
/// file.extend_from_slice(dict.as_bytes());
/// let e = parse_header(&file).unwrap_err();
/// assert!(e.to_string().starts_with("Header info length (12056) is large and may not be safe"));
/// assert_eq!(parse_header_with(&file, 20_000)?.data_bytes, 4);
/// # Ok::<(), tensorcast_io::IoError>(())
/// ```
pub fn parse_header_with(bytes: &[u8], max_header_bytes: usize) -> Result<Header> {
    let max_header_bytes = max_header_bytes.min(MAX_HEADER_LIMIT);
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        if MAGIC.starts_with(bytes) {
            return Err(IoError::truncated(format!(
                "the file ends after {} bytes, inside the .npy magic",
                bytes.len()
            )));
        }
        return Err(IoError::bad_magic(format!(
            "bad magic: not an .npy file (it starts with {}, not \\x93NUMPY)",
            hex_prefix(bytes)
        )));
    }
    let Some(&[major, minor]) = bytes.get(6..8) else {
        return Err(IoError::truncated("the file ends inside the .npy version"));
    };
    let (len_bytes, encoding) = match (major, minor) {
        (1, 0) => (2, Encoding::Latin1),
        (2, 0) => (4, Encoding::Latin1),
        (3, 0) => (4, Encoding::Utf8),
        _ => {
            return Err(IoError::unsupported(format!(
                "unsupported npy format version {major}.{minor} (1.0, 2.0 and 3.0 are supported)"
            )))
        }
    };
    let Some(len_field) = bytes.get(8..8 + len_bytes) else {
        return Err(IoError::truncated(
            "the file ends inside the .npy header length",
        ));
    };
    let header_len = len_field
        .iter()
        .rev()
        .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
    if header_len > max_header_bytes {
        // numpy's text (it counts characters of the decoded header; for the latin-1 headers of
        // versions 1 and 2 that is the byte count).
        return Err(IoError::too_large(format!(
            "Header info length ({header_len}) is large and may not be safe to load securely. \
             To allow loading, adjust `max_header_size` or fully trust the `.npy` file using \
             `allow_pickle=True`. For safety against large resource use or crashes, sandboxing \
             may be necessary. (tensorcast's limit is {max_header_bytes} bytes: \
             ReadOptions::max_npy_header_bytes, the CLI's --max-npy-header)"
        )));
    }
    let start = 8 + len_bytes;
    let data_offset = start + header_len;
    let Some(text) = bytes.get(start..data_offset) else {
        return Err(IoError::truncated(format!(
            "the header declares {header_len} bytes, the file has {}",
            bytes.len() - start
        )));
    };
    let dict = literal::parse(text, encoding)?;
    let (descr, fortran_order, dims) = header_fields(dict)?;
    let (dtype, big_endian) = descr_to_dtype(&descr)?;
    let shape = TensorShape::new(&dims)
        .map_err(|e| IoError::corrupt(format!("bad npy shape {}: {e}", dims_repr(&dims))))?;
    let (data_bytes, item_bytes) = if dtype == DataType::STRING {
        let width = string_width(&descr)?;
        let n = usize::try_from(shape.num_elements())
            .map_err(|_| IoError::corrupt(format!("bad element count for shape {shape}")))?;
        let bytes = n
            .checked_mul(width)
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| {
                IoError::too_large(format!(
                    "a {descr} array of shape {shape} would need more bytes than this machine \
                     can address"
                ))
            })?;
        (bytes, width)
    } else {
        (util::data_len(dtype, &shape)?, dtype.size())
    };
    Ok(Header {
        version: (major, minor),
        descr,
        dtype,
        item_bytes,
        big_endian,
        fortran_order,
        shape,
        data_offset,
        data_bytes,
    })
}

/// Pulls `descr`, `fortran_order` and `shape` out of the header dict (exactly those keys, as
/// numpy requires).
fn header_fields(dict: Value) -> Result<(String, bool, Vec<i64>)> {
    let Value::Dict(items) = dict else {
        return Err(IoError::corrupt(format!(
            "bad npy header: expected a dict, found {}",
            dict.describe()
        )));
    };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (k, v) in items {
        let Value::Str(key) = &k else {
            return Err(IoError::corrupt(format!(
                "bad npy header: unexpected key {}",
                k.describe()
            )));
        };
        let slot_taken = match key.as_str() {
            "descr" => descr.replace(v).is_some(),
            "fortran_order" => fortran.replace(v).is_some(),
            "shape" => shape.replace(v).is_some(),
            _ => {
                return Err(IoError::corrupt(format!(
                    "bad npy header: unexpected key '{key}' (only descr, fortran_order and shape)"
                )))
            }
        };
        if slot_taken {
            return Err(IoError::corrupt(format!(
                "bad npy header: key '{key}' appears twice"
            )));
        }
    }
    let descr =
        match descr {
            Some(Value::Str(s)) => s,
            Some(Value::List(_)) => return Err(IoError::unsupported(
                "unsupported dtype: structured (record) numpy dtypes have no tensor counterpart",
            )),
            Some(other) => {
                return Err(IoError::corrupt(format!(
                    "bad npy header: descr is {}, not a string",
                    other.describe()
                )))
            }
            None => return Err(IoError::corrupt("bad npy header: no 'descr' key")),
        };
    let fortran_order = match fortran {
        Some(Value::Bool(b)) => b,
        Some(other) => {
            return Err(IoError::corrupt(format!(
                "bad npy header: fortran_order is {}, not True or False",
                other.describe()
            )))
        }
        None => return Err(IoError::corrupt("bad npy header: no 'fortran_order' key")),
    };
    let dims = match shape {
        Some(Value::Tuple(items)) => items
            .into_iter()
            .map(|v| match v {
                Value::Int(i) if i >= 0 => Ok(i),
                other => Err(IoError::corrupt(format!(
                    "bad npy header: shape holds {}, not a non-negative integer",
                    other.describe()
                ))),
            })
            .collect::<Result<Vec<i64>>>()?,
        Some(other) => {
            return Err(IoError::corrupt(format!(
                "bad npy header: shape is {}, not a tuple",
                other.describe()
            )))
        }
        None => return Err(IoError::corrupt("bad npy header: no 'shape' key")),
    };
    Ok((descr, fortran_order, dims))
}

/// The dtype of a numpy `descr` string, and whether its data is big-endian.
///
/// # Errors
/// An [`IoError`] of kind [`Unsupported`](crate::ErrorKind::Unsupported) (`unsupported dtype
/// '<U10'`) for a `descr` with no tensorcast dtype.
///
/// ```
/// use tensorcast_core::DataType;
/// use tensorcast_io::npy::descr_to_dtype;
/// assert_eq!(descr_to_dtype("<c8")?, (DataType::COMPLEX64, false));
/// assert_eq!(descr_to_dtype(">f2")?, (DataType::HALF, true));
/// assert_eq!(descr_to_dtype("|b1")?, (DataType::BOOL, false));
/// assert_eq!(descr_to_dtype("|S5")?, (DataType::STRING, false));
/// assert_eq!(descr_to_dtype("<U10").unwrap_err().to_string(), "unsupported dtype '<U10'");
/// # Ok::<(), tensorcast_io::IoError>(())
/// ```
pub fn descr_to_dtype(descr: &str) -> Result<(DataType, bool)> {
    let unsupported =
        || IoError::unsupported(format!("unsupported dtype '{}'", crate::escaped(descr)));
    let (order, code) = match descr.as_bytes().first() {
        Some(c @ (b'<' | b'>' | b'|' | b'=')) => (*c, &descr[1..]),
        _ => (b'=', descr),
    };
    let dtype = match code {
        "b1" | "?" => DataType::BOOL,
        "i1" | "b" => DataType::INT8,
        "i2" | "h" => DataType::INT16,
        "i4" | "i" => DataType::INT32,
        "i8" | "q" => DataType::INT64,
        "u1" | "B" => DataType::UINT8,
        "u2" | "H" => DataType::UINT16,
        "u4" | "I" => DataType::UINT32,
        "u8" | "Q" => DataType::UINT64,
        "f2" | "e" => DataType::HALF,
        "f4" | "f" => DataType::FLOAT,
        "f8" | "d" => DataType::DOUBLE,
        "c8" | "F" => DataType::COMPLEX64,
        "c16" | "D" => DataType::COMPLEX128,
        c if (c.starts_with('S') || c.starts_with('a'))
            && c.len() > 1
            && c[1..].bytes().all(|b| b.is_ascii_digit()) =>
        {
            return Ok((DataType::STRING, false))
        }
        _ => return Err(unsupported()),
    };
    // `=` is native order, and tensorcast only builds on little-endian hosts.
    Ok((dtype, order == b'>' && dtype.size() > 1))
}

/// The numpy `descr` that [`write()`] uses for `dtype` (`dtype.str` in numpy), or an
/// `Unsupported` error for dtypes numpy has no code for.
///
/// # Errors
/// An [`IoError`] of kind [`Unsupported`](crate::ErrorKind::Unsupported) for a dtype numpy has no
/// code for (bfloat16, the quantized, float8 and sub-byte types, string, resource, variant).
///
/// ```
/// use tensorcast_core::DataType;
/// use tensorcast_io::npy::dtype_to_descr;
/// assert_eq!(dtype_to_descr(DataType::HALF)?, "<f2");
/// assert!(dtype_to_descr(DataType::BFLOAT16).unwrap_err().to_string().starts_with("unsupported dtype bfloat16"));
/// # Ok::<(), tensorcast_io::IoError>(())
/// ```
pub fn dtype_to_descr(dtype: DataType) -> Result<&'static str> {
    Ok(match dtype {
        DataType::BOOL => "|b1",
        DataType::INT8 => "|i1",
        DataType::INT16 => "<i2",
        DataType::INT32 => "<i4",
        DataType::INT64 => "<i8",
        DataType::UINT8 => "|u1",
        DataType::UINT16 => "<u2",
        DataType::UINT32 => "<u4",
        DataType::UINT64 => "<u8",
        DataType::HALF => "<f2",
        DataType::FLOAT => "<f4",
        DataType::DOUBLE => "<f8",
        DataType::COMPLEX64 => "<c8",
        DataType::COMPLEX128 => "<c16",
        d => {
            return Err(IoError::unsupported(format!(
                "unsupported dtype {} for .npy: numpy has no code for it (numpy would read it \
                 back as untyped void bytes); write safetensors or TensorProto, or cast first",
                d.name()
            )))
        }
    })
}

/// The `n` of a `|S<n>` descr (1 to 2^31 - 1, numpy's range; `S0` has no fixed width).
fn string_width(descr: &str) -> Result<usize> {
    let digits = descr.trim_start_matches(['<', '>', '|', '=']);
    digits[1..]
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=i32::MAX as usize).contains(n))
        .ok_or_else(|| {
            IoError::unsupported(format!(
                "unsupported dtype '{}': a bytes dtype needs a width from 1 to 2147483647",
                crate::escaped(descr)
            ))
        })
}

/// Python's `repr` of a shape tuple: `()`, `(3,)`, `(2, 3)`.
fn dims_repr(dims: &[i64]) -> String {
    match dims {
        [] => "()".to_string(),
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            dims.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The header bytes numpy's `np.save` writes for a C-order array of `dtype` and `shape`
/// (magic through the newline): byte-identical to numpy, version 1.0 unless the header needs
/// 2.0's longer length field.
///
/// # Errors
/// As [`dtype_to_descr`]; [`TooLarge`](crate::ErrorKind::TooLarge) when the header would not fit
/// the format's 32-bit length field.
pub fn header_bytes(dtype: DataType, shape: &TensorShape) -> Result<Vec<u8>> {
    header_for_descr(dtype_to_descr(dtype)?, shape)
}

/// The header and data bytes of `t` as `np.save` writes them: numeric tensors' data as it is,
/// `string` tensors as `|S<n>` with `n` the longest element (at least 1), each element padded
/// with NUL bytes (what `np.array(list_of_bytes)` makes).
///
/// # Errors
/// As [`header_bytes`]; [`TooLarge`](crate::ErrorKind::TooLarge) when the padded strings do not
/// fit in memory.
pub fn encode(t: &Tensor) -> Result<(Vec<u8>, std::borrow::Cow<'_, [u8]>)> {
    if t.dtype() != DataType::STRING {
        return Ok((header_bytes(t.dtype(), t.shape())?, t.tensor_data()?.into()));
    }
    let strings = t
        .as_slice::<tensorcast_core::TString>()
        .map_err(|e| IoError::unsupported(e.to_string()))?;
    let width = strings.iter().map(|s| s.len()).max().unwrap_or(0).max(1);
    if width > i32::MAX as usize {
        return Err(IoError::too_large(format!(
            "a string of {width} bytes is longer than numpy's bytes dtype allows"
        )));
    }
    let header = header_for_descr(&format!("|S{width}"), t.shape())?;
    let total = strings.len().checked_mul(width).ok_or_else(|| {
        IoError::too_large("the padded strings need more bytes than this machine can address")
    })?;
    let mut data = Vec::new();
    data.try_reserve_exact(total)
        .map_err(|_| IoError::too_large(format!("cannot allocate {total} bytes of strings")))?;
    for s in strings {
        data.extend_from_slice(s.as_bytes());
        data.resize(data.len() + width - s.len(), 0);
    }
    Ok((header, data.into()))
}

fn header_for_descr(descr: &str, shape: &TensorShape) -> Result<Vec<u8>> {
    let dims = shape.dim_sizes();
    let mut dict = format!(
        "{{'descr': '{descr}', 'fortran_order': False, 'shape': {}, }}",
        dims_repr(dims)
    );
    // numpy leaves room to grow the first axis in place.
    if let Some(first) = dims.first() {
        let digits = first.to_string().len();
        dict.extend(std::iter::repeat_n(
            ' ',
            GROWTH_AXIS_MAX_DIGITS.saturating_sub(digits),
        ));
    }
    let wrap = |len_bytes: usize| {
        let hlen = dict.len() + 1;
        let padlen = ARRAY_ALIGN - ((MAGIC.len() + 2 + len_bytes + hlen) % ARRAY_ALIGN);
        (hlen + padlen, padlen)
    };
    let (mut total, mut padlen) = wrap(2);
    let version: u8 = if total < 1 << 16 {
        1
    } else {
        (total, padlen) = wrap(4);
        2
    };
    let mut out = Vec::with_capacity(12 + total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(total as u16).to_le_bytes());
    } else {
        let total = u32::try_from(total)
            .map_err(|_| IoError::too_large("header too long for the .npy format"))?;
        out.extend_from_slice(&total.to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.extend(std::iter::repeat_n(b' ', padlen));
    out.push(b'\n');
    Ok(out)
}

/// Reads an `.npy` file held in `buf` (a memory map, or any buffer) as one tensor.
///
/// Zero-copy when the data is little-endian, C-order and aligned for its dtype: the tensor's
/// buffer is then a slice of `buf`. Otherwise the data is copied (byte-swapped, transposed or
/// realigned as needed).
///
/// # Errors
/// As [`parse_header`]; `Truncated` when the data is shorter than the header declares, `Corrupt`
/// when bytes follow it, [`TooLarge`](crate::ErrorKind::TooLarge) when memory for a copy runs
/// out.
pub fn read(buf: Buffer) -> Result<Tensor> {
    read_with(buf, MAX_HEADER_BYTES)
}

/// [`read()`] accepting headers of up to `max_header_bytes` (see [`parse_header_with`]).
///
/// # Errors
/// As [`read()`].
pub fn read_with(buf: Buffer, max_header_bytes: usize) -> Result<Tensor> {
    read_with_info(buf, max_header_bytes).map(|(t, _)| t)
}

/// [`read_with()`], also telling whether the data was copied.
pub(crate) fn read_with_info(buf: Buffer, max_header_bytes: usize) -> Result<(Tensor, bool)> {
    let h = parse_header_with(buf.as_slice(), max_header_bytes)?;
    let available = buf.len() - h.data_offset;
    if available < h.data_bytes {
        return Err(IoError::truncated(format!(
            "the header declares {} bytes of {} data for shape {}, the file has {available}",
            h.data_bytes,
            h.dtype.name(),
            h.shape
        )));
    }
    if available > h.data_bytes {
        return Err(IoError::corrupt(format!(
            "{} trailing bytes after the {} data bytes the header declares",
            available - h.data_bytes,
            h.data_bytes
        )));
    }
    let data = buf
        .slice(h.data_offset..buf.len())
        .ok_or_else(|| IoError::truncated("data range out of bounds"))?;
    tensor_from_raw(&h, data)
}

/// Builds the tensor of header `h` from exactly its data bytes, swapping and transposing as
/// the header requires. Returns whether it copied.
pub(crate) fn tensor_from_raw(h: &Header, data: Buffer) -> Result<(Tensor, bool)> {
    let mut data = data;
    let mut copied = false;
    if h.big_endian {
        let unit = util::element_alignment(h.dtype);
        data = util::byte_swapped(data.as_slice(), unit)?;
        copied = true;
    }
    if h.fortran_order && h.shape.rank() >= 2 && h.data_bytes > 0 {
        data = util::fortran_to_c(data.as_slice(), &h.shape.dims_usize(), h.item_bytes)?;
        copied = true;
    }
    if h.dtype == DataType::STRING {
        return Ok((strings_from_raw(h, data.as_slice())?, true));
    }
    let (t, c) = util::tensor_over(h.dtype, &h.shape, data)?;
    Ok((t, copied || c))
}

/// The `string` tensor of `|S<n>` data: each `n`-byte item without its trailing NULs.
fn strings_from_raw(h: &Header, data: &[u8]) -> Result<Tensor> {
    use tensorcast_core::TString;
    let n = data.len() / h.item_bytes.max(1);
    let mut out: Vec<TString> = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| IoError::too_large(format!("cannot allocate {n} strings")))?;
    for item in data.chunks_exact(h.item_bytes.max(1)) {
        let end = item.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        out.push(TString::from(&item[..end]));
    }
    Tensor::from_vec(out, &h.shape).map_err(|e| IoError::corrupt(e.to_string()))
}

/// Writes `t` as `.npy` bytes (version 1.0, C order, little-endian), byte-identical to
/// numpy's `np.save` of the same array.
///
/// # Errors
/// As [`write_to`], without the write errors.
pub fn write(t: &Tensor) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write_to(&mut out, t)?;
    Ok(out)
}

/// Streams `t` as `.npy` to `w` (see [`write()`]).
///
/// # Errors
/// As [`header_bytes`]; [`Io`](crate::ErrorKind::Io) when writing to `w` fails.
pub fn write_to<W: Write + ?Sized>(w: &mut W, t: &Tensor) -> Result<()> {
    let (header, data) = encode(t)?;
    w.write_all(&header)
        .and_then(|_| w.write_all(&data))
        .map_err(|e| IoError::io("cannot write", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(header: &str, data: &[u8]) -> Vec<u8> {
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&[1, 0]);
        v.extend_from_slice(&(header.len() as u16).to_le_bytes());
        v.extend_from_slice(header.as_bytes());
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn header_bytes_pad_to_64_and_match_numpy_layout() {
        let h = header_bytes(DataType::FLOAT, &TensorShape::new(&[2, 3]).unwrap()).unwrap();
        assert_eq!(h.len() % 64, 0);
        let text = std::str::from_utf8(&h[10..]).unwrap();
        assert!(text.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
        assert!(text.ends_with(" \n"));
        let scalar = header_bytes(DataType::BOOL, &TensorShape::scalar()).unwrap();
        assert!(std::str::from_utf8(&scalar[10..])
            .unwrap()
            .contains("'shape': (), }"));
    }

    #[test]
    fn parse_header_refuses_bad_keys_and_values() {
        for (header, want) in [
            ("{'descr': '<f4', 'shape': ()}", "no 'fortran_order' key"),
            (
                "{'descr': '<f4', 'fortran_order': 0, 'shape': ()}",
                "fortran_order is 0",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': [1]}",
                "shape is a list",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
                "shape holds -1",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}",
                "unexpected key 'x'",
            ),
            (
                "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}",
                "appears twice",
            ),
            (
                "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}",
                "structured",
            ),
            (
                "{'descr': '<U10', 'fortran_order': False, 'shape': ()}",
                "unsupported dtype '<U10'",
            ),
            (
                "{'descr': '|V2', 'fortran_order': False, 'shape': ()}",
                "unsupported dtype '|V2'",
            ),
            ("['descr']", "expected a dict"),
        ] {
            let err = parse_header(&npy(header, &[])).unwrap_err().to_string();
            assert!(err.contains(want), "{header}: {err}");
        }
    }

    #[test]
    fn shape_overflow_is_an_error() {
        let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }";
        assert!(parse_header(&npy(h, &[])).is_err());
        let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (3037000499, 3037000499), }";
        let err = parse_header(&npy(h, &[])).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::TooLarge, "{err}");
    }

    #[test]
    fn huge_header_length_is_refused_before_reading() {
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&[2, 0]);
        v.extend_from_slice(&u32::MAX.to_le_bytes());
        let err = parse_header(&v).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "Header info length (4294967295) is large and may not be safe to load securely."
            ),
            "{err}"
        );
        // A raised limit is capped: 4 GiB is never read.
        let err = parse_header_with(&v, usize::MAX).unwrap_err().to_string();
        assert!(
            err.contains("tensorcast's limit is 268435456 bytes"),
            "{err}"
        );
    }

    #[test]
    fn header_limit_is_numpys_10000_and_can_be_raised() {
        let at = |pad: usize| {
            let dict = format!(
                "{{'descr': '<f4', 'fortran_order': False, 'shape': (), }}{}\n",
                " ".repeat(pad)
            );
            npy(&dict, &[0; 4])
        };
        // 55 bytes of dict + pad + newline.
        assert!(parse_header(&at(10_000 - 56)).is_ok());
        let e = parse_header(&at(10_000 - 55)).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::TooLarge);
        assert!(e
            .to_string()
            .starts_with("Header info length (10001) is large"));
        assert!(read_with(Buffer::from_vec(at(20_000)), 30_000).is_ok());
        assert!(read(Buffer::from_vec(at(20_000))).is_err());
    }

    #[test]
    fn bytes_arrays_are_string_tensors_both_ways() {
        use tensorcast_core::TString;
        // numpy: np.save(f, np.array([[b'ab', b''], [b'a\x00b', b'xyz\x00']]))
        let mut data = Vec::new();
        for s in [&b"ab\0\0"[..], b"\0\0\0\0", b"a\0b\0", b"xyz\0"] {
            data.extend_from_slice(s);
        }
        let file = npy(
            "{'descr': '|S4', 'fortran_order': False, 'shape': (2, 2), }",
            &data,
        );
        let t = read(Buffer::from_vec(file)).unwrap();
        assert_eq!(t.dtype(), DataType::STRING);
        let want: Vec<TString> = [&b"ab"[..], b"", b"a\0b", b"xyz"]
            .iter()
            .map(|s| TString::from(*s))
            .collect();
        assert_eq!(t.as_slice::<TString>().unwrap(), &want[..]);
        let bytes = write(&t).unwrap();
        let h = parse_header(&bytes).unwrap();
        assert_eq!((h.descr.as_str(), h.item_bytes), ("|S3", 3));
        assert_eq!(&bytes[h.data_offset..], b"ab\0\0\0\0a\0bxyz");
        assert_eq!(read(Buffer::from_vec(bytes)).unwrap(), t);
        // Fortran order, and numpy's S1 for empty strings.
        let f = npy(
            "{'descr': '|S1', 'fortran_order': True, 'shape': (2, 2), }",
            b"acbd",
        );
        let t = read(Buffer::from_vec(f)).unwrap();
        let got: Vec<&[u8]> = t
            .as_slice::<TString>()
            .unwrap()
            .iter()
            .map(|s| s.as_bytes())
            .collect();
        assert_eq!(got, [b"a", b"b", b"c", b"d"]);
        let empty = Tensor::from_vec(vec![TString::new()], [1]).unwrap();
        assert_eq!(parse_header(&write(&empty).unwrap()).unwrap().descr, "|S1");
        for bad in ["|S0", "|S99999999999"] {
            let h = format!("{{'descr': '{bad}', 'fortran_order': False, 'shape': (0,), }}");
            assert!(parse_header(&npy(&h, &[])).is_err(), "{bad}");
        }
    }

    #[test]
    fn versions_other_than_1_2_3_are_refused() {
        let mut v = npy("{}", &[]);
        v[6] = 4;
        assert!(parse_header(&v)
            .unwrap_err()
            .to_string()
            .contains("version 4.0"));
    }

    #[test]
    fn big_endian_and_fortran_data_are_converted() {
        // >i2 of shape (2, 3) in Fortran order: C-order values 0..6 -> Fortran 0,3,1,4,2,5.
        let data: Vec<u8> = [0i16, 3, 1, 4, 2, 5]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        let f = npy(
            "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }",
            &data,
        );
        let t = read(Buffer::from_vec(f)).unwrap();
        assert_eq!(t.flat::<i16>().unwrap().to_vec(), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(t.shape().dim_sizes(), &[2, 3]);
    }

    #[test]
    fn truncated_and_trailing_data_are_errors() {
        let h = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
        let short = read(Buffer::from_vec(npy(h, &[0; 7]))).unwrap_err();
        assert_eq!(
            short.to_string(),
            "truncated data: the header declares 8 bytes of int32 data for shape [2], the file has 7"
        );
        let long = read(Buffer::from_vec(npy(h, &[0; 9]))).unwrap_err();
        assert!(long.to_string().contains("1 trailing bytes"));
    }
}
