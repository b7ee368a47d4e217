//! Laws: encode then decode is the identity, for random dtypes, shapes and values, through
//! every path (SerializeTensor bytes, aligned encoding, both proto forms).

use bytes::Bytes;
use proptest::prelude::*;
use tensorcast_proto::{
    as_proto_field, as_proto_tensor_content, decode_tensor, encode_tensor, serialize_tensor,
    tensor_from_proto, Message, TensorProto,
};
use tensorcast_testkit::strategies::any_tensor;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn serialize_then_decode_is_identity(t in any_tensor(5, 4)) {
        let wire = serialize_tensor(&t).unwrap();
        prop_assert_eq!(decode_tensor(Bytes::from(wire.clone())).unwrap(), t.clone());
        let enc = encode_tensor(&t).unwrap();
        prop_assert_eq!(enc.as_ref(), wire.as_slice());
        prop_assert_eq!(decode_tensor(enc).unwrap(), t);
    }

    #[test]
    fn both_proto_forms_round_trip_through_the_wire(t in any_tensor(5, 4)) {
        for p in [as_proto_field(&t), as_proto_tensor_content(&t)] {
            let wire = p.encode_to_vec();
            let back = TensorProto::decode(Bytes::from(wire.clone())).unwrap();
            // Compare encodings, not structs: a NaN in a typed field is never `==` itself.
            prop_assert_eq!(back.encode_to_vec(), wire);
            prop_assert_eq!(tensor_from_proto(&back).unwrap(), t.clone());
        }
    }

    #[test]
    fn truncated_or_corrupted_bytes_never_panic(t in any_tensor(5, 4), cut in any::<prop::sample::Index>(), flip in any::<(prop::sample::Index, u8)>()) {
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
