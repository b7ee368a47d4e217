//! TensorFlow's `FromProto` rules, one by one (as tensor_test.cc checks them).

use std::sync::Arc;

use bytes::Bytes;
use tensorcast_buffer::testing::FailingAllocator;
use tensorcast_core::{Code, DataType, ResourceHandle, TString, Tensor, Variant};
use tensorcast_proto::{
    as_proto_field, resource_handle_to_proto, tensor_description, tensor_from_proto,
    tensor_from_proto_with, tensor_shape_proto::Dim, variant_to_proto, DecodeOptions, ProtoError,
    TensorShapeProto,
};

use super::samples::proto;

fn bytes_of(t: &Tensor) -> Vec<u8> {
    t.tensor_data().unwrap().to_vec()
}

#[test]
fn bool_content_with_bytes_other_than_0_1_is_rejected() {
    // Tensor_Bool.DecodeValidate: bool [5] with content {0,1,2,3,4}.
    let mut p = proto(DataType::BOOL, &[5]);
    p.tensor_content = Bytes::from_static(&[0, 1, 2, 3, 4]);
    let e = tensor_from_proto(&p).unwrap_err();
    assert_eq!(e, ProtoError::InvalidBool { index: 2, byte: 2 });
    assert_eq!(e.code(), Code::InvalidArgument);
    p.tensor_content = Bytes::from_static(&[0, 1, 1, 0, 1]);
    assert_eq!(bytes_of(&tensor_from_proto(&p).unwrap()), [0, 1, 1, 0, 1]);
}

#[test]
fn compressed_tensor_proto_parses_by_repeating_the_last_value() {
    // TensorFromProto.CompressedTensorProto: float[100] = 42, AsProtoField, then compressed the
    // way CompressTensorProtoInPlace does (trailing run of equal values cut to one).
    let t = Tensor::from_vec(vec![42.0f32; 100], super::samples::shape(&[100])).unwrap();
    let mut p = as_proto_field(&t);
    assert_eq!(p.float_val.len(), 100);
    while p.float_val.len() > 1 && p.float_val[p.float_val.len() - 2] == 42.0 {
        p.float_val.pop();
    }
    assert_eq!(p.float_val, [42.0]);
    assert_eq!(tensor_from_proto(&p).unwrap(), t);
}

#[test]
fn content_wins_over_typed_fields() {
    let mut p = proto(DataType::FLOAT, &[2]);
    p.tensor_content = Bytes::copy_from_slice(bytemuck::cast_slice(&[1.0f32, 2.0]));
    p.float_val = vec![9.0];
    assert_eq!(
        tensor_from_proto(&p).unwrap().as_slice::<f32>().unwrap(),
        [1.0, 2.0]
    );
}

#[test]
fn content_size_must_be_exact() {
    let mut p = proto(DataType::INT64, &[3]);
    p.tensor_content = Bytes::from_static(&[0; 23]);
    let e = tensor_from_proto(&p).unwrap_err();
    assert_eq!(e.to_string(), "Input size was 23 and expected 24");
    assert_eq!(e.code(), Code::InvalidArgument);
    p.tensor_content = Bytes::from_static(&[0; 25]);
    assert_eq!(
        tensor_from_proto(&p).unwrap_err().to_string(),
        "Input size was 25 and expected 24"
    );
}

#[test]
fn string_content_is_the_varint_length_list() {
    let mut p = proto(DataType::STRING, &[3]);
    p.tensor_content = Bytes::from_static(b"\x00\x02\x01abc");
    let t = tensor_from_proto(&p).unwrap();
    assert_eq!(
        t.as_slice::<TString>().unwrap(),
        [TString::from(""), TString::from("ab"), TString::from("c")]
    );
    for bad in [
        &b"\x00\x02\x01ab"[..],
        b"\x00\x02\x01abcd",
        b"\x00\x02",
        b"\x80\x80\x80\x80\x80",
    ] {
        p.tensor_content = Bytes::copy_from_slice(bad);
        let e = tensor_from_proto(&p).unwrap_err();
        assert!(matches!(e, ProtoError::InvalidContent(_)), "{bad:?}: {e:?}");
    }
}

