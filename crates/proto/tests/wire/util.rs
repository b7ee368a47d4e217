//! Helpers shared by the wire tests.

use std::path::PathBuf;

/// Decodes lowercase or uppercase hex; panics on malformed input (test data only).
pub fn hex_decode(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd-length hex: {s:?}");
    let nibble = |c: u8| match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => panic!("not a hex digit: {:?}", c as char),
    };
    s.as_bytes()
        .chunks_exact(2)
        .map(|p| (nibble(p[0]) << 4) | nibble(p[1]))
        .collect()
}

/// Encodes bytes as lowercase hex.
pub fn hex_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The folder of TensorFlow-observed vectors: `$TENSORCAST_CONFORMANCE_DIR`, or the workspace's
/// own `tests/conformance`.
pub fn conformance_dir() -> PathBuf {
    match std::env::var_os("TENSORCAST_CONFORMANCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance"),
    }
}

/// Every record of `<conformance dir>/<file>`, one JSON object per line.
pub fn records(file: &str) -> Vec<serde_json::Value> {
    let path = conformance_dir().join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
        .collect()
}

/// `record[key]` as a string; panics when absent (test data only).
pub fn str_field<'a>(record: &'a serde_json::Value, key: &str) -> &'a str {
    record[key]
        .as_str()
        .unwrap_or_else(|| panic!("record has no string {key:?}: {record}"))
}

/// The largest single allocation a closure makes on this thread, through the buffer crate's
/// counting allocator (so this test binary holds no `unsafe` of its own).
pub mod alloc_probe {
    use tensorcast_buffer::testing::CountingGlobalAlloc;

    #[global_allocator]
    static COUNTER: CountingGlobalAlloc = CountingGlobalAlloc::new();

    /// Runs `f` and returns its result with the largest single allocation (bytes) it made on
    /// this thread.
    pub fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
        COUNTER.largest_request(f)
    }
}
