//! Untrusted input never costs more memory than it justifies: fills past the caller's limit
//! are refused before anything is allocated.

use std::time::Instant;

use bytes::Bytes;
use tensorcast_core::{Code, DataType, Tensor, Variant};
use tensorcast_proto::{
    decode_tensor, decode_tensor_with, tensor_from_proto, tensor_from_proto_with, variant_to_proto,
    DecodeOptions, Message, ProtoError, DEFAULT_MAX_FILL_BYTES, MAX_NESTING_DEPTH,
};

use super::samples::proto;

fn claim(dtype: DataType, dims: &[i64]) -> tensorcast_proto::TensorProto {
    let mut p = proto(dtype, &[]);
    p.tensor_shape = Some(tensorcast_proto::dims_to_proto(dims));
    p
}

#[test]
fn a_few_bytes_claiming_2_pow_62_elements_fail_at_once() {
    let start = Instant::now();
    for dtype in DataType::all() {
        let mut p = claim(dtype, &[1 << 31, 1 << 31]);
        p.float_val = vec![1.0];
        p.int_val = vec![1];
        p.string_val = vec![Bytes::from_static(b"x")];
        let wire = Bytes::from(p.encode_to_vec());
        assert!(wire.len() < 40, "{}", wire.len());
        let e = decode_tensor(wire).unwrap_err();
        assert_eq!(e.code(), Code::ResourceExhausted, "{dtype}: {e}");
        assert!(matches!(e, ProtoError::FillLimit { elements, .. } if elements == 1 << 62));
    }
    // Content that claims them fails on its size, also at once.
    let mut p = claim(DataType::FLOAT, &[1 << 31, 1 << 31]);
    p.tensor_content = Bytes::from_static(&[0; 8]);
    assert_eq!(
        tensor_from_proto(&p).unwrap_err().to_string(),
        "Input size was 8 and expected 18446744073709551616"
    );
    let mut p = claim(DataType::STRING, &[1 << 31, 1 << 31]);
    p.tensor_content = Bytes::from_static(&[0; 8]);
    assert!(matches!(
        tensor_from_proto(&p),
        Err(ProtoError::InvalidContent(_))
    ));
    assert!(
        start.elapsed().as_secs_f64() < 1.0,
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn repeat_last_is_capped_by_a_raisable_limit() {
    // 1 MiB of floats from one value: refused under a 512 KiB limit, accepted under 1 MiB.
    let mut p = claim(DataType::FLOAT, &[1 << 18]);
    p.float_val = vec![3.0];
    let small = DecodeOptions::new().with_max_fill_bytes(512 << 10);
    let e = tensor_from_proto_with(&p, &small).unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted);
    assert_eq!(
        e.to_string(),
        "TensorProto of float claims 262144 elements but carries 1; filling the rest needs \
         1048572 bytes, more than the limit of 524288 bytes (raise it with \
         DecodeOptions::with_max_fill_bytes)"
    );
    let enough = DecodeOptions::new().with_max_fill_bytes(1 << 20);
    let t = tensor_from_proto_with(&p, &enough).unwrap();
    assert!(t.as_slice::<f32>().unwrap().iter().all(|&x| x == 3.0));
    // Zero fill counts too; values carried do not.
    p.float_val.clear();
    assert!(tensor_from_proto_with(&p, &small).is_err());
    p.float_val = vec![1.0; 1 << 18];
    assert!(tensor_from_proto_with(&p, &DecodeOptions::new().with_max_fill_bytes(0)).is_ok());
}

#[test]
fn default_limit_is_256_mib_of_fill() {
    assert_eq!(DEFAULT_MAX_FILL_BYTES, 256 << 20);
    let mut p = claim(DataType::UINT8, &[(256 << 20) + 1]);
    p.int_val = vec![1];
    // 256 MiB exactly is allowed (one byte carried), one more is not.
    assert!(tensor_from_proto(&p).is_ok());
    p.tensor_shape = claim(DataType::UINT8, &[(256 << 20) + 2]).tensor_shape;
    assert_eq!(
        tensor_from_proto(&p).unwrap_err().code(),
        Code::ResourceExhausted
    );
}

#[test]
fn string_and_object_fills_count_their_memory() {
    let mut p = claim(DataType::STRING, &[1 << 24]);
    p.string_val = vec![Bytes::from_static(b"big")];
    // 16 Mi strings of ~32 bytes each: beyond 256 MiB.
    assert_eq!(
        tensor_from_proto(&p).unwrap_err().code(),
        Code::ResourceExhausted
    );
    let mut p = claim(DataType::VARIANT, &[1 << 30]);
    p.variant_val = vec![variant_to_proto(&Variant::from(Tensor::from(1.0f32)))];
    assert_eq!(
        tensor_from_proto(&p).unwrap_err().code(),
        Code::ResourceExhausted
    );
}

#[test]
fn nested_tensors_share_one_budget() {
    // Four variants, each holding a tensor that fills 100 KiB: 400 KiB in all.
    let mut inner = claim(DataType::FLOAT, &[25 << 10]);
    inner.float_val = vec![1.0];
    let v = tensorcast_proto::VariantTensorDataProto {
        type_name: "tensorflow::Tensor".into(),
        metadata: Bytes::new(),
        tensors: vec![inner],
    };
    let mut p = claim(DataType::VARIANT, &[4]);
    p.variant_val = vec![v.clone(), v.clone(), v.clone(), v];
    let tight = DecodeOptions::new().with_max_fill_bytes(300 << 10);
    assert_eq!(
        tensor_from_proto_with(&p, &tight).unwrap_err().code(),
        Code::ResourceExhausted
    );
    // The four variant elements themselves are charged too (a few hundred bytes).
    let roomy = DecodeOptions::new().with_max_fill_bytes((400 << 10) + 4096);
    assert!(tensor_from_proto_with(&p, &roomy).is_ok());
}

#[test]
fn deeply_nested_variants_are_refused_not_a_stack_overflow() {
    // Each level: a scalar variant tensor whose content holds the next level.
    let mut t = Tensor::from(1.0f32);
    for _ in 0..(MAX_NESTING_DEPTH + 5) {
        t = Tensor::from(Variant::from(t));
    }
    let wire = Bytes::from(tensorcast_proto::serialize_tensor(&t).unwrap());
    let e = decode_tensor_with(wire, &DecodeOptions::new()).unwrap_err();
    assert_eq!(e, ProtoError::TooDeep(MAX_NESTING_DEPTH));
    // Within the limit it decodes.
    let mut t = Tensor::from(1.0f32);
    for _ in 0..MAX_NESTING_DEPTH {
        t = Tensor::from(Variant::from(t));
    }
    let wire = Bytes::from(tensorcast_proto::serialize_tensor(&t).unwrap());
    assert_eq!(decode_tensor(wire).unwrap(), t);
}

#[test]
fn parse_tensor_reports_a_fill_limit_as_invalid_argument_and_decode_as_resource_exhausted() {
    // float [2^20] carrying one value: 4 MiB of fill against a 1 KiB limit.
    let mut p = claim(DataType::FLOAT, &[1 << 20]);
    p.float_val = vec![1.0];
    let wire = Bytes::from(prost::Message::encode_to_vec(&p));
    let tight = DecodeOptions::new().with_max_fill_bytes(1024);
    let e = tensorcast_proto::decode_tensor_with(wire.clone(), &tight).unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted);
    let e = tensorcast_proto::parse_tensor_with(wire, DataType::FLOAT, &tight).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(
        e.to_string()
            .starts_with("Cannot parse tensor from proto: "),
        "{e}"
    );
    let inner = std::error::Error::source(&e).expect("the decode's error is the source");
    assert!(inner.to_string().contains("limit"), "{inner}");
    // A shape TensorFlow refuses: the same wrapping.
    let mut bad = claim(DataType::FLOAT, &[2]);
    bad.tensor_content = Bytes::from_static(&[0; 3]);
    let wire = Bytes::from(prost::Message::encode_to_vec(&bad));
    let e = tensorcast_proto::parse_tensor(wire, DataType::FLOAT).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot parse tensor from proto: Input size was 3 and expected 8"
    );
}