#[test]
fn typed_fields_repeat_the_last_value_ignore_extras_and_default_to_zero() {
    let mut p = proto(DataType::INT32, &[4]);
    p.int_val = vec![5, 6];
    assert_eq!(
        tensor_from_proto(&p).unwrap().as_slice::<i32>().unwrap(),
        [5, 6, 6, 6]
    );
    p.int_val = vec![1, 2, 3, 4, 5, 6];
    assert_eq!(
        tensor_from_proto(&p).unwrap().as_slice::<i32>().unwrap(),
        [1, 2, 3, 4]
    );
    p.int_val.clear();
    assert_eq!(
        tensor_from_proto(&p).unwrap().as_slice::<i32>().unwrap(),
        [0; 4]
    );

    let mut p = proto(DataType::STRING, &[3]);
    p.string_val = vec![Bytes::from_static(b"x"), Bytes::from_static(b"yz")];
    let t = tensor_from_proto(&p).unwrap();
    assert_eq!(t.as_slice::<TString>().unwrap()[2], TString::from("yz"));
    p.string_val.clear();
    assert!(tensor_from_proto(&p)
        .unwrap()
        .as_slice::<TString>()
        .unwrap()
        .iter()
        .all(TString::is_empty));

    let mut p = proto(DataType::FLOAT8_E4M3FN, &[4]);
    p.float8_val = Bytes::from_static(&[0x01, 0x38]);
    assert_eq!(
        bytes_of(&tensor_from_proto(&p).unwrap()),
        [0x01, 0x38, 0x38, 0x38]
    );
}

#[test]
fn narrow_types_take_the_low_bits() {
    let mut p = proto(DataType::INT8, &[3]);
    p.int_val = vec![-1, 300, -129];
    assert_eq!(
        bytes_of(&tensor_from_proto(&p).unwrap()),
        [0xff, 0x2c, 0x7f]
    );
    // The sub-byte integers keep their value bits (TensorFlow 2.21 keeps the whole low byte,
    // int_val [-3, 7, 300] -> fd 07 2c, which holds the same values; tensorcast stores the
    // canonical byte, `DataType::sub_byte_mask`).
    for (dt, want) in [
        (DataType::INT4, [0x0d, 0x07, 0x0c]),
        (DataType::UINT4, [0x0d, 0x07, 0x0c]),
        (DataType::INT2, [0x01, 0x03, 0x00]),
        (DataType::UINT2, [0x01, 0x03, 0x00]),
    ] {
        let mut p = proto(dt, &[3]);
        p.int_val = vec![-3, 7, 300];
        assert_eq!(bytes_of(&tensor_from_proto(&p).unwrap()), want, "{dt}");
    }
    // half: low 16 bits of half_val (TensorFlow 2.21: [0x13c00, -1] -> 003c ffff).
    let mut p = proto(DataType::HALF, &[2]);
    p.half_val = vec![0x13c00, -1];
    assert_eq!(
        bytes_of(&tensor_from_proto(&p).unwrap()),
        [0x00, 0x3c, 0xff, 0xff]
    );
    let mut p = proto(DataType::UINT16, &[2]);
    p.int_val = vec![65535, 7];
    assert_eq!(
        bytes_of(&tensor_from_proto(&p).unwrap()),
        [0xff, 0xff, 7, 0]
    );
}

#[test]
fn bfloat16_reads_half_val_and_int_val_only_when_asked() {
    // TensorFlow 2.21 (observed): bfloat16 with only int_val parses as zeros.
    let mut p = proto(DataType::BFLOAT16, &[3]);
    p.int_val = vec![0x3f80, 0x4000];
    assert_eq!(bytes_of(&tensor_from_proto(&p).unwrap()), [0; 6]);
    let legacy = DecodeOptions::new().with_bfloat16_from_int_val(true);
    assert_eq!(
        bytes_of(&tensor_from_proto_with(&p, &legacy).unwrap()),
        [0x80, 0x3f, 0x00, 0x40, 0x00, 0x40]
    );
    // half_val wins when present, with or without the option.
    p.half_val = vec![0x3f80];
    assert_eq!(
        bytes_of(&tensor_from_proto_with(&p, &legacy).unwrap()),
        [0x80, 0x3f].repeat(3)
    );
}

