//! Helpers shared by the wire tests.

use tensorcast_testkit::records;

/// Decodes hex; panics on malformed input (test data only).
pub fn hex_decode(s: &str) -> Vec<u8> {
    records::hex_decode(s).unwrap_or_else(|e| panic!("{e}"))
}

pub use records::hex_encode;

/// Every record of `<conformance dir>/<file>`, one JSON object per line.
pub fn records(file: &str) -> Vec<serde_json::Value> {
    records::read_jsonl(&records::conformance_dir().join(file)).unwrap_or_else(|e| panic!("{e}"))
}

/// `record[key]` as a string; panics when absent (test data only).
pub fn str_field<'a>(record: &'a serde_json::Value, key: &str) -> &'a str {
    record[key]
        .as_str()
        .unwrap_or_else(|| panic!("record has no string {key:?}: {record}"))
}
