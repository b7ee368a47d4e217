//! Sub-byte integers (int4, uint4, int2, uint2) have one canonical byte per value (the value's
//! bits, upper bits zero): every construction path stores it, so equal values are equal bytes
//! and a proto round trip gives the same bytes back. Zero-copy views of foreign bytes keep
//! their bytes and still compare equal by value.

use bytes::Bytes;
use proptest::prelude::*;
use tensorcast_buffer::Buffer;
use tensorcast_core::types::{Int2, Int4, UInt2, UInt4};
use tensorcast_core::{DataType, Tensor, TensorShape};
use tensorcast_kernels::TensorOps;
use tensorcast_proto::{
    as_proto_field, as_proto_tensor_content, decode_tensor, serialize_tensor, shape_to_proto,
    tensor_from_proto, TensorProto,
};

const SUB_BYTE: [DataType; 4] = [
    DataType::INT4,
    DataType::UINT4,
    DataType::INT2,
    DataType::UINT2,
];

/// `Tensor::from_vec` of the element type built two ways: with the type's constructor, and
/// with the raw byte `v as u8` (stray upper bits) in its public field.
fn from_elements(dtype: DataType, values: &[i32], raw: bool) -> Tensor {
    macro_rules! build {
        ($t:ident, $repr:ty) => {
            Tensor::vector(
                &values
                    .iter()
                    .map(|&v| if raw { $t(v as $repr) } else { $t::new(v) })
                    .collect::<Vec<_>>(),
            )
        };
    }
    match dtype {
        DataType::INT4 => build!(Int4, i8),
        DataType::UINT4 => build!(UInt4, u8),
        DataType::INT2 => build!(Int2, i8),
        _ => build!(UInt2, u8),
    }
}

fn proto(dtype: DataType, n: usize) -> TensorProto {
    TensorProto {
        dtype: dtype.number(),
        tensor_shape: Some(shape_to_proto(&TensorShape::new(&[n as i64]).unwrap())),
        ..Default::default()
    }
}

fn assert_canonical(what: &str, t: &Tensor, want: &[u8], reference: &Tensor) {
    assert_eq!(t.tensor_data().unwrap(), want, "{what}: bytes");
    assert_eq!(t, reference, "{what}: equality");
    // And the proto round trips keep exactly these bytes.
    let wire = serialize_tensor(t).unwrap();
    let back = decode_tensor(Bytes::from(wire)).unwrap();
    assert_eq!(
        back.tensor_data().unwrap(),
        want,
        "{what}: serialize_tensor round trip"
    );
    let back = tensor_from_proto(&as_proto_field(t)).unwrap();
    assert_eq!(
        back.tensor_data().unwrap(),
        want,
        "{what}: AsProtoField round trip"
    );
    let back = tensor_from_proto(&as_proto_tensor_content(t)).unwrap();
    assert_eq!(
        back.tensor_data().unwrap(),
        want,
        "{what}: AsProtoTensorContent round trip"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_construction_path_stores_the_canonical_byte(
        dtype in proptest::sample::select(SUB_BYTE.to_vec()),
        values in proptest::collection::vec(any::<i32>(), 1..24),
    ) {
        let mask = dtype.sub_byte_mask().unwrap();
        let want: Vec<u8> = values.iter().map(|&v| v as u8 & mask).collect();
        let reference = from_elements(dtype, &values, false);
        assert_canonical("constructor", &reference, &want, &reference);
        assert_canonical("raw elements", &from_elements(dtype, &values, true), &want, &reference);

        let raw: Vec<u8> = values.iter().map(|&v| v as u8).collect();
        let shape = TensorShape::new(&[values.len() as i64]).unwrap();
        let owned = Tensor::from_buffer(dtype, &shape, Buffer::copy_from_slice(&raw).unwrap()).unwrap();
        assert_canonical("from_buffer (owned)", &owned, &want, &reference);

        let mut p = proto(dtype, values.len());
        p.int_val = values.clone();
        assert_canonical("proto int_val", &tensor_from_proto(&p).unwrap(), &want, &reference);
        // Fewer values than elements: the last one is repeated, canonically too.
        let mut short = proto(dtype, values.len() + 3);
        short.int_val = values.clone();
        let filled = tensor_from_proto(&short).unwrap();
        prop_assert!(filled.tensor_data().unwrap().iter().all(|b| b & !mask == 0));

        let mut p = proto(dtype, values.len());
        p.tensor_content = Bytes::from(raw.clone());
        assert_canonical("proto tensor_content", &tensor_from_proto(&p).unwrap(), &want, &reference);

        if matches!(dtype, DataType::INT4 | DataType::UINT4) {
            // Cast wraps into the type's range as ml_dtypes' conversion does.
            let ints = Tensor::vector(&values);
            assert_canonical("cast from int32", &ints.cast(dtype).unwrap(), &want, &reference);
        }

        // A zero-copy view of foreign bytes keeps them (stray bits and all) and is still equal
        // by value to the canonical tensor.
        let view = Tensor::vector(&raw).reinterpret_cast_to(dtype).unwrap();
        prop_assert_eq!(view.tensor_data().unwrap(), raw.as_slice());
        prop_assert_eq!(&view, &reference);
        let copy = view.deep_copy().unwrap();
        prop_assert_eq!(copy.tensor_data().unwrap(), want.as_slice());
    }
}

#[test]
fn different_values_are_not_equal() {
    for dtype in SUB_BYTE {
        let a = from_elements(dtype, &[0, 1], false);
        let b = from_elements(dtype, &[1, 1], false);
        assert_ne!(a, b, "{dtype}");
    }
}
