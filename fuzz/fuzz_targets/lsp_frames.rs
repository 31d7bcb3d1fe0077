#![no_main]
//! See `fuzz_checks::lsp_frames` for the input layout and the properties checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_checks::lsp_frames(data));
