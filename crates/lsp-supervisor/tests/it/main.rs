//! The integration tests of `lsp-supervisor`, one module a subject, in one test binary:
//! one link instead of one a file. `tests/checker_output.rs` stays a binary of its own: it measures
//! this process's peak memory, which other tests running beside it would raise.
//! Run one module with `cargo test -p lsp-supervisor --test it MODULE::`.

// Tests may unwrap, expect and print what they saw.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr, clippy::print_stdout)]

mod common;
mod disk_view;
mod enclosed;
mod fixture_server;
mod helper_servers;
mod real_servers;
mod roots;
mod shared_pool;
mod status_reload;
