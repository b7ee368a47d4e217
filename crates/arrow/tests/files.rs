//! Tensors and parsed Examples through Parquet and Arrow IPC files, and bad files refused.

use bytes::Bytes;
use tensorcast_arrow::arrow_schema::DataType as ArrowType;
use tensorcast_arrow::{
    batch_to_tensors, parsed_to_batch, read_bytes, tensors_to_batch, write_file, FileKind,
    ReadLimits, FIXED_SHAPE_TENSOR,
};
use tensorcast_core::{f16, DataType, TString, Tensor};
use tensorcast_proto::example::{feature::Kind, BytesList, Example, Feature, Features};
use tensorcast_proto::example::{FloatList, Int64List};
use tensorcast_proto::Message;
use tensorcast_records::{parse_example, FeatureSpec, Partition};

pub(crate) fn sample_tensors() -> Vec<(String, Tensor)> {
    let n = 3i64;
    vec![
        (
            "f32".into(),
            Tensor::from_vec(
                [
                    1.5f32,
                    -0.0,
                    f32::NAN,
                    f32::INFINITY,
                    f32::MIN_POSITIVE / 2.0,
                    7.0,
                ]
                .iter()
                .cycle()
                .take(24)
                .copied()
                .collect(),
                [n, 2, 4],
            )
            .unwrap(),
        ),
        (
            "f64".into(),
            Tensor::from_vec(vec![0.1f64, -2.5, 1e300], [n]).unwrap(),
        ),
        (
            "f16".into(),
            Tensor::from_vec(
                (0..6).map(|i| f16::from_f32(i as f32 * 0.3)).collect(),
                [n, 2],
            )
            .unwrap(),
        ),
        (
            "i8".into(),
            Tensor::from_vec(vec![-128i8, 0, 127, 1, 2, 3], [n, 1, 2]).unwrap(),
        ),
        (
            "u16".into(),
            Tensor::from_vec(vec![65535u16, 0, 7], [n, 1]).unwrap(),
        ),
        (
            "i32".into(),
            Tensor::from_vec(vec![i32::MIN, -1, i32::MAX], [n]).unwrap(),
        ),
        (
            "u64".into(),
            Tensor::from_vec(vec![u64::MAX, 0, 1 << 63, 5, 6, 7], [n, 2]).unwrap(),
        ),
        (
            "i64".into(),
            Tensor::from_vec(vec![i64::MIN, 0, i64::MAX], [n]).unwrap(),
        ),
        (
            "bool".into(),
            Tensor::from_vec(vec![true, false, true, true, false, false], [n, 2]).unwrap(),
        ),
        (
            "str".into(),
            Tensor::from_vec(
                vec![
                    TString::from("a"),
                    TString::from(&b"\x00\xff"[..]),
                    TString::from(""),
                    TString::from("ünï"),
                    TString::from("x"),
                    TString::from("yy"),
                ],
                [n, 2],
            )
            .unwrap(),
        ),
    ]
}

fn bits_equal(a: &Tensor, b: &Tensor) -> bool {
    a.dtype() == b.dtype()
        && a.shape() == b.shape()
        && if a.dtype() == DataType::STRING {
            a == b
        } else {
            a.tensor_data().unwrap() == b.tensor_data().unwrap()
        }
}

#[test]
fn tensors_round_trip_through_every_file_kind() {
    let tensors = sample_tensors();
    let batch = sample_batch();
    let schema = batch.schema();
    assert_eq!(batch.num_rows(), 3);
    let f = schema.field_with_name("f32").unwrap();
    assert_eq!(f.metadata()["ARROW:extension:name"], FIXED_SHAPE_TENSOR);
    assert_eq!(
        f.metadata()["ARROW:extension:metadata"],
        r#"{"shape":[2,4]}"#
    );
    assert_eq!(
        schema.field_with_name("str").unwrap().metadata()["ARROW:extension:metadata"],
        r#"{"shape":[2]}"#
    );
    assert_eq!(
        schema.field_with_name("i32").unwrap().data_type(),
        &ArrowType::Int32
    );
    let dir = tempfile::tempdir().unwrap();
    for (kind, name) in [
        (FileKind::Parquet, "t.parquet"),
        (FileKind::ArrowFile, "t.arrow"),
        (FileKind::ArrowStream, "t.arrows"),
    ] {
        let path = dir.path().join(name);
        write_file(
            &path,
            kind,
            schema.clone(),
            &[batch.clone(), batch.slice(1, 2)],
        )
        .unwrap();
        let bytes = Bytes::from(std::fs::read(&path).unwrap());
        assert_eq!(FileKind::detect(&bytes), Some(kind), "{name}");
        let (s, batches) = read_bytes(bytes, &ReadLimits::default()).unwrap();
        assert_eq!(s.fields().len(), tensors.len());
        let back = tensorcast_arrow::batches_to_tensors(&s, &batches).unwrap();
        for ((n, t), (m, u)) in tensors.iter().zip(&back) {
            assert_eq!(n, m);
            // Five rows: the batch, then its last two rows again.
            let twice = u.slice(0, 3).unwrap();
            assert!(bits_equal(t, &twice), "{name}: {n}: {t:?} vs {u:?}");
            assert!(
                bits_equal(&t.slice(1, 3).unwrap(), &u.slice(3, 5).unwrap()),
                "{name}: {n}"
            );
        }
    }
    // Nothing but the three files is left (atomic writes clean up).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
}

