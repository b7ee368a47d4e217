//! `serialize.jsonl`: TensorFlow's `SerializeTensor(input)`.
//!
//! Serializing the input must give exactly `proto_hex` (both through the `Vec` path,
//! `serialize_tensor`, and the aligned `Bytes` path, `encode_tensor`), and parsing `proto_hex`
//! back (`ParseTensor` with the input's dtype) must give the input: dtype, shape and bytes.

use bytes::Bytes;
use serde_json::Value;
use tensorcast_proto::{encode_tensor, parse_tensor, serialize_tensor};

use crate::{check_tensor, hex_decode, hex_encode, tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    let input = match tensor_of(&rec["input"]) {
        Ok(t) => t,
        Err(e) => return Outcome::Fail(format!("input: {e}")),
    };
    let Some(want_hex) = rec["proto_hex"].as_str() else {
        return Outcome::Fail("record without proto_hex".into());
    };
    let got = hex_encode(&serialize_tensor(&input).unwrap());
    if got != want_hex {
        return Outcome::Fail(format!("serialize_tensor gave {got}, expected {want_hex}"));
    }
    match encode_tensor(&input) {
        Ok(b) if hex_encode(&b) == want_hex => {}
        Ok(b) => {
            return Outcome::Fail(format!(
                "encode_tensor gave {}, expected {want_hex}",
                hex_encode(&b)
            ))
        }
        Err(e) => return Outcome::Fail(format!("encode_tensor failed: {e}")),
    }
    let wire = match hex_decode(want_hex) {
        Ok(w) => Bytes::from(w),
        Err(e) => return Outcome::Fail(format!("proto_hex: {e}")),
    };
    match parse_tensor(wire, input.dtype()) {
        Ok(back) => match check_tensor(&back, &rec["input"]) {
            Ok(()) => Outcome::Pass,
            Err(e) => Outcome::Fail(format!("parsing proto_hex back: {e}")),
        },
        Err(e) => Outcome::Fail(format!("parsing proto_hex back failed: {e}")),
    }
}
