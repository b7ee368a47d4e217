//! parse_example / parse_single_example / parse_sequence_example on examples built with the
//! prost messages: laws against the messages themselves, the parallel path, hostile input.

use bytes::Bytes;
use proptest::prelude::*;
use tensorcast_core::{DataType, TString, Tensor};
use tensorcast_proto::example::{
    feature::Kind, BytesList, Example, Feature, Features, FloatList, Int64List,
};
use tensorcast_proto::Message;
use tensorcast_records::{
    parse_example, parse_single_example, Code, FeatureSpec, Parsed, RecordsError,
};

fn ex(features: Vec<(&str, Kind)>) -> Bytes {
    let mut f = Features::default();
    for (k, kind) in features {
        f.feature
            .insert(k.to_string(), Feature { kind: Some(kind) });
    }
    Bytes::from(Example { features: Some(f) }.encode_to_vec())
}

fn floats(v: &[f32]) -> Kind {
    Kind::FloatList(FloatList { value: v.to_vec() })
}

fn ints(v: &[i64]) -> Kind {
    Kind::Int64List(Int64List { value: v.to_vec() })
}

fn spec(name: &str, s: FeatureSpec) -> Vec<(String, FeatureSpec)> {
    vec![(name.to_string(), s)]
}

#[test]
fn large_batch_parallel_path_equals_expected_columns() {
    let n = 1000usize;
    let batch: Vec<Bytes> = (0..n)
        .map(|i| {
            ex(vec![
                ("x", floats(&[i as f32, -(i as f32)])),
                ("ids", ints(&vec![i as i64; i % 5])),
            ])
        })
        .collect();
    let specs = vec![
        (
            "x".to_string(),
            FeatureSpec::FixedLen {
                shape: vec![2],
                dtype: DataType::FLOAT,
                default_value: None,
            },
        ),
        (
            "ids".to_string(),
            FeatureSpec::VarLen {
                dtype: DataType::INT64,
            },
        ),
    ];
    let out = parse_example(&batch, None, &specs).unwrap();
    let want_x: Vec<f32> = (0..n).flat_map(|i| [i as f32, -(i as f32)]).collect();
    assert_eq!(
        out[0].1,
        Parsed::Dense(Tensor::from_vec(want_x, [n as i64, 2].as_slice()).unwrap())
    );
    let Parsed::Sparse {
        values,
        dense_shape,
        ..
    } = &out[1].1
    else {
        panic!("not sparse")
    };
    let want_ids: Vec<i64> = (0..n).flat_map(|i| vec![i as i64; i % 5]).collect();
    assert_eq!(values.as_slice::<i64>().unwrap(), &want_ids[..]);
    assert_eq!(dense_shape.as_slice::<i64>().unwrap(), &[n as i64, 4]);
}

#[test]
fn missing_required_feature_names_the_example() {
    let batch = vec![ex(vec![("a", ints(&[1]))]), ex(vec![])];
    let s = spec(
        "a",
        FeatureSpec::FixedLen {
            shape: vec![],
            dtype: DataType::INT64,
            default_value: None,
        },
    );
    let names = vec!["first".to_string(), "second".to_string()];
    let err = parse_example(&batch, Some(&names), &s).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Name: second, Feature: a (data type: int64) is required but could not be found."
    );
    assert_eq!(err.code(), Code::InvalidArgument);
}

#[test]
fn single_example_drops_the_batch_dimension() {
    let e = ex(vec![(
        "s",
        Kind::BytesList(BytesList {
            value: vec![Bytes::from_static(b"hi")],
        }),
    )]);
    let s = spec(
        "s",
        FeatureSpec::VarLen {
            dtype: DataType::STRING,
        },
    );
    let out = parse_single_example(&e, &s).unwrap();
    let Parsed::Sparse {
        indices,
        values,
        dense_shape,
    } = &out[0].1
    else {
        panic!()
    };
    assert_eq!(indices.shape().dim_sizes(), &[1, 1]);
    assert_eq!(
        values.as_slice::<TString>().unwrap(),
        &[TString::from("hi")]
    );
    assert_eq!(dense_shape.as_slice::<i64>().unwrap(), &[1]);
}

