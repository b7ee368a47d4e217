//! `tf.train.Example` and `tf.train.SequenceExample` (`tensorflow/core/example/example.proto`
//! and `feature.proto`), as hand-written prost derives.
//!
//! `FloatList` and `Int64List` values are packed on write (proto3) and read packed or unpacked,
//! as every protobuf parser must. Maps are `BTreeMap`s, so that encoding is deterministic
//! (sorted by key). Byte strings are [`bytes::Bytes`], shared with the input when decoding
//! from a `Bytes`.
//!
//! ```
//! use tensorcast_proto::example::{feature, Example, Feature, Features, Int64List};
//! use tensorcast_proto::Message;
//!
//! let mut features = Features::default();
//! features.feature.insert(
//!     "label".to_string(),
//!     Feature { kind: Some(feature::Kind::Int64List(Int64List { value: vec![7] })) },
//! );
//! let ex = Example { features: Some(features) };
//! let wire = ex.encode_to_vec();
//! assert_eq!(wire, b"\x0a\x10\x0a\x0e\x0a\x05label\x12\x05\x1a\x03\x0a\x01\x07");
//! assert_eq!(Example::decode(&wire[..]).unwrap(), ex);
//! ```

use std::collections::BTreeMap;

use bytes::Bytes;

/// `BytesList { repeated bytes value = 1; }`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BytesList {
    /// The values.
    #[prost(bytes = "bytes", repeated, tag = "1")]
    pub value: Vec<Bytes>,
}

/// `FloatList { repeated float value = 1 [packed = true]; }`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FloatList {
    /// The values.
    #[prost(float, repeated, tag = "1")]
    pub value: Vec<f32>,
}

/// `Int64List { repeated int64 value = 1 [packed = true]; }`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Int64List {
    /// The values.
    #[prost(int64, repeated, tag = "1")]
    pub value: Vec<i64>,
}

/// `Feature { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2; Int64List
/// int64_list = 3; } }`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Feature {
    /// The one list the feature holds (none for an empty `Feature`).
    #[prost(oneof = "feature::Kind", tags = "1, 2, 3")]
    pub kind: Option<feature::Kind>,
}

/// The `kind` oneof of [`Feature`].
pub mod feature {
    /// Which list a feature holds.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Kind {
        /// `bytes_list = 1`.
        #[prost(message, tag = "1")]
        BytesList(super::BytesList),
        /// `float_list = 2`.
        #[prost(message, tag = "2")]
        FloatList(super::FloatList),
        /// `int64_list = 3`.
        #[prost(message, tag = "3")]
        Int64List(super::Int64List),
    }
}

/// `Features { map<string, Feature> feature = 1; }`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Features {
    /// Feature name to feature.
    #[prost(btree_map = "string, message", tag = "1")]
    pub feature: BTreeMap<String, Feature>,
}

/// `FeatureList { repeated Feature feature = 1; }`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FeatureList {
    /// The features, one per step.
    #[prost(message, repeated, tag = "1")]
    pub feature: Vec<Feature>,
}

/// `FeatureLists { map<string, FeatureList> feature_list = 1; }`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FeatureLists {
    /// Feature list name to feature list.
    #[prost(btree_map = "string, message", tag = "1")]
    pub feature_list: BTreeMap<String, FeatureList>,
}

/// `Example { Features features = 1; }`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Example {
    /// The features.
    #[prost(message, optional, tag = "1")]
    pub features: Option<Features>,
}

/// `SequenceExample { Features context = 1; FeatureLists feature_lists = 2; }`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SequenceExample {
    /// The per-sequence features.
    #[prost(message, optional, tag = "1")]
    pub context: Option<Features>,
    /// The per-step feature lists.
    #[prost(message, optional, tag = "2")]
    pub feature_lists: Option<FeatureLists>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn unpacked_floats_and_ints_decode_as_packed() {
        // float_list with two unpacked floats, int64_list with two unpacked varints.
        let f = b"\x12\x0a\x0d\x00\x00\xc0\x3f\x0d\x00\x00\x00\xc0";
        let got = Feature::decode(&f[..]).unwrap();
        assert_eq!(
            got.kind,
            Some(feature::Kind::FloatList(FloatList {
                value: vec![1.5, -2.0]
            }))
        );
        let i = b"\x1a\x04\x08\x05\x08\x7f";
        let got = Feature::decode(&i[..]).unwrap();
        assert_eq!(
            got.kind,
            Some(feature::Kind::Int64List(Int64List {
                value: vec![5, 127]
            }))
        );
    }

    #[test]
    fn sequence_example_roundtrips() {
        let mut lists = FeatureLists::default();
        lists.feature_list.insert(
            "tok".into(),
            FeatureList {
                feature: vec![Feature {
                    kind: Some(feature::Kind::BytesList(BytesList {
                        value: vec![Bytes::from_static(b"a")],
                    })),
                }],
            },
        );
        let s = SequenceExample {
            context: Some(Features::default()),
            feature_lists: Some(lists),
        };
        assert_eq!(SequenceExample::decode(&s.encode_to_vec()[..]).unwrap(), s);
    }
}
