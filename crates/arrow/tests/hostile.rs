//! Hostile Parquet and Arrow IPC files built byte by byte (issue 37's audit): each claims
//! counts, sizes or depths its bytes cannot back, and must be refused with an error before a
//! decoder allocates or recurses on the claim.
//!
//! The reads run in a child process of this test binary whose address space is capped
//! (`ulimit -v`, [`CAP_MIB`]): an allocation of what a file claims fails there and aborts the
//! child, and a stack overflow kills it, either of which fails the test here instead of taking
//! the whole test binary down. In the child each read's largest single allocation request is
//! measured as well (the buffer crate's counting allocator, per thread) and must stay small.

use bytes::Bytes;
use tensorcast_arrow::{read_bytes, ReadLimits};

use crate::alloc_probe::largest_allocation;

/// The address space (MiB) of the child that runs each read.
const CAP_MIB: u64 = 1024;

/// Set in the child's environment.
const CHILD_ENV: &str = "TENSORCAST_ARROW_HOSTILE_CHILD";

/// The largest single allocation (bytes) a refused hostile read may request.
const SMALL_BYTES: usize = 1 << 20;

/// Runs `body` (the test `name` of this module) in a child process of this test binary with
/// its address space capped at [`CAP_MIB`] MiB; in the child, runs it. The child must pass
/// the one test it was started for.
fn bounded(name: &str, body: impl FnOnce()) {
    if std::env::var_os(CHILD_ENV).is_some() || cfg!(not(unix)) {
        body();
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let test = format!("hostile::{name}");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {} && exec \"$0\" \"$@\"",
            CAP_MIB * 1024
        ))
        .arg(&exe)
        .args([test.as_str(), "--exact", "--test-threads=1", "--nocapture"])
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{test} in a child capped at {CAP_MIB} MiB: {}\n{stdout}\n{stderr}",
        out.status
    );
}

/// Reads `file` with `limits`, which must fail with an error containing every one of `says`,
/// while no single allocation asks for more than [`SMALL_BYTES`]. Returns the error.
fn refused(file: Vec<u8>, limits: &ReadLimits, says: &[&str]) -> tensorcast_arrow::Error {
    let len = file.len();
    let (r, largest) = largest_allocation(|| read_bytes(Bytes::from(file), limits));
    let e = r.expect_err("a hostile file must be refused");
    let text = e.to_string();
    println!("{len}-byte file: largest allocation {largest} B: {text}");
    for s in says {
        assert!(text.contains(s), "{text:?} does not say {s:?}");
    }
    assert!(
        !text.contains("reader failed"),
        "a panic was caught: {text}"
    );
    assert!(
        largest <= SMALL_BYTES,
        "a single allocation of {largest} B for a {len}-byte file ({text})"
    );
    e
}

/// The Thrift compact protocol, enough to write Parquet footers and page headers.
mod thrift {
    pub(super) const I32: u8 = 5;
    pub(super) const I64: u8 = 6;
    pub(super) const BINARY: u8 = 8;
    pub(super) const STRUCT: u8 = 12;