#[test]
fn a_million_features_parse_and_only_wanted_ones_are_decoded() {
    let mut f = Features::default();
    for i in 0..1_000_000u32 {
        f.feature.insert(
            format!("f{i}"),
            Feature {
                kind: Some(ints(&[i64::from(i)])),
            },
        );
    }
    let e = Bytes::from(Example { features: Some(f) }.encode_to_vec());
    let s = spec(
        "f999999",
        FeatureSpec::FixedLen {
            shape: vec![],
            dtype: DataType::INT64,
            default_value: None,
        },
    );
    let out = parse_example(&[e], None, &s).unwrap();
    assert_eq!(
        out[0].1,
        Parsed::Dense(Tensor::from_vec(vec![999_999i64], [1i64].as_slice()).unwrap())
    );
}

#[test]
fn malformed_bytes_are_an_error_never_a_panic() {
    let s = spec(
        "a",
        FeatureSpec::VarLen {
            dtype: DataType::FLOAT,
        },
    );
    for bad in [
        &b"\x0a"[..],
        b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
        b"\x0b",                                          // a group start
        b"\x0a\x07\x0a\x05\x0a\x01a\x12\x05",             // a feature longer than its entry
        b"\x0a\x0a\x0a\x08\x0a\x01a\x12\x03\x12\x01\x00", // packed floats of 1 byte
    ] {
        let err = parse_example(&[Bytes::copy_from_slice(bad)], None, &s).unwrap_err();
        assert!(matches!(err, RecordsError::InvalidArgument(_)), "{err}");
        assert!(
            err.to_string().starts_with("Could not parse example input"),
            "{err}"
        );
    }
}

fn kind_strategy() -> impl Strategy<Value = Kind> {
    prop_oneof![
        prop::collection::vec(any::<f32>().prop_filter("not NaN", |f| !f.is_nan()), 0..6)
            .prop_map(|v| floats(&v)),
        prop::collection::vec(any::<i64>(), 0..6).prop_map(|v| ints(&v)),
        prop::collection::vec(prop::collection::vec(any::<u8>(), 0..4), 0..4).prop_map(|v| {
            Kind::BytesList(BytesList {
                value: v.into_iter().map(Bytes::from).collect(),
            })
        }),
    ]
}

proptest! {
    /// The direct decoder agrees with prost's decode of the same bytes: a VarLen spec of the
    /// feature's own type gives back exactly its values.
    #[test]
    fn varlen_values_equal_the_message_values(kinds in prop::collection::vec(kind_strategy(), 1..8)) {
        let batch: Vec<Bytes> = kinds.iter().map(|k| ex(vec![("k", k.clone())])).collect();
        for (dtype, pick) in [(DataType::FLOAT, 0), (DataType::INT64, 1), (DataType::STRING, 2)] {
            let same: Vec<&Kind> = kinds.iter().filter(|k| matches!((k, pick), (Kind::FloatList(_), 0) | (Kind::Int64List(_), 1) | (Kind::BytesList(_), 2))).collect();
            let s = spec("k", FeatureSpec::VarLen { dtype });
            let out = parse_example(&batch, None, &s);
            if same.len() != kinds.len() {
                prop_assert!(out.is_err());
                continue;
            }
            let Parsed::Sparse { values, .. } = &out.unwrap()[0].1 else { panic!() };
            match dtype {
                DataType::FLOAT => {
                    let want: Vec<f32> = same.iter().flat_map(|k| match k { Kind::FloatList(l) => l.value.clone(), _ => vec![] }).collect();
                    prop_assert_eq!(values.as_slice::<f32>().unwrap(), &want[..]);
                }
                DataType::INT64 => {
                    let want: Vec<i64> = same.iter().flat_map(|k| match k { Kind::Int64List(l) => l.value.clone(), _ => vec![] }).collect();
                    prop_assert_eq!(values.as_slice::<i64>().unwrap(), &want[..]);
                }
                _ => {
                    let want: Vec<TString> = same.iter().flat_map(|k| match k { Kind::BytesList(l) => l.value.iter().map(|b| TString::from(b.clone())).collect(), _ => vec![] }).collect();
                    prop_assert_eq!(values.as_slice::<TString>().unwrap(), &want[..]);
                }
            }
        }
    }
}

fn fixed(shape: &[i64], dtype: DataType, default: Option<Tensor>) -> FeatureSpec {
    FeatureSpec::FixedLen {
        shape: shape.to_vec(),
        dtype,
        default_value: default,
    }
}

