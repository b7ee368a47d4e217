#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| tensorcast_testkit::fuzz::arrow_read::run(data));
