//! The integration tests of `dap-session`, one module a subject, in one test binary:
//! one link instead of one a file. Run one module with `cargo test -p dap-session --test it MODULE::`.

// Tests may unwrap, expect and print what they saw.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr, clippy::print_stdout)]

mod common;
mod enclosed;
mod engines;
mod fixture_adapter;
mod real_adapters;
mod real_programs;
mod session_end;