#[test]
fn complex_values_come_in_pairs() {
    let mut p = proto(DataType::COMPLEX64, &[3]);
    p.scomplex_val = vec![1.0, 2.0, 3.0];
    let t = tensor_from_proto(&p).unwrap();
    let v = t.as_slice::<tensorcast_core::Complex32>().unwrap();
    assert_eq!(v, [tensorcast_core::Complex32::new(1.0, 2.0); 3]);
    let mut p = proto(DataType::COMPLEX128, &[2]);
    p.dcomplex_val = vec![1.0];
    assert_eq!(bytes_of(&tensor_from_proto(&p).unwrap()), [0; 32]);
}

#[test]
fn resources_and_variants_fill_with_defaults_not_the_last_value() {
    let mut p = proto(DataType::RESOURCE, &[3]);
    p.resource_handle_val = vec![resource_handle_to_proto(&ResourceHandle::named("a"))];
    let t = tensor_from_proto(&p).unwrap();
    assert_eq!(
        t.as_slice::<ResourceHandle>().unwrap(),
        [
            ResourceHandle::named("a"),
            ResourceHandle::default(),
            ResourceHandle::default()
        ]
    );
    let mut p = proto(DataType::VARIANT, &[2]);
    p.variant_val = vec![variant_to_proto(&Variant::from(Tensor::from(1i32)))];
    let t = tensor_from_proto(&p).unwrap();
    assert_eq!(
        t.as_slice::<Variant>().unwrap(),
        [Variant::from(Tensor::from(1i32)), Variant::Empty]
    );
}

#[test]
fn invalid_nested_variant_tensor_is_an_error() {
    let mut inner = proto(DataType::FLOAT, &[2]);
    inner.tensor_content = Bytes::from_static(&[0; 3]);
    let mut p = proto(DataType::VARIANT, &[1]);
    p.variant_val = vec![tensorcast_proto::VariantTensorDataProto {
        type_name: "tensorflow::Tensor".into(),
        metadata: Bytes::new(),
        tensors: vec![inner],
    }];
    let e = tensor_from_proto(&p).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Could not decode variant with type_name: \"tensorflow::Tensor\": Input size was 3 and expected 8"
    );
}

#[test]
fn invalid_shapes_and_dtypes_are_rejected() {
    let mut p = proto(DataType::FLOAT, &[]);
    p.tensor_shape = Some(TensorShapeProto {
        dim: vec![Dim {
            size: -1,
            name: String::new(),
        }],
        unknown_rank: false,
    });
    assert_eq!(
        tensor_from_proto(&p).unwrap_err().to_string(),
        "Shape [?] is not fully defined"
    );
    p.tensor_shape = Some(TensorShapeProto {
        dim: vec![
            Dim {
                size: 1,
                name: String::new()
            };
            255
        ],
        unknown_rank: false,
    });
    assert!(tensor_from_proto(&p)
        .unwrap_err()
        .to_string()
        .ends_with("has too many dimensions"));
    p.tensor_shape = Some(TensorShapeProto {
        dim: vec![
            Dim {
                size: 1 << 32,
                name: String::new()
            };
            2
        ],
        unknown_rank: false,
    });
    assert_eq!(
        tensor_from_proto(&p).unwrap_err().to_string(),
        "Shape [4294967296,4294967296] is too large (more than 2**63 - 1 entries)"
    );
    // Dtypes: not set, refs, unknown numbers; with or without elements.
    for (num, msg) in [
        (0, "Type not set"),
        (101, "Unexpected type: DT_FLOAT_REF"),
        (77, "Unexpected type: 77"),
        (34, "Unexpected type: 34"),
    ] {
        for dims in [&[2][..], &[0]] {
            let mut p = proto(DataType::FLOAT, dims);
            p.dtype = num;
            p.float_val = vec![1.0];
            let e = tensor_from_proto(&p).unwrap_err();
            assert_eq!(e.to_string(), msg);
            assert_eq!(e.code(), Code::InvalidArgument);
        }
    }
}

#[test]
fn no_elements_ignores_content_and_fields() {
    let mut p = proto(DataType::FLOAT, &[3, 0]);
    p.tensor_content = Bytes::from_static(&[1, 2, 3]);
    p.float_val = vec![1.0];
    let t = tensor_from_proto(&p).unwrap();
    assert_eq!(t.num_elements(), 0);
    assert!(t.buffer().is_none());
    assert!(t.is_initialized());
}

