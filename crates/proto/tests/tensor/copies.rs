//! `tensor_test.cc`'s TestCopies for every dtype: AsProtoField -> FromProto and
//! AsProtoTensorContent -> FromProto (twice) give the tensor back, and so do the wire forms.

use bytes::Bytes;
use tensorcast_core::{DataType, Tensor};
use tensorcast_proto::{
    as_proto_field, as_proto_tensor_content, decode_tensor, encode_tensor, serialize_tensor,
    tensor_from_proto, Message, TensorProto,
};

use super::samples::sample;

/// The shapes tensor_test.cc uses per dtype family, plus empty and scalar ones.
fn shapes_for(dtype: DataType) -> Vec<Vec<i64>> {
    let main = match dtype {
        DataType::HALF
        | DataType::BFLOAT16
        | DataType::FLOAT8_E5M2
        | DataType::FLOAT8_E4M3FN
        | DataType::FLOAT8_E4M3FNUZ
        | DataType::FLOAT8_E4M3B11FNUZ
        | DataType::FLOAT8_E5M2FNUZ
        | DataType::FLOAT4_E2M1FN => vec![5, 7],
        DataType::RESOURCE | DataType::VARIANT => vec![],
        DataType::BOOL
        | DataType::UINT8
        | DataType::UINT16
        | DataType::UINT32
        | DataType::QINT8
        | DataType::QUINT8
        | DataType::QINT16
        | DataType::QUINT16
        | DataType::QINT32 => vec![2, 2],
        _ => vec![10, 20],
    };
    vec![main, vec![], vec![0], vec![3, 0, 2], vec![4]]
}

fn check_round_trips(t: &Tensor) {
    let what = format!("{} {}", t.dtype(), t.shape());
    // AsProtoField -> FromProto.
    let field = as_proto_field(t);
    assert!(
        field.tensor_content.is_empty(),
        "{what}: field form has content"
    );
    assert_eq!(
        tensor_from_proto(&field).unwrap(),
        *t,
        "{what}: AsProtoField"
    );
    // AsProtoTensorContent -> FromProto, twice (the second from the first's result).
    let content = as_proto_tensor_content(t);
    let once = tensor_from_proto(&content).unwrap();
    assert_eq!(once, *t, "{what}: AsProtoTensorContent");
    let twice = tensor_from_proto(&as_proto_tensor_content(&once)).unwrap();
    assert_eq!(twice, *t, "{what}: AsProtoTensorContent twice");
    // Both protos through the wire.
    for p in [&field, &content] {
        let wire = Bytes::from(p.encode_to_vec());
        let back = TensorProto::decode(wire).unwrap();
        assert_eq!(tensor_from_proto(&back).unwrap(), *t, "{what}: via wire");
    }
    // SerializeTensor and the aligned encoding: same bytes, and they decode back.
    let ser = serialize_tensor(t).unwrap();
    let enc = encode_tensor(t).unwrap();
    assert_eq!(
        enc.as_ref(),
        ser.as_slice(),
        "{what}: encode_tensor != serialize_tensor"
    );
    assert_eq!(
        decode_tensor(Bytes::from(ser)).unwrap(),
        *t,
        "{what}: serialize"
    );
    assert_eq!(decode_tensor(enc).unwrap(), *t, "{what}: encode");
}

#[test]
fn every_dtype_round_trips_through_both_proto_forms() {
    for dtype in DataType::all() {
        for dims in shapes_for(dtype) {
            check_round_trips(&sample(dtype, &dims));
        }
    }
}

#[test]
fn resource_handle_simple_round_trips() {
    // Tensor_ResourceHandle.Simple: a scalar handle named "a".
    check_round_trips(&Tensor::from(tensorcast_core::ResourceHandle::named("a")));
}

#[test]
fn variant_wrapping_float_42_round_trips_and_marshals() {
    // Tensor_Variant.Simple and Tensor_Variant.Marshal.
    let t = Tensor::from(tensorcast_core::Variant::from(Tensor::from(42.0f32)));
    check_round_trips(&t);
    let back = tensor_from_proto(&as_proto_field(&t)).unwrap();
    match &back.as_slice::<tensorcast_core::Variant>().unwrap()[0] {
        tensorcast_core::Variant::Tensor(inner) => {
            assert_eq!(inner.dtype(), DataType::FLOAT);
            assert_eq!(inner.shape().rank(), 0);
            assert_eq!(inner.as_slice::<f32>().unwrap(), [42.0]);
        }
        other => panic!("expected a tensor variant, got {other:?}"),
    }
}

