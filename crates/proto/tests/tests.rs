//! Integration tests of tensorcast-proto (one binary, a module per concern): `tensor` (Tensor
//! <-> TensorProto) and `wire` (the wire format against TensorFlow's recorded encodings).

mod tensor;
mod wire;

/// The largest single allocation a closure makes on its thread, through the buffer crate's
/// counting allocator (so this test binary holds no `unsafe` of its own).
///
/// The allocator counts every allocation of the binary, but the figure read here is kept per
/// thread (`CountingGlobalAlloc::largest_request`), so the tests running concurrently on other
/// threads never show up in it; nothing reads the process-wide live or peak counts.
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
