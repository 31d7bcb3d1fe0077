#![no_main]
//! See `fuzz_checks::config` for the input layout and the properties checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_checks::config(data));