#[test]
fn tensors_that_do_not_fit_a_table_are_refused_clearly() {
    let a = Tensor::from_vec(vec![1f32, 2.0], [2i64]).unwrap();
    let b = Tensor::from_vec(vec![1f32, 2.0, 3.0], [3i64]).unwrap();
    let e = tensors_to_batch([("a", &a), ("b", &b)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("'a' has 2 rows and 'b' has 3"), "{e}");
    let s = Tensor::scalar_of(1i32);
    let e = tensors_to_batch([("s", &s)]).unwrap_err().to_string();
    assert!(e.contains("scalar"), "{e}");
    let c = Tensor::from_vec(vec![tensorcast_core::Complex64::new(1.0, 2.0)], [1i64]).unwrap();
    let e = tensors_to_batch([("c", &c)]).unwrap_err().to_string();
    assert!(e.contains("Arrow has no type for complex"), "{e}");
}

#[test]
fn a_failed_write_leaves_the_old_file_and_no_litter() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    std::fs::write(&path, b"old").unwrap();
    let (n, t) = &sample_tensors()[0];
    let batch = tensors_to_batch([(n.as_str(), t)]).unwrap();
    let other = tensors_to_batch([("zz", &Tensor::from_vec(vec![1i8], [1i64]).unwrap())]).unwrap();
    // A batch that does not match the schema fails halfway.
    assert!(write_file(&path, FileKind::Parquet, batch.schema(), &[batch, other]).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"old");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

fn example(x: &[f32], label: i64, tags: &[&str], tok: &[i64], lens: &[i64]) -> Bytes {
    let mut f = Features::default();
    let feat = |k| Feature { kind: Some(k) };
    f.feature.insert(
        "x".into(),
        feat(Kind::FloatList(FloatList { value: x.to_vec() })),
    );
    f.feature.insert(
        "label".into(),
        feat(Kind::Int64List(Int64List { value: vec![label] })),
    );
    f.feature.insert(
        "tags".into(),
        feat(Kind::BytesList(BytesList {
            value: tags
                .iter()
                .map(|t| Bytes::copy_from_slice(t.as_bytes()))
                .collect(),
        })),
    );
    f.feature.insert(
        "tok".into(),
        feat(Kind::Int64List(Int64List {
            value: tok.to_vec(),
        })),
    );
    f.feature.insert(
        "tok_lens".into(),
        feat(Kind::Int64List(Int64List {
            value: lens.to_vec(),
        })),
    );
    Bytes::from(Example { features: Some(f) }.encode_to_vec())
}

pub(crate) fn example_specs() -> Vec<(String, FeatureSpec)> {
    vec![
        (
            "x".into(),
            FeatureSpec::FixedLen {
                shape: vec![2, 2],
                dtype: DataType::FLOAT,
                default_value: None,
            },
        ),
        (
            "label".into(),
            FeatureSpec::FixedLen {
                shape: vec![],
                dtype: DataType::INT64,
                default_value: None,
            },
        ),
        (
            "tags".into(),
            FeatureSpec::VarLen {
                dtype: DataType::STRING,
            },
        ),
        (
            "tok".into(),
            FeatureSpec::Ragged {
                dtype: DataType::INT64,
                value_key: None,
                partitions: vec![Partition::RowLengths("tok_lens".into())],
                row_splits_dtype: DataType::INT32,
            },
        ),
    ]
}

/// `n` Examples: x = [i, i+1, i+2, i+3], label = i % 3, i % 4 tags, tok of length i % 5 split
/// into rows of 1 and the rest.
pub(crate) fn examples(n: usize) -> Vec<Bytes> {
    (0..n)
        .map(|i| {
            let x: Vec<f32> = (0..4).map(|j| (i + j) as f32).collect();
            let tags: Vec<String> = (0..i % 4).map(|j| format!("t{j}")).collect();
            let tags: Vec<&str> = tags.iter().map(String::as_str).collect();
            let tok: Vec<i64> = (0..(i % 5) as i64).collect();
            let lens: Vec<i64> = if tok.is_empty() {
                vec![]
            } else {
                vec![1, tok.len() as i64 - 1]
            };
            example(&x, (i % 3) as i64, &tags, &tok, &lens)
        })
        .collect()
}

#[test]
fn parsed_examples_become_one_row_each() {
    let parsed = parse_example(&examples(6), None, &example_specs()).unwrap();
    let batch = parsed_to_batch(&parsed).unwrap();
    assert_eq!(batch.num_rows(), 6);
    let schema = batch.schema();
    assert_eq!(
        schema.field(0).metadata()["ARROW:extension:metadata"],
        r#"{"shape":[2,2]}"#
    );
    assert_eq!(schema.field(1).data_type(), &ArrowType::Int64);
    let ArrowType::List(item) = schema.field(2).data_type() else {
        panic!("{:?}", schema.field(2))
    };
    assert_eq!(item.data_type(), &ArrowType::Binary);
    let ArrowType::List(inner) = schema.field(3).data_type() else {
        panic!()
    };
    assert!(matches!(inner.data_type(), ArrowType::List(v) if v.data_type() == &ArrowType::Int64));
    let back = batch_to_tensors(&batch).unwrap();
    let names: Vec<&str> = back.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "x",
            "label",
            "tags.flat_values",
            "tags.row_splits.0",
            "tok.flat_values",
            "tok.row_splits.0",
            "tok.row_splits.1"
        ]
    );
    let tensorcast_records::Parsed::Dense(x) = &parsed[0].1 else {
        panic!()
    };
    assert_eq!(&back[0].1, x);
    assert_eq!(back[3].1.as_slice::<i64>().unwrap(), &[0, 0, 1, 3, 6, 6, 7]);
    let tensorcast_records::Parsed::Ragged {
        flat_values,
        row_splits,
    } = &parsed[3].1
    else {
        panic!()
    };
    assert_eq!(&back[4].1, flat_values);
    let splits: Vec<i64> = row_splits[1]
        .as_slice::<i32>()
        .unwrap()
        .iter()
        .map(|&v| v as i64)
        .collect();
    assert_eq!(back[6].1.as_slice::<i64>().unwrap(), &splits[..]);
}

