//! The integration tests of `question-port`, one module a subject, in one test binary:
//! one link instead of one a file. Run one module with `cargo test -p question-port --test it MODULE::`.

// Tests may unwrap, expect and print what they saw.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr, clippy::print_stdout)]

mod card;
mod channel;
mod terminal;