#[test]
fn dense_fast_path_equals_general_path_across_chunks() {
    // 1500 examples (three chunks), a third missing `x` (default used), `label` present.
    let batch: Vec<Bytes> = (0..1500)
        .map(|i| {
            let mut f = vec![("label", ints(&[i]))];
            if i % 3 != 0 {
                f.push(("x", floats(&[i as f32, 0.5, -1.0])));
            }
            ex(f)
        })
        .collect();
    let default = Some(Tensor::vector(&[9.0f32]));
    let fast = vec![
        (
            "x".to_string(),
            fixed(&[3], DataType::FLOAT, default.clone()),
        ),
        ("label".to_string(), fixed(&[1], DataType::INT64, None)),
    ];
    // `x` also read by a ragged spec: decoded by the general path.
    let general = vec![
        ("x".to_string(), fixed(&[3], DataType::FLOAT, default)),
        ("label".to_string(), fixed(&[1], DataType::INT64, None)),
        (
            "r".to_string(),
            FeatureSpec::Ragged {
                dtype: DataType::FLOAT,
                value_key: Some("x".into()),
                partitions: vec![],
                row_splits_dtype: DataType::INT64,
            },
        ),
        (
            "l2".to_string(),
            FeatureSpec::Ragged {
                dtype: DataType::INT64,
                value_key: Some("label".into()),
                partitions: vec![],
                row_splits_dtype: DataType::INT64,
            },
        ),
    ];
    let a = parse_example(&batch, None, &fast).unwrap();
    let b = parse_example(&batch, None, &general).unwrap();
    assert_eq!(a[0], b[0]);
    assert_eq!(a[1], b[1]);
    let Parsed::Dense(x) = &a[0].1 else { panic!() };
    assert_eq!(
        &x.as_slice::<f32>().unwrap()[..6],
        &[9.0, 9.0, 9.0, 1.0, 0.5, -1.0]
    );
}

#[test]
fn errors_in_large_batches_are_the_first_examples() {
    let mut batch: Vec<Bytes> = (0..1500).map(|i| ex(vec![("v", ints(&[i, i]))])).collect();
    batch[1200] = ex(vec![("v", ints(&[1]))]);
    batch[1300] = ex(vec![("v", ints(&[1, 2, 3]))]);
    let s = spec("v", fixed(&[2], DataType::INT64, None));
    let err = parse_example(&batch, None, &s).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Name: <unknown>, Key: v, Index: 1200.  Number of int64 values != expected.  Values size: 1 but output shape: [2]"
    );
    batch[700] = Bytes::from_static(b"\x0a\x05first");
    batch[1400] = Bytes::from_static(b"\x0a\x05second");
    let err = parse_example(&batch, None, &s).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Could not parse example input, value: '\n\u{5}first'"
    );
}

/// `n` Examples with a float vector, a label and 0-2 strings (the sparse path), example `i`
/// holding `i` in each.
fn batch_examples(n: usize) -> Vec<Bytes> {
    (0..n)
        .map(|i| {
            let tags = (0..i % 3)
                .map(|j| Bytes::from(format!("t{i}.{j}")))
                .collect();
            ex(vec![
                ("x", floats(&[i as f32, -(i as f32)])),
                ("label", ints(&[i as i64])),
                ("tags", Kind::BytesList(BytesList { value: tags })),
            ])
        })
        .collect()
}

fn batch_specs() -> Vec<(String, FeatureSpec)> {
    vec![
        ("x".into(), fixed(&[2], DataType::FLOAT, None)),
        ("label".into(), fixed(&[], DataType::INT64, None)),
        (
            "tags".into(),
            FeatureSpec::VarLen {
                dtype: DataType::STRING,
            },
        ),
    ]
}

/// What `parse_example` gives for each `batch_size` slice of `records`.
fn expected_batches(records: &[Bytes], batch_size: usize) -> Vec<Vec<(String, Parsed)>> {
    records
        .chunks(batch_size)
        .map(|c| parse_example(c, None, &batch_specs()).unwrap())
        .collect()
}