    fn varint(out: &mut Vec<u8>, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn zigzag(v: i64) -> u64 {
        ((v << 1) ^ (v >> 63)) as u64
    }

    /// A struct being written, field by field (in increasing field numbers).
    #[derive(Default)]
    pub(super) struct S {
        out: Vec<u8>,
        last: i16,
    }

    impl S {
        fn header(&mut self, id: i16, ty: u8) {
            let delta = id - self.last;
            if (1..=15).contains(&delta) {
                self.out.push(((delta as u8) << 4) | ty);
            } else {
                self.out.push(ty);
                varint(&mut self.out, zigzag(i64::from(id)));
            }
            self.last = id;
        }

        pub(super) fn i32(mut self, id: i16, v: i32) -> Self {
            self.header(id, I32);
            varint(&mut self.out, zigzag(i64::from(v)));
            self
        }

        pub(super) fn i64(mut self, id: i16, v: i64) -> Self {
            self.header(id, I64);
            varint(&mut self.out, zigzag(v));
            self
        }

        pub(super) fn binary(mut self, id: i16, b: &[u8]) -> Self {
            self.header(id, BINARY);
            varint(&mut self.out, b.len() as u64);
            self.out.extend_from_slice(b);
            self
        }

        pub(super) fn strukt(mut self, id: i16, s: S) -> Self {
            self.header(id, STRUCT);
            self.out.extend(s.end());
            self
        }

        /// A list of `elements` (each already encoded) of type `ty`.
        pub(super) fn list(mut self, id: i16, ty: u8, elements: &[Vec<u8>]) -> Self {
            self.header(id, 9);
            if elements.len() < 15 {
                self.out.push(((elements.len() as u8) << 4) | ty);
            } else {
                self.out.push(0xf0 | ty);
                varint(&mut self.out, elements.len() as u64);
            }
            for e in elements {
                self.out.extend_from_slice(e);
            }
            self
        }

        pub(super) fn end(mut self) -> Vec<u8> {
            self.out.push(0);
            self.out
        }
    }

    /// An i32 as a list element.
    pub(super) fn i32_element(v: i32) -> Vec<u8> {
        let mut out = Vec::new();
        varint(&mut out, zigzag(i64::from(v)));
        out
    }

    /// A binary as a list element.
    pub(super) fn binary_element(b: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        varint(&mut out, b.len() as u64);
        out.extend_from_slice(b);
        out
    }
}

use thrift::S;

/// Parquet's physical types and encodings used below.
const INT32: i32 = 1;
const BYTE_ARRAY: i32 = 6;
const FIXED_LEN_BYTE_ARRAY: i32 = 7;
const PLAIN: i32 = 0;
const RLE: i32 = 3;
const DELTA_LENGTH_BYTE_ARRAY: i32 = 6;
const DELTA_BYTE_ARRAY: i32 = 7;
const RLE_DICTIONARY: i32 = 8;
const BYTE_STREAM_SPLIT: i32 = 9;
const UNCOMPRESSED: i32 = 0;
const SNAPPY: i32 = 1;

/// One required column `x` of a Parquet file.
struct Column {
    physical: i32,
    /// Optional (definition levels of one bit) rather than required.
    optional: bool,
    type_length: Option<i32>,
    codec: i32,
    /// The column chunk's `num_values` (and the row count).
    num_values: i64,
}

/// A page: its header and its bytes as stored.
struct Page {
    header: Vec<u8>,
    data: Vec<u8>,
}

/// A page header of `page_type` for `data`, its uncompressed size `full`, with `sub` as field
/// `sub_id` (the type's own header).
fn page(page_type: i32, full: i32, data: Vec<u8>, sub_id: i16, sub: S) -> Page {
    let header = S::default()
        .i32(1, page_type)
        .i32(2, full)
        .i32(3, data.len() as i32)
        .strukt(sub_id, sub)
        .end();
    Page { header, data }
}

fn dictionary_page(num_values: i32, data: Vec<u8>) -> Page {
    let full = data.len() as i32;
    page(
        2,
        full,
        data,
        7,
        S::default().i32(1, num_values).i32(2, PLAIN),
    )
}

fn data_page(num_values: i32, encoding: i32, data: Vec<u8>) -> Page {
    let full = data.len() as i32;
    page(
        0,
        full,
        data,
        5,
        S::default()
            .i32(1, num_values)
            .i32(2, encoding)
            .i32(3, RLE)
            .i32(4, RLE),
    )
}

/// A Parquet file of one row group holding `column`'s chunk of `pages` (a dictionary page
/// first, if any, is the chunk's dictionary page).
fn parquet_file(column: &Column, pages: &[Page]) -> Vec<u8> {
    let mut file = b"PAR1".to_vec();
    let start = file.len() as i64;
    let mut data_offset = None;
    let has_dictionary = pages
        .first()
        .is_some_and(|p| p.header.starts_with(&[0x15, 0x04]));
    for (i, p) in pages.iter().enumerate() {
        if i == usize::from(has_dictionary) {
            data_offset = Some(file.len() as i64);
        }
        file.extend_from_slice(&p.header);
        file.extend_from_slice(&p.data);
    }
    let chunk_len = file.len() as i64 - start;
    let mut meta = S::default()
        .i32(1, column.physical)
        .list(
            2,
            thrift::I32,
            &[PLAIN, RLE, RLE_DICTIONARY].map(thrift::i32_element),
        )
        .list(3, thrift::BINARY, &[thrift::binary_element(b"x")])
        .i32(4, column.codec)
        .i64(5, column.num_values)
        .i64(6, chunk_len)
        .i64(7, chunk_len)
        .i64(9, data_offset.unwrap_or(start));
    if has_dictionary {
        meta = meta.i64(11, start);
    }
    let chunk = S::default().i64(2, start).strukt(3, meta).end();
    let row_group = S::default()
        .list(1, thrift::STRUCT, &[chunk])
        .i64(2, chunk_len)
        .i64(3, column.num_values)
        .end();
    let mut leaf = S::default().i32(1, column.physical);
    if let Some(len) = column.type_length {
        leaf = leaf.i32(2, len);
    }
    let schema = [
        S::default().binary(4, b"schema").i32(5, 1).end(),
        leaf.i32(3, i32::from(column.optional))
            .binary(4, b"x")
            .end(),
    ];
    footer(file, &schema, column.num_values, &[row_group])
}

/// `file` (the magic and the column chunks) ended with a footer of `schema` and `row_groups`.
fn footer(mut file: Vec<u8>, schema: &[Vec<u8>], rows: i64, row_groups: &[Vec<u8>]) -> Vec<u8> {
    let meta = S::default()
        .i32(1, 1)
        .list(2, thrift::STRUCT, schema)
        .i64(3, rows)
        .list(4, thrift::STRUCT, row_groups)
        .end();
    file.extend_from_slice(&meta);
    file.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    file.extend_from_slice(b"PAR1");
    file
}

/// The int32 column of one row whose dictionary page claims `claimed` values and holds one
/// (7), and whose data page picks entry 0 (RLE indices of bit width 1: one run of one 0).
fn int32_dictionary_file(claimed: i32) -> Vec<u8> {
    let column = Column {
        physical: INT32,
        optional: false,
        type_length: None,
        codec: UNCOMPRESSED,
        num_values: 1,
    };
    parquet_file(
        &column,
        &[
            dictionary_page(claimed, 7i32.to_le_bytes().to_vec()),
            data_page(1, RLE_DICTIONARY, vec![1, 2, 0]),
        ],
    )
}

fn int32_values(batches: &[tensorcast_arrow::arrow_array::RecordBatch]) -> Vec<i32> {
    use tensorcast_arrow::arrow_array::{cast::AsArray, types::Int32Type};
    batches
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int32Type>().values().to_vec())
        .collect()
}

