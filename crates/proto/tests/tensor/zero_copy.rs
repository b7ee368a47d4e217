//! Decoding from `Bytes` shares `tensor_content` when its address suits the dtype, copies it
//! (into a 64-byte-aligned buffer) otherwise, and says which through `is_aligned`/`data_ptr`.

use bytes::Bytes;
use tensorcast_core::{DataType, TString, Tensor};
use tensorcast_proto::{
    decode_tensor, decode_tensor_with, encode_tensor, serialize_tensor, serialize_tensor_header,
    DecodeOptions,
};

use super::samples::sample;

/// The serialization of `t` placed in a fresh buffer so that the content starts at an address
/// that is `misalign` bytes past a multiple of 64.
fn placed(t: &Tensor, misalign: usize) -> Bytes {
    let wire = serialize_tensor(t).unwrap();
    let header = serialize_tensor_header(t).unwrap().unwrap().len();
    let mut backing = vec![0u8; wire.len() + 128];
    let base = backing.as_ptr() as usize;
    let start = (0..128)
        .find(|s| (base + s + header) % 64 == misalign)
        .unwrap();
    backing[start..start + wire.len()].copy_from_slice(&wire);
    Bytes::from(backing).slice(start..start + wire.len())
}

fn inside(b: &Bytes, t: &Tensor) -> bool {
    b.as_ptr_range().contains(&t.data_ptr())
}

#[test]
fn aligned_content_is_shared() {
    for dtype in [
        DataType::FLOAT,
        DataType::DOUBLE,
        DataType::COMPLEX128,
        DataType::HALF,
        DataType::INT64,
    ] {
        let t = sample(dtype, &[64]);
        let wire = placed(&t, 0);
        let back = decode_tensor(wire.clone()).unwrap();
        assert_eq!(back, t);
        assert!(inside(&wire, &back), "{dtype}: copied");
        assert!(back.is_aligned());
    }
}

#[test]
fn content_aligned_for_the_element_but_not_64_is_shared_by_default_and_copied_on_request() {
    let t = sample(DataType::FLOAT, &[16]);
    let wire = placed(&t, 4);
    let back = decode_tensor(wire.clone()).unwrap();
    assert!(inside(&wire, &back));
    assert!(!back.is_aligned());
    assert_eq!(
        back.as_slice::<f32>().unwrap(),
        t.as_slice::<f32>().unwrap()
    );
    let strict = DecodeOptions::new().with_require_aligned(true);
    let back = decode_tensor_with(wire.clone(), &strict).unwrap();
    assert!(!inside(&wire, &back));
    assert!(back.is_aligned());
    assert_eq!(back, t);
}

#[test]
fn misaligned_content_is_copied_into_an_aligned_buffer() {
    for misalign in [1, 2, 3, 5] {
        let t = sample(DataType::FLOAT, &[16]);
        let wire = placed(&t, misalign);
        let back = decode_tensor(wire.clone()).unwrap();
        assert!(!inside(&wire, &back), "misalign {misalign}");
        assert!(back.is_aligned());
        assert_eq!(back, t);
    }
}

#[test]
fn byte_types_are_always_shared() {
    for dtype in [
        DataType::UINT8,
        DataType::INT8,
        DataType::BOOL,
        DataType::FLOAT8_E4M3FN,
        DataType::INT4,
    ] {
        let t = sample(dtype, &[33]);
        for misalign in [0, 1, 3] {
            let wire = placed(&t, misalign);
            let back = decode_tensor(wire.clone()).unwrap();
            assert!(inside(&wire, &back), "{dtype} at +{misalign}");
            assert_eq!(back, t);
        }
    }
}

#[test]
fn encode_tensor_places_content_64_byte_aligned_so_decode_never_copies() {
    for dtype in DataType::all().filter(|d| d.can_use_memcpy()) {
        for dims in [&[3][..], &[2, 5], &[1000]] {
            let t = sample(dtype, dims);
            let wire = encode_tensor(&t).unwrap();
            let header = serialize_tensor_header(&t).unwrap().unwrap().len();
            assert_eq!((wire.as_ptr() as usize + header) % 64, 0, "{dtype}");
            let back = decode_tensor(wire.clone()).unwrap();
            assert!(inside(&wire, &back), "{dtype} {dims:?}");
            assert!(back.is_aligned());
            assert_eq!(back, t);
        }
    }
}

#[test]
fn decoded_strings_are_slices_of_the_input() {
    let t = sample(DataType::STRING, &[5]);
    let wire = Bytes::from(serialize_tensor(&t).unwrap());
    let back = decode_tensor(wire.clone()).unwrap();
    let strings = back.as_slice::<TString>().unwrap();
    let long = strings.iter().find(|s| !s.is_empty()).unwrap();
    assert!(wire.as_ptr_range().contains(&long.as_bytes().as_ptr()));
}
