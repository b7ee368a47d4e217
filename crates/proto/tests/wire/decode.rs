//! Decoding rules beyond TensorFlow's recorded vectors: unpacked repeated scalars, zero-copy
//! `bytes` fields, bounded allocation, enum values, and the small messages' field numbers.

use bytes::Bytes;
use tensorcast_proto::{
    resource_handle_proto::DtypeAndShape, tensor_shape_proto::Dim, AllocationDescription, DataType,
    Message, ResourceHandleProto, SerializedDType, TensorDescription, TensorProto,
    TensorShapeProto, VariantTensorDataProto,
};

use super::util::{hex_decode, hex_encode};
use crate::alloc_probe::largest_allocation;

fn shape(dims: &[i64]) -> Option<TensorShapeProto> {
    Some(tensorcast_proto::dims_to_proto(dims))
}

#[test]
fn unpacked_float_val_decodes_like_packed() {
    // dtype=1, shape [3], then float_val as three separate fixed32 records (tag 5, wire type 5).
    let mut wire = hex_decode("08011204120208 03".replace(' ', "").as_str());
    for v in [1.0f32, 2.5, -3.0] {
        wire.push(0x2d);
        wire.extend_from_slice(&v.to_le_bytes());
    }
    let proto = TensorProto::decode(wire.as_slice()).unwrap();
    assert_eq!(proto.float_val, [1.0, 2.5, -3.0]);
    // Re-encoding packs them: same message, TensorFlow's canonical bytes.
    assert_eq!(
        hex_encode(&proto.encode_to_vec()),
        "08011204120208032a0c0000803f00002040000040c0"
    );
}

#[test]
fn unpacked_and_packed_runs_of_one_field_concatenate() {
    // packed [1.0], unpacked 2.0, packed [3.0]: protobuf appends every run in order.
    let wire = hex_decode("2a040000803f2d000000402a0400004040");
    let proto = TensorProto::decode(wire.as_slice()).unwrap();
    assert_eq!(proto.float_val, [1.0, 2.0, 3.0]);
}

#[test]
fn unpacked_encodings_of_every_repeated_scalar_decode() {
    let wire = hex_decode(concat!(
        "31000000000000f03f",       // double_val (6, fixed64) 1.0
        "38ffffffffffffffffff01",   // int_val (7, varint) -1
        "4d0000c03f",               // scomplex_val (9, fixed32) 1.5
        "5007",                     // int64_val (10, varint) 7
        "5801",                     // bool_val (11, varint) true
        "61000000000000f0bf",       // dcomplex_val (12, fixed64) -1.0
        "68ffff03",                 // half_val (13, varint) 65535
        "8001ffffffff0f",           // uint32_val (16, varint) u32::MAX
        "8801ffffffffffffffffff01", // uint64_val (17, varint) u64::MAX
    ));
    let p = TensorProto::decode(wire.as_slice()).unwrap();
    assert_eq!(p.double_val, [1.0]);
    assert_eq!(p.int_val, [-1]);
    assert_eq!(p.scomplex_val, [1.5]);
    assert_eq!(p.int64_val, [7]);
    assert_eq!(p.bool_val, [true]);
    assert_eq!(p.dcomplex_val, [-1.0]);
    assert_eq!(p.half_val, [65535]);
    assert_eq!(p.uint32_val, [u32::MAX]);
    assert_eq!(p.uint64_val, [u64::MAX]);
}

#[test]
fn bytes_fields_decoded_from_bytes_share_the_input() {
    let content: Vec<u8> = (0..1 << 20).map(|i| i as u8).collect();
    let mut proto = TensorProto {
        tensor_shape: shape(&[1 << 18]),
        tensor_content: Bytes::from(content),
        string_val: vec![Bytes::from_static(b"hello")],
        float8_val: Bytes::from_static(b"\x01\x02\x03"),
        variant_val: vec![VariantTensorDataProto {
            type_name: "T".into(),
            metadata: Bytes::from_static(b"meta"),
            tensors: vec![],
        }],
        ..Default::default()
    };
    proto.set_dtype(DataType::DtFloat);
    let wire = Bytes::from(proto.encode_to_vec());
    let inside = |b: &Bytes| {
        let r = wire.as_ptr_range();
        !b.is_empty() && r.start <= b.as_ptr() && b.as_ptr_range().end <= r.end
    };

    let (decoded, largest) = largest_allocation(|| TensorProto::decode(wire.clone()).unwrap());
    assert_eq!(decoded, proto);
    assert!(inside(&decoded.tensor_content), "tensor_content was copied");
    assert!(inside(&decoded.string_val[0]), "string_val was copied");
    assert!(inside(&decoded.float8_val), "float8_val was copied");
    assert!(
        inside(&decoded.variant_val[0].metadata),
        "nested metadata was copied"
    );
    assert!(largest < 4096, "decode allocated a {largest}-byte block");

    // From a plain slice there is nothing to share: the content is copied.
    let from_slice = TensorProto::decode(&wire[..]).unwrap();
    assert!(!inside(&from_slice.tensor_content));
    assert_eq!(from_slice, proto);
}

