#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| tensorcast_testkit::fuzz::ops_broadcast::run(data));
