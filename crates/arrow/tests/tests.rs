//! tensorcast-arrow's integration tests: files written and read back (`files`), hostile files
//! refused before a decoder trusts their claims (`hostile`), and the peers (pyarrow, DuckDB,
//! Polars) reading what we write and writing what we read (`peers`).

mod files;
mod hostile;
mod peers;

/// The largest single allocation a closure makes on its thread, through the buffer crate's
/// counting allocator (so this test binary holds no `unsafe` of its own). The figure is kept
/// per thread, so tests running at once on other threads never show up in it.
mod alloc_probe {
    use tensorcast_buffer::testing::CountingGlobalAlloc;

    #[global_allocator]
    static COUNTER: CountingGlobalAlloc = CountingGlobalAlloc::new();

    /// Runs `f` and returns its result with the largest single allocation (bytes) it made on
    /// this thread.
    pub(crate) fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
        COUNTER.largest_request(f)
    }
}