#[test]
fn missing_shape_or_unknown_rank_is_a_scalar() {
    let mut p = proto(DataType::FLOAT, &[]);
    p.tensor_shape = None;
    p.float_val = vec![7.0];
    let t = tensor_from_proto(&p).unwrap();
    assert_eq!(t.shape().rank(), 0);
    p.tensor_shape = Some(TensorShapeProto {
        dim: vec![],
        unknown_rank: true,
    });
    assert_eq!(
        tensor_from_proto(&p).unwrap().as_slice::<f32>().unwrap(),
        [7.0]
    );
}

#[test]
fn allocation_failure_is_an_error_not_an_abort() {
    // Tensor.FailureToAllocate: FromProto fails for float and half when the allocator fails.
    let failing = DecodeOptions::new().with_allocator(Arc::new(FailingAllocator::new()));
    for (dt, field) in [(DataType::FLOAT, 0), (DataType::HALF, 1)] {
        let mut p = proto(dt, &[4]);
        match field {
            0 => p.float_val = vec![1.0],
            _ => p.half_val = vec![0x3c00],
        }
        let e = tensor_from_proto_with(&p, &failing).unwrap_err();
        assert_eq!(e.code(), Code::ResourceExhausted, "{dt}: {e}");
    }
    // Misaligned content must be copied, which needs the allocator too.
    let backing = Bytes::from(vec![0u8; 17]);
    let mut p = proto(DataType::FLOAT, &[4]);
    let start = (0..4)
        .find(|o| !(backing.as_ptr() as usize + o).is_multiple_of(4))
        .unwrap();
    p.tensor_content = backing.slice(start..start + 16);
    assert!(tensor_from_proto_with(&p, &failing).is_err());
    // String, resource and variant elements are placed in a block from the allocator too, so
    // FromProto fails for them as TensorFlow's test expects, through every field.
    let mut p = proto(DataType::STRING, &[2]);
    p.string_val = vec![Bytes::from_static(b"a")];
    let e = tensor_from_proto_with(&p, &failing).unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e}");
    let mut p = proto(DataType::STRING, &[2]);
    p.tensor_content = Bytes::from_static(b"\x01\x01ab");
    assert!(tensor_from_proto_with(&p, &failing).is_err());
    for dt in [DataType::RESOURCE, DataType::VARIANT] {
        assert!(
            tensor_from_proto_with(&proto(dt, &[3]), &failing).is_err(),
            "{dt}"
        );
    }
}

#[test]
fn object_elements_are_accounted_by_the_decoders_allocator() {
    let tracking: Arc<dyn tensorcast_buffer::Allocator> = Arc::new(
        tensorcast_buffer::TrackingAllocator::new(Arc::new(tensorcast_buffer::CpuAllocator::new())),
    );
    let options = DecodeOptions::new().with_allocator(tracking.clone());
    let mut p = proto(DataType::STRING, &[1000]);
    p.string_val = vec![Bytes::from_static(b"x"), Bytes::from_static(b"yz")];
    let t = tensor_from_proto_with(&p, &options).unwrap();
    let slot = std::mem::size_of::<tensorcast_core::TString>() as u64;
    assert_eq!(tracking.stats().unwrap().bytes_in_use, 1000 * slot);
    // Repeat-last fill, as for numbers: the 998 missing elements are the last value.
    let s = t.as_slice::<tensorcast_core::TString>().unwrap();
    assert_eq!(
        (s[0].as_bytes(), s[1].as_bytes(), s[999].as_bytes()),
        (&b"x"[..], &b"yz"[..], &b"yz"[..])
    );
    drop(t);
    assert_eq!(tracking.stats().unwrap().bytes_in_use, 0);
}

#[test]
fn description_proto_matches_fill_description() {
    let t = Tensor::vector(&[1.0f64, 2.0, 3.0]);
    let d = tensor_description(&t);
    assert_eq!(d.dtype, DataType::DOUBLE.number());
    assert_eq!(d.shape.unwrap().dim[0].size, 3);
    let a = d.allocation_description.unwrap();
    let core = t.fill_description().allocation_description.unwrap();
    assert_eq!(a.requested_bytes, 24);
    assert_eq!(a.allocator_name, core.allocator_name);
    assert_eq!(a.ptr, t.data_ptr() as u64);
    // No data, no allocation description.
    assert!(tensor_description(&Tensor::empty(DataType::FLOAT))
        .allocation_description
        .is_none());
}