#[test]
fn bad_files_give_errors_not_panics() {
    let batch = sample_batch();
    let dir = tempfile::tempdir().unwrap();
    for (kind, name) in [
        (FileKind::Parquet, "t.parquet"),
        (FileKind::ArrowFile, "t.arrow"),
    ] {
        let path = dir.path().join(name);
        write_file(&path, kind, batch.schema(), std::slice::from_ref(&batch)).unwrap();
        let good = std::fs::read(&path).unwrap();
        // Every truncation, and single-byte damage over the file, is an error or a batch.
        for cut in (0..good.len()).step_by(7) {
            let _ = read_bytes(Bytes::copy_from_slice(&good[..cut]), &ReadLimits::default());
        }
        for at in (0..good.len()).step_by(5) {
            let mut bad = good.clone();
            bad[at] ^= 0x5a;
            if let Ok((s, b)) = read_bytes(Bytes::from(bad), &ReadLimits::default()) {
                let _ = tensorcast_arrow::batches_to_tensors(&s, &b);
            }
        }
        let tiny = ReadLimits {
            max_decoded_bytes: 16,
        };
        let e = read_bytes(Bytes::from(good), &tiny)
            .unwrap_err()
            .to_string();
        assert!(e.contains("limit"), "{e}");
    }
    assert!(read_bytes(Bytes::from_static(b"not a file"), &ReadLimits::default()).is_err());
}