#[test]
fn tensor_content_offset_is_not_aligned_for_its_element_type() {
    // What TensorFlow itself writes for float [3] (serialize.jsonl): content starts at byte 10,
    // so even a 64-byte-aligned input gives an f32 view at an address that is 2 mod 4.
    let wire = Bytes::from(hex_decode("0801120412020803220cceed392eca195b5f19656392"));
    let p = TensorProto::decode(wire.clone()).unwrap();
    let offset = p.tensor_content.as_ptr() as usize - wire.as_ptr() as usize;
    assert_eq!(offset, 10);
    assert_ne!(offset % std::mem::align_of::<f32>(), 0);
}

#[test]
fn huge_declared_lengths_in_tiny_inputs_fail_without_allocating() {
    let cases = [
        // packed float_val claiming 2^40 bytes
        "2a8080808080 20".replace(' ', ""),
        // packed int_val (varint elements) claiming 2^40 bytes
        "3a808080808020".into(),
        // packed double_val claiming 1 GiB
        "3280808080 04".replace(' ', ""),
        // tensor_content claiming 2^62 bytes
        "22808080808080808040".into(),
        // string_val claiming 1 GiB
        "428080808004".into(),
        // float8_val claiming 2^40 bytes
        "9201808080808020".into(),
        // tensor_shape claiming 2^40 bytes
        "12808080808020".into(),
        // a length varint that overflows 64 bits
        "22ffffffffffffffffffff01".into(),
        // packed float_val whose length is not a multiple of 4
        "2a03000080".into(),
    ];
    for hex in &cases {
        let wire = Bytes::from(hex_decode(hex));
        let (result, largest) = largest_allocation(|| TensorProto::decode(wire.clone()));
        assert!(result.is_err(), "{hex}: decoded as {result:?}");
        assert!(largest < 4096, "{hex}: allocated a {largest}-byte block");
    }
}

#[test]
fn truncated_inputs_are_errors() {
    let full = hex_decode("0801120412020803220cceed392eca195b5f19656392");
    for n in 1..full.len() {
        // Cutting inside the shape or the content must fail; cutting after a whole field is a
        // shorter, valid message.
        let r = TensorProto::decode(&full[..n]);
        let whole_field_boundary = n == 2 || n == 8;
        assert_eq!(
            r.is_ok(),
            whole_field_boundary,
            "prefix of {n} bytes: {r:?}"
        );
    }
}

#[test]
fn unknown_dtype_number_survives_round_trip() {
    let wire = hex_decode("08ff011200"); // dtype = 255
    let p = TensorProto::decode(wire.as_slice()).unwrap();
    assert_eq!(p.dtype, 255);
    assert_eq!(
        p.dtype(),
        DataType::DtInvalid,
        "typed accessor falls back to the default"
    );
    assert_eq!(p.encode_to_vec(), wire);
}

#[test]
fn unknown_fields_are_skipped_and_not_kept() {
    // ResourceHandleProto field 7 is reserved upstream; an unknown field 99 too. prost skips both
    // (unlike C++ protobuf, it does not keep them for re-serialization).
    let wire = hex_decode("0a0163 3a0178 9a06017a".replace(' ', "").as_str());
    let p = ResourceHandleProto::decode(wire.as_slice()).unwrap();
    assert_eq!(p.device, "c");
    assert_eq!(hex_encode(&p.encode_to_vec()), "0a0163");
}

#[test]
fn data_type_numbers_and_names_match_types_proto() {
    assert_eq!(DataType::ALL.len(), 67);
    for (i, dt) in DataType::ALL.iter().enumerate() {
        let n = *dt as i32;
        let want = if i <= 33 {
            i as i32
        } else {
            i as i32 - 34 + 101
        };
        assert_eq!(n, want, "{dt:?}");
        assert_eq!(DataType::try_from(n), Ok(*dt));
        assert!(DataType::is_valid(n));
        assert_eq!(DataType::from_str_name(dt.as_str_name()), Some(*dt));
        if n > 100 {
            let base = DataType::try_from(n - 100).unwrap();
            assert_eq!(dt.as_str_name(), format!("{}_REF", base.as_str_name()));
        }
    }
    for bad in [-1, 34, 100, 134, 200] {
        assert!(DataType::try_from(bad).is_err(), "{bad}");
    }
    assert_eq!(DataType::DtFloat4E2m1fn.as_str_name(), "DT_FLOAT4_E2M1FN");
    assert_eq!(DataType::DtFloat8E4m3b11fnuz as i32, 27);
    assert_eq!(DataType::default(), DataType::DtInvalid);
}

