//! The integration tests of `agent-tools-cli`, one module a subject, in one test binary:
//! one link instead of one a file. Run one module with `cargo test -p agent-tools-cli --test it MODULE::`.

// Tests may unwrap, expect and print what they saw.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr, clippy::print_stdout)]

mod apply_patch_mcp;
mod approval_mcp;
mod ask_user_mcp;
mod cancel_mcp;
mod cli;
mod common;
mod config;
mod debug_mcp;
mod deploy;
mod enclosure;
mod http_mcp;
mod lsp_mcp;
mod mcp;
mod sdk_client_mcp;
mod tasks_mcp;
