//! [`Format`] and [`detect_format`]: which kind of tensor file some bytes are.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use crate::error::IoError;

/// A tensor file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// numpy `.npy`: one array.
    Npy,
    /// numpy `.npz`: a zip of `.npy` members.
    Npz,
    /// Hugging Face safetensors.
    Safetensors,
    /// A bare serialized `TensorProto` (`tf.io.serialize_tensor`), one tensor.
    TensorProto,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 4] = [
        Format::Npy,
        Format::Npz,
        Format::Safetensors,
        Format::TensorProto,
    ];

    /// The usual file extension (`npy`, `npz`, `safetensors`, `pb`).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Npy => "npy",
            Format::Npz => "npz",
            Format::Safetensors => "safetensors",
            Format::TensorProto => "pb",
        }
    }

    /// The format a file extension names (case-insensitive, without the dot): `npy`, `npz`,
    /// `safetensors`, `pb` / `tensorproto` / `proto`.
    ///
    /// ```
    /// use tensorcast_io::Format;
    /// assert_eq!(Format::from_extension("NPY"), Some(Format::Npy));
    /// assert_eq!(Format::from_extension("pb"), Some(Format::TensorProto));
    /// assert_eq!(Format::from_extension("txt"), None);
    /// ```
    pub fn from_extension(ext: &str) -> Option<Format> {
        match ext.to_ascii_lowercase().as_str() {
            "npy" => Some(Format::Npy),
            "npz" => Some(Format::Npz),
            "safetensors" => Some(Format::Safetensors),
            "pb" | "tensorproto" | "proto" => Some(Format::TensorProto),
            _ => None,
        }
    }

    /// The format a path's extension names.
    pub fn from_path(path: &Path) -> Option<Format> {
        path.extension()
            .and_then(|e| e.to_str())
            .and_then(Format::from_extension)
    }

    /// True if a file of this format holds exactly one tensor (npy, TensorProto).
    pub fn is_single_tensor(self) -> bool {
        matches!(self, Format::Npy | Format::TensorProto)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Npy => "npy",
            Format::Npz => "npz",
            Format::Safetensors => "safetensors",
            Format::TensorProto => "tensorproto",
        })
    }
}

impl FromStr for Format {
    type Err = IoError;

    /// `npy`, `npz`, `safetensors`, `pb` or `tensorproto` (case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::from_extension(s.trim_start_matches('.')).ok_or_else(|| {
            IoError::unsupported(format!(
                "unknown format '{s}' (expected npy, npz, safetensors, pb or tensorproto)"
            ))
        })
    }
}

/// Detects the format of a file from its first bytes (`head`; pass the whole file when it is
/// mapped anyway, or at least its first few kilobytes), using the path's extension only to
/// break a tie or when the content matches nothing.
///
/// Content rules: `\x93NUMPY` is npy; a zip local header (`PK\x03\x04`, or `PK\x05\x06` for
/// an empty archive) is npz; an 8-byte little-endian length below 100 MB followed by `{` (and,
/// when the header is all in `head`, a JSON object that ends where the length says) is
/// safetensors; a protobuf whose fields are all `TensorProto` fields with the right wire
/// types, starting with a known `dtype` or a shape, is a TensorProto. When the content
/// matches none of these, the extension's format is returned (so reading it reports what is
/// wrong); `None` if neither helps.
///
/// ```
/// use std::path::Path;
/// use tensorcast_io::{detect_format, Format};
/// assert_eq!(detect_format(b"\x93NUMPY\x01\x00", None), Some(Format::Npy));
/// assert_eq!(detect_format(b"PK\x03\x04", Some(Path::new("x.bin"))), Some(Format::Npz));
/// assert_eq!(detect_format(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ", None), Some(Format::Safetensors));
/// // dtype float, shape [2], tensor_content of 8 bytes:
/// let pb = b"\x08\x01\x12\x04\x12\x02\x08\x02\x22\x08\x00\x00\x80\x3f\x00\x00\x00\x40";
/// assert_eq!(detect_format(pb, None), Some(Format::TensorProto));
/// assert_eq!(detect_format(b"hello", Some(Path::new("a.npy"))), Some(Format::Npy));
/// assert_eq!(detect_format(b"hello", None), None);
/// ```
pub fn detect_format(head: &[u8], path: Option<&Path>) -> Option<Format> {
    let by_ext = path.and_then(Format::from_path);
    if head.starts_with(crate::npy::MAGIC) {
        return Some(Format::Npy);
    }
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        return Some(Format::Npz);
    }
    let st = looks_like_safetensors(head);
    let pb = looks_like_tensorproto(head);
    match (st, pb) {
        (true, true) => Some(match by_ext {
            Some(Format::TensorProto) => Format::TensorProto,
            _ => Format::Safetensors,
        }),
        (true, false) => Some(Format::Safetensors),
        (false, true) => Some(Format::TensorProto),
        (false, false) => by_ext,
    }
}

