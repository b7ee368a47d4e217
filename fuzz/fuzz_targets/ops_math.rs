#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| tensorcast_testkit::fuzz::ops_math::run(data));