/// Batches read ahead from a file (uncompressed, GZIP, ZLIB) or from memory are
/// `parse_example`'s results for each slice of the file, in order, whatever the batch size.
#[test]
fn example_batches_equal_parse_example_of_each_slice() {
    use tensorcast_records::{write_file, Compression, ExampleBatches, ReaderOptions};
    let records = batch_examples(1000);
    let dir = tempfile::tempdir().unwrap();
    for compression in [Compression::None, Compression::Gzip, Compression::Zlib] {
        let path = dir.path().join(format!("{compression:?}.tfrecord"));
        write_file(&path, compression, &records).unwrap();
        for batch_size in [1, 7, 256, 1000, 5000] {
            let want = expected_batches(&records, batch_size);
            let options = ReaderOptions::with_compression(compression);
            let got: Vec<_> = ExampleBatches::open(&path, options, batch_size, batch_specs())
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(got, want, "{compression:?}, batches of {batch_size}");
            let got: Vec<_> =
                ExampleBatches::from_records(records.clone(), batch_size, batch_specs())
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
            assert_eq!(got, want, "from memory, batches of {batch_size}");
        }
    }
    // An empty file: no batches.
    let path = dir.path().join("empty.tfrecord");
    std::fs::write(&path, b"").unwrap();
    let opened = ExampleBatches::open(&path, ReaderOptions::default(), 4, batch_specs());
    assert_eq!(opened.unwrap().count(), 0);
    assert!(ExampleBatches::from_records(records, 0, batch_specs())
        .unwrap_err()
        .to_string()
        .contains("batch_size"));
}

/// A damaged record: the batches before it, then the reader's error (TensorFlow's text and
/// offset), then nothing; an Example that does not parse: the batches before its batch, then
/// `parse_example`'s error for that batch, then nothing.
#[test]
fn example_batches_stop_at_the_first_damage_or_parse_error() {
    use tensorcast_records::{
        write_file, Compression, ExampleBatches, ReaderOptions, RecordReader,
    };
    let mut records = batch_examples(100);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.tfrecord");
    write_file(&path, Compression::None, &records).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    // Damage record 45's data.
    let at: usize = records[..45].iter().map(|r| r.len() + 16).sum::<usize>() + 12 + 3;
    bytes[at] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let mut reader = RecordReader::open(&path, ReaderOptions::default()).unwrap();
    let reader_error = loop {
        match reader.next_record() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("no damage found"),
            Err(e) => break e.to_string(),
        }
    };
    let mut it = ExampleBatches::open(&path, ReaderOptions::default(), 10, batch_specs()).unwrap();
    let want = expected_batches(&records[..40], 10);
    for w in &want {
        assert_eq!(&it.next().unwrap().unwrap(), w);
    }
    assert_eq!(it.next().unwrap().unwrap_err().to_string(), reader_error);
    assert!(it.next().is_none());

    records[57] = Bytes::from_static(b"\xff\xff not an Example");
    let mut it = ExampleBatches::from_records(records.clone(), 10, batch_specs()).unwrap();
    for w in expected_batches(&records[..50], 10) {
        assert_eq!(it.next().unwrap().unwrap(), w);
    }
    let e = it.next().unwrap().unwrap_err();
    let want = parse_example(&records[50..60], None, &batch_specs()).unwrap_err();
    assert_eq!(e.to_string(), want.to_string());
    assert!(it.next().is_none());
}