fn looks_like_safetensors(head: &[u8]) -> bool {
    let Some(len) = head.get(..8) else {
        return false;
    };
    let mut n8 = [0u8; 8];
    n8.copy_from_slice(len);
    let n = u64::from_le_bytes(n8);
    if !(2..=crate::safetensors::MAX_HEADER_BYTES as u64).contains(&n) || head.get(8) != Some(&b'{')
    {
        return false;
    }
    match head.get(8..8 + n as usize) {
        // The whole header is here: it must end with '}' (and padding spaces).
        Some(h) => h.trim_ascii_end().ends_with(b"}"),
        None => true,
    }
}

/// Reads a protobuf varint at `*pos`; `None` if malformed or cut off.
fn varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*pos)?;
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// True if `head` reads as the start of a `TensorProto`: every field (up to a bound) is one
/// of its 18 fields with an allowed wire type, a `dtype` is a known value, and the first field
/// is `dtype` (1) or `tensor_shape` (2).
fn looks_like_tensorproto(head: &[u8]) -> bool {
    let mut pos = 0;
    let mut fields = 0;
    while pos < head.len() && fields < 4096 {
        let Some(key) = varint(head, &mut pos) else {
            return fields > 0; // cut off by the end of `head`
        };
        let (field, wire) = (key >> 3, key & 7);
        if fields == 0 && field != 1 && field != 2 {
            return false;
        }
        // Allowed wire types: varint fields, length-delimited (messages, bytes, packed
        // repeated), and the unpacked fixed-width encodings of the float/double fields.
        let ok = match field {
            1 | 3 => wire == 0,
            2 | 4 | 8 | 14 | 15 | 18 => wire == 2,
            5 | 9 => wire == 2 || wire == 5,
            6 | 12 => wire == 2 || wire == 1,
            7 | 10 | 11 | 13 | 16 | 17 => wire == 2 || wire == 0,
            _ => false,
        };
        if !ok {
            return false;
        }
        match wire {
            0 => {
                let Some(v) = varint(head, &mut pos) else {
                    return pos >= head.len() && fields > 0;
                };
                if field == 1 && !((1..=33).contains(&v) || (101..=133).contains(&v)) {
                    return false;
                }
            }
            1 => pos += 8,
            5 => pos += 4,
            _ => {
                let Some(len) = varint(head, &mut pos) else {
                    return pos >= head.len() && fields > 0;
                };
                pos = pos.saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
            }
        }
        fields += 1;
    }
    // Ran past the end of `head` only inside the last field: fine when `head` is a prefix.
    fields > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_parse_and_print() {
        for f in Format::ALL {
            assert_eq!(f.to_string().parse::<Format>().unwrap(), f);
            assert_eq!(f.extension().parse::<Format>().unwrap(), f);
        }
        assert!("xls".parse::<Format>().is_err());
    }

    #[test]
    fn extension_breaks_a_tie_between_safetensors_and_proto() {
        // As safetensors: N = 0x05220108 (86 MB) then '{'. As a TensorProto: dtype 1, then
        // tensor_content (field 4) of 5 bytes, then '"' (field 4 again) of 97 bytes.
        let b = [0x08u8, 0x01, 0x22, 0x05, 0, 0, 0, 0, b'{', b'"', b'a'];
        assert!(looks_like_safetensors(&b));
        assert!(looks_like_tensorproto(&b));
        assert_eq!(detect_format(&b, None), Some(Format::Safetensors));
        assert_eq!(
            detect_format(&b, Some(Path::new("t.pb"))),
            Some(Format::TensorProto)
        );
    }

    #[test]
    fn garbage_is_not_a_tensorproto() {
        assert!(!looks_like_tensorproto(b"hello world"));
        assert!(!looks_like_tensorproto(b"\x08\x00"));
        assert!(!looks_like_tensorproto(b"\x08\x63"));
        assert!(!looks_like_tensorproto(b""));
        assert!(looks_like_tensorproto(b"\x08\x07\x12\x00\x42\x01a"));
    }
}
