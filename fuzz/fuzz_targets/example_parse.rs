#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| tensorcast_testkit::fuzz::example_parse::run(data));
