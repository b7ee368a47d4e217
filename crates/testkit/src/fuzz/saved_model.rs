//! Fuzz target body: arbitrary bytes as a `saved_model.pb` (and as a `fingerprint.pb`). Bad
//! input must be an error, never a panic or an allocation the input does not justify (run with
//! `-malloc_limit_mb`); what decodes must list its tag sets, signatures, ops and variables and
//! print `saved_model_cli show --all`'s text (object references out of range, cycles, unknown
//! dtypes, undecodable function libraries included), and re-encode to bytes that decode to
//! the same encoding. Input that is UTF-8 is also read as a `saved_model.pbtxt`: what parses
//! goes through the same checks, and its text as tensorcast prints it parses again.

use tensorcast_io::saved_model::{show_signature, SavedModel};
use tensorcast_proto::{FingerprintDef, Message};

/// Runs one input.
pub fn run(data: &[u8]) {
    if let Ok(fp) = FingerprintDef::decode(data) {
        let _ = fp.singleprint();
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(bytes) = tensorcast_proto::saved_model_text_to_binary(text) {
            if let Ok(printed) = tensorcast_proto::saved_model_binary_to_text(&bytes) {
                tensorcast_proto::saved_model_text_to_binary(&printed)
                    .expect("the text tensorcast prints parses");
            }
            check(&bytes);
        }
    }
    check(data);
}

fn check(data: &[u8]) {
    let Ok(sm) = SavedModel::from_bytes(data) else {
        return;
    };
    let _ = sm.show_all();
    for tags in sm.tag_sets() {
        let tags: Vec<&str> = tags.iter().map(String::as_str).collect();
        let sigs = sm
            .signatures(&tags)
            .expect("a listed tag set has a meta graph");
        for s in &sigs {
            let _ = show_signature(s, 1);
        }
    }
    for meta in &sm.proto().meta_graphs {
        let _ = SavedModel::ops(meta);
    }
    for v in sm.variables().unwrap_or_default() {
        assert!(sm.read_variable(&v).is_err(), "no variables bundle here");
    }
    let once = sm.proto().encode_to_vec();
    let again = tensorcast_proto::SavedModel::decode(once.as_slice())
        .expect("an encoded SavedModel decodes")
        .encode_to_vec();
    assert_eq!(once, again, "decode -> encode is not stable");
}
