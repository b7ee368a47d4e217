//! The CLI's one format detector: what a file is, told by its content first and by its name
//! only to break a tie or when the content matches nothing, the same for every command.
//!
//! Content rules, strongest first (a rule that can match other files by chance comes after
//! every rule that cannot):
//! 1. magic numbers: `\x93NUMPY` (npy), a zip header (npz), `PAR1` (Parquet), `ARROW1` (an
//!    Arrow IPC file);
//! 2. a TFRecord's first record header, whose masked CRC32C of the length holds (one chance
//!    in 2^32 for other bytes), in the raw bytes or in the GZIP or ZLIB stream they start;
//! 3. the weak rules: a safetensors header, a plausible TensorProto (the name breaks a tie
//!    between these two), an Arrow IPC stream's first message (`ff ff ff ff` and a length);
//! 4. the name: `.tfrecord` / `.tfrecords` (with `.gz` / `.zz`), a tensor format's extension,
//!    `.parquet`, `.arrow`, `.arrows`...;
//! 5. a GZIP stream (`1f 8b 08`) that is none of the above: tensorcast reads GZIP only as a
//!    compressed TFRecord file, so it is read as one.
//!
//! So a damaged file is read as what it is (a `.tfrecord.gz` whose stream does not inflate
//! gets the TFRecord reader's `inflate() failed with error -3: ...`, as TensorFlow reports it;
//! a `.tfrecord` whose first header is damaged gets `corrupted record at 0 (Is this even a
//! TFRecord file?)`), and a TFRecord whose first length starts `ff ff ff ff` is a TFRecord to
//! every command, not an Arrow stream to some.

use std::io::Read;
use std::path::Path;

use tensorcast::io::{detect_format, Format};
use tensorcast_arrow::FileKind;
use tensorcast_records::{detect_compression, Compression};

/// How many bytes of a file detection looks at.
pub(crate) const HEAD_BYTES: u64 = 64 << 10;

/// What an input file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    /// A tensor file (npy, npz, safetensors, a serialized TensorProto).
    Tensors(Format),
    /// A TFRecord file, compressed so.
    Records(Compression),
    /// A Parquet or Arrow IPC file.
    Arrow(FileKind),
}

/// What the regular file at `path` is (its first [`HEAD_BYTES`] and its name), or `None`
/// when neither tells, or when `path` is not a regular file (a FIFO or standard input is read
/// once, as a tensor file: detection must not consume it).
pub(crate) fn detect_path(path: &Path) -> Option<Input> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut head = Vec::with_capacity(HEAD_BYTES as usize);
    // `take` bounds the read whatever the file (a procfs file reports a size of 0).
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(HEAD_BYTES).read_to_end(&mut head);
    }
    detect(&head, Some(path))
}

/// What a file starting with `head` (its first bytes; 64 KiB is plenty) and named `path` is,
/// by the rules of the module docs.
pub(crate) fn detect(head: &[u8], path: Option<&Path>) -> Option<Input> {
    if head.starts_with(b"\x93NUMPY") {
        return Some(Input::Tensors(Format::Npy));
    }
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        return Some(Input::Tensors(Format::Npz));
    }
    if let Some(kind @ (FileKind::Parquet | FileKind::ArrowFile)) = FileKind::detect(head) {
        return Some(Input::Arrow(kind));
    }
    if let Some(c) = detect_compression(head) {
        return Some(Input::Records(c));
    }
    if detect_format(head, None).is_some() {
        // The name breaks the safetensors / TensorProto tie.
        return detect_format(head, path).map(Input::Tensors);
    }
    if let Some(kind) = FileKind::detect(head) {
        return Some(Input::Arrow(kind));
    }
    if let Some(input) = path.and_then(by_name) {
        return Some(input);
    }
    head.starts_with(&[0x1f, 0x8b, 0x08])
        .then_some(Input::Records(Compression::Gzip))
}

/// What a file's name says it is: a TFRecord name (`.tfrecord`, `.tfrecords`, with `.gz` or
/// `.zz`), a tensor format's extension, a Parquet or Arrow one.
pub(crate) fn by_name(path: &Path) -> Option<Input> {
    if let Some(c) = record_name_compression(path) {
        return Some(Input::Records(c));
    }
    if let Some(f) = Format::from_path(path) {
        return Some(Input::Tensors(f));
    }
    FileKind::from_path(path).map(Input::Arrow)
}

/// The compression a TFRecord file name implies: `Some` for `.tfrecord` / `.tfrecords`
/// (none), with `.gz` (GZIP) or `.zz` (ZLIB) after them; `None` for other names.
pub(crate) fn record_name_compression(path: &Path) -> Option<Compression> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    let (stem, c) = if let Some(s) = name.strip_suffix(".gz") {
        (s, Compression::Gzip)
    } else if let Some(s) = name.strip_suffix(".zz") {
        (s, Compression::Zlib)
    } else {
        (name.as_str(), Compression::None)
    };
    (stem.ends_with(".tfrecord") || stem.ends_with(".tfrecords")).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensorcast_records::masked_crc32c;

    fn header(len: u64) -> Vec<u8> {
        let mut h = len.to_le_bytes().to_vec();
        h.extend_from_slice(&masked_crc32c(&len.to_le_bytes()).to_le_bytes());
        h
    }

    #[test]
    fn a_tfrecord_starting_ff_ff_ff_ff_is_a_tfrecord_not_an_arrow_stream() {
        let h = header(0x1_ffff_ffff);
        assert_eq!(&h[..4], &[0xff; 4]);
        assert_eq!(FileKind::detect(&h), Some(FileKind::ArrowStream));
        assert_eq!(detect(&h, None), Some(Input::Records(Compression::None)));
        // Without a CRC that holds, the same bytes are an Arrow stream's first message.
        let mut bad = h.clone();
        bad[8] ^= 1;
        assert_eq!(
            detect(&bad, None),
            Some(Input::Arrow(FileKind::ArrowStream))
        );
    }

    #[test]
    fn names_break_ties_and_name_what_content_does_not_tell() {
        let p = |s: &'static str| Some(Path::new(s));
        assert_eq!(
            detect(b"garbage", p("x.tfrecord.gz")),
            Some(Input::Records(Compression::Gzip))
        );
        assert_eq!(
            detect(b"", p("x.tfrecords")),
            Some(Input::Records(Compression::None))
        );
        assert_eq!(
            detect(b"garbage", p("x.npy")),
            Some(Input::Tensors(Format::Npy))
        );
        assert_eq!(
            detect(b"garbage", p("x.parquet")),
            Some(Input::Arrow(FileKind::Parquet))
        );
        assert_eq!(detect(b"garbage", p("x.txt")), None);
        // A damaged GZIP stream, whatever its name, is read as the compressed TFRecord file
        // tensorcast reads GZIP as.
        assert_eq!(
            detect(b"\x1f\x8b\x08\x00garbage", p("x.bin")),
            Some(Input::Records(Compression::Gzip))
        );
        assert_eq!(
            detect(b"PAR1....", p("x.tfrecord")),
            Some(Input::Arrow(FileKind::Parquet))
        );
    }

    #[test]
    fn names_imply_compressions() {
        let c = |s: &str| record_name_compression(Path::new(s));
        assert_eq!(c("a.tfrecord"), Some(Compression::None));
        assert_eq!(c("dir/train.TFRecords"), Some(Compression::None));
        assert_eq!(c("a.tfrecord.gz"), Some(Compression::Gzip));
        assert_eq!(c("a.tfrecords.zz"), Some(Compression::Zlib));
        assert_eq!(c("a.npz"), None);
        assert_eq!(c("a.gz"), None);
    }
}
