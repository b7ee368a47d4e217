#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| tensorcast::fuzz::npz::run(data));
