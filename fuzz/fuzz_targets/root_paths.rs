#![no_main]
//! See `fuzz_checks::root_paths` for the input layout and the properties checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_checks::root_paths(data));