/// Issue 37, finding 1: a 122-byte file whose dictionary page claims 2^31 - 1 int32 values in
/// its 4 bytes made the `parquet` crate resize the dictionary to 2^31 - 1 entries (8 GiB,
/// zeroed) before decoding one, an abort under a memory limit. pyarrow says "Unexpected end
/// of stream". The claim is checked against the page's bytes first.
#[test]
fn parquet_dictionary_page_claiming_2e31_values_is_refused_before_allocating() {
    // The same file with its true count reads back: the file is well formed but for the claim.
    let (_, batches) = read_bytes(
        Bytes::from(int32_dictionary_file(1)),
        &ReadLimits::default(),
    )
    .unwrap();
    assert_eq!(int32_values(&batches), [7]);
    bounded(
        "parquet_dictionary_page_claiming_2e31_values_is_refused_before_allocating",
        || {
            let file = int32_dictionary_file(i32::MAX);
            assert!(file.len() <= 122, "{}", file.len());
            let e = refused(
                file,
                &ReadLimits::default(),
                &[
                    "the dictionary page of column \"x\" of row group 0 claims 2147483647 values",
                    "in a page of 4 bytes",
                ],
            );
            assert!(matches!(e, tensorcast_arrow::Error::Invalid(_)), "{e:?}");
        },
    );
}

