//! TFRecord files and `tf.train.Example` parsing, exactly as TensorFlow does them.
//!
//! TensorBoard event files: [`events`] (a summary writer as TF2's `tf.summary`, and a reader).
//! Parsed Examples to Arrow record batches and Parquet: the `tensorcast-arrow` crate (kept
//! apart so that this crate does not compile arrow-rs).
//!
//! # TFRecord
//!
//! A TFRecord file is a sequence of records, each `u64 length (LE) | u32 masked CRC32C of the
//! 8 length bytes | data | u32 masked CRC32C of the data`, the whole stream optionally
//! compressed with GZIP or ZLIB (not each record). Why the reader is built as it is:
//! - **Streaming, bounded memory.** [`RecordReader`] holds one record: its buffer grows to the
//!   largest record read, never past [`ReaderOptions::max_record_bytes`], and a header claiming
//!   more bytes than arrive allocates only what arrived (a 12-byte header cannot claim a
//!   gigabyte). A gzip bomb is decompressed a buffer at a time and ends at the record limit.
//! - **Checksums on by default**, computed with the `crc-fast` crate (carry-less-multiply
//!   folding fused with the CRC32 instruction, chosen at run time: twice the plain CRC32
//!   instruction loop on a 580-byte record); [`ReaderOptions::verify_checksums`] turns them off.
//! - **TensorFlow's errors.** Damage is reported with `tf.data.TFRecordDataset`'s `DataLoss`
//!   texts and offsets (`corrupted record at 12`, `truncated record at 21' failed with Read less
//!   bytes than requested`, `inflate() failed with error -3: invalid block type`), and its edge
//!   behaviour is kept (a partial header at the end is the end of the file; a cut-short GZIP
//!   stream ends the data). `tests/tf_observed/example.jsonl` holds what TensorFlow 2.21 did.
//! - **Files being written** are read up to their last complete record with
//!   [`ReaderOptions::allow_incomplete_tail`].
//! - **Splitting.** [`RecordIndex`] reads only the headers of an uncompressed file; its
//!   [`RecordIndex::split`] gives byte-balanced ranges of records that threads (or workers)
//!   read with [`RecordReader::open_at`]. [`scan()`] visits every record of a file on several
//!   threads in one pass, each thread reading, checking and visiting chunks of its own (what
//!   `tensorcast inspect` summarises large files with).
//! - **Writers.** [`RecordWriter`] streams to any `Write`; [`FileWriter`] / [`write_file`]
//!   write a temporary file and rename it into place, so a reader never sees a partial file.
//!
//! ```
//! use tensorcast_records::{read_records, Compression, ReaderOptions, RecordWriter};
//!
//! for compression in [Compression::None, Compression::Gzip, Compression::Zlib] {
//!     let mut w = RecordWriter::new(Vec::new(), compression)?;
//!     w.write_record(b"a record")?;
//!     let file = w.finish()?;
//!     let back = read_records(&file, ReaderOptions::with_compression(compression))?;
//!     assert_eq!(back, vec![&b"a record"[..]]);
//! }
//! # Ok::<(), tensorcast_records::RecordsError>(())
//! ```
//!
//! # Examples, as `tf.io.parse_example` parses them
//!
//! [`parse_example`], [`parse_single_example`] and [`parse_sequence_example`] take
//! serialized `tf.train.Example` / `SequenceExample` protos and [`FeatureSpec`]s (TensorFlow's
//! `FixedLenFeature`, `VarLenFeature`, `FixedLenSequenceFeature`, `RaggedFeature`) and give
//! tensorcast tensors ([`Parsed`]: dense, sparse or ragged), with TensorFlow's results and
//! error texts (`Name: <unknown>, Key: x, Index: 0.  Number of float values != expected.
//! Values size: 1 but output shape: [2]`). Why they are built as they are:
//! - **No intermediate messages.** A hand-written wire walker (the private module `wire`)
//!   finds each wanted feature's bytes in one pass over an example (later map entries win, as
//!   protobuf says), skips the others without decoding them, and decodes the wanted lists
//!   (packed or unpacked) straight into the output column. Byte strings are slices of the
//!   input `Bytes`, so string tensors share the serialized examples' memory.
//! - **Parallel.** Batches of 256 examples or more are decoded on rayon's pool; the columns
//!   are then assembled in order.
//! - **Hostile input.** Every length is checked against the bytes that remain; nesting is
//!   fixed by the schema (groups, the one recursive construct of the wire format, are skipped
//!   iteratively and bounded); outputs grow with the input, except dense defaults, whose size
//!   the caller's spec sets and whose allocation fails cleanly.
//! - **Checked against TensorFlow.** `tests/tf_observed/example.jsonl` (recorded from
//!   TensorFlow 2.21 by `gen_example.py` beside it) is replayed by the conformance runner.
//!
//! ```
//! use bytes::Bytes;
//! use tensorcast_core::{DataType, TString, Tensor};
//! use tensorcast_proto::example::{feature::Kind, BytesList, Example, Feature, Features};
//! use tensorcast_proto::Message;
//! use tensorcast_records::{parse_example, FeatureSpec, Parsed};
//!
//! let mut f = Features::default();
//! let tags = BytesList { value: vec![Bytes::from_static(b"a"), Bytes::from_static(b"b")] };
//! f.feature.insert("tags".into(), Feature { kind: Some(Kind::BytesList(tags)) });
//! let serialized = vec![Bytes::from(Example { features: Some(f) }.encode_to_vec())];
//! let specs = vec![("tags".to_string(), FeatureSpec::VarLen { dtype: DataType::STRING })];
//! let out = parse_example(&serialized, None, &specs)?;
//! let Parsed::Sparse { indices, values, dense_shape } = &out[0].1 else { unreachable!() };
//! assert_eq!(indices.as_slice::<i64>()?, &[0, 0, 0, 1]);
//! assert_eq!(values.as_slice::<TString>()?, &[TString::from("a"), TString::from("b")]);
//! assert_eq!(dense_shape.as_slice::<i64>()?, &[1, 2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub, missing_debug_implementations)]

