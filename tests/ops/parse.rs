//! `parse.jsonl`: TensorFlow's `ParseTensor(proto_hex, out_type)` (`FromProto`, then the dtype
//! must equal `out_type`).
//!
//! A success must give the expected dtype, shape and bytes; an error must be an
//! invalid-argument error (messages are not compared: TensorFlow's embed the proto's text
//! format).

use bytes::Bytes;
use serde_json::Value;
use tensorcast_core::Code;
use tensorcast_proto::parse_tensor;

use crate::{check_tensor, dtype_of, hex_decode, Outcome};

pub fn run(rec: &Value) -> Outcome {
    let wire = match rec["proto_hex"].as_str().map(hex_decode) {
        Some(Ok(w)) => Bytes::from(w),
        Some(Err(e)) => return Outcome::Fail(format!("proto_hex: {e}")),
        None => return Outcome::Fail("record without proto_hex".into()),
    };
    let out_type = match dtype_of(&rec["out_type"]) {
        Ok(d) => d,
        Err(e) => return Outcome::Fail(format!("out_type: {e}")),
    };
    match (
        parse_tensor(wire, out_type),
        rec.get("expect"),
        rec.get("error"),
    ) {
        (Ok(t), Some(want), None) => match check_tensor(&t, want) {
            Ok(()) => Outcome::Pass,
            Err(e) => Outcome::Fail(e),
        },
        (Err(e), None, Some(want)) => {
            if e.code() != Code::InvalidArgument {
                return Outcome::Fail(format!("error {e:?} is not an invalid-argument error"));
            }
            if want["kind"].as_str() != Some("InvalidArgumentError") {
                return Outcome::Fail(format!("expected error kind {}", want["kind"]));
            }
            Outcome::Pass
        }
        (Ok(t), None, Some(want)) => Outcome::Fail(format!(
            "succeeded with {t:?}, expected error {}",
            want["message"]
        )),
        (Err(e), Some(_), None) => Outcome::Fail(format!("failed with {e:?}, expected success")),
        _ => Outcome::Fail("record has both or neither of expect and error".into()),
    }
}