#[test]
fn small_messages_use_tensorflows_field_numbers() {
    let sd = SerializedDType {
        datatype: DataType::DtBfloat16 as i32,
    };
    assert_eq!(hex_encode(&sd.encode_to_vec()), "080e");

    let alloc = AllocationDescription {
        requested_bytes: 1,
        allocated_bytes: 2,
        allocator_name: "a".into(),
        allocation_id: 4,
        has_single_reference: true,
        ptr: 6,
    };
    assert_eq!(
        hex_encode(&alloc.encode_to_vec()),
        "080110021a0161200428013006"
    );

    let desc = TensorDescription {
        dtype: DataType::DtInt8 as i32,
        shape: shape(&[2]),
        allocation_description: Some(AllocationDescription {
            requested_bytes: 2,
            ..Default::default()
        }),
    };
    // field 4 (0x22) after field 2; no field 3.
    assert_eq!(
        hex_encode(&desc.encode_to_vec()),
        "08061204120208022202 0802".replace(' ', "")
    );

    let handle = ResourceHandleProto {
        device: "d".into(),
        container: "c".into(),
        name: "n".into(),
        hash_code: 5,
        maybe_type_name: "t".into(),
        dtypes_and_shapes: vec![DtypeAndShape {
            dtype: DataType::DtFloat as i32,
            shape: shape(&[]),
        }],
    };
    assert_eq!(
        hex_encode(&handle.encode_to_vec()),
        "0a0164120163 1a016e 2005 2a0174 3204 08011200".replace(' ', "")
    );

    let shape_proto = TensorShapeProto {
        dim: vec![Dim {
            size: -1,
            name: "x".into(),
        }],
        unknown_rank: true,
    };
    assert_eq!(
        hex_encode(&shape_proto.encode_to_vec()),
        "120e08ffffffffffffffffff01120178 1801".replace(' ', "")
    );

    let mut with_resource = TensorProto {
        resource_handle_val: vec![handle.clone()],
        version_number: 3,
        ..Default::default()
    };
    with_resource.set_dtype(DataType::DtResource);
    let back = TensorProto::decode(with_resource.encode_to_vec().as_slice()).unwrap();
    assert_eq!(back, with_resource);
    assert_eq!(back.resource_handle_val[0], handle);
}

#[test]
fn all_fields_encode_in_tag_order() {
    let p = TensorProto {
        dtype: DataType::DtFloat as i32,
        tensor_shape: shape(&[1]),
        version_number: 1,
        tensor_content: Bytes::from_static(b"c"),
        float_val: vec![1.0],
        double_val: vec![1.0],
        int_val: vec![1],
        string_val: vec![Bytes::from_static(b"s")],
        scomplex_val: vec![1.0],
        int64_val: vec![1],
        bool_val: vec![true],
        dcomplex_val: vec![1.0],
        half_val: vec![1],
        resource_handle_val: vec![ResourceHandleProto::default()],
        variant_val: vec![VariantTensorDataProto::default()],
        uint32_val: vec![1],
        uint64_val: vec![1],
        float8_val: Bytes::from_static(b"f"),
    };
    let wire = Bytes::from(p.encode_to_vec());
    // Walk the top-level records and collect their field numbers.
    let mut tags = Vec::new();
    let mut rest = &wire[..];
    while !rest.is_empty() {
        let (key, n) = varint(rest);
        rest = &rest[n..];
        tags.push(key >> 3);
        let skip = match key & 7 {
            0 => varint(rest).1,
            1 => 8,
            5 => 4,
            2 => {
                let (len, n) = varint(rest);
                n + len as usize
            }
            w => panic!("wire type {w}"),
        };
        rest = &rest[skip..];
    }
    assert_eq!(tags, (1..=18).collect::<Vec<u64>>());
    assert_eq!(TensorProto::decode(wire).unwrap(), p);
}

fn varint(b: &[u8]) -> (u64, usize) {
    let mut v = 0u64;
    for (i, &byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return (v, i + 1);
        }
    }
    panic!("bad varint")
}

#[test]
fn allocation_probe_sees_large_blocks() {
    // The probe itself works, so the "no huge allocation" checks above are not vacuous.
    let (v, largest) = largest_allocation(|| vec![0u8; 1 << 20]);
    assert_eq!(v.len(), 1 << 20);
    assert!(largest >= 1 << 20, "{largest}");
}

#[test]
fn deeply_nested_variants_hit_the_recursion_limit() {
    // TensorProto -> variant_val (15) -> VariantTensorDataProto -> tensors (3) -> TensorProto ...
    fn nest(levels: usize) -> Vec<u8> {
        let mut t = Vec::new();
        for _ in 0..levels {
            let mut v = vec![0x1a];
            prost::encoding::encode_varint(t.len() as u64, &mut v);
            v.extend_from_slice(&t);
            t = vec![0x7a];
            prost::encoding::encode_varint(v.len() as u64, &mut t);
            t.extend_from_slice(&v);
        }
        t
    }
    // prost's default limit is 100 nested messages: 40 levels (80 messages) decode, 60 do not.
    assert!(TensorProto::decode(nest(40).as_slice()).is_ok());
    let err = TensorProto::decode(nest(60).as_slice()).unwrap_err();
    assert!(err.to_string().contains("recursion"), "{err}");
}