/// `open_map` / `from_records_map` run their conversion on every batch in order, and an error
/// it returns ends the iteration there, as a parse error does.
#[test]
fn example_batches_map_converts_each_batch_and_stops_at_its_error() {
    use tensorcast_records::{
        write_file, Compression, ExampleBatches, ReaderOptions, RecordsError,
    };
    let records = batch_examples(100);
    let rows = |p: Vec<(String, Parsed)>| match &p[0].1 {
        Parsed::Dense(t) => Ok(t.dim_size(0).unwrap_or(-1)),
        _ => Err(RecordsError::InvalidArgument("not dense".into())),
    };
    let got: Vec<i64> = ExampleBatches::from_records_map(records.clone(), 30, batch_specs(), rows)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(got, [30, 30, 30, 10]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.tfrecord");
    write_file(&path, Compression::None, &records).unwrap();
    let seen = std::sync::atomic::AtomicUsize::new(0);
    let seen = std::sync::Arc::new(seen);
    let count = std::sync::Arc::clone(&seen);
    let fail_third = move |p: Vec<(String, Parsed)>| {
        let n = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if n == 2 {
            return Err(RecordsError::InvalidArgument("third".into()));
        }
        Ok(p.len())
    };
    // Batches are converted in parallel, so which batch is "third" is not fixed; the
    // iteration yields some whole batches and then the error, and nothing after it.
    let mut it = ExampleBatches::open_map(
        &path,
        ReaderOptions::default(),
        10,
        batch_specs(),
        fail_third,
    )
    .unwrap();
    let mut oks = 0;
    let error = loop {
        match it.next() {
            Some(Ok(n)) => {
                assert_eq!(n, batch_specs().len());
                oks += 1;
            }
            Some(Err(e)) => break e,
            None => panic!("no error after {oks} batches"),
        }
    };
    assert!(error.to_string().contains("third"), "{error}");
    assert!(oks < 10);
    assert!(it.next().is_none());
}

/// Dropping the iterator part way (with batches still being parsed ahead) returns promptly.
#[test]
fn example_batches_dropped_early_stop_their_thread() {
    use tensorcast_records::ExampleBatches;
    let records = batch_examples(20_000);
    let t = std::time::Instant::now();
    for _ in 0..20 {
        let mut it = ExampleBatches::from_records(records.clone(), 16, batch_specs()).unwrap();
        assert!(it.next().unwrap().is_ok());
        drop(it);
    }
    assert!(
        t.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        t.elapsed()
    );
}

proptest! {
    /// Dense features read straight from their packed lists (the common case, no copy through
    /// the column buffers) equal the messages' values, across chunk boundaries; a list of
    /// another length is the general path's error.
    #[test]
    fn dense_values_read_straight_equal_the_message_values(
        mut rows in prop::collection::vec(
            (
                prop::collection::vec(any::<i64>(), 3),
                prop::collection::vec(any::<f32>().prop_filter("not NaN", |f| !f.is_nan()), 2),
            ),
            1..1200,
        ),
        bad in prop::option::of((any::<prop::sample::Index>(), 0usize..4)),
    ) {
        if let Some((at, len)) = bad {
            let k = at.index(rows.len());
            rows[k].1 = vec![0.5; len];
        }
        let batch: Vec<Bytes> = rows.iter().map(|(i, f)| ex(vec![("i", ints(i)), ("f", floats(f))])).collect();
        let specs = vec![
            ("f".to_string(), fixed(&[2], DataType::FLOAT, None)),
            ("i".to_string(), fixed(&[3], DataType::INT64, None)),
        ];
        let out = parse_example(&batch, None, &specs);
        if rows.iter().any(|(_, f)| f.len() != 2) {
            let e = out.unwrap_err().to_string();
            prop_assert!(e.contains("Key: f") && e.contains("Number of float values != expected"), "{}", e);
        } else {
            let out = out.unwrap();
            let (Parsed::Dense(f), Parsed::Dense(i)) = (&out[0].1, &out[1].1) else { panic!() };
            let want_f: Vec<f32> = rows.iter().flat_map(|r| r.1.clone()).collect();
            let want_i: Vec<i64> = rows.iter().flat_map(|r| r.0.clone()).collect();
            prop_assert_eq!(f.as_slice::<f32>().unwrap(), &want_f[..]);
            prop_assert_eq!(i.as_slice::<i64>().unwrap(), &want_i[..]);
        }
    }
}

#[test]
fn dense_outputs_in_reused_blocks_hold_only_what_the_batch_parsed() {
    // Outputs of 300 x 128 floats (150 KiB) come from the allocator's cache of freed blocks,
    // which hands back the previous batch's values unless every element is written again.
    let n = 300usize;
    let full: Vec<Bytes> = (0..n)
        .map(|_| ex(vec![("x", floats(&[7.0; 128]))]))
        .collect();
    // A third of the examples lack `x` (the default), the rest hold their index (example 4
    // holds ones).
    let mixed: Vec<Bytes> = (0..n)
        .map(|i| match i % 3 {
            0 => ex(vec![]),
            _ if i == 4 => ex(vec![("x", floats(&[1.0; 128]))]),
            _ => ex(vec![("x", floats(&[i as f32; 128]))]),
        })
        .collect();
    let default = Tensor::from_vec(vec![-2.0f32; 128], [128i64].as_slice()).unwrap();
    let specs = spec("x", fixed(&[128], DataType::FLOAT, Some(default)));
    for _ in 0..3 {
        let out = parse_example(&full, None, &specs).unwrap();
        drop(out);
        let out = parse_example(&mixed, None, &specs).unwrap();
        let Parsed::Dense(t) = &out[0].1 else {
            panic!("dense")
        };
        let v = t.as_slice::<f32>().unwrap();
        for (i, row) in v.chunks(128).enumerate() {
            let want = match i % 3 {
                0 => -2.0,
                _ if i == 4 => 1.0,
                _ => i as f32,
            };
            assert!(row.iter().all(|&x| x == want), "example {i}: {row:?}");
        }
    }
}