/// A dictionary whose values fit their page but whose decoded entries do not fit the caller's
/// limit (booleans: a bit each in the page, a byte each decoded) is refused by the limit.
#[test]
fn parquet_dictionary_page_decoding_past_the_limit_is_refused() {
    let column = Column {
        physical: 0, // BOOLEAN
        optional: false,
        type_length: None,
        codec: UNCOMPRESSED,
        num_values: 1,
    };
    let file = parquet_file(
        &column,
        &[
            dictionary_page(8 * 4096, vec![0; 4096]),
            data_page(1, RLE_DICTIONARY, vec![1, 2, 0]),
        ],
    );
    let limits = ReadLimits {
        max_decoded_bytes: 8192,
    };
    let e = refused(
        file,
        &limits,
        &["claims 32768 values, which decode to 32768 bytes, more than the limit of 8192"],
    );
    assert!(
        matches!(e, tensorcast_arrow::Error::Unsupported(_)),
        "{e:?}"
    );
}

/// A footer whose schema nests `groups` groups (each of one child) between the root and an
/// int32 leaf, and no row groups.
fn nested_schema_file(groups: usize) -> Vec<u8> {
    let mut schema = vec![S::default().binary(4, b"schema").i32(5, 1).end()];
    for _ in 0..groups {
        schema.push(S::default().i32(3, 1).binary(4, b"g").i32(5, 1).end());
    }
    schema.push(S::default().i32(1, INT32).i32(3, 1).binary(4, b"x").end());
    footer(b"PAR1".to_vec(), &schema, 0, &[])
}

/// Issue 37, finding 2: a schema nested 2,000 groups deep (16 KB) overflowed the stack in the
/// `parquet` crate's recursive schema building (pyarrow refuses more than 100 levels). The
/// depth is checked on the footer's bytes first, at pyarrow's limit: 100 levels counting the
/// root and the leaf read (pyarrow reads them too), 101 are refused with its words.
#[test]
fn parquet_schema_nested_2000_deep_is_refused_without_stack_overflow() {
    let (schema, batches) =
        read_bytes(Bytes::from(nested_schema_file(98)), &ReadLimits::default()).unwrap();
    assert_eq!(schema.fields().len(), 1);
    assert!(batches.is_empty());
    bounded(
        "parquet_schema_nested_2000_deep_is_refused_without_stack_overflow",
        || {
            for groups in [2000, 20_000, 99] {
                let e = refused(
                    nested_schema_file(groups),
                    &ReadLimits::default(),
                    &["Parquet schema too deeply nested", "past the limit of 100"],
                );
                assert!(
                    e.to_string().contains("is 101 levels deep"),
                    "the first element past the limit is named: {e}"
                );
                assert!(
                    matches!(e, tensorcast_arrow::Error::Unsupported(_)),
                    "{e:?}"
                );
            }
        },
    );
}

/// A Snappy page claiming 1 GiB uncompressed from 12 bytes: the `parquet` crate allocated
/// and zeroed the claimed size before decompressing. Snappy cannot expand 12 bytes past a
/// few hundred: refused from the header (under the default 8 GiB limit).
#[test]
fn parquet_snappy_page_claiming_1gib_from_12_bytes_is_refused_before_allocating() {
    bounded(
        "parquet_snappy_page_claiming_1gib_from_12_bytes_is_refused_before_allocating",
        || {
            let column = Column {
                physical: INT32,
                optional: false,
                type_length: None,
                codec: SNAPPY,
                num_values: 1,
            };
            let p = page(
                0,
                1 << 30,
                vec![0; 12],
                5,
                S::default().i32(1, 1).i32(2, PLAIN).i32(3, RLE).i32(4, RLE),
            );
            refused(
                parquet_file(&column, &[p]),
                &ReadLimits::default(),
                &["claims 1073741824 bytes uncompressed from 12 Snappy-compressed bytes"],
            );
        },
    );
}

/// The definition levels of an optional column's version-1 page: `n` levels of `level` (bit
/// width 1) as one RLE run, after their 4-byte length.
fn one_level_run(n: u32, level: u8) -> Vec<u8> {
    let mut run = Vec::new();
    let mut header = u64::from(n) << 1;
    loop {
        let b = (header & 0x7f) as u8;
        header >>= 7;
        if header == 0 {
            run.push(b);
            break;
        }
        run.push(b | 0x80);
    }
    run.push(level);
    let mut out = (run.len() as u32).to_le_bytes().to_vec();
    out.extend(run);
    out
}