mod batches;
mod crc;
mod detect;
mod error;
pub mod events;
mod file;
mod index;
mod inflate;
mod parse;
mod prefetch;
mod reader;
mod scan;
mod sequence;
mod wire;
mod writer;

pub use batches::{ExampleBatches, ParsedBatch};
pub use crc::masked_crc32c;
pub use detect::detect_compression;
pub use error::{Code, RecordsError, Result};
pub use file::RecordFile;
pub use index::RecordIndex;
pub use parse::{
    by_name, parse_example, parse_single_example, FeatureSpec, Parsed, Partition,
    MAX_VALUE_ROWID_ROWS,
};
pub use reader::{
    read_records, slice_records, ReaderOptions, RecordReader, Records, DEFAULT_MAX_RECORD_BYTES,
    FOOTER_BYTES, HEADER_BYTES,
};
pub use scan::{scan, Scan};
pub use sequence::{parse_sequence_example, SequenceParsed};
pub use writer::{write_file, FileWriter, RecordWriter};

/// The compression of a whole TFRecord stream (`TFRecordOptions.compression_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    /// `""`: none.
    #[default]
    None,
    /// `"GZIP"`: a gzip stream (zlib `window_bits` 15 + 16).
    Gzip,
    /// `"ZLIB"`: a zlib stream (`window_bits` 15).
    Zlib,
}

impl Compression {
    /// TensorFlow's name: `""`, `"GZIP"` or `"ZLIB"`.
    pub fn tf_name(self) -> &'static str {
        match self {
            Compression::None => "",
            Compression::Gzip => "GZIP",
            Compression::Zlib => "ZLIB",
        }
    }

    /// The compression TensorFlow calls `name` (`""`, `"NONE"`, `"GZIP"`, `"ZLIB"`).
    pub fn from_tf_name(name: &str) -> Option<Self> {
        match name {
            "" | "NONE" => Some(Compression::None),
            "GZIP" => Some(Compression::Gzip),
            "ZLIB" => Some(Compression::Zlib),
            _ => None,
        }
    }
}
