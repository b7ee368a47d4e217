//! Laws: encode then decode is the identity, for random dtypes, shapes and values, through
//! every path (SerializeTensor bytes, aligned encoding, both proto forms).

use bytes::Bytes;
use proptest::prelude::*;
use tensorcast_buffer::Buffer;
use tensorcast_core::{DataType, TString, Tensor, TensorShape};
use tensorcast_proto::{
    as_proto_field, as_proto_tensor_content, decode_tensor, encode_tensor, serialize_tensor,
    tensor_from_proto, Message, TensorProto,
};

use super::samples::canonical_byte;

fn tensor_strategy() -> impl Strategy<Value = Tensor> {
    let dtypes: Vec<DataType> = DataType::all()
        .filter(|d| d.can_use_memcpy() || *d == DataType::STRING)
        .collect();
    (
        proptest::sample::select(dtypes),
        proptest::collection::vec(0i64..5, 0..4),
        any::<u64>(),
    )
        .prop_map(|(dtype, dims, seed)| {
            let shape = TensorShape::new(&dims).unwrap();
            let n = shape.num_elements_usize();
            let mut state = seed | 1;
            let mut next = move || {
                // xorshift64*: cheap deterministic bytes from the seed.
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
            };
            if dtype == DataType::STRING {
                let strings = (0..n)
                    .map(|_| {
                        let len = (next() % 9) as usize;
                        TString::from((0..len).map(|_| next()).collect::<Vec<u8>>())
                    })
                    .collect();
                return Tensor::from_vec(strings, &shape).unwrap();
            }
            let bytes: Vec<u8> = (0..n * dtype.size())
                .map(|_| canonical_byte(dtype, next()))
                .collect();
            Tensor::from_buffer(dtype, &shape, Buffer::copy_from_slice(&bytes).unwrap()).unwrap()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn serialize_then_decode_is_identity(t in tensor_strategy()) {
        let wire = serialize_tensor(&t).unwrap();
        prop_assert_eq!(decode_tensor(Bytes::from(wire.clone())).unwrap(), t.clone());
        let enc = encode_tensor(&t).unwrap();
        prop_assert_eq!(enc.as_ref(), wire.as_slice());
        prop_assert_eq!(decode_tensor(enc).unwrap(), t);
    }

    #[test]
    fn both_proto_forms_round_trip_through_the_wire(t in tensor_strategy()) {
        for p in [as_proto_field(&t), as_proto_tensor_content(&t)] {
            let wire = p.encode_to_vec();
            let back = TensorProto::decode(Bytes::from(wire.clone())).unwrap();
            // Compare encodings, not structs: a NaN in a typed field is never `==` itself.
            prop_assert_eq!(back.encode_to_vec(), wire);
            prop_assert_eq!(tensor_from_proto(&back).unwrap(), t.clone());
        }
    }

    #[test]
    fn truncated_or_corrupted_bytes_never_panic(t in tensor_strategy(), cut in any::<prop::sample::Index>(), flip in any::<(prop::sample::Index, u8)>()) {
        let wire = serialize_tensor(&t).unwrap();
        let k = cut.index(wire.len() + 1);
        let _ = decode_tensor(Bytes::copy_from_slice(&wire[..k]));
        let mut bad = wire.clone();
        if !bad.is_empty() {
            let i = flip.0.index(bad.len());
            bad[i] ^= flip.1 | 1;
            let _ = decode_tensor(Bytes::from(bad));
        }
    }
}