/// Data pages claiming more values than their column chunk (which the decoded-size estimate
/// counted) are refused: a 100-byte file of one row whose page is 2^31 - 1 nulls (one RLE run)
/// decoded row after row up to the caller's limit (8 GiB by default).
#[test]
fn parquet_data_pages_claiming_more_values_than_their_chunk_are_refused() {
    let column = Column {
        physical: INT32,
        optional: true,
        type_length: None,
        codec: UNCOMPRESSED,
        num_values: 1,
    };
    // The same page claiming its one null reads.
    let file = parquet_file(&column, &[data_page(1, PLAIN, one_level_run(1, 0))]);
    let (_, batches) = read_bytes(Bytes::from(file), &ReadLimits::default()).unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    bounded(
        "parquet_data_pages_claiming_more_values_than_their_chunk_are_refused",
        || {
            let file = parquet_file(
                &column,
                &[data_page(
                    i32::MAX,
                    PLAIN,
                    one_level_run(i32::MAX as u32, 0),
                )],
            );
            refused(
                file,
                &ReadLimits::default(),
                &[
                    "the data pages of column \"x\" of row group 0 claim more values than the \
                   column chunk's 1",
                ],
            );
        },
    );
}

/// A version-2 data page whose level lengths add past i32 (the crate adds them as i32) or
/// past the page, or that claims more nulls than values, is refused from its header.
#[test]
fn parquet_v2_page_with_impossible_level_lengths_or_nulls_is_refused() {
    let column = Column {
        physical: INT32,
        optional: false,
        type_length: None,
        codec: UNCOMPRESSED,
        num_values: 1,
    };
    let v2 = |nulls: i32, def: i32, rep: i32| {
        let data = 5i32.to_le_bytes().to_vec();
        page(
            3,
            data.len() as i32,
            data,
            8,
            S::default()
                .i32(1, 1)
                .i32(2, nulls)
                .i32(3, 1)
                .i32(4, PLAIN)
                .i32(5, def)
                .i32(6, rep),
        )
    };
    let limits = ReadLimits::default();
    let max = i32::MAX;
    refused(
        parquet_file(&column, &[v2(0, max, max)]),
        &limits,
        &["claims 2147483647 + 2147483647 bytes of repetition and definition levels in 4 bytes"],
    );
    refused(
        parquet_file(&column, &[v2(0, 3, 2)]),
        &limits,
        &["claims 2 + 3 bytes of repetition and definition levels in 4 bytes"],
    );
    refused(
        parquet_file(&column, &[v2(2, 0, 0)]),
        &limits,
        &["claims 2 nulls in 1 values"],
    );
    let (_, batches) =
        read_bytes(Bytes::from(parquet_file(&column, &[v2(0, 0, 0)])), &limits).unwrap();
    assert_eq!(int32_values(&batches), [5]);
}

/// A DELTA_BINARY_PACKED stream's header (block size 128, 4 mini blocks) declaring `count`
/// values, the first `first`; with no more than one value it needs no blocks.
fn delta_header(count: u32, first: u8) -> Vec<u8> {
    let mut v = vec![0x80, 0x01, 0x04];
    let mut c = count;
    loop {
        let b = (c & 0x7f) as u8;
        c >>= 7;
        if c == 0 {
            v.push(b);
            break;
        }
        v.push(b | 0x80);
    }
    v.push(first << 1); // zigzag
    v
}

/// A one-row `BYTE_ARRAY` column whose page is `data`, encoded `encoding`.
fn byte_array_file(encoding: i32, data: Vec<u8>) -> Vec<u8> {
    let column = Column {
        physical: BYTE_ARRAY,
        optional: false,
        type_length: None,
        codec: UNCOMPRESSED,
        num_values: 1,
    };
    parquet_file(&column, &[data_page(1, encoding, data)])
}

/// A DELTA_LENGTH_BYTE_ARRAY data page whose lengths stream declares 2^31 - 1 lengths for a
/// page of one value: the crate allocated `vec![0i32; count]` (8 GiB) before decoding one.
/// The count is checked against the page's values first.
#[test]
fn parquet_delta_length_page_claiming_2e31_lengths_is_refused_before_allocating() {
    // The lengths stream, then the one value's 3 bytes.
    let page = |count| [delta_header(count, 3), b"abc".to_vec()].concat();
    let file = byte_array_file(DELTA_LENGTH_BYTE_ARRAY, page(1));
    let (_, batches) = read_bytes(Bytes::from(file), &ReadLimits::default()).unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    bounded(
        "parquet_delta_length_page_claiming_2e31_lengths_is_refused_before_allocating",
        || {
            refused(
                byte_array_file(DELTA_LENGTH_BYTE_ARRAY, page(i32::MAX as u32)),
                &ReadLimits::default(),
                &[
                    "a data page of column \"x\" of row group 0 declares 2147483647 \
                   DELTA_LENGTH_BYTE_ARRAY values in a page of 1",
                ],
            );
        },
    );
}