/// The arrow_read fuzz target's finding: an IPC stream whose offsets buffer has a length that
/// is not a multiple of 4 made arrow-data's validation panic (an assertion in
/// `Buffer::typed_data`; under the fuzzer a crash, even though `read_bytes` caught it). The
/// framing check now refuses it before arrow-rs reads it: an error, and no panic at all.
#[test]
fn a_stream_that_made_arrow_data_panic_is_refused_before_arrow_reads_it() {
    let data = include_bytes!("data/ipc_stream_odd_buffer_length.arrows");
    let e = read_bytes(Bytes::from_static(data), &ReadLimits::default()).unwrap_err();
    let e = e.to_string();
    assert!(e.starts_with("corrupt Arrow IPC data: a buffer of"), "{e}");
    assert!(!e.contains("reader failed"), "{e}");
}

thread_local! {
    // Where the last panic on this thread came from (file:line), recorded by the hook that
    // `read_damaged` installs.
    static LAST_PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Damages `files` at random `rounds` times in all (bytes flipped or overwritten with edge
/// values, cut short) and reads each: a batch or an error. An error that comes from a panic
/// caught inside the reader (`read_bytes` catches those and says "its reader failed") is
/// allowed only when `contained` holds a path fragment of where it came from (the `parquet`
/// crate, whose 60.x decoders still panic on some damaged pages that no check before decoding
/// can see); a panic from anywhere else fails the test. Returns how many reads were refused
/// and how many of those were contained panics.
fn read_damaged(files: &[Vec<u8>], rounds: usize, contained: Option<&str>) -> (usize, usize) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(at));
    }));
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let (mut refused, mut caught) = (0, 0);
    for round in 0..rounds {
        let mut f = files[round % files.len()].clone();
        for _ in 0..1 + next(4) {
            let at = next(f.len());
            f[at] = match next(4) {
                0 => f[at] ^ (1 << next(8)),
                1 => 0xff,
                2 => 0,
                _ => next(256) as u8,
            };
        }
        if next(8) == 0 {
            f.truncate(next(f.len()));
        }
        LAST_PANIC.with(|p| *p.borrow_mut() = None);
        match read_bytes(Bytes::from(f), &ReadLimits::default()) {
            Ok((s, b)) => {
                let _ = tensorcast_arrow::batches_to_tensors(&s, &b);
            }
            Err(e) => {
                let e = e.to_string();
                if e.contains("reader failed") {
                    let at = LAST_PANIC.with(|p| p.borrow().clone()).unwrap_or_default();
                    assert!(
                        contained.is_some_and(|c| at.contains(c)),
                        "round {round}: {e} (panicked at {at})"
                    );
                    caught += 1;
                }
                refused += 1;
            }
        }
    }
    std::panic::set_hook(previous);
    (refused, caught)
}

/// Two batches holding every column kind we write: tensors of each dtype; strings, list and
/// nested list columns (parsed Examples).
fn every_column_kind() -> [tensorcast_arrow::arrow_array::RecordBatch; 2] {
    let dense = sample_batch();
    let parsed = parse_example(&examples(5), None, &example_specs()).unwrap();
    [dense, parsed_to_batch(&parsed).unwrap()]
}

/// [`sample_tensors`] as one batch.
pub(crate) fn sample_batch() -> tensorcast_arrow::arrow_array::RecordBatch {
    let tensors = sample_tensors();
    tensors_to_batch(tensors.iter().map(|(n, t)| (n.as_str(), t))).unwrap()
}

