//! TensorFlow's recorded encodings (`serialize.jsonl`, `parse.jsonl`) against our messages.

use bytes::Bytes;
use tensorcast_proto::{tensor_shape_proto::Dim, DataType, Message, TensorProto, TensorShapeProto};

use super::util::{hex_decode, hex_encode, records, str_field};

/// `DataTypeString` spelling (`float`, `complex64`) to the enum (`DT_FLOAT`, `DT_COMPLEX64`).
fn dtype_from_tf_name(name: &str) -> DataType {
    DataType::from_str_name(&format!("DT_{}", name.to_ascii_uppercase()))
        .unwrap_or_else(|| panic!("unknown dtype name {name:?}"))
}

fn shape_of(input: &serde_json::Value) -> Vec<i64> {
    input["shape"]
        .as_array()
        .expect("shape")
        .iter()
        .map(|d| d.as_i64().expect("dim"))
        .collect()
}

#[test]
fn serialize_records_decode_and_reencode_byte_identical() {
    let recs = records("serialize.jsonl");
    assert!(!recs.is_empty());
    for rec in &recs {
        let id = str_field(rec, "id");
        let wire = Bytes::from(hex_decode(str_field(rec, "proto_hex")));
        let proto = TensorProto::decode(wire.clone())
            .unwrap_or_else(|e| panic!("{id}: TensorFlow's bytes do not decode: {e}"));
        let again = proto.encode_to_vec();
        assert_eq!(
            hex_encode(&again),
            hex_encode(&wire),
            "{id}: re-encoding differs from TensorFlow's bytes"
        );
        assert_eq!(proto.encoded_len(), wire.len(), "{id}: encoded_len");
    }
}

#[test]
fn serialize_records_built_from_input_encode_as_tensorflow() {
    // Build the proto the way AsProtoTensorContent / AsProtoField do (dtype, shape, then content
    // or string_val) and check the encoding is TensorFlow's, byte for byte.
    for rec in &records("serialize.jsonl") {
        let id = str_field(rec, "id");
        let input = &rec["input"];
        let dtype = dtype_from_tf_name(str_field(input, "dtype"));
        let mut proto = TensorProto {
            tensor_shape: Some(TensorShapeProto {
                dim: shape_of(input)
                    .into_iter()
                    .map(|size| Dim {
                        size,
                        name: String::new(),
                    })
                    .collect(),
                unknown_rank: false,
            }),
            ..Default::default()
        };
        proto.set_dtype(dtype);
        if dtype == DataType::DtString {
            proto.string_val = input["strings"]
                .as_array()
                .expect("strings")
                .iter()
                .map(|s| Bytes::from(hex_decode(s.as_str().expect("string hex"))))
                .collect();
        } else {
            proto.tensor_content = Bytes::from(hex_decode(str_field(input, "hex")));
        }
        assert_eq!(
            hex_encode(&proto.encode_to_vec()),
            str_field(rec, "proto_hex"),
            "{id}: our encoding of {input} differs from TensorFlow's"
        );
        // And decoding TensorFlow's bytes gives exactly this proto back.
        let decoded =
            TensorProto::decode(Bytes::from(hex_decode(str_field(rec, "proto_hex")))).unwrap();
        assert_eq!(decoded, proto, "{id}: decoded proto");
    }
}

/// Records of parse.jsonl whose bytes are not valid protobuf (none: every malformed record is
/// malformed at the TensorFlow level, i.e. FromProto rejects a well-formed message).
const PARSE_RECORDS_INVALID_PROTOBUF: &[&str] = &[];

#[test]
fn parse_records_decode_as_protobuf() {
    let mut failed = Vec::new();
    for rec in &records("parse.jsonl") {
        let id = str_field(rec, "id");
        let wire = Bytes::from(hex_decode(str_field(rec, "proto_hex")));
        match TensorProto::decode(wire.clone()) {
            Ok(proto) => {
                // TensorFlow's `out_type` check is on the decoded dtype; every record that
                // TensorFlow accepts must carry that dtype.
                if rec.get("expect").is_some() {
                    let want = dtype_from_tf_name(str_field(rec, "out_type"));
                    assert_eq!(proto.dtype(), want, "{id}: dtype");
                }
                // Every record, hand-built or not, is in canonical (tag-ordered, packed) form.
                assert_eq!(
                    hex_encode(&proto.encode_to_vec()),
                    hex_encode(&wire),
                    "{id}: re-encoding differs"
                );
            }
            Err(e) => {
                assert!(
                    rec.get("expect").is_none(),
                    "{id}: TensorFlow parses it but prost fails: {e}"
                );
                failed.push(id.to_string());
            }
        }
    }
    assert_eq!(failed, PARSE_RECORDS_INVALID_PROTOBUF);
}

#[test]
fn parse_records_typed_fields_decode_to_expected_values() {
    // Spot checks that the typed fields land where TensorFlow puts them (numbers from parse.jsonl).
    let by_name = |name: &str| {
        let rec = records("parse.jsonl")
            .into_iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no record named {name:?}"));
        TensorProto::decode(Bytes::from(hex_decode(str_field(&rec, "proto_hex")))).unwrap()
    };
    assert_eq!(by_name("float_val short").float_val, [1.0, 2.0]);
    assert_eq!(by_name("int_val int8").int_val, [-1, 5]);
    assert_eq!(by_name("half_val").half_val, [15360, 49152]);
    assert_eq!(by_name("bool_val").bool_val, [true, false]);
    assert_eq!(by_name("scomplex odd count").scomplex_val, [1.0, 2.0, 3.0]);
    assert_eq!(
        by_name("string_val short").string_val,
        [Bytes::from_static(b"a"), Bytes::from_static(b"bb")]
    );
    let no_dtype = by_name("invalid dtype");
    assert_eq!(no_dtype.dtype, 0);
    assert_eq!(no_dtype.dtype(), DataType::DtInvalid);
    assert_eq!(by_name("many dims").tensor_shape.unwrap().dim.len(), 255);
    let negative = by_name("negative dim");
    assert_eq!(negative.tensor_shape.unwrap().dim[0].size, -1);
}
