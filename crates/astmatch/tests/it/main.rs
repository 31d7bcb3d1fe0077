//! The integration tests of `astmatch`, one module a subject, in one test binary:
//! one link instead of one a file. Run one module with `cargo test -p astmatch --test it MODULE::`.

// Tests may unwrap, expect and print what they saw.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr, clippy::print_stdout)]

mod big_files;
mod cached;
mod differential;
mod matching;
mod pattern_language;
mod regressions;
mod reparse_sweep;
mod rewrite_cases;
mod rewrite_differential;
mod rewriting;
mod search;
mod staging;