/// `TENSORCAST_MUTATIONS` sets the number of damaged reads of each test (default 3,000).
fn mutation_rounds() -> usize {
    std::env::var("TENSORCAST_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

/// Arrow IPC files and streams of every column kind we write (tensors of each dtype, strings,
/// list and nested list columns), damaged at random many times: the framing and buffer checks
/// stop every damage before arrow-rs panics.
#[test]
fn damaged_ipc_files_are_refused_before_arrow_rs_can_panic() {
    let rounds = mutation_rounds();
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (i, batch) in every_column_kind().into_iter().enumerate() {
        for kind in [FileKind::ArrowFile, FileKind::ArrowStream] {
            let path = dir.path().join(format!("{i}.{kind:?}"));
            write_file(&path, kind, batch.schema(), std::slice::from_ref(&batch)).unwrap();
            files.push(std::fs::read(&path).unwrap());
        }
    }
    let (refused, caught) = read_damaged(&files, rounds, None);
    assert!(refused > 0 || rounds == 0);
    assert_eq!(caught, 0);
}

/// `batch` as a Parquet file written by the `parquet` crate with dictionary encoding on (as
/// other writers do by default).
fn dictionary_parquet(batch: &tensorcast_arrow::arrow_array::RecordBatch) -> Vec<u8> {
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;

    let props = WriterProperties::builder()
        .set_dictionary_enabled(true)
        .build();
    let mut bytes = Vec::new();
    let mut w = ArrowWriter::try_new(&mut bytes, batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    bytes
}

/// Parquet files of every column kind we write, as we write them and dictionary-encoded (as
/// other writers do by default), damaged at random many times: the column-chunk and page
/// checks stop the damage we know how to see before decoding (chunks outside the file, a
/// dictionary-encoded page without its dictionary, a dictionary of no values holding bytes);
/// what the `parquet` crate still panics on (a dictionary index past a fixed-length byte array
/// dictionary, for one) is caught and reported as a corrupt file, and a panic from anywhere
/// else fails the test.
#[test]
fn damaged_parquet_files_are_refused_and_no_panic_escapes() {
    let rounds = mutation_rounds();
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (i, batch) in every_column_kind().into_iter().enumerate() {
        let path = dir.path().join(format!("{i}.parquet"));
        write_file(
            &path,
            FileKind::Parquet,
            batch.schema(),
            std::slice::from_ref(&batch),
        )
        .unwrap();
        files.push(std::fs::read(&path).unwrap());
        files.push(dictionary_parquet(&batch));
    }
    let (refused, caught) = read_damaged(&files, rounds, Some("/parquet-"));
    assert!(refused > 0 || rounds == 0);
    println!("{rounds} damaged Parquet files: {refused} refused, {caught} of them by a panic caught inside the parquet crate");
}

/// A Parquet column chunk whose dictionary page is gone (here turned into an index page, which
/// readers skip) while its data page stays dictionary-encoded: the `parquet` crate panics on
/// one ("Decoder for dict should have been set"; found by the `arrow_read` fuzz target), so
/// the reader refuses it first, naming the column.
#[test]
fn a_dictionary_encoded_page_without_its_dictionary_is_refused() {
    use std::sync::Arc;
    use tensorcast_arrow::arrow_array::{ArrayRef, Int32Array, RecordBatch};

    let a: ArrayRef = Arc::new(Int32Array::from_iter_values((0..64).map(|i| i % 3)));
    let batch = RecordBatch::try_from_iter([("v", a)]).unwrap();
    let mut bytes = dictionary_parquet(&batch);
    // The file as written reads back.
    let (_, batches) = read_bytes(Bytes::from(bytes.clone()), &ReadLimits::default()).unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 64);
    // The page header starts with field 1, the page type (compact i32: 0x15, then the zigzag
    // varint; DICTIONARY_PAGE = 2 is 0x04, INDEX_PAGE = 1 is 0x02).
    let meta = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&Bytes::from(bytes.clone()))
        .unwrap();
    let chunk = meta.row_group(0).column(0);
    let at = chunk.dictionary_page_offset().expect("a dictionary page") as usize;
    assert_eq!(&bytes[at..at + 2], &[0x15, 0x04]);
    bytes[at + 1] = 0x02;
    let e = read_bytes(Bytes::from(bytes), &ReadLimits::default()).unwrap_err();
    let e = e.to_string();
    assert!(
        e.contains("dictionary-encoded page before its dictionary page") && e.contains('v'),
        "{e}"
    );
    assert!(!e.contains("reader failed"), "{e}");
}

/// The error `read_bytes` gives for `data` (a fuzz finding kept as a file), which must come
/// at once (well under 50 ms) and say one of `any_of`.
fn refused_at_once(data: &'static [u8], any_of: &[&str]) -> String {
    let t = std::time::Instant::now();
    let e = read_bytes(Bytes::from_static(data), &ReadLimits::default()).unwrap_err();
    assert!(
        t.elapsed() < std::time::Duration::from_millis(50),
        "{:?}",
        t.elapsed()
    );
    let e = e.to_string();
    assert!(any_of.iter().any(|said| e.contains(said)), "{e}");
    e
}

/// A footer found by the `arrow_read` fuzz target: an unknown field holding a list of 2^28 or
/// so booleans, which the `parquet` crate skips by looping over the count (0.3 s here, and
/// nested lists would take hours). Refused before the crate reads it, at once.
#[test]
fn a_footer_with_a_huge_skipped_list_is_refused_at_once() {
    let e = refused_at_once(
        include_bytes!("data/parquet_footer_huge_skipped_list.parquet"),
        &["its footer"],
    );
    assert!(e.starts_with("corrupt Parquet file: its footer"), "{e}");
}

/// An IPC stream found by the `arrow_read` fuzz target: a schema declaring a malformed map
/// column and no record batches. Making its (empty) columns panicked inside arrow-rs; no map
/// is a tensor, so the column is refused first.
#[test]
fn a_malformed_map_column_without_batches_is_refused() {
    let data = include_bytes!("data/ipc_stream_malformed_map_no_batches.arrows");
    let (schema, batches) = read_bytes(Bytes::from_static(data), &ReadLimits::default()).unwrap();
    assert!(batches.is_empty());
    let e = tensorcast_arrow::batches_to_tensors(&schema, &batches).unwrap_err();
    assert!(
        e.to_string()
            .contains("holds a map, which a tensor cannot hold"),
        "{e}"
    );
}

/// A Parquet file found by the `arrow_read` fuzz target: its Arrow schema declares a
/// fixed-size list of negative size, which the `parquet` crate turned into a capacity past
/// what can be allocated (a panic in arrow-buffer, under the crate's reader). A fixed-size
/// list's batch must fit the decoded-size limit before reading starts: refused at once.
#[test]
fn a_fixed_size_list_past_the_limit_is_refused_before_reading() {
    // Its page headers also give a known field another type, which is now refused first.
    refused_at_once(
        include_bytes!("data/parquet_negative_fixed_size_list.parquet"),
        &["decode to more than the limit", "where Parquet has"],
    );
}

/// A Parquet footer found by the `arrow_read` fuzz target: a schema element claiming 2^31 or
/// so children, for which the `parquet` crate reserved 16 GiB before reading any. Refused
/// before the crate reads the footer.
#[test]
fn a_schema_element_with_more_children_than_the_schema_is_refused() {
    // It also gives an element's `field_id` a boolean code, which is refused as well.
    refused_at_once(
        include_bytes!("data/parquet_schema_too_many_children.parquet"),
        &["children in a schema of", "where Parquet has"],
    );
}

/// A Parquet file found by the `arrow_read` fuzz target: a page header whose page runs past
/// its column chunk, for which the `parquet` crate allocated and zeroed the claimed size and
/// then read on (1.8 s for 3 KB). Refused at once.
#[test]
fn a_page_past_its_column_chunk_is_refused_at_once() {
    // Its page header also gives a known field another type, which is now refused first.
    refused_at_once(
        include_bytes!("data/parquet_page_past_its_chunk.parquet"),
        &["ends past its column chunk", "where Parquet has"],
    );
}

/// A Parquet file found by the `arrow_read` fuzz target: a page header whose field 8 (a
/// struct, `data_page_header_v2`) holds an i32. The `parquet` crate reads a known field as its
/// own type whatever the bytes say, so it read that header differently from the walk and
/// went on to zero and read a length it claimed (1.8 s for 3.9 KB). A known field of another
/// type is refused, at once.
#[test]
fn a_page_header_field_of_another_type_is_refused_at_once() {
    refused_at_once(
        include_bytes!("data/parquet_page_header_field_of_another_type.parquet"),
        &["gives field 8 type code 5 where Parquet has 12"],
    );
}

/// A Parquet file found by `arrow_read`'s eighth round: damaged definition levels make
/// arrow-buffer panic ("offset + len out of bounds") under the `parquet` crate's level decoder.
/// Not yet refused before decoding: `read_bytes` catches the panic and reports a corrupt file,
/// which is what this test holds until a check sees it first.
#[test]
fn damaged_definition_levels_are_refused_before_decoding() {
    let data = include_bytes!("data/parquet_damaged_definition_levels.parquet");
    let e = read_bytes(Bytes::from_static(data), &ReadLimits::default()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("corrupt Parquet file: the levels of a data page of column"),
        "{e}"
    );
}

/// The ninth `arrow_read` finding: a footer giving the schema (field 2) the type code of a map.
/// The crate reads it as the list of schema elements all the same, so the children check
/// never saw its element claiming about 800 million children, for which the crate reserved
/// 6 GB. A schema that is not a list of structs is now refused at once.
#[test]
fn a_schema_element_with_too_many_children_is_refused_at_once() {
    refused_at_once(
        include_bytes!("data/parquet_schema_children_ninth.parquet"),
        &["gives the schema type code 13, not a list"],
    );
}
