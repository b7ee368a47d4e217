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
