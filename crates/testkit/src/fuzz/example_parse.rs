//! Fuzz target body: arbitrary bytes as a batch of serialized `Example`s and
//! `SequenceExample`s (split at each `0xfe 0xfe` pair), parsed with every kind of feature spec
//! (dense with and without default, sparse of each type, sequence, ragged with partitions) by
//! `parse_example`, `parse_single_example` and `parse_sequence_example`. A finding is a panic, a
//! hang or an allocation the input does not justify. Where prost decodes an example, the direct
//! decoder must agree with it on the values of feature `a`.

use bytes::Bytes;
use tensorcast_core::{DataType, TString, Tensor};
use tensorcast_proto::example::{feature::Kind, Example};
use tensorcast_proto::Message;
use tensorcast_records::{
    parse_example, parse_sequence_example, parse_single_example, FeatureSpec, Parsed, Partition,
};

fn specs() -> Vec<(String, FeatureSpec)> {
    let s = |n: &str, f: FeatureSpec| (n.to_string(), f);
    vec![
        s(
            "a",
            FeatureSpec::VarLen {
                dtype: DataType::FLOAT,
            },
        ),
        s(
            "b",
            FeatureSpec::FixedLen {
                shape: vec![2],
                dtype: DataType::INT64,
                default_value: Some(Tensor::vector(&[1i64, 2])),
            },
        ),
        s(
            "c",
            FeatureSpec::FixedLenSequence {
                shape: vec![],
                dtype: DataType::STRING,
                allow_missing: true,
                default_value: Some(Tensor::vector(&[TString::from("pad")])),
            },
        ),
        s(
            "d",
            FeatureSpec::Ragged {
                dtype: DataType::INT64,
                value_key: Some("b".into()),
                partitions: vec![
                    Partition::RowLengths("e".into()),
                    Partition::UniformRowLength(1),
                ],
                row_splits_dtype: DataType::INT32,
            },
        ),
        s(
            "f",
            FeatureSpec::Ragged {
                dtype: DataType::STRING,
                value_key: None,
                partitions: vec![Partition::RowSplits("e".into())],
                row_splits_dtype: DataType::INT64,
            },
        ),
    ]
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut batch = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + 1 < data.len() {
        if data[i] == 0xfe && data[i + 1] == 0xfe {
            batch.push(Bytes::copy_from_slice(&data[start..i]));
            start = i + 2;
            i += 2;
        } else {
            i += 1;
        }
    }
    batch.push(Bytes::copy_from_slice(&data[start..]));
    let specs = specs();
    for (name, spec) in &specs {
        let one = vec![(name.clone(), spec.clone())];
        if let Err(e) = parse_example(&batch, None, &one) {
            let _ = e.to_string();
        }
    }
    let _ = parse_example(&batch, None, &specs);
    for ex in &batch {
        let _ = parse_single_example(ex, &specs);
        // Cross-check feature `a` against prost where the whole message decodes.
        if let Ok(msg) = Example::decode(ex.clone()) {
            let kind = msg
                .features
                .as_ref()
                .and_then(|f| f.feature.get("a"))
                .and_then(|f| f.kind.clone());
            let a = vec![(
                "a".to_string(),
                FeatureSpec::VarLen {
                    dtype: DataType::INT64,
                },
            )];
            let ours = parse_example(std::slice::from_ref(ex), None, &a);
            match kind {
                Some(Kind::Int64List(l)) => {
                    // prost takes a map entry under another wire type than length-delimited
                    // (it reads a length regardless); TensorFlow's parsers, and ours, refuse
                    // it. Where ours refuses bytes prost took, ours must take prost's own
                    // encoding of what it decoded.
                    let out = match ours {
                        Ok(out) => out,
                        Err(_) => {
                            let again = Bytes::from(msg.encode_to_vec());
                            parse_example(std::slice::from_ref(&again), None, &a)
                                .expect("prost's encoding of what it decoded parses")
                        }
                    };
                    let Parsed::Sparse { values, .. } = &out[0].1 else {
                        panic!("VarLen gives a sparse result")
                    };
                    assert_eq!(values.as_slice::<i64>().expect("int64"), &l.value[..]);
                }
                Some(_) => assert!(ours.is_err()),
                None => {
                    let _ = ours;
                }
            }
        }
    }
    let seq = vec![
        (
            "a".to_string(),
            FeatureSpec::FixedLenSequence {
                shape: vec![2],
                dtype: DataType::FLOAT,
                allow_missing: true,
                default_value: None,
            },
        ),
        (
            "s".to_string(),
            FeatureSpec::VarLen {
                dtype: DataType::STRING,
            },
        ),
        (
            "r".to_string(),
            FeatureSpec::Ragged {
                dtype: DataType::INT64,
                value_key: None,
                partitions: vec![],
                row_splits_dtype: DataType::INT32,
            },
        ),
    ];
    let _ = parse_sequence_example(&batch, None, &specs[..2], &seq);
}