/// A DELTA_BYTE_ARRAY data page of one prefix whose suffix lengths (the second stream, after
/// the prefixes' blocks) declare 2^31 - 1 values: the crate allocated the claimed suffix
/// lengths (8 GiB) before decoding one. The walk finds the second stream as the crate does.
#[test]
fn parquet_delta_byte_array_page_claiming_2e31_suffixes_is_refused_before_allocating() {
    // One prefix of length 0 (no blocks), then the suffix lengths and the suffix's 3 bytes.
    let page = |count| [delta_header(1, 0), delta_header(count, 3), b"abc".to_vec()].concat();
    let file = byte_array_file(DELTA_BYTE_ARRAY, page(1));
    let (_, batches) = read_bytes(Bytes::from(file), &ReadLimits::default()).unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    bounded(
        "parquet_delta_byte_array_page_claiming_2e31_suffixes_is_refused_before_allocating",
        || {
            refused(
                byte_array_file(DELTA_BYTE_ARRAY, page(i32::MAX as u32)),
                &ReadLimits::default(),
                &["declares 2147483647 DELTA_BYTE_ARRAY values in a page of 1"],
            );
        },
    );
}

/// A FIXED_LEN_BYTE_ARRAY column of 2^30-byte values (its page BYTE_STREAM_SPLIT, whose size
/// the crate does not check first): the crate's reader reserves a batch of them (1,024 x 1 GiB)
/// before reading a value. A batch must fit the decoded-size limit.
#[test]
fn parquet_fixed_len_byte_array_of_2e30_bytes_is_refused_before_allocating() {
    bounded(
        "parquet_fixed_len_byte_array_of_2e30_bytes_is_refused_before_allocating",
        || {
            let column = Column {
                physical: FIXED_LEN_BYTE_ARRAY,
                optional: false,
                type_length: Some(1 << 30),
                codec: UNCOMPRESSED,
                num_values: 1,
            };
            let e = refused(
                parquet_file(&column, &[data_page(1, BYTE_STREAM_SPLIT, vec![0; 16])]),
                &ReadLimits::default(),
                &["decode to more than the limit"],
            );
            assert!(
                matches!(e, tensorcast_arrow::Error::Unsupported(_)),
                "{e:?}"
            );
        },
    );
}

/// An Arrow IPC file whose schema nests lists `depth` deep, written by arrow-rs.
fn nested_list_ipc(depth: usize) -> Vec<u8> {
    use std::sync::Arc;
    use tensorcast_arrow::arrow_schema::{DataType, Field, Schema};

    let mut t = DataType::Int32;
    for _ in 0..depth {
        t = DataType::List(Arc::new(Field::new("item", t, true)));
    }
    let schema = Arc::new(Schema::new(vec![Field::new("x", t, true)]));
    let mut out = Vec::new();
    let mut w = arrow_ipc::writer::FileWriter::try_new(&mut out, &schema).unwrap();
    w.finish().unwrap();
    drop(w);
    out
}

/// An Arrow IPC file whose schema nests lists 200 deep is refused (flatbuffers' verifier stops
/// at 64 tables deep) before anything recurses over the type; a few levels read.
#[test]
fn arrow_ipc_schema_nested_200_deep_is_refused_without_stack_overflow() {
    let (schema, _) = read_bytes(Bytes::from(nested_list_ipc(5)), &ReadLimits::default()).unwrap();
    assert_eq!(schema.fields().len(), 1);
    bounded(
        "arrow_ipc_schema_nested_200_deep_is_refused_without_stack_overflow",
        || {
            refused(
                nested_list_ipc(200),
                &ReadLimits::default(),
                &["corrupt Arrow IPC data"],
            );
        },
    );
}
