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

/// A global allocator that remembers, per thread, the largest single allocation request, so a
/// test can check that decoding a tiny input never asks for a huge block.
pub mod alloc_probe {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    struct Probe;

    thread_local! {
        // `const` init: no lazy initialisation and no destructor, so touching it from inside the
        // allocator cannot allocate or recurse.
        static LARGEST: Cell<usize> = const { Cell::new(0) };
    }

    fn note(size: usize) {
        // `try_with` fails only during thread teardown; then there is nothing to record.
        let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
    }

    // SAFETY: every method forwards to `System` with the caller's arguments unchanged, so
    // `System`'s guarantees are ours; the bookkeeping only reads `layout`/`new_size`.
    unsafe impl GlobalAlloc for Probe {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            note(layout.size());
            // SAFETY: our caller upholds `GlobalAlloc::alloc`'s contract, which we forward.
            unsafe { System.alloc(layout) }
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            note(layout.size());
            // SAFETY: as for `alloc`.
            unsafe { System.alloc_zeroed(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: `ptr` was allocated by `System` (every allocation above goes there) with
            // `layout`, as the caller guarantees.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            note(new_size);
            // SAFETY: `ptr`/`layout` come from `System` as for `dealloc`; the caller upholds
            // `realloc`'s contract on `new_size`.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    #[global_allocator]
    static PROBE: Probe = Probe;

    /// Runs `f` and returns its result with the largest single allocation (bytes) it made on
    /// this thread.
    pub fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
        LARGEST.with(|l| l.set(0));
        let r = f();
        (r, LARGEST.with(Cell::get))
    }
}
