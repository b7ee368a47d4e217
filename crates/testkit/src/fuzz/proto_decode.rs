//! Fuzz target body: `decode_tensor` on arbitrary bytes, with a small fill limit (1 MiB), so a
//! finding is a panic, a hang or a large allocation, never a legitimate big tensor. Whatever
//! decodes must serialize and decode back to itself.

use bytes::Bytes;
use tensorcast_core::DataType;
use tensorcast_proto::{decode_tensor_with, serialize_tensor, DecodeOptions};

/// The fill limit the target decodes with.
pub const MAX_FILL_BYTES: usize = 1 << 20;

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let options = DecodeOptions::new().with_max_fill_bytes(MAX_FILL_BYTES);
    let Ok(t) = decode_tensor_with(Bytes::copy_from_slice(data), &options) else {
        return;
    };
    let wire = serialize_tensor(&t).expect("a decoded tensor is initialised");
    // The serialized form carries every value, so it needs no fill at all: the budget left is
    // only what its object elements and their message structs are charged (a few hundred
    // bytes per element at most, and every element takes at least one wire byte).
    let strict = options.clone().with_max_fill_bytes(512 * wire.len());
    let again = decode_tensor_with(Bytes::from(wire.clone()), &strict)
        .unwrap_or_else(|e| panic!("serialize_tensor's own output does not decode: {e}"));
    if t.dtype() == DataType::VARIANT {
        // Tensors nested in variants are written in field form, which normalises sub-byte
        // integers with stray high bits (as TensorFlow's does); after one round it is stable.
        assert_eq!(
            serialize_tensor(&again).expect("a decoded tensor is initialised"),
            wire,
            "variant serialization is not stable"
        );
    } else {
        assert!(again == t, "decode(serialize(t)) != t for {t:?}");
    }
}
