//! The integration tests of `vibe-roster`, one module a subject, in one test binary:
//! one link instead of one a file. `tests/bounded.rs` stays a binary of its own: it measures
//! this process's peak memory, which other tests running beside it would raise.
//! Run one module with `cargo test -p vibe-roster --test it MODULE::`.

// Tests may unwrap, expect and print what they saw.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr, clippy::print_stdout)]

mod enclosed;
mod engines;
mod processes;
mod scripted;
