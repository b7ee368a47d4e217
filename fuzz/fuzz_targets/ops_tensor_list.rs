#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| tensorcast_testkit::fuzz::ops_tensor_list::run(data));