#[test]
fn field_form_values_are_tensorflows() {
    use tensorcast_core::{types::Int4, TensorShape};
    let p = as_proto_field(&Tensor::vector(&[true, false]));
    assert_eq!(p.bool_val, [true, false]);
    let p = as_proto_field(&Tensor::vector(&[
        tensorcast_core::Complex32::new(1.0, 2.0),
        tensorcast_core::Complex32::new(3.0, 4.0),
    ]));
    assert_eq!(p.scomplex_val, [1.0, 2.0, 3.0, 4.0]);
    let p = as_proto_field(&Tensor::vector(&[tensorcast_core::bf16::from_f32(-1.0)]));
    assert_eq!(p.half_val, [0xbf80]);
    // int4 in int_val as its value; a byte with stray high bits reads as its low nibble,
    // sign-extended (ml_dtypes' conversion, which TensorFlow uses).
    let t = Tensor::from_vec(
        vec![Int4(-3), Int4(7), Int4(0x2c)],
        TensorShape::new(&[3]).unwrap(),
    )
    .unwrap();
    assert_eq!(as_proto_field(&t).int_val, [-3, 7, -4]);
    let p = as_proto_field(&Tensor::vector(&[tensorcast_core::types::QUInt16(65535)]));
    assert_eq!(p.int_val, [65535]);
    let p = as_proto_field(&Tensor::vector(&[u64::MAX]));
    assert_eq!(p.uint64_val, [u64::MAX]);
}

#[test]
fn uninitialized_tensor_gets_dtype_and_shape_only() {
    let t = Tensor::unallocated(
        DataType::FLOAT,
        &tensorcast_core::TensorShape::new(&[3]).unwrap(),
    );
    let p = as_proto_field(&t);
    assert!(p.float_val.is_empty());
    let p = as_proto_tensor_content(&t);
    assert!(p.tensor_content.is_empty());
    // Which FromProto reads as zeros.
    assert_eq!(
        tensor_from_proto(&p).unwrap().as_slice::<f32>().unwrap(),
        [0.0; 3]
    );
}

#[test]
fn serialize_uninitialized_tensor_is_refused_not_written_as_zeros() {
    for dtype in [DataType::FLOAT, DataType::STRING, DataType::VARIANT] {
        let t = Tensor::unallocated(dtype, &tensorcast_core::TensorShape::new(&[3]).unwrap());
        let err = serialize_tensor(&t).unwrap_err();
        assert!(
            matches!(
                err,
                tensorcast_proto::ProtoError::Tensor(tensorcast_core::Error::Uninitialized {
                    op: "SerializeTensor",
                    elements: 3,
                    ..
                })
            ),
            "{dtype}: {err:?}"
        );
        let mut out = b"kept".to_vec();
        assert!(tensorcast_proto::serialize_tensor_into(&t, &mut out).is_err());
        assert_eq!(out, b"kept");
        assert!(tensorcast_proto::serialize_tensor_header(&t).is_err());
        assert!(encode_tensor(&t).is_err());
    }
    // No elements: nothing is missing, so it serializes (dtype and shape only).
    let empty = Tensor::unallocated(
        DataType::FLOAT,
        &tensorcast_core::TensorShape::new(&[0]).unwrap(),
    );
    assert_eq!(
        decode_tensor(serialize_tensor(&empty).unwrap().into()).unwrap(),
        empty
    );
}

#[test]
fn tensor_content_shares_the_tensors_buffer() {
    let t = Tensor::vector(&[1u32, 2, 3]);
    let p = as_proto_tensor_content(&t);
    assert_eq!(p.tensor_content.as_ptr(), t.data_ptr());
    // And FromProto of that proto shares it again: no copy either way.
    let back = tensor_from_proto(&p).unwrap();
    assert_eq!(back.data_ptr(), t.data_ptr());
}
